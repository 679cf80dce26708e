//! Machine profiles: every hardware parameter the models use, one named profile per testbed
//! (DESIGN.md, "Simulation"). Each value carries the source it comes from ([`sources`], citing
//! [`REFERENCES`]); none is tuned to a figure. The same types are the schema of profile files
//! ([`crate::profile_file`]): serde derives them, so a field added here is a field of every file.

use crate::cache::{DuelStart, Policy};
use crate::noise::NoiseParams;
use crate::slices::{HASHES, SKX_16, SLICE_SETS, SliceHash, XOR_8};
use serde::{Deserialize, Serialize};
use std::fmt;

/// The works the sources of [`sources`] cite, by their keys.
pub const REFERENCES: &[(&str, &str)] = &[
    ("[P0]", "shRing §5 \"Experimental Setup\" (papers/000)"),
    ("[P1]", "rxBisect §6 \"System Setup\" (papers/001)"),
    ("[P2]", "nicmem §6.1 (papers/002)"),
    ("[P3]", "COREC §4 (papers/003)"),
    ("[P4]", "Ensō §6-7 (papers/004)"),
    ("[HW]", "reference/hardware.md (PCIe model, DMA read latency, DDIO, DRAM loaded latency)"),
    (
        "[OPT]",
        "Intel 64 and IA-32 Architectures Optimization Reference Manual (248966), Skylake Server cache \
         parameters: L1D 32 KiB 8-way 4 cycles; L2 1 MiB 16-way 14 cycles; L3 50-70 cycles; Skylake \
         microarchitecture: 56 store buffer entries",
    ),
    (
        "[UCW]",
        "Intel Community, Software Tuning forum, \"Why do MemReq TLPs take 100s nanoseconds to be generated \
         after MMIO writes?\" (2020): writeq to a UC-mapped BAR in a kernel loop, TLPs 50-300 ns apart on a \
         PCIe analyser; J. McCalpin's answer there: UC stores leave one at a time, each waiting for a round \
         trip that keeps them in order. No Skylake-SP or Skylake-X measurement is published",
    ),
    ("[AGNER]", "Agner Fog, Instruction tables, Skylake: LOCK CMPXCHG/LOCK XADD about 18 cycles"),
    (
        "[C2C]",
        "AnandTech, \"Sizing Up Servers: Intel's Skylake-SP Xeon versus AMD's EPYC 7000\" (2017): \
         core-to-core cache-line transfer on the Skylake-SP mesh about 50 ns",
    ),
    (
        "[PCISPEC]",
        "PCI Express Base Specification 3.0 §2.2.6.2: 8-bit tags (256 outstanding non-posted requests) \
         with Extended Tag Field Enable, which NIC drivers set",
    ),
    (
        "[CX5]",
        "ConnectX-5 EN product brief (nicmem ref. [81]): up to 200 million packets per second; Mellanox, \
         \"HowTo Tune Receive Buffers on Mellanox Adapter Cards\": port buffer 262016 B",
    ),
    (
        "[SLICE]",
        "the LLC slice hashes of slices.rs: McCalpin, \"Mapping Addresses to L3/CHA Slices in Intel \
         Processors\" (TACC TR-2021-03) for Xeon Scalable with 16 to 28 slices; Maurice et al., RAID 2015, \
         for 8 slices",
    ),
    (
        "[AR20]",
        "Abel and Reineke, \"nanoBench: A Low-Overhead Tool for Running Microbenchmarks on x86 Systems\", \
         ISPASS 2020 (and uops.info/cache.html): the L3 replacement policy of Skylake-family CPUs, set dueling \
         between QLRU_H11_M1_R0_U0 and QLRU_H11_MR161_R0_U0 (cache::Policy::QlruAdaptive, which lists what \
         had to be assumed). They measured client CPUs (Skylake, Kaby Lake, Coffee Lake, Ice Lake); no measurement of a Skylake-SP or Skylake-X L3 has \
         been published, so that is the closest",
    ),
    (
        "[JIT]",
        "AMD (Solarflare) Onload User Guide UG1586, \"Sysjitter\": sysjitter on a single-socket Linux server, \
         four cores at 3.2 GHz, 10 s, gaps over 200 ns. Per core: 1001-1014 interruptions/s (the 1 kHz tick), \
         median 1.33-1.47 us, p99 1.6-5.0 us, p99.9 3.7-23 us, p99.99 31-184 us, longest 41-347 us. No \
         measurement of the papers' R640s is published; this is the closest",
    ),
    (
        "[MLC8269]",
        "plantegg/plantegg.github.io, post \"定制Linux Kernel\" (2019), the \"intel8269\" machine: a whole \
         Intel MLC v3.9 output on two Xeon Platinum 8269CY with DDR4-2666 RDIMMs (dmidecode: M393A4K40BB2-CTD, \
         configured 2666 MHz), whose loaded-latency rows have [HW]'s curve's bandwidths and latencies within \
         1.2 ns of its (very likely the same system). Peak injection bandwidth, MB/s: all reads 225097.1, \
         3:1 reads-writes 212457.8, 2:1 210628.1, 1:1 199315.4",
    ),
];

/// Where a value comes from: its path in profile files (`cpu.llc.ways`) and its source, citing
/// [`REFERENCES`]. A path naming a table covers the fields in it that have no source of their own.
pub type Source = (&'static str, &'static str);

/// Bytes per cache line on every modelled machine (x86).
pub const LINE: usize = 64;

/// Geometry of one cache level.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CacheGeom {
    /// Capacity in bytes.
    pub size: usize,
    /// Associativity.
    pub ways: usize,
    /// Load-to-use latency in core cycles. A plain load that hits the L1 costs a cycle whatever the L1's
    /// says (an out-of-order core hides it, [`crate::probe`]); atomics pay it.
    pub latency_cycles: u32,
}

impl CacheGeom {
    /// Number of sets.
    pub fn sets(&self) -> usize {
        self.size / (LINE * self.ways.max(1))
    }

    /// A host cache of `size` bytes and `ways` as the model can hold it: the largest power-of-two number
    /// of sets that fits (a virtualised or non-Intel host may report, say, 480 MiB in 16 ways, which is
    /// 491,520 sets; the set index is a bit field, so the model keeps 262,144 of them).
    pub(crate) fn of_host((size, ways): (usize, usize), latency_cycles: u32) -> CacheGeom {
        let ways = ways.max(1);
        let sets = (size / (LINE * ways)).max(1);
        let sets = 1 << sets.ilog2();
        CacheGeom { size: sets * ways * LINE, ways, latency_cycles }
    }
}

/// Cores and their caches.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CpuParams {
    /// Cores on the socket that runs the workers.
    pub cores: usize,
    /// Core frequency in GHz (Turbo Boost off in every paper's setup).
    pub freq_ghz: f64,
    /// Private L1 data cache.
    pub l1d: CacheGeom,
    /// Private L2 cache.
    pub l2: CacheGeom,
    /// Shared last-level cache.
    pub llc: CacheGeom,
    /// The hash that spreads lines over the LLC's slices, whose sets are then indexed by the low line
    /// bits; `None`: one slice, sets indexed by the low line bits. Files name it (`"skx-16"`, `"xor-8"`)
    /// or write `"none"`.
    #[serde(with = "crate::slices::by_name")]
    pub llc_slices: Option<SliceHash>,
    /// The LLC's replacement policy (the private caches use LRU): `"lru"`, `"qlru"` or
    /// `"qlru-adaptive"`.
    pub llc_policy: Policy,
    /// Where `"qlru-adaptive"`'s set-dueling selectors start: `"m1"`, `"neutral"` (the midpoint) or
    /// `"mr161"` ([`DuelStart`]). Absent: `"neutral"`.
    #[serde(default)]
    pub llc_duel_start: DuelStart,
    /// Ways of the snoop filter beside a non-inclusive LLC, over the LLC's own sets and slices
    /// ([`crate::snoop`]; Skylake-SP: 12, Yan et al., IEEE S&P 2019). 0 (or absent): the LLC is
    /// inclusive and is itself the directory of the lines the private caches hold.
    #[serde(default)]
    pub snoop_filter_ways: usize,
    /// Beside a non-inclusive LLC, the LLC's lowest ways that keep a copy of a line a core reads from a
    /// DDIO way or from one of them (Park et al., "A4", arXiv 2506.11329, 2025: DMA-written lines in the
    /// DCA ways migrate to the "inclusive ways" when a core accesses them); any other line a core reads
    /// leaves the LLC for its L2. 0 (or absent): every line a core reads leaves the LLC.
    #[serde(default)]
    pub inclusive_ways: usize,
    /// Extra cycles of a locked read-modify-write beyond the access itself.
    pub atomic_cycles: u32,
    /// Cycles to move a line that another core holds modified (snoop and transfer).
    pub transfer_cycles: u32,
    /// L1D fill buffers: a core's outstanding L1 misses, which bound how fast its prefetches fill.
    pub fill_buffers: u32,
    /// Store buffer entries: the stores a core has retired and not yet committed, so how far it runs ahead
    /// of uncached register writes that leave one at a time (`uc_write_ns`) and of the stores behind them
    /// ([`crate::storebuf`]).
    pub store_buffer: u32,
    /// Least time between two uncached (UC) stores of one core leaving for the device, ns: UC stores go
    /// out one at a time, in program order, each after a round trip that keeps them ordered. Only
    /// designs whose software maps the device's registers uncached pay it (`Design::UNCACHED_REGISTERS`).
    pub uc_write_ns: f64,
    /// Whether the cores' hardware data prefetchers (L1 next-line and IP-stride, L2 streamer) run
    /// ([`crate::prefetcher`]).
    pub hw_prefetch: bool,
    /// Whether the L2 spatial prefetcher runs too, with `hw_prefetch` (the BIOS's separate "Adjacent Cache
    /// Line Prefetch"): each demand fetch into the L2 brings the other line of its 128-byte pair.
    /// Absent: it does not.
    #[serde(default)]
    pub adjacent_prefetch: bool,
}

