//! `rxlab soak`: long runs that measure what the end-of-run invariants promise (DESIGN.md,
//! "Invariants"). Every design is simulated (at `--rate`, 200 Gbps by default) in rounds (all designs of a round in parallel)
//! until `--packets` have been offered, then each design family runs live for `--live-seconds`. Each run
//! checks its own invariants and fails loudly (no buffer leaked or freed twice, nothing delivered twice,
//! per-flow order where promised); the soak also checks every simulated packet is accounted for
//! (offered = delivered + dropped + queued) and that the process's memory stays flat: the resident set
//! once a round's runs are gone, after the first round against the one at the end. Each round's peak is
//! reported too, but not checked: it depends on which designs' runs happen to overlap (measured: 98.1
//! and 120.1 MiB in two rounds of one soak whose resident set after them fell from 56.8 to 47.8 MiB).

use crate::params::{Engine, Params, Quantity};
use crate::point::{self, Report};
use anyhow::{Result, anyhow, bail};
use clap::Args;
use rayon::prelude::*;
use std::time::Instant;

/// One design of each family, for the live part.
const LIVE_FAMILIES: &[&str] = &["privring", "shring", "rxbisect", "corec", "enso", "nicmem-host"];

/// How much the resident set between rounds may grow from the first round to the end: a leak of one
/// buffer per run would pass, one per packet would not.
const RSS_GROWTH: f64 = 1.10;

/// Arguments of `rxlab soak`.
#[derive(Args, Debug)]
pub struct SoakArgs {
    /// Simulated packets offered in all, over every design.
    #[arg(long, value_parser = ifaces::ringsize::count::<u64>, default_value_t = 1_000_000_000)]
    packets: u64,
    /// Virtual time of one simulated run; rounds of runs repeat until --packets have been offered.
    #[arg(long, default_value = "20ms")]
    chunk: String,
    /// Live seconds per design family (privring, shring, rxbisect, corec, enso, nicmem); 0 skips them.
    #[arg(long, default_value_t = 600)]
    live_seconds: u64,
    /// Parallel simulated runs [default: the machine's cores].
    #[arg(long)]
    jobs: Option<usize>,
    /// Parameters of every run (e.g. `--rate`, `--cores`, `--size`, `--app`); the soak sets the engine,
    /// the design, the duration and the simulator's seed.
    #[command(flatten)]
    flags: Params,
}

/// Start measuring a new peak: `VmHWM` restarts from the resident set now (Linux's clear_refs `5`; where
/// it cannot be written the peak stays the process's).
fn reset_peak() {
    let _ = std::fs::write("/proc/self/clear_refs", "5");
}

/// Resident set now and at its peak, in bytes (`VmRSS`, `VmHWM` of /proc/self/status).
fn rss() -> (u64, u64) {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let kib = |key: &str| {
        status.lines().find_map(|l| l.strip_prefix(key)).and_then(|v| v.trim().trim_end_matches(" kB").parse().ok())
    };
    (kib("VmRSS:").unwrap_or(0) * 1024, kib("VmHWM:").unwrap_or(0) * 1024)
}

fn mib(bytes: u64) -> String {
    format!("{:.1} MiB", bytes as f64 / (1 << 20) as f64)
}

/// The resolved parameters of one run of `design` on `engine`.
fn params(a: &SoakArgs, engine: Engine, design: &str, duration: &str, seed: u64) -> Params {
    let run = Params {
        engine: Some(engine),
        iface: Some(design.to_string()),
        duration: Some(Quantity(duration.to_string())),
        sim_seed: Some(seed),
        ..Params::default()
    };
    a.flags.overlay(&run).resolved()
}

/// One simulated run; returns the packets it offered after checking each is accounted for.
fn simulate(a: &SoakArgs, design: &str, round: u64) -> Result<u64> {
    let fail = |e: anyhow::Error| anyhow!("soak: {design}, round {round}: {e:#}");
    let cfg = point::build(&params(a, Engine::Sim, design, &a.chunk, round)).map_err(fail)?;
    let Report::Sim(r) = point::report(&cfg).map_err(fail)? else { unreachable!("a simulation config") };
    let c = &r.accounting;
    let accounted = c.delivered + c.dropped.values().sum::<u64>() + c.queued;
    if accounted != c.offered {
        return Err(fail(anyhow!("{} packets offered but {accounted} accounted for: {c:?}", c.offered)));
    }
    Ok(c.offered)
}

/// Run `rxlab soak`.
pub fn run(a: SoakArgs) -> Result<()> {
    let designs = ifaces::DESIGN_NAMES;
    let pool = crate::sweep::pool(a.jobs)?;
    let start = Instant::now();
    let (mut offered, mut round, mut after) = (0u64, 0u64, vec![]);
    let bar =
        crate::bar::new(a.packets, "{bar:40} {human_pos}/{human_len} simulated packets  {elapsed} elapsed, {eta} left");
    while offered < a.packets {
        round += 1;
        reset_peak();
        let counts: Vec<u64> =
            pool.install(|| designs.par_iter().map(|d| simulate(&a, d, round)).collect::<Result<_>>())?;
        offered += counts.iter().sum::<u64>();
        bar.set_position(offered.min(a.packets));
        after.push(rss());
    }
    bar.finish_and_clear();
    let (first_rss, first_peak) = after.first().copied().unwrap_or_default();
    let (end_rss, end_peak) = after.last().copied().unwrap_or_default();
    let peaks = after.iter().map(|(_, p)| *p);
    let (low, high) = (peaks.clone().min().unwrap_or(0), peaks.max().unwrap_or(0));
    println!(
        "sim: {offered} packets offered in {round} rounds of {} designs ({} of virtual time each), every one \
         accounted for, every run's invariants held; {:.0} s",
        designs.len(),
        a.chunk,
        start.elapsed().as_secs_f64()
    );
    println!(
        "     resident set after round 1: {} (its peak {}), after the last: {} (its peak {}); peaks of the \
         rounds {} to {}",
        mib(first_rss),
        mib(first_peak),
        mib(end_rss),
        mib(end_peak),
        mib(low),
        mib(high)
    );
    if end_rss as f64 > first_rss as f64 * RSS_GROWTH {
        bail!("soak: the resident set between rounds grew from {} to {}: a leak", mib(first_rss), mib(end_rss));
    }
    if a.live_seconds > 0 {
        for family in LIVE_FAMILIES {
            let t = Instant::now();
            reset_peak();
            let p = params(&a, Engine::Live, family, &format!("{}s", a.live_seconds), 1);
            let cfg = point::build(&p).map_err(|e| anyhow!("soak: live {family}: {e:#}"))?;
            let Report::Live(r) = point::report(&cfg).map_err(|e| anyhow!("soak: live {family}: {e:#}"))? else {
                unreachable!("a live config")
            };
            let (now, peak) = rss();
            println!(
                "live {family}: {:.1} s, {:.2} Mpps delivered, drop ratio {:.4}, invariants held ({}); resident \
                 set {} after it (its peak {}); {:.0} s",
                r.seconds,
                r.throughput.mpps,
                r.drop_ratio,
                r.invariants.join(", "),
                mib(now),
                mib(peak),
                t.elapsed().as_secs_f64()
            );
        }
    }
    Ok(())
}
