//! Simulator speed: simulated packets per wall-clock second for privRing with echo on 16 cores of the
//! R640 profile, 1500 B packets at 200 Gbps, the full model (`docs/performance.md`). Not a test: it prints.
//!
//! `cargo bench -p sim` (optionally `-- <milliseconds of virtual time>`, default 20). The machine may be
//! shared, so the rate is given per CPU-second of this thread (from /proc/thread-self/schedstat) as
//! well as per wall-clock second.

use sim::{SimConfig, run};
use std::time::Instant;
use traffic::{GenConfig, Rate, SizeSpec};

fn main() {
    let ms: u64 = std::env::args().skip(1).find_map(|a| a.parse().ok()).unwrap_or(20);
    let mut cfg = SimConfig {
        traffic: GenConfig {
            size: SizeSpec::Fixed(1518),
            flows: 1024,
            rate: Rate::Gbps(200.0),
            ..GenConfig::default()
        },
        duration_ps: ms * 1_000_000_000,
        warmup_ps: ms * 100_000_000,
        ..SimConfig::default()
    };
    cfg.iface.cores = 16;
    let (start, cpu_start) = (Instant::now(), cpu_ns());
    let report = match run(&cfg) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("simulation failed: {e}");
            std::process::exit(1);
        }
    };
    let wall = start.elapsed().as_secs_f64();
    let cpu = cpu_ns().zip(cpu_start).map(|(b, a)| (b - a) as f64 / 1e9);
    let packets = report.accounting.offered;
    println!("{report}");
    println!(
        "speed: {packets} packets ({ms} ms virtual) in {wall:.3} s wall = {:.2} M simulated packets per wall-second, {:.1}x slower than real time",
        packets as f64 / wall / 1e6,
        wall / (ms as f64 / 1e3)
    );
    if let Some(cpu) = cpu {
        println!("speed: {cpu:.3} CPU-seconds = {:.2} M simulated packets per CPU-second", packets as f64 / cpu / 1e6);
    }
}

/// CPU time this thread has run, ns (the first field of schedstat).
fn cpu_ns() -> Option<u64> {
    std::fs::read_to_string("/proc/thread-self/schedstat").ok()?.split_whitespace().next()?.parse().ok()
}
