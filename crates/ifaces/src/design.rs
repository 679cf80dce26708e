//! The seam every receive interface plugs into and both engines drive (DESIGN.md, "Layers").
//!
//! A design is a device side, what the NIC does when a packet arrives and when it transmits, and a driver
//! side, what a core does in its rx and tx bursts. A new design is one module implementing
//! [`Design`], [`DeviceSide`] and [`DriverSide`]; the engines are generic over it and never change.

use crate::arena::BufLayout;
use crate::core::CoreCtx;
use crate::desc::PrefetchParams;
use crate::nicmem::NicMem;
use crate::packet::Packet;
use crate::pool::SharedPool;
use crate::probe::Probe;
use crate::ringsize::RingSize;
use crate::sync::Arc;
use std::collections::BTreeMap;
use std::fmt;
use wire::QueueId;

/// Why the NIC dropped a packet. Every drop has one (DESIGN.md, "Invariants").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum DropReason {
    /// No posted receive descriptor (the Rx ring is empty of buffers).
    NoRxDescriptor,
    /// The completion ring has no free entry.
    CompletionRingFull,
    /// rxBisect: no buffer in any Ax ring associated with the Bx ring (001 §4.1).
    NoAxBuffer,
    /// rxBisect: the Bx ring is full (001 §4.1).
    BxFull,
    /// Enso: the pipe has no room for the packet (004 §4).
    PipeFull,
    /// The packet is larger than the receive buffer.
    TooLong,
    /// The NIC's on-chip packet buffer overflowed while the host could not take packets fast enough
    /// (the simulator's NIC pipeline; the live NIC thread has no such buffer).
    NicBufferFull,
}

impl DropReason {
    /// Every reason, in report order.
    pub const ALL: [DropReason; 7] = [
        DropReason::NoRxDescriptor,
        DropReason::CompletionRingFull,
        DropReason::NoAxBuffer,
        DropReason::BxFull,
        DropReason::PipeFull,
        DropReason::TooLong,
        DropReason::NicBufferFull,
    ];

    /// Short name used in reports.
    pub fn name(self) -> &'static str {
        match self {
            DropReason::NoRxDescriptor => "no_rx_descriptor",
            DropReason::CompletionRingFull => "completion_ring_full",
            DropReason::NoAxBuffer => "no_ax_buffer",
            DropReason::BxFull => "bx_full",
            DropReason::PipeFull => "pipe_full",
            DropReason::TooLong => "too_long",
            DropReason::NicBufferFull => "nic_buffer_full",
        }
    }
}

impl fmt::Display for DropReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Drops counted by reason.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Drops([u64; DropReason::ALL.len()]);

impl Drops {
    /// Count one drop.
    #[inline]
    pub fn add(&mut self, r: DropReason) {
        self.0[r as usize] += 1;
    }

    /// Drops for one reason.
    pub fn get(&self, r: DropReason) -> u64 {
        self.0[r as usize]
    }

    /// All drops.
    pub fn total(&self) -> u64 {
        self.0.iter().sum()
    }

    /// Non-zero counts by name.
    pub fn by_name(&self) -> BTreeMap<&'static str, u64> {
        DropReason::ALL.iter().filter(|r| self.get(**r) > 0).map(|r| (r.name(), self.get(*r))).collect()
    }

    /// Add another set of counts.
    pub fn merge(&mut self, o: &Drops) {
        for (a, b) in self.0.iter_mut().zip(o.0) {
            *a += b;
        }
    }
}

/// Named counters a design reports beyond the common ones (descriptor fetches, wait times, ...).
pub type Metrics = BTreeMap<String, f64>;

/// Packets the device has delivered that software has not yet taken, and how many it could hold.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Occupancy {
    /// Entries holding packets not yet consumed.
    pub used: u64,
    /// Entries in total.
    pub capacity: u64,
}

/// A bad interface configuration: which option, and what is wrong with it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid --{option}: {message}")]
pub struct ConfigError {
    /// The command-line option (and experiment key) at fault.
    pub option: &'static str,
    /// What is wrong and what to do.
    pub message: String,
}

impl ConfigError {
    /// An error about `option`.
    pub fn new(option: &'static str, message: impl Into<String>) -> ConfigError {
        ConfigError { option, message: message.into() }
    }
}

