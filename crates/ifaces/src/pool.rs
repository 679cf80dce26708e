//! Packet buffer pools: a two-level allocator with per-core caches over a shared pool, as DPDK's mempool
//! (rxBisect §4.2): caches refill from the shared pool when empty and flush back down to their size once
//! they reach 1.5x it (DPDK's `RTE_MEMPOOL_CACHE_FLUSHTHRESH_MULTIPLIER`). A buffer allocated on one
//! core may be freed on another; that is what rxBisect needs and what the counters show.

use crate::arena::{Arena, BufId, Owner};
use crate::probe::{Phase, Probe, in_phase};
use crate::sync::{Arc, AtomicU64, Mutex, Ordering};

/// The shared level: a stack of free buffers behind a lock, reached in bulk by the caches.
#[derive(Debug)]
pub struct SharedPool {
    arena: Arc<Arena>,
    free: Mutex<Vec<BufId>>,
    /// Bulk refills served.
    refills: AtomicU64,
    /// Bulk flushes received.
    flushes: AtomicU64,
}

/// Counters of one core's cache.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct CacheStats {
    /// Buffers allocated.
    pub allocs: u64,
    /// Buffers freed.
    pub frees: u64,
    /// Frees of buffers another core allocated.
    pub cross_core_frees: u64,
    /// Refills from the shared pool.
    pub refills: u64,
    /// Flushes to the shared pool.
    pub flushes: u64,
    /// Allocations that failed: cache and shared pool both empty.
    pub failures: u64,
}

impl std::ops::AddAssign for CacheStats {
    fn add_assign(&mut self, o: CacheStats) {
        self.allocs += o.allocs;
        self.frees += o.frees;
        self.cross_core_frees += o.cross_core_frees;
        self.refills += o.refills;
        self.flushes += o.flushes;
        self.failures += o.failures;
    }
}

impl SharedPool {
    /// A pool holding every buffer of `arena`, all of which must be free.
    pub fn new(arena: Arc<Arena>) -> Arc<SharedPool> {
        let free = (0..arena.count()).rev().map(BufId).collect();
        Arc::new(SharedPool { arena, free: Mutex::new(free), refills: AtomicU64::new(0), flushes: AtomicU64::new(0) })
    }

    /// The arena the buffers belong to.
    pub fn arena(&self) -> &Arc<Arena> {
        &self.arena
    }

    /// Buffers currently in the shared level.
    pub fn available(&self) -> usize {
        self.free.lock().unwrap().len()
    }

    /// Total refills and flushes served, over all caches.
    pub fn bulk_ops(&self) -> (u64, u64) {
        (self.refills.load(Ordering::Relaxed), self.flushes.load(Ordering::Relaxed))
    }

    /// Move up to `n` buffers into `out`; returns how many.
    fn take<P: Probe>(&self, p: &mut P, out: &mut Vec<BufId>, n: usize) -> usize {
        let mut free = self.free.lock().unwrap();
        p.lock(&self.free as *const _ as usize);
        let k = n.min(free.len());
        let from = free.len() - k;
        p.touch(free.as_ptr() as usize + from * 4, k * 4, crate::probe::Access::Read);
        out.extend(free.drain(from..));
        p.unlock(&self.free as *const _ as usize);
        self.refills.fetch_add(1, Ordering::Relaxed);
        k
    }

    /// Return buffers to the shared level.
    fn give<P: Probe>(&self, p: &mut P, bufs: impl Iterator<Item = BufId>) {
        let mut free = self.free.lock().unwrap();
        p.lock(&self.free as *const _ as usize);
        let before = free.len();
        free.extend(bufs);
        p.touch(free.as_ptr() as usize + before * 4, (free.len() - before) * 4, crate::probe::Access::Write);
        p.unlock(&self.free as *const _ as usize);
        self.flushes.fetch_add(1, Ordering::Relaxed);
    }
}

/// One core's cache: the first level. Owned by its core; never shared.
#[derive(Debug)]
pub struct PoolCache {
    core: u16,
    size: usize,
    flush_at: usize,
    bufs: Vec<BufId>,
    shared: Arc<SharedPool>,
    stats: CacheStats,
}

impl PoolCache {
    /// A cache of `size` buffers for `core`; 0 disables caching, so every call reaches the shared pool.
    pub fn new(core: u16, size: usize, shared: Arc<SharedPool>) -> PoolCache {
        let flush_at = size + size / 2;
        PoolCache { core, size, flush_at, bufs: Vec::with_capacity(flush_at + 1), shared, stats: CacheStats::default() }
    }

    /// The arena the buffers come from.
    pub fn arena(&self) -> &Arc<Arena> {
        self.shared.arena()
    }

    /// The shared level behind this cache.
    pub fn shared(&self) -> &Arc<SharedPool> {
        &self.shared
    }

    /// Counters so far.
    pub fn stats(&self) -> CacheStats {
        self.stats
    }

