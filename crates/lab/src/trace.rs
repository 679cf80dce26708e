//! `rxlab trace`: generate synthetic traces and inspect pcap/pcapng files. Argument parsing and output
//! formatting only; the work is in the `traffic` crate.

use anyhow::{Context, Result, bail};
use clap::{Args, Subcommand};
use std::fmt::Write as _;
use std::path::PathBuf;
use traffic::inspect::InspectOptions;
use traffic::units::parse_duration_ns;
use traffic::{
    Burst, Container, GenConfig, Generator, IpVersion, OutputFormat, Popularity, Rate, Resolution, SizeSpec, Steering,
    Stop, TraceReader, TraceSummary,
};
use wire::L4Proto;

/// Subcommands of `rxlab trace`.
#[derive(Subcommand)]
pub enum TraceCommand {
    /// Write a synthetic trace (seeded, deterministic) to a pcap or pcapng file.
    Gen(GenArgs),
    /// Summarise a pcap/pcapng file: volume, rate, sizes, flows and the RSS spread over N queues.
    Inspect(InspectArgs),
}

/// Arguments of `rxlab trace gen`.
#[derive(Args)]
pub struct GenArgs {
    /// Frame size, FCS included: 64..=1518, `imix` (64/570/1518 B at 7:4:1), `dc` (200/1400 B at 1:1,
    /// the bimodal data-centre mix) or `pcap:FILE` (the sizes of a capture).
    #[arg(long, default_value = "64")]
    size: String,
    /// Number of flows.
    #[arg(long, default_value_t = 1)]
    flows: usize,
    /// Zipf exponent of flow popularity (default: uniform).
    #[arg(long)]
    zipf: Option<f64>,
    /// Offered rate: Gbps on the wire with framing (`10G`, `400Mbps`) or packets (`5Mpps`, `500Kpps`).
    #[arg(long, default_value = "10G", allow_hyphen_values = true)]
    rate: String,
    /// Number of packets (default 1000 unless --duration is given).
    #[arg(long, conflicts_with = "duration")]
    count: Option<u64>,
    /// Length of the trace instead of a count, e.g. `10ms`.
    #[arg(long, allow_hyphen_values = true)]
    duration: Option<String>,
    /// On/off bursts `ON:OFF`, e.g. `100us:50us` (bare numbers are microseconds).
    #[arg(long)]
    burst: Option<String>,
    /// Send --target-percent of the packets to this queue (shRing §5.3, rxBisect §6.2); needs --queues.
    #[arg(long, requires_all = ["target_percent", "queues"])]
    target_queue: Option<usize>,
    /// Share of packets for --target-queue, 0..=100.
    #[arg(long, requires = "target_queue", allow_hyphen_values = true)]
    target_percent: Option<f64>,
    /// Frame size of the target queue's packets (the papers use 64 B there and 1500 B elsewhere).
    #[arg(long, requires = "target_queue")]
    target_size: Option<usize>,
    /// Pick flows so that RSS puts the same number on every queue; needs --queues.
    #[arg(long, conflicts_with = "target_queue", requires = "queues")]
    rss_even: bool,
    /// Receive queues for --target-queue or --rss-even (default RSS key, round-robin table).
    #[arg(long)]
    queues: Option<usize>,
    /// TCP instead of UDP.
    #[arg(long)]
    tcp: bool,
    /// IPv6 instead of IPv4.
    #[arg(long)]
    ipv6: bool,
    /// Seed of the random stream: same arguments and seed, same bytes.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Write pcapng (also implied by a `.pcapng` output name) instead of pcap.
    #[arg(long)]
    pcapng: bool,
    /// Nanosecond timestamps instead of microseconds.
    #[arg(long)]
    nanos: bool,
    /// Output file; written to a temporary file and renamed when complete.
    #[arg(short, long)]
    output: PathBuf,
}

/// Arguments of `rxlab trace inspect`.
#[derive(Args)]
pub struct InspectArgs {
    /// A pcap or pcapng file (Ethernet, raw IP or Linux cooked captures).
    file: PathBuf,
    /// Receive queues RSS spreads the trace over (Microsoft key, round-robin 128-entry table).
    #[arg(long, default_value_t = 16)]
    queues: usize,
    /// Window of the per-queue rates, e.g. `1ms` (rxBisect Figure 4 uses one second).
    #[arg(long, default_value = "1ms")]
    window: String,
    /// Number of largest flows to list.
    #[arg(long, default_value_t = 10)]
    top: usize,
    /// Print one JSON object instead of tables.
    #[arg(long)]
    json: bool,
}

/// Run one `rxlab trace` subcommand.
pub fn run(cmd: TraceCommand) -> Result<()> {
    match cmd {
        TraceCommand::Gen(a) => generate(a),
        TraceCommand::Inspect(a) => inspect(a),
    }
}

fn generate(a: GenArgs) -> Result<()> {
    let cfg = gen_config(&a)?;
    let stop = match (&a.duration, a.count) {
        (Some(d), _) => Stop::Duration(flag("--duration", parse_duration_ns(d))?),
        (None, n) => Stop::Count(n.unwrap_or(1000)),
    };
    let pcapng = a.pcapng || a.output.extension().is_some_and(|e| e == "pcapng");
    let format = OutputFormat {
        container: if pcapng { Container::PcapNg } else { Container::Pcap },
        resolution: if a.nanos { Resolution::Nano } else { Resolution::Micro },
    };
    let mut generator = Generator::new(&cfg)?;
    let n = generator.write_trace(&a.output, stop, format)?;
    eprintln!("rxlab: wrote {n} packets in {} flows to {}", generator.flows().len(), a.output.display());
    Ok(())
}

