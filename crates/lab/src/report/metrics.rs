//! The metric registry: every column of `results.csv` (the flattened report of a sim or live run, plus
//! `derived.*`) and every sweep parameter a figure may put on an axis, declared once with its name, unit
//! and preferred scale. Figure axes, the text and HTML tables and `columns.csv` (the documentation of
//! `results.csv` written next to it) all read their names and units from here.
//!
//! A key pattern is dotted like the columns; `*` stands for one segment (an index, a drop reason) and a
//! final `**` for any number of them. `{}` in a name is replaced by the segment `*` matched, underscores as
//! spaces.

/// What a metric's numbers are, as results.csv stores them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    /// Nanoseconds (shown as ns, µs, ms or s).
    Ns,
    /// Microseconds.
    Us,
    /// Milliseconds.
    Ms,
    /// Seconds.
    S,
    /// Gigabits per second.
    Gbps,
    /// Million packets per second.
    Mpps,
    /// Gigabytes per second.
    GBs,
    /// A fraction in [0, 1], shown as a percentage.
    Share,
    /// Cycles (per packet).
    Cycles,
    /// Entries of a ring (powers of two, shown as Ki).
    Entries,
    /// Bytes.
    Bytes,
    /// A count (packets, events, trials).
    Count,
    /// A plain number without a unit (a ratio, misses per packet).
    Number,
    /// An offered load as written in an experiment (`10Mpps`, `200G`), shown in Mpps or Gbps.
    Rate,
    /// Text: a name, a setting, a flag.
    Text,
}

/// One registry entry.
#[derive(Debug, Clone, Copy)]
pub struct Metric {
    /// Key pattern (see the module doc).
    pub key: &'static str,
    /// Human name, as an axis or a legend says it ("Mean latency").
    pub name: &'static str,
    /// Short name for table headers ("p50"), before the unit.
    pub short: &'static str,
    /// Unit of the stored numbers.
    pub unit: Unit,
    /// Whether the papers draw it on a log axis when it spans orders of magnitude.
    pub log: bool,
}

const fn m(key: &'static str, name: &'static str, short: &'static str, unit: Unit, log: bool) -> Metric {
    Metric { key, name, short, unit, log }
}

use Unit::*;

