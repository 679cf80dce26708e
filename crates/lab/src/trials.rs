//! `--trials N`: a point run N times, the simulator's seed stepping up from `--sim-seed`, reported as the
//! papers report their runs: "trimmed means of ten runs; the minimum and maximum are discarded" (shRing
//! §5; rxBisect §6 and nicmem §6 say the same). Every number of the report (its JSON, so `results.csv`
//! and every check of `rxlab reproduce`) is the trimmed mean of the runs' same number. What comes as a
//! list (the latency CDF, the timeline, an NDR search's trials) is the median run's: the run whose
//! throughput (or no-drop rate) is the median, whose engine report the text shows, followed by every
//! run's headline numbers. A server with two states shows here as runs far apart (some tipped, some not)
//! where one run would show one of them.

use crate::params::Params;
use crate::point::{self, Outcome};
use crate::results::Row;
use anyhow::{Context, Result};
use rayon::prelude::*;
use serde::Serialize;
use serde_json::Value;
use std::fmt::Write;

/// One run's headline numbers.
#[derive(Debug, Clone, Serialize)]
pub struct Run {
    /// Its `--sim-seed`.
    pub seed: u64,
    /// Throughput on the wire, Gbps (with `--ndr`, the no-drop rate).
    pub gbps_wire: f64,
    /// Mean latency, ns.
    pub latency_mean: f64,
    /// Mean receive ring occupancy, a share of the ring.
    pub ring_occupancy: f64,
    /// Cycles per packet.
    pub cycles: f64,
    /// DRAM traffic, read and write, GB/s.
    pub memory_gbs: f64,
}

/// What `--trials` adds to a report, as `trials`.
#[derive(Debug, Clone, Serialize)]
pub struct Trials {
    /// Runs.
    pub n: usize,
    /// Whether the lowest and highest of each number were dropped (three runs or more).
    pub trimmed: bool,
    /// The seed of the median run, whose lists and text the report shows.
    pub shown_seed: u64,
    /// Every run, in seed order.
    pub runs: Vec<Run>,
}

/// A result row's `metric` in each of its trials, as (seed, value) in seed order, for the metrics every
/// trial keeps ([`Run`]: the throughput or no-drop rate, the mean latency, the ring occupancy, cycles per
/// packet, memory traffic); `None` for other metrics and for points run once.
pub fn per_run(row: &Row, metric: &str) -> Option<Vec<(u64, f64)>> {
    let ndr = row.text("ndr") == "true";
    let field = match metric {
        "ndr.gbps" if ndr => "gbps_wire",
        "throughput.gbps_wire" if !ndr => "gbps_wire",
        "latency.mean" => "latency_mean",
        "ring_occupancy" => "ring_occupancy",
        "cycles.total" => "cycles",
        "derived.memory_gbs" => "memory_gbs",
        _ => return None,
    };
    let n = row.metric("trials.n")? as usize;
    (0..n)
        .map(|i| {
            let seed = row.metric(&format!("trials.runs.{i}.seed"))? as u64;
            Some((seed, row.metric(&format!("trials.runs.{i}.{field}"))?))
        })
        .collect()
}

/// The mean of `xs` without its lowest and highest value when there are three or more.
pub fn trimmed_mean(xs: &[f64]) -> f64 {
    let mut v = xs.to_vec();
    v.sort_by(f64::total_cmp);
    let kept = if v.len() >= 3 { &v[1..v.len() - 1] } else { &v[..] };
    kept.iter().sum::<f64>() / kept.len() as f64
}

/// The number at dotted `path` of a report, NaN where it has none.
fn number(json: &Value, path: &str) -> f64 {
    path.split('.').try_fold(json, |v, k| v.get(k)).and_then(Value::as_f64).unwrap_or(f64::NAN)
}

