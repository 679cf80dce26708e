//! What a run reports (the figures the papers plot), serialisable for `--json` and printable as a table.

use crate::stages::LatencyStages;
use measure::{CdfPoint, FlowOrderReport, LatencySummary, ReorderReport, Throughput};
use serde::Serialize;
use std::collections::BTreeMap;
use std::fmt;

/// Cycles per delivered packet, by phase.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Cycles {
    /// All busy cycles per packet.
    pub total: f64,
    /// Per phase (rx, app, tx, sync, alloc).
    pub phases: BTreeMap<&'static str, f64>,
    /// Share of the busy cycles spent in synchronisation (shRing Figure 2a).
    pub sync_share: f64,
    /// Share of core time spent in polls that found nothing.
    pub idle_share: f64,
    /// Share of the cores' time in the buffer allocator's shared level (rxBisect Table 3).
    pub shared_pool: SharedPoolShares,
}

/// Share of the cores' time (the measurement window on every core) spent refilling their buffer caches
/// from the allocator's shared level and flushing them to it: rxBisect §6.2, Table 3's "inter-core
/// memory allocator cycles out of all cycles".
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct PoolShare {
    /// Refills: allocations that reach the shared level (Table 3's "alloc").
    pub refill: f64,
    /// Flushes: frees that reach the shared level (Table 3's "free").
    pub flush: f64,
    /// Both: the allocator's share ("less than 0.2 % of total cycles in all cases").
    pub total: f64,
}

/// [`PoolShare`] over all cores, and, where traffic has target queues (shRing §5.3, rxBisect §6.2), over
/// the cores that receive them and over the others, as Table 3 splits them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct SharedPoolShares {
    /// Every core.
    pub all: PoolShare,
    /// The target queues' cores.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub target: Option<PoolShare>,
    /// The other cores.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub other: Option<PoolShare>,
}

/// Hit rates in [0, 1] (NaN-free: 0 when there were no accesses).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct HitRates {
    /// CPU L1d.
    pub l1: f64,
    /// CPU L2 (of accesses that missed L1).
    pub l2: f64,
    /// CPU LLC (of accesses that missed L2).
    pub llc: f64,
    /// The papers' "application cache hit rate" (nicmem §6.3: "plummets from 83% to 27%"; shRing §5's
    /// "Measurement Tools" take it "using Linux perf"): 1 - `cache-misses` / `cache-references`, which
    /// perf maps to LONGEST_LAT_CACHE.MISS and .REFERENCE, the core's cacheable requests that miss its
    /// L2: demand loads and RFOs, and the L1 and L2 hardware prefetches (Intel SDM vol. 3B, the
    /// architectural performance events). Instruction fetches are the one part rxlab does not model.
    pub cache_references: f64,
    /// NIC DMA writes whose line the LLC held at their lookup (PCM's pcm-pcie "Hit"): DDIO's updates in
    /// place, and with DDIO off the lines found and then dropped.
    pub nic_write: f64,
    /// NIC DMA reads served from the LLC.
    pub nic_read: f64,
    /// nicmem §6's "PCIe hit rate": the NIC's DMA reads and writes together, the lines found in the LLC
    /// over all lines, as the nicmem artifact computes it from pcm-pcie (`fig11/perf_util.py`: the Hit
    /// rows' PCIe Rd and Wr bytes over the Hit and Miss rows').
    pub pcie: f64,
}

/// CPU cache misses per packet the cores received, by level: what the papers count with perf (Ensō
/// Table 1's L1d misses). Unlike hit rates these do not depend on how many hits the model sees: it
/// sees the accesses the code reports (packets, rings, tables), not the stack and code data that a real
/// core's L1 also serves, so its hit rates read lower than perf's while its misses compare.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct MissesPerPacket {
    /// L1d misses.
    pub l1: f64,
    /// L2 misses.
    pub l2: f64,
    /// LLC misses.
    pub llc: f64,
}

/// One PCIe direction.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct PcieDir {
    /// Wire bytes over capacity.
    pub utilisation: f64,
    /// Payload Gb/s (packet data and metadata).
    pub goodput_gbps: f64,
    /// Packet data Gb/s (Ensō Figure 10's "goodput").
    pub data_gbps: f64,
    /// Share of the payload that is metadata: descriptors, completions, notifications, doorbells (Ensō
    /// §7.2.4: "up to 39 % of the PCIe read bandwidth" for the E810, below 1.2 % for Ensō).
    pub metadata_share: f64,
}

/// PCIe towards the host (DMA writes, read requests) and towards the device (completions, doorbells).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct PcieReport {
    /// Device to host.
    pub to_host: PcieDir,
    /// Host to device.
    pub to_device: PcieDir,
    /// Mean NIC DMA read latency, ns (shRing Figure 2e).
    pub read_latency_ns: f64,
}

