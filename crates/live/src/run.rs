//! One live run: build the design over a buffer pool, start the NIC thread and the workers, run, drain,
//! check the invariants of DESIGN.md, and report.

use crate::control::{AbortOnPanic, Control};
use crate::nic::{NicStats, Pace, Schedule, nic_loop};
use crate::offcpu;
use crate::pin;
use crate::report::{CoreReport, LiveReport};
use crate::sink::Sink;
use crate::source::Prebuilt;
use crate::worker::{WorkerStats, worker_loop};
use apps::{App, AppError, AppParams, Hosted, Runtime};
use ifaces::invariants::{RunCounts, check_buffers};
use ifaces::{Arena, ConfigError, Design, DeviceSide, IfaceConfig, NoProbe, SharedPool};
use measure::Throughput;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};
use traffic::{GenConfig, GenError, Trace, TraceError};
use wire::IndirectionTable;

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
    let mut iface = cfg.iface.clone();
    cfg.runtime.configure(&mut iface);
    let mut src = match &cfg.traffic {
        Traffic::Generate(g) => Prebuilt::generate(g).map_err(LiveError::Traffic)?,
        Traffic::Pcap(path) => Prebuilt::from_trace(Trace::read(path)?),
    };
    if src.frames.is_empty() {
        return Err(LiveError::Option { option: "pcap", message: "the capture holds no packet to replay".into() });
    }
    if cfg.ensogen {
        src.use_ensogen().map_err(|e| LiveError::Option { option: "ensogen", message: e.to_string() })?;
    }
    let room = iface.layout.data_room();
    if src.max_len() > room {
        return Err(LiveError::Option {
            option: "size",
            message: format!("frames of {} B do not fit {room} B buffers", src.max_len()),
        });
    }
    let arena = Arena::new("host", D::buffers_needed(&iface), iface.layout)
        .map_err(|e| LiveError::Option { option: "ring", message: e.to_string() })?;
    let pool = SharedPool::new(Arc::new(arena));
    let (mut device, mut drivers) = D::build(&iface, &pool)?;
    let cores = iface.cores;
    let mut apps = Hosted::for_cores(&cfg.app, &cfg.app_params, cores, cfg.runtime).map_err(LiveError::App)?;
    for app in &mut apps {
        app.bind_nicmem(device.nicmem()).map_err(LiveError::App)?;
    }
    let reta = IndirectionTable::round_robin(cores).map_err(|m| LiveError::Option { option: "cores", message: m })?;

    let cpus = pin::allowed_cpus();
    let pinned = cpus.len() > cores;
    let mut warnings = Vec::new();
    if !pinned {
        warnings.push(format!(
            "{} threads (NIC + {cores} workers) on {} CPUs: threads run unpinned and share CPUs, so timings mean little",
            cores + 1,
            cpus.len()
        ));
    }
    let warmup_ns = cfg.warmup.as_nanos() as u64;
    let timing = Schedule {
        pace: cfg.pace,
        warmup_ns,
        end_ns: warmup_ns + cfg.duration.as_nanos() as u64,
        drain_limit: Duration::from_secs(10),
    };
    let flow_of: Vec<u32> = src.frames.iter().map(|f| f.flow).collect();
    let mut sink = Sink::new(flow_of, src.flows, (timing.warmup_ns, timing.end_ns), src.payload_at);
    let ctl = Control::new(cores);
    let steal_before = offcpu::per_cpu();
    let epoch = Instant::now();

    let (nic, workers) = std::thread::scope(|s| {
        let handles: Vec<_> = drivers
            .iter_mut()
            .zip(apps.iter_mut())
            .enumerate()
            .map(|(i, (driver, app))| {
                let (ctl, pool) = (&ctl, &pool);
                let cpu = pinned.then(|| cpus[i + 1]);
                let burst = iface.burst;
                let cache = iface.cache;
                s.spawn(move || {
                    let _guard = AbortOnPanic(ctl);
                    pin::pin(cpu);
                    worker_loop(i, driver, app, pool, cache, burst, ctl, !pinned, NoProbe::with_epoch(epoch))
                })
            })
            .collect();
        let nic = s.spawn(|| {
            let _guard = AbortOnPanic(&ctl);
            pin::pin(pinned.then(|| cpus[0]));
            nic_loop(&mut device, &mut src, &reta, timing, &ctl, &mut sink, NoProbe::with_epoch(epoch))
        });
        let workers: Vec<std::thread::Result<WorkerStats>> = handles.into_iter().map(|h| h.join()).collect();
        (nic.join(), workers)
    });
    let used: Vec<usize> =
        if pinned { cpus[..=cores].iter().map(|c| c.id).collect() } else { (0..cpus.len()).collect() };
    let steal_ms = steal_before.zip(offcpu::per_cpu()).map(|(b, a)| offcpu::stolen_ms(&b, &a, used));
    let nic = nic.map_err(|e| LiveError::Invariant(panic_message(&e, "NIC thread")))?;
    let workers = workers
        .into_iter()
        .enumerate()
        .map(|(i, w)| w.map_err(|e| LiveError::Invariant(panic_message(&e, &format!("worker {i}")))))
        .collect::<Result<Vec<_>, _>>()?;
    let pps = match cfg.pace {
        Pace::Pps(pps) => Some(pps),
        Pace::Max => None,
    };
    // How far behind its schedule the source fell, ns: its largest backlog at the paced rate.
    let lag_ns = pps.map_or(0, |pps| (nic.max_backlog as f64 * 1e9 / pps) as u64);
    let source_lag_us = pps.map(|_| lag_ns as f64 / 1e3);
    warnings.extend(offcpu::warnings(lag_ns, pps, &workers, pinned, steal_ms));
    if let Some(stuck) = &nic.stuck {
        return Err(LiveError::Invariant(format!("drain: {stuck}")));
    }
    drop(drivers);
    let invariants = check_invariants(&nic, &workers, &sink, &pool, &device, D::PER_FLOW_ORDER)?;
    let seconds = cfg.duration.as_secs_f64();
    let fcs = wire::frame::FCS_LEN as u64;
    let rate = |pkts: u64, bytes: u64| Throughput::over(pkts, bytes + fcs * pkts, seconds).expect("positive duration");
    Ok(LiveReport {
        engine: "live",
        design: D::NAME.to_string(),
        app: cfg.app.clone(),
        cores,
        ring: iface.ring.get(),
        burst: iface.burst,
        frame_len: src.mean_frame_len(),
        seconds,
        offered: rate(nic.window_offered, nic.window_offered_bytes),
        throughput: rate(sink.window_packets, sink.window_bytes),
        drops: nic.drops.by_name(),
        drop_ratio: nic.drops.total() as f64 / nic.offered.max(1) as f64,
        latency: sink.latency.summary(),
        latency_cdf: sink.latency.cdf(),
        reordering: sink.reorder.report(),
        flow_reordering: sink.flow_order.report(),
        occupancy: nic.occupancy,
        per_core: workers.iter().map(CoreReport::from).collect(),
        device: device.metrics(),
        pinned,
        source_lag_us,
        steal_ms,
        warnings,
        invariants,
    })
}