fn gen_config(a: &GenArgs) -> Result<GenConfig> {
    let steering = match (a.target_queue, a.rss_even, a.queues) {
        (Some(queue), _, Some(queues)) => {
            Steering::Target { queues, queue, percent: a.target_percent.unwrap_or(100.0), target_size: a.target_size }
        }
        (None, true, Some(queues)) => Steering::RssEven { queues },
        (None, false, Some(_)) => bail!("--queues needs --target-queue or --rss-even"),
        _ => Steering::None,
    };
    Ok(GenConfig {
        seed: a.seed,
        size: flag("--size", a.size.parse::<SizeSpec>())?,
        flows: a.flows,
        popularity: a.zipf.map_or(Popularity::Uniform, Popularity::Zipf),
        proto: if a.tcp { L4Proto::Tcp } else { L4Proto::Udp },
        ip: if a.ipv6 { IpVersion::V6 } else { IpVersion::V4 },
        rate: flag("--rate", a.rate.parse::<Rate>())?,
        burst: a.burst.as_deref().map(parse_burst).transpose().context("--burst")?,
        steering,
    })
}

/// Name the flag in front of a parse error.
fn flag<T>(name: &str, parsed: Result<T, String>) -> Result<T> {
    parsed.map_err(|e| anyhow::anyhow!("{name}: {e}"))
}

/// `ON:OFF` with durations; bare numbers are microseconds.
fn parse_burst(s: &str) -> Result<Burst> {
    let (on, off) = s.split_once(':').with_context(|| format!("bad burst '{s}': write ON:OFF, e.g. 100us:50us"))?;
    let ns = |d: &str| {
        let d = d.trim();
        let with_unit = if d.ends_with(|c: char| c.is_ascii_digit()) { format!("{d}us") } else { d.to_string() };
        parse_duration_ns(&with_unit).map_err(anyhow::Error::msg)
    };
    Ok(Burst { on_ns: ns(on)?, off_ns: ns(off)? })
}

fn inspect(a: InspectArgs) -> Result<()> {
    let window_ns = flag("--window", parse_duration_ns(&a.window))?;
    let opts = InspectOptions { queues: a.queues, window_ns, top: a.top };
    let summary = traffic::inspect(TraceReader::open(&a.file)?, opts)?;
    if a.json {
        println!("{}", serde_json::to_string_pretty(&summary)?);
    } else {
        print!("{}", table(&a.file, &summary));
    }
    Ok(())
}

/// Windows shown in the table; `--json` has them all.
const SHOWN_WINDOWS: usize = 10;

fn table(file: &std::path::Path, s: &TraceSummary) -> String {
    let mut o = String::new();
    let pct = |x: f64| format!("{:.1}%", 100.0 * x);
    let _ = writeln!(o, "trace      {}", file.display());
    let _ = writeln!(o, "packets    {} ({} non-IP)", s.packets, s.non_ip);
    let _ = writeln!(o, "bytes      {} (frames, FCS included)", s.bytes);
    let _ = writeln!(o, "duration   {:.6} ms", s.duration_ns as f64 / 1e6);
    let _ = writeln!(o, "mean rate  {:.3} Mpps, {:.3} Gbps with framing", s.mean_mpps, s.mean_gbps);
    let _ = writeln!(o, "flows      {}", s.flows);
    let _ = writeln!(o, "\nframe size      packets   share");
    for b in s.sizes.iter().filter(|b| b.packets > 0) {
        let range = match b.max {
            Some(max) if max == b.min => format!("{max}"),
            Some(max) => format!("{}-{max}", b.min),
            None => format!("{}+", b.min),
        };
        let _ = writeln!(o, "  {range:<12} {:>9} {:>7}", b.packets, pct(b.packets as f64 / s.packets.max(1) as f64));
    }
    let _ = writeln!(o, "\ntop flows{:<46} packets      bytes   share  queue", "");
    for f in &s.top_flows {
        let _ = writeln!(
            o,
            "  {:<53} {:>7} {:>10} {:>7} {:>6}",
            f.tuple().to_string(),
            f.packets,
            f.bytes,
            pct(f.share),
            f.queue
        );
    }
    let r = &s.rss;
    let _ = writeln!(o, "\nRSS over {} queues (rxBisect §3.3): packets and share per queue", r.queues);
    for (q, (p, sh)) in r.packets.iter().zip(&r.share).enumerate() {
        let _ = writeln!(o, "  queue {q:<3} {p:>10} {:>7}", pct(*sh));
    }
    match (r.mean_min_over_max, r.min_min_over_max) {
        (Some(mean), Some(min)) => {
            let _ = writeln!(
                o,
                "min/max queue rate over {} windows of {:.3} ms: mean {mean:.3}, worst {min:.3}",
                r.windows.len(),
                r.window_ns as f64 / 1e6
            );
            let _ = write!(o, "  {:>10}", "start ms");
            for q in 0..r.queues {
                let _ = write!(o, " {:>7}", format!("q{q}"));
            }
            let _ = writeln!(o, " {:>8}   (Mpps per queue)", "min/max");
            for w in r.windows.iter().take(SHOWN_WINDOWS) {
                let _ = write!(o, "  {:>10.3}", w.start_ns as f64 / 1e6);
                for m in &w.mpps {
                    let _ = write!(o, " {m:>7.3}");
                }
                let _ = writeln!(o, " {:>8.3}", w.min_over_max);
            }
            if r.windows.len() > SHOWN_WINDOWS {
                let _ = writeln!(o, "  ... {} more windows (--json lists them all)", r.windows.len() - SHOWN_WINDOWS);
            }
        }
        _ => {
            let _ = writeln!(o, "no IP packets, no RSS spread");
        }
    }
    o
}
