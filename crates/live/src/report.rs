//! What a live run reports: throughput, latency, drops and per-core costs, as a readable table and as JSON.

use crate::worker::WorkerStats;
use ifaces::Metrics;
use measure::{CdfPoint, FlowOrderReport, LatencySummary, ReorderReport, Throughput};
use serde::Serialize;
use std::collections::BTreeMap;
use std::fmt;

/// One core's line in the report.
#[derive(Debug, Clone, Serialize)]
pub struct CoreReport {
    /// Core index.
    pub core: usize,
    /// Packets received.
    pub rx: u64,
    /// Packets queued for transmission.
    pub tx: u64,
    /// Packets an app that sends nothing back took.
    pub consumed: u64,
    /// rx_burst calls.
    pub polls: u64,
    /// Share of rx_burst calls that found nothing.
    pub empty_poll_ratio: f64,
    /// Worker time per received packet in bursts that received some (rx + app + tx), ns: the core's
    /// per-packet cost, whatever the NIC thread's pace.
    pub busy_ns_per_packet: f64,
    /// Buffers allocated.
    pub allocs: u64,
    /// Frees of buffers another core allocated.
    pub cross_core_frees: u64,
    /// Empty polls that took over 20 µs, the thread being off its CPU: how many, total and longest µs
    /// (a lower bound of the time the worker lost; see [`crate::worker::Stalls`]).
    pub stalls: Stalls,
    /// Driver and app counters.
    pub metrics: Metrics,
}

/// Times a worker thread was off its CPU while polling an empty ring.
#[derive(Debug, Clone, Copy, Default, Serialize)]
pub struct Stalls {
    /// How many.
    pub count: u64,
    /// Their total length, µs.
    pub total_us: f64,
    /// The longest, µs.
    pub max_us: f64,
}

impl From<&WorkerStats> for CoreReport {
    fn from(w: &WorkerStats) -> Self {
        CoreReport {
            core: w.core,
            rx: w.rx,
            tx: w.tx,
            consumed: w.consumed,
            polls: w.polls,
            empty_poll_ratio: w.empty_polls as f64 / w.polls.max(1) as f64,
            busy_ns_per_packet: w.busy_ns as f64 / w.rx.max(1) as f64,
            allocs: w.cache.allocs,
            cross_core_frees: w.cache.cross_core_frees,
            stalls: Stalls {
                count: w.stalls.count,
                total_us: w.stalls.total_ns as f64 / 1e3,
                max_us: w.stalls.max_ns as f64 / 1e3,
            },
            metrics: w.metrics.clone(),
        }
    }
}

/// The result of one live run.
#[derive(Debug, Clone, Serialize)]
pub struct LiveReport {
    /// Engine name, "live".
    pub engine: &'static str,
    /// Design (`--iface`).
    pub design: String,
    /// App.
    pub app: String,
    /// Worker cores.
    pub cores: usize,
    /// Software NIC threads, one emulated port each.
    pub nic_threads: usize,
    /// Receive ring size.
    pub ring: u32,
    /// Burst size.
    pub burst: usize,
    /// Mean frame length offered, FCS included.
    pub frame_len: f64,
    /// Length of the measurement window, seconds.
    pub seconds: f64,
    /// Offered load inside the window.
    pub offered: Throughput,
    /// Packets sent back out inside the window (by send time).
    pub throughput: Throughput,
    /// Drops at the NIC by reason, whole run.
    pub drops: BTreeMap<&'static str, u64>,
    /// Dropped / offered over the whole run.
    pub drop_ratio: f64,
    /// Latency from the NIC's receive to its transmit of the reply, ns.
    pub latency: LatencySummary,
    /// The latency distribution, sampled at [`measure::latency::CDF_QUANTILES`].
    pub latency_cdf: Vec<CdfPoint>,
    /// RFC 4737 reordering over the whole run, all flows as one stream.
    pub reordering: ReorderReport,
    /// RFC 4737 reordering within each flow (`measure::flow_order`), whole run.
    pub flow_reordering: FlowOrderReport,
    /// Mean ring occupancy as a fraction of capacity (sampled by the NIC inside the window).
    pub occupancy: f64,
    /// Per-core counters.
    pub per_core: Vec<CoreReport>,
    /// The device side's counters.
    pub device: Metrics,
    /// Whether worker threads were pinned to CPUs.
    pub pinned: bool,
    /// With a paced source, the furthest the NIC thread fell behind its schedule, µs (it then offers the
    /// backlog at full speed).
    pub source_lag_us: Option<f64>,
    /// CPU time the hypervisor took from the run's CPUs, ms (`None` where it cannot be read).
    pub steal_ms: Option<f64>,
    /// Things that make the numbers less meaningful.
    pub warnings: Vec<String>,
    /// Invariants checked at the end, all of which held.
    pub invariants: Vec<String>,
}

impl fmt::Display for LiveReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "live run: {} / {} on {} core(s), {} NIC thread(s), ring {}, burst {}, {:.0} B frames, {:.2} s measured",
            self.design, self.app, self.cores, self.nic_threads, self.ring, self.burst, self.frame_len, self.seconds
        )?;
        writeln!(f, "  offered     {:>9.3} Mpps {:>8.3} Gbps", self.offered.mpps, self.offered.gbps_wire)?;
        writeln!(f, "  throughput  {:>9.3} Mpps {:>8.3} Gbps", self.throughput.mpps, self.throughput.gbps_wire)?;
        let drops: Vec<String> = self.drops.iter().map(|(k, v)| format!("{k} {v}")).collect();
        writeln!(
            f,
            "  drops       {:.4} %{}",
            self.drop_ratio * 100.0,
            if drops.is_empty() { String::new() } else { format!(" ({})", drops.join(", ")) }
        )?;
        let l = &self.latency;
        writeln!(f, "  latency ns  mean {:.0}  p50 {}  p99 {}  p99.9 {}  max {}", l.mean, l.p50, l.p99, l.p999, l.max)?;
        writeln!(f, "  occupancy   {:.1} % of ring capacity", self.occupancy * 100.0)?;
        writeln!(
            f,
            "  reordering  {:.4} % of packets (RFC 4737), max extent {}; within flows {:.4} % ({} packets)",
            self.reordering.ratio * 100.0,
            self.reordering.extent.max,
            self.flow_reordering.ratio * 100.0,
            self.flow_reordering.reordered
        )?;
        writeln!(
            f,
            "  core        rx          tx    empty polls  ns/pkt busy  allocs  x-core frees  stalls (total / longest us)"
        )?;
        for c in &self.per_core {
            writeln!(
                f,
                "  {:>4} {:>11} {:>11} {:>10.1} % {:>11.1} {:>7} {:>12}  {:>6} ({:.0} / {:.0})",
                c.core,
                c.rx,
                c.tx,
                c.empty_poll_ratio * 100.0,
                c.busy_ns_per_packet,
                c.allocs,
                c.cross_core_frees,
                c.stalls.count,
                c.stalls.total_us,
                c.stalls.max_us
            )?;
        }
        for w in &self.warnings {
            writeln!(f, "  warning: {w}")?;
        }
        write!(f, "  invariants held: {}", self.invariants.join(", "))
    }
}
