//! Simulator speed: simulated packets per wall-clock second for privRing with echo on 16 cores of the
//! R640 profile, 1500 B packets at 200 Gbps, the full model (issue 6, "Speed"). Not a test: it prints.
//!
//! `cargo bench -p sim` (optionally `-- <milliseconds of virtual time>`, default 20).

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
    let start = Instant::now();
    let report = match run(&cfg) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("simulation failed: {e}");
            std::process::exit(1);
        }
    };
    let wall = start.elapsed().as_secs_f64();
    let packets = report.accounting.offered;
    println!("{report}");
    println!(
        "speed: {packets} packets ({ms} ms virtual) in {wall:.3} s wall = {:.2} M simulated packets/s, {:.1}x slower than real time",
        packets as f64 / wall / 1e6,
        wall / (ms as f64 / 1e3)
    );
}
