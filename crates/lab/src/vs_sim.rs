//! `rxlab bench --vs-sim`: whether the simulator's `this-machine` profile predicts the live engine. For
//! privRing, rxBisect, COREC and Ensō with echo and one worker, the live worker's cost per packet (its
//! `busy_ns_per_packet`: receive, app and transmit in bursts that received packets) against the
//! simulator's for the same configuration (busy cycles per packet at the profile's clock), the simulator
//! offered the rate the live run forwarded. Rounds interleave the designs; each number is the median.

use crate::params::{Engine, Params, Quantity};
use crate::point::{self, Report};
use anyhow::{Result, bail};
use serde::Serialize;

/// The designs compared.
pub const DESIGNS: [&str; 4] = ["privring", "rxbisect", "corec", "enso"];
/// The profile that describes this host: `rxlab profile detect`'s, on the R640's latencies.
const PROFILE: &str = "this-machine";

/// This host's profile, written to a temporary file the simulated runs load.
fn host_profile() -> Result<(sim::Profile, tempfile::NamedTempFile)> {
    let host = sim::host::read().map_err(|e| anyhow::anyhow!("--vs-sim: cannot detect this host: {e}"))?;
    let p = sim::host::profile(&host, &sim::Profile::r640_silver4216(), PROFILE)?;
    let mut file = tempfile::Builder::new().prefix("rxlab-this-machine-").suffix(".toml").tempfile()?;
    std::io::Write::write_all(
        &mut file,
        sim::profile_file::to_toml(&p, "this host (rxlab bench --vs-sim)", &[]).as_bytes(),
    )?;
    Ok((p, file))
}

/// One design's comparison (medians over the rounds).
#[derive(Debug, Serialize)]
pub struct Row {
    design: String,
    /// Live worker's ns per packet.
    live_ns: f64,
    /// Simulated core's ns per packet.
    sim_ns: f64,
    /// The same in the profile's cycles.
    sim_cycles: f64,
    /// `live_ns / sim_ns`.
    live_over_sim: f64,
    /// What the live run forwarded, Mpps (the rate the simulator is offered).
    live_mpps: f64,
}

/// Run every design `rounds` times on both engines and compare.
pub fn compare(rounds: usize, seconds: f64) -> Result<(f64, Vec<Row>)> {
    let (profile, file) = host_profile()?;
    let ghz = profile.cpu.freq_ghz;
    let path = file.path().to_string_lossy().to_string();
    let mut samples: Vec<Vec<(f64, f64, f64)>> = vec![Vec::new(); DESIGNS.len()];
    for _ in 0..rounds {
        for (design, out) in DESIGNS.iter().zip(&mut samples) {
            let live = match report(design, Engine::Live, "max", &format!("{seconds}s"), &path)? {
                Report::Live(r) => r,
                Report::Sim(_) => unreachable!("a live point gives a live report"),
            };
            let (live_mpps, live_ns) = (live.throughput.mpps, live.per_core[0].busy_ns_per_packet);
            if live_mpps <= 0.0 {
                bail!("--vs-sim: the live {design} run forwarded nothing");
            }
            let sim = match report(design, Engine::Sim, &format!("{live_mpps:.3}Mpps"), "5ms", &path)? {
                Report::Sim(r) => r,
                Report::Live(_) => unreachable!("a sim point gives a sim report"),
            };
            out.push((live_ns, sim.cycles.total, live_mpps));
        }
    }
    let rows = DESIGNS
        .iter()
        .zip(samples)
        .map(|(design, s)| {
            let pick = |f: fn(&(f64, f64, f64)) -> f64| crate::bench::median(&mut s.iter().map(f).collect::<Vec<_>>());
            let (live_ns, sim_cycles, live_mpps) = (pick(|s| s.0), pick(|s| s.1), pick(|s| s.2));
            let sim_ns = sim_cycles / ghz;
            Row { design: design.to_string(), live_ns, sim_ns, sim_cycles, live_over_sim: live_ns / sim_ns, live_mpps }
        })
        .collect();
    Ok((ghz, rows))
}

/// One echo run of `design` with one worker and 64 B frames on `engine`.
fn report(design: &str, engine: Engine, rate: &str, duration: &str, profile: &str) -> Result<Report> {
    let q = |s: &str| Some(Quantity(s.to_string()));
    let p = Params {
        engine: Some(engine),
        iface: Some(design.into()),
        app: Some("echo".into()),
        cores: Some(1),
        size: q("64"),
        rate: q(rate),
        duration: q(duration),
        profile: Some(profile.into()),
        ..Params::default()
    };
    point::report(&point::build(&p.resolved())?)
}

/// Print the table.
pub fn print(rounds: usize, ghz: f64, rows: &[Row]) {
    println!(
        "live vs simulated cost per packet, echo, 1 worker, 64 B, profile {PROFILE} ({ghz:.3} GHz): median of {rounds} interleaved rounds"
    );
    println!(
        "  {:<9}  {:>11}  {:>10}  {:>10}  {:>10}  {:>9}",
        "design", "live Mpps", "live ns", "sim cycles", "sim ns", "live/sim"
    );
    for r in rows {
        println!(
            "  {:<9}  {:>11.2}  {:>10.1}  {:>10.1}  {:>10.1}  {:>9.2}",
            r.design, r.live_mpps, r.live_ns, r.sim_cycles, r.sim_ns, r.live_over_sim
        );
    }
}