/// Every results.csv metric column, sim and live.
pub const METRICS: &[Metric] = &[
    // Throughput and load.
    m("throughput.gbps_wire", "Throughput", "", Gbps, false),
    m("throughput.gbps", "Throughput without framing", "L2", Gbps, false),
    m("throughput.mpps", "Packet rate", "", Mpps, false),
    m("offered.gbps_wire", "Offered load", "offered", Gbps, false),
    m("offered.gbps", "Offered load without framing", "offered L2", Gbps, false),
    m("offered.mpps", "Offered packet rate", "offered", Mpps, false),
    m("received_mpps", "Packets received by cores", "received", Mpps, false),
    m("received_per_core_mpps.*", "Packets received by core {}", "core {} rx", Mpps, false),
    m("window_s", "Measurement window", "window", S, false),
    m("seconds", "Run length", "run", S, false),
    // Latency.
    m("latency.mean", "Mean latency", "mean", Ns, true),
    m("latency.p50", "Median latency", "p50", Ns, true),
    m("latency.p99", "99th-percentile latency", "p99", Ns, true),
    m("latency.p999", "99.9th-percentile latency", "p99.9", Ns, true),
    m("latency.max", "Maximum latency", "max", Ns, true),
    m("latency.min", "Minimum latency", "min", Ns, true),
    m("latency.count", "Latency samples", "samples", Count, false),
    m("latency.saturated", "Latency samples beyond 100 s", "saturated", Count, false),
    m("latency_cdf.*.ns", "Latency", "latency", Ns, true),
    m("latency_cdf.*.q", "Cumulative share of packets", "CDF", Share, false),
    m("latency_stages.nic_ns", "Mean time in the NIC (arrival to DMA landed)", "NIC", Ns, false),
    m("latency_stages.rx_ring_ns", "Mean time in the Rx ring", "Rx ring", Ns, false),
    m("latency_stages.core_ns", "Mean time in the core (taken to handed to transmit)", "core", Ns, false),
    m("latency_stages.tx_call_ns", "Mean time in the transmit call (full Tx ring included)", "Tx call", Ns, false),
    m("latency_stages.tx_ns", "Mean time from doorbell to wire", "Tx", Ns, false),
    m("latency_stages.count", "Packets split into stages", "staged", Count, false),
    m("latency_stages.untracked", "Packets left out of the stages", "unstaged", Count, false),
    m("service_ns.mean", "Mean service time per packet", "svc mean", Ns, false),
    m("service_ns.p50", "Median service time per packet", "svc p50", Ns, false),
    m("service_ns.p99", "99th-percentile service time per packet", "svc p99", Ns, false),
    m("service_ns.p999", "99.9th-percentile service time per packet", "svc p99.9", Ns, false),
    m("service_ns.max", "Longest service time per packet", "svc max", Ns, false),
    m("service_ns.min", "Shortest service time per packet", "svc min", Ns, false),
    m("service_ns.count", "Service time samples", "svc samples", Count, false),
    m("service_ns.saturated", "Service time samples beyond 100 s", "svc saturated", Count, false),
    // Host noise.
    m("noise.interruptions", "Core interruptions", "interruptions", Count, false),
    m("noise.total_us", "Time cores were interrupted", "interrupted", Us, false),
    m("noise.max_us", "Longest interruption", "longest interruption", Us, true),
    m("noise.share", "Share of core time interrupted", "interrupted", Share, false),
    // Rings.
    m("ring_occupancy", "Ring occupancy", "occupancy", Share, false),
    m("occupancy", "Ring occupancy", "occupancy", Share, false),
    m("latency_ring_sets", "Mean latency in full receive ring sets", "ring sets", Number, false),
    m("timeline.*.t_us", "Time since start", "t", Us, false),
    m("timeline.*.occupancy", "Ring occupancy", "occupancy", Share, false),
    m("timeline.*.gbps_wire", "Throughput", "", Gbps, false),
    // Cycles.
    m("cycles.total", "Cycles per packet", "cyc/pkt", Cycles, false),
    m("cycles.phases.*", "Cycles per packet in {}", "{}", Cycles, false),
    m("cycles.sync_share", "Synchronisation share of cycles", "sync", Share, false),
    m("cycles.idle_share", "Idle share of core time", "idle", Share, false),
    m(
        "cycles.shared_pool.*.refill",
        "Share of {} cores' time refilling from the shared buffer pool",
        "{} refill",
        Share,
        false,
    ),
    m(
        "cycles.shared_pool.*.flush",
        "Share of {} cores' time flushing to the shared buffer pool",
        "{} flush",
        Share,
        false,
    ),
    m("cycles.shared_pool.*.total", "Share of {} cores' time in the shared buffer pool", "{} pool", Share, false),
    m("derived.cycles_processing", "Processing cycles per packet", "processing", Cycles, false),
    // Caches.
    m("hit_rates.l1", "CPU L1d hit rate", "L1 hit", Share, false),
    m("hit_rates.l2", "CPU L2 hit rate", "L2 hit", Share, false),
    m("hit_rates.llc", "CPU LLC hit rate", "LLC hit", Share, false),
    m("hit_rates.cache_references", "perf cache-references hit rate", "perf hit", Share, false),
    m("hit_rates.nic_write", "NIC LLC write hit rate", "NIC LLC hit", Share, false),
    m("hit_rates.nic_read", "NIC LLC read hit rate", "NIC LLC rd hit", Share, false),
    m("hit_rates.pcie", "PCIe hit rate (NIC reads and writes, pcm-pcie)", "PCIe hit", Share, false),
    m("llc_duel.window_start", "LLC slices filling as MR161 at the window's start", "MR161 start", Share, false),
    m("llc_duel.window_end", "LLC slices filling as MR161 at the window's end", "MR161 end", Share, false),
    m("misses_per_packet.l1", "CPU L1d misses per packet", "L1 miss/pkt", Number, false),
    m("misses_per_packet.l2", "CPU L2 misses per packet", "L2 miss/pkt", Number, false),
    m("misses_per_packet.llc", "CPU LLC misses per packet", "LLC miss/pkt", Number, false),
    // Memory and PCIe.
    m("memory.read_gbs", "Memory read bandwidth", "mem rd", GBs, false),
    m("memory.write_gbs", "Memory write bandwidth", "mem wr", GBs, false),
    m("derived.memory_gbs", "Memory bandwidth", "mem", GBs, false),
    m("antagonists.instances", "Co-located STREAM triads", "triads", Count, false),
    m("antagonists.triad_gbs", "Co-located STREAM triads' bandwidth", "triad", GBs, false),
    m("antagonists.copy_bytes_per_cycle", "Copy loop's rate (bytes a cycle)", "copy", Number, false),
    m("pcie.to_host.utilisation", "PCIe utilisation towards the host", "PCIe", Share, false),
    m("pcie.to_host.goodput_gbps", "PCIe goodput towards the host", "PCIe goodput", Gbps, false),
    m("pcie.to_host.data_gbps", "PCIe packet data towards the host", "PCIe data", Gbps, false),
    m("pcie.to_host.metadata_share", "Metadata share of PCIe payload towards the host", "PCIe meta", Share, false),
    m("pcie.to_device.utilisation", "PCIe utilisation towards the device", "PCIe to dev", Share, false),
    m("pcie.to_device.goodput_gbps", "PCIe goodput towards the device", "PCIe to dev goodput", Gbps, false),
    m("pcie.to_device.data_gbps", "PCIe packet data towards the device", "PCIe to dev data", Gbps, false),
    m(
        "pcie.to_device.metadata_share",
        "Metadata share of PCIe payload towards the device",
        "PCIe to dev meta",
        Share,
        false,
    ),
    m("pcie.read_latency_ns", "NIC PCIe read latency", "PCIe rd lat", Ns, false),
    // Drops and accounting.
    m("drops.*", "Drops ({})", "drops {}", Count, false),
    m("derived.drops", "Drops", "drops", Count, false),
    m("derived.rx_max_over_min", "Packets of the busiest core over the idlest", "rx max/min", Number, false),
    m("drop_ratio", "Dropped share of offered packets", "dropped", Share, false),
    m("accounting.offered", "Packets offered (whole run)", "offered", Count, false),
    m("accounting.delivered", "Packets delivered to cores (whole run)", "delivered", Count, false),
    m("accounting.dropped.*", "Packets dropped (whole run, {})", "dropped {}", Count, false),
    m("accounting.queued", "Packets queued at the end", "queued", Count, false),
    m("accounting.app_dropped", "Packets the app dropped", "app dropped", Count, false),
    m("accounting.sent", "Packets sent (whole run)", "sent", Count, false),
    m("accounting.sent_late", "Packets sent after the residual allowance (whole run)", "late", Count, false),
    m("accounting.consumed", "Packets an app that sends nothing back took (whole run)", "consumed", Count, false),
    m(
        "accounting.consumed_late",
        "Packets consumed after the residual allowance (whole run)",
        "consumed late",
        Count,
        false,
    ),
    // Reordering (RFC 4737).
    m("reordering.received", "Distinct packets received", "received", Count, false),
    m("reordering.duplicates", "Duplicate packets", "dups", Count, false),
    m("reordering.unchecked_for_duplicates", "Packets unchecked for duplication", "unchecked", Count, false),
    m("reordering.reordered", "Reordered packets", "reordered", Count, false),
    m("reordering.ratio", "Reordered packet ratio", "reordered", Share, false),
    m("reordering.window", "Reordering window", "window", Count, false),
    m("reordering.extent.max", "Largest reordering extent", "max extent", Count, false),
    m("reordering.extent.mean", "Mean reordering extent", "mean extent", Number, false),
    m("reordering.extent.beyond_window", "Reordered beyond the window", "beyond", Count, false),
    m("reordering.extent.histogram.**", "Reordering extent histogram", "extent hist", Count, false),
    m("reordering.n_reordered.**", "n-reordered packets", "n-reordered", Count, false),
    m("flow_reordering.received", "Packets checked for order within flows", "received", Count, false),
    m("flow_reordering.reordered", "Packets reordered within flows", "reordered", Count, false),
    m("flow_reordering.ratio", "Reordered share within flows", "flow reordered", Share, false),
    // Design-specific.
    m("descriptor_wait.count", "Descriptors reposted", "reposts", Count, false),
    m("descriptor_wait.mean_ns", "Mean descriptor wait", "desc wait", Ns, true),
    m("descriptor_wait.p50_ns", "Median descriptor wait", "desc wait p50", Ns, true),
    m("descriptor_wait.p99_ns", "99th-percentile descriptor wait", "desc wait p99", Ns, true),
    m("descriptor_wait.max_ns", "Longest descriptor wait", "desc wait max", Ns, true),
    m("lock_wait_ns", "Time cores waited for locks", "lock wait", Ns, false),
    m("device_metrics.*", "Device metric {}", "{}", Number, false),
    m("driver_metrics.*", "Driver metric {}", "{}", Number, false),
    m("app_metrics.*", "App metric {}", "{}", Number, false),
    m("events", "Simulation events", "events", Count, false),
    m("setup", "Setup", "setup", Text, false),
    // Live engine.
    m("engine", "Engine", "engine", Text, false),
    m("design", "Design", "design", Text, false),
    m("app", "App", "app", Text, false),
    m("cores", "Cores", "cores", Count, false),
    m("nic_threads", "NIC threads", "NIC threads", Count, false),
    m("ring", "Ring size", "ring", Entries, true),
    m("ax", "Ax ring size", "Ax", Entries, true),
    m("bx", "Bx ring size", "Bx", Entries, true),
    m("burst", "Burst size", "burst", Count, false),
    m("frame_len", "Mean frame length", "frame", Bytes, false),
    m("pinned", "Threads pinned to CPUs", "pinned", Text, false),
    m("source_lag_us", "NIC thread's furthest lag", "lag", Us, false),
    m("steal_ms", "Hypervisor steal time", "steal", Ms, false),
    m("warnings.*", "Warning", "warning", Text, false),
    m("invariants.*", "Invariant checked", "invariant", Text, false),
    m("device.*", "Device metric {}", "{}", Number, false),
    m("per_core.*.core", "Core", "core", Count, false),
    m("per_core.*.rx", "Packets received by the core", "rx", Count, false),
    m("per_core.*.tx", "Packets sent by the core", "tx", Count, false),
    m("per_core.*.consumed", "Packets the core's app consumed (sends nothing back)", "consumed", Count, false),
    m("per_core.*.polls", "Polls", "polls", Count, false),
    m("per_core.*.empty_poll_ratio", "Empty polls", "empty polls", Share, false),
    m("per_core.*.busy_ns_per_packet", "Busy time per packet", "busy/pkt", Ns, false),
    m("per_core.*.allocs", "Buffer allocations", "allocs", Count, false),
    m("per_core.*.cross_core_frees", "Cross-core buffer frees", "xfrees", Count, false),
    m("per_core.*.stalls.count", "Worker stalls", "stalls", Count, false),
    m("per_core.*.stalls.total_us", "Worker stall time", "stall time", Us, false),
    m("per_core.*.stalls.max_us", "Longest worker stall", "max stall", Us, false),
    m("per_core.*.metrics.*", "Per-core metric {}", "{}", Number, false),
    // No-drop rate (`--ndr`).
    m("ndr.gbps", "No-drop rate", "NDR", Gbps, false),
    m("ndr.mpps", "No-drop rate", "NDR", Mpps, false),
    m("ndr.found", "No-drop rate found", "NDR found", Text, false),
    m("ndr.unit", "No-drop rate search unit", "NDR unit", Text, false),
    m("ndr.low", "No-drop rate search low bound", "NDR low", Number, false),
    m("ndr.high", "No-drop rate search high bound", "NDR high", Number, false),
    m("ndr.loss_tolerance", "No-drop loss tolerance", "NDR loss", Share, false),
    m("ndr.resolution", "No-drop rate resolution", "NDR res", Number, false),
    m("ndr.converged", "No-drop rate search converged", "NDR converged", Text, false),
    m("ndr.trial_count", "No-drop rate trials", "NDR trials", Count, false),
    m("ndr.trials.**", "No-drop rate trial", "NDR trial", Number, false),
    // Repeated runs (`--trials`): every other column is their trimmed mean.
    m("trials.n", "Runs", "runs", Count, false),
    m("trials.trimmed", "Trimmed mean of the runs", "trimmed", Text, false),
    m("trials.shown_seed", "Seed of the median run", "median seed", Count, false),
    m("trials.runs.*.seed", "Seed of run {}", "seed {}", Count, false),
    m("trials.runs.*.gbps_wire", "Throughput of run {}", "Gbps {}", Gbps, false),
    m("trials.runs.*.latency_mean", "Mean latency of run {}", "mean {}", Ns, true),
    m("trials.runs.*.ring_occupancy", "Ring occupancy of run {}", "occ {}", Share, false),
    m("trials.runs.*.cycles", "Cycles per packet of run {}", "cyc {}", Cycles, false),
    m("trials.runs.*.memory_gbs", "Memory bandwidth of run {}", "mem {}", GBs, false),
];

