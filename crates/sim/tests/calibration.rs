//! The calibrations still hold: each calibrated FastClick graph, run at its calibration configuration
//! ([`apps::fastclick::Calibration`]), costs the cycles per packet its paper's statement gives, DPDK's
//! l3fwd forwards what COREC's Table 2 measured, and the Ensō testbed's E810 echoes what Ensō §7.2.1
//! measured on one core, within 2 %; and the R640's I/O path carries shRing §5.2's DDIO-off throughput
//! within the 5 % `rxlab reproduce` holds it to. A model change that moves a calibration point fails here,
//! and the message says which value would restore it, or for the read path which value to find again
//! (calibrate once more; never per experiment).

use apps::Runtime;
use apps::fastclick::{Graph, Source};
use ifaces::RingSize;
use sim::{SimConfig, run};
use traffic::{GenConfig, Rate, SizeSpec};

/// FastClick's `nf` on `cores` cores of the R640 with `ring`-entry rings, receiving the papers' 1500 B
/// packets (1518 B frames) at 200 Gbps from a million flows in the order `flows` gives.
fn fastclick_at_line_rate(nf: &str, flows: traffic::Popularity, cores: usize, ring: u32) -> SimConfig {
    let mut cfg = SimConfig {
        app: nf.into(),
        runtime: Runtime::FastClick,
        traffic: GenConfig {
            size: SizeSpec::Fixed(1518),
            flows: 1_000_000,
            popularity: flows,
            rate: Rate::Gbps(200.0),
            ..GenConfig::default()
        },
        ..SimConfig::default()
    };
    cfg.iface.cores = cores;
    cfg.iface.ring = RingSize::new(u64::from(ring)).unwrap();
    cfg
}

#[test]
fn calibrated_graphs_cost_what_their_papers_state() {
    for g in Graph::all() {
        let Source::Calibrated(c) = &g.source else { continue };
        // Steady state: 10 ms of warm-up, then 5 ms measured.
        let mut cfg = SimConfig {
            duration_ps: 15_000_000_000,
            warmup_ps: 10_000_000_000,
            ..fastclick_at_line_rate(g.nf, c.flows, c.cores, c.ring)
        };
        cfg.design = c.design.into();
        cfg.cqe_compress = Some(c.cqe_compress);
        let r = run(&cfg).unwrap_or_else(|e| panic!("{}: {e}", g.nf));
        let got = r.cycles.total;
        let off = (got - c.cycles) / c.cycles;
        assert!(
            off.abs() < 0.02,
            "{}: {got:.0} cycles per packet at its calibration point, the statement gives {:.0} ({}); \
             work = {} would restore it",
            g.nf,
            c.cycles,
            c.statement,
            (f64::from(g.work) + c.cycles - got).round()
        );
    }
}

/// One DPDK core of `profile` running `app` with `ring` descriptors and bursts of `burst`, on 64 B frames
/// offered at the port's `gbps` (line rate, so the core is the bottleneck), its clock `ghz`.
struct OneCore<'a> {
    profile: &'a str,
    app: &'a str,
    ring: u64,
    burst: usize,
    gbps: f64,
    ghz: f64,
}

/// `c` holds the rate `paper` states, within 2 %; on a miss, the message gives the cycles per packet both
/// mean and names the calibrated value (`what`, now `value`) that would restore the anchor.
fn holds_its_one_core_anchor(c: OneCore<'_>, paper: f64, what: &str, value: u32) {
    let OneCore { profile, app, ring, burst, gbps, ghz } = c;
    let mut cfg = SimConfig {
        profile: profile.into(),
        app: app.into(),
        traffic: GenConfig { size: SizeSpec::Fixed(64), rate: Rate::Gbps(gbps), ..GenConfig::default() },
        duration_ps: 1_500_000_000,
        warmup_ps: 300_000_000,
        ..SimConfig::default()
    };
    cfg.iface.ring = RingSize::new(ring).unwrap();
    cfg.iface.burst = burst;
    let r = run(&cfg).unwrap_or_else(|e| panic!("{app} on {profile}: {e}"));
    let (got, cycles, stated) = (r.received_mpps, ghz * 1e3 / r.received_mpps, ghz * 1e3 / paper);
    assert!(
        (got - paper).abs() / paper < 0.02,
        "{app} on one core of {profile}: {got:.2} Mpps ({cycles:.1} cycles per packet), the paper {paper} Mpps \
         ({stated:.1} cycles): {what} = {} would restore it",
        (f64::from(value) + stated - cycles).round()
    );
}

