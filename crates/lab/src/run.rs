//! `rxlab run`: one run of one design with one app, in either engine. With no arguments it runs the
//! built-in default experiment.

use crate::traffic_args::{TrafficArgs, flag};
use anyhow::{Result, anyhow};
use apps::AppParams;
use clap::{Args, ValueEnum};
use ifaces::shring::dynamic::Thresholds;
use ifaces::{IfaceConfig, RingSize};
use live::{LiveConfig, Pace, Traffic};
use std::path::PathBuf;
use std::time::Duration;
use traffic::Rate;
use traffic::sizes::SizeDist;
use traffic::units::parse_duration_ns;

/// Which engine drives the design.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Engine {
    /// Real threads on this machine: a software NIC thread and pinned workers.
    Live,
    /// The deterministic simulation of a whole server (machine profiles).
    Sim,
}

/// Arrival process of the simulator.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ArrivalsArg {
    /// The generator's own send times.
    Paced,
    /// Poisson arrivals at the same mean rate.
    Poisson,
}

/// Arguments of `rxlab run`. The defaults are the built-in experiment: privRing with the echo app on
/// one core, 64 B packets offered as fast as the NIC thread can, one second measured.
#[derive(Args, Debug)]
pub struct RunArgs {
    /// Engine.
    #[arg(long, value_enum, default_value_t = Engine::Live)]
    engine: Engine,
    /// Receive interface design (see `crates/ifaces/README.md`).
    #[arg(long, default_value = "privring")]
    iface: String,
    /// Network function run on every core.
    #[arg(long, default_value = "echo")]
    app: String,
    /// App parameters, `key=value` separated by commas, e.g. `flows=1M,reads=4`.
    #[arg(long, default_value = "")]
    app_params: String,
    /// Worker cores.
    #[arg(long, default_value_t = 1)]
    cores: usize,
    /// Receive ring size per core (a power of two; `1Ki` works).
    #[arg(long, default_value = "1024")]
    ring: String,
    /// Transmit ring size per core.
    #[arg(long, default_value = "1024")]
    tx_ring: String,
    /// Packets per receive burst (DPDK's 32).
    #[arg(long, default_value_t = 32)]
    burst: usize,
    /// Per-core buffer cache (DPDK mempool cache).
    #[arg(long, default_value_t = 256)]
    cache: usize,
    /// shRing: cores sharing one Rx ring (must divide --cores).
    #[arg(long, default_value_t = 8)]
    share: usize,
    /// Batched RxList: packets per multi-packet descriptor.
    #[arg(long, default_value_t = 4)]
    list_batch: u32,
    /// rxBisect: entries of each allocation (Ax) ring (at least 64, the vendor minimum).
    #[arg(long, default_value_t = 128)]
    ax: u32,
    /// rxBisect: entries of each bisected reception (Bx) ring.
    #[arg(long, default_value = "1024")]
    bx: String,
    /// rxBisect: Ax ring the NIC uses when the linked one is empty: `random` or `round-robin`.
    #[arg(long, default_value = "random")]
    ax_policy: String,
    /// Dynamic shRing: throughput threshold for switching to shared rings, Gbps (shRing §4.6: 170).
    #[arg(long, default_value_t = 170.0)]
    switch_gbps: f64,
    /// Dynamic shRing: memory-bandwidth threshold, GiB/s (shRing §4.6: 25).
    #[arg(long, default_value_t = 25.0)]
    switch_mem: f64,
    #[command(flatten)]
    traffic: TrafficArgs,
    /// Offered rate: `10G` (framing included), `5Mpps`, or `max` (live only). Default: `max` live,
    /// `200G` in the simulator (the papers' two 100 GbE ports).
    #[arg(long, allow_hyphen_values = true)]
    rate: Option<String>,
    /// Time traffic is offered, measured after the warm-up: e.g. `2s` live, `5ms` simulated.
    #[arg(long)]
    duration: Option<String>,
    /// Unmeasured warm-up before it.
    #[arg(long)]
    warmup: Option<String>,
    /// Replay this pcap/pcapng instead of generating traffic (live).
    #[arg(long)]
    pcap: Option<PathBuf>,
    /// Simulator: machine profile.
    #[arg(long, default_value = "r640-silver4216")]
    profile: String,
    /// Simulator: override the profile's DDIO ways (0 turns DDIO off).
    #[arg(long)]
    ddio_ways: Option<usize>,
    /// Simulator: arrival process.
    #[arg(long, value_enum, default_value_t = ArrivalsArg::Paced)]
    arrivals: ArrivalsArg,
    /// Simulator: seed of its own random stream.
    #[arg(long, default_value_t = 1)]
    sim_seed: u64,
    /// Print one JSON object instead of a table.
    #[arg(long)]
    json: bool,
}

