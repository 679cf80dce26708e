//! The FastClick runtime's calibrations still hold: each calibrated graph, run at its calibration
//! configuration ([`apps::fastclick::Calibration`]), costs the cycles per packet its paper's statement
//! gives, within 2 %. A model change that moves a calibration point fails here, and the message says
//! which `work` value would restore it (calibrate once more; never per experiment).

use apps::Runtime;
use apps::fastclick::{Graph, Source};
use ifaces::RingSize;
use sim::{SimConfig, run};
use traffic::{GenConfig, Rate, SizeSpec};

#[test]
fn calibrated_graphs_cost_what_their_papers_state() {
    for g in Graph::all() {
        let Source::Calibrated(c) = &g.source else { continue };
        let mut cfg = SimConfig {
            app: g.nf.into(),
            runtime: Runtime::FastClick,
            traffic: GenConfig {
                size: SizeSpec::Fixed(1518),
                flows: 1_000_000,
                rate: Rate::Gbps(200.0),
                ..GenConfig::default()
            },
            // Steady state: 10 ms of warm-up, then 5 ms measured.
            duration_ps: 15_000_000_000,
            warmup_ps: 10_000_000_000,
            ..SimConfig::default()
        };
        cfg.design = c.design.into();
        cfg.iface.cores = c.cores;
        cfg.iface.ring = RingSize::new(u64::from(c.ring)).unwrap();
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
