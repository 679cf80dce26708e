//! Receive descriptor rings and the NIC's descriptor prefetch cache.
//!
//! A receive descriptor (16 B, as a ConnectX receive WQE data segment or an Intel advanced Rx
//! descriptor) points to an empty buffer. Software writes descriptors and then rings the ring's tail
//! doorbell; the device reads them, normally several contiguous descriptors in one DMA read, which it
//! keeps in an on-NIC cache (shRing §4.4, "Prefetching Problem"). A descriptor the device needs that is
//! not in its cache costs one more DMA read round trip: RxList's problem, counted here.

use crate::doorbell::Doorbell;
use crate::probe::{Access, Probe};
use crate::ringsize::RingSize;
use crate::sync::{AtomicU32, AtomicU64, Ordering};

/// One receive descriptor.
#[derive(Debug, Default)]
#[repr(C, align(16))]
pub struct RxDesc {
    /// Address of the first data byte of the posted buffer.
    pub addr: AtomicU64,
    /// Next descriptor in a linked free list (shRing RxList, §4.4); unused by array rings.
    pub next: AtomicU32,
    /// Bytes the buffer can take.
    pub cap: AtomicU32,
}

/// A descriptor array plus its tail doorbell, shared by the device and the driver side.
#[derive(Debug)]
pub struct DescRing {
    size: RingSize,
    descs: Box<[RxDesc]>,
    /// Producer index of posted descriptors (the ring's tail doorbell).
    pub doorbell: Doorbell,
}

impl DescRing {
    /// A ring of `size` empty descriptors.
    pub fn new(size: RingSize) -> DescRing {
        DescRing { size, descs: (0..size.len()).map(|_| RxDesc::default()).collect(), doorbell: Doorbell::new(0) }
    }

    /// Ring size.
    pub fn size(&self) -> RingSize {
        self.size
    }

    /// The descriptor in slot `slot`.
    #[inline]
    pub fn desc(&self, slot: usize) -> &RxDesc {
        &self.descs[slot]
    }

    /// Software writes slot `slot` to point at `addr` (a 16-byte store, reported).
    #[inline]
    pub fn post<P: Probe>(&self, p: &mut P, slot: usize, addr: usize, cap: u32) {
        let d = &self.descs[slot];
        p.touch(d as *const RxDesc as usize, 16, Access::Write);
        d.addr.store(addr as u64, Ordering::Relaxed);
        d.cap.store(cap, Ordering::Relaxed);
    }

    /// The device reads `k` descriptors from slot `slot` (contiguous) in one DMA read. A software NIC's
    /// stand-in for DMA engines working on several packets at once: it hints the buffers they point at,
    /// so their cross-core misses overlap (the simulated NIC ignores prefetches).
    #[inline]
    pub fn dma_read<P: Probe>(&self, p: &mut P, slot: usize, k: usize) {
        p.touch(self.slot_addr(slot), 16 * k, Access::Read);
        for d in &self.descs[slot..slot + k] {
            p.prefetch(d.addr.load(Ordering::Relaxed) as usize, 1);
        }
    }

    /// Address of slot `slot` in memory.
    #[inline]
    pub fn slot_addr(&self, slot: usize) -> usize {
        &self.descs[slot] as *const RxDesc as usize
    }
}

/// Descriptor prefetch parameters of a NIC.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct PrefetchParams {
    /// Descriptors read in one DMA read when the needed one is not cached.
    pub batch: u32,
}

impl Default for PrefetchParams {
    /// 8 descriptors (128 B) per fetch: DPDK's default prefetch threshold for Intel NICs
    /// (`RX_PTHRESH` 8 in the ixgbe and i40e drivers). Machine profiles override it.
    fn default() -> Self {
        PrefetchParams { batch: 8 }
    }
}

/// Counters of a prefetch cache.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct PrefetchStats {
    /// Descriptors found in the cache.
    pub hits: u64,
    /// DMA reads issued to fetch descriptors.
    pub fetches: u64,
    /// Descriptors fetched in total.
    pub fetched: u64,
}

