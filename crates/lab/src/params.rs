//! The parameters of one run, one definition for every way to give them: the flags of `rxlab run`, the
//! `[run]` table and `[[case]]` entries of an experiment file, sweep axes, and the parameter columns of
//! `results.csv` all use these names (flags with `-`, keys with `_`).
//!
//! Every field is optional: a value left out falls back to the layer below (flags over a case over
//! `[run]` over [`Params::defaults`]), which [`Params::overlay`] implements once for all fields.

use anyhow::{Context, Result};
use clap::{Args, ValueEnum};
use serde::{Deserialize, Deserializer, Serialize};
use std::fmt;
use std::path::PathBuf;

/// Which engine drives the design.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Engine {
    /// Real threads on this machine: a software NIC thread and pinned workers.
    Live,
    /// The deterministic simulation of a whole server (machine profiles).
    Sim,
}

/// Arrival process of the simulator.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Arrivals {
    /// The generator's own send times.
    Paced,
    /// Poisson arrivals at the same mean rate.
    Poisson,
}

/// Which of a noise horizon's rare interruptions a simulated run carries (`sim::noise::Tail`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum NoiseTail {
    /// The longest.
    Longest,
    /// Every one beyond the profile's last quantile below its longest.
    Rare,
}

/// A socket of a two-socket server, named from the NIC's side (`sim::remote::Socket`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Socket {
    /// The NIC's socket.
    Local,
    /// The other socket.
    Remote,
}

impl From<Socket> for sim::remote::Socket {
    fn from(s: Socket) -> Self {
        match s {
            Socket::Local => sim::remote::Socket::Local,
            Socket::Remote => sim::remote::Socket::Remote,
        }
    }
}

/// The order in which the generator sends its flows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FlowOrder {
    /// Each packet's flow drawn at random ("select packet 5-tuples at random", shRing §5.2).
    Random,
    /// Every flow in turn, again and again, as T-Rex's field engine steps addresses with `op = "inc"`
    /// (the nicmem artifact's profile, `fig9/trex/imix_lat.py`; `traffic::Popularity::Stepped`).
    Stepped,
}

/// A value written as a number or as text with a unit (`1024`, `"1Ki"`, `"200G"`, `"2ms"`, `"imix"`):
/// TOML files may use either, and the engines' own parsers read the text.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(transparent)]
pub struct Quantity(pub String);

impl fmt::Display for Quantity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::str::FromStr for Quantity {
    type Err = std::convert::Infallible;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Ok(Quantity(s.to_string()))
    }
}

impl<'de> Deserialize<'de> for Quantity {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            Int(i64),
            Float(f64),
            Text(String),
        }
        Raw::deserialize(d)
            .map(|r| {
                Quantity(match r {
                    Raw::Int(i) => i.to_string(),
                    Raw::Float(x) => x.to_string(),
                    Raw::Text(s) => s,
                })
            })
            .map_err(|_| serde::de::Error::custom("expected a number or a string such as \"1Ki\", \"200G\", \"2ms\""))
    }
}

