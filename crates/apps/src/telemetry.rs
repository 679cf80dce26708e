//! `telemetry`: per-core flow-size measurement with a Count-Min sketch (Cormode and Muthukrishnan, 2005)
//! updated NitroSketch-style (Liu et al., SIGCOMM'19, §4) as Ensō §7.3.2 runs it: instead of updating all
//! `d` rows for every packet, each row update happens with probability `p` and adds `1/p`; a geometric
//! random variable gives the number of row updates to skip, so unsampled packets cost one decrement.
//! A small top-k list, refreshed on sampled packets, answers heavy-hitter queries. Packets are forwarded
//! unchanged.
//!
//! With `p = 1` this is the plain Count-Min sketch: estimates never under-count, and with width
//! `w = ⌈e/ε⌉` and depth `d = ⌈ln 1/δ⌉` each over-counts by more than `εN` with probability at most `δ`.
//!
//! Parameters: `width=N` counters per row (a power of two, default 64K), `depth=N` rows (default 4),
//! `sample=P` row-update probability, 1 or a power-of-two fraction (default 1/16), `top=K` heavy hitters
//! tracked (default 32).

use crate::flow::{self, mix, tuple_hash};
use crate::params::Reader;
use crate::{App, AppError};
use ifaces::{CoreCtx, Metrics, Packet, Probe};
use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use wire::FiveTuple;

/// Cycles per row touched: a multiply-based row hash and a mask.
const ROW_WORK: u32 = 6;
/// Cycles to draw a geometric variable: a random word, a logarithm and a division.
const GEOMETRIC_WORK: u32 = 40;
/// Cycles to hash the 5-tuple: five rounds of a multiply mix over 37 bytes.
const TUPLE_HASH_WORK: u32 = 40;
/// Most rows a sketch may have.
const MAX_DEPTH: usize = 16;

/// A Count-Min sketch whose row updates are sampled (NitroSketch §4).
#[derive(Debug, Clone)]
pub struct Sketch {
    counters: Vec<u64>,
    width: usize,
    depth: usize,
    seeds: Vec<u64>,
    /// Increment per sampled row update: `1/p`.
    step: u64,
    p: f64,
    /// Row updates still to skip before the next sampled one.
    skip: u64,
    rng: Xoshiro256PlusPlus,
}

impl Sketch {
    /// The memory of the counters ([`crate::App::tables`]).
    pub fn tables(&self) -> Vec<std::ops::Range<usize>> {
        vec![crate::span(self.counters.as_ptr(), self.counters.len())]
    }

    /// A `depth` x `width` sketch (`width` rounded up to a power of two, at most 16 rows) updating rows with
    /// probability `p` (1/2^k).
    pub fn new(width: usize, depth: usize, p: f64, seed: u64) -> Sketch {
        let (width, depth) = (width.max(1).next_power_of_two(), depth.clamp(1, MAX_DEPTH));
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
        let seeds = (0..depth).map(|_| rng.random()).collect();
        let mut s = Sketch {
            counters: vec![0; width * depth],
            width,
            depth,
            seeds,
            step: (1.0 / p).round() as u64,
            p,
            skip: 0,
            rng,
        };
        s.skip = s.geometric();
        s
    }

    /// Row updates to skip before the next sampled one: Geometric(p) failures before a success.
    fn geometric(&mut self) -> u64 {
        if self.p >= 1.0 {
            return 0;
        }
        let u: f64 = self.rng.random_range(f64::MIN_POSITIVE..1.0);
        (u.ln() / (1.0 - self.p).ln()).floor() as u64
    }

    fn slot(&self, row: usize, hash: u64) -> usize {
        row * self.width + (mix(hash, self.seeds[row]) as usize & (self.width - 1))
    }

    /// Count one packet of the flow with hash `hash`; returns whether any row was updated.
    pub fn update<P: Probe>(&mut self, p: &mut P, hash: u64) -> bool {
        let depth = self.depth as u64;
        if self.skip >= depth {
            // The whole packet is skipped (NitroSketch's fast path).
            self.skip -= depth;
            return false;
        }
        let mut row = self.skip as usize;
        while row < self.depth {
            let i = self.slot(row, hash);
            self.counters[i] += self.step;
            p.write(&self.counters[i]);
            p.work(ROW_WORK + GEOMETRIC_WORK);
            row += 1 + self.geometric() as usize;
        }
        self.skip = (row - self.depth) as u64;
        true
    }