/// DDR memory.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DramParams {
    /// Theoretical peak bandwidth in GB/s (channels x MT/s x 8 B).
    pub peak_gbs: f64,
    /// Share of the theoretical peak that memory sustains at most: the bandwidth at which the loaded-
    /// latency curve reaches utilisation 1.
    pub sustained: f64,
    /// Loaded-latency curve: (utilisation of the sustained maximum, latency in ns), increasing in
    /// utilisation.
    pub curve: Vec<(f64, f64)>,
    /// The sustained maximum of mixed traffic: (share of the bytes moved in the less common direction,
    /// reads or writes, from 0 to 0.5; the maximum as a share of the all-reads one), increasing in the
    /// first. Empty (a file that omits it): reads and writes mix at no cost.
    #[serde(default)]
    pub mix: Vec<(f64, f64)>,
}

impl DramParams {
    /// The most bandwidth memory sustains, GB/s: utilisation 1 of the curve.
    pub fn max_gbs(&self) -> f64 {
        self.peak_gbs * self.sustained
    }
}

/// The NIC's PCIe attachment.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PcieParams {
    /// Transfer rate per lane in GT/s.
    pub gts: f64,
    /// Lanes per link.
    pub lanes: u32,
    /// Links (one per NIC); the model treats them as one device with their summed capacity.
    pub links: u32,
    /// Line-code efficiency (128/130 for Gen3-5).
    pub encoding: f64,
    /// Maximum payload size in bytes.
    pub mps: usize,
    /// Maximum read request size in bytes.
    pub mrrs: usize,
    /// Ack DLLP limit in bytes for this width and MPS (PCIe 5.0 Table 3-7..3-9, via pcie-model).
    pub ack_limit: f64,
    /// Flow-control update interval in bytes (PCIe 5.0 Table 2-46..2-48, via pcie-model).
    pub fc_limit: f64,
    /// DMA read round trip at zero bytes, ns (warm host cache).
    pub read_base_ns: f64,
    /// DMA read latency per byte, ns.
    pub read_per_byte_ns: f64,
    /// What a DMA read request adds when the LLC cannot serve it, beyond DRAM's own loaded latency, ns: the
    /// host's I/O path to memory under load (IIO, mesh, memory controller queues), which the model does not
    /// detail.
    pub read_miss_ns: f64,
    /// Outstanding packet-data read requests the NIC keeps per link: the concurrency of its DMA engines
    /// (at most the PCIe tag limit). A read longer than the MRRS is several requests, each holding a slot
    /// until its completion arrives, so reads that DRAM serves slowly throttle the NIC (shRing §2.3).
    pub max_reads: usize,
}

/// The NIC itself.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NicParams {
    /// Ethernet ports and their speed in Gbps (their sum is the wire capacity).
    pub ports: u32,
    /// Speed of one port in Gbps.
    pub port_gbps: f64,
    /// Packets per second the NIC pipeline handles per direction, in millions.
    pub mpps: f64,
    /// On-NIC receive buffer in bytes (packets waiting for the DMA engine); overflow drops.
    pub rx_buffer: usize,
    /// Descriptors fetched per DMA read.
    pub prefetch: u32,
    /// On-NIC memory in bytes (nicmem, paper 002).
    pub memory: usize,
    /// The NIC is a software thread on a core of its own (the live engine's, rxBisect §5): its writes
    /// leave lines modified in that core, so a worker's first read of one pays the core-to-core
    /// transfer rather than DDIO's LLC hit. Off for hardware NICs.
    pub software: bool,
    /// Bytes of one completion entry the NIC writes: 64 (a ConnectX CQE) or 32 (Intel's receive
    /// descriptor write-back) ([`ifaces::cqring`]).
    pub cqe_bytes: usize,
    /// CQE compression enabled (ConnectX only; `--cqe-compress` overrides): completions that would wait
    /// for PCIe are merged into mini-CQE arrays ([`ifaces::cqring`]).
    pub cqe_compression: bool,
    /// Entries of the RSS indirection table the NIC's driver fills round-robin (a power of two): with a
    /// queue count that does not divide it, some queues get one entry more ([`wire::IndirectionTable`]).
    pub reta_entries: usize,
    /// Cycles per received packet of the DPDK poll-mode driver's and its application loop's own
    /// instructions (descriptor parsing, mbuf set-up, the loop around them), which rxlab's DPDK receive
    /// paths do not charge: they report memory touches only ([`ifaces::Probe::pmd_packet`]). Zero where
    /// an NF's calibrated work already carries them (FastClick's graphs, l3fwd's `DPDK_WORK`).
    #[serde(default)]
    pub pmd_cycles: u32,
    /// Intel write-back packing: receive descriptors the NIC writes back together, a cache line's worth
    /// (1, the default: each on its own) ([`ifaces::wbpack`]).
    #[serde(default = "one")]
    pub wb_descriptors: u32,
    /// How long a partial write-back line waits before the NIC writes it anyway (the ITR interval), ns;
    /// needed when `wb_descriptors` is above 1.
    #[serde(default)]
    pub wb_timer_ns: u64,
    /// The testbed's poll-mode driver frees sent mbufs without reading them when the application asks
    /// (DPDK's `RTE_ETH_TX_OFFLOAD_MBUF_FAST_FREE`: 21.11's i40e and mlx5 honour it, ice and 20.11's
    /// PMDs do not), [`ifaces::IfaceConfig::tx_fast_free`]. Off, the default: every free reads the
    /// mbuf's second line.
    #[serde(default)]
    pub tx_fast_free: bool,
    /// How the testbed's poll-mode driver reposts receive buffers in privRing ([`ifaces::refill`]): per
    /// slot (DPDK's scalar paths; the default) or in bulk as `mlx5`'s, `i40e`'s or `ice`'s vector path
    /// does (`--rx-refill` overrides).
    #[serde(default)]
    pub rx_refill: ifaces::RxRefill,
}

fn one() -> u32 {
    1
}

impl NicParams {
    /// How this NIC writes completions, with compression as `compress` asks (the profile's setting if
    /// `None`); an error names what cannot be.
    pub fn cq_format(&self, compress: Option<bool>) -> Result<ifaces::cqring::CqFormat, String> {
        use ifaces::cqring::CqFormat;
        let packing = ifaces::wbpack::WbPacking::new(self.wb_descriptors, self.wb_timer_ns)
            .map_err(|e| format!("nic.wb_descriptors and nic.wb_timer_ns: {e}"))?;
        match (self.cqe_bytes, compress.unwrap_or(self.cqe_compression)) {
            (64, _) if packing.per_write > 1 => {
                Err("only Intel descriptor write-back (nic.cqe_bytes = 32) is packed; nic.wb_descriptors must be 1"
                    .into())
            }
            (64, compress) => Ok(CqFormat::Cqe64 { compress }),
            (32, false) => Ok(CqFormat::Wb32 { packing }),
            (32, true) => Err("this NIC writes 32-byte descriptors back (nic.cqe_bytes = 32); only 64-byte CQEs \
                               have CQE compression"
                .into()),
            (b, _) => Err(format!("nic.cqe_bytes must be 64 (a ConnectX CQE) or 32 (Intel write-back), got {b}")),
        }
    }
}

