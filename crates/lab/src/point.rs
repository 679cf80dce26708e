//! One point: resolved [`Params`] turned into an engine configuration and run. `rxlab run` flags, an
//! experiment's cases and a sweep's points all go through [`run`] (one run, or with `--ndr` one run per
//! tried rate), which uses [`build`] and [`report`], so the same parameters always give the same
//! configuration.

use crate::ndr::{self, NdrOptions};
use crate::params::{Arrivals, Engine, FlowOrder, NoiseTail, Params, Quantity};
use crate::traffic_args::{TrafficArgs, flag};
use anyhow::{Result, anyhow, bail};
use apps::AppParams;
use ifaces::enso::{NotifyMode, Visit};
use ifaces::nicmem::NicMemCapacity;
use ifaces::shring::dynamic::Thresholds;
use ifaces::{BufLayout, IfaceConfig, RingSize};
use live::{LiveConfig, LiveReport, Pace, Traffic};
use sim::SimReport;
use sim::antagonist::CopySpec;
use std::path::Path;
use std::sync::RwLock;
use std::time::Duration;
use traffic::kvs::client::{ClientConfig, HotArea};
use traffic::units::parse_duration_ns;
use traffic::{GenConfig, Payload, Rate};
use wire::frame::WIRE_OVERHEAD;

/// An engine configuration ready to run.
#[derive(Debug, Clone)]
pub enum Config {
    /// A live run.
    Live(Box<LiveConfig>),
    /// A simulation run.
    Sim(Box<sim::SimConfig>),
}

/// What a run produced: its report as JSON (for results) and as the engine's table (for people).
#[derive(Debug, Clone)]
pub struct Outcome {
    /// The engine's report, serialised.
    pub json: serde_json::Value,
    /// The engine's report, printed.
    pub text: String,
}

/// A resolved parameter, or an error naming it (only [`Params::resolved`] values reach here).
fn get<'a, T>(v: &'a Option<T>, name: &str) -> Result<&'a T> {
    v.as_ref().ok_or_else(|| anyhow!("--{name} has no value"))
}

fn text<'a>(v: &'a Option<Quantity>, name: &str) -> Result<&'a str> {
    Ok(get(v, name)?.0.trim())
}

fn duration(p: &Option<Quantity>, name: &str) -> Result<Duration> {
    flag(name, parse_duration_ns(text(p, name)?)).map(Duration::from_nanos)
}

/// A duration parameter without a default, in ps, if given.
fn optional_ps(p: &Option<Quantity>, name: &str) -> Result<Option<u64>> {
    p.is_some().then(|| duration(p, name)).transpose().map(|d| d.map(|d| d.as_nanos() as u64 * 1000))
}

