//! The device's side of the per-core Tx rings, for designs that keep privRing's transmit path (shRing
//! §4: "ShRing leaves the Tx path unmodified"; rxBisect §4; COREC): serve the cores' rings round-robin.

use crate::arena::Arena;
use crate::design::IfaceConfig;
use crate::probe::Probe;
use crate::sync::Arc;
use crate::txfetch::{in_turn, send_or_wait};
use crate::txring::{TxDevice, TxDriver, tx_ring};

/// Every core's Tx ring as the NIC sees them.
#[derive(Debug)]
pub struct TxSet {
    rings: Vec<TxDevice>,
    next: usize,
    /// Memory besides the arena that packets queued here may be slices of (MPRQ's buffers).
    lent: Option<Arc<Arena>>,
}

impl TxSet {
    /// One Tx ring per core, as `cfg` sizes them and the runtime has its driver treat them; returns the
    /// device's set and each core's driver half.
    pub fn new(cfg: &IfaceConfig) -> (TxSet, Vec<TxDriver>) {
        let ring = || tx_ring(cfg.tx_ring, cfg.tx_full, cfg.tx_fast_free);
        let (rings, drivers) = (0..cfg.cores).map(|_| ring()).unzip();
        (TxSet { rings, next: 0, lent: None }, drivers)
    }

    /// Let the rings send packets that are slices of `lent`'s buffers ([`crate::mprq`]).
    pub fn lend_from(&mut self, lent: Arc<Arena>) {
        self.lent = Some(lent);
    }

    /// Send up to `budget` packets, starting with a different core's ring each call. The rings' descriptors
    /// are read as doorbells announce them, while the NIC sends those it has read; with none read, it waits
    /// for the first read to arrive ([`crate::txfetch`]).
    pub fn transmit<P: Probe, W: FnMut(&[u8])>(
        &mut self,
        p: &mut P,
        arena: &Arena,
        wire: &mut W,
        budget: usize,
    ) -> usize {
        let sent = send_or_wait(
            self,
            p,
            |s, p| s.transmit_fetched(p, arena, wire, budget),
            |s| s.rings.iter().filter_map(TxDevice::waiting).min(),
        );
        self.next = (self.next + 1) % self.rings.len();
        sent
    }

    fn transmit_fetched<P: Probe, W: FnMut(&[u8])>(
        &mut self,
        p: &mut P,
        arena: &Arena,
        wire: &mut W,
        budget: usize,
    ) -> usize {
        for r in &mut self.rings {
            r.fetch(p);
        }
        let (rings, lent) = (&mut self.rings, self.lent.as_deref());
        in_turn(rings.len(), self.next, budget, |r, left| rings[r].transmit(p, arena, lent, wire, left))
    }

    /// Packets queued by software and not yet sent, over all rings.
    pub fn pending(&self) -> u64 {
        self.rings.iter().map(|r| u64::from(r.pending())).sum()
    }
}