/// A machine: cores, caches, DDIO, DRAM, PCIe and NIC.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Profile {
    /// Name on the command line and in reports; a file that gives none is named after itself.
    #[serde(default)]
    pub name: String,
    /// Cores and caches.
    pub cpu: CpuParams,
    /// LLC ways NIC writes may allocate in (the highest ways); 0 turns DDIO off.
    pub ddio_ways: usize,
    /// Memory.
    pub dram: DramParams,
    /// PCIe.
    pub pcie: PcieParams,
    /// NIC.
    pub nic: NicParams,
    /// How often and how long each core is interrupted ([`crate::noise`]).
    pub noise: NoiseParams,
    /// The interruptions of a core that also runs the operating system's housekeeping (device
    /// interrupts, kernel threads): a run whose workers take every core has one such worker, core 0
    /// ([`crate::noise`]). Absent: that core is interrupted as the others are.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub housekeeping: Option<NoiseParams>,
    /// A second socket like this one, reached over the links between the sockets: where co-located
    /// programs run when every core of this one runs the NF ([`crate::antagonist`]). Absent: one socket.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub remote_socket: Option<RemoteSocket>,
}

/// The other socket of a two-socket server, as a program there that reads and writes this socket's
/// memory meets it (`numactl --cpunodebind=1 --membind=0`): each access crosses the links between the
/// sockets (Intel UPI) both ways, and their bandwidth is shared by every such program.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RemoteSocket {
    /// Bandwidth of the links between the sockets, each way, GB/s (links x GT/s x 2 B).
    pub link_gbs: f64,
    /// What crossing to the other socket and back adds to a memory access, ns.
    pub hop_ns: f64,
}

/// Why a profile cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ProfileError {
    /// No profile of that name.
    #[error("unknown profile '{0}' (known: {known}, or a profile file PATH.toml)", known = PROFILE_NAMES.join(", "))]
    Unknown(String),
    /// A parameter is impossible.
    #[error("profile {profile}: {message}")]
    Invalid {
        /// The profile.
        profile: String,
        /// The fields at fault as paths in profile files, the one to change first.
        fields: &'static [&'static str],
        /// What is wrong and how to fix it.
        message: String,
    },
    /// A field set from outside a profile (`--profile-set`, a `profile.FIELD` sweep axis) is unknown or
    /// has an impossible value.
    #[error("profile field `{field}`: {message}")]
    Field {
        /// The field as given.
        field: String,
        /// What is wrong and how to fix it.
        message: String,
    },
    /// A profile file that cannot be read or used.
    #[error(transparent)]
    File(#[from] crate::profile_file::FileError),
}

/// Names accepted by [`Profile::by_name`].
pub const PROFILE_NAMES: &[&str] = &["r640-silver4216", "i9-9960x-enso", "silver4110-xl710"];

/// The sources of built-in profile `name`'s values (empty for any other name).
pub fn sources(name: &str) -> Vec<Source> {
    let parts: &[&[Source]] = match name {
        "r640-silver4216" => &[R640_SOURCES, SKYLAKE_SOURCES, GEN3_SOURCES, MLC_SOURCES, NOISE_SOURCES],
        "i9-9960x-enso" => &[I9_SOURCES, SKYLAKE_SOURCES, GEN3_SOURCES, MLC_SOURCES, NOISE_SOURCES],
        "silver4110-xl710" => &[SILVER4110_SOURCES, SKYLAKE_SOURCES, GEN3_SOURCES, MLC_SOURCES, NOISE_SOURCES],
        _ => &[],
    };
    parts.concat()
}

/// The share of its theoretical peak that the MLC system of [`mlc_curve`] sustained: 225.9 GB/s measured
/// ([HW], the curve's utilisation 1) on two Xeon Platinum 8269CY with six channels each of DDR4-2666
/// ([MLC8269]'s dmidecode; the CPU would take 2933), 2 x 6 x 21.33 =
/// 256.0 GB/s theoretical. The curve's utilisation is of that measured maximum, so a profile's curve
/// starts climbing at the same share of its own theoretical peak.
const MLC_SUSTAINED: f64 = 225.9 / 256.0;

/// How much of the all-reads maximum the MLC system of [`mlc_curve`] sustains when part of the traffic
/// is writes ([MLC8269]'s peak injection bandwidths: 3:1, 2:1 and 1:1 reads to writes, over all reads),
/// by the share of the bytes that go the less common way. A DRAM channel turns its bus around between
/// reads and writes (tWTR, tRTW), so a mix loses time that one direction alone does not; MLC measures
/// no write-majority mix, and rxlab takes the turnarounds, which the minority direction's share bounds,
/// to cost the same either way round.
fn mlc_mix() -> Vec<(f64, f64)> {
    vec![(0.0, 1.0), (0.25, 212_457.8 / 225_097.1), (1.0 / 3.0, 210_628.1 / 225_097.1), (0.5, 199_315.4 / 225_097.1)]
}

/// DRAM loaded latency, Intel MLC on a Cascade Lake Xeon ([HW], "DRAM loaded latency"); the top point
/// is the table's "~260 ns" at full utilisation.
fn mlc_curve() -> Vec<(f64, f64)> {
    vec![
        (0.01, 79.5),
        (0.08, 82.7),
        (0.18, 85.6),
        (0.26, 87.7),
        (0.36, 91.6),
        (0.45, 95.4),
        (0.59, 102.9),
        (0.87, 131.8),
        (1.0, 260.0),
    ]
}

/// Sources of the DRAM values every built-in profile shares.
const MLC_SOURCES: &[Source] = &[
    (
        "dram.sustained",
        "[HW] 225.9 GB/s sustained of 256.0 GB/s theoretical on the MLC system, DDR4-2666 by [MLC8269] (MLC_SUSTAINED)",
    ),
    ("dram.curve", "[HW] DRAM loaded latency table (utilisation, ns), Intel MLC on a Cascade Lake Xeon"),
    ("dram.mix", "[MLC8269] peak bandwidth of 3:1, 2:1 and 1:1 read-write mixes over all reads (mlc_mix)"),
];

/// Skylake-family private caches and LLC latency ([OPT]), and its L3 replacement policy ([AR20]);
/// `llc_size`, `llc_ways` and `slices` give the LLC's size, ways and slice hash ([SLICE]).
fn skylake_cpu(cores: usize, freq_ghz: f64, llc_size: usize, llc_ways: usize, slices: SliceHash) -> CpuParams {
    CpuParams {
        cores,
        freq_ghz,
        l1d: CacheGeom { size: 32 << 10, ways: 8, latency_cycles: 4 },
        l2: CacheGeom { size: 1 << 20, ways: 16, latency_cycles: 14 },
        llc: CacheGeom { size: llc_size, ways: llc_ways, latency_cycles: 60 },
        llc_slices: Some(slices),
        llc_policy: Policy::QlruAdaptive,
        llc_duel_start: DuelStart::Neutral,
        snoop_filter_ways: 0,
        inclusive_ways: 0,
        atomic_cycles: 18,
        transfer_cycles: (50.0 * freq_ghz).round() as u32,
        fill_buffers: 10,
        store_buffer: 56,
        uc_write_ns: 50.0,
        hw_prefetch: true,
        adjacent_prefetch: true,
    }
}

/// Sources of [`skylake_cpu`]'s values.
const SKYLAKE_SOURCES: &[Source] = &[
    ("cpu.l1d", "[OPT] L1D 32 KiB, 8-way, 4 cycles"),
    ("cpu.l2", "[OPT] L2 1 MiB, 16-way, 14 cycles (Skylake Server)"),
    ("cpu.llc.latency_cycles", "[OPT] L3 50-70 cycles: the middle of the range"),
    (
        "cpu.llc_policy",
        "[AR20] the Skylake-family L3 policy: set dueling between QLRU_H11_M1_R0_U0 and QLRU_H11_MR161_R0_U0",
    ),
    (
        "cpu.llc_duel_start",
        "no measurement of a Skylake-SP L3's selectors: set dueling's neutral start, the midpoint (Qureshi \
         et al., ISCA 2007); which runs tip depends on it (docs/model.md, \"The LLC\")",
    ),
    ("cpu.atomic_cycles", "[AGNER] locked RMW about 18 cycles on Skylake"),
    ("cpu.transfer_cycles", "[C2C] about 50 ns core to core, in cycles at this frequency"),
    ("cpu.fill_buffers", "[OPT] ten L1D fill buffers (Sandy Bridge through Skylake)"),
    ("cpu.store_buffer", "[OPT] 56 store buffer entries (Skylake microarchitecture)"),
    (
        "cpu.uc_write_ns",
        "[UCW] back-to-back 8-byte writes to a UC-mapped BAR leave the root port 50-300 ns apart: the \
         least spacing measured",
    ),
    (
        "cpu.hw_prefetch",
        "[OPT] the DCU, IP-stride and L2 streamer prefetchers; on by default (Intel's MSR 0x1A4 disclosure: \
         their disable bits are 0) and no paper's setup turns them off",
    ),
    (
        "cpu.adjacent_prefetch",
        "on, as the hardware is by default (Intel's MSR 0x1A4 disclosure, bit 1; the BIOS's \"Adjacent Cache \
         Line Prefetch\"; no paper says it was turned off), and as the one number the papers give where the \
         I/O working set fits the DDIO ways says ([P2] nicmem Fig. 9): host NAT on 14 cores at ring 32 moves \
         5 GB/s of memory traffic; rxlab's, with the papers' flows in turn and the calibrations made under each \
         setting, moves 5.2 GB/s with the L2 spatial prefetcher and 4.1 without (perf's LLC hit rate there, \
         83 % in the paper, is 69 % with it and 75 % without). With flows drawn at random instead it would \
         give 7.2 and 4.4 GB/s (docs/model.md, \"Prefetchers\")",
    ),
];

