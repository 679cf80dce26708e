//! Per-packet receive cost of every design relative to privRing, and the share spent in synchronisation
//! (shRing's "sync" bar of 000 Figure 2a; COREC's claim CAS and tail try-lock).
//!
//! One thread plays the NIC and `CORES` cores in turn: per round and core, the device receives a burst of
//! 32 64-byte packets for that core (`DeviceSide::rx`), the core takes them (`DriverSide::rx_burst`) and
//! frees them (dropping the packets). Criterion measures the time per packet with the live engine's
//! empty probe. Then a second pass runs the same loop with a probe that reads the time-stamp counter at
//! every phase change and charges the cycles since the previous change to the phase that was current
//! (the device's work, outside any driver phase, counts as "nic"), and prints each design's cost
//! relative to privRing and its `Phase::Sync` share. The phase probe's own clock reads add a few cycles
//! per change, spread over the phases around it.

use criterion::{Criterion, Throughput, criterion_main};
use ifaces::probe::{Access, NoProbe, Phase, Probe};
use ifaces::{
    Arena, BatchedRxList, BufLayout, CoreCtx, Design, DeviceSide, DriverSide, Dynamic, IfaceConfig, PrivRing, RingSize,
    RxArr, RxBisect, RxList, SharedPool,
};
use std::hint::black_box;
use std::sync::Arc;
use std::time::Instant;

const CORES: usize = 2;
const BURST: usize = 32;

fn cfg() -> IfaceConfig {
    IfaceConfig { cores: CORES, share: CORES, ring: RingSize::new(1024).unwrap(), ..IfaceConfig::default() }
}

/// A design built over its own pool, with its cores.
struct Bench<D: Design> {
    dev: D::Device,
    drivers: Vec<D::Driver>,
    cores: Vec<CoreCtx>,
    frame: [u8; 64],
}

impl<D: Design> Bench<D> {
    fn new() -> Bench<D> {
        let cfg = cfg();
        let arena = Arena::new("bench", D::buffers_needed(&cfg), BufLayout::default()).unwrap();
        let pool = SharedPool::new(Arc::new(arena));
        let (dev, drivers) = D::build(&cfg, &pool).unwrap();
        let cores = (0..cfg.cores).map(|c| CoreCtx::new(c as u16, cfg.cache, &pool)).collect();
        Bench { dev, drivers, cores, frame: [0x5a; 64] }
    }

    /// One round: a burst per core; returns packets received. `after` runs after each driver call.
    #[inline]
    fn round<P: Probe>(&mut self, p: &mut P, mut after: impl FnMut(&mut P)) -> usize {
        let mut got = 0;
        for c in 0..CORES {
            for i in 0..BURST {
                let _ = self.dev.rx(p, c as u16, i as u32, &self.frame);
            }
            let mut out = Vec::with_capacity(BURST);
            got += self.drivers[c].rx_burst(p, &self.cores[c], &mut out, BURST);
            black_box(&out);
            drop(out);
            after(p);
        }
        got
    }
}

/// Charges time-stamp counter cycles to the current phase (the last index: outside any driver phase).
#[derive(Default)]
struct PhaseClock {
    current: Option<Phase>,
    last: u64,
    cycles: [u64; Phase::ALL.len() + 1],
}

fn tsc() -> u64 {
    #[cfg(target_arch = "x86_64")]
    #[allow(unsafe_code)]
    // SAFETY: RDTSC reads a counter; it has no memory effects and exists on every x86-64 CPU.
    unsafe {
        std::arch::x86_64::_rdtsc()
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        use std::sync::OnceLock;
        static T0: OnceLock<Instant> = OnceLock::new();
        T0.get_or_init(Instant::now).elapsed().as_nanos() as u64
    }
}

impl PhaseClock {
    fn index(p: Option<Phase>) -> usize {
        p.map_or(Phase::ALL.len(), |p| Phase::ALL.iter().position(|&q| q == p).unwrap())
    }

