//! The registry of designs: every receive interface by its `--iface` name, and [`with_design!`](crate::with_design), which
//! turns a name into a call of generic code (`fn run::<D: Design>()`) in the engines.

use crate::design::{ConfigError, Design};

/// Every design's name, in the order reports list them. "small privRing" (shRing §3) is `privring` with
/// a small `--ring`.
pub const DESIGN_NAMES: &[&str] = &[
    crate::PrivRing::NAME,
    crate::shring::arr::RxArr::NAME,
    crate::shring::list::RxList::NAME,
    crate::shring::batched::BatchedRxList::NAME,
    crate::shring::dynamic::Dynamic::NAME,
    crate::rxbisect::RxBisect::NAME,
    crate::corec::Corec::NAME,
    crate::enso::Enso::NAME,
    crate::enso::EnsoPerPacket::NAME,
    crate::enso::EnsoPrefetch::NAME,
    crate::enso::EnsoChaotic::NAME,
    crate::nicmem::NicMemHost::NAME,
    crate::nicmem::NicMemSplit::NAME,
    crate::nicmem::NmNfvMinus::NAME,
    crate::nicmem::NmNfv::NAME,
    crate::mprq::Mprq::NAME,
    crate::afxdp::AfXdp::NAME,
];

/// The error for a name that is not in [`DESIGN_NAMES`].
pub fn unknown_design(name: &str) -> ConfigError {
    ConfigError::new("iface", format!("unknown interface '{name}'; choose one of {}", DESIGN_NAMES.join(", ")))
}

/// Evaluate `$body` with the type alias `$d` bound to the design named `$name` (a `&str`), giving
/// `Ok(value)`, or `Err(ConfigError)` naming `--iface` if no design has that name:
///
/// ```
/// fn ring_buffers<D: ifaces::Design>(cfg: &ifaces::IfaceConfig) -> u32 { D::buffers_needed(cfg) }
/// let cfg = ifaces::IfaceConfig::default();
/// let n = ifaces::with_design!("rxbisect", D => ring_buffers::<D>(&cfg)).unwrap();
/// assert!(n > 0);
/// assert!(ifaces::with_design!("nope", D => ring_buffers::<D>(&cfg)).is_err());
/// ```
#[macro_export]
macro_rules! with_design {
    ($name:expr, $d:ident => $body:expr) => {{
        let name: &str = $name;
        match name {
            n if n == <$crate::PrivRing as $crate::Design>::NAME => {
                type $d = $crate::PrivRing;
                Ok($body)
            }
            n if n == <$crate::shring::arr::RxArr as $crate::Design>::NAME => {
                type $d = $crate::shring::arr::RxArr;
                Ok($body)
            }
            n if n == <$crate::shring::list::RxList as $crate::Design>::NAME => {
                type $d = $crate::shring::list::RxList;
                Ok($body)
            }
            n if n == <$crate::shring::batched::BatchedRxList as $crate::Design>::NAME => {
                type $d = $crate::shring::batched::BatchedRxList;
                Ok($body)
            }
            n if n == <$crate::shring::dynamic::Dynamic as $crate::Design>::NAME => {
                type $d = $crate::shring::dynamic::Dynamic;
                Ok($body)
            }
            n if n == <$crate::rxbisect::RxBisect as $crate::Design>::NAME => {
                type $d = $crate::rxbisect::RxBisect;
                Ok($body)
            }
            n if n == <$crate::corec::Corec as $crate::Design>::NAME => {
                type $d = $crate::corec::Corec;
                Ok($body)
            }
            n if n == <$crate::enso::Enso as $crate::Design>::NAME => {
                type $d = $crate::enso::Enso;
                Ok($body)
            }
            n if n == <$crate::enso::EnsoPerPacket as $crate::Design>::NAME => {
                type $d = $crate::enso::EnsoPerPacket;
                Ok($body)
            }
            n if n == <$crate::enso::EnsoPrefetch as $crate::Design>::NAME => {
                type $d = $crate::enso::EnsoPrefetch;
                Ok($body)
            }
            n if n == <$crate::enso::EnsoChaotic as $crate::Design>::NAME => {
                type $d = $crate::enso::EnsoChaotic;
                Ok($body)
            }
            n if n == <$crate::nicmem::NicMemHost as $crate::Design>::NAME => {
                type $d = $crate::nicmem::NicMemHost;
                Ok($body)
            }
            n if n == <$crate::nicmem::NicMemSplit as $crate::Design>::NAME => {
                type $d = $crate::nicmem::NicMemSplit;
                Ok($body)
            }
            n if n == <$crate::nicmem::NmNfvMinus as $crate::Design>::NAME => {
                type $d = $crate::nicmem::NmNfvMinus;
                Ok($body)
            }
            n if n == <$crate::nicmem::NmNfv as $crate::Design>::NAME => {
                type $d = $crate::nicmem::NmNfv;
                Ok($body)
            }
            n if n == <$crate::mprq::Mprq as $crate::Design>::NAME => {
                type $d = $crate::mprq::Mprq;
                Ok($body)
            }
            n if n == <$crate::afxdp::AfXdp as $crate::Design>::NAME => {
                type $d = $crate::afxdp::AfXdp;
                Ok($body)
            }
            other => Err($crate::designs::unknown_design(other)),
        }
    }};
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn every_name_dispatches_to_its_design() {
        fn name<D: Design>() -> &'static str {
            D::NAME
        }
        for n in DESIGN_NAMES {
            assert_eq!(crate::with_design!(n, D => name::<D>()).unwrap(), *n);
        }
        let e = crate::with_design!("shring2", D => name::<D>()).unwrap_err();
        assert_eq!(e.option, "iface");
        assert!(e.to_string().contains("rxbisect"), "{e}");
    }
}