/// Everything one run is given. Flag `--tx-ring` is key `tx_ring`; see `rxlab run --help` for each.
#[derive(Args, Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Params {
    /// Name of this point in tables and figures (not part of its id).
    #[arg(long)]
    pub label: Option<String>,
    /// Engine: `live` or `sim` [default: live].
    #[arg(long, value_enum)]
    pub engine: Option<Engine>,
    /// Receive interface design (see `docs/designs.md`) [default: privring].
    #[arg(long)]
    pub iface: Option<String>,
    /// Network function run on every core [default: echo].
    #[arg(long)]
    pub app: Option<String>,
    /// App parameters, `key=value` separated by commas, e.g. `flows=1M,reads=4`; added to the
    /// experiment's, a key given again replacing the earlier value.
    #[arg(long)]
    pub app_params: Option<String>,
    /// The software the app runs in: `native` (its own code over the burst API, as DPDK's sample apps)
    /// or `fastclick` (the papers' FastClick graph of nat, lb, workpackage or synthetic, with FastClick's
    /// per-packet work, annotations and blocking transmit) [default: native].
    #[arg(long)]
    pub runtime: Option<String>,
    /// Worker cores [default: 1].
    #[arg(long, value_parser = ifaces::ringsize::count::<usize>)]
    #[serde(default, deserialize_with = "count")]
    pub cores: Option<usize>,
    /// Receive ring size per core (a power of two; `1Ki` works) [default: 1024].
    #[arg(long)]
    pub ring: Option<Quantity>,
    /// Transmit ring size per core [default: 1024].
    #[arg(long)]
    pub tx_ring: Option<Quantity>,
    /// Packet buffer layout: `mempool` (objects of DPDK's packet mempool, spread over memory channels:
    /// 37 cache lines apart) or `2k` (packed 2 KiB buffers, for comparison)
    /// [default: mempool].
    #[arg(long)]
    pub buffers: Option<String>,
    /// Packets per receive burst (DPDK's 32) [default: 32].
    #[arg(long, value_parser = ifaces::ringsize::count::<usize>)]
    #[serde(default, deserialize_with = "count")]
    pub burst: Option<usize>,
    /// Per-core buffer cache (DPDK mempool cache) [default: 256].
    #[arg(long, value_parser = ifaces::ringsize::count::<usize>)]
    #[serde(default, deserialize_with = "count")]
    pub cache: Option<usize>,
    /// shRing: cores sharing one Rx ring (must divide --cores) [default: 8].
    #[arg(long, value_parser = ifaces::ringsize::count::<usize>)]
    #[serde(default, deserialize_with = "count")]
    pub share: Option<usize>,
    /// Batched RxList: packets per multi-packet descriptor [default: 4].
    #[arg(long, value_parser = ifaces::ringsize::count::<u32>)]
    #[serde(default, deserialize_with = "count")]
    pub list_batch: Option<u32>,
    /// rxBisect: entries of each allocation (Ax) ring (at least 64, the vendor minimum) [default: 128].
    #[arg(long, value_parser = ifaces::ringsize::count::<u32>)]
    #[serde(default, deserialize_with = "count")]
    pub ax: Option<u32>,
    /// rxBisect: entries of each bisected reception (Bx) ring [default: 1024].
    #[arg(long)]
    pub bx: Option<Quantity>,
    /// rxBisect: Ax ring the NIC uses when the linked one is empty: `random` or `round-robin`.
    #[arg(long)]
    pub ax_policy: Option<String>,
    /// Dynamic shRing: throughput threshold for switching to shared rings, Gbps [default: 170].
    #[arg(long)]
    pub switch_gbps: Option<f64>,
    /// Dynamic shRing: memory-bandwidth threshold, GiB/s [default: 25].
    #[arg(long)]
    pub switch_mem: Option<f64>,
    /// nicmem: on-NIC memory, bytes (`256Ki`: the paper's ConnectX-5; `64Mi`: a future device) or
    /// `emulated`, as the paper evaluated nmNFV: a large nicmem emulated by reusing the device's buffer
    /// for many packets, so that every primary ring is full-size (§5) [default: emulated].
    #[arg(long)]
    pub nicmem_capacity: Option<Quantity>,
    /// nicmem: header/data split offset H in bytes (nicmem §5) [default: 64].
    #[arg(long, value_parser = ifaces::ringsize::count::<usize>)]
    #[serde(default, deserialize_with = "count")]
    pub nicmem_split: Option<usize>,
    /// nmNFV: queues with NIC memory, the first N; the others keep whole packets in host memory
    /// (nicmem §6.4, Figure 13) [default: every queue].
    #[arg(long, value_parser = ifaces::ringsize::count::<usize>)]
    #[serde(default, deserialize_with = "count", skip_serializing_if = "Option::is_none")]
    pub nicmem_queues: Option<usize>,
    /// Ensō: bytes per pipe, a multiple of the page size (Ensō §5.1) [default: 2Mi].
    #[arg(long)]
    pub enso_pipe_size: Option<Quantity>,
    /// Ensō: pipes per core, all on the core's one notification buffer (Ensō §4.1) [default: 2].
    #[arg(long, value_parser = ifaces::ringsize::count::<usize>)]
    #[serde(default, deserialize_with = "count")]
    pub enso_pipes: Option<usize>,
    /// Ensō: `reactive` notifications (§4.2, Figure 5) or one `per-packet` [default: reactive].
    #[arg(long)]
    pub enso_notify: Option<String>,
    /// Ensō: how the app visits its pipes: `notified` (the next pipe a notification names,
    /// `NextRxTxPipeToRecv`) or `round-robin` (every pipe in turn, `PeekPkts` on each, as Ensō's echo,
    /// forwarder and Maglev examples loop) [default: notified].
    #[arg(long)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub enso_visit: Option<String>,
    /// Ensō: notification prefetching (§4.2) [default: false].
    #[arg(long, num_args = 0..=1, default_missing_value = "true")]
    pub enso_prefetch: Option<bool>,
    /// Ensō: send each received message by copying it into the thread's TX pipe, as Ensō's forwarder
    /// does (§7.2.2, Figure 9), instead of in place [default: false].
    #[arg(long, num_args = 0..=1, default_missing_value = "true")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub enso_tx_copy: Option<bool>,
    /// Simulator: ConnectX CQE compression (mini-CQE arrays under PCIe back pressure; privRing's
    /// completions, whose descriptor is implicit) [default: the profile's `nic.cqe_compression`: on for
    /// ConnectX, as DPDK's mlx5 driver; Intel NICs have none].
    #[arg(long, num_args = 0..=1, default_missing_value = "true")]
    pub cqe_compress: Option<bool>,
    /// How privRing's driver reposts receive buffers: `slot` (each in the burst that empties it, DPDK's
    /// scalar paths), `mlx5`, `i40e` or `ice` (that PMD's vector path: in bulk once enough are empty;
    /// `crates/ifaces/src/refill.rs`) [default: the profile's `nic.rx_refill`; `slot` on the live engine].
    #[arg(long)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rx_refill: Option<String>,
    /// Chaotic Ensō: largest gap between messages, in 64 B quanta (§7.2.3) [default: 4].
    #[arg(long, value_parser = ifaces::ringsize::count::<u32>)]
    #[serde(default, deserialize_with = "count")]
    pub enso_chaotic_gap: Option<u32>,
    /// Multi-Packet RQ: bytes per stride, a power of two from 64 to 8Ki (DPDK's `mprq_log_stride_size`;
    /// Linux mlx5e's smallest is 64) [default: 2Ki, DPDK's].
    #[arg(long)]
    pub mprq_stride_size: Option<Quantity>,
    /// Multi-Packet RQ: strides per WQE, a power of two from 8 to 64Ki and below --ring, which counts
    /// strides (DPDK's `mprq_log_stride_num`) [default: 64, DPDK's].
    #[arg(long)]
    pub mprq_strides: Option<Quantity>,
    /// Multi-Packet RQ: largest packet copied into an mbuf; larger ones are attached to the stride
    /// (DPDK's `mprq_max_memcpy_len`) [default: 128, DPDK's].
    #[arg(long)]
    pub mprq_memcpy: Option<u32>,
    /// AF_XDP: bytes per UMEM chunk, 2Ki or 4Ki (aligned mode: a power of two up to the page)
    /// [default: 4Ki, libxdp's XSK_UMEM__DEFAULT_FRAME_SIZE].
    #[arg(long)]
    pub afxdp_chunk: Option<Quantity>,
    /// AF_XDP: entries of each FILL ring, a power of two of at least --burst (the RX ring is --ring)
    /// [default: 2Ki, libxdp's XSK_RING_PROD__DEFAULT_NUM_DESCS].
    #[arg(long)]
    pub afxdp_fill: Option<Quantity>,
    /// AF_XDP: one FILL ring shared by every queue, its producers serialised by a lock, instead of one
    /// per queue [default: false].
    #[arg(long, num_args = 0..=1, default_missing_value = "true")]
    pub afxdp_shared_fill: Option<bool>,
    /// AF_XDP: copy mode (`XDP_COPY`): the NIC receives into the kernel's pages and the kernel, polling
    /// on the socket's core, copies each packet into a FILL chunk [default: false, zero-copy].
    #[arg(long, num_args = 0..=1, default_missing_value = "true")]
    pub afxdp_copy: Option<bool>,
    /// Live engine: software NIC threads, each an emulated port with its share of the traffic (split by
    /// flow), of the workers (--cores must be a multiple) and its own RSS and device side [default: 1].
    #[arg(long, value_parser = ifaces::ringsize::count::<usize>)]
    #[serde(default, deserialize_with = "count")]
    pub nic_threads: Option<usize>,
    /// Live engine: the NIC thread sends the trace from pre-filled Ensō TX pipes, EnsōGen-style (Ensō
    /// Appendix B) [default: false].
    #[arg(long, num_args = 0..=1, default_missing_value = "true")]
    pub ensogen: Option<bool>,
    /// A named synthetic stand-in for a trace the papers replay (`caida-nyc-2018`; `traffic::wild`): its
    /// size mix, flow count and Zipf popularity replace the defaults of --size, --flows and --zipf,
    /// which still override them [default: none].
    #[arg(long)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub traffic: Option<String>,
    /// Frame size, FCS included: 64..=1518, `imix`, `dc`, `SIZE:WEIGHT,...` or `pcap:FILE` [default: 64].
    #[arg(long)]
    pub size: Option<Quantity>,
    /// Number of flows [default: 1024].
    #[arg(long, value_parser = ifaces::ringsize::count::<usize>)]
    #[serde(default, deserialize_with = "count")]
    pub flows: Option<usize>,
    /// Zipf exponent of flow popularity (default: uniform).
    #[arg(long)]
    pub zipf: Option<f64>,
    /// Order of the flows: `random` draws or `stepped`, each in turn as T-Rex's `op = "inc"` sends them
    /// [default: random].
    #[arg(long, value_enum)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub flow_order: Option<FlowOrder>,
    /// Traffic on/off bursts `ON:OFF`, e.g. `100us:50us` (`--burst` of `rxlab trace gen`).
    #[arg(long)]
    pub on_off: Option<String>,
    /// Traffic in trains `FRAMES@LINE`, e.g. `32@100G`: back to back at the sender's line rate, as a DPDK
    /// sender's transmit bursts leave (`--train` of `rxlab trace gen`) [default: evenly paced].
    #[arg(long)]
    pub train: Option<String>,
    /// Send --target-percent of the packets to this queue (shRing §5.3, rxBisect §6.2).
    #[arg(long)]
    pub target_queue: Option<usize>,
    /// Share of packets for --target-queue, 0..=100 [default: 100].
    #[arg(long, allow_hyphen_values = true)]
    pub target_percent: Option<f64>,
    /// Frame size of the target queue's packets.
    #[arg(long, value_parser = ifaces::ringsize::count::<usize>)]
    #[serde(default, deserialize_with = "count")]
    pub target_size: Option<usize>,
    /// NIC ports, each with its own target queue (--target-queue within its share of the queues) getting
    /// --target-percent of its packets: "a target core per NIC" (shRing §5.3, rxBisect §6.2) [default: 1].
    #[arg(long, value_parser = ifaces::ringsize::count::<usize>)]
    #[serde(default, deserialize_with = "count")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub target_ports: Option<usize>,
    /// Change the target queues' load this long after the start, e.g. `250ms`: from then on they get
    /// --switch-percent of each port's packets, in frames of --switch-target-size, the flows staying the
    /// same ("we reconfigure the load generator to send a pathological load", shRing §5.3, Figure 13).
    #[arg(long)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub switch_at: Option<Quantity>,
    /// Share of packets for the target queues after --switch-at, 0..=100.
    #[arg(long, allow_hyphen_values = true)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub switch_percent: Option<f64>,
    /// Frame size of the target queues' packets after --switch-at [default: as before].
    #[arg(long, value_parser = ifaces::ringsize::count::<usize>)]
    #[serde(default, deserialize_with = "count")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub switch_target_size: Option<usize>,
    /// Pick flows so that RSS puts the same number on every queue.
    #[arg(long, num_args = 0..=1, default_missing_value = "true")]
    pub rss_even: Option<bool>,
    /// Receive queues for --target-queue or --rss-even [default: --cores].
    #[arg(long, value_parser = ifaces::ringsize::count::<usize>)]
    #[serde(default, deserialize_with = "count")]
    pub queues: Option<usize>,
    /// TCP instead of UDP.
    #[arg(long, num_args = 0..=1, default_missing_value = "true")]
    pub tcp: Option<bool>,
    /// IPv6 instead of IPv4.
    #[arg(long, num_args = 0..=1, default_missing_value = "true")]
    pub ipv6: Option<bool>,
    /// Seed of the traffic's random stream [default: 1].
    #[arg(long)]
    pub seed: Option<u64>,
    /// KVS payload (for the kvs app, or any app given a --kvs-* option; logmon is sent log lines, others the stamp): number of distinct keys [default: 1M].
    #[arg(long, value_parser = ifaces::ringsize::count::<u64>)]
    #[serde(default, deserialize_with = "count")]
    pub kvs_keys: Option<u64>,
    /// KVS payload: Zipf exponent of key popularity [default: uniform].
    #[arg(long)]
    pub kvs_zipf: Option<f64>,
    /// KVS payload: share of GETs, 0..=1 (the rest are PUTs) [default: 0.5].
    #[arg(long, allow_hyphen_values = true)]
    pub kvs_get: Option<f64>,
    /// KVS payload: key length in bytes, 8..=255 [default: 8].
    #[arg(long, value_parser = ifaces::ringsize::count::<usize>)]
    #[serde(default, deserialize_with = "count")]
    pub kvs_key_len: Option<usize>,
    /// KVS payload: value length of PUTs in bytes [default: 8].
    #[arg(long, value_parser = ifaces::ringsize::count::<usize>)]
    #[serde(default, deserialize_with = "count")]
    pub kvs_value_len: Option<usize>,
    /// KVS payload: keys in a hot area (keys 0..N) taking --kvs-hot-share of the requests, instead of
    /// Zipf (nicmem Figure 15) [default: none].
    #[arg(long, value_parser = ifaces::ringsize::count::<u64>)]
    #[serde(default, deserialize_with = "count")]
    pub kvs_hot_keys: Option<u64>,
    /// KVS payload: share of requests to the hot area, 0..=1 (needs --kvs-hot-keys).
    #[arg(long)]
    pub kvs_hot_share: Option<f64>,
    /// Offered rate: `10G` (framing included), `5Mpps`, or `max` (live only) [default: max live, 200G sim].
    #[arg(long, allow_hyphen_values = true)]
    pub rate: Option<Quantity>,
    /// Time traffic is offered, measured after the warm-up [default: 1s live, 2ms sim].
    #[arg(long)]
    pub duration: Option<Quantity>,
    /// Unmeasured warm-up before it [default: 200ms live, 200us sim].
    #[arg(long)]
    pub warmup: Option<Quantity>,
    /// Replay this pcap/pcapng instead of generating traffic (live).
    #[arg(long)]
    pub pcap: Option<PathBuf>,
    /// Simulator: machine profile, a built-in name (`rxlab profile list`) or a profile file `PATH.toml`
    /// (`rxlab profile show NAME` prints one to start from) [default: r640-silver4216].
    #[arg(long)]
    pub profile: Option<String>,
    /// Simulator: change profile fields, `FIELD = VALUE` separated by `;` with TOML values, e.g.
    /// `llc.ways = 16; cpu.llc.size = 33554432` (a field may be named by the end of its path); added to
    /// the experiment's, a field given again taking the later value. A sweep axis `profile.FIELD = [...]`
    /// sets it per point.
    #[arg(long)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub profile_set: Option<String>,
    /// Simulator: override the profile's DDIO ways (0 turns DDIO off).
    #[arg(long, value_parser = ifaces::ringsize::count::<usize>)]
    #[serde(default, deserialize_with = "count")]
    pub ddio_ways: Option<usize>,
    /// Simulator: the LLC's replacement policy: `lru` (true LRU), `qlru` (QLRU_H11_M1_R0_U0 in every set)
    /// or `qlru-adaptive` (set dueling with a thrash-resistant variant, as Skylake-family L3s do)
    /// [default: the profile's; the Intel profiles use qlru-adaptive].
    #[arg(long)]
    pub llc_policy: Option<String>,
    /// Simulator: spread LLC lines over slices with the profile's slice hash; `false` indexes the LLC's
    /// sets by the low line bits as one slice [default: the profile's].
    #[arg(long, num_args = 0..=1, default_missing_value = "true")]
    pub llc_hash: Option<bool>,
    /// Simulator: arrival process [default: paced].
    #[arg(long, value_enum)]
    pub arrivals: Option<Arrivals>,
    /// Simulator: end the warm-up as soon as the run has settled (MSER-5 over its ring occupancy, cycles
    /// per packet and DRAM bandwidth, judged from 5 ms on; sim/src/settle.rs), --warmup being the
    /// longest, then measure for --duration; not with --noise-horizon or --ndr [default: false].
    #[arg(long, num_args = 0..=1, default_missing_value = "true")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub settle: Option<bool>,
    /// Simulator: seed of its own random streams (Poisson gaps, host noise) [default: 1].
    #[arg(long)]
    pub sim_seed: Option<u64>,
    /// Simulator: interrupt cores as the profile's host noise says (timer ticks, interrupts, SMIs);
    /// `false` gives every core all of its time [default: true].
    #[arg(long, num_args = 0..=1, default_missing_value = "true")]
    pub noise: Option<bool>,
    /// Simulator: the real time whose rare, long interruptions the run carries, spread evenly over it,
    /// warm-up included (a no-drop trial of RFC 2544 lasts 60s) [default: the run's own length].
    #[arg(long)]
    pub noise_horizon: Option<Quantity>,
    /// Simulator: which of the horizon's rare interruptions each core's run carries: `rare`, all of them
    /// beyond the profile's last quantile below its longest (sysjitter's p99.99; about five per core in
    /// 50 s), each a chance to tip a server with two states, or `longest`, the one that decides a no-drop
    /// trial, alone (sim/src/noise.rs) [default: rare].
    #[arg(long, value_enum)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub noise_tail: Option<NoiseTail>,
    /// Simulator: before the run, give each core's NF every flow RSS steers to it, as the papers' warm-up
    /// traffic does (10 s of T-Rex before measuring), so flow tables start in steady state; `false`
    /// starts them empty and every flow's first packet creates it [default: true].
    #[arg(long, num_args = 0..=1, default_missing_value = "true")]
    pub warm_tables: Option<bool>,
    /// Simulator: keep every core away for this long at the start of the run while packets arrive, one
    /// system-wide interruption, to test whether a configuration is bistable (docs/model.md, "Two states"):
    /// whether the backlog pushes it into the second state and it stays there [default: none].
    #[arg(long)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stall: Option<Quantity>,
    /// Simulator: STREAM triad instances co-located with the NF, each on a core of the profile's beside
    /// the workers, loading the same LLC and DRAM (rxBisect §6.2, Figure 17; docs/model.md,
    /// "Co-located programs") [default: 0].
    #[arg(long, value_parser = ifaces::ringsize::count::<usize>)]
    #[serde(default, deserialize_with = "count")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stream_triads: Option<usize>,
    /// Simulator: PageRank threads co-located with the NF, the GAP suite's pull PageRank on its `urand`
    /// graph, one thread a core (rxBisect §6.2, Figure 16; docs/model.md, "Co-located programs")
    /// [default: 0].
    #[arg(long, value_parser = ifaces::ringsize::count::<usize>)]
    #[serde(default, deserialize_with = "count")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pagerank_threads: Option<usize>,
    /// Simulator: where the STREAM triads and PageRank threads run: `local`, on cores of the NIC's socket
    /// beside the workers, or `remote`, on the other socket of a two-socket profile with their arrays in
    /// the NIC's socket's memory, crossing the links between the sockets
    /// (docs/model.md, "Co-located programs") [default: local].
    #[arg(long, value_enum)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub colocated_socket: Option<Socket>,
    /// Simulator: where the NF's cores and their memory (rings, buffers, tables) are: `local`, on the
    /// NIC's socket, or `remote`, on the other socket of a two-socket profile, as COREC §4.1's
    /// "different NUMA" columns: the NIC's DMA crosses the links between the sockets and DDIO, which
    /// serves only the NIC's socket, does not serve it (docs/model.md, "The NF on the other socket")
    /// [default: local].
    #[arg(long, value_enum)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub nf_socket: Option<Socket>,
    /// Simulator: nicmem Figure 14's copy loop on a core of the profile's beside the workers: `memcpy`
    /// between a host buffer of --copy-bytes and a 128 KiB buffer in host or NIC memory, `to-host`,
    /// `to-nicmem`, `from-host` or `from-nicmem` (docs/model.md, "Co-located programs") [default: none].
    #[arg(long, requires = "copy_bytes")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub copy_loop: Option<String>,
    /// Simulator: bytes of the copy loop's host buffer (the artifact's 1 KiB to 1 GiB sources).
    #[arg(long, value_parser = ifaces::ringsize::count::<usize>, requires = "copy_loop")]
    #[serde(default, deserialize_with = "count")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub copy_bytes: Option<usize>,
    /// Run the point this many times, the simulator's seed stepping up from --sim-seed, and report what
    /// the papers report, trimmed means: each number the mean of the runs without the lowest and the
    /// highest (from three runs on; shRing §5, rxBisect §6 and nicmem §6 take ten), with every run's
    /// headline numbers under `trials` [default: 1].
    #[arg(long, value_parser = ifaces::ringsize::count::<u32>)]
    #[serde(default, deserialize_with = "count")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trials: Option<u32>,
    /// Search the no-drop rate (RFC 2544): run the point once per tried rate between --ndr-low and
    /// --rate (the high bound), changing nothing else, and report the highest rate whose trial lost at
    /// most --ndr-loss of its packets [default: false].
    #[arg(long, num_args = 0..=1, default_missing_value = "true")]
    pub ndr: Option<bool>,
    /// NDR search: low bound in the unit of --rate (`0`, `1G`, `2Mpps`), tried only if no rate above it
    /// passes [default: 0].
    #[arg(long)]
    pub ndr_low: Option<Quantity>,
    /// NDR search: stop once the bracket is this narrow, a rate in the unit of --rate (`0.1G`) or a
    /// share of --rate (`1%`) [default: 1%].
    #[arg(long)]
    pub ndr_resolution: Option<Quantity>,
    /// NDR search: largest fraction of a trial's offered packets it may lose and pass, in [0, 1); every
    /// packet not sent back out counts (NIC, app and Tx drops); only 0 with --noise-horizon, whose rare
    /// interruptions stand for a longer trial than the run [default: 0].
    #[arg(long, allow_hyphen_values = true)]
    pub ndr_loss: Option<f64>,
}