    /// The estimated packet count of the flow with hash `hash`: the minimum over rows (Count-Min); with
    /// sampling, the median, because each sampled row carries symmetric sampling noise besides the
    /// one-sided collision noise, and the minimum of noisy rows would under-estimate (NitroSketch, too,
    /// takes the median of its rows).
    pub fn estimate<P: Probe>(&self, p: &mut P, hash: u64) -> u64 {
        let mut rows = [0u64; MAX_DEPTH];
        for (r, v) in rows.iter_mut().enumerate().take(self.depth) {
            let c = &self.counters[self.slot(r, hash)];
            p.read(c);
            p.work(ROW_WORK);
            *v = *c;
        }
        let rows = &mut rows[..self.depth];
        rows.sort_unstable();
        if self.p >= 1.0 { rows[0] } else { (rows[(self.depth - 1) / 2] + rows[self.depth / 2]) / 2 }
    }
}

/// A tracked heavy-hitter candidate.
#[derive(Debug, Clone, Copy)]
struct Candidate {
    tuple: FiveTuple,
    hash: u64,
    estimate: u64,
}

/// The telemetry app.
#[derive(Debug)]
pub struct Telemetry {
    sketch: Sketch,
    top: Vec<Candidate>,
    k: usize,
    packets: u64,
    sampled: u64,
    malformed: u64,
}

impl Telemetry {
    /// Build from parameters (see the module documentation).
    pub fn new(mut r: Reader<'_>, core: usize) -> Result<Telemetry, AppError> {
        let width = r.count("width", 1 << 16, 1..=1 << 30)? as usize;
        if !width.is_power_of_two() {
            return Err(r.error("width", format!("{width} is not a power of two (e.g. 65536)")));
        }
        let depth = r.count("depth", 4, 1..=MAX_DEPTH as u64)? as usize;
        let p = r.float("sample", 1.0 / 16.0, 1e-6, 1.0)?;
        if (1.0 / p).round().log2().fract() != 0.0 || ((1.0 / p).round() * p - 1.0).abs() > 1e-9 {
            return Err(r.error("sample", format!("{p} is not 1 or 1/2^k (e.g. 1/16)")));
        }
        let k = r.count("top", 32, 1..=4096)? as usize;
        r.finish()?;
        Ok(Telemetry {
            sketch: Sketch::new(width, depth, p, 0x5eed ^ core as u64),
            top: Vec::with_capacity(k),
            k,
            packets: 0,
            sampled: 0,
            malformed: 0,
        })
    }

    /// Flows whose estimated packet count is at least `threshold`, largest first.
    pub fn heavy_hitters(&self, threshold: u64) -> Vec<(FiveTuple, u64)> {
        let mut hh: Vec<_> =
            self.top.iter().filter(|c| c.estimate >= threshold).map(|c| (c.tuple, c.estimate)).collect();
        hh.sort_by_key(|h| std::cmp::Reverse(h.1));
        hh
    }

    /// Refresh the top-k list with a sampled flow's new estimate.
    fn track<P: Probe>(&mut self, p: &mut P, tuple: &FiveTuple, hash: u64) {
        let estimate = self.sketch.estimate(p, hash);
        p.read(&self.top[..]);
        p.work(self.top.len() as u32);
        if let Some(c) = self.top.iter_mut().find(|c| c.hash == hash) {
            c.estimate = estimate;
        } else if self.top.len() < self.k {
            self.top.push(Candidate { tuple: *tuple, hash, estimate });
        } else if let Some(min) = self.top.iter_mut().min_by_key(|c| c.estimate).filter(|c| c.estimate < estimate) {
            *min = Candidate { tuple: *tuple, hash, estimate };
        }
    }
}