/// Outstanding non-posted requests a PCIe function may have: 8-bit tags with Extended Tag Field Enable,
/// which NIC drivers set ([PCISPEC]).
const PCIE_TAGS: usize = 256;

/// The ConnectX-5's PCIe Max Read Request Size as the papers ran it. They followed NVIDIA's DPDK tuning
/// ("configured following NVIDIA's DPDK best performance guidelines", [P1] §6), which sets it to 1 KiB:
/// the DPDK mlx5 guide's performance notes ("it is beneficial to set the PCI max read request parameter
/// to 1K", `setpci ... 68.w=3XXX`) and NVIDIA's DPDK performance reports ("Change PCI MaxReadReq to
/// 1024B for each port of each NIC"). A 1514 B transmit read is then two requests, not three (with
/// pcie-model's default of 512 B, three).
const CX5_MRRS: usize = 1024;

/// Packet-data read requests a ConnectX-5's DMA engines keep in flight per link. No datasheet gives it;
/// the anchor is shRing §2.3 ([P0]): privRing's mean PCIe read latency of 1.45 us "is enough to saturate
/// the DMA engines within the NIC" at the throughput privRing then reaches. By the paper's own relations
/// (Gbps(C) = 1500 B x 8 x 16 x 2.1 GHz / C, 4 % more cycles per doubling of the working set, shRing/8
/// just within the 2061-cycle budget) privRing costs 1.04^3 x 2021 = 2273 cycles and carries 177 Gbps:
/// 14.4 M frames/s of 1514 B over two NICs, two [`CX5_MRRS`] requests each (1024 B and 490 B), so 14.4 M
/// requests/s per NIC, which at 1.45 us each keep 20.9 in flight. Calibrated once from that statement;
/// every read latency and throughput the model then gives is a prediction. (With 512 B requests the same
/// relation gives three requests a frame: 21.6 M requests/s, 31.4 in flight.)
const CX5_READS: usize = 21;

/// Cycles per received packet of DPDK's ice driver and the application loop on the Ensō testbed's
/// 3.1 GHz core, beyond the memory touches rxlab's privRing reports. Calibrated once from Ensō §7.2.1
/// ([P4], Figure 8): "the E810 with DPDK achieves 59 Mpps with a single core" running the artifact's echo
/// server (enso_eval `dpdk_echo.cpp`: an 8192-entry Rx ring, which DPDK 20.11's ice clamps to its 4096
/// maximum, and bursts of 64), 52.5 cycles a packet, where rxlab's echo over privRing so configured runs
/// 91.1 Mpps (34 cycles) with none charged. With 20 the anchor runs 59.4 Mpps (60.4 with 19, 58.4 with
/// 21, 53.7 with 25), its loads hiding L1 hits ([`crate::probe`]), its descriptor reads followed by the
/// IP-stride prefetcher ([`crate::prefetcher`]) and each free reading the mbuf's second cache line
/// ([`ifaces::BufLayout::free_read_offset`]). Every other run of the
/// profile's packetized baseline (Table 1's receive-and-increment, Figure 15's Maglev, more cores) is a
/// prediction; `crates/sim/tests/calibration.rs` checks the anchor.
const E810_PMD_CYCLES: u32 = 20;

/// Receive descriptors the XL710 writes back together: "a full cache line ... could contain 4 packets"
/// (Intel, DPDK commit a08f9cb6, "net/iavf: fix Rx queue interrupt setting", on the 700 series: completed
/// descriptors "are posted to host memory according to the internal descriptor cache policy (in other
/// words when a full cache line is available for write-back)"); with DPDK's 32-byte descriptors, a
/// 128-byte line (`GLPCI_CNF2`'s cache line size is 64 or 128 bytes). [`ifaces::wbpack`].
const XL710_WB_DESCRIPTORS: u32 = 4;

/// How long a partial line of the XL710's write-backs waits: the ITR interval DPDK's i40e PF driver
/// programs, `I40E_QUEUE_ITR_INTERVAL_DEFAULT`, 32 us (drivers/net/i40e/i40e_ethdev.h, 20.11;
/// `__vsi_queues_bind_intr`), whose expiry posts "all leftover completed descriptors" (same commit).
const XL710_WB_TIMER_NS: u64 = 32_000;

/// Receive descriptors the E810 writes back together: "Descriptors will be written back on cache line
/// boundaries" unless the driver forces a write-back (Linux ice, `ice_set_wb_on_itr` in ice_txrx.c), and
/// the E810's PCI cache line is the host's 64 bytes (`lspci` of an E810: "Cache Line Size: 64 bytes"),
/// two of DPDK's 32-byte descriptors. [`ifaces::wbpack`].
const E810_WB_DESCRIPTORS: u32 = 2;

/// How long a partial line of the E810's write-backs waits: DPDK 20.11's ice binds every queue to an
/// interrupt vector at start, polling or not (`ice_dev_start` -> `ice_rxq_intr_setup`), with ITR 0x10 in
/// 2 us units, 32 us (`__vsi_queues_bind_intr`: `GLINT_ITR(0, msix_vect)`), and sets WB_ON_ITR, whose
/// expiry writes the leftovers back (`ice_vsi_enable_queues_intr`: `GLINT_DYN_CTL_WB_ON_ITR_M`).
const E810_WB_TIMER_NS: u64 = 32_000;

/// COREC's testbed frees sent mbufs without reading them: its l3fwd ran on "DPDK v21.11" ([P3] §3.4.3),
/// whose l3fwd asks for `RTE_ETH_TX_OFFLOAD_MBUF_FAST_FREE` whenever the port offers it
/// (examples/l3fwd/main.c), which i40e does, and whose i40e then puts sent mbufs back in bulk without
/// `rte_pktmbuf_prefree_seg` (`i40e_tx_free_bufs`, scalar and vector; read in DPDK's git, v21.11).
const XL710_TX_FAST_FREE: bool = true;

/// What a DMA read request the LLC cannot serve costs beyond DRAM's loaded latency on these Skylake-SP
/// hosts (every profile here is one; the I/O path is the CPU's, not the NIC's). pcie-bench measured about
/// 50 ns more for a cold 64 B read than a warm one on an idle host ([HW]); under the papers' load the
/// anchor is shRing §5.2 ([P0]): with DDIO disabled, so that every DMA is served by DRAM, NAT and LB on
/// 16 cores with 1 Ki privRing rings "achieve only 150 Gbps". Calibrated once, on LB at that
/// configuration with [`CX5_MRRS`] requests and [`CX5_READS`] slots (149.05 Gbps, ten seeds; 137.8 with
/// 1010 ns and 161.5 with 700, seed 1); every other latency and throughput is a prediction (NAT at the
/// same configuration, 149.57 Gbps, and privRing's mean read latency in shRing Fig. 2, 1.61 us against
/// the paper's 1.45, among them).
const SKX_READ_MISS_NS: f64 = 850.0;

/// A typical core of a Linux server as sysjitter measures it ([JIT]): at each quantile the median of
/// the four cores measured (one of them, likely the one taking device interrupts, has a five times
/// longer tail: 184 us at p99.99, 347 us longest). The papers' servers isolate their cores from the
/// scheduler ([P0] §5), which removes scheduler noise but not ticks, interrupts or SMIs: the nicmem
/// artifact's README gives their FastClick kernel's boot parameters as 1 GiB hugepages and `isolcpus`
/// alone (no `nohz_full`), so the 1 kHz tick stays on the workers' cores. No paper gives its servers'
/// noise.
fn linux_noise() -> NoiseParams {
    NoiseParams {
        rate_hz: 1001.9,
        quantiles: vec![
            (0.0, 1316.0),
            (0.5, 1360.0),
            (0.9, 1404.5),
            (0.99, 2040.0),
            (0.999, 10_334.5),
            (0.9999, 37_718.0),
            (1.0, 47_531.5),
        ],
    }
}

