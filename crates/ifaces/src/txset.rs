//! The device's side of the per-core Tx rings, for designs that keep privRing's transmit path (shRing
//! §4: "ShRing leaves the Tx path unmodified"; rxBisect §4; COREC): serve the cores' rings round-robin.

use crate::arena::Arena;
use crate::design::IfaceConfig;
use crate::probe::Probe;
use crate::txring::{TxDevice, TxDriver, tx_ring};

/// Every core's Tx ring as the NIC sees them.
#[derive(Debug)]
pub struct TxSet {
    rings: Vec<TxDevice>,
    next: usize,
}

impl TxSet {
    /// One Tx ring per core, as `cfg` sizes them and the runtime has its driver treat them; returns the
    /// device's set and each core's driver half.
    pub fn new(cfg: &IfaceConfig) -> (TxSet, Vec<TxDriver>) {
        let ring = || tx_ring(cfg.tx_ring, cfg.prefetch, cfg.tx_full, cfg.tx_fast_free);
        let (rings, drivers) = (0..cfg.cores).map(|_| ring()).unzip();
        (TxSet { rings, next: 0 }, drivers)
    }

    /// Send up to `budget` packets, starting with a different core's ring each call.
    pub fn transmit<P: Probe, W: FnMut(&[u8])>(
        &mut self,
        p: &mut P,
        arena: &Arena,
        wire: &mut W,
        budget: usize,
    ) -> usize {
        let n = self.rings.len();
        let mut sent = 0;
        for i in 0..n {
            if sent >= budget {
                break;
            }
            sent += self.rings[(self.next + i) % n].transmit(p, arena, wire, budget - sent);
        }
        self.next = (self.next + 1) % n;
        sent
    }

    /// Packets queued by software and not yet sent, over all rings.
    pub fn pending(&self) -> u64 {
        self.rings.iter().map(|r| u64::from(r.pending())).sum()
    }
}
