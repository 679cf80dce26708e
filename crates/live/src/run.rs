//! One live run: build the design's ports ([`crate::port`], one per NIC thread), start the NIC threads and
//! the workers, run, drain, check the invariants of DESIGN.md port by port, and report them together.

use crate::control::AbortOnPanic;
use crate::nic::{NicStats, Pace, Schedule, nic_loop};
use crate::offcpu;
use crate::pin;
use crate::port::{Port, Received};
use crate::report::{CoreReport, LiveReport};
use crate::source::Prebuilt;
use crate::worker::{WorkerStats, worker_loop};
use apps::{App, AppError, AppParams, Hosted, Runtime};
use ifaces::{ConfigError, Design, DeviceSide, IfaceConfig, NoProbe};
use measure::Throughput;
use std::path::PathBuf;
use std::time::{Duration, Instant};
use traffic::{GenConfig, GenError, Trace, TraceError};

/// Where the NIC thread's packets come from.
#[derive(Debug, Clone, PartialEq)]
pub enum Traffic {
    /// The synthetic generator.
    Generate(Box<GenConfig>),
    /// A pcap or pcapng file, replayed in a loop.
    Pcap(PathBuf),
}

/// Everything a live run needs.
#[derive(Debug, Clone)]
pub struct LiveConfig {
    /// Design name (`--iface`).
    pub design: String,
    /// Interface configuration.
    pub iface: IfaceConfig,
    /// App name.
    pub app: String,
    /// App parameters.
    pub app_params: AppParams,
    /// The software the app runs in.
    pub runtime: Runtime,
    /// Packet source.
    pub traffic: Traffic,
    /// Offered rate.
    pub pace: Pace,
    /// Send the trace from pre-filled Ensō TX pipes, EnsōGen-style (Ensō Appendix B).
    pub ensogen: bool,
    /// Measured time.
    pub duration: Duration,
    /// Unmeasured time before it.
    pub warmup: Duration,
    /// Software NIC threads, each an emulated port with its share of the traffic and of the workers
    /// (`--nic-threads`, [`crate::port`]).
    pub nic_threads: usize,
}