/// The core of the same server that has the long tail ([JIT] core 2: five times the others' longest
/// interruptions), taken as the one that also runs the operating system's housekeeping. The papers'
/// servers run with hyperthreading off and their CPUs isolated from the scheduler ([P0] §5), and their
/// NFs run on every core of the 16-core CPU (rxBisect §3.1: "LB uses all cores of a 16-core CPU"), so
/// one worker's core also carries the kernel's own work. (nicmem's artifact, `fig9/test.sh`, keeps cores
/// 0 and 1 for the kernel with DPDK's core mask `0xfffffffc`, which is why its runs stop at 14 cores.)
fn housekeeping_noise() -> NoiseParams {
    NoiseParams {
        rate_hz: 1002.438,
        quantiles: vec![
            (0.0, 1299.0),
            (0.5, 1329.0),
            (0.9, 1357.0),
            (0.99, 2392.0),
            (0.999, 15_604.0),
            (0.9999, 184_305.0),
            (1.0, 347_097.0),
        ],
    }
}

/// Sources of [`linux_noise`]'s and [`housekeeping_noise`]'s values.
const NOISE_SOURCES: &[Source] = &[
    ("noise.rate_hz", "[JIT] int_n_per_sec, median of 1001.3, 1014.3, 1002.4, 1001.3"),
    (
        "noise.quantiles",
        "[JIT] int_min, int_median, int_90, int_99, int_999, int_9999 and int_max (ns), each the median over \
         the four cores",
    ),
    ("housekeeping.rate_hz", "[JIT] int_n_per_sec of core 2, the core with the long tail"),
    (
        "housekeeping.quantiles",
        "[JIT] int_min, int_median, int_90, int_99, int_999, int_9999 and int_max (ns) of core 2",
    ),
];

/// PCIe Gen3 with pcie-model's defaults (MPS 256, MRRS 512) and pcie-bench's DMA read latency, for a NIC
/// keeping `max_reads` read requests in flight per link.
fn gen3(lanes: u32, links: u32, max_reads: usize) -> PcieParams {
    PcieParams {
        gts: 8.0,
        lanes,
        links,
        encoding: 128.0 / 130.0,
        mps: 256,
        mrrs: 512,
        ack_limit: if lanes >= 16 { 168.0 } else { 203.0 },
        fc_limit: if lanes >= 16 { 168.0 } else { 203.0 },
        read_base_ns: 540.0,
        read_per_byte_ns: 0.29,
        read_miss_ns: SKX_READ_MISS_NS,
        max_reads,
    }
}

/// Sources of [`gen3`]'s values.
const GEN3_SOURCES: &[Source] = &[
    ("pcie.gts", "[HW] Gen3 8 GT/s"),
    ("pcie.encoding", "[HW] Gen3-5 128b/130b"),
    ("pcie.mps", "[HW] pcie-model's MPS 256"),
    ("pcie.mrrs", "[HW] pcie-model's MRRS 512"),
    (
        "pcie.ack_limit",
        "pcie-model model/pcie.py Ack_Limits, gen3, MPS 256: 168 B for x16, 203 B for x8 (PCIe 5.0 Table 3-7)",
    ),
    (
        "pcie.fc_limit",
        "pcie-model model/pcie.py FC_Guide, gen3, MPS 256: 168 B for x16, 203 B for x8 (PCIe 5.0 Table 2-46)",
    ),
    ("pcie.read_base_ns", "[HW] pcie-bench DMA read latency, about 540 ns + 0.29 ns/B"),
    ("pcie.read_per_byte_ns", "[HW] pcie-bench DMA read latency, about 540 ns + 0.29 ns/B"),
    (
        "pcie.read_miss_ns",
        "calibrated once on [P0] §5.2 (DDIO off, LB on 16 cores with 1 Ki privRing rings reaches 150 Gbps): \
         SKX_READ_MISS_NS in sim/src/profile.rs",
    ),
];

/// Sources of [`Profile::r640_silver4216`]'s own values.
const R640_SOURCES: &[Source] = &[
    (
        "cpu",
        "[P0] [P1] [P2] 16 cores at 2.1 GHz, 22 MiB 11-way LLC; Turbo Boost off. 22 MiB is 16 slices of \
         1.375 MiB, one per core: the Xeon Scalable 16-slice hash [SLICE]",
    ),
    ("ddio_ways", "[P0] \"2 DDIO LLC ways\" (default), [HW] IIO_LLC_WAYS = 0x600"),
    ("dram.peak_gbs", "[HW] DDR4-2400 (the CPU's limit), 4 channels populated (4 x 16 GiB): 76.8 GB/s"),
    ("pcie", "[P0] two ConnectX-5, each on PCIe Gen3 x16 [CX5]"),
    ("pcie.mrrs", "1 KiB, as NVIDIA's DPDK tuning sets it, which [P1] §6 followed: CX5_MRRS in sim/src/profile.rs"),
    (
        "pcie.max_reads",
        "calibrated once on [P0] §2.3 (privRing's 1.45 us mean read latency saturates the NIC's DMA engines): \
         CX5_READS in sim/src/profile.rs",
    ),
    ("nic.ports", "[P0] two 100 GbE NICs, 200 Gbps offered"),
    (
        "remote_socket.link_gbs",
        "[P1] \"dual 2.1 GHz Xeon Silver 4216 CPUs\"; Intel ARK, Xeon Silver 4216: 2 UPI links at 9.6 GT/s, \
         each moving 2 B a transfer each way (NASA HECC, \"Cascade Lake Processors\": a 10.4 GT/s link, 20.8 \
         GB/s): 38.4 GB/s each way, the links' raw rate (no flit overhead)",
    ),
    (
        "remote_socket.hop_ns",
        "[HW] pcie-bench: device and memory on different sockets adds about 110 ns to a DMA read, one round \
         trip across the links; no core's remote access on this machine is published",
    ),
    ("nic.port_gbps", "[P0] two 100 GbE NICs, 200 Gbps offered"),
    ("nic.mpps", "[CX5] 200 Mpps per adapter, two adapters"),
    ("nic.rx_buffer", "[CX5] port buffer 262016 B per port, two ports"),
    ("nic.prefetch", "ifaces PrefetchParams default (DPDK RX_PTHRESH 8)"),
    ("nic.memory", "[P2] ConnectX-5 exposes 256 KiB of on-NIC memory to software (nicmem §5)"),
    ("nic.software", "a hardware NIC: its DMA writes go through DDIO, not a core's stores"),
    ("nic.cqe_bytes", "ConnectX CQEs are 64 B (Linux mlx5 `struct mlx5_cqe64`)"),
    ("nic.wb_descriptors", "ConnectX writes each CQE on its own (no write-back packing)"),
    ("nic.wb_timer_ns", "no write-back packing"),
    (
        "nic.tx_fast_free",
        "off: nicmem's DPDK is 20.08 ([P2] §5), whose mlx5 reads every mbuf it frees, and the papers' NFs run \
         in FastClick, which does not ask for fast frees (lib/dpdkdevice.cc); [P0] and [P1] name no version",
    ),
    (
        "nic.rx_refill",
        "slot, DPDK mlx5's scalar path (`mlx5_rx_burst`) and the papers' listings; the papers' FastClick \
         would get the vector path (`mlx5`: bulk once min(64, n/4) slots are empty), which no paper says it \
         ran (docs/model.md, \"The driver's refill\"), so `mlx5` is opt-in (--rx-refill)",
    ),
    (
        "nic.cqe_compression",
        "DPDK mlx5 guide, rxq_cqe_comp_en: enabled by default; the NIC compresses when it detects PCI back \
         pressure (DPDK commit \"net/mlx5: handle Rx CQE compression\"). nicmem's artifact turns it off",
    ),
    (
        "nic.reta_entries",
        "DPDK mlx5 (`mlx5_dev_configure_rss_reta`): a queue count that is not a power of two gets the device's \
         largest table, `ind_table_max_size`, which the PMD caps at 512 (`ETH_RSS_RETA_SIZE_512`), filled \
         round-robin; a power of two gets one entry per queue, which steers as 512 round-robin entries do",
    ),
    (
        "nic.pmd_cycles",
        "none charged apart: the FastClick graphs' work (apps fastclick.rs), calibrated on this profile with \
         none, carries the mlx5 driver's instructions",
    ),
];