/// Configuration of a receive interface; each design reads the fields it uses.
#[derive(Debug, Clone, PartialEq)]
pub struct IfaceConfig {
    /// Worker cores (each an RSS target).
    pub cores: usize,
    /// Receive ring size (privRing: per core).
    pub ring: RingSize,
    /// Transmit ring size per core.
    pub tx_ring: RingSize,
    /// Per-core buffer cache size (DPDK's mempool cache).
    pub cache: usize,
    /// Packet buffer layout.
    pub layout: BufLayout,
    /// The NIC's descriptor prefetch.
    pub prefetch: PrefetchParams,
    /// Largest receive burst a driver call returns (DPDK's 32).
    pub burst: usize,
    /// shRing: cores sharing one Rx ring (000 §4, "N"); the effective degree is `min(share, cores)`,
    /// which must divide `cores`.
    pub share: usize,
    /// Batched RxList: packets per multi-packet descriptor (000 §4.4, Figure 5b); a power of two.
    pub list_batch: u32,
    /// Dynamic shRing: the controller's switching thresholds (000 §4.5-4.6).
    pub dynamic: crate::shring::dynamic::Thresholds,
    /// rxBisect: entries of each allocation (Ax) ring (001 §4.5); a power of two, at least
    /// [`crate::rxbisect::AX_MIN`].
    pub ax: u32,
    /// rxBisect: entries of each bisected reception (Bx) ring (001 §4.5).
    pub bx: RingSize,
    /// rxBisect: how the NIC picks an Ax ring when the linked one is empty (001 §4.1).
    pub ax_policy: crate::rxbisect::AxPolicy,
    /// Ensō: pipe size, pipes per core, notification mode, prefetching, chaotic gap (004 §4-5).
    pub enso: crate::enso::EnsoConfig,
    /// nicmem: NIC memory capacity and header split offset (002 §4-5).
    pub nicmem: crate::nicmem::NicMemConfig,
    /// Multi-Packet RQ: stride size, strides per WQE, memcpy threshold ([`crate::mprq`]).
    pub mprq: crate::mprq::MprqConfig,
    /// AF_XDP: chunk size, FILL ring size, shared or per-queue FILL ring ([`crate::afxdp`]).
    pub afxdp: crate::afxdp::AfXdpConfig,
    /// How the NIC writes completion entries ([`crate::cqring`]): ConnectX 64-byte CQEs, with or
    /// without CQE compression, or Intel's 32-byte write-back; the simulator sets it from the machine
    /// profile. Compression engages only under PCIe back pressure, so the live engine never sees it.
    pub cq: crate::cqring::CqFormat,
    /// How privRing's driver reposts receive buffers ([`crate::refill`]): per slot (DPDK's scalar paths)
    /// or in bulk as a PMD's vector path does; the simulator sets it from the machine profile.
    pub rx_refill: crate::refill::RxRefill,
    /// What drivers do with packets their Tx ring has no room for: drop them (DPDK's sample apps) or
    /// leave them to the caller to retry (FastClick's blocking `ToDPDKDevice`); set by the app runtime.
    pub tx_full: crate::txring::TxFull,
    /// Drivers free sent buffers without reading them: DPDK's `RTE_ETH_TX_OFFLOAD_MBUF_FAST_FREE`, which
    /// DPDK's sample apps ask for (l3fwd's `main.c`) and FastClick does not (its `dpdkdevice.cc` leaves
    /// it a TODO), and which only some PMDs honour (21.11's i40e and mlx5; not ice, nor 20.11's). The
    /// runtime says whether the app asks; the simulator keeps it only where the machine profile's PMD
    /// honours it (`nic.tx_fast_free`). Otherwise a free reads the mbuf's second line
    /// ([`crate::BufLayout::free_read_offset`]), as nicmem's always do: its split packets are two
    /// segments, which a fast free does not allow.
    pub tx_fast_free: bool,
    /// Buffers the application's packet mempool holds, set by the app runtime; 0 sizes it as DPDK's
    /// sample apps do, to what the rings, Tx rings and caches need ([`Design::buffers_needed`]). The
    /// pool ([`IfaceConfig::pool_size`]) is never smaller than that.
    pub mempool: u32,
}

