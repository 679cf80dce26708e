//! `rxlab trace`: generate synthetic traces and inspect pcap/pcapng files. Argument parsing and output
//! formatting only; the work is in the `traffic` crate.

use crate::traffic_args::{TrafficArgs, flag};
use crate::{bar, cancel, space};
use anyhow::Result;
use clap::{Args, Subcommand};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use traffic::inspect::InspectOptions;
use traffic::units::parse_duration_ns;
use traffic::{Container, Generator, OutputFormat, Rate, Resolution, Stop, TraceReader, TraceSummary};

/// Subcommands of `rxlab trace`.
#[derive(Subcommand)]
pub enum TraceCommand {
    /// Write a synthetic trace (seeded, deterministic) to a pcap or pcapng file.
    Gen(Box<GenArgs>),
    /// Summarise a pcap/pcapng file: volume, rate, sizes, flows and the RSS spread over N queues.
    Inspect(InspectArgs),
}

/// Arguments of `rxlab trace gen`.
#[derive(Args)]
pub struct GenArgs {
    #[command(flatten)]
    traffic: TrafficArgs,
    /// Offered rate: Gbps on the wire with framing (`10G`, `400Mbps`) or packets (`5Mpps`, `500Kpps`).
    #[arg(long, default_value = "10G", allow_hyphen_values = true)]
    rate: String,
    /// Number of packets (default 1000 unless --duration is given).
    #[arg(long, value_parser = ifaces::ringsize::count::<u64>, conflicts_with = "duration")]
    count: Option<u64>,
    /// Length of the trace instead of a count, e.g. `10ms`.
    #[arg(long, allow_hyphen_values = true)]
    duration: Option<String>,
    /// Write pcapng (also implied by a `.pcapng` output name) instead of pcap.
    #[arg(long)]
    pcapng: bool,
    /// Nanosecond timestamps instead of microseconds.
    #[arg(long)]
    nanos: bool,
    /// Payloads of syslog lines, as many whole lines as fit each frame with this share of them attacks
    /// (`logmon`'s traffic, `crates/traffic/src/logs.rs`), instead of the stamp in a zeroed payload.
    #[arg(long, value_name = "ATTACK_SHARE")]
    log_lines: Option<f64>,
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
    #[arg(long, value_parser = ifaces::ringsize::count::<usize>, default_value_t = 16)]
    queues: usize,
    /// Window of the per-queue rates, e.g. `1ms` (rxBisect Figure 4 uses one second).
    #[arg(long, default_value = "1ms")]
    window: String,
    /// Number of largest flows to list.
    #[arg(long, value_parser = ifaces::ringsize::count::<usize>, default_value_t = 10)]
    top: usize,
    /// Print one JSON object instead of tables.
    #[arg(long)]
    json: bool,
}

/// Run one `rxlab trace` subcommand.
pub fn run(cmd: TraceCommand) -> Result<()> {
    match cmd {
        TraceCommand::Gen(a) => generate(*a),
        TraceCommand::Inspect(a) => inspect(a),
    }
}

fn generate(a: GenArgs) -> Result<()> {
    let mut cfg = a.traffic.config(flag("rate", a.rate.parse::<Rate>())?, None)?;
    if let Some(attack_share) = a.log_lines {
        cfg.payload = traffic::Payload::Logs(traffic::logs::LogConfig { attack_share });
        flag("log-lines", cfg.validate().map_err(|e| e.to_string()))?;
    }
    let stop = match (&a.duration, a.count) {
        (Some(d), _) => Stop::Duration(flag("duration", parse_duration_ns(d))?),
        (None, n) => Stop::Count(n.unwrap_or(1000)),
    };
    let pcapng = a.pcapng || a.output.extension().is_some_and(|e| e == "pcapng");
    let format = OutputFormat {
        container: if pcapng { Container::PcapNg } else { Container::Pcap },
        resolution: if a.nanos { Resolution::Nano } else { Resolution::Micro },
    };
    let frame_len = cfg.mean_frame_len()?;
    let packets = match stop {
        Stop::Count(n) => n,
        Stop::Duration(ns) => (ns as f64 * 1e3 / cfg.rate.gap_ps(frame_len.round() as usize)).ceil() as u64,
    };
    let dir = a.output.parent().unwrap_or(Path::new(""));
    let what = format!("{} ({packets} packets)", a.output.display());
    space::ensure(dir, format.estimate_bytes(packets, frame_len), &what, "write fewer packets or elsewhere")?;
    let output = a.output.clone();
    cancel::keeps(move || format!("nothing ({} not written)", output.display()));
    let (len, template) = match stop {
        Stop::Count(n) => (n, "{bar:40} {human_pos}/{human_len} packets  {elapsed} elapsed, {eta} left"),
        Stop::Duration(ns) => (ns, "{bar:40} {percent}% of the trace's time  {elapsed} elapsed, {eta} left"),
    };
    let bar = bar::new(len, template);
    let mut generator = Generator::new(&cfg)?;
    let n = generator.write_trace(&a.output, stop, format, |n, ts_ns| {
        bar.set_position(if matches!(stop, Stop::Count(_)) { n } else { ts_ns })
    })?;
    bar.finish_and_clear();
    eprintln!("rxlab: wrote {n} packets in {} flows to {}", generator.flows().len(), a.output.display());
    Ok(())
}

fn inspect(a: InspectArgs) -> Result<()> {
    let window_ns = flag("window", parse_duration_ns(&a.window))?;
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