/// Memory bandwidth, GB/s.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct MemBw {
    /// Reads.
    pub read_gbs: f64,
    /// Writes.
    pub write_gbs: f64,
}

/// shRing's descriptor wait before reposting (000 Figures 11b, 12b): from the moment a core has consumed
/// a descriptor until the ring's head reaches it, in virtual ns, over the whole run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct DescriptorWait {
    /// Descriptors reposted.
    pub count: u64,
    /// Mean wait, ns.
    pub mean_ns: f64,
    /// Median wait, ns (histogram bucket bound).
    pub p50_ns: f64,
    /// 99th percentile, ns (histogram bucket bound).
    pub p99_ns: f64,
    /// Longest wait, ns.
    pub max_ns: f64,
}

impl DescriptorWait {
    /// Read the `repost_wait*` metrics a shRing device reports (possibly under a prefix, as dynamic
    /// shRing's `shared.`); `None` for designs that do not report them.
    pub fn from_metrics(m: &BTreeMap<String, f64>) -> Option<DescriptorWait> {
        let (key, count) = m.iter().find(|(k, _)| k.ends_with("repost_waits"))?;
        let prefix = &key[..key.len() - "repost_waits".len()];
        let get = |name: &str| m.get(&format!("{prefix}repost_wait_ns_{name}")).copied().unwrap_or(0.0);
        Some(DescriptorWait {
            count: *count as u64,
            mean_ns: get("mean"),
            p50_ns: get("p50"),
            p99_ns: get("p99"),
            max_ns: get("max"),
        })
    }
}

/// Packet accounting over the whole run, for the conservation invariant.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Accounting {
    /// Packets the traffic offered.
    pub offered: u64,
    /// Packets the design delivered to software (rx bursts).
    pub delivered: u64,
    /// Drops by reason (the design's, and the NIC buffer's `nic_buffer_full`).
    pub dropped: BTreeMap<&'static str, u64>,
    /// Packets still queued at the end (0 after a drained run).
    pub queued: u64,
    /// Packets the app dropped.
    pub app_dropped: u64,
    /// Packets an app that sends nothing back took (a log monitor; `apps::App::sends`): its work, not
    /// drops.
    pub consumed: u64,
    /// Of those, the packets taken later than the residual allowance after the offered traffic ended (see
    /// [`Accounting::sent_late`]): a backlog a 60 s trial's buffers could not have held.
    pub consumed_late: u64,
    /// Packets put on the wire.
    pub sent: u64,
    /// Of those, the packets put on the wire later than the residual allowance after the offered
    /// traffic ended: RFC 2544 §23 waits two seconds for residual frames after a trial of at least 60 s
    /// (§24), so a run, which stands for such a trial, waits 2/60 of its length (at least 100 us). A
    /// backlog that leaves later was absorbed by buffers a 60 s trial would have filled; a no-drop search
    /// counts it lost.
    pub sent_late: u64,
}

/// The adaptive LLC policy's set dueling ([`crate::cache::Policy::QlruAdaptive`]): the share of the LLC's
/// slices whose follower sets fill as the thrash-resistant QLRU_H11_MR161_R0_U0, which makes a
/// DMA-written line the first victim of its DDIO set. Which runs tip depends on it while it moves
/// (docs/model.md, "The LLC").
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct LlcDuel {
    /// At the start of the measurement window (the end of the warm-up).
    pub window_start: f64,
    /// At its end.
    pub window_end: f64,
}

/// Where a run that decides its own warm-up ([`crate::SimConfig::settle`]) opened its window.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct SettleReport {
    /// The warm-up the run took, µs of virtual time.
    pub warmup_us: f64,
    /// Whether it settled ([`crate::settle`]); `false`: it was still moving at the longest warm-up.
    pub settled: bool,
}