/// Sweep parameters that figures put on axes or in legends (the others fall back to their key).
pub const PARAMS: &[Metric] = &[
    m("label", "Design", "point", Text, false),
    m("iface", "Interface", "iface", Text, false),
    m("rate", "Offered load", "rate", Rate, false),
    m("size", "Frame size", "size", Bytes, false),
    m("share", "Cores per shared ring", "share", Count, false),
    m("flows", "Flows", "flows", Count, true),
    m("app_params", "App parameters", "app", Text, false),
    m("target_percent", "Traffic to the target core (%)", "target %", Number, false),
    m("ddio_ways", "DDIO ways", "DDIO ways", Count, false),
    m("nicmem_queues", "Queues with NIC memory", "nicmem queues", Count, false),
    m("copy_bytes", "Copy loop's host buffer", "buffer", Bytes, true),
];

/// Whether `key` matches `pattern`.
fn matches(pattern: &str, key: &str) -> Option<String> {
    let (mut p, mut k) = (pattern.split('.'), key.split('.'));
    let mut wild = String::new();
    loop {
        match (p.next(), k.next()) {
            (None, None) => return Some(wild),
            (Some("**"), Some(_)) => return Some(wild),
            (Some("*"), Some(seg)) => wild = seg.replace('_', " "),
            (Some(a), Some(b)) if a == b => {}
            _ => return None,
        }
    }
}

