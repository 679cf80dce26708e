//! The probe (DESIGN.md, "The probe"): how interface and app code tell an engine what they do to memory
//! and how much plain work they do, so that one implementation serves both engines.
//!
//! Each agent (the NIC, or one core) is handed its own probe, so a touch is always charged to the agent
//! that made it. The live engine's probe ([`NoProbe`]) has empty inline methods that compile away; the
//! simulator's probe feeds its cache, DRAM and PCIe models and advances the agent's virtual clock.
//! Addresses are the real addresses of the real buffers, rings and tables.

/// What an access does to memory. For the NIC these are DMA reads and writes over PCIe.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Access {
    /// A load (CPU) or a DMA read (NIC).
    Read,
    /// A store (CPU) or a DMA write (NIC).
    Write,
    /// An atomic read-modify-write (CPU only): a locked instruction that owns the line exclusively.
    Atomic,
}

/// The bucket that cycles are charged to, for breakdowns such as shRing Figure 2a ("sync" vs "orig").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Phase {
    /// Driver receive path: polling completions, reading descriptors, reposting.
    Rx,
    /// The network function's own work.
    App,
    /// Driver transmit path.
    Tx,
    /// Synchronisation between cores: shared-ring locks and bitmaps, CAS loops (shRing §4.3, COREC §3.4).
    Sync,
    /// Buffer allocation and freeing in a core's own cache of the two-level allocator ([`crate::pool`]).
    Alloc,
    /// An allocation that reaches the allocator's shared level: a core's empty cache refilled in bulk
    /// (rxBisect §6.2, Table 3's inter-core allocator cycles on "alloc").
    #[serde(rename = "pool_refill")]
    PoolRefill,
    /// A free that reaches the allocator's shared level: a core's overfull cache flushed in bulk (rxBisect
    /// Table 3's "free").
    #[serde(rename = "pool_flush")]
    PoolFlush,
}

impl Phase {
    /// Every phase, in report order.
    pub const ALL: [Phase; 7] =
        [Phase::Rx, Phase::App, Phase::Tx, Phase::Sync, Phase::Alloc, Phase::PoolRefill, Phase::PoolFlush];
}

/// What the code under test reports to the engine that drives it.
pub trait Probe {
    /// `len` bytes at `addr` are read, written or atomically updated. The caller's source location
    /// stands for the load instruction (the simulator's IP prefetcher tells loads apart by it).
    #[track_caller]
    fn touch(&mut self, addr: usize, len: usize, access: Access);
    /// Plain work (arithmetic, branches) costing about `cycles` core cycles.
    fn work(&mut self, cycles: u32);
    /// A DPDK poll-mode driver hands the application one received packet ([`crate::slots::receive`]):
    /// the driver's and its loop's own instructions for it, which the receive paths do not report as
    /// [`Probe::work`] because what they cost is the machine's (the simulator charges its profile's
    /// `nic.pmd_cycles`). Live, the real code runs; elsewhere nothing.
    #[inline(always)]
    fn pmd_packet(&mut self) {}
    /// A posted MMIO write of `len` bytes to a device register at `addr` (a doorbell).
    fn mmio_write(&mut self, addr: usize, len: usize);
    /// A software prefetch (DPDK's `rte_prefetch0`) of the lines of `len` bytes at `addr`: the core
    /// starts filling them and goes on, so the touches that follow find them in its cache. The
    /// simulator charges the fills at the rate the core's fill buffers allow; live, it is the
    /// instruction itself; elsewhere nothing. A device side may call it too, for the software NIC
    /// thread's sake (several packets' reads in flight, as a NIC's DMA engines have); the simulated NIC
    /// ignores it.
    #[inline(always)]
    fn prefetch(&mut self, _addr: usize, _len: usize) {}
    /// A load of `len` bytes at `addr` that nothing waits for right away: the loop around it issues the
    /// next one before this one's data returns (a DPDK free loop's reads of each mbuf's `next`,
    /// [`crate::BufLayout::free_read_offset`]). The simulator charges it as a prefetch's fills, at the
    /// rate the core's fill buffers allow; elsewhere nothing (rxlab's own code needs no value from it).
    #[inline(always)]
    fn load_overlapped(&mut self, _addr: usize, _len: usize) {}
    /// A lock at `addr` is acquired (after the atomic that took it); the sim makes the agent wait for the
    /// holder's release in virtual time.
    fn lock(&mut self, addr: usize);
    /// The lock at `addr` is released.
    fn unlock(&mut self, addr: usize);
    /// A try-lock's atomic took the lock at `addr`: whether the lock is also free at the agent's time.
    /// The sim, whose steps run one at a time, says no while a holder's section it has already run
    /// lasts beyond that time, so a try-lock fails there instead of waiting as [`Probe::lock`] does;
    /// elsewhere the atomic decided and this is true.
    #[inline(always)]
    fn lock_free(&mut self, _addr: usize) -> bool {
        true
    }
    /// A compare-and-swap of the word at `addr` is about to run against the value this agent loaded at
    /// its time `loaded_ns` ([`Probe::now_ns`] then): whether it wins in the agent's time. The sim, whose
    /// steps run one at a time, says no when another agent's winning swap of the word came later in
    /// virtual time than that load (there the value loaded was stale), and records a win otherwise;
    /// elsewhere the swap itself decides and this is true.
    #[inline(always)]
    fn cas_fresh(&mut self, _addr: usize, _loaded_ns: u64) -> bool {
        true
    }
    /// Charge what follows to `phase`; returns the phase that was current.
    fn phase(&mut self, phase: Phase) -> Phase;
    /// The agent's current time in nanoseconds (wall clock live, virtual time in the sim).
    fn now_ns(&self) -> u64;