impl App for Telemetry {
    fn process<'c, P: Probe>(&mut self, p: &mut P, _: &'c CoreCtx, rx: &mut Vec<Packet<'c>>, tx: &mut Vec<Packet<'c>>) {
        for mut pkt in rx.drain(..) {
            let Ok(tuple) = flow::parse(p, &mut pkt).map(|v| *v.five_tuple()) else {
                self.malformed += 1;
                continue;
            };
            self.packets += 1;
            p.work(TUPLE_HASH_WORK);
            let hash = tuple_hash(&tuple);
            if self.sketch.update(p, hash) {
                self.sampled += 1;
                self.track(p, &tuple, hash);
            }
            tx.push(pkt);
        }
    }

    fn tables(&self) -> Vec<std::ops::Range<usize>> {
        self.sketch.tables()
    }

    fn metrics(&self) -> Metrics {
        Metrics::from([
            ("packets".into(), self.packets as f64),
            ("sampled_packets".into(), self.sampled as f64),
            ("top_estimate".into(), self.top.iter().map(|c| c.estimate).max().unwrap_or(0) as f64),
            ("drop_malformed".into(), self.malformed as f64),
        ])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::harness::{TestCore, frame};
    use crate::params::AppParams;
    use ifaces::NoProbe;
    use rand_distr::{Distribution, Zipf};
    use std::collections::HashMap;

    /// A Zipf(1.1) stream of `n` packets over `flows` flow hashes, with exact counts.
    fn stream(n: usize, flows: u64) -> (Vec<u64>, HashMap<u64, u64>) {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(11);
        let z = Zipf::new(flows as f64, 1.1).unwrap();
        let s: Vec<u64> = (0..n).map(|_| mix(z.sample(&mut rng) as u64, 1)).collect();
        let mut exact = HashMap::new();
        s.iter().for_each(|h| *exact.entry(*h).or_insert(0) += 1);
        (s, exact)
    }

    #[test]
    fn count_min_never_under_counts_and_keeps_its_bound() {
        let (n, width, depth) = (100_000, 1024, 4);
        let (s, exact) = stream(n, 20_000);
        let mut sk = Sketch::new(width, depth, 1.0, 1);
        let mut p = NoProbe::new();
        s.iter().for_each(|&h| assert!(sk.update(&mut p, h)));
        // ε = e/w, δ = e^-d: P[estimate > exact + εN] <= δ for each flow.
        let (eps, delta) = (std::f64::consts::E / width as f64, (-(depth as f64)).exp());
        let mut over = 0;
        for (&h, &c) in &exact {
            let e = sk.estimate(&mut p, h);
            assert!(e >= c, "under-count: {e} < {c}");
            over += usize::from((e - c) as f64 > eps * n as f64);
        }
        assert!((over as f64) <= delta * exact.len() as f64, "{over} of {} flows beyond εN", exact.len());
    }

    #[test]
    fn sampled_sketch_is_close_for_heavy_hitters() {
        let (n, width) = (200_000, 4096);
        let (s, exact) = stream(n, 10_000);
        let mut sk = Sketch::new(width, 4, 1.0 / 16.0, 2);
        let mut p = NoProbe::new();
        let sampled = s.iter().filter(|&&h| sk.update(&mut p, h)).count();
        // About 1 - (15/16)^4 = 23% of packets update at least one row.
        assert!((0.18..0.28).contains(&(sampled as f64 / n as f64)), "{sampled}");
        let mut top: Vec<_> = exact.iter().collect();
        top.sort_by(|a, b| b.1.cmp(a.1));
        for &(&h, &c) in top.iter().take(10) {
            let e = sk.estimate(&mut p, h) as f64;
            // Unbiased per row, with noise ~ sqrt(c/p); heavy flows are within 10% (plus the CMS εN term).
            assert!(
                (e - c as f64).abs() < 0.1 * c as f64 + std::f64::consts::E / width as f64 * n as f64,
                "{e} vs {c}"
            );
        }
    }

    #[test]
    fn heavy_hitters_from_packets() {
        let core = TestCore::new();
        let mut app =
            Telemetry::new(AppParams::parse("sample=1,width=1024,top=4").unwrap().reader("telemetry"), 0).unwrap();
        let mut frames = Vec::new();
        for (port, count) in [(1u16, 40), (2, 20), (3, 1), (4, 1), (5, 1), (6, 30)] {
            frames.extend((0..count).map(|_| frame("10.0.0.1", port, "10.0.0.2", 80, 17, 64)));
        }
        frames.push(vec![0; 10]);
        for chunk in frames.chunks(32) {
            core.run(&mut app, chunk);
        }
        let hh = app.heavy_hitters(10);
        let got: Vec<(u16, u64)> = hh.iter().map(|(t, c)| (t.src_port, *c)).collect();
        assert_eq!(got, vec![(1, 40), (6, 30), (2, 20)]);
        assert_eq!(app.metrics()["drop_malformed"], 1.0);
        let e = Telemetry::new(AppParams::parse("sample=0.3").unwrap().reader("telemetry"), 0).unwrap_err();
        assert!(e.to_string().starts_with("app telemetry: sample:"), "{e}");
    }
}
