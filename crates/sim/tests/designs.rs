//! Every registered design runs in the simulator through `ifaces::with_design!` with its invariants
//! holding (conservation, drained, no leak, no duplicate, per-flow order where promised).

use sim::{DESIGN_NAMES, SimConfig, run};
use traffic::{GenConfig, Rate, SizeSpec};

fn config(design: &str) -> SimConfig {
    let mut cfg = SimConfig {
        design: design.into(),
        traffic: GenConfig { size: SizeSpec::Fixed(1518), flows: 256, rate: Rate::Gbps(40.0), ..GenConfig::default() },
        duration_ps: 200_000_000,
        warmup_ps: 20_000_000,
        ..SimConfig::default()
    };
    cfg.iface.cores = 4;
    cfg.iface.share = 2;
    cfg
}

#[test]
fn every_design_runs_with_its_invariants_holding() {
    for name in DESIGN_NAMES {
        let r = run(&config(name)).unwrap_or_else(|e| panic!("{name}: {e}"));
        println!("{r}");
        let a = &r.accounting;
        assert!(a.delivered > 0 && a.sent > 0, "{name}: nothing got through\n{r}");
        assert_eq!(a.offered, a.delivered + a.dropped.values().sum::<u64>(), "{name}");
        assert!(r.cycles.total > 0.0 && r.latency.count > 0, "{name}\n{r}");
        if *name == "shring" {
            let w = r.descriptor_wait.unwrap_or_else(|| panic!("shring reports its descriptor wait\n{r}"));
            assert!(w.count > 0 && w.mean_ns > 0.0, "{w:?}");
        }
    }
}
