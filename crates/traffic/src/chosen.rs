//! The expensive part of a generator: the flows a configuration chooses ([`crate::steer`]: candidate
//! tuples drawn and Toeplitz-hashed until each queue has its share).
//! The choice depends only on the seed, the number of flows, the IP version, the protocol, the steering
//! and the indirection table, not on rate, sizes or payload, so the generators of one process that agree
//! on those (a sweep's points, a point's trials, a no-drop search's rates) share one choice, made by the
//! first of them. Sharing changes nothing a generator does: the choice is deterministic, and each
//! generator's random stream continues from where the choice left it.

use crate::config::{GenConfig, GenError};
use crate::flows::{FlowSet, IpVersion};
use crate::steer::Steering;
use crate::template::Templates;
use rand::SeedableRng;
use rand_xoshiro::Xoshiro256PlusPlus;
use std::sync::{Arc, Mutex, PoisonError};
use wire::L4Proto;

/// The flows and their groups, and the random stream after choosing them.
#[derive(Debug)]
pub(crate) struct Chosen {
    pub flows: FlowSet,
    /// Each group's members (indices into `flows`) and whether it is the target queue's.
    pub groups: Vec<(Arc<[u32]>, bool)>,
    /// Probability of group 0 when there are two.
    pub first_share: f64,
    /// The generator's random stream once the flows are chosen.
    pub rng: Xoshiro256PlusPlus,
}

/// What a choice depends on.
#[derive(Debug, Clone, PartialEq)]
struct Key {
    seed: u64,
    flows: usize,
    ip: IpVersion,
    proto: L4Proto,
    steering: Steering,
    reta: usize,
}

/// Choices kept for reuse, most recently made last; each behind its own lock, so that generators
/// wanting the same choice wait for the first to make it while others go on.
type Kept = Vec<(Key, Arc<Mutex<Option<Arc<Chosen>>>>)>;

/// How many choices the process keeps (a million flows' take about 100 MB).
const KEPT: usize = 2;

static CHOICES: Mutex<Kept> = Mutex::new(Vec::new());

/// The choice of `cfg` (already validated): the one kept for its key, or a new one.
pub(crate) fn chosen(cfg: &GenConfig) -> Result<Arc<Chosen>, GenError> {
    let key =
        Key { seed: cfg.seed, flows: cfg.flows, ip: cfg.ip, proto: cfg.proto, steering: cfg.steering, reta: cfg.reta };
    let slot = {
        let mut kept = CHOICES.lock().unwrap_or_else(PoisonError::into_inner);
        match kept.iter().position(|(k, _)| *k == key) {
            Some(i) => {
                let entry = kept.remove(i);
                let slot = entry.1.clone();
                kept.push(entry);
                slot
            }
            None => {
                if kept.len() == KEPT {
                    kept.remove(0);
                }
                let slot = Arc::new(Mutex::new(None));
                kept.push((key, slot.clone()));
                slot
            }
        }
    };
    let mut slot = slot.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some(c) = &*slot {
        return Ok(c.clone());
    }
    let c = Arc::new(choose(cfg)?);
    *slot = Some(c.clone());
    Ok(c)
}

/// Choose `cfg`'s flows.
fn choose(cfg: &GenConfig) -> Result<Chosen, GenError> {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(cfg.seed);
    let sel = cfg.steering.select(&mut rng, cfg.flows, cfg.ip, cfg.proto, cfg.reta)?;
    if let Some(f) = sel.flows.iter().find(|f| !Templates::takes(&f.tuple)) {
        return Err(GenError::Config(format!("no frame can carry flow {}: UDP or TCP over one IP version", f.tuple)));
    }
    Ok(Chosen {
        groups: sel.groups.into_iter().map(|g| (g.members.into(), g.target)).collect(),
        first_share: sel.first_share,
        flows: sel.flows,
        rng,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generators_that_agree_on_the_flows_share_one_choice() {
        let cfg = GenConfig { seed: 77, flows: 1000, ..GenConfig::default() };
        let a = chosen(&cfg).unwrap();
        let b = chosen(&GenConfig { rate: crate::Rate::Gbps(1.0), ..cfg.clone() }).unwrap();
        assert!(Arc::ptr_eq(&a, &b), "the rate does not change the flows");
        let c = chosen(&GenConfig { seed: 78, ..cfg.clone() }).unwrap();
        assert!(!Arc::ptr_eq(&a, &c), "another seed chooses anew");
        let fresh = choose(&cfg).unwrap();
        let tuples = |c: &Chosen| c.flows.iter().map(|f| (f.tuple, f.hash)).collect::<Vec<_>>();
        assert_eq!(tuples(&a), tuples(&fresh));
        assert_eq!(a.rng, fresh.rng, "the random stream goes on where the choice left it");
    }
}