/// Sources of [`Profile::i9_9960x_enso`]'s own values.
const I9_SOURCES: &[Source] = &[
    (
        "cpu",
        "[P4] §7 testbed: 16 cores at 3.1 GHz, 22 MB LLC (11-way, as every Skylake-X L3): 16 slices of \
         1.375 MiB. Skylake-X is the Skylake-SP die; McCalpin measured the Xeons, so their 16-slice hash is \
         the closest published [SLICE]",
    ),
    ("ddio_ways", "[HW] DDIO's default of 2 ways"),
    ("dram.peak_gbs", "Intel ARK, Core i9-9960X: 4 channels DDR4-2666, 85.3 GB/s"),
    ("pcie", "[P4] Stratix 10 MX FPGA NIC on PCIe 3.0 x16"),
    ("pcie.max_reads", "no figure for the FPGA NIC's DMA read concurrency, so the PCIe tag limit [PCISPEC] stands in"),
    ("nic.ports", "[P4] 100 Gb Ethernet"),
    ("nic.port_gbps", "[P4] 100 Gb Ethernet"),
    ("nic.mpps", "[P4] §6 \"most of the NIC design runs at 250 MHz\", one packet per cycle"),
    ("nic.rx_buffer", "no figure for the FPGA NIC; the ConnectX-5 port buffer [CX5] stands in"),
    ("nic.prefetch", "ifaces PrefetchParams default (DPDK RX_PTHRESH 8)"),
    ("nic.memory", "no on-NIC memory exposed in paper 004"),
    ("nic.software", "a hardware NIC: its DMA writes go through DDIO, not a core's stores"),
    (
        "nic.cqe_bytes",
        "[P4] §7: the packetized baseline runs on an Intel E810 with DPDK, whose ice driver writes 32-byte \
         receive descriptors back (its default; 16-byte only at build time); Ensō's own notifications are \
         its format",
    ),
    ("nic.cqe_compression", "Intel NICs have no CQE compression"),
    (
        "nic.wb_descriptors",
        "a 64-byte line of 32-byte descriptors (Linux ice's `ice_set_wb_on_itr`: \"written back on cache \
         line boundaries\"; an E810's PCI cache line size, 64 bytes): E810_WB_DESCRIPTORS in sim/src/profile.rs",
    ),
    (
        "nic.wb_timer_ns",
        "DPDK 20.11 ice's ITR of 0x10 x 2 us with WB_ON_ITR set at start (`__vsi_queues_bind_intr`, \
         `ice_vsi_enable_queues_intr`): E810_WB_TIMER_NS in sim/src/profile.rs",
    ),
    (
        "nic.tx_fast_free",
        "off: Ensō's artifact runs DPDK 20.11, and ice's vector `ice_tx_free_bufs` reads every mbuf it \
         frees with or without fast free (20.11 and 21.11)",
    ),
    (
        "nic.rx_refill",
        "slot, as DPDK's scalar paths; the E810's DPDK ice vector path (`ice`: 64 at a time once more \
         than 64 slots are empty) is opt-in (--rx-refill; docs/model.md, \"The driver's refill\")",
    ),
    (
        "nic.reta_entries",
        "Ensō's runs take 1 to 4 cores, which every power-of-two table steers alike; the Microsoft RSS \
         specification's 128 entries stand in",
    ),
    (
        "nic.pmd_cycles",
        "calibrated once on [P4] §7.2.1, the E810's 59 Mpps with one core (the artifact's echo, 4096-entry \
         ring, bursts of 64): E810_PMD_CYCLES in sim/src/profile.rs",
    ),
];

/// Sources of [`Profile::silver4110_xl710`]'s own values.
const SILVER4110_SOURCES: &[Source] = &[
    (
        "cpu",
        "[P3] Silver 4110 at 2.1 GHz; Intel ARK: 8 cores, 11 MiB L3 (11-way, 1.375 MiB/core), so 8 slices: \
         no Skylake-SP 8-slice hash is published; the 8-core one of Maurice et al. is the closest [SLICE]",
    ),
    ("ddio_ways", "[HW] DDIO's default of 2 ways"),
    ("dram.peak_gbs", "[HW] Silver 4110, DDR4-2400, 6 channels: 115.2 GB/s theoretical"),
    ("pcie", "Intel XL710 datasheet: PCIe 3.0 x8"),
    (
        "pcie.max_reads",
        "no figure at hand for the XL710's DMA read concurrency, so the PCIe tag limit [PCISPEC] stands in",
    ),
    (
        "remote_socket.link_gbs",
        "[P3] §4.1 runs the NF on \"a NIC-local NUMA node and a remote one\"; Intel ARK, Xeon Silver 4110: 2 UPI \
         links at 9.6 GT/s, 2 B a transfer each way: 38.4 GB/s each way, the links' raw rate",
    ),
    (
        "remote_socket.hop_ns",
        "[HW] pcie-bench: device and memory on different sockets adds about 110 ns to a DMA read, one round \
         trip across the links",
    ),
    ("nic.ports", "[P3] one 40 Gbps XL710 port"),
    ("nic.port_gbps", "[P3] one 40 Gbps XL710 port"),
    ("nic.mpps", "[P3] §4.1 \"the NIC maximum throughput is around 37 Mpps as stated in the Intel XL710 datasheet\""),
    ("nic.rx_buffer", "no XL710 figure at hand; the ConnectX-5 port buffer [CX5] stands in"),
    ("nic.prefetch", "ifaces PrefetchParams default (DPDK i40e RX_PTHRESH 8)"),
    ("nic.memory", "the XL710 exposes no on-NIC memory"),
    ("nic.software", "a hardware NIC: its DMA writes go through DDIO, not a core's stores"),
    (
        "nic.cqe_bytes",
        "Intel XL710 datasheet §8.3.2.2: 32-byte receive descriptor write-back (DPDK i40e's default; \
         16-byte only at build time)",
    ),
    ("nic.cqe_compression", "Intel NICs have no CQE compression"),
    (
        "nic.wb_descriptors",
        "Intel, DPDK commit a08f9cb6 on the 700 series: a full cache line of write-backs \"could contain 4 \
         packets\": XL710_WB_DESCRIPTORS in sim/src/profile.rs",
    ),
    (
        "nic.wb_timer_ns",
        "DPDK i40e's PF ITR, I40E_QUEUE_ITR_INTERVAL_DEFAULT (32 us), whose expiry posts the leftovers: \
         XL710_WB_TIMER_NS in sim/src/profile.rs",
    ),
    (
        "nic.tx_fast_free",
        "[P3] §3.4.3: DPDK v21.11, whose l3fwd asks for fast frees and whose i40e honours it: \
         XL710_TX_FAST_FREE in sim/src/profile.rs",
    ),
    (
        "nic.rx_refill",
        "slot, as DPDK's scalar paths; DPDK i40e's vector path (`i40e`: 32 at a time once more than 32 \
         slots are empty) is opt-in (--rx-refill; docs/model.md, \"The driver's refill\")",
    ),
    (
        "nic.reta_entries",
        "DPDK i40e fills the PF's whole lookup table round-robin (`i40e_pf_config_rss`, \
         `rss_table_size`): 512 entries on the XL710 (128 PFQF_HLUT registers of 4 entries)",
    ),
    (
        "nic.pmd_cycles",
        "none charged apart: l3fwd's DPDK_WORK (apps l3fwd.rs), calibrated on this profile with none, carries \
         the i40e driver's instructions",
    ),
];

impl Profile {
    /// The built-in profile called `name`.
    pub fn by_name(name: &str) -> Result<Profile, ProfileError> {
        match name {
            "r640-silver4216" => Ok(Profile::r640_silver4216()),
            "i9-9960x-enso" => Ok(Profile::i9_9960x_enso()),
            "silver4110-xl710" => Ok(Profile::silver4110_xl710()),
            other => Err(ProfileError::Unknown(other.to_string())),
        }
    }

    /// The profile `spec` names: a profile file if it ends in `.toml` ([`crate::profile_file::load`]),
    /// else a built-in profile.
    pub fn named_or_file(spec: &str) -> Result<Profile, ProfileError> {
        if spec.ends_with(".toml") {
            Ok(crate::profile_file::load(std::path::Path::new(spec))?)
        } else {
            Profile::by_name(spec)
        }
    }

    /// The interruptions of worker `core` in a run of `workers` workers: the housekeeping core's for core
    /// 0 when the workers take every core ([`Profile::housekeeping`]), else the profile's `noise`.
    pub fn core_noise(&self, core: usize, workers: usize) -> &NoiseParams {
        match &self.housekeeping {
            Some(h) if core == 0 && workers == self.cpu.cores => h,
            _ => &self.noise,
        }
    }

    /// Dell R640, Xeon Silver 4216, two 100 GbE ConnectX-5 (papers 000, 001, 002).
    pub fn r640_silver4216() -> Profile {
        Profile {
            name: "r640-silver4216".into(),
            cpu: skylake_cpu(16, 2.1, 22 << 20, 11, SKX_16),
            ddio_ways: 2,
            dram: DramParams { peak_gbs: 76.8, sustained: MLC_SUSTAINED, curve: mlc_curve(), mix: mlc_mix() },
            pcie: PcieParams { mrrs: CX5_MRRS, ..gen3(16, 2, CX5_READS) },
            nic: NicParams {
                ports: 2,
                port_gbps: 100.0,
                mpps: 400.0,
                rx_buffer: 2 * 262_016,
                prefetch: 8,
                memory: 256 << 10,
                software: false,
                cqe_bytes: 64,
                cqe_compression: true,
                reta_entries: 512,
                pmd_cycles: 0,
                wb_descriptors: 1,
                wb_timer_ns: 0,
                tx_fast_free: false,
                rx_refill: ifaces::RxRefill::PerSlot,
            },
            noise: linux_noise(),
            housekeeping: Some(housekeeping_noise()),
            remote_socket: Some(RemoteSocket { link_gbs: 2.0 * 9.6 * 2.0, hop_ns: 110.0 }),
        }
    }