/// A count or size in an experiment file: a number, or text in the command line's grammar (`"1M"`,
/// `"1Ki"`; [`ifaces::ringsize::parse_count`]).
fn count<'de, D: Deserializer<'de>, T: TryFrom<u64>>(d: D) -> Result<Option<T>, D::Error> {
    use serde::de::Error;
    let n = match toml::Value::deserialize(d)? {
        toml::Value::Integer(i) => u64::try_from(i).map_err(|_| D::Error::custom(format!("{i} is not a count")))?,
        toml::Value::String(s) => ifaces::ringsize::parse_count(&s).map_err(D::Error::custom)?,
        other => return Err(D::Error::custom(format!("expected a count such as 1024 or \"1Ki\", found {other}"))),
    };
    T::try_from(n).map(Some).map_err(|_| D::Error::custom(format!("{n} is too large")))
}

/// `Some(Quantity)` from a literal.
fn q(s: &str) -> Option<Quantity> {
    Some(Quantity(s.to_string()))
}

impl Params {
    /// The value of every parameter that has one when nothing is given, for `engine`.
    pub fn defaults(engine: Engine) -> Params {
        let live = engine == Engine::Live;
        Params {
            engine: Some(engine),
            iface: Some("privring".into()),
            app: Some("echo".into()),
            app_params: Some(String::new()),
            runtime: Some("native".into()),
            cores: Some(1),
            ring: q("1024"),
            tx_ring: q("1024"),
            buffers: Some("mempool".into()),
            burst: Some(32),
            cache: Some(256),
            share: Some(8),
            list_batch: Some(4),
            ax: Some(128),
            bx: q("1024"),
            ax_policy: Some("random".into()),
            switch_gbps: Some(170.0),
            switch_mem: Some(25.0),
            size: q("64"),
            flows: Some(1024),
            rss_even: Some(false),
            tcp: Some(false),
            ipv6: Some(false),
            seed: Some(1),
            rate: q(if live { "max" } else { "200G" }),
            duration: q(if live { "1s" } else { "2ms" }),
            warmup: q(if live { "200ms" } else { "200us" }),
            profile: Some("r640-silver4216".into()),
            arrivals: Some(Arrivals::Paced),
            sim_seed: Some(1),
            noise: Some(true),
            warm_tables: Some(true),
            ..Params::default()
        }
    }

