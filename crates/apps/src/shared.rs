//! Read-only state that the cores running one app share, built once for all of them: the routing table
//! of DPDK's l3fwd (one LPM per socket, read by every lcore) and the array of FastClick's WorkPackage
//! (one element instance whose array every thread reads, shRing §5.2). Sharing it is what makes the
//! cache footprint the papers describe: a 40 MiB WorkPackage array is 40 MiB, not 40 MiB per core.

use std::any::Any;
use std::collections::HashMap;
use std::sync::Arc;

/// The shared parts built so far for one app on a set of cores, by name.
#[derive(Default)]
pub struct Shared {
    items: HashMap<&'static str, Arc<dyn Any + Send + Sync>>,
}

impl std::fmt::Debug for Shared {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_set().entries(self.items.keys()).finish()
    }
}

impl Shared {
    /// Nothing built yet.
    pub fn new() -> Shared {
        Shared::default()
    }

    /// The part called `name`, built by `build` the first time it is asked for. Every core's instance of
    /// one app gets the same parameters, so a name identifies one part.
    pub fn get_or_build<T: Any + Send + Sync, E>(
        &mut self,
        name: &'static str,
        build: impl FnOnce() -> Result<T, E>,
    ) -> Result<Arc<T>, E> {
        if let Some(item) = self.items.get(name) {
            return Ok(item.clone().downcast::<T>().expect("one type per shared name"));
        }
        let item = Arc::new(build()?);
        self.items.insert(name, item.clone());
        Ok(item)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_part_is_built_once_and_shared() {
        let mut s = Shared::new();
        let mut builds = 0;
        let a = s.get_or_build("t", || -> Result<Vec<u8>, ()> {
            builds += 1;
            Ok(vec![1, 2])
        });
        let b = s.get_or_build("t", || -> Result<Vec<u8>, ()> { unreachable!() });
        assert!(Arc::ptr_eq(&a.unwrap(), &b.unwrap()));
        assert_eq!(builds, 1);
        let e = s.get_or_build("u", || -> Result<u8, &str> { Err("bad") });
        assert_eq!(e.unwrap_err(), "bad");
        assert!(s.get_or_build("u", || -> Result<u8, ()> { Ok(3) }).is_ok());
    }
}