/// Why a live run failed.
#[derive(Debug, thiserror::Error)]
pub enum LiveError {
    /// A bad interface option.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// A bad app name or parameter.
    #[error("invalid --app: {0}")]
    App(AppError),
    /// A bad traffic option.
    #[error("invalid traffic: {0}")]
    Traffic(GenError),
    /// The pcap could not be read.
    #[error(transparent)]
    Trace(#[from] TraceError),
    /// A bad option of the run itself.
    #[error("invalid --{option}: {message}")]
    Option {
        /// The option.
        option: &'static str,
        /// What is wrong.
        message: String,
    },
    /// An invariant of DESIGN.md did not hold: the run's numbers are not reported.
    #[error("invariant violated: {0}")]
    Invariant(String),
}

/// Run the configured design (any name in [`ifaces::designs::DESIGN_NAMES`]).
pub fn run(cfg: &LiveConfig) -> Result<LiveReport, LiveError> {
    ifaces::with_design!(&cfg.design, D => run_design::<D>(cfg))?
}

fn check_options(cfg: &LiveConfig) -> Result<(), LiveError> {
    let bad = |option, message: String| Err(LiveError::Option { option, message });
    if cfg.duration.is_zero() {
        return bad("duration", "must be longer than 0, e.g. 2s".into());
    }
    if let Pace::Pps(pps) = cfg.pace
        && !(pps.is_finite() && pps >= 1.0)
    {
        return bad("rate", format!("{pps} packets/s cannot be offered; give e.g. 10G, 5Mpps or max"));
    }
    Ok(())
}

/// Run design `D` (the engine is generic over the design; [`run`] picks it by name).
pub fn run_design<D: Design>(cfg: &LiveConfig) -> Result<LiveReport, LiveError> {
    check_options(cfg)?;
    cfg.iface.validate_common()?;
    let ports = split_ports::<D>(cfg)?;
    let mut iface = IfaceConfig { cores: cfg.iface.cores / ports, ..cfg.iface.clone() };
    cfg.runtime.configure(&mut iface);
    let src = match &cfg.traffic {
        Traffic::Generate(g) => Prebuilt::generate(g).map_err(LiveError::Traffic)?,
        Traffic::Pcap(path) => Prebuilt::from_trace(Trace::read(path)?),
    };
    if src.frames.is_empty() {
        return Err(LiveError::Option { option: "pcap", message: "the capture holds no packet to replay".into() });
    }
    let room = iface.layout.data_room();
    if src.max_len() > room {
        return Err(LiveError::Option {
            option: "size",
            message: format!("frames of {} B do not fit {room} B buffers", src.max_len()),
        });
    }
    let shares = if ports == 1 { vec![src] } else { src.split(ports) };
    if shares.iter().any(|s| s.frames.is_empty()) {
        return Err(LiveError::Option {
            option: "nic-threads",
            message: format!("the traffic has fewer flows than the {ports} NIC threads that split it by flow"),
        });
    }
    let warmup_ns = cfg.warmup.as_nanos() as u64;
    let timing = Schedule {
        pace: match cfg.pace {
            Pace::Pps(pps) => Pace::Pps(pps / ports as f64),
            Pace::Max => Pace::Max,
        },
        warmup_ns,
        end_ns: warmup_ns + cfg.duration.as_nanos() as u64,
        drain_limit: Duration::from_secs(10),
    };
    let mut port = Vec::with_capacity(ports);
    for mut share in shares {
        if cfg.ensogen {
            share.use_ensogen().map_err(|e| LiveError::Option { option: "ensogen", message: e.to_string() })?;
        }
        port.push(Port::<D>::build(&iface, share, (timing.warmup_ns, timing.end_ns))?);
    }
    let cores = cfg.iface.cores;
    let mut apps = Hosted::for_cores(&cfg.app, &cfg.app_params, cores, cfg.runtime).map_err(LiveError::App)?;
    for (p, apps) in port.iter().zip(apps.chunks_mut(iface.cores)) {
        for app in apps {
            app.bind_nicmem(p.device.nicmem()).map_err(LiveError::App)?;
        }
    }

    let cpus = pin::allowed_cpus();
    let threads = ports + cores;
    let pinned = cpus.len() >= threads;
    let mut warnings = Vec::new();
    if !pinned {
        warnings.push(format!(
            "{threads} threads ({ports} NIC + {cores} workers) on {} CPUs: threads run unpinned and share CPUs, so timings mean little",
            cpus.len()
        ));
    }
    let steal_before = offcpu::per_cpu();
    let epoch = Instant::now();
    let per_port = iface.cores;
    let joined = std::thread::scope(|s| {
        let mut running = Vec::with_capacity(ports);
        for (k, (p, apps)) in port.iter_mut().zip(apps.chunks_mut(per_port)).enumerate() {
            let Port { pool, device, drivers, src, reta, sink, ctl } = p;
            let (pool, ctl, reta) = (&*pool, &*ctl, &*reta);
            let workers: Vec<_> = drivers
                .iter_mut()
                .zip(apps.iter_mut())
                .enumerate()
                .map(|(i, (driver, app))| {
                    let cpu = pinned.then(|| cpus[ports + k * per_port + i]);
                    let (burst, cache) = (iface.burst, iface.cache);
                    s.spawn(move || {
                        let _guard = AbortOnPanic(ctl);
                        pin::pin(cpu);
                        worker_loop(i, driver, app, pool, cache, burst, ctl, !pinned, NoProbe::with_epoch(epoch))
                    })
                })
                .collect();
            let cpu = pinned.then(|| cpus[k]);
            let nic = s.spawn(move || {
                let _guard = AbortOnPanic(ctl);
                pin::pin(cpu);
                nic_loop(device, src, reta, timing, ctl, sink, NoProbe::with_epoch(epoch))
            });
            running.push((nic, workers));
        }
        running
            .into_iter()
            .map(|(nic, workers)| {
                let workers: Vec<std::thread::Result<WorkerStats>> = workers.into_iter().map(|h| h.join()).collect();
                (nic.join(), workers)
            })
            .collect::<Vec<_>>()
    });
    let used: Vec<usize> =
        if pinned { cpus[..threads].iter().map(|c| c.id).collect() } else { (0..cpus.len()).collect() };
    let steal_ms = steal_before.zip(offcpu::per_cpu()).map(|(b, a)| offcpu::stolen_ms(&b, &a, used));
    let mut nics = Vec::with_capacity(ports);
    let mut workers = Vec::with_capacity(cores);
    for (k, (nic, ws)) in joined.into_iter().enumerate() {
        let who = |what: String| if ports == 1 { what } else { format!("port {k} {what}") };
        nics.push(nic.map_err(|e| LiveError::Invariant(panic_message(&e, &who("NIC thread".into()))))?);
        for (i, w) in ws.into_iter().enumerate() {
            let mut w = w.map_err(|e| LiveError::Invariant(panic_message(&e, &who(format!("worker {i}")))))?;
            w.core = k * per_port + i;
            workers.push(w);
        }
    }
    let pps = match timing.pace {
        Pace::Pps(pps) => Some(pps),
        Pace::Max => None,
    };
    // How far behind its schedule a source fell, ns: its largest backlog at the paced rate.
    let lag_ns = pps.map_or(0, |pps| (nics.iter().map(|n| n.max_backlog).max().unwrap_or(0) as f64 * 1e9 / pps) as u64);
    let source_lag_us = pps.map(|_| lag_ns as f64 / 1e3);
    warnings.extend(offcpu::warnings(lag_ns, pps, &workers, pinned, steal_ms));
    if let Some(stuck) = nics.iter().find_map(|n| n.stuck.as_ref()) {
        return Err(LiveError::Invariant(format!("drain: {stuck}")));
    }
    let mut invariants = Vec::new();
    for (k, p) in port.iter_mut().enumerate() {
        p.drivers.clear();
        invariants = p.check_invariants(&nics[k], &workers[k * per_port..(k + 1) * per_port])?;
    }
    let seconds = cfg.duration.as_secs_f64();
    let fcs = wire::frame::FCS_LEN as u64;
    let rate = |pkts: u64, bytes: u64| Throughput::over(pkts, bytes + fcs * pkts, seconds).expect("positive duration");
    let sum = |f: fn(&NicStats) -> u64| nics.iter().map(f).sum::<u64>();
    let mut drops = ifaces::Drops::default();
    nics.iter().for_each(|n| drops.merge(&n.drops));
    let got = Received::of(&port);
    Ok(LiveReport {
        engine: "live",
        design: D::NAME.to_string(),
        app: cfg.app.clone(),
        cores,
        nic_threads: ports,
        ring: iface.ring.get(),
        burst: iface.burst,
        frame_len: mean_frame_len(&port),
        seconds,
        offered: rate(sum(|n| n.window_offered), sum(|n| n.window_offered_bytes)),
        throughput: rate(got.window_packets, got.window_bytes),
        drops: drops.by_name(),
        drop_ratio: drops.total() as f64 / sum(|n| n.offered).max(1) as f64,
        latency: got.latency,
        latency_cdf: got.latency_cdf,
        reordering: got.reordering,
        flow_reordering: got.flow_reordering,
        occupancy: nics.iter().map(|n| n.occupancy).sum::<f64>() / ports as f64,
        per_core: workers.iter().map(CoreReport::from).collect(),
        device: device_metrics(&port),
        pinned,
        source_lag_us,
        steal_ms,
        warnings,
        invariants,
    })
}

/// How many ports `--nic-threads` asks for, once checked against the design and the cores.
fn split_ports<D: Design>(cfg: &LiveConfig) -> Result<usize, LiveError> {
    let (n, cores) = (cfg.nic_threads, cfg.iface.cores);
    let bad = |message: String| Err(LiveError::Option { option: "nic-threads", message });
    if n == 0 {
        return bad("must be at least 1".into());
    }
    if n > 1
        && let Some(why) = D::ONE_PORT
    {
        return bad(format!("{} runs on one NIC thread only: {why}", D::NAME));
    }
    if !cores.is_multiple_of(n) {
        return bad(format!("{n} NIC threads cannot share {cores} workers evenly; give --cores a multiple of {n}"));
    }
    Ok(n)
}

/// Mean frame length offered over every port's share, FCS included.
fn mean_frame_len<D: Design>(ports: &[Port<D>]) -> f64 {
    let frames = ports.iter().map(|p| p.src.frames.len()).sum::<usize>().max(1) as f64;
    ports.iter().map(|p| p.src.mean_frame_len() * p.src.frames.len() as f64).sum::<f64>() / frames
}

/// The device sides' counters: one port's as they are, several ports' prefixed `port{k}.`.
fn device_metrics<D: Design>(ports: &[Port<D>]) -> ifaces::Metrics {
    match ports {
        [one] => one.device.metrics(),
        _ => ports
            .iter()
            .enumerate()
            .flat_map(|(k, p)| p.device.metrics().into_iter().map(move |(name, v)| (format!("port{k}.{name}"), v)))
            .collect(),
    }
}

fn panic_message(e: &Box<dyn std::any::Any + Send>, who: &str) -> String {
    let msg =
        e.downcast_ref::<String>().map(String::as_str).or_else(|| e.downcast_ref::<&str>().copied()).unwrap_or("panic");
    format!("{who} stopped: {msg}")
}