impl Default for IfaceConfig {
    /// One core, 1 Ki rings (DPDK sample apps' default Rx ring, shRing §2.2), a 256-buffer cache (DPDK
    /// l3fwd's `MEMPOOL_CACHE_SIZE`), bursts of 32; shRing/8 (000 §4), batches of 4 packets per RxList
    /// descriptor (000 Figure 5b), 128-entry Ax and 1 Ki-entry Bx rings (001 §4.5); Ensō's and nicmem's defaults
    /// ([`crate::enso::EnsoConfig`], [`crate::nicmem::NicMemConfig`]).
    fn default() -> Self {
        IfaceConfig {
            cores: 1,
            ring: RingSize::new(1024).expect("power of two"),
            tx_ring: RingSize::new(1024).expect("power of two"),
            cache: 256,
            layout: BufLayout::default(),
            prefetch: PrefetchParams::default(),
            burst: 32,
            share: 8,
            list_batch: 4,
            dynamic: crate::shring::dynamic::Thresholds::default(),
            ax: 128,
            bx: RingSize::new(1024).expect("power of two"),
            ax_policy: crate::rxbisect::AxPolicy::default(),
            enso: crate::enso::EnsoConfig::default(),
            nicmem: crate::nicmem::NicMemConfig::default(),
            mprq: crate::mprq::MprqConfig::default(),
            afxdp: crate::afxdp::AfXdpConfig::default(),
            cq: crate::cqring::CqFormat::Cqe64 { compress: false },
            rx_refill: crate::refill::RxRefill::PerSlot,
            tx_full: crate::txring::TxFull::Drop,
            tx_fast_free: false,
            mempool: 0,
        }
    }
}

impl IfaceConfig {
    /// Buffers in design `D`'s packet pool: what it needs, or the application's mempool if larger.
    pub fn pool_size<D: Design>(&self) -> u32 {
        D::buffers_needed(self).max(self.mempool)
    }

    /// Checks every design needs: at least one core, a non-zero burst no larger than a ring.
    pub fn validate_common(&self) -> Result<(), ConfigError> {
        if self.cores == 0 || self.cores > usize::from(QueueId::MAX) {
            return Err(ConfigError::new(
                "cores",
                format!("need between 1 and {} cores, got {}", QueueId::MAX, self.cores),
            ));
        }
        if self.burst == 0 || self.burst > self.ring.len() {
            return Err(ConfigError::new(
                "burst",
                format!("must be between 1 and the ring size {}, got {}", self.ring, self.burst),
            ));
        }
        Ok(())
    }
}

/// Which cores a delivery concerns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wake {
    /// Only the core the queue belongs to (a per-core completion or Bx ring).
    OwnCore,
    /// Every core: they all poll one shared queue (COREC).
    AllCores,
}

impl Wake {
    /// The cores, of `cores`, that receive the packets RSS steers to `queue`.
    pub fn cores(self, queue: QueueId, cores: usize) -> std::ops::Range<usize> {
        match self {
            Wake::OwnCore => usize::from(queue)..usize::from(queue) + 1,
            Wake::AllCores => 0..cores,
        }
    }
}

/// The NIC's side of a design.
pub trait DeviceSide: Send {
    /// A packet arrived and RSS steered it to `queue` (an index below the number of cores) with Toeplitz
    /// hash `hash`: store it and notify software, or say why it is dropped.
    fn rx<P: Probe>(&mut self, p: &mut P, queue: QueueId, hash: u32, frame: &[u8]) -> Result<(), DropReason>;

    /// Send up to `budget` packets that software queued for transmission to `wire`; returns how many.
    fn tx<P: Probe, W: FnMut(&[u8])>(&mut self, p: &mut P, wire: &mut W, budget: usize) -> usize;

    /// The descriptor ring whose buffers `queue`'s packets take (any number that names it). A NIC that
    /// waits for one ring's descriptor fetch goes on with packets for other rings: "a descriptor cache
    /// miss on some ring does not stall incoming traffic destined to other rings, but with shRing there
    /// are fewer rings and so more traffic is stalled" (shRing §4.3). Default: a ring per queue.
    fn ring_of(&self, queue: QueueId) -> usize {
        usize::from(queue)
    }

    /// Packets delivered but not yet taken by software, and the capacity, over all rings.
    fn occupancy(&self) -> Occupancy;

    /// Packets software queued for transmission and the device has not sent yet.
    fn tx_pending(&self) -> u64;

    /// Design-specific counters.
    fn metrics(&self) -> Metrics {
        Metrics::new()
    }