/// The end-of-run invariants of DESIGN.md; each failure names the invariant and the numbers.
fn check_invariants<D: DeviceSide>(
    nic: &NicStats,
    workers: &[WorkerStats],
    sink: &Sink,
    pool: &Arc<SharedPool>,
    device: &D,
    ordered: bool,
) -> Result<Vec<String>, LiveError> {
    let fail = |m: String| Err(LiveError::Invariant(m));
    let counts = RunCounts {
        offered: nic.offered,
        delivered: workers.iter().map(|w| w.rx).sum(),
        dropped: nic.drops.total(),
        queued: device.occupancy().used,
        duplicates: sink.duplicates,
        out_of_order: sink.flow_order.reordered(),
        ordered,
        examples: sink.examples.clone(),
    };
    let mut held = counts.check().map_err(|v| LiveError::Invariant(v.to_string()))?;
    let transmitted: u64 = workers.iter().map(|w| w.tx).sum();
    if sink.received != transmitted {
        return fail(format!(
            "conservation: {transmitted} packets queued for transmission, {} left the NIC",
            sink.received
        ));
    }
    check_buffers(pool.arena(), Some(pool.available()), device.nicmem().map(|m| &**m))
        .map_err(|v| LiveError::Invariant(v.to_string()))?;
    held.push("no-leak");
    Ok(held.into_iter().map(String::from).collect())
}

fn panic_message(e: &Box<dyn std::any::Any + Send>, who: &str) -> String {
    let msg =
        e.downcast_ref::<String>().map(String::as_str).or_else(|| e.downcast_ref::<&str>().copied()).unwrap_or("panic");
    format!("{who} stopped: {msg}")
}