    /// Buffers held by this cache.
    pub fn len(&self) -> usize {
        self.bufs.len()
    }

    /// True if the cache holds no buffer.
    pub fn is_empty(&self) -> bool {
        self.bufs.is_empty()
    }

    /// Allocate one buffer (now owned by this core), refilling from the shared pool if needed.
    /// `None` when the cache and the shared pool are both empty.
    #[inline]
    pub fn alloc<P: Probe>(&mut self, p: &mut P) -> Option<BufId> {
        in_phase(p, Phase::Alloc, |p| {
            if self.bufs.is_empty() {
                let size = self.size.max(1);
                if in_phase(p, Phase::PoolRefill, |p| self.shared.take(p, &mut self.bufs, size)) == 0 {
                    self.stats.failures += 1;
                    return None;
                }
                self.stats.refills += 1;
            }
            let id = self.bufs.pop()?;
            p.touch(self.bufs.as_ptr() as usize + self.bufs.len() * 4, 4, crate::probe::Access::Read);
            self.shared.arena().take_free(id, self.core);
            self.stats.allocs += 1;
            Some(id)
        })
    }

    /// Free a buffer this core holds, flushing down to the cache size once 1.5x is reached.
    #[inline]
    pub fn free<P: Probe>(&mut self, p: &mut P, id: BufId) {
        in_phase(p, Phase::Alloc, |p| {
            // `rte_pktmbuf_prefree_seg` reads the mbuf's `next` in its second line. The loads of a free
            // loop do not depend on each other, so an out-of-order core overlaps them.
            if let Some(next) = self.shared.arena().free_read_addr(id) {
                p.load_overlapped(next, 8);
            }
            self.free_quiet(id, p)
        })
    }

    /// Free a sent buffer as a PMD's fast free does (`RTE_ETH_TX_OFFLOAD_MBUF_FAST_FREE`): straight back
    /// to the mempool without reading the mbuf (DPDK 21.11's i40e `i40e_tx_free_bufs` puts a threshold's
    /// worth with `rte_mempool_put_bulk`; [`crate::IfaceConfig::tx_fast_free`]).
    #[inline]
    pub fn put<P: Probe>(&mut self, p: &mut P, id: BufId) {
        in_phase(p, Phase::Alloc, |p| self.free_quiet(id, p))
    }

    /// Free without charging a probe (a packet dropped by its owner; see [`crate::Packet`]).
    #[inline]
    pub fn free_unprobed(&mut self, id: BufId) {
        self.free_quiet(id, &mut crate::probe::NoProbe::default())
    }

    fn free_quiet<P: Probe>(&mut self, id: BufId, p: &mut P) {
        let arena = self.shared.arena();
        self.stats.cross_core_frees += u64::from(arena.home(id) != self.core);
        arena.transfer(id, Owner::Core, Owner::Free);
        self.stats.frees += 1;
        p.touch(self.bufs.as_ptr() as usize + self.bufs.len() * 4, 4, crate::probe::Access::Write);
        self.bufs.push(id);
        if self.bufs.len() >= self.flush_at.max(1) {
            let keep = self.size;
            in_phase(p, Phase::PoolFlush, |p| self.shared.give(p, self.bufs.drain(keep..)));
            self.stats.flushes += 1;
        }
    }

    /// Return every cached buffer to the shared pool (end of a run).
    pub fn drain(&mut self) {
        self.shared.give(&mut crate::probe::NoProbe::default(), self.bufs.drain(..));
    }
}