    /// Core i9-9960X with the Ensō FPGA NIC (paper 004).
    pub fn i9_9960x_enso() -> Profile {
        Profile {
            name: "i9-9960x-enso".into(),
            cpu: skylake_cpu(16, 3.1, 22 << 20, 11, SKX_16),
            ddio_ways: 2,
            dram: DramParams { peak_gbs: 85.3, sustained: MLC_SUSTAINED, curve: mlc_curve(), mix: mlc_mix() },
            pcie: gen3(16, 1, PCIE_TAGS),
            nic: NicParams {
                ports: 1,
                port_gbps: 100.0,
                mpps: 250.0,
                rx_buffer: 262_016,
                prefetch: 8,
                memory: 0,
                software: false,
                cqe_bytes: 32,
                cqe_compression: false,
                reta_entries: 128,
                pmd_cycles: E810_PMD_CYCLES,
                wb_descriptors: E810_WB_DESCRIPTORS,
                wb_timer_ns: E810_WB_TIMER_NS,
                tx_fast_free: false,
                rx_refill: ifaces::RxRefill::PerSlot,
            },
            noise: linux_noise(),
            housekeeping: Some(housekeeping_noise()),
            remote_socket: None,
        }
    }

    /// Xeon Silver 4110 with an Intel XL710 40 GbE NIC (paper 003).
    pub fn silver4110_xl710() -> Profile {
        Profile {
            name: "silver4110-xl710".into(),
            cpu: skylake_cpu(8, 2.1, 11 << 20, 11, XOR_8),
            ddio_ways: 2,
            dram: DramParams { peak_gbs: 115.2, sustained: MLC_SUSTAINED, curve: mlc_curve(), mix: mlc_mix() },
            pcie: gen3(8, 1, PCIE_TAGS),
            nic: NicParams {
                ports: 1,
                port_gbps: 40.0,
                mpps: 37.0,
                rx_buffer: 262_016,
                prefetch: 8,
                memory: 0,
                software: false,
                cqe_bytes: 32,
                cqe_compression: false,
                reta_entries: 512,
                pmd_cycles: 0,
                wb_descriptors: XL710_WB_DESCRIPTORS,
                wb_timer_ns: XL710_WB_TIMER_NS,
                tx_fast_free: XL710_TX_FAST_FREE,
                rx_refill: ifaces::RxRefill::PerSlot,
            },
            noise: linux_noise(),
            housekeeping: Some(housekeeping_noise()),
            remote_socket: Some(RemoteSocket { link_gbs: 2.0 * 9.6 * 2.0, hop_ns: 110.0 }),
        }
    }

    /// Check that the parameters are physically possible and fit the models' representation; an error
    /// names the fields at fault.
    pub fn validate(&self) -> Result<(), ProfileError> {
        let bad = |fields: &'static [&'static str], message: String| {
            Err(ProfileError::Invalid { profile: self.name.clone(), fields, message })
        };
        let levels: [(&str, CacheGeom, &'static [&'static str]); 3] = [
            ("L1d", self.cpu.l1d, &["cpu.l1d.size", "cpu.l1d.ways"]),
            ("L2", self.cpu.l2, &["cpu.l2.size", "cpu.l2.ways"]),
            ("LLC", self.cpu.llc, &["cpu.llc.size", "cpu.llc.ways"]),
        ];
        for (level, g, fields) in levels {
            if g.ways == 0 || g.ways > crate::cache::MAX_WAYS {
                return bad(
                    &fields[1..],
                    format!("{level} has {} ways; the cache model supports 1..={}", g.ways, crate::cache::MAX_WAYS),
                );
            }
            if g.size == 0 || g.size % (LINE * g.ways) != 0 {
                return bad(
                    fields,
                    format!(
                        "{level} of {} B in {} ways is not a whole number of sets of {} x 64 B lines; use a \
                         multiple of {} B",
                        g.size,
                        g.ways,
                        g.ways,
                        LINE * g.ways
                    ),
                );
            }
            // A sliced LLC needs a power of two per slice (below), not in all.
            let sliced = level == "LLC" && self.cpu.llc_slices.is_some();
            if !sliced && !g.sets().is_power_of_two() {
                return bad(
                    fields,
                    format!(
                        "{level} of {} B in {} ways has {} sets; the model indexes sets by address bits, so \
                         give a power of two ({} or {} sets)",
                        g.size,
                        g.ways,
                        g.sets(),
                        1usize << g.sets().ilog2(),
                        2usize << g.sets().ilog2()
                    ),
                );
            }
        }
        if let Some(h) = self.cpu.llc_slices {
            let (g, sets) = (self.cpu.llc, self.cpu.llc.sets());
            if sets % h.slices != 0 || !(sets / h.slices).is_power_of_two() {
                let other = HASHES
                    .iter()
                    .find(|o| o.slices * SLICE_SETS == sets)
                    .map(|o| {
                        format!(
                            ", or for {} slices of {SLICE_SETS} sets name their hash, llc_slices = \"{}\"",
                            o.slices, o.name
                        )
                    })
                    .unwrap_or_default();
                return bad(
                    &["cpu.llc.size", "cpu.llc.ways", "cpu.llc_slices"],
                    format!(
                        "LLC of {} B in {} ways has {sets} sets, which the {} slices of the {} hash cannot share with \
                         a power of two in each; a Xeon Scalable slice has {SLICE_SETS} sets, so give size = {} ({} x \
                         {SLICE_SETS} sets of {} ways){other}",
                        g.size,
                        g.ways,
                        h.slices,
                        h.name,
                        h.slices * SLICE_SETS * g.ways * LINE,
                        h.slices,
                        g.ways
                    ),
                );
            }
        }
        if self.cpu.snoop_filter_ways > crate::cache::MAX_WAYS {
            return bad(
                &["cpu.snoop_filter_ways"],
                format!(
                    "a snoop filter of {} ways; the cache model supports 1..={} (0: an inclusive LLC, no filter)",
                    self.cpu.snoop_filter_ways,
                    crate::cache::MAX_WAYS
                ),
            );
        }
        if self.cpu.inclusive_ways > 0
            && (self.cpu.snoop_filter_ways == 0 || self.cpu.inclusive_ways > self.cpu.llc.ways)
        {
            return bad(
                &["cpu.inclusive_ways", "cpu.snoop_filter_ways"],
                format!(
                    "{} inclusive ways: they belong to a non-inclusive LLC (cpu.snoop_filter_ways > 0) and \
                     number at most its {} ways",
                    self.cpu.inclusive_ways, self.cpu.llc.ways
                ),
            );
        }
        if self.ddio_ways > self.cpu.llc.ways {
            return bad(
                &["ddio_ways", "cpu.llc.ways"],
                format!(
                    "{} DDIO ways exceed the LLC's {} ways; use 0..={} (0 turns DDIO off)",
                    self.ddio_ways, self.cpu.llc.ways, self.cpu.llc.ways
                ),
            );
        }
        if self.cpu.cores == 0 || self.cpu.cores > 32 {
            return bad(&["cpu.cores"], format!("{} cores; the model supports 1..=32", self.cpu.cores));
        }
        if !(self.cpu.freq_ghz.is_finite() && self.cpu.freq_ghz > 0.0) {
            return bad(&["cpu.freq_ghz"], format!("core frequency {} GHz must be positive", self.cpu.freq_ghz));
        }
        if self.cpu.store_buffer == 0 {
            return bad(&["cpu.store_buffer"], "a store buffer of 0 entries: give at least 1".to_string());
        }
        if !(self.cpu.uc_write_ns.is_finite() && self.cpu.uc_write_ns >= 0.0) {
            return bad(
                &["cpu.uc_write_ns"],
                format!("uncached stores {} ns apart: give 0 or more", self.cpu.uc_write_ns),
            );
        }
        if let Some(r) = &self.remote_socket {
            if !(r.link_gbs.is_finite() && r.link_gbs > 0.0) {
                return bad(&["remote_socket.link_gbs"], format!("links of {} GB/s: give a positive rate", r.link_gbs));
            }
            if !(r.hop_ns.is_finite() && r.hop_ns >= 0.0) {
                return bad(&["remote_socket.hop_ns"], format!("a hop of {} ns: give 0 or more", r.hop_ns));
            }
        }
        if !(self.dram.peak_gbs.is_finite() && self.dram.peak_gbs > 0.0) {
            return bad(&["dram.peak_gbs"], "DRAM needs a positive peak bandwidth".into());
        }
        if !(self.dram.sustained > 0.0 && self.dram.sustained <= 1.0) {
            return bad(
                &["dram.sustained"],
                format!("DRAM sustains {} of its peak; give a share in (0, 1]", self.dram.sustained),
            );
        }
        if let Some(message) = curve_fault(&self.dram.curve) {
            return bad(&["dram.curve"], message);
        }
        if let Some(message) = mix_fault(&self.dram.mix) {
            return bad(&["dram.mix"], message);
        }
        if self.pcie.max_reads == 0 || self.pcie.links == 0 || self.pcie.lanes == 0 {
            return bad(
                &["pcie.max_reads", "pcie.links", "pcie.lanes"],
                "PCIe needs at least one link, one lane and one outstanding read".into(),
            );
        }
        if let Err(e) = self.noise.validate() {
            return bad(&["noise.rate_hz", "noise.quantiles"], e);
        }
        if let Some(Err(e)) = self.housekeeping.as_ref().map(NoiseParams::validate) {
            return bad(&["housekeeping.rate_hz", "housekeeping.quantiles"], e);
        }
        if let Err(message) = self.nic.cq_format(None) {
            return bad(&["nic.cqe_bytes", "nic.cqe_compression"], message);
        }
        if self.nic.mpps <= 0.0 || self.nic.port_gbps <= 0.0 || self.nic.ports == 0 {
            return bad(
                &["nic.mpps", "nic.port_gbps", "nic.ports"],
                "the NIC needs a positive packet rate and at least one port".into(),
            );
        }
        Ok(())
    }

    /// Picoseconds per core cycle.
    pub fn ps_per_cycle(&self) -> f64 {
        1000.0 / self.cpu.freq_ghz
    }
}

