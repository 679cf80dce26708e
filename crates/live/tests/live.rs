//! Live runs end to end: short, with every invariant checked by the engine itself.

use apps::AppParams;
use ifaces::{IfaceConfig, RingSize};
use live::{LiveConfig, LiveError, Pace, Traffic};
use std::time::Duration;
use traffic::{GenConfig, SizeSpec};

/// Live runs time real threads on the machine's few CPUs: tests that run them take turns, so that one
/// test's threads do not starve another's NIC thread for its whole window.
fn one_at_a_time() -> std::sync::MutexGuard<'static, ()> {
    static CPUS: std::sync::Mutex<()> = std::sync::Mutex::new(());
    CPUS.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

fn config(cores: usize, pace: Pace) -> LiveConfig {
    LiveConfig {
        design: "privring".into(),
        iface: IfaceConfig { cores, ring: RingSize::new(256).unwrap(), ..IfaceConfig::default() },
        app: "echo".into(),
        app_params: AppParams::new(),
        runtime: apps::Runtime::Native,
        traffic: Traffic::Generate(Box::new(GenConfig { flows: 32, ..GenConfig::default() })),
        pace,
        ensogen: false,
        duration: Duration::from_millis(150),
        warmup: Duration::from_millis(20),
        nic_threads: 1,
    }
}

#[test]
fn one_core_echo_keeps_every_invariant() {
    let _cpus = one_at_a_time();
    let r = live::run(&config(1, Pace::Pps(200_000.0))).unwrap();
    assert_eq!(r.invariants.len(), 4);
    let rx: u64 = r.per_core.iter().map(|c| c.rx).sum();
    assert!(rx > 0, "the worker received nothing");
    assert!(r.offered.mpps > 0.0);
    assert!(r.latency.count > 0, "no packet was timed");
    assert_eq!(r.flow_reordering.reordered, 0, "privRing keeps every flow in order");
    if cfg!(target_os = "linux") {
        assert!(r.steal_ms.is_some(), "/proc/stat is read on Linux");
    }
}

/// An app that sends nothing back consumes what its core takes: nothing goes out, and every packet the
/// core received is counted as consumed, not dropped.
#[test]
fn a_consumer_counts_what_it_took() {
    let _cpus = one_at_a_time();
    let mut cfg = config(1, Pace::Pps(200_000.0));
    cfg.app_params = AppParams::new().with("reply", "no");
    cfg.duration = Duration::from_millis(50);
    let r = live::run(&cfg).unwrap();
    let core = &r.per_core[0];
    assert!(core.rx > 0, "the worker received nothing");
    assert_eq!((core.tx, core.consumed), (0, core.rx));
}

/// A rate no thread can offer leaves the source ever further behind its schedule, and the run says so.
#[test]
fn a_source_behind_its_schedule_is_reported() {
    let _cpus = one_at_a_time();
    let mut cfg = config(1, Pace::Pps(1e9));
    cfg.duration = Duration::from_millis(50);
    let r = live::run(&cfg).unwrap();
    let lag = r.source_lag_us.expect("a paced run reports its lag");
    assert!(lag > 1000.0, "{lag} us");
    assert!(r.warnings.iter().any(|w| w.contains("behind its schedule")), "{:?}", r.warnings);
    assert_eq!(live::run(&config(1, Pace::Max)).unwrap().source_lag_us, None);
}

#[test]
fn more_workers_than_cpus_run_unpinned_and_stay_correct() {
    let _cpus = one_at_a_time();
    let mut cfg = config(5, Pace::Max);
    cfg.traffic = Traffic::Generate(Box::new(GenConfig { flows: 64, size: SizeSpec::Imix, ..GenConfig::default() }));
    let r = live::run(&cfg).unwrap();
    assert_eq!(r.per_core.len(), 5);
    if !r.pinned {
        assert!(r.warnings.iter().any(|w| w.contains("unpinned")));
    }
}