/// DPDK's l3fwd on one core of the XL710 testbed forwards COREC Table 2's 16.43 Mpps
/// ([`apps::l3fwd::DPDK_WORK`]).
#[test]
fn dpdk_l3fwd_forwards_what_corec_table2_states_on_one_core() {
    // DPDK's l3fwd defaults: 1024 Rx descriptors (RTE_TEST_RX_DESC_DEFAULT), bursts of 32 (MAX_PKT_BURST).
    let c = OneCore { profile: "silver4110-xl710", app: "l3fwd", ring: 1024, burst: 32, gbps: 40.0, ghz: 2.1 };
    holds_its_one_core_anchor(c, 16.43, "DPDK_WORK", apps::l3fwd::DPDK_WORK);
}

/// DPDK's echo over the E810 on one core of the Ensō testbed handles Ensō §7.2.1's 59 Mpps (the profile's
/// `nic.pmd_cycles`).
#[test]
fn dpdk_echo_on_the_e810_runs_what_enso_states_on_one_core() {
    let pmd = sim::Profile::by_name("i9-9960x-enso").expect("built-in profile").nic.pmd_cycles;
    // enso_eval dpdk_echo.cpp: RX_RING_SIZE 8192, clamped to ice's 4096 maximum, and BURST_SIZE 64.
    let c = OneCore { profile: "i9-9960x-enso", app: "echo", ring: 4096, burst: 64, gbps: 100.0, ghz: 3.1 };
    holds_its_one_core_anchor(c, 59.0, "nic.pmd_cycles", pmd);
}

/// The R640's DMA read path (`pcie.read_miss_ns`, calibrated on it) carries shRing §5.2's DDIO-off anchor:
/// with DDIO disabled, NAT and LB on 16 cores with 1 Ki privRing rings "achieve only 150 Gbps"; LB is the
/// anchor (experiments/shring-ddio.toml). Shorter than that experiment's 30 ms + 10 ms (147.5 Gbps here
/// against 149.3 there, seed 1), so held to the same ±5 % it is held to there.
#[test]
fn the_read_path_carries_shring_ddio_off_anchor() {
    let cfg = SimConfig {
        ddio_ways: Some(0),
        // 3 ms measured after 5 ms of warm-up, with the interruptions of the papers' 50 s trials.
        duration_ps: 8_000_000_000,
        warmup_ps: 5_000_000_000,
        noise_horizon_ps: Some(50_000_000_000_000),
        ..fastclick_at_line_rate("lb", traffic::Popularity::Stepped, 16, 1024)
    };
    let gbps = run(&cfg).unwrap().throughput.gbps_wire;
    assert!(
        (gbps - 150.0).abs() / 150.0 < 0.05,
        "LB on privRing with DDIO off: {gbps:.1} Gbps against shRing §5.2's 150 (pcie.read_miss_ns, \
         SKX_READ_MISS_NS in sim/src/profile.rs, is calibrated there)"
    );
}

/// MICA (`kvs`) on Ensō on one core of the Ensō testbed serves Ensō §7.3.3's 7.65 Mops with 8 B keys and
/// values and 50 % GETs ([`apps::kvs::MICA_WORK`]): as experiments/enso-fig16.toml measures it, the highest
/// rate losing under 1 %, so 2 % below it loses less and 2 % above it more.
#[test]
fn mica_on_enso_serves_what_enso_states_on_one_core() {
    let loss = |mpps: f64| {
        let kvs = traffic::kvs::client::ClientConfig {
            key_len: 8,
            value_len: 8,
            get_ratio: 0.5,
            partitions: 1,
            ..Default::default()
        };
        let mut cfg = SimConfig {
            profile: "i9-9960x-enso".into(),
            design: "enso".into(),
            app: "kvs".into(),
            app_params: apps::AppParams::new().with("key_len", 8).with("value_len", 8),
            traffic: GenConfig {
                size: SizeSpec::Fixed(64),
                rate: Rate::Mpps(mpps),
                payload: traffic::Payload::Kvs(kvs),
                ..GenConfig::default()
            },
            duration_ps: 1_000_000_000,
            warmup_ps: 200_000_000,
            ..SimConfig::default()
        };
        cfg.iface.burst = 1024;
        let a = run(&cfg).unwrap().accounting;
        1.0 - (a.sent - a.sent_late) as f64 / a.offered as f64
    };
    let paper = 7.65;
    let (below, above) = (loss(paper * 0.98), loss(paper * 1.02));
    assert!(
        below < 0.01 && above > 0.01,
        "MICA on one Enso core loses {:.2} % at {:.2} Mops and {:.2} % at {:.2}, the paper's 7.65 Mops is the \
         highest rate losing under 1 %: find MICA_WORK again (enso-fig16's Enso point on one core)",
        below * 100.0,
        paper * 0.98,
        above * 100.0,
        paper * 1.02
    );
}