fn iface(p: &Params) -> Result<IfaceConfig> {
    let mut cfg = IfaceConfig {
        cores: *get(&p.cores, "cores")?,
        ring: flag("ring", text(&p.ring, "ring")?.parse::<RingSize>())?,
        tx_ring: flag("tx-ring", text(&p.tx_ring, "tx-ring")?.parse::<RingSize>())?,
        cache: *get(&p.cache, "cache")?,
        burst: *get(&p.burst, "burst")?,
        share: *get(&p.share, "share")?,
        list_batch: *get(&p.list_batch, "list-batch")?,
        ax: *get(&p.ax, "ax")?,
        bx: flag("bx", text(&p.bx, "bx")?.parse::<RingSize>())?,
        ax_policy: flag("ax-policy", get(&p.ax_policy, "ax-policy")?.parse())?,
        layout: flag("buffers", BufLayout::parse(get(&p.buffers, "buffers")?))?,
        dynamic: Thresholds {
            gbps: *get(&p.switch_gbps, "switch-gbps")?,
            mem_gib_per_s: *get(&p.switch_mem, "switch-mem")?,
            ..Thresholds::default()
        },
        ..IfaceConfig::default()
    };
    if let Some(c) = &p.nicmem_capacity {
        cfg.nicmem.capacity = match c.0.trim() {
            "emulated" => NicMemCapacity::Emulated,
            bytes => NicMemCapacity::Bytes(flag(
                "nicmem-capacity",
                ifaces::ringsize::parse_count(bytes).map_err(|e| format!("{e}; or 'emulated'")),
            )? as usize),
        };
    }
    if let Some(r) = &p.rx_refill {
        cfg.rx_refill = flag("rx-refill", r.parse())?;
    }
    if let Some(h) = p.nicmem_split {
        cfg.nicmem.split_at = h;
    }
    cfg.nicmem.queues = p.nicmem_queues;
    let e = &mut cfg.enso;
    if let Some(s) = &p.enso_pipe_size {
        e.pipe_size = flag("enso-pipe-size", ifaces::ringsize::parse_count(&s.0))? as usize;
    }
    e.pipes_per_core = p.enso_pipes.unwrap_or(e.pipes_per_core);
    if let Some(n) = &p.enso_notify {
        e.notify = match n.as_str() {
            "reactive" => NotifyMode::Reactive,
            "per-packet" => NotifyMode::PerPacket,
            other => bail!("invalid --enso-notify: '{other}' (use reactive or per-packet)"),
        };
    }
    if let Some(v) = &p.enso_visit {
        e.visit = match v.as_str() {
            "notified" => Visit::Notified,
            "round-robin" => Visit::RoundRobin,
            other => bail!("invalid --enso-visit: '{other}' (use notified or round-robin)"),
        };
    }
    e.prefetch = p.enso_prefetch.unwrap_or(e.prefetch);
    e.tx_copy = p.enso_tx_copy.unwrap_or(e.tx_copy);
    e.chaotic_gap = p.enso_chaotic_gap.unwrap_or(e.chaotic_gap);
    let m = &mut cfg.mprq;
    if let Some(s) = &p.mprq_stride_size {
        m.stride_size = flag("mprq-stride-size", count_u32(&s.0))?;
    }
    if let Some(s) = &p.mprq_strides {
        m.strides = flag("mprq-strides", count_u32(&s.0))?;
    }
    m.memcpy_max = p.mprq_memcpy.unwrap_or(m.memcpy_max);
    let x = &mut cfg.afxdp;
    if let Some(s) = &p.afxdp_chunk {
        x.chunk_size = flag("afxdp-chunk", count_u32(&s.0))?;
    }
    if let Some(s) = &p.afxdp_fill {
        x.fill = flag("afxdp-fill", s.0.trim().parse::<RingSize>())?;
    }
    x.shared_fill = p.afxdp_shared_fill.unwrap_or(x.shared_fill);
    x.zero_copy = !p.afxdp_copy.unwrap_or(!x.zero_copy);
    Ok(cfg)
}

/// A count like `2Ki` that fits 32 bits.
fn count_u32(s: &str) -> Result<u32, String> {
    let n = ifaces::ringsize::parse_count(s)?;
    u32::try_from(n).map_err(|_| format!("{n} is too large"))
}

fn traffic(p: &Params) -> Result<TrafficArgs> {
    Ok(TrafficArgs {
        traffic: p.traffic.clone(),
        size: Some(text(&p.size, "size")?.to_string()),
        flows: Some(*get(&p.flows, "flows")?),
        zipf: p.zipf,
        flow_order: p.flow_order.unwrap_or(FlowOrder::Random),
        burst: p.on_off.clone(),
        train: p.train.clone(),
        target_queue: p.target_queue,
        target_percent: p.target_percent,
        target_size: p.target_size,
        target_ports: p.target_ports,
        switch_at: p.switch_at.as_ref().map(ToString::to_string),
        switch_percent: p.switch_percent,
        switch_target_size: p.switch_target_size,
        rss_even: *get(&p.rss_even, "rss-even")?,
        queues: p.queues,
        tcp: *get(&p.tcp, "tcp")?,
        ipv6: *get(&p.ipv6, "ipv6")?,
        seed: *get(&p.seed, "seed")?,
    })
}