/// Everything a simulation run reports. Rates cover the measurement window only.
#[derive(Debug, Clone, Serialize)]
pub struct SimReport {
    /// Profile, design, app and core count, for the header.
    pub setup: String,
    /// Length of the measurement window, seconds (virtual).
    pub window_s: f64,
    /// Offered load in the window.
    pub offered: Throughput,
    /// Packets sent back out in the window.
    pub throughput: Throughput,
    /// Packets the cores received from the interface in the window, in Mpps (what an app that sends
    /// nothing back, like Ensō's Table 1 program, processes).
    pub received_mpps: f64,
    /// The same per core, in core order (rxBisect Figure 4's per-core packet rates).
    pub received_per_core_mpps: Vec<f64>,
    /// NIC arrival to wire-out, ns, for packets that arrived in the window.
    pub latency: LatencySummary,
    /// The same packets' mean time in each stage between arrival and wire ([`crate::stages`]).
    pub latency_stages: LatencyStages,
    /// Per-packet service time of the cores' polls in the window (a poll's receive and app work over
    /// its packets), ns: how much a core's pace varies with its cache hits and misses.
    pub service_ns: LatencySummary,
    /// The same packets' latency distribution, sampled at [`measure::latency::CDF_QUANTILES`].
    pub latency_cdf: Vec<CdfPoint>,
    /// Mean ring occupancy as a fraction of capacity (sampled at arrivals).
    pub ring_occupancy: f64,
    /// The mean latency in full sets of the design's receive rings, by Little's law: the packets a
    /// mean latency holds in flight at the delivered rate, over the receive ring entries. About 1 is a
    /// server whose every receive ring is full and whose latency is that queue (the papers' tipped
    /// state, rxBisect Table 2's privRing); 2 is another full set queued beyond it, in transmit rings.
    pub latency_ring_sets: f64,
    /// Ring occupancy and throughput over the whole run, warm-up included, in
    /// [`crate::timeline::SLICES`] slices: whether the run settled.
    pub timeline: Vec<crate::timeline::Slice>,
    /// With `settle`, where the warm-up ended.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub settle: Option<SettleReport>,
    /// Cycles per packet.
    pub cycles: Cycles,
    /// Cache hit rates.
    pub hit_rates: HitRates,
    /// The co-located programs (absent without them).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub antagonists: Option<crate::antagonist::AntagonistReport>,
    /// The adaptive LLC policy's selectors (absent under the other policies).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub llc_duel: Option<LlcDuel>,
    /// CPU cache misses per received packet.
    pub misses_per_packet: MissesPerPacket,
    /// DRAM bandwidth.
    pub memory: MemBw,
    /// PCIe.
    pub pcie: PcieReport,
    /// Drops in the window, by reason.
    pub drops: BTreeMap<&'static str, u64>,
    /// RFC 4737 reordering of the packets on the wire (by generator sequence number), whole run, all flows
    /// as one stream.
    pub reordering: ReorderReport,
    /// RFC 4737 reordering within each flow of the packets on the wire, whole run.
    pub flow_reordering: FlowOrderReport,
    /// shRing's descriptor wait before reposting, for designs that report it.
    pub descriptor_wait: Option<DescriptorWait>,
    /// Time cores waited for locks in the window, ns.
    pub lock_wait_ns: f64,
    /// Host noise: the interruptions that started in the window ([`crate::noise`]).
    pub noise: crate::noise::NoiseReport,
    /// The design's device-side metrics.
    pub device_metrics: BTreeMap<String, f64>,
    /// The design's driver-side metrics, summed over cores.
    pub driver_metrics: BTreeMap<String, f64>,
    /// The app's metrics, summed over cores.
    pub app_metrics: BTreeMap<String, f64>,
    /// Whole-run packet accounting (the invariants passed).
    pub accounting: Accounting,
    /// Events the engine processed.
    pub events: u64,
}