    /// Host memory besides the packet buffer arena into which or from which the device moves packet
    /// data (Ensō's pipes). The simulator counts DMA there and to the arena as goodput and every other
    /// transfer (descriptors, completions, notifications, doorbells) as metadata (Ensō §7.2.4, Figure 10).
    fn data_regions(&self) -> Vec<std::ops::Range<usize>> {
        Vec::new()
    }

    /// The NIC memory this device exposes to software (nicmem §4.1), if any: apps that serve data from
    /// it (nmKVS, §4.2.2) get it before the run.
    fn nicmem(&self) -> Option<&Arc<NicMem>> {
        None
    }

    /// A periodic measurement from the engine (dynamic shRing's controller input, 000 §4.5). Designs
    /// that adapt at run time override this; others ignore it.
    fn sample(&mut self, _sample: &Sample) {}

    /// No packet is coming: write whatever completions the NIC holds back ([`crate::cqring`]'s mini-CQE
    /// arrays), as a NIC does once its write queue drains. Designs without held completions ignore it.
    fn idle<P: Probe>(&mut self, _p: &mut P) {}
}

/// What an engine measured over one sampling period (000 §4.6 samples every 10 ms), fed to
/// [`DeviceSide::sample`].
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Sample {
    /// Length of the period in nanoseconds.
    pub period_ns: u64,
    /// Received throughput over the period, bits per second (the NIC's byte counters).
    pub rx_bits_per_s: f64,
    /// Memory bandwidth over the period, bytes per second (Intel PCM in the paper); `None` when the
    /// engine cannot measure it (the live engine).
    pub mem_bytes_per_s: Option<f64>,
    /// Per core, the mean time between its successive rx calls over the period, in nanoseconds (a core
    /// that made no call reports the period). An overloaded core calls rarely (000 §4.5).
    pub rx_gap_ns: Vec<f64>,
}

/// A core's side of a design.
pub trait DriverSide: Send {
    /// Receive up to `max` packets into `out` (appending); returns how many.
    fn rx_burst<'c, P: Probe>(&mut self, p: &mut P, core: &'c CoreCtx, out: &mut Vec<Packet<'c>>, max: usize) -> usize;

    /// Transmit `pkts`, taking them from the front; packets that cannot be queued are freed, or, with
    /// [`IfaceConfig::tx_full`] `Wait`, stay in `pkts` for the caller to retry. Returns how many were
    /// queued.
    fn tx_burst<'c, P: Probe>(&mut self, p: &mut P, core: &'c CoreCtx, pkts: &mut Vec<Packet<'c>>) -> usize;

    /// Release every buffer this driver still has posted to the device (end of run, after draining), so
    /// that the pool is whole again.
    fn teardown(&mut self, core: &CoreCtx);

    /// Design-specific counters of this core.
    fn metrics(&self) -> Metrics {
        Metrics::new()
    }
}

/// A receive interface design: how to build its two sides.
pub trait Design {
    /// Name on the command line (`--iface`).
    const NAME: &'static str;
    /// Whether the design delivers each flow's packets in order (DESIGN.md, "Invariants"). COREC does
    /// not: its cores claim batches of one shared queue concurrently (003 §3.4).
    const PER_FLOW_ORDER: bool = true;
    /// Which cores a delivery to a queue concerns, so an engine can wake sleeping cores (the simulator).
    const WAKE: Wake = Wake::OwnCore;
    /// Why the device side cannot be split over several NIC ports, each with its own share of the
    /// cores (the live engine's `--nic-threads`), if it cannot.
    const ONE_PORT: Option<&'static str> = None;
    /// Whether the design's software maps the device's registers uncached (UC), so that a core's MMIO
    /// writes leave one at a time (the simulator's `cpu.uc_write_ns`). DPDK's PMDs do not: ice writes its
    /// tails write-combined (`ICE_PCI_REG_WC_WRITE`) and mlx5 rings doorbell records in host memory.
    const UNCACHED_REGISTERS: bool = false;
    /// The NIC side.
    type Device: DeviceSide;
    /// One core's side.
    type Driver: DriverSide;

    /// Host buffers the design needs for `cfg`, so the engine can size the pool.
    fn buffers_needed(cfg: &IfaceConfig) -> u32;

    /// Build both sides over buffers from `pool`, pre-filling rings. Driver `i` serves core `i`.
    fn build(cfg: &IfaceConfig, pool: &Arc<SharedPool>) -> Result<(Self::Device, Vec<Self::Driver>), ConfigError>;
}