/// The generator's configuration at `rate`: the traffic options and `payload`.
fn gen_config(p: &Params, rate: Rate, cores: usize, payload: &Payload) -> Result<GenConfig> {
    Ok(GenConfig { payload: payload.clone(), ..traffic(p)?.config(rate, Some(cores))? })
}

/// KVS requests for the `kvs` app or if any `--kvs-*` option is given (unset ones take the client's
/// defaults), steered to the partitions of a `cores`-core server; else log lines for the `logmon` app, and
/// the stamp alone for any other; errors name the option.
fn payload(p: &Params, cores: usize) -> Result<Payload> {
    let given = (p.kvs_keys, p.kvs_zipf, p.kvs_get, p.kvs_key_len, p.kvs_value_len);
    if given == (None, None, None, None, None) && (p.kvs_hot_keys, p.kvs_hot_share) == (None, None) {
        match get(&p.app, "app")?.as_str() {
            "kvs" => {}
            "logmon" => return Ok(Payload::Logs(traffic::logs::LogConfig::default())),
            _ => return Ok(Payload::Stamp),
        }
    }
    let hot = match (p.kvs_hot_keys, p.kvs_hot_share) {
        (Some(keys), Some(share)) => Some(HotArea { keys, share }),
        (None, None) => None,
        (Some(_), None) => bail!("invalid --kvs-hot-keys: give the hot area's share of requests with --kvs-hot-share"),
        (None, Some(_)) => bail!("invalid --kvs-hot-share: give the hot area's size with --kvs-hot-keys"),
    };
    let d = ClientConfig::default();
    let cfg = ClientConfig {
        keys: p.kvs_keys.unwrap_or(d.keys),
        key_len: p.kvs_key_len.unwrap_or(d.key_len),
        value_len: p.kvs_value_len.unwrap_or(d.value_len),
        get_ratio: p.kvs_get.unwrap_or(d.get_ratio),
        zipf: p.kvs_zipf.or(d.zipf),
        partitions: cores,
        hot,
    };
    cfg.check_field().map_err(|(field, e)| {
        let name = match field {
            "get_ratio" => "kvs-get",
            "partitions" => "cores",
            f => return anyhow!("invalid --kvs-{}: {e}", f.replace('_', "-")),
        };
        anyhow!("invalid --{name}: {e}")
    })?;
    Ok(Payload::Kvs(cfg))
}

/// The app's parameters. A `kvs` server facing the KVS client gets the client's key and value lengths
/// (for its `preload`) unless they are given.
fn app_params(p: &Params, payload: &Payload) -> Result<AppParams> {
    let mut params =
        AppParams::parse(get(&p.app_params, "app-params")?).map_err(|e| anyhow!("invalid --app-params: {e}"))?;
    if let (Payload::Kvs(c), "kvs") = (payload, get(&p.app, "app")?.as_str()) {
        for (key, value) in [("key_len", c.key_len), ("value_len", c.value_len)] {
            if params.get(key).is_none() {
                params = params.with(key, value);
            }
        }
    }
    Ok(params)
}