impl fmt::Display for SimReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let pct = |x: f64| format!("{:.1} %", x * 100.0);
        writeln!(f, "{}", self.setup)?;
        let row = |f: &mut fmt::Formatter<'_>, k: &str, v: String| writeln!(f, "  {k:<26} {v}");
        row(f, "window", format!("{:.3} ms (virtual)", self.window_s * 1e3))?;
        if let Some(s) = self.settle {
            let how = if s.settled { "settled (MSER-5)" } else { "the longest, still moving" };
            row(f, "warm-up", format!("{:.3} ms, {how}", s.warmup_us / 1e3))?;
        }
        row(f, "offered", format!("{:.2} Gbps  {:.3} Mpps", self.offered.gbps_wire, self.offered.mpps))?;
        row(
            f,
            "throughput (sent out)",
            format!("{:.2} Gbps  {:.3} Mpps", self.throughput.gbps_wire, self.throughput.mpps),
        )?;
        row(f, "received by cores", format!("{:.3} Mpps", self.received_mpps))?;
        let l = &self.latency;
        row(
            f,
            "latency ns",
            format!("mean {:.0}  p50 {}  p99 {}  p99.9 {}  ({} samples)", l.mean, l.p50, l.p99, l.p999, l.count),
        )?;
        let g = &self.latency_stages;
        row(
            f,
            "latency by stage ns",
            format!(
                "NIC {:.0}  Rx ring {:.0}  core {:.0}  Tx call {:.0}  Tx {:.0}",
                g.nic_ns, g.rx_ring_ns, g.core_ns, g.tx_call_ns, g.tx_ns
            ),
        )?;
        let s = &self.service_ns;
        row(f, "service ns/packet", format!("mean {:.0}  p50 {}  p99 {}  p99.9 {}", s.mean, s.p50, s.p99, s.p999))?;
        row(f, "ring occupancy", pct(self.ring_occupancy))?;
        row(f, "latency in ring sets", format!("{:.2} full sets of receive rings", self.latency_ring_sets))?;
        let phases: Vec<String> = self.cycles.phases.iter().map(|(k, v)| format!("{k} {v:.0}")).collect();
        row(f, "cycles/packet", format!("{:.0}  ({})", self.cycles.total, phases.join(", ")))?;
        row(
            f,
            "sync share / idle share",
            format!("{} / {}", pct(self.cycles.sync_share), pct(self.cycles.idle_share)),
        )?;
        let h = &self.hit_rates;
        row(f, "CPU hit rate L1/L2/LLC", format!("{} / {} / {}", pct(h.l1), pct(h.l2), pct(h.llc)))?;
        row(f, "perf cache-references hit rate", pct(h.cache_references))?;
        let mpp = &self.misses_per_packet;
        row(f, "CPU misses/packet L1/L2/LLC", format!("{:.2} / {:.2} / {:.2}", mpp.l1, mpp.l2, mpp.llc))?;
        row(
            f,
            "NIC LLC hit rate wr/rd",
            format!("{} / {} (PCIe hit rate {})", pct(h.nic_write), pct(h.nic_read), pct(h.pcie)),
        )?;
        if let Some(a) = self.antagonists {
            if a.instances > 0 {
                row(f, "co-located STREAM triads", format!("{} at {:.2} GB/s in all", a.instances, a.triad_gbs))?;
            }
            if let Some(rate) = a.copy_bytes_per_cycle {
                row(f, "copy loop", format!("{rate:.2} bytes a cycle"))?;
            }
        }
        if let Some(d) = self.llc_duel {
            row(
                f,
                "LLC slices filling as MR161",
                format!("{} at the window's start, {} at its end", pct(d.window_start), pct(d.window_end)),
            )?;
        }
        row(f, "memory GB/s rd/wr", format!("{:.2} / {:.2}", self.memory.read_gbs, self.memory.write_gbs))?;
        let p = &self.pcie;
        for (name, d) in [("PCIe to host", &p.to_host), ("PCIe to device", &p.to_device)] {
            row(
                f,
                name,
                format!(
                    "util {}  goodput {:.2} Gbps ({:.2} Gbps packet data, {} metadata)",
                    pct(d.utilisation),
                    d.goodput_gbps,
                    d.data_gbps,
                    pct(d.metadata_share)
                ),
            )?;
        }
        row(f, "PCIe read latency", format!("{:.0} ns", p.read_latency_ns))?;
        let drops: Vec<String> = self.drops.iter().map(|(k, v)| format!("{k} {v}")).collect();
        row(f, "drops", if drops.is_empty() { "none".into() } else { drops.join(", ") })?;
        row(f, "lock wait", format!("{:.0} ns", self.lock_wait_ns))?;
        let n = &self.noise;
        row(
            f,
            "host noise",
            format!(
                "{} interruptions, {:.1} us in all ({}), longest {:.1} us",
                n.interruptions,
                n.total_us,
                pct(n.share),
                n.max_us
            ),
        )?;
        let r = &self.reordering;
        row(
            f,
            "reordering (RFC 4737)",
            format!("{} of {} ({}), max extent {}", r.reordered, r.received, pct(r.ratio), r.extent.max),
        )?;
        let w = &self.flow_reordering;
        // Stamped packets on the wire whose flow was forgotten (frames without a stamp are in neither).
        let late = r.received.saturating_sub(w.received);
        row(
            f,
            "reordering within flows",
            format!(
                "{} of {} ({}){}",
                w.reordered,
                w.received,
                pct(w.ratio),
                if late > 0 { format!(", {late} sent too long after arrival to check") } else { String::new() }
            ),
        )?;
        if let Some(w) = &self.descriptor_wait {
            row(
                f,
                "descriptor wait ns",
                format!(
                    "mean {:.0}  p50 {:.0}  p99 {:.0}  max {:.0}  ({} reposts)",
                    w.mean_ns, w.p50_ns, w.p99_ns, w.max_ns, w.count
                ),
            )?;
        }
        for (name, m) in
            [("device", &self.device_metrics), ("driver", &self.driver_metrics), ("app", &self.app_metrics)]
        {
            if !m.is_empty() {
                let v: Vec<String> = m.iter().map(|(k, v)| format!("{k} {v}")).collect();
                row(f, &format!("{name} metrics"), v.join(", "))?;
            }
        }
        let a = &self.accounting;
        row(
            f,
            "run accounting",
            format!(
                "offered {} = delivered {} + dropped {} + queued {}; sent {}",
                a.offered,
                a.delivered,
                a.dropped.values().sum::<u64>(),
                a.queued,
                a.sent
            ),
        )?;
        row(f, "events", self.events.to_string())
    }
}

/// `part / whole`, or 0 when `whole` is 0.
pub fn ratio(part: f64, whole: f64) -> f64 {
    if whole > 0.0 { part / whole } else { 0.0 }
}