    /// `self` with every parameter `top` sets replaced by `top`'s value, except app parameters and
    /// profile fields, which add up: `top`'s keys join `self`'s, a key set in both taking `top`'s value
    /// (`AppParams::parse` and `sim::profile_file::overlay` keep the later of repeated keys).
    pub fn overlay(&self, top: &Params) -> Params {
        let mut table = to_table(self);
        table.extend(to_table(top));
        let mut p = from_table(table).expect("a table made of two valid Params is valid");
        p.app_params = join(&self.app_params, &top.app_params, ",").or(p.app_params);
        p.profile_set = join(&self.profile_set, &top.profile_set, "; ").or(p.profile_set);
        p
    }

    /// The defaults of this engine with `self` on top: every parameter with a default has a value.
    pub fn resolved(&self) -> Params {
        let defaults = Params::defaults(self.engine.unwrap_or(Engine::Live));
        // A traffic stand-in's settings sit between the defaults and what is given; an unknown name is
        // left for the point's traffic options to refuse.
        match self.traffic.as_deref().map(traffic::wild::stand) {
            Some(Ok(s)) => {
                let stand = Params { size: q(s.size), flows: Some(s.flows), zipf: Some(s.zipf), ..Params::default() };
                defaults.overlay(&stand).overlay(self)
            }
            _ => defaults.overlay(self),
        }
    }