/// The device's cache of contiguous descriptors `[lo, hi)` (free-running slot indices) of one ring.
///
/// Its prefetcher follows the ring: a fetch that starts where the previous one ended (across the wrap
/// to slot 0 too, since the device knows the ring's base and size) was issued ahead of need, so the
/// device does not wait for it. Any other fetch (a ring's first, one after software rewrote the
/// descriptors, RxList's jumps along its links) makes the device wait for the data ([`Probe::depend`]).
#[derive(Debug, Default)]
pub struct DescPrefetch {
    params: PrefetchParams,
    lo: u32,
    hi: u32,
    /// Where the prefetcher's stream stands: the index after the last fetch, if it is still valid.
    stream: Option<u32>,
    stats: PrefetchStats,
}

impl DescPrefetch {
    /// An empty cache.
    pub fn new(params: PrefetchParams) -> DescPrefetch {
        DescPrefetch { params, lo: 0, hi: 0, stream: None, stats: PrefetchStats::default() }
    }

    /// Make descriptor index `idx` (free-running; slot = idx mod size) available to the device, fetching
    /// `idx` and up to `batch - 1` following descriptors (not past `limit`, the first index software has
    /// not posted) in one DMA read if it is not cached. Returns the descriptor.
    #[inline]
    pub fn get<'r, P: Probe>(&mut self, p: &mut P, ring: &'r DescRing, idx: u32, limit: u32) -> &'r RxDesc {
        if idx.wrapping_sub(self.lo) < self.hi.wrapping_sub(self.lo) {
            self.stats.hits += 1;
        } else {
            let n = limit.wrapping_sub(idx).clamp(1, self.params.batch.max(1));
            for (slot, k) in ring.size().runs(idx, n) {
                ring.dma_read(p, slot, k);
            }
            // The device needs this descriptor's buffer address before it can go on, unless the
            // prefetcher read it ahead.
            if self.stream != Some(idx) {
                p.depend();
            }
            self.lo = idx;
            self.hi = idx.wrapping_add(n);
            self.stream = Some(self.hi);
            self.stats.fetches += 1;
            self.stats.fetched += u64::from(n);
        }
        ring.desc(ring.size().slot(idx))
    }

    /// Forget cached descriptors (they were consumed, or software rewrote them); the next fetch starts a
    /// new stream.
    pub fn invalidate(&mut self) {
        self.hi = self.lo;
        self.stream = None;
    }

    /// Counters so far.
    pub fn stats(&self) -> PrefetchStats {
        self.stats
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use crate::probe::CountingProbe;

    #[test]
    fn contiguous_reads_hit_after_one_fetch_and_jumps_miss() {
        let ring = DescRing::new(RingSize::new(16).unwrap());
        let mut pf = DescPrefetch::new(PrefetchParams { batch: 4 });
        let mut p = CountingProbe::default();
        for i in 0..8 {
            pf.get(&mut p, &ring, i, 100);
        }
        assert_eq!(pf.stats(), PrefetchStats { hits: 6, fetches: 2, fetched: 8 });
        pf.get(&mut p, &ring, 13, 100);
        pf.get(&mut p, &ring, 3, 100);
        assert_eq!(pf.stats().fetches, 4);
        // The fetch at 13 wraps: slots 13..16 and 0 are two touches of one DMA read.
        assert_eq!(p.touches[0], 2 + 2 + 1);
        // The device waited for the first fetch and the two jumps; the prefetcher read 4..8 ahead.
        assert_eq!(p.depends, 3);
        // The jump to 13 waits; the next fetch, at 17 (slot 1, past the wrap), continues the stream.
        pf.get(&mut p, &ring, 13, 100);
        pf.get(&mut p, &ring, 17, 100);
        assert_eq!(p.depends, 4);
        // Software rewrote the descriptors: the stream starts over.
        pf.invalidate();
        pf.get(&mut p, &ring, 21, 100);
        assert_eq!(p.depends, 5);
        // Never fetch past what software posted.
        let mut pf = DescPrefetch::new(PrefetchParams { batch: 4 });
        pf.get(&mut p, &ring, 0, 2);
        pf.get(&mut p, &ring, 2, 3);
        assert_eq!(pf.stats().fetches, 2);
    }
}
