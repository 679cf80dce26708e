//! `rxlab run`: one run of one design with one app. With no arguments it runs the built-in default
//! experiment.

use anyhow::{Result, anyhow};
use apps::AppParams;
use clap::{Args, ValueEnum};
use ifaces::shring::dynamic::Thresholds;
use ifaces::{IfaceConfig, RingSize};
use live::{LiveConfig, Pace, Traffic};
use std::path::PathBuf;
use std::time::Duration;
use traffic::sizes::SizeDist;
use traffic::units::parse_duration_ns;
use traffic::{GenConfig, Rate, SizeSpec};

/// Which engine drives the design.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Engine {
    /// Real threads on this machine: a software NIC thread and pinned workers.
    Live,
}

/// Arguments of `rxlab run`. The defaults are the built-in experiment: privRing with the echo app on
/// one core, 64 B packets offered as fast as the NIC thread can, one second measured.
#[derive(Args, Debug)]
pub struct RunArgs {
    /// Engine.
    #[arg(long, value_enum, default_value_t = Engine::Live)]
    engine: Engine,
    /// Receive interface design.
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
    /// Frame size with FCS: 64..=1518, `imix`, `dc` or `pcap:FILE`.
    #[arg(long, default_value = "64")]
    size: String,
    /// Offered rate: `10G` (framing included), `5Mpps`, or `max`.
    #[arg(long, default_value = "max")]
    rate: String,
    /// Measured time, e.g. `2s` or `500ms`.
    #[arg(long, default_value = "1s")]
    duration: String,
    /// Unmeasured warm-up before it.
    #[arg(long, default_value = "200ms")]
    warmup: String,
    /// Number of flows.
    #[arg(long, default_value_t = 64)]
    flows: usize,
    /// Replay this pcap/pcapng instead of generating traffic.
    #[arg(long)]
    pcap: Option<PathBuf>,
    /// Seed of the traffic generator.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Print one JSON object instead of a table.
    #[arg(long)]
    json: bool,
}

fn flag<T>(name: &str, parsed: Result<T, String>) -> Result<T> {
    parsed.map_err(|e| anyhow!("invalid --{name}: {e}"))
}

fn duration(name: &str, s: &str) -> Result<Duration> {
    flag(name, parse_duration_ns(s)).map(Duration::from_nanos)
}

/// Run `rxlab run`.
pub fn run(a: RunArgs) -> Result<()> {
    let size: SizeSpec = flag("size", a.size.parse())?;
    let iface = IfaceConfig {
        cores: a.cores,
        ring: flag("ring", a.ring.parse::<RingSize>())?,
        tx_ring: flag("tx-ring", a.tx_ring.parse::<RingSize>())?,
        cache: a.cache,
        burst: a.burst,
        share: a.share,
        list_batch: a.list_batch,
        ax: a.ax,
        bx: flag("bx", a.bx.parse::<RingSize>())?,
        ax_policy: flag("ax-policy", a.ax_policy.parse())?,
        dynamic: Thresholds { gbps: a.switch_gbps, mem_gib_per_s: a.switch_mem, ..Thresholds::default() },
        ..IfaceConfig::default()
    };
    let gen_cfg = GenConfig { seed: a.seed, size, flows: a.flows, ..GenConfig::default() };
    let pace = match a.rate.trim() {
        "max" => Pace::Max,
        r => {
            let rate: Rate = flag("rate", r.parse())?;
            Pace::Pps(match rate {
                Rate::Mpps(m) => m * 1e6,
                Rate::Gbps(_) => 1e12 / rate.gap_ps(SizeDist::from_spec(&gen_cfg.size)?.mean().round() as usize),
            })
        }
    };
    let traffic = match a.pcap {
        Some(p) => Traffic::Pcap(p),
        None => Traffic::Generate(gen_cfg),
    };
    let report = match a.engine {
        Engine::Live => live::run(&LiveConfig {
            design: a.iface,
            iface,
            app: a.app,
            app_params: AppParams::parse(&a.app_params).map_err(|e| anyhow!("invalid --app-params: {e}"))?,
            traffic,
            pace,
            duration: duration("duration", &a.duration)?,
            warmup: duration("warmup", &a.warmup)?,
        })?,
    };
    if a.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        println!("{report}");
    }
    Ok(())
}