/// `shown` with every number outside lists replaced by the trimmed mean of the same number in `all`
/// (kept as `shown`'s where a run lacks it).
fn aggregate(shown: &Value, all: &[&Value]) -> Value {
    match shown {
        Value::Number(_) => match all.iter().map(|v| v.as_f64()).collect::<Option<Vec<f64>>>() {
            Some(xs) => serde_json::Number::from_f64(trimmed_mean(&xs)).map_or(Value::Null, Value::Number),
            None => shown.clone(),
        },
        Value::Object(m) => Value::Object(
            m.iter()
                .map(|(k, v)| {
                    let same: Vec<&Value> = all.iter().filter_map(|o| o.get(k)).collect();
                    (k.clone(), if same.len() == all.len() { aggregate(v, &same) } else { v.clone() })
                })
                .collect(),
        ),
        _ => shown.clone(),
    }
}

/// Run the point of resolved parameters `p` `n` times (seeds `--sim-seed` up) and report trimmed means.
pub fn run(p: &Params, n: u32) -> Result<Outcome> {
    let base = p.sim_seed.unwrap_or(1);
    // The trials run in parallel on the current thread pool (a sweep's `--jobs`); a live one waits for the
    // machine to itself (`point::report_observed`). Collected in seed order, whichever ends first.
    let outs = (base..base + u64::from(n))
        .into_par_iter()
        .map(|seed| {
            let at = Params { sim_seed: Some(seed), trials: None, ..p.clone() };
            point::run(&at).map(|o| (seed, o)).with_context(|| format!("the trial with --sim-seed {seed}"))
        })
        .collect::<Result<Vec<_>>>()?;
    let ndr = p.ndr == Some(true);
    let key = if ndr { "ndr.gbps" } else { "throughput.gbps_wire" };
    let runs: Vec<Run> = outs
        .iter()
        .map(|(seed, o)| Run {
            seed: *seed,
            gbps_wire: number(&o.json, key),
            latency_mean: number(&o.json, "latency.mean"),
            ring_occupancy: number(&o.json, "ring_occupancy"),
            cycles: number(&o.json, "cycles.total"),
            memory_gbs: number(&o.json, "memory.read_gbs") + number(&o.json, "memory.write_gbs"),
        })
        .collect();
    let mut order: Vec<usize> = (0..runs.len()).collect();
    order.sort_by(|&a, &b| runs[a].gbps_wire.total_cmp(&runs[b].gbps_wire));
    let (shown_seed, shown) = &outs[order[(order.len() - 1) / 2]];
    let all: Vec<&Value> = outs.iter().map(|(_, o)| &o.json).collect();
    let mut json = aggregate(&shown.json, &all);
    let trials = Trials { n: runs.len(), trimmed: runs.len() >= 3, shown_seed: *shown_seed, runs };
    let text = format!("{}\n{}", shown.text.trim_end(), table(&trials, ndr));
    if let Value::Object(m) = &mut json {
        m.insert("trials".into(), serde_json::to_value(&trials)?);
    }
    Ok(Outcome { json, text })
}