fn duration(name: &str, s: &str) -> Result<Duration> {
    flag(name, parse_duration_ns(s)).map(Duration::from_nanos)
}

impl RunArgs {
    fn iface(&self) -> Result<IfaceConfig> {
        Ok(IfaceConfig {
            cores: self.cores,
            ring: flag("ring", self.ring.parse::<RingSize>())?,
            tx_ring: flag("tx-ring", self.tx_ring.parse::<RingSize>())?,
            cache: self.cache,
            burst: self.burst,
            share: self.share,
            list_batch: self.list_batch,
            ax: self.ax,
            bx: flag("bx", self.bx.parse::<RingSize>())?,
            ax_policy: flag("ax-policy", self.ax_policy.parse())?,
            dynamic: Thresholds { gbps: self.switch_gbps, mem_gib_per_s: self.switch_mem, ..Thresholds::default() },
            ..IfaceConfig::default()
        })
    }

    fn app_params(&self) -> Result<AppParams> {
        AppParams::parse(&self.app_params).map_err(|e| anyhow!("invalid --app-params: {e}"))
    }

    fn times(&self, duration_default: &str, warmup_default: &str) -> Result<(Duration, Duration)> {
        Ok((
            duration("duration", self.duration.as_deref().unwrap_or(duration_default))?,
            duration("warmup", self.warmup.as_deref().unwrap_or(warmup_default))?,
        ))
    }
}

/// Run `rxlab run`.
pub fn run(a: RunArgs) -> Result<()> {
    let report = match a.engine {
        Engine::Live => {
            let (duration, warmup) = a.times("1s", "200ms")?;
            let rate = a.rate.as_deref().unwrap_or("max").trim();
            let parsed: Option<Rate> = (rate != "max").then(|| flag("rate", rate.parse())).transpose()?;
            // With `max` the NIC thread ignores the generator's rate; any valid one will do.
            let gen_cfg = a.traffic.config(parsed.unwrap_or(Rate::Gbps(100.0)), Some(a.cores))?;
            let pace = match parsed {
                None => Pace::Max,
                Some(Rate::Mpps(m)) => Pace::Pps(m * 1e6),
                Some(r) => Pace::Pps(1e12 / r.gap_ps(SizeDist::from_spec(&gen_cfg.size)?.mean().round() as usize)),
            };
            let traffic = match &a.pcap {
                Some(p) => Traffic::Pcap(p.clone()),
                None => Traffic::Generate(gen_cfg),
            };
            let cfg = LiveConfig {
                design: a.iface.clone(),
                iface: a.iface()?,
                app: a.app.clone(),
                app_params: a.app_params()?,
                traffic,
                pace,
                duration,
                warmup,
            };
            let r = live::run(&cfg)?;
            (serde_json::to_string_pretty(&r)?, r.to_string())
        }
        Engine::Sim => {
            if a.pcap.is_some() {
                anyhow::bail!(
                    "invalid --pcap: the simulator generates its traffic; replay a capture with --engine live"
                );
            }
            let (duration, warmup) = a.times("2ms", "200us")?;
            let rate = a.rate.as_deref().unwrap_or("200G");
            if rate.trim() == "max" {
                anyhow::bail!(
                    "invalid --rate: `max` is the live NIC thread's pace; give the simulator a rate, e.g. 200G"
                );
            }
            let cfg = sim::SimConfig {
                profile: a.profile.clone(),
                ddio_ways: a.ddio_ways,
                iface: a.iface()?,
                design: a.iface.clone(),
                app: a.app.clone(),
                app_params: a.app_params()?,
                traffic: a.traffic.config(flag("rate", rate.parse())?, Some(a.cores))?,
                arrivals: match a.arrivals {
                    ArrivalsArg::Paced => sim::Arrivals::Paced,
                    ArrivalsArg::Poisson => sim::Arrivals::Poisson,
                },
                duration_ps: (warmup + duration).as_nanos() as u64 * 1000,
                warmup_ps: warmup.as_nanos() as u64 * 1000,
                seed: a.sim_seed,
            };
            let r = sim::run(&cfg)?;
            (serde_json::to_string_pretty(&r)?, r.to_string())
        }
    };
    println!("{}", if a.json { report.0 } else { report.1 });
    Ok(())
}