    /// NIC only: how long a DMA write issued now waits before the PCIe link takes it (back pressure;
    /// the simulator's NIC answers from its DMA stage, [`crate::cqring`] compresses completions while it
    /// is non-zero). Zero elsewhere: the live engine's software NIC has no link to wait for.
    #[inline(always)]
    fn dma_wait_ns(&self) -> u64 {
        0
    }

    /// When the device's answer to an MMIO write issued now can be in host memory, ns: the write's trip
    /// to the device and the device's DMA write back (Ensō's reactive notifications and notification
    /// prefetches, §4.2). Now, where there is no PCIe to cross (the live engine's software NIC).
    #[inline(always)]
    fn answer_ns(&self) -> u64 {
        self.now_ns()
    }

    /// A read that the consumer of a batch makes when its loop reaches an element, reported by the code
    /// that hands the batch over: an iterator that reads each message's header as the app's loop
    /// advances (Ensō §5.1: the app walks a batch of messages in place, once). The simulator charges it,
    /// in report order, just before the agent first touches those lines, and at the end of the step for
    /// elements never touched, so that a batch is walked once and not twice; elsewhere it is a read now.
    #[inline(always)]
    #[track_caller]
    fn read_on_use(&mut self, addr: usize, len: usize) {
        self.touch(addr, len, Access::Read);
    }

    /// What follows needs the data of the last read reported: the device cannot write a buffer before the
    /// descriptor that points to it has arrived (and its prefetcher did not read it ahead, see
    /// [`crate::desc::DescPrefetch`]). The simulator makes the agent wait for that read; elsewhere this
    /// is nothing.
    #[inline(always)]
    fn depend(&mut self) {}

    /// When the last read reported has its data, ns: a device that issued a fetch and does other work
    /// meanwhile notes it, to use the fetched data only from then on. Now where reads take no time.
    #[inline(always)]
    fn read_done_ns(&self) -> u64 {
        self.now_ns()
    }

    /// NIC only: when a write the device issues once its last read has its data lands in host memory, ns
    /// (a completion, written after the read of what it reports). Zero where writes land at once (the
    /// live engine's software NIC).
    #[inline(always)]
    fn write_lands_ns(&self) -> u64 {
        0
    }

    /// Nothing to do until `ns`: wait, as [`Probe::depend`] waits for a read. Nothing elsewhere.
    #[inline(always)]
    fn wait_until_ns(&mut self, _ns: u64) {}

    /// Report a read of the object `v` (its address and size).
    #[inline(always)]
    #[track_caller]
    fn read<T: ?Sized>(&mut self, v: &T) {
        self.touch(v as *const T as *const u8 as usize, std::mem::size_of_val(v), Access::Read);
    }

    /// Report a write of the object `v` (its address and size).
    #[inline(always)]
    #[track_caller]
    fn write<T: ?Sized>(&mut self, v: &T) {
        self.touch(v as *const T as *const u8 as usize, std::mem::size_of_val(v), Access::Write);
    }

    /// Report an atomic read-modify-write of the object `v`.
    #[inline(always)]
    #[track_caller]
    fn atomic<T: ?Sized>(&mut self, v: &T) {
        self.touch(v as *const T as *const u8 as usize, std::mem::size_of_val(v), Access::Atomic);
    }
}

/// Run `f` with cycles charged to `phase`, then restore the previous phase.
#[inline(always)]
pub fn in_phase<P: Probe, R>(p: &mut P, phase: Phase, f: impl FnOnce(&mut P) -> R) -> R {
    let prev = p.phase(phase);
    let r = f(p);
    p.phase(prev);
    r
}

/// The live engine's probe: every report is an empty inline function that the compiler removes.
/// Time comes from the monotonic clock, read only where code asks for it.
#[derive(Debug, Clone, Copy)]
pub struct NoProbe {
    epoch: std::time::Instant,
}