/// A metric or parameter resolved for one column: the entry, with `{}` filled in.
#[derive(Debug, Clone)]
pub struct Resolved {
    /// Human name.
    pub name: String,
    /// Short table name.
    pub short: String,
    /// Unit of the stored numbers.
    pub unit: Unit,
    /// Preferred log axis.
    pub log: bool,
}

/// The registry entry of metric column `key`, if it has one.
pub fn lookup_metric(key: &str) -> Option<Resolved> {
    resolve(METRICS, key)
}

fn resolve(table: &[Metric], key: &str) -> Option<Resolved> {
    table.iter().find_map(|e| {
        let wild = matches(e.key, key)?;
        Some(Resolved {
            name: e.name.replace("{}", &wild),
            short: e.short.replace("{}", &wild),
            unit: e.unit,
            log: e.log,
        })
    })
}

/// A metric or parameter column; an unregistered one is named by its key, unit-less.
pub fn lookup(key: &str) -> Resolved {
    lookup_metric(key).or_else(|| resolve(PARAMS, key)).unwrap_or_else(|| Resolved {
        name: key.to_string(),
        short: key.to_string(),
        unit: Number,
        log: false,
    })
}

/// A numeric value of a column (text parameters such as `35Mpps` are parsed): rates in Mpps or Gbps, as
/// [`Unit::of_rate`] says.
pub fn parse_value(unit: Unit, text: &str) -> Option<f64> {
    match unit {
        Rate => match text.parse::<traffic::units::Rate>().ok()? {
            traffic::units::Rate::Mpps(v) | traffic::units::Rate::Gbps(v) => Some(v),
        },
        _ => text.parse().ok(),
    }
}