/// The engine configuration of resolved parameters (see [`Params::resolved`]).
pub fn build(p: &Params) -> Result<Config> {
    let cores = *get(&p.cores, "cores")?;
    let design = get(&p.iface, "iface")?.clone();
    let app = get(&p.app, "app")?.clone();
    let duration_v = duration(&p.duration, "duration")?;
    let warmup = duration(&p.warmup, "warmup")?;
    let rate = text(&p.rate, "rate")?;
    let payload = payload(p, cores)?;
    let runtime = apps::Runtime::parse(get(&p.runtime, "runtime")?).map_err(|e| anyhow!("invalid --runtime: {e}"))?;
    match get(&p.engine, "engine")? {
        Engine::Live => {
            let sim_only: Vec<&str> = [
                ("--ddio-ways", p.ddio_ways.is_some()),
                ("--llc-policy", p.llc_policy.is_some()),
                ("--llc-hash", p.llc_hash.is_some()),
                ("--profile-set", p.profile_set.is_some()),
                ("--noise-horizon", p.noise_horizon.is_some()),
                ("--noise-tail", p.noise_tail.is_some()),
                ("--stall", p.stall.is_some()),
                ("--stream-triads", p.stream_triads.is_some()),
                ("--pagerank-threads", p.pagerank_threads.is_some()),
                ("--colocated-socket", p.colocated_socket.is_some()),
                ("--nf-socket", p.nf_socket.is_some()),
                ("--copy-loop", p.copy_loop.is_some() || p.copy_bytes.is_some()),
                // The live engine's NIC cycles through frames built before the run (`live::source`).
                ("--switch-at", p.switch_at.is_some()),
                ("--settle", p.settle.is_some()),
            ]
            .into_iter()
            .filter_map(|(name, set)| set.then_some(name))
            .collect();
            if !sim_only.is_empty() {
                bail!(
                    "invalid {}: simulator options (its machine profile, host noise, stall, co-located programs, sockets and load switch); the live engine \
                     runs on this machine as it is (drop them, or run with --engine sim)",
                    sim_only.join(", ")
                );
            }
            if p.cqe_compress == Some(true) {
                bail!(
                    "invalid --cqe-compress: CQE compression engages under PCIe back pressure, which only the \
                     simulator has; the live engine's software NIC writes every completion in full"
                );
            }
            let parsed: Option<Rate> = (rate != "max").then(|| flag("rate", rate.parse())).transpose()?;
            // With `max` the NIC thread ignores the generator's rate; any valid one will do.
            let gen_cfg = gen_config(p, parsed.unwrap_or(Rate::Gbps(100.0)), cores, &payload)?;
            let pace = match parsed {
                None => Pace::Max,
                Some(Rate::Mpps(m)) => Pace::Pps(m * 1e6),
                Some(r) => Pace::Pps(1e12 / r.gap_ps(gen_cfg.mean_frame_len()?.round() as usize)),
            };
            let traffic = match &p.pcap {
                Some(f) => Traffic::Pcap(f.clone()),
                None => Traffic::Generate(Box::new(gen_cfg)),
            };
            Ok(Config::Live(Box::new(LiveConfig {
                design,
                iface: iface(p)?,
                app,
                app_params: app_params(p, &payload)?,
                runtime,
                traffic,
                pace,
                ensogen: p.ensogen.unwrap_or(false),
                duration: duration_v,
                warmup,
                nic_threads: p.nic_threads.unwrap_or(1),
            })))
        }
        Engine::Sim => {
            if p.pcap.is_some() {
                bail!("invalid --pcap: the simulator generates its traffic; replay a capture with --engine live");
            }
            if rate == "max" {
                bail!("invalid --rate: `max` is the live NIC thread's pace; give the simulator a rate, e.g. 200G");
            }
            if p.nic_threads.is_some_and(|n| n != 1) {
                bail!("invalid --nic-threads: the live engine's software NIC threads; the simulator models one NIC");
            }
            Ok(Config::Sim(Box::new(sim::SimConfig {
                profile: get(&p.profile, "profile")?.clone(),
                profile_set: p.profile_set.clone().unwrap_or_default(),
                ddio_ways: p.ddio_ways,
                llc_policy: p
                    .llc_policy
                    .as_deref()
                    .map(str::parse)
                    .transpose()
                    .map_err(|e| anyhow!("invalid --llc-policy: {e}"))?,
                llc_hash: p.llc_hash,
                cqe_compress: p.cqe_compress,
                rx_refill: p.rx_refill.as_deref().map(|r| flag("rx-refill", r.parse())).transpose()?,
                iface: iface(p)?,
                design,
                app,
                app_params: app_params(p, &payload)?,
                runtime,
                traffic: gen_config(p, flag("rate", rate.parse())?, cores, &payload)?,
                arrivals: match get(&p.arrivals, "arrivals")? {
                    Arrivals::Paced => sim::Arrivals::Paced,
                    Arrivals::Poisson => sim::Arrivals::Poisson,
                },
                duration_ps: (warmup + duration_v).as_nanos() as u64 * 1000,
                warmup_ps: warmup.as_nanos() as u64 * 1000,
                settle: p.settle.unwrap_or(false),
                seed: *get(&p.sim_seed, "sim-seed")?,
                noise: *get(&p.noise, "noise")?,
                noise_horizon_ps: optional_ps(&p.noise_horizon, "noise-horizon")?,
                noise_tail: match p.noise_tail {
                    Some(NoiseTail::Longest) => sim::noise::Tail::Longest,
                    None | Some(NoiseTail::Rare) => sim::noise::Tail::Rare,
                },
                warm_tables: *get(&p.warm_tables, "warm-tables")?,
                stall_ps: optional_ps(&p.stall, "stall")?.unwrap_or(0),
                stream_triads: p.stream_triads.unwrap_or(0),
                pagerank_threads: p.pagerank_threads.unwrap_or(0),
                colocated_socket: p.colocated_socket.map(Into::into).unwrap_or_default(),
                nf_socket: p.nf_socket.map(Into::into).unwrap_or_default(),
                copy_loop: match (p.copy_loop.as_deref(), p.copy_bytes) {
                    (Some(way), Some(bytes)) => Some(flag("copy-loop", CopySpec::new(way, bytes as u64))?),
                    (None, None) => None,
                    _ => bail!("a copy loop needs both --copy-loop and --copy-bytes"),
                },
            })))
        }
    }
}

