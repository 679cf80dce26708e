//! `rxlab bench`: the per-packet cost of each design's receive path between two threads
//! ([`live::handoff`]), as ns per packet and as ratios to the two floors, an SPSC ring of packet pointers
//! and one of whole 64 B frames, all timed in the same run. Rounds interleave every path, so a machine
//! that slows down mid-run slows all of them, and the table gives each path's median round. `--vs-sim`
//! compares the live engine with the simulator instead ([`crate::vs_sim`]), and `--sim` times the
//! simulator itself ([`crate::sim_speed`]).

use anyhow::{Result, bail};
use clap::Args;
use ifaces::{IfaceConfig, RingSize};
use live::handoff::{time_frames, time_named, time_named_one_thread, time_pointers};
use serde::Serialize;
use std::time::Duration;

/// Arguments of `rxlab bench`.
#[derive(Args, Debug)]
pub struct BenchArgs {
    /// Designs to time, comma-separated (default: every design).
    #[arg(long, value_delimiter = ',')]
    iface: Vec<String>,
    /// Packets per timing (a count: `2M` is 2000000, `2Mi` 2097152).
    #[arg(long, default_value = "2M", value_parser = ifaces::ringsize::parse_count)]
    packets: u64,
    /// Interleaved rounds; each path's median round is reported.
    #[arg(long, value_parser = ifaces::ringsize::count::<usize>, default_value_t = 5)]
    rounds: usize,
    /// Receive burst (DPDK's default 32).
    #[arg(long, value_parser = ifaces::ringsize::count::<usize>, default_value_t = 32)]
    burst: usize,
    /// Receive ring size.
    #[arg(long, default_value = "1024")]
    ring: RingSize,
    /// The one-thread column's worker also runs the echo app and transmits, and its device side sends:
    /// the driver side is then a worker's receive + transmit per packet (`bench/peers.sh` sets it
    /// against DPDK testpmd's io forwarding).
    #[arg(long)]
    echo: bool,
    /// Instead: the live engine's cost per packet against the simulator's `this-machine` prediction, for
    /// privRing, rxBisect, COREC and Ensō with echo and one worker.
    #[arg(long)]
    vs_sim: bool,
    /// Instead: the simulator's speed (simulated packets per CPU-second, where the time goes, peak
    /// memory) on three reference points: the headline's privRing NAT, Ensō's 64 B echo on one core
    /// and nmKVS (`--iface` picks them by design).
    #[arg(long, conflicts_with = "vs_sim")]
    sim: bool,
    /// With `--sim`: divide each reference point's duration and warm-up by this (1: as the experiments
    /// run them).
    #[arg(long, default_value_t = 1, requires = "sim")]
    divide: u64,
    /// Print one JSON object instead of the table.
    #[arg(long)]
    json: bool,
}

/// One timed path.
#[derive(Debug, Serialize)]
struct Row {
    path: String,
    /// Median over the rounds, ns per packet.
    ns_per_packet: f64,
    /// Fastest round, ns per packet.
    min_ns_per_packet: f64,
    /// Median cost over the pointer ring's median.
    x_pointer_ring: f64,
    /// Median cost over the frame ring's median.
    x_frame_ring: f64,
    /// For a design, the medians with both sides on one thread, device and driver side, ns per packet:
    /// its code's cost without cross-core transfers.
    one_thread_ns_per_packet: Option<OneThread>,
}

/// A design's two sides timed on one thread, ns per packet (medians over the rounds).
#[derive(Debug, Serialize)]
struct OneThread {
    device: f64,
    driver: f64,
}

/// What `--json` prints.
#[derive(Debug, Serialize)]
struct Bench {
    packets: u64,
    rounds: usize,
    burst: usize,
    ring: u32,
    echo: bool,
    frame_len: usize,
    paths: Vec<Row>,
}

/// The first floor timed: packet pointers through an SPSC ring.
const POINTERS: &str = "spsc pointer ring";
/// The second floor timed: whole 64 B frames through an SPSC ring.
const FRAMES: &str = "spsc frame ring";

