//! Intel receive descriptor write-back packing: the NIC writes completed descriptors back a cache line
//! at a time, so a completion waits for the others of its line, or for the interrupt throttling timer.
//!
//! "Descriptor write backs accumulate and are opportunistically written out in cache line-oriented
//! chunks" when a threshold of descriptors is used or "the receive timer expires (ITR)" (82598EB
//! datasheet §3.5.2.7; the 82575's and 8254x's manuals say the same). For the 700 series (XL710), Intel's
//! DPDK commit a08f9cb6 ("net/iavf: fix Rx queue interrupt setting") says completed descriptors "are
//! posted to host memory ... when a full cache line is available for write-back", "so the full cache line
//! could contain 4 packets", and that only the ITR's expiry posts the leftovers; DPDK's i40e PF driver
//! sets that timer to `I40E_QUEUE_ITR_INTERVAL_DEFAULT`, 32 us (drivers/net/i40e, 20.11).
//!
//! One [`WbHold`] per descriptor ring decides when the completions it was told about become visible;
//! the ring's owner writes them ([`crate::cqring`]'s Intel format, [`crate::corec`]'s DD bits). The timer
//! is checked whenever the NIC handles a packet (on any ring) and when it has nothing left to do, as
//! mini-CQE holds are.

/// How a NIC packs its descriptor write-backs (a machine profile's `nic.wb_descriptors` and
/// `nic.wb_timer_ns`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct WbPacking {
    /// Descriptors written back together: a cache line's worth, aligned to it. 1: each on its own.
    pub per_write: u32,
    /// How long a partial line waits before it is written anyway (the ITR interval), ns.
    pub timer_ns: u64,
}

impl WbPacking {
    /// Every descriptor written back as soon as it completes.
    pub const NONE: WbPacking = WbPacking { per_write: 1, timer_ns: 0 };

    /// The most descriptors one write-back may pack, above any line's worth: a 128-byte line holds 8 of
    /// the 16-byte descriptors (4 of DPDK's default 32-byte ones).
    pub const MAX_PER_WRITE: u32 = 16;

    /// Packing of `per_write` descriptors (a power of two) with a partial line's timer `timer_ns`; the
    /// error says what is wrong.
    pub fn new(per_write: u32, timer_ns: u64) -> Result<WbPacking, String> {
        if !per_write.is_power_of_two() || per_write > Self::MAX_PER_WRITE {
            return Err(format!(
                "descriptors per write-back must be a power of two up to {} (1: no packing), got {per_write}",
                Self::MAX_PER_WRITE
            ));
        }
        if per_write > 1 && timer_ns == 0 {
            return Err("a packed write-back needs a timer for partial lines (its ITR interval, ns)".into());
        }
        Ok(WbPacking { per_write, timer_ns })
    }
}

/// Completions of one ring that the NIC has not written back yet: the free-running indices
/// `base .. base + n`, all in one line.
#[derive(Debug, Clone)]
pub struct WbHold {
    packing: WbPacking,
    base: u32,
    n: u32,
    /// When the partial line is written anyway (NIC clock, ns).
    until_ns: u64,
}

/// Completions to write back now: `n` descriptors from free-running index `first`, in ring order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WbWrite {
    /// Free-running index of the first.
    pub first: u32,
    /// How many.
    pub n: u32,
}

impl WbHold {
    /// No completion held.
    pub fn new(packing: WbPacking) -> WbHold {
        WbHold { packing, base: 0, n: 0, until_ns: 0 }
    }

    /// Descriptor `i` (free-running; the one after the last completed) completed: what to write back
    /// now, if its line is full. `slots` is the ring's size (a power of two), so a line never wraps.
    /// `now_ns` gives the NIC's clock, read only when a partial line starts its timer (the live
    /// engine's clock is a system call). Without packing, `i` alone, at once.
    #[inline(always)]
    pub fn complete(&mut self, i: u32, slots: u32, now_ns: impl FnOnce() -> u64) -> Option<WbWrite> {
        if !self.packs() {
            return Some(WbWrite { first: i, n: 1 });
        }
        if self.n == 0 {
            self.base = i;
            self.until_ns = now_ns() + self.packing.timer_ns;
        }
        debug_assert_eq!(self.base.wrapping_add(self.n), i, "completions in ring order");
        self.n += 1;
        let next = i.wrapping_add(1);
        // Both are powers of two: a mask, not a division, on the NIC's per-packet path.
        let line = self.packing.per_write.min(slots);
        (next & (line - 1) == 0).then(|| self.take())
    }

    /// What to write back because the partial line's timer ran out by the NIC's clock `now_ns` (read
    /// only while a line is held).
    #[inline(always)]
    pub fn expire(&mut self, now_ns: impl FnOnce() -> u64) -> Option<WbWrite> {
        (self.n > 0 && now_ns() >= self.until_ns).then(|| self.take())
    }

    /// Everything held, written now (the ring is full, or the NIC has nothing else to do).
    pub fn flush(&mut self) -> Option<WbWrite> {
        (self.n > 0).then(|| self.take())
    }

    /// Whether this NIC packs write-backs at all (else each completion is written as it completes).
    #[inline(always)]
    pub fn packs(&self) -> bool {
        self.packing.per_write > 1
    }

    /// Whether completions are held.
    pub fn holds(&self) -> bool {
        self.n > 0
    }

    #[inline(always)]
    fn take(&mut self) -> WbWrite {
        let w = WbWrite { first: self.base, n: self.n };
        self.n = 0;
        w
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn a_line_is_written_when_full_and_a_partial_one_when_its_timer_ends() {
        let mut h = WbHold::new(WbPacking::new(4, 32_000).unwrap());
        // Descriptors 2 and 3 fill the rest of the line 0..4 (aligned, so two, not four).
        assert_eq!(h.complete(2, 64, || 100), None);
        assert_eq!(h.complete(3, 64, || 200), Some(WbWrite { first: 2, n: 2 }));
        assert_eq!(h.complete(4, 64, || 300), None);
        assert_eq!(h.expire(|| 32_299), None);
        assert_eq!(h.expire(|| 32_300), Some(WbWrite { first: 4, n: 1 }));
        assert!(!h.holds());
        // The timer starts with the line's first completion.
        assert_eq!(h.complete(5, 64, || 40_000), None);
        assert_eq!(h.expire(|| 72_000), Some(WbWrite { first: 5, n: 1 }));
        assert_eq!(h.flush(), None);
    }

    #[test]
    fn no_packing_writes_each_and_a_line_never_wraps_the_ring() {
        let mut h = WbHold::new(WbPacking::NONE);
        assert_eq!(h.complete(7, 64, || unreachable!("no packing reads no clock")), Some(WbWrite { first: 7, n: 1 }));
        let mut h = WbHold::new(WbPacking::new(8, 1).unwrap());
        assert_eq!(h.complete(2, 4, || 0), None);
        assert_eq!(h.complete(3, 4, || 0), Some(WbWrite { first: 2, n: 2 }));
        assert_eq!(h.complete(u32::MAX, 4, || 0), Some(WbWrite { first: u32::MAX, n: 1 }));
    }

    #[test]
    fn bad_packings_are_refused() {
        assert!(WbPacking::new(3, 1000).is_err());
        assert!(WbPacking::new(32, 1000).is_err());
        assert!(WbPacking::new(4, 0).is_err());
        assert!(WbPacking::new(1, 0).is_ok());
    }
}