impl NoProbe {
    /// A probe whose clock counts from now.
    pub fn new() -> NoProbe {
        NoProbe { epoch: std::time::Instant::now() }
    }

    /// A probe sharing the clock origin `epoch` (all agents of one run share it).
    pub fn with_epoch(epoch: std::time::Instant) -> NoProbe {
        NoProbe { epoch }
    }
}

impl Default for NoProbe {
    /// A probe whose clock counts from the first `Default` probe of this process: making one reads no
    /// clock, so code that needs a probe only to call unprobed helpers (a packet's `Drop` frees its
    /// buffer through one) pays an atomic load, not a `clock_gettime` (15 % of privRing's two-thread
    /// receive path when it did).
    fn default() -> Self {
        static EPOCH: std::sync::OnceLock<std::time::Instant> = std::sync::OnceLock::new();
        NoProbe { epoch: *EPOCH.get_or_init(std::time::Instant::now) }
    }
}

impl Probe for NoProbe {
    #[inline(always)]
    fn touch(&mut self, _: usize, _: usize, _: Access) {}
    #[inline(always)]
    fn work(&mut self, _: u32) {}
    #[inline(always)]
    fn mmio_write(&mut self, _: usize, _: usize) {}
    #[inline(always)]
    fn prefetch(&mut self, addr: usize, len: usize) {
        #[cfg(target_arch = "x86_64")]
        for line in (addr & !63..addr + len).step_by(64) {
            // SAFETY: a prefetch is a hint that never faults, whatever the address; SSE is part of the
            // x86_64 baseline.
            #[allow(unsafe_code)]
            unsafe {
                std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(line as *const i8)
            };
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = (addr, len);
    }
    #[inline(always)]
    fn lock(&mut self, _: usize) {}
    #[inline(always)]
    fn unlock(&mut self, _: usize) {}
    #[inline(always)]
    fn phase(&mut self, phase: Phase) -> Phase {
        phase
    }
    #[inline(always)]
    fn now_ns(&self) -> u64 {
        self.epoch.elapsed().as_nanos() as u64
    }
}

/// A probe that counts what it is told, for tests and for showing what a code path reports.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct CountingProbe {
    /// Number of touches by access kind: read, write, atomic.
    pub touches: [u64; 3],
    /// Bytes touched.
    pub bytes: u64,
    /// Cycles of plain work reported.
    pub cycles: u64,
    /// MMIO writes (doorbells).
    pub mmio: u64,
    /// Lock acquisitions.
    pub locks: u64,
    /// Waits for a read's data ([`Probe::depend`]).
    pub depends: u64,
    /// Lines software prefetched ([`Probe::prefetch`]).
    pub prefetched: u64,
    /// Overlapped loads reported ([`Probe::load_overlapped`]).
    pub overlapped: u64,
    /// Current phase.
    pub current: Option<Phase>,
    /// Virtual time returned by `now_ns`, advanced by tests.
    pub now: u64,
    /// What `dma_wait_ns` returns (PCIe back pressure), set by tests.
    pub dma_wait_ns: u64,
    /// How long after `now` a read reported now has its data (`read_done_ns`), set by tests.
    pub read_ns: u64,
    /// How long a write issued once that read has its data takes to land (`write_lands_ns`), set by tests.
    pub write_ns: u64,
}

impl Probe for CountingProbe {
    fn touch(&mut self, _: usize, len: usize, access: Access) {
        self.touches[access as usize] += 1;
        self.bytes += len as u64;
    }
    fn work(&mut self, cycles: u32) {
        self.cycles += u64::from(cycles);
    }
    fn depend(&mut self) {
        self.depends += 1;
    }
    fn prefetch(&mut self, addr: usize, len: usize) {
        self.prefetched += ((addr + len.max(1)).div_ceil(64) - addr / 64) as u64;
    }
    fn load_overlapped(&mut self, _: usize, _: usize) {
        self.overlapped += 1;
    }
    fn mmio_write(&mut self, _: usize, _: usize) {
        self.mmio += 1;
    }
    fn lock(&mut self, _: usize) {
        self.locks += 1;
    }
    fn unlock(&mut self, _: usize) {}
    fn phase(&mut self, phase: Phase) -> Phase {
        self.current.replace(phase).unwrap_or(Phase::Rx)
    }
    fn now_ns(&self) -> u64 {
        self.now
    }
    fn read_done_ns(&self) -> u64 {
        self.now + self.read_ns
    }
    fn write_lands_ns(&self) -> u64 {
        self.read_done_ns() + self.write_ns
    }
    fn dma_wait_ns(&self) -> u64 {
        self.dma_wait_ns
    }
}
