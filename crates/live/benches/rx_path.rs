#![allow(missing_docs)] // criterion_group! generates an undocumented public function.

//! The per-packet cost of each design's receive path between two threads (one NIC thread, one worker,
//! 64 B packets, bursts of 32; the worker frees what it receives), against the floor for handing a packet
//! between cores: a bare single-producer single-consumer ring of packet pointers (`rtrb`), measured in
//! the same run (issues 3 and 4).
//!
//! privRing is measured three times: with the live engine's `NoProbe`, whose methods are empty inline
//! functions; with a `CountingProbe` that does something on every report (the gap between the two is
//! what the probe calls would cost if they did not compile away); and with mini-CQEs (`cqe_compress`:
//! eight completions per cache line instead of one).

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use ifaces::probe::CountingProbe;
use ifaces::{
    Arena, BufLayout, CoreCtx, Design, DeviceSide, DriverSide, IfaceConfig, NoProbe, PrivRing, Probe, SharedPool,
};
use std::sync::Arc;
use std::time::{Duration, Instant};

const FRAME: [u8; 60] = [0x5a; 60];

/// Deliver `n` packets from this thread (the NIC) to a worker thread that receives and frees them.
fn pair<D: Design, P: Probe + Default>(n: u64) -> Duration {
    pair_with::<D, P>(IfaceConfig::default(), n)
}

/// [`pair`] with `cfg`.
fn pair_with<D: Design, P: Probe + Default>(cfg: IfaceConfig, n: u64) -> Duration {
    let pool = SharedPool::new(Arc::new(Arena::new("bench", D::buffers_needed(&cfg), BufLayout::default()).unwrap()));
    let (mut dev, mut drivers) = D::build(&cfg, &pool).unwrap();
    let mut drv = drivers.pop().unwrap();
    let start = Instant::now();
    std::thread::scope(|s| {
        s.spawn(|| {
            let core = CoreCtx::new(0, cfg.cache, &pool);
            let mut p = P::default();
            let mut rx = Vec::with_capacity(cfg.burst);
            let mut got = 0;
            while got < n {
                got += drv.rx_burst(&mut p, &core, &mut rx, cfg.burst) as u64;
                rx.clear();
            }
            drv.teardown(&core);
        });
        let mut p = P::default();
        let mut sent = 0;
        while sent < n {
            if dev.rx(&mut p, 0, 0, &FRAME).is_ok() {
                sent += 1;
            } else {
                std::hint::spin_loop();
            }
        }
    });
    start.elapsed()
}

/// Hand `n` items from this thread to a consumer thread through an SPSC ring of 1 Ki slots: packet
/// pointers (the floor for handing a packet over) or whole 64 B frames (the floor for moving its bytes).
fn spsc<T: Copy + Send>(n: u64, item: impl Fn(u64) -> T + Sync) -> Duration {
    let (mut tx, mut rx) = rtrb::RingBuffer::<T>::new(1024);
    let start = Instant::now();
    std::thread::scope(|s| {
        s.spawn(move || {
            let mut got = 0;
            while got < n {
                if let Ok(chunk) = rx.read_chunk(rx.slots().min(32)) {
                    got += chunk.len() as u64;
                    chunk.commit_all();
                } else {
                    std::hint::spin_loop();
                }
            }
        });
        let mut sent = 0u64;
        while sent < n {
            if tx.push(item(sent)).is_ok() {
                sent += 1;
            } else {
                std::hint::spin_loop();
            }
        }
    });
    start.elapsed()
}

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("rx_path_64B");
    g.throughput(Throughput::Elements(1));
    g.bench_function("spsc_pointer_ring", |b| b.iter_custom(|n| spsc(n, |i| FRAME.as_ptr() as usize + i as usize)));
    g.bench_function("spsc_frame_ring", |b| b.iter_custom(|n| spsc(n, |i| [i as u8; 64])));
    g.bench_function("privring_countingprobe", |b| b.iter_custom(pair::<PrivRing, CountingProbe>));
    let mini = IfaceConfig { cqe_compress: true, ..IfaceConfig::default() };
    g.bench_function("privring_cqe_compress", |b| b.iter_custom(|n| pair_with::<PrivRing, NoProbe>(mini.clone(), n)));
    for name in ifaces::DESIGN_NAMES {
        ifaces::with_design!(name, D => g.bench_function(*name, |b| b.iter_custom(pair::<D, NoProbe>))).unwrap();
    }
    g.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().measurement_time(Duration::from_secs(3)).warm_up_time(Duration::from_secs(1));
    targets = bench
}
criterion_main!(benches);