/// Run `rxlab bench`.
pub fn run(args: BenchArgs) -> Result<()> {
    if args.packets == 0 {
        bail!("--packets: must be at least 1");
    }
    if args.rounds == 0 {
        bail!("--rounds: must be at least 1");
    }
    if args.sim {
        if args.divide == 0 {
            bail!("--divide: must be at least 1");
        }
        let rows = crate::sim_speed::measure(&args.iface, args.rounds, args.divide)?;
        if args.json {
            println!("{}", serde_json::to_string_pretty(&rows)?);
        } else {
            crate::sim_speed::print(args.rounds, &rows);
        }
        return Ok(());
    }
    if args.vs_sim {
        let (ghz, rows) = crate::vs_sim::compare(args.rounds, 1.0)?;
        if args.json {
            println!("{}", serde_json::to_string_pretty(&rows)?);
        } else {
            crate::vs_sim::print(args.rounds, ghz, &rows);
        }
        return Ok(());
    }
    let cfg = IfaceConfig { ring: args.ring, burst: args.burst, ..IfaceConfig::default() };
    cfg.validate_common()?;
    let designs: Vec<String> = if args.iface.is_empty() {
        ifaces::DESIGN_NAMES.iter().map(|s| s.to_string()).collect()
    } else {
        args.iface.clone()
    };
    if let Some(bad) = designs.iter().find(|d| !ifaces::DESIGN_NAMES.contains(&d.as_str())) {
        return Err(ifaces::designs::unknown_design(bad).into());
    }
    if std::thread::available_parallelism().map_or(1, |n| n.get()) < 2 {
        eprintln!("rxlab: warning: fewer than two CPUs: the two threads share one and the timings mean little");
    }
    let paths: Vec<&str> = [POINTERS, FRAMES].into_iter().chain(designs.iter().map(String::as_str)).collect();
    let mut samples = vec![Vec::with_capacity(args.rounds); paths.len()];
    let mut one_thread = vec![Vec::with_capacity(args.rounds); paths.len()];
    for _ in 0..args.rounds {
        for ((path, out), alone) in paths.iter().zip(&mut samples).zip(&mut one_thread) {
            let took = match *path {
                POINTERS => time_pointers(args.packets, cfg.burst),
                FRAMES => time_frames(args.packets, cfg.burst),
                design => {
                    let (device, driver) = time_named_one_thread(design, &cfg, args.packets, args.echo)?;
                    alone.push((per_packet(device, args.packets), per_packet(driver, args.packets)));
                    time_named(design, &cfg, args.packets)?
                }
            };
            out.push(per_packet(took, args.packets));
        }
    }
    // Sorts each path's samples, so that the first is its fastest round.
    let medians: Vec<f64> = samples.iter_mut().map(|s| median(s)).collect();
    let rows = paths
        .iter()
        .zip(&samples)
        .zip(&medians)
        .zip(&mut one_thread)
        .map(|(((path, s), &m), alone)| Row {
            path: path.to_string(),
            ns_per_packet: m,
            min_ns_per_packet: s[0],
            x_pointer_ring: m / medians[0],
            x_frame_ring: m / medians[1],
            one_thread_ns_per_packet: (!alone.is_empty()).then(|| {
                let (mut device, mut driver): (Vec<f64>, Vec<f64>) = alone.iter().copied().unzip();
                OneThread { device: median(&mut device), driver: median(&mut driver) }
            }),
        })
        .collect();
    let bench = Bench {
        packets: args.packets,
        rounds: args.rounds,
        burst: cfg.burst,
        ring: cfg.ring.get(),
        echo: args.echo,
        frame_len: live::handoff::FRAME.len() + wire::frame::FCS_LEN,
        paths: rows,
    };
    if args.json {
        println!("{}", serde_json::to_string_pretty(&bench)?);
    } else {
        print_table(&bench);
    }
    Ok(())
}

fn per_packet(took: Duration, packets: u64) -> f64 {
    took.as_nanos() as f64 / packets as f64
}

/// Sorts `s` and returns its median.
pub fn median(s: &mut [f64]) -> f64 {
    s.sort_by(f64::total_cmp);
    let n = s.len();
    if n % 2 == 1 { s[n / 2] } else { (s[n / 2 - 1] + s[n / 2]) / 2.0 }
}

fn print_table(b: &Bench) {
    println!(
        "hand-off of {} B packets, NIC thread -> 1 worker, burst {}, ring {}: median of {} interleaved rounds of {} packets",
        b.frame_len, b.burst, b.ring, b.rounds, b.packets
    );
    let w = b.paths.iter().map(|r| r.path.len()).max().unwrap_or(0).max(4);
    println!(
        "  {:<w$}  {:>9}  {:>9}  {:>14}  {:>12}  {:>26}",
        "path",
        "ns/packet",
        "min",
        "x pointer ring",
        "x frame ring",
        if b.echo { "one thread, echo: dev + drv" } else { "one thread: device + driver" }
    );
    for r in &b.paths {
        let alone = r
            .one_thread_ns_per_packet
            .as_ref()
            .map_or("-".to_string(), |t| format!("{:.2} + {:.2}", t.device, t.driver));
        println!(
            "  {:<w$}  {:>9.2}  {:>9.2}  {:>14.2}  {:>12.2}  {:>26}",
            r.path, r.ns_per_packet, r.min_ns_per_packet, r.x_pointer_ring, r.x_frame_ring, alone
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_of_odd_and_even_counts() {
        assert_eq!(median(&mut [3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&mut [4.0, 1.0, 3.0, 2.0]), 2.5);
    }
}
