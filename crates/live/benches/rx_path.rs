#![allow(missing_docs)] // criterion_group! generates an undocumented public function.

//! The per-packet cost of each design's receive path between two threads (one NIC thread, one worker,
//! 64 B packets, bursts of 32; the worker frees what it receives), against the floors for handing a
//! packet between cores measured the same way ([`live::handoff`]; issues 3 and 4). `rxlab bench` times
//! the same hand-offs interleaved and prints the ratios.
//!
//! privRing is measured three times: with the live engine's `NoProbe`, whose methods are empty inline
//! functions; with a `CountingProbe` that does something on every report (the gap between the two is
//! what the probe calls would cost if they did not compile away); and with Intel's 32-byte completion
//! write-back (two completions per cache line instead of one). CQE compression engages only under PCIe
//! back pressure, which a software NIC does not have, so it is the simulator's to measure.

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use ifaces::probe::CountingProbe;
use ifaces::{IfaceConfig, NoProbe, PrivRing};
use live::handoff::{time_design, time_frames, time_named, time_pointers};
use std::time::Duration;

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("rx_path_64B");
    g.throughput(Throughput::Elements(1));
    let cfg = IfaceConfig::default();
    g.bench_function("spsc_pointer_ring", |b| b.iter_custom(|n| time_pointers(n, cfg.burst)));
    g.bench_function("spsc_frame_ring", |b| b.iter_custom(|n| time_frames(n, cfg.burst)));
    g.bench_function("privring_countingprobe", |b| {
        b.iter_custom(|n| time_design::<PrivRing, CountingProbe>(&cfg, n).unwrap())
    });
    let wb32 = IfaceConfig {
        cq: ifaces::cqring::CqFormat::Wb32 { packing: ifaces::wbpack::WbPacking::NONE },
        ..IfaceConfig::default()
    };
    g.bench_function("privring_wb32", |b| b.iter_custom(|n| time_design::<PrivRing, NoProbe>(&wb32, n).unwrap()));
    for name in ifaces::DESIGN_NAMES {
        g.bench_function(*name, |b| b.iter_custom(|n| time_named(name, &cfg, n).unwrap()));
    }
    g.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().measurement_time(Duration::from_secs(3)).warm_up_time(Duration::from_secs(1));
    targets = bench
}
criterion_main!(benches);