impl Unit {
    /// The unit for `text` values: Rate splits into packet and bit rates (`Mpps`, `Gbps`).
    pub fn of_rate(text: &str) -> Unit {
        match text.parse::<traffic::units::Rate>() {
            Ok(traffic::units::Rate::Gbps(_)) => Gbps,
            _ => Mpps,
        }
    }

    /// The fixed scale and unit text of table columns (`us` rather than `µs` so that text tables stay
    /// ASCII).
    pub fn table(self) -> (f64, &'static str) {
        match self {
            Ns => (1e-3, "us"),
            Us => (1.0, "us"),
            Ms => (1.0, "ms"),
            S => (1.0, "s"),
            Gbps => (1.0, "Gbps"),
            Mpps => (1.0, "Mpps"),
            GBs => (1.0, "GB/s"),
            Share => (100.0, "%"),
            Bytes => (1.0, "B"),
            Cycles | Entries | Count | Number | Rate | Text => (1.0, ""),
        }
    }

    /// The unit of the stored numbers, as `columns.csv` documents it.
    pub fn stored(self) -> &'static str {
        match self {
            Ns => "ns",
            Share => "fraction (0-1)",
            Cycles => "cycles",
            Entries => "entries",
            Count => "count",
            Rate => "as written (Gbps or pps)",
            Number | Text => "",
            _ => self.table().1,
        }
    }

    /// How an axis shows values up to `max` (in stored units): the factor to multiply by and the unit
    /// text ("µs" for nanoseconds in the thousands).
    pub fn axis_scale(self, max: f64) -> (f64, &'static str) {
        let max = max.abs();
        let pick = |steps: &[(f64, &'static str)]| {
            steps.iter().rev().find(|(f, _)| max * f >= 1.0 || *f == steps[0].0).copied().unwrap_or(steps[0])
        };
        match self {
            Ns => pick(&[(1.0, "ns"), (1e-3, "µs"), (1e-6, "ms"), (1e-9, "s")]),
            Us => pick(&[(1.0, "µs"), (1e-3, "ms"), (1e-6, "s")]),
            Ms => pick(&[(1.0, "ms"), (1e-3, "s")]),
            S => pick(&[(1e9, "ns"), (1e6, "µs"), (1e3, "ms"), (1.0, "s")]),
            Gbps => pick(&[(1e3, "Mbps"), (1.0, "Gbps")]),
            Mpps => pick(&[(1e3, "Kpps"), (1.0, "Mpps")]),
            Share => (100.0, "%"),
            Rate => (1.0, ""),
            _ => self.table(),
        }
    }
}