#[test]
fn fwd_and_pcap_replay() {
    let _cpus = one_at_a_time();
    let dir = std::env::temp_dir().join(format!("rxlab-live-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("t.pcap");
    let mut g = traffic::Generator::new(&GenConfig { flows: 8, ..GenConfig::default() }).unwrap();
    g.to_trace(traffic::Stop::Count(500)).write(&path, traffic::OutputFormat::default()).unwrap();
    let mut cfg = config(2, Pace::Pps(100_000.0));
    cfg.app = "fwd".into();
    cfg.traffic = Traffic::Pcap(path);
    let r = live::run(&cfg).unwrap();
    assert!(r.latency.count > 0);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn bad_options_name_the_option() {
    let _cpus = one_at_a_time();
    let mut cfg = config(1, Pace::Max);
    cfg.design = "nosuch".into();
    let e = live::run(&cfg).unwrap_err().to_string();
    assert!(e.contains("--iface") && e.contains("privring"), "{e}");
    let mut cfg = config(1, Pace::Max);
    cfg.duration = Duration::ZERO;
    assert!(matches!(live::run(&cfg), Err(LiveError::Option { option: "duration", .. })));
    let mut cfg = config(1, Pace::Max);
    cfg.app = "nosuch".into();
    assert!(live::run(&cfg).unwrap_err().to_string().contains("unknown app"));
    let mut cfg = config(1, Pace::Max);
    cfg.iface.burst = 1000;
    assert!(live::run(&cfg).unwrap_err().to_string().contains("--burst"));
}

/// Every design moves real packets between real threads and keeps its invariants, with more workers
/// than this machine's CPUs (how CI exercises real contention), under an app that parses every packet's
/// headers (split packets included).
#[test]
fn every_design_runs_live_with_contention() {
    let _cpus = one_at_a_time();
    for &design in ifaces::DESIGN_NAMES {
        let mut cfg = config(4, Pace::Max);
        cfg.design = design.into();
        cfg.app = "l3fwd".into();
        cfg.iface.share = 2;
        cfg.duration = Duration::from_millis(100);
        let r = live::run(&cfg).unwrap_or_else(|e| panic!("{design}: {e}"));
        let rx: u64 = r.per_core.iter().map(|c| c.rx).sum();
        assert!(rx > 0, "{design}: nothing received");
        let malformed: f64 = r.per_core.iter().map(|c| c.metrics["drop_malformed"]).sum();
        assert_eq!(malformed, 0.0, "{design}: the app could not parse what the design delivered");
    }
    let mut cfg = config(8, Pace::Max);
    cfg.design = "shring".into();
    cfg.iface.share = 4;
    live::run(&cfg).unwrap();
}

/// EnsōGen's path (Ensō Appendix B): the same trace from pre-filled TX pipes, every packet stamped and
/// checked as usual.
#[test]
fn ensogen_feeds_the_nic_from_prefilled_pipes() {
    let _cpus = one_at_a_time();
    let mut cfg = config(1, Pace::Pps(200_000.0));
    cfg.ensogen = true;
    let r = live::run(&cfg).unwrap();
    assert!(r.latency.count > 0, "no packet was timed");
    assert_eq!(r.invariants.len(), 4);
}

/// `--nic-threads 2`: two emulated ports, each with half the flows, one worker and its own device side,
/// keep every invariant for every design that splits (conservation, no leak, no duplicate, per-flow
/// order), both workers receive, and the receive end counts both ports' packets.
#[test]
fn two_nic_threads_keep_every_invariant() {
    let _cpus = one_at_a_time();
    for &design in ifaces::DESIGN_NAMES.iter().filter(|&&d| d != "corec") {
        let mut cfg = config(2, Pace::Pps(200_000.0));
        cfg.design = design.into();
        cfg.nic_threads = 2;
        let r = live::run(&cfg).unwrap_or_else(|e| panic!("{design}: {e}"));
        assert_eq!(r.nic_threads, 2);
        assert_eq!(r.invariants.len(), 4, "{design}: {:?}", r.invariants);
        let cores: Vec<usize> = r.per_core.iter().map(|c| c.core).collect();
        assert_eq!(cores, [0, 1], "{design}");
        assert!(r.per_core.iter().all(|c| c.rx > 0), "{design}: a port's worker received nothing");
        let tx: u64 = r.per_core.iter().map(|c| c.tx).sum();
        assert_eq!(r.reordering.received, tx, "{design}: the receive end missed a port's packets");
        assert_eq!(r.flow_reordering.reordered, 0, "{design} keeps every flow in order");
        assert!(r.latency.count > 0, "{design}: no packet was timed");
    }
}

/// Two ports of two workers each run the same invariant checks under contention (more threads than CPUs).
#[test]
fn two_nic_threads_with_two_workers_each() {
    let _cpus = one_at_a_time();
    let mut cfg = config(4, Pace::Max);
    cfg.design = "shring".into();
    cfg.iface.share = 2;
    cfg.nic_threads = 2;
    cfg.duration = Duration::from_millis(100);
    let r = live::run(&cfg).unwrap();
    assert_eq!(r.per_core.len(), 4);
    assert_eq!(r.invariants.len(), 4);
}

#[test]
fn nic_threads_that_cannot_be_had_name_the_option() {
    let _cpus = one_at_a_time();
    let nic_threads = |design: &str, cores, n, flows| {
        let mut cfg = config(cores, Pace::Max);
        cfg.design = design.into();
        cfg.nic_threads = n;
        cfg.traffic = Traffic::Generate(Box::new(GenConfig { flows, ..GenConfig::default() }));
        match live::run(&cfg) {
            Err(LiveError::Option { option: "nic-threads", message }) => message,
            other => panic!("{design} x{n} on {cores} cores: {other:?}"),
        }
    };
    assert!(nic_threads("corec", 2, 2, 32).contains("one shared queue"));
    assert!(nic_threads("privring", 3, 2, 32).contains("multiple of 2"));
    assert!(nic_threads("privring", 1, 0, 32).contains("at least 1"));
    assert!(nic_threads("privring", 2, 2, 1).contains("fewer flows"));
}