    /// Whether no parameter is set.
    pub fn is_empty(&self) -> bool {
        *self == Params::default()
    }
}

/// Two lists of `key=value` items joined by `sep`, where both are given.
fn join(low: &Option<String>, high: &Option<String>, sep: &str) -> Option<String> {
    let (low, high) = (low.as_deref()?, high.as_deref()?);
    Some([low, high].into_iter().filter(|s| !s.is_empty()).collect::<Vec<_>>().join(sep))
}

fn to_table(p: &Params) -> toml::Table {
    toml::Table::try_from(p).expect("Params serialise to a TOML table")
}

/// Read parameters from a TOML table; the error names the offending key.
pub fn from_table(t: toml::Table) -> Result<Params> {
    let keys: Vec<String> = t.keys().cloned().collect();
    Params::deserialize(toml::Value::Table(t)).with_context(|| format!("in the parameters {}", keys.join(", ")))
}

/// Duration `d` divided by `by`, as nanoseconds (at least 1 ns; `None` when absent or not a duration): the
/// short runs of `rxlab reproduce --quick` and `rxlab bench --sim --divide`.
pub fn shorter(d: &Option<Quantity>, by: u64) -> Option<Quantity> {
    let ns = traffic::units::parse_duration_ns(&d.as_ref()?.0).ok()?;
    Some(Quantity(format!("{}ns", (ns / by).max(1))))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overlay_keeps_unset_values() {
        let base = Params { cores: Some(4), iface: Some("shring".into()), ..Params::default() };
        let top = Params { cores: Some(8), ..Params::default() };
        let o = base.overlay(&top);
        assert_eq!(o.cores, Some(8));
        assert_eq!(o.iface.as_deref(), Some("shring"));
    }

    #[test]
    fn app_parameters_add_up_with_later_keys_winning() {
        let base = Params { app_params: Some("forward=mirror,reads=2".into()), ..Params::default() };
        let top = Params { app_params: Some("reads=8,buffer=1MiB".into()), ..Params::default() };
        let p = base.overlay(&top).resolved();
        let app = apps::AppParams::parse(p.app_params.as_deref().unwrap()).unwrap();
        assert_eq!(
            (app.get("forward"), app.get("reads"), app.get("buffer")),
            (Some("mirror"), Some("8"), Some("1MiB"))
        );
        assert_eq!(Params::default().overlay(&top).app_params, top.app_params);
    }

    #[test]
    fn profile_fields_add_up() {
        let base = Params { profile_set: Some("ddio_ways = 4".into()), ..Params::default() };
        let top = Params { profile_set: Some("llc.ways = 16".into()), ..Params::default() };
        assert_eq!(base.overlay(&top).profile_set.as_deref(), Some("ddio_ways = 4; llc.ways = 16"));
        assert_eq!(Params::default().overlay(&top).profile_set, top.profile_set);
        assert_eq!(base.overlay(&Params::default()).profile_set, base.profile_set);
    }

    #[test]
    fn counts_take_the_command_lines_grammar() {
        let p: Params = toml::from_str("kvs_keys = \"1M\"\nflows = \"1Ki\"\ncores = 16").unwrap();
        assert_eq!((p.kvs_keys, p.flows, p.cores), (Some(1_000_000), Some(1024), Some(16)));
        assert!(toml::from_str::<Params>("cores = -1").unwrap_err().to_string().contains("not a count"));
        assert!(toml::from_str::<Params>("flows = \"1x\"").unwrap_err().to_string().contains("unknown suffix"));
        let json: Params = serde_json::from_str(r#"{"flows": 1024}"#).unwrap();
        assert_eq!(json.flows, Some(1024));
    }

    #[test]
    fn quantities_take_numbers_and_text() {
        let p: Params = toml::from_str("ring = 256\nrate = \"100G\"\nsize = 1500").unwrap();
        assert_eq!(p.ring, q("256"));
        assert_eq!(p.rate, q("100G"));
        assert_eq!(p.size, q("1500"));
    }

    #[test]
    fn resolved_fills_engine_defaults() {
        let p = Params { engine: Some(Engine::Sim), ..Params::default() }.resolved();
        assert_eq!(p.rate, q("200G"));
        assert_eq!(Params::default().resolved().rate, q("max"));
    }
}
