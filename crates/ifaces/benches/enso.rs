//! Echo throughput of Ensō (reactive, per-packet notifications, prefetching, chaotic) against privRing
//! measured in the same run: one NIC thread (this thread) and one worker (a spawned thread), 64-byte
//! packets (60-byte frames), bursts of 32 (Ensō Figure 8's single-core point: 148.8 vs 59 Mpps on hardware).
//!
//! The NIC thread offers packets as fast as it can (`DeviceSide::rx`, 32 per round, over the two pipes of
//! the core) and transmits what the worker queued (`DeviceSide::tx`); the worker receives, increments the
//! last byte of every packet and sends it back (the echo app). Criterion times the packets that come
//! back. A second pass runs each design for a fixed time and prints packets/s, the ratio to privRing,
//! the NIC's drop share and the share of the worker's polls that found nothing: when that share is high
//! the NIC thread, not the worker, limits the rate.

use criterion::{Criterion, Throughput, criterion_main};
use ifaces::probe::NoProbe;
use ifaces::{
    Arena, BufLayout, CoreCtx, Design, DeviceSide, DriverSide, Enso, EnsoChaotic, EnsoPerPacket, EnsoPrefetch,
    IfaceConfig, PrivRing, SharedPool,
};
use std::hint::black_box;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

const BURST: usize = 32;

/// What one run measured.
struct Run {
    elapsed: Duration,
    echoed: u64,
    offered: u64,
    polls: u64,
    empty: u64,
}

/// Run design `D` until `stop_after(echoed, elapsed)` says so.
fn run<D: Design>(stop_after: impl Fn(u64, Duration) -> bool) -> Run
where
    D::Driver: 'static,
{
    let cfg = IfaceConfig::default();
    let pool = SharedPool::new(Arc::new(Arena::new("bench", D::buffers_needed(&cfg), BufLayout::default()).unwrap()));
    let (mut dev, mut drivers) = D::build(&cfg, &pool).unwrap();
    let mut drv = drivers.pop().unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let (stop2, pool2) = (stop.clone(), pool.clone());
    let worker = std::thread::spawn(move || {
        let core = CoreCtx::new(0, cfg.cache, &pool2);
        let p = &mut NoProbe::default();
        let (mut rx, mut polls, mut empty) = (Vec::with_capacity(BURST), 0u64, 0u64);
        while !stop2.load(Ordering::Relaxed) {
            polls += 1;
            if drv.rx_burst(p, &core, &mut rx, BURST) == 0 {
                empty += 1;
                continue;
            }
            for pkt in &mut rx {
                let l = pkt.len() - 1;
                pkt[l] = pkt[l].wrapping_add(1);
            }
            drv.tx_burst(p, &core, &mut rx);
        }
        (polls, empty)
    });
    let p = &mut NoProbe::default();
    let mut frame = [0x5au8; 60];
    frame[12..14].copy_from_slice(&0x0800u16.to_be_bytes());
    let (mut echoed, mut offered) = (0u64, 0u64);
    let start = Instant::now();
    while !stop_after(echoed, start.elapsed()) {
        for i in 0..BURST as u32 {
            let _ = dev.rx(p, 0, i << 16, &frame);
        }
        offered += BURST as u64;
        echoed += dev.tx(
            p,
            &mut |f: &[u8]| {
                black_box(f);
            },
            2 * BURST,
        ) as u64;
    }
    let elapsed = start.elapsed();
    stop.store(true, Ordering::Relaxed);
    let (polls, empty) = worker.join().unwrap();
    Run { elapsed, echoed, offered, polls, empty }
}

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("echo_1core_64B");
    g.throughput(Throughput::Elements(1));
    g.sample_size(10).measurement_time(Duration::from_secs(2)).warm_up_time(Duration::from_millis(300));
    macro_rules! one {
        ($d:ty) => {
            g.bench_function(<$d as Design>::NAME, |b| b.iter_custom(|iters| run::<$d>(|n, _| n >= iters).elapsed));
        };
    }
    one!(PrivRing);
    one!(Enso);
    one!(EnsoPerPacket);
    one!(EnsoPrefetch);
    one!(EnsoChaotic);
    g.finish();

    println!("\nEcho, 1 NIC thread + 1 worker, 60 B frames, 1 s per design (same process, same machine load):");
    println!("{:<14} {:>8} {:>10} {:>8} {:>12}", "design", "Mpps", "vs privRing", "drops", "idle polls");
    let mut base = None;
    macro_rules! row {
        ($d:ty) => {{
            let r = run::<$d>(|_, t| t >= Duration::from_secs(1));
            let mpps = r.echoed as f64 / r.elapsed.as_secs_f64() / 1e6;
            let base = *base.get_or_insert(mpps);
            println!(
                "{:<14} {:>8.2} {:>10.2}x {:>7.1}% {:>11.1}%",
                <$d as Design>::NAME,
                mpps,
                mpps / base,
                100.0 * (1.0 - r.echoed as f64 / r.offered.max(1) as f64),
                100.0 * r.empty as f64 / r.polls.max(1) as f64
            );
        }};
    }
    row!(PrivRing);
    row!(Enso);
    row!(EnsoPerPacket);
    row!(EnsoPrefetch);
    row!(EnsoChaotic);
}

fn benches() {
    let mut c = Criterion::default().configure_from_args();
    bench(&mut c);
}

criterion_main!(benches);