impl Drop for PoolCache {
    fn drop(&mut self) {
        self.drain();
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use crate::arena::BufLayout;
    use crate::probe::NoProbe;

    fn pool(n: u32) -> Arc<SharedPool> {
        SharedPool::new(Arc::new(Arena::new("t", n, BufLayout::default()).unwrap()))
    }

    #[test]
    fn refill_and_flush_at_one_and_a_half() {
        let shared = pool(64);
        let mut p = NoProbe::default();
        let mut c = PoolCache::new(0, 8, shared.clone());
        let a = c.alloc(&mut p).unwrap();
        assert_eq!(c.len(), 7);
        assert_eq!(shared.available(), 56);
        let got: Vec<_> = (0..7).map(|_| c.alloc(&mut p).unwrap()).collect();
        for id in got.into_iter().chain([a]) {
            c.free(&mut p, id);
        }
        assert_eq!(c.len(), 8);
        let more: Vec<_> = (0..12).map(|_| c.alloc(&mut p).unwrap()).collect();
        for id in more {
            c.free(&mut p, id);
        }
        // The cache held 4 after the refill; 12 frees reach 1.5 x 8 = 12 twice, each time flushing to 8.
        assert_eq!(c.len(), 8);
        assert_eq!(c.stats().flushes, 2);
        drop(c);
        assert_eq!(shared.available(), 64);
    }

    #[test]
    fn a_free_reads_the_mbufs_second_line_and_a_packed_buffer_has_none() {
        for (layout, lines) in [(BufLayout::default(), 1), (BufLayout::PACKED_2K, 0)] {
            let shared = SharedPool::new(Arc::new(Arena::new("t", 8, layout).unwrap()));
            let mut c = PoolCache::new(0, 4, shared.clone());
            let id = c.alloc(&mut NoProbe::default()).unwrap();
            let mut p = crate::probe::CountingProbe::default();
            c.free(&mut p, id);
            assert_eq!(p.overlapped, lines, "{layout:?}");
            let meta = shared.arena().meta_addr(id);
            assert_eq!(shared.arena().free_read_addr(id), (lines == 1).then_some(meta + 64));
            // A fast free puts the buffer back without reading it.
            let id = c.alloc(&mut NoProbe::default()).unwrap();
            c.put(&mut p, id);
            assert_eq!(p.overlapped, lines, "{layout:?}");
            assert_eq!(c.stats().frees, 2);
        }
    }

    #[test]
    fn cross_core_free_is_counted_and_exhaustion_fails_cleanly() {
        let shared = pool(4);
        let mut p = NoProbe::default();
        let mut c0 = PoolCache::new(0, 2, shared.clone());
        let mut c1 = PoolCache::new(1, 2, shared.clone());
        let ids: Vec<_> = (0..4).map(|_| c0.alloc(&mut p).unwrap()).collect();
        assert!(c0.alloc(&mut p).is_none());
        assert_eq!(c0.stats().failures, 1);
        for id in ids {
            c1.free(&mut p, id);
        }
        assert_eq!(c1.stats().cross_core_frees, 4);
        drop((c0, c1));
        assert_eq!(shared.available(), 4);
        assert_eq!(shared.arena().census()[0], 4);
    }

    /// Records the phase each shared-pool lock is taken in.
    #[derive(Default)]
    struct LockPhases {
        phase: Option<Phase>,
        locked_in: Vec<Phase>,
    }

    impl Probe for LockPhases {
        fn touch(&mut self, _: usize, _: usize, _: crate::probe::Access) {}
        fn work(&mut self, _: u32) {}
        fn mmio_write(&mut self, _: usize, _: usize) {}
        fn lock(&mut self, _: usize) {
            self.locked_in.push(self.phase.expect("locked inside a phase"));
        }
        fn unlock(&mut self, _: usize) {}
        fn phase(&mut self, phase: Phase) -> Phase {
            self.phase.replace(phase).unwrap_or(Phase::Rx)
        }
        fn now_ns(&self) -> u64 {
            0
        }
    }

    #[test]
    fn the_shared_level_is_charged_to_refill_and_flush() {
        let shared = pool(16);
        let mut p = LockPhases::default();
        let mut c = PoolCache::new(0, 4, shared.clone());
        // Five allocations: two refills of four; seven frees then reach 1.5 x 4 = 6 once: one flush.
        let ids: Vec<_> = (0..5).map(|_| c.alloc(&mut p).unwrap()).collect();
        let more: Vec<_> = (0..3).map(|_| c.alloc(&mut p).unwrap()).collect();
        for id in ids.into_iter().chain(more).take(6) {
            c.free(&mut p, id);
        }
        assert_eq!(p.locked_in, [Phase::PoolRefill, Phase::PoolRefill, Phase::PoolFlush]);
        assert_eq!(p.phase, Some(Phase::Rx), "each call restores the caller's phase");
    }
}

#[cfg(all(test, loom))]
mod loom_tests {
    use super::*;
    use crate::arena::BufLayout;
    use crate::probe::NoProbe;

    /// A buffer allocated on one core and freed on another, while the first core keeps allocating: no
    /// buffer is lost or handed out twice, and the shared pool ends whole.
    #[test]
    fn cross_core_free() {
        loom::model(|| {
            let shared = SharedPool::new(Arc::new(Arena::new("loom", 3, BufLayout::default()).unwrap()));
            let (tx, rx) = loom::sync::mpsc::channel::<BufId>();
            let s1 = shared.clone();
            let other = loom::thread::spawn(move || {
                let mut c1 = PoolCache::new(1, 1, s1);
                let id = rx.recv().unwrap();
                c1.free(&mut NoProbe::new(), id);
                c1.stats().cross_core_frees
            });
            let mut c0 = PoolCache::new(0, 1, shared.clone());
            let p = &mut NoProbe::new();
            let a = c0.alloc(p).unwrap();
            tx.send(a).unwrap();
            // `b` may be `a` again once the other core has freed it; the arena's owner CAS panics if a
            // buffer is handed out while someone still holds it.
            if let Some(b) = c0.alloc(p) {
                c0.free(p, b);
            }
            assert_eq!(other.join().unwrap(), 1);
            drop(c0);
            assert_eq!(shared.available(), 3);
            assert_eq!(shared.arena().census()[0], 3);
        });
    }
}
