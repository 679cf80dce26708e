//! Every registered design runs in the simulator through `ifaces::with_design!` with its invariants
//! holding (conservation, drained, no leak, no duplicate, per-flow order where promised), under an app
//! that parses every packet's headers: a design that hands apps packets they cannot parse (nicmem's
//! split packets once did) fails here.

use sim::{DESIGN_NAMES, SimConfig, run};
use traffic::{GenConfig, Rate, SizeSpec};

fn config(design: &str) -> SimConfig {
    let mut cfg = SimConfig {
        design: design.into(),
        app: "l3fwd".into(),
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
        assert!(a.delivered > 0 && a.sent == a.delivered, "{name}: not every packet was forwarded\n{r}");
        assert_eq!(r.app_metrics.get("drop_malformed"), Some(&0.0), "{name}");
        assert_eq!(a.offered, a.delivered + a.dropped.values().sum::<u64>(), "{name}");
        assert!(r.cycles.total > 0.0 && r.latency.count > 0, "{name}\n{r}");
        if *name == "shring" {
            let w = r.descriptor_wait.unwrap_or_else(|| panic!("shring reports its descriptor wait\n{r}"));
            assert!(w.count > 0 && w.mean_ns > 0.0, "{w:?}");
        }
    }
}

#[test]
fn dynamic_shring_switches_on_the_simulators_samples() {
    // Every 10 ms sample favours shared rings (thresholds far below the load, memory bandwidth measured
    // by the simulator); with a window of two samples the controller switches at 20 ms.
    let mut cfg = config("dshring");
    cfg.traffic.rate = Rate::Gbps(10.0);
    cfg.duration_ps = 25_000_000_000;
    cfg.warmup_ps = 1_000_000_000;
    cfg.iface.dynamic.gbps = 1.0;
    cfg.iface.dynamic.mem_gib_per_s = 0.0;
    cfg.iface.dynamic.window = 2;
    let r = run(&cfg).unwrap();
    assert_eq!(r.device_metrics.get("switches"), Some(&1.0), "{r}");
    assert_eq!(r.device_metrics.get("ring_set_shared"), Some(&1.0), "{r}");
}

/// A run's report depends on its configuration alone, not on what the process's heap held before: the
/// simulated caches see host addresses only through `sim::addr`, and a design that touched memory the
/// allocator can hand out again (nicmem's transmit queue once grew as a heap queue) would give another
/// result here.
#[test]
fn every_design_reports_the_same_whatever_the_heap_held() {
    for name in DESIGN_NAMES {
        let first = serde_json::to_string(&run(&config(name)).unwrap()).unwrap();
        // Leave the allocator in another state: blocks of many sizes, every other one freed.
        let mut kept: Vec<Vec<u8>> = (1..400).map(|i| vec![i as u8; (i * 97) % 5000 + 1]).collect();
        kept.retain(|v| v[0] % 2 == 0);
        let again = serde_json::to_string(&run(&config(name)).unwrap()).unwrap();
        drop(kept);
        assert!(first == again, "{name}: two runs of one configuration differ");
    }
}

/// Ensō's notification prefetching (§4.2) asks the NIC about the pipe software reads next once per
/// notification that brings news: answers that repeat a known tail ask for nothing, so answers do not
/// multiply while data keeps arriving, and the prefetch writes fit the link. Were every answer to ask
/// again, one core echoing 64 B at 70 Gbps would consume about 260 notifications a packet and put 60
/// times the link's capacity of MMIO writes on PCIe towards the device.
#[test]
fn ensos_prefetching_asks_once_per_notification_with_news() {
    let mut cfg = config("enso-prefetch");
    cfg.profile = "i9-9960x-enso".into();
    cfg.app = "echo".into();
    cfg.traffic.size = SizeSpec::Fixed(64);
    cfg.traffic.rate = Rate::Gbps(70.0);
    cfg.iface.cores = 1;
    cfg.iface.burst = 1024;
    let r = run(&cfg).unwrap();
    let consumed = r.driver_metrics["notifications_consumed"];
    let packets = r.accounting.offered as f64;
    assert!(consumed < 2.0 * packets, "{consumed} notifications for {packets} packets\n{r}");
    assert!(r.pcie.to_device.utilisation <= 1.0, "{r}");
    assert_eq!(r.accounting.sent, r.accounting.delivered, "{r}");
}