/// The runs and their trimmed means as text.
fn table(t: &Trials, ndr: bool) -> String {
    let mean = if t.trimmed { "trimmed mean (lowest and highest dropped)" } else { "mean" };
    let mut s = format!(
        "trials: {} runs; every number of the JSON and results.csv is the {mean} of the runs', the report above \
         is seed {}'s, the median run\n",
        t.n, t.shown_seed
    );
    let gbps = if ndr { "NDR Gbps" } else { "Gbps" };
    let _ =
        writeln!(s, "{:>8} {gbps:>9} {:>12} {:>11} {:>8} {:>9}", "seed", "mean us", "ring occ %", "cycles", "mem GB/s");
    let row = |s: &mut String, name: &str, r: &Run| {
        let (lat, occ) = (r.latency_mean / 1e3, r.ring_occupancy * 100.0);
        let _ = writeln!(
            s,
            "{name:>8} {:>9.1} {lat:>12.1} {occ:>11.1} {:>8.0} {:>9.1}",
            r.gbps_wire, r.cycles, r.memory_gbs
        );
    };
    for r in &t.runs {
        row(&mut s, &r.seed.to_string(), r);
    }
    let f = |g: fn(&Run) -> f64| trimmed_mean(&t.runs.iter().map(g).collect::<Vec<_>>());
    let trimmed = Run {
        seed: 0,
        gbps_wire: f(|r| r.gbps_wire),
        latency_mean: f(|r| r.latency_mean),
        ring_occupancy: f(|r| r.ring_occupancy),
        cycles: f(|r| r.cycles),
        memory_gbs: f(|r| r.memory_gbs),
    };
    row(&mut s, "trimmed", &trimmed);
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trimmed_means_drop_the_extremes_from_three_runs() {
        assert_eq!(trimmed_mean(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(trimmed_mean(&[10.0, 1.0, 2.0, 3.0]), 2.5);
        assert_eq!(trimmed_mean(&[1.0, 2.0]), 1.5);
        assert_eq!(trimmed_mean(&[7.0]), 7.0);
    }

    /// Poisson arrivals into small rings of two cores (seed 5 unless `extra` gives one): runs that differ
    /// from seed to seed.
    fn params(extra: &str) -> Params {
        let seed = if extra.contains("sim_seed") { "" } else { "sim_seed = 5\n" };
        let text = format!(
            "engine = 'sim'\napp = 'echo'\ncores = 2\nring = 64\nsize = 64\nrate = '20Mpps'\narrivals = 'poisson'\n\
             duration = '40us'\nwarmup = '10us'\n{seed}{extra}"
        );
        crate::params::from_table(toml::from_str(&text).unwrap()).unwrap().resolved()
    }

    #[test]
    fn each_number_is_the_trimmed_mean_of_the_seeds_runs_and_lists_are_the_median_runs() {
        let out = point::run(&params("trials = 3")).unwrap();
        assert_eq!(out.json, point::run(&params("trials = 3")).unwrap().json, "deterministic");
        let single: Vec<Value> =
            (5..8).map(|s| point::run(&params(&format!("sim_seed = {s}"))).unwrap().json).collect();
        let path = "latency.mean";
        let xs: Vec<f64> = single.iter().map(|j| number(j, path)).collect();
        assert!(xs[0] != xs[1] || xs[1] != xs[2], "the seeds' runs differ: {xs:?}");
        assert_eq!(number(&out.json, path), trimmed_mean(&xs));
        let t = &out.json["trials"];
        assert_eq!(t["n"], 3);
        let seeds: Vec<u64> = t["runs"].as_array().unwrap().iter().map(|r| r["seed"].as_u64().unwrap()).collect();
        assert_eq!(seeds, [5, 6, 7]);
        let kept = |i: usize, run: &str, report: f64| assert_eq!(t["runs"][i][run].as_f64(), Some(report), "{run}");
        kept(1, "cycles", number(&single[1], "cycles.total"));
        kept(2, "memory_gbs", number(&single[2], "memory.read_gbs") + number(&single[2], "memory.write_gbs"));
        let shown = &single[(t["shown_seed"].as_u64().unwrap() - 5) as usize];
        assert_eq!(out.json["latency_cdf"], shown["latency_cdf"]);
        assert!(out.text.contains("trials: 3 runs") && out.text.contains("trimmed"), "{}", out.text);
    }

    /// Trials run in parallel: the report is the same whatever the pool's size and whichever trial ends
    /// first.
    #[test]
    fn the_report_does_not_depend_on_how_many_trials_run_at_once() {
        let on = |threads: usize| {
            crate::sweep::pool(Some(threads)).unwrap().install(|| point::run(&params("trials = 4")).unwrap())
        };
        let (one, three) = (on(1), on(3));
        assert_eq!(one.json, three.json);
        assert_eq!(one.text, three.text);
    }

    #[test]
    fn zero_trials_is_an_error() {
        let e = point::run(&params("trials = 0")).unwrap_err();
        assert!(format!("{e:#}").contains("invalid --trials"), "{e:#}");
    }
}
