//! `rxlab bench --sim`: the simulator's own speed, in simulated packets per CPU-second of the run's thread,
//! on three reference points taken from the experiments that run them: the headline's privRing NAT
//! (FastClick, 16 cores, a million flows, `experiments/default.toml`), Ensō's 64 B echo on one core
//! (`enso-fig8.toml`) and nmKVS (`nicmem-fig15.toml`, one trial). For each, where the CPU time goes
//! (setup: machine, flows and warmed tables; warm-up; the measurement window; the drain and report) and
//! the process's peak resident set during it. Rounds interleave the points; each number is the median.

use crate::experiment::Experiment;
use crate::params::{Params, shorter};
use crate::point::{self, Config, Report};
use anyhow::{Context, Result, anyhow};
use serde::Serialize;

/// A reference point: its name, the experiment that holds it, its label there and the cores it runs on.
struct Reference {
    name: &'static str,
    experiment: (&'static str, &'static str),
    label: &'static str,
    cores: usize,
}

/// The three reference points.
const REFERENCES: [Reference; 3] = [
    Reference {
        name: "headline privRing NAT",
        experiment: ("default", crate::experiment::DEFAULT),
        label: "privRing NAT",
        cores: 16,
    },
    Reference {
        name: "Enso echo 64 B, 1 core",
        experiment: ("enso-fig8", include_str!("../../../experiments/enso-fig8.toml")),
        label: "Enso",
        cores: 1,
    },
    Reference {
        name: "nmKVS C1",
        experiment: ("nicmem-fig15", include_str!("../../../experiments/nicmem-fig15.toml")),
        label: "nmKVS C1",
        cores: 4,
    },
];

/// One reference point's speed (medians over the rounds).
#[derive(Debug, Serialize)]
pub struct Row {
    point: String,
    /// The design it runs (`--iface` picks points by it).
    iface: String,
    /// Packets the run simulated (offered, warm-up included).
    packets: u64,
    /// Virtual time simulated, ms (warm-up included).
    virtual_ms: f64,
    /// CPU-seconds of the run's thread.
    cpu_s: f64,
    /// Simulated packets per CPU-second.
    packets_per_cpu_s: f64,
    /// Where the CPU time went.
    spent: sim::Spent,
    /// Peak resident set of the process during the run, MB (`None` where /proc does not say).
    peak_rss_mb: Option<f64>,
}

/// The parameters of each reference point whose design is in `ifaces` (all when empty), their durations
/// divided by `divide`, one trial each.
fn points(ifaces: &[String], divide: u64) -> Result<Vec<(&'static str, Params)>> {
    REFERENCES
        .iter()
        .map(|r| {
            let exp = Experiment::parse(r.experiment.0, r.experiment.1)?;
            let p = exp
                .points(&Params::default())
                .into_iter()
                .map(|p| p.params)
                .find(|p| p.label.as_deref() == Some(r.label) && p.cores == Some(r.cores))
                .ok_or_else(|| anyhow!("{}: no point labelled {} on {} cores", r.experiment.0, r.label, r.cores))?;
            let p = Params {
                trials: None,
                duration: shorter(&p.duration, divide),
                warmup: shorter(&p.warmup, divide),
                ..p
            };
            Ok((r.name, p))
        })
        .filter(|r| {
            r.as_ref().map_or(true, |(_, p)| ifaces.is_empty() || p.iface.as_ref().is_some_and(|i| ifaces.contains(i)))
        })
        .collect()
}

/// The process's peak resident set since the last [`reset_peak_rss`], MB.
fn peak_rss_mb() -> Option<f64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let kb: f64 =
        status.lines().find_map(|l| l.strip_prefix("VmHWM:"))?.trim().trim_end_matches("kB").trim().parse().ok()?;
    Some(kb / 1e3)
}

/// Start a new peak-resident-set measurement (Linux: writing 5 to clear_refs resets VmHWM).
fn reset_peak_rss() {
    let _ = std::fs::write("/proc/self/clear_refs", "5");
}

/// One run of reference point `p`.
fn once(name: &str, p: &Params) -> Result<Row> {
    let config = point::build(p)?;
    let Config::Sim(cfg) = &config else { unreachable!("reference points run in the simulator") };
    let progress = sim::Progress::default();
    reset_peak_rss();
    let Report::Sim(r) =
        point::report_observed(&config, &progress).with_context(|| format!("reference point {name}"))?
    else {
        unreachable!("a simulation gives a simulation's report")
    };
    let spent = progress.spent();
    let packets = r.accounting.offered;
    Ok(Row {
        point: name.into(),
        iface: cfg.design.clone(),
        packets,
        virtual_ms: cfg.duration_ps as f64 / 1e9,
        cpu_s: spent.total_s(),
        packets_per_cpu_s: packets as f64 / spent.total_s(),
        spent,
        peak_rss_mb: peak_rss_mb(),
    })
}

/// The median of `xs`.
fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(f64::total_cmp);
    xs[xs.len() / 2]
}

/// Run every reference point `rounds` times, interleaved, and give each point's medians.
pub fn measure(ifaces: &[String], rounds: usize, divide: u64) -> Result<Vec<Row>> {
    let pts = points(ifaces, divide)?;
    if pts.is_empty() {
        let all: Vec<String> = points(&[], divide)?.into_iter().filter_map(|(_, p)| p.iface).collect();
        anyhow::bail!("--iface: no reference point runs {}; they run {}", ifaces.join(", "), all.join(", "));
    }
    let mut runs: Vec<Vec<Row>> = pts.iter().map(|_| Vec::new()).collect();
    for _ in 0..rounds {
        for ((name, p), runs) in pts.iter().zip(&mut runs) {
            runs.push(once(name, p)?);
        }
    }
    Ok(runs
        .into_iter()
        .map(|mut rs| {
            let m = |f: fn(&Row) -> f64| median(rs.iter().map(f).collect());
            let spent = sim::Spent {
                setup_s: m(|r| r.spent.setup_s),
                warmup_s: m(|r| r.spent.warmup_s),
                measurement_s: m(|r| r.spent.measurement_s),
                drain_s: m(|r| r.spent.drain_s),
            };
            let (cpu_s, rate) = (m(|r| r.cpu_s), m(|r| r.packets_per_cpu_s));
            let rss = rs.iter().map(|r| r.peak_rss_mb).collect::<Option<Vec<f64>>>().map(median);
            let first = rs.swap_remove(0);
            Row { cpu_s, packets_per_cpu_s: rate, spent, peak_rss_mb: rss, ..first }
        })
        .collect())
}

/// The rows as a table.
pub fn print(rounds: usize, rows: &[Row]) {
    println!("simulator speed, median of {rounds} round(s); CPU-seconds of the run's thread");
    println!(
        "{:<24} {:>9} {:>8} {:>8} {:>12} {:>8} {:>8} {:>8} {:>8} {:>9}",
        "point", "packets", "virt ms", "CPU s", "k pkt/CPU-s", "setup", "warm-up", "measure", "drain", "peak MB"
    );
    for r in rows {
        let rss = r.peak_rss_mb.map_or("-".into(), |m| format!("{m:.0}"));
        println!(
            "{:<24} {:>9} {:>8.3} {:>8.2} {:>12.1} {:>8.2} {:>8.2} {:>8.2} {:>8.2} {:>9}",
            r.point,
            r.packets,
            r.virtual_ms,
            r.cpu_s,
            r.packets_per_cpu_s / 1e3,
            r.spent.setup_s,
            r.spent.warmup_s,
            r.spent.measurement_s,
            r.spent.drain_s,
            rss
        );
    }
}