/// What is wrong with a DRAM loaded-latency curve, if anything: it needs points of increasing
/// utilisation, above 0, whose latency never falls.
fn curve_fault(curve: &[(f64, f64)]) -> Option<String> {
    if curve.is_empty() {
        return Some("DRAM needs a loaded-latency curve of [utilisation, ns] points".into());
    }
    if let Some((u, ns)) = curve.iter().find(|(u, ns)| !(u.is_finite() && *u > 0.0 && ns.is_finite() && *ns > 0.0)) {
        return Some(format!("the latency curve's point [{u}, {ns}] needs a positive utilisation and latency"));
    }
    curve.windows(2).find(|w| w[1].0 <= w[0].0 || w[1].1 < w[0].1).map(|w| {
        format!(
            "the latency curve goes from [{}, {}] to [{}, {}]; utilisation must increase and latency never fall",
            w[0].0, w[0].1, w[1].0, w[1].1
        )
    })
}

/// What is wrong with a read-write mix table, if anything: shares of the minority direction in [0, 0.5],
/// increasing, and maxima in (0, 1].
fn mix_fault(mix: &[(f64, f64)]) -> Option<String> {
    if let Some((m, f)) = mix.iter().find(|(m, f)| !((0.0..=0.5).contains(m) && *f > 0.0 && *f <= 1.0)) {
        return Some(format!(
            "the read-write mix point [{m}, {f}] needs a minority share in [0, 0.5] and a share of the \
             all-reads maximum in (0, 1]"
        ));
    }
    mix.windows(2)
        .find(|w| w[1].0 <= w[0].0)
        .map(|w| format!("the read-write mix goes from share {} to {}; shares must increase", w[0].0, w[1].0))
}

impl fmt::Display for Profile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let c = &self.cpu;
        write!(
            f,
            "{}: {} cores at {} GHz, LLC {} MiB {}-way{}, {} ({} DDIO ways), DRAM {} GB/s, PCIe Gen{} x{} x {}, {} x {} GbE",
            self.name,
            c.cores,
            c.freq_ghz,
            c.llc.size as f64 / f64::from(1 << 20),
            c.llc.ways,
            c.llc_slices.map(|h| format!(" in {} slices ({} hash)", h.slices, h.name)).unwrap_or_default(),
            c.llc_policy,
            self.ddio_ways,
            self.dram.peak_gbs,
            (self.pcie.gts / 2.5).log2().round() as u32 + 1,
            self.pcie.lanes,
            self.pcie.links,
            self.nic.ports,
            self.nic.port_gbps
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_caches_keep_a_power_of_two_number_of_sets() {
        let g = CacheGeom::of_host((480 << 20, 16), 50);
        assert_eq!((g.size, g.ways, g.sets()), (256 << 20, 16, 1 << 18));
        let g = CacheGeom::of_host((22 << 20, 11), 50);
        assert_eq!(g.size, 22 << 20, "a power-of-two set count is kept as it is");
    }

    #[test]
    fn named_profiles_are_valid_and_unknown_names_list_the_known_ones() {
        for name in PROFILE_NAMES {
            let p = Profile::by_name(name).unwrap();
            p.validate().unwrap();
            assert_eq!(p.name, *name);
        }
        let e = Profile::by_name("r650").unwrap_err().to_string();
        assert!(e.contains("r640-silver4216") && e.contains("PATH.toml"), "{e}");
        let mut p = Profile::r640_silver4216();
        p.ddio_ways = 12;
        assert!(p.validate().unwrap_err().to_string().contains("exceed the LLC's 11 ways"));
    }

    #[test]
    fn a_sliced_llc_needs_a_power_of_two_sets_per_slice_of_its_hash() {
        // A Xeon Gold 6140's 24.75 MiB in 11 ways, 18 x 2048 sets, with the 16-slice hash: refused,
        // naming both counts and the hash that fits.
        let mut p = Profile::r640_silver4216();
        p.cpu.llc.size = 18 * 2048 * 11 * LINE;
        let e = p.validate().unwrap_err().to_string();
        assert!(e.contains("36864 sets") && e.contains("16 slices of the skx-16 hash"), "{e}");
        assert!(e.contains("size = 23068672 (16 x 2048 sets") && e.contains("llc_slices = \"skx-18\""), "{e}");
        p.cpu.llc_slices = Some(crate::slices::SKX_18);
        p.validate().unwrap();
        // The 20-slice hash on them: the size for 20 slices, or the 18-slice hash.
        p.cpu.llc_slices = Some(crate::slices::SKX_20);
        let e = p.validate().unwrap_err().to_string();
        assert!(e.contains("20 slices of the skx-20 hash") && e.contains("size = 28835840"), "{e}");
        assert!(e.contains("llc_slices = \"skx-18\""), "{e}");
        // Without a hash the set count must be a power of two.
        p.cpu.llc_slices = None;
        assert!(p.validate().unwrap_err().to_string().contains("give a power of two (32768 or 65536 sets)"));
    }

    #[test]
    fn a_read_write_mix_table_is_checked() {
        let mut p = Profile::r640_silver4216();
        p.dram.mix = vec![(0.0, 1.0), (0.6, 0.9)];
        assert!(p.validate().unwrap_err().to_string().contains("minority share in [0, 0.5]"));
        p.dram.mix = vec![(0.25, 0.9), (0.25, 0.8)];
        assert!(p.validate().unwrap_err().to_string().contains("shares must increase"));
        p.dram.mix = vec![(0.5, 1.2)];
        assert!(p.validate().is_err());
        p.dram.mix.clear();
        p.validate().unwrap();
    }

    #[test]
    fn write_back_packing_is_intels_and_checked() {
        let xl710 = Profile::silver4110_xl710();
        let packing = ifaces::wbpack::WbPacking { per_write: 4, timer_ns: 32_000 };
        assert_eq!(xl710.nic.cq_format(None), Ok(ifaces::cqring::CqFormat::Wb32 { packing }));
        let mut p = Profile::r640_silver4216();
        p.nic.wb_descriptors = 4;
        p.nic.wb_timer_ns = 32_000;
        assert!(p.validate().unwrap_err().to_string().contains("only Intel descriptor write-back"));
        let mut p = xl710.clone();
        p.nic.wb_descriptors = 3;
        assert!(p.validate().unwrap_err().to_string().contains("power of two"));
        p.nic.wb_descriptors = 4;
        p.nic.wb_timer_ns = 0;
        assert!(p.validate().unwrap_err().to_string().contains("needs a timer"));
    }

    #[test]
    fn r640_matches_the_papers() {
        let p = Profile::r640_silver4216();
        assert_eq!(p.cpu.llc.sets(), 32768);
        assert_eq!(p.cpu.cores, 16);
        assert_eq!(p.cpu.transfer_cycles, 105);
    }
}