impl Resolved {
    /// The table header: short name and table unit ("p50 us").
    pub fn header(&self) -> String {
        format!("{} {}", self.short, self.unit.table().1).trim().to_string()
    }

    /// The value formatted for a table with `decimals` decimals (`-` when missing).
    pub fn cell(&self, v: Option<f64>, decimals: usize) -> String {
        v.map_or_else(|| "-".into(), |x| format!("{:.*}", decimals, x * self.unit.table().0))
    }

    /// An axis title for values scaled to `unit` ("Mean latency (µs)").
    pub fn axis_title(&self, unit: &str) -> String {
        if unit.is_empty() { self.name.clone() } else { format!("{} ({unit})", self.name) }
    }
}

/// `v` with a binary prefix when it is a multiple of 1024 ("1 Ki", "4 Ki"), else as is.
pub fn binary(v: f64) -> String {
    if v >= 1024.0 && v % 1024.0 == 0.0 { format!("{} Ki", v / 1024.0) } else { format!("{v}") }
}

/// A parameter value in words for a legend: "ring 1 Ki", "4 cores", "rxlab (sim)", "cycles=20000 dist=exp".
pub fn legend_part(key: &str, text: &str) -> String {
    let num = text.parse::<f64>().ok();
    match (key, num) {
        ("label" | "iface", _) => text.to_string(),
        ("engine", _) => format!("rxlab ({text})"),
        ("ring", Some(v)) => format!("ring {}", binary(v)),
        ("cores", Some(v)) => format!("{v} core{}", if v == 1.0 { "" } else { "s" }),
        ("share", Some(v)) => format!("share {v}"),
        ("flows", Some(v)) if v >= 1e6 => format!("{} M flows", v / 1e6),
        ("flows", Some(v)) => format!("{v} flows"),
        ("size", Some(v)) => format!("{v} B"),
        ("app_params", _) => text.replace(',', " "),
        ("ddio_ways", Some(v)) => format!("{v} DDIO way{}", if v == 1.0 { "" } else { "s" }),
        ("target_percent", Some(v)) => format!("{v} % to the target core"),
        ("rate", _) => match text.parse::<traffic::units::Rate>() {
            Ok(traffic::units::Rate::Gbps(v)) => format!("{v} Gbps"),
            Ok(traffic::units::Rate::Mpps(v)) => format!("{v} Mpps"),
            Err(_) => text.to_string(),
        },
        (_, Some(_)) => format!("{} {text}", lookup(key).short),
        _ => text.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns_fill_in_their_segment() {
        assert_eq!(lookup("drops.no_rx_descriptor").name, "Drops (no rx descriptor)");
        assert_eq!(lookup("timeline.17.occupancy").name, "Ring occupancy");
        assert!(lookup_metric("reordering.n_reordered.0.1").is_some());
        assert!(lookup_metric("latency.p42").is_none());
    }

    #[test]
    fn headers_and_scales() {
        assert_eq!(lookup("latency.p50").header(), "p50 us");
        assert_eq!(lookup("hit_rates.nic_write").header(), "NIC LLC hit %");
        assert_eq!(lookup("throughput.gbps_wire").header(), "Gbps");
        assert_eq!(Ns.axis_scale(25_000.0), (1e-3, "µs"));
        assert_eq!(Ns.axis_scale(800.0), (1.0, "ns"));
        assert_eq!(Ns.axis_scale(3e6), (1e-6, "ms"));
        assert_eq!(lookup("latency.mean").axis_title("µs"), "Mean latency (µs)");
    }

    /// Every column a sim run (shRing, with its device metrics), a sim no-drop-rate search, repeated sim
    /// runs (`trials`) and a live run report, taken from their flattened JSON as results.csv takes them,
    /// has a registry entry.
    #[test]
    fn every_column_a_run_reports_has_an_entry() {
        let runs = [
            "engine = 'sim'\niface = 'shring'\nshare = 2\napp = 'nat'\ncores = 2\nrate = '2Mpps'\nduration = '60us'\nwarmup = '20us'",
            "engine = 'sim'\niface = 'corec'\napp = 'l3fwd'\ncores = 2\nrate = '2Mpps'\nduration = '40us'\nwarmup = '10us'\nndr = true",
            "engine = 'sim'\napp = 'echo'\ncores = 2\nrate = '2Mpps'\nduration = '20us'\nwarmup = '10us'\ntrials = 3",
            "engine = 'live'\niface = 'privring'\napp = 'echo'\ncores = 1\nrate = '200Kpps'\nduration = '20ms'",
        ];
        let mut missing = std::collections::BTreeSet::new();
        for text in runs {
            let params = crate::params::from_table(toml::from_str(text).unwrap()).unwrap().resolved();
            let out = crate::point::run(&params).unwrap_or_else(|e| panic!("{text}: {e:#}"));
            let point = crate::experiment::Point { index: 0, id: String::new(), params };
            let row = crate::results::Row::new(&point, Ok(&out.json));
            assert!(row.metrics.contains_key("latency_cdf.0.ns"), "{text}: no latency CDF");
            missing.extend(row.metrics.keys().filter(|k| lookup_metric(k).is_none()).cloned());
        }
        assert!(missing.is_empty(), "add these columns to report::metrics::METRICS: {missing:?}");
    }

    #[test]
    fn legends_in_words() {
        assert_eq!(legend_part("ring", "1024"), "ring 1 Ki");
        assert_eq!(legend_part("cores", "4"), "4 cores");
        assert_eq!(legend_part("rate", "200G"), "200 Gbps");
        assert_eq!(parse_value(Rate, "350Kpps"), Some(0.35));
    }
}