    fn settle(&mut self) {
        let now = tsc();
        self.cycles[Self::index(self.current)] += now - self.last;
        self.last = now;
    }
}

impl Probe for PhaseClock {
    fn touch(&mut self, _: usize, _: usize, _: Access) {}
    fn work(&mut self, _: u32) {}
    fn mmio_write(&mut self, _: usize, _: usize) {}
    fn lock(&mut self, _: usize) {}
    fn unlock(&mut self, _: usize) {}
    fn phase(&mut self, phase: Phase) -> Phase {
        self.settle();
        // The outermost driver phase "returns" to Rx; the bench resets to the device's time after each
        // driver call (see `round`).
        self.current.replace(phase).unwrap_or(Phase::Rx)
    }
    fn now_ns(&self) -> u64 {
        0
    }
}

/// Nanoseconds per packet with the empty probe (best of 5 runs of `rounds / 5` rounds), and the sync
/// share with the clock over `rounds` rounds.
fn measure<D: Design>(rounds: usize) -> (f64, f64) {
    let mut b = Bench::<D>::new();
    let p = &mut NoProbe::default();
    for _ in 0..rounds / 10 {
        b.round(p, |_| ());
    }
    // The best of 5 runs: other processes on the machine only ever add time.
    let ns = (0..5)
        .map(|_| {
            let t = Instant::now();
            let pkts: usize = (0..rounds / 5).map(|_| b.round(p, |_| ())).sum();
            t.elapsed().as_nanos() as f64 / pkts as f64
        })
        .fold(f64::INFINITY, f64::min);
    let mut clock = PhaseClock { last: tsc(), ..PhaseClock::default() };
    let outside = |c: &mut PhaseClock| {
        c.settle();
        c.current = None;
    };
    for _ in 0..rounds {
        b.round(&mut clock, outside);
    }
    let total: u64 = clock.cycles.iter().sum();
    (ns, clock.cycles[PhaseClock::index(Some(Phase::Sync))] as f64 / total as f64)
}

fn bench_one<D: Design>(c: &mut Criterion) {
    let mut g = c.benchmark_group("rx_per_packet");
    g.throughput(Throughput::Elements((CORES * BURST) as u64));
    let mut b = Bench::<D>::new();
    let p = &mut NoProbe::default();
    g.bench_function(D::NAME, |it| it.iter(|| b.round(p, |_| ())));
    g.finish();
}

fn designs(c: &mut Criterion) {
    bench_one::<PrivRing>(c);
    bench_one::<RxArr>(c);
    bench_one::<RxList>(c);
    bench_one::<BatchedRxList>(c);
    bench_one::<Dynamic>(c);
    bench_one::<RxBisect>(c);
    bench_one::<ifaces::Corec>(c);

    let rounds = 50_000;
    let rows = [
        (PrivRing::NAME, measure::<PrivRing>(rounds)),
        (RxArr::NAME, measure::<RxArr>(rounds)),
        (RxList::NAME, measure::<RxList>(rounds)),
        (BatchedRxList::NAME, measure::<BatchedRxList>(rounds)),
        (Dynamic::NAME, measure::<Dynamic>(rounds)),
        (RxBisect::NAME, measure::<RxBisect>(rounds)),
        (ifaces::Corec::NAME, measure::<ifaces::Corec>(rounds)),
    ];
    let base = rows[0].1.0;
    println!("\n| design | ns/packet | vs privring | sync share |\n|---|---:|---:|---:|");
    for (name, (ns, sync)) in rows {
        println!("| {name} | {ns:.1} | {:.2}x | {:.1}% |", ns / base, 100.0 * sync);
    }
}

/// Criterion's generated entry points, which carry no docs.
#[allow(missing_docs)]
mod group {
    criterion::criterion_group!(benches, super::designs);
}
criterion_main!(group::benches);