/// An engine's report of one run.
#[derive(Debug, Clone)]
pub enum Report {
    /// A live run's.
    Live(Box<LiveReport>),
    /// A simulation run's.
    Sim(Box<SimReport>),
}

impl Report {
    /// The report as JSON and as the engine's table.
    pub fn outcome(&self) -> Result<Outcome> {
        Ok(match self {
            Report::Live(r) => Outcome { json: serde_json::to_value(r)?, text: r.to_string() },
            Report::Sim(r) => Outcome { json: serde_json::to_value(r)?, text: r.to_string() },
        })
    }

    /// Mean kilobits a packet of the offered traffic takes on the wire (framing included), which
    /// converts a rate between Gbps and Mpps; `None` when a simulation offered nothing in its window.
    pub fn wire_kbit_per_packet(&self) -> Option<f64> {
        match self {
            Report::Live(r) => Some((r.frame_len + WIRE_OVERHEAD as f64) * 8.0 / 1e3),
            Report::Sim(r) => (r.offered.mpps > 0.0).then(|| r.offered.gbps_wire / r.offered.mpps),
        }
    }
}

/// Run a configuration.
pub fn report(cfg: &Config) -> Result<Report> {
    report_observed(cfg, &sim::Progress::default())
}

/// Held by every run in this process: for reading by a simulation, which shares the machine with others
/// (a sweep's points, a point's trials), and for writing by a live run, which measures this machine's
/// cores and so runs alone.
static MACHINE: RwLock<()> = RwLock::new(());

/// Run a configuration; a simulation stores the virtual time it has reached (ps) into `progress` as it
/// goes ([`sim::run_observed`]). A live run waits until no other run is going, and holds the others back
/// until it ends (a process-wide read-write lock).
pub fn report_observed(cfg: &Config, progress: &sim::Progress) -> Result<Report> {
    Ok(match cfg {
        Config::Live(c) => {
            let _alone = MACHINE.write().unwrap_or_else(|e| e.into_inner());
            Report::Live(Box::new(live::run(c)?))
        }
        Config::Sim(c) => {
            let _shared = MACHINE.read().unwrap_or_else(|e| e.into_inner());
            Report::Sim(Box::new(sim::run_observed(c, progress)?))
        }
    })
}

/// Run the point of resolved parameters: once, with `--ndr` as a no-drop-rate search, and with
/// `--trials N` N times reported as trimmed means ([`crate::trials`]).
pub fn run(p: &Params) -> Result<Outcome> {
    match p.trials {
        Some(0) => bail!("invalid --trials: 0 runs; give 1 or more"),
        Some(n) if n > 1 => return crate::trials::run(p, n),
        _ => {}
    }
    match NdrOptions::from_params(p)? {
        Some(opts) => ndr::run(p, &opts),
        None => report(&build(p)?)?.outcome(),
    }
}

/// A stable identifier of a point: 16 hex digits of FNV-1a over its resolved parameters without the
/// label (the same run under two names is one point) and, for a profile file, its file name and text in
/// place of its path (an edited profile is a new point; the same file reached from another working
/// directory or `--dir` is the same point).
pub fn id(p: &Params) -> String {
    let file = p.profile.as_deref().filter(|f| f.ends_with(".toml")).map(Path::new);
    let name = file.and_then(Path::file_name).map(|n| n.to_string_lossy().into_owned());
    let unlabelled = Params { label: None, profile: name.or_else(|| p.profile.clone()), ..p.clone() };
    let mut bytes = serde_json::to_vec(&unlabelled).expect("Params serialise to JSON");
    if let Some(text) = file.and_then(|f| std::fs::read(f).ok()) {
        bytes.extend(text);
    }
    format!("{:016x}", fnv1a(&bytes))
}

/// 64-bit FNV-1a of `bytes`.
pub fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, b| (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with_profile(profile: &str) -> Params {
        Params { profile: Some(profile.into()), ..Params::default() }
    }

    /// A profile file is known by its name and text: the same file through two spellings of its path is one
    /// point, an edited one a new point, and a built-in profile is known by its name.
    #[test]
    fn a_profile_file_counts_by_its_name_and_text_not_its_path() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("profiles")).unwrap();
        let file = dir.path().join("profiles/one-nic.toml");
        let write =
            |links: u32| std::fs::write(&file, format!("base = \"r640-silver4216\"\n[pcie]\nlinks = {links}\n"));
        write(1).unwrap();
        let direct = with_profile(&file.display().to_string());
        let roundabout = with_profile(&dir.path().join("profiles/../profiles/one-nic.toml").display().to_string());
        let before = id(&direct);
        assert_eq!(before, id(&roundabout));
        write(2).unwrap();
        assert_ne!(before, id(&direct), "an edited profile is a new point");
        assert_ne!(id(&with_profile("r640-silver4216")), id(&with_profile("i9-9960x-enso")));
    }

    /// The `kvs` app is sent KVS requests without any `--kvs-*` option, another app only when one is given;
    /// `logmon` is sent log lines.
    #[test]
    fn the_kvs_app_gets_requests_logmon_lines_and_other_apps_the_stamp() {
        let app = |name: &str| Params { app: Some(name.into()), ..Params::default() }.resolved();
        assert!(matches!(payload(&app("kvs"), 2).unwrap(), Payload::Kvs(c) if c.partitions == 2));
        assert_eq!(payload(&app("echo"), 2).unwrap(), Payload::Stamp);
        assert_eq!(payload(&app("logmon"), 2).unwrap(), Payload::Logs(traffic::logs::LogConfig::default()));
        let echo_kvs = Params { kvs_get: Some(1.0), ..app("echo") };
        assert!(matches!(payload(&echo_kvs, 2).unwrap(), Payload::Kvs(c) if c.get_ratio == 1.0));
    }
}
