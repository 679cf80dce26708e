//! `telemetry`: NitroSketch (Liu et al., SIGCOMM'19, §4) over a Count-Min sketch (Cormode and
//! Muthukrishnan, 2005), as Ensō §7.3.2 runs it (enso_eval `nitrosketch/`: `enso_nitrosketch.cpp`,
//! `dpdk_nitrosketch.cpp`, `nitrosketch.h`, `constants.h`). Each row update happens with probability `p`
//! and adds `1/p`; a geometric draw says how many row slots (`depth` a packet) to skip before the next
//! one, so a packet between updates costs a counter compare, and only an updated row hashes the flow's
//! key. The key is the packet's source and destination address (the artifact's `src_addr | dst_addr <<
//! 32` for IPv4; IPv6 addresses are hashed); packets of other EtherTypes are forwarded uncounted. Every
//! packet leaves with its MAC addresses swapped, as both of the artifact's wrappers send it back.
//!
//! With `p = 1` this is the plain Count-Min sketch: estimates never under-count, and with width
//! `w = ⌈e/ε⌉` and depth `d = ⌈ln 1/δ⌉` each over-counts by more than `εN` with probability at most `δ`.
//!
//! Parameters, defaults the artifact's (`constants.h`, and `cm_init(&cm, CM_COL_NO, 0.01)`): `width=N`
//! counters per row (`CM_COL_NO` 102400), `depth=N` rows (`CM_ROW_NO` 5), `sample=P` row-update
//! probability, 1/n (0.01), `top=K` heavy hitters tracked on sampled packets (0: the artifact leaves
//! `TOPK` undefined).

use crate::flow::{self, hash_bytes, mix};
use crate::params::Reader;
use crate::{App, AppError};
use ifaces::probe::Access;
use ifaces::{CoreCtx, Metrics, Packet, Probe};
use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

impl App for Telemetry {
    // Ensō §7.3.2; the artifact's receive loop (enso_nitrosketch.cpp, dpdk_nitrosketch.cpp).
    fn process<'c, P: Probe>(&mut self, p: &mut P, _: &'c CoreCtx, rx: &mut Vec<Packet<'c>>, tx: &mut Vec<Packet<'c>>) {
        for mut pkt in rx.drain(..) {
            let addr = pkt.addr();
            if pkt.len() < ETH_HEADER {
                p.touch(addr, pkt.len().max(1), Access::Read);
                self.malformed += 1;
                continue;
            }
            p.touch(addr, ETH_HEADER, Access::Read);
            p.work(PACKET_WORK);
            self.packets += 1;
            match self.sketch.due().then(|| addresses(&pkt)).flatten() {
                Some(at) => {
                    p.touch(addr + at.start, at.len(), Access::Read);
                    let (key, pair) = key(&pkt[at]);
                    if matches!(pair.0, IpAddr::V6(_)) {
                        p.work(flow::hash_bytes_work(32));
                    }
                    self.sketch.update(p, key);
                    self.sampled += 1;
                    if self.k > 0 {
                        self.track(p, pair, key);
                    }
                }
                None => self.sketch.pass(),
            }
            // Swap the MAC addresses (`eth_hdr->s_addr` and `d_addr`).
            let (dst, src) = pkt[..12].split_at_mut(6);
            dst.swap_with_slice(src);
            p.touch(addr, 12, Access::Write);
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

/// Bytes of the Ethernet header: the artifact reads its EtherType for every packet.
const ETH_HEADER: usize = 14;
/// Cycles a packet costs besides its memory touches: count it, compare the count with the next update,
/// test the EtherType and swap the two 6-byte MAC addresses.
const PACKET_WORK: u32 = 6;
/// Cycles per row updated or read: the key's [`mix`] with the row's seed ([`flow::HASH_WORK`]), its
/// reduction modulo the width (a multiply by the constant's reciprocal) and the add.
const ROW_WORK: u32 = flow::HASH_WORK + 6;
/// Cycles to take the next geometric draw from the table (an index increment and a load).
const GEOMETRIC_WORK: u32 = 2;
/// Precomputed geometric draws, as the artifact's `geoArr` (`FASTRAND_GEO`: 1 << 16 of them).
const GEOMETRIC_TABLE: usize = 1 << 16;
/// Most rows a sketch may have.
const MAX_DEPTH: usize = 16;

/// Where a frame's source and destination addresses lie, back to back (IPv4 or IPv6 without VLAN
/// tags); `None` for other EtherTypes and frames too short to hold them.
fn addresses(frame: &[u8]) -> Option<std::ops::Range<usize>> {
    let at = match u16::from_be_bytes([frame[12], frame[13]]) {
        0x0800 => ETH_HEADER + 12..ETH_HEADER + 20,
        0x86dd => ETH_HEADER + 8..ETH_HEADER + 40,
        _ => return None,
    };
    (at.end <= frame.len()).then_some(at)
}

/// The sketch key of the source and destination addresses `both` (back to back) and the pair itself:
/// for IPv4 the artifact's `src_addr | dst_addr << 32` of the addresses as stored, for IPv6 their hash.
fn key(both: &[u8]) -> (u64, (IpAddr, IpAddr)) {
    if let Ok(v4) = <[u8; 8]>::try_from(both) {
        let (src, dst) = ([v4[0], v4[1], v4[2], v4[3]], [v4[4], v4[5], v4[6], v4[7]]);
        let key = u64::from(u32::from_ne_bytes(src)) | u64::from(u32::from_ne_bytes(dst)) << 32;
        (key, (Ipv4Addr::from(src).into(), Ipv4Addr::from(dst).into()))
    } else {
        let (src, dst) = both.split_at(16);
        let v6 = |a: &[u8]| IpAddr::from(Ipv6Addr::from(<[u8; 16]>::try_from(a).expect("16 bytes")));
        (hash_bytes(both, 0), (v6(src), v6(dst)))
    }
}

/// A Count-Min sketch whose row updates are sampled (NitroSketch §4; the artifact's `cm_processing`).
#[derive(Debug, Clone)]
pub struct Sketch {
    counters: Vec<u32>,
    width: usize,
    depth: usize,
    seeds: Vec<u64>,
    /// Increment per sampled row update: `1/p` (the artifact's `gap`).
    step: u32,
    p: f64,
    /// Row slots still to skip before the next sampled one.
    skip: u64,
    /// The geometric draws and the next one to take.
    geometric: Vec<u32>,
    next: usize,
}

impl Sketch {
    /// The memory of the counters and of the geometric draws ([`crate::App::tables`]).
    pub fn tables(&self) -> Vec<std::ops::Range<usize>> {
        vec![
            crate::span(self.counters.as_ptr(), self.counters.len()),
            crate::span(self.geometric.as_ptr(), self.geometric.len()),
        ]
    }

    /// A `depth` x `width` sketch (at most 16 rows) of 32-bit counters, as the artifact's `int32_t`,
    /// updating rows with probability `p` (1/n).
    pub fn new(width: usize, depth: usize, p: f64, seed: u64) -> Sketch {
        let (width, depth) = (width.max(1), depth.clamp(1, MAX_DEPTH));
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
        let seeds = (0..depth).map(|_| rng.random()).collect();
        // Failures before a success of Geometric(p): the rows skipped before the next update.
        let mut draw = || {
            let u: f64 = rng.random_range(f64::MIN_POSITIVE..1.0);
            if p >= 1.0 { 0 } else { (u.ln() / (1.0 - p).ln()).floor() as u32 }
        };
        let geometric: Vec<u32> = (0..GEOMETRIC_TABLE).map(|_| draw()).collect();
        let skip = u64::from(geometric[0]);
        Sketch {
            counters: vec![0; width * depth],
            width,
            depth,
            seeds,
            step: (1.0 / p).round() as u32,
            p,
            skip,
            geometric,
            next: 1,
        }
    }

    /// Whether the next packet updates a row.
    pub fn due(&self) -> bool {
        self.skip < self.depth as u64
    }

    /// Let a packet by without updating it (or, for one that was due but has no key, leave its update to
    /// the next packet, as the artifact's `while (pkt_count >= cm.nextUpdate)` catches up).
    pub fn pass(&mut self) {
        self.skip = self.skip.saturating_sub(self.depth as u64);
    }

    fn slot(&self, row: usize, key: u64) -> usize {
        row * self.width + (mix(key, self.seeds[row]) % self.width as u64) as usize
    }

    /// Count a due packet with key `key` in the rows its draws choose.
    pub fn update<P: Probe>(&mut self, p: &mut P, key: u64) {
        let mut row = self.skip as usize;
        while row < self.depth {
            let i = self.slot(row, key);
            self.counters[i] = self.counters[i].saturating_add(self.step);
            p.write(&self.counters[i]);
            let g = self.geometric[self.next];
            p.read(&self.geometric[self.next]);
            self.next = (self.next + 1) % GEOMETRIC_TABLE;
            p.work(ROW_WORK + GEOMETRIC_WORK);
            row += 1 + g as usize;
        }
        self.skip = (row - self.depth) as u64;
    }

    /// The estimated packet count of key `key`: the minimum over rows (Count-Min); with sampling, the
    /// median, because each sampled row carries symmetric sampling noise besides the one-sided collision
    /// noise, and the minimum of noisy rows would under-estimate (NitroSketch, too, takes the median of
    /// its rows).
    pub fn estimate<P: Probe>(&self, p: &mut P, key: u64) -> u64 {
        let mut rows = [0u64; MAX_DEPTH];
        for (r, v) in rows.iter_mut().enumerate().take(self.depth) {
            let c = &self.counters[self.slot(r, key)];
            p.read(c);
            p.work(ROW_WORK);
            *v = u64::from(*c);
        }
        let rows = &mut rows[..self.depth];
        rows.sort_unstable();
        if self.p >= 1.0 { rows[0] } else { (rows[(self.depth - 1) / 2] + rows[self.depth / 2]) / 2 }
    }
}

/// A tracked heavy-hitter candidate: a source and destination address pair.
#[derive(Debug, Clone, Copy)]
struct Candidate {
    pair: (IpAddr, IpAddr),
    key: u64,
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
        let width = r.count("width", 102_400, 1..=1 << 30)? as usize;
        let depth = r.count("depth", 5, 1..=MAX_DEPTH as u64)? as usize;
        let p = r.float("sample", 0.01, 1e-6, 1.0)?;
        if ((1.0 / p).round() * p - 1.0).abs() > 1e-9 {
            return Err(r.error("sample", format!("{p} is not 1/n for a whole n (e.g. 0.01)")));
        }
        let k = r.count("top", 0, 0..=4096)? as usize;
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

    /// Address pairs whose estimated packet count is at least `threshold`, largest first.
    pub fn heavy_hitters(&self, threshold: u64) -> Vec<((IpAddr, IpAddr), u64)> {
        let mut hh: Vec<_> =
            self.top.iter().filter(|c| c.estimate >= threshold).map(|c| (c.pair, c.estimate)).collect();
        hh.sort_by_key(|h| std::cmp::Reverse(h.1));
        hh
    }

    /// Refresh the top-k list with a sampled pair's new estimate.
    fn track<P: Probe>(&mut self, p: &mut P, pair: (IpAddr, IpAddr), key: u64) {
        let estimate = self.sketch.estimate(p, key);
        p.read(&self.top[..]);
        p.work(self.top.len() as u32);
        if let Some(c) = self.top.iter_mut().find(|c| c.key == key) {
            c.estimate = estimate;
        } else if self.top.len() < self.k {
            self.top.push(Candidate { pair, key, estimate });
        } else if let Some(min) = self.top.iter_mut().min_by_key(|c| c.estimate).filter(|c| c.estimate < estimate) {
            *min = Candidate { pair, key, estimate };
        }
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

    /// A Zipf(1.1) stream of `n` packets over `flows` keys, with exact counts.
    fn stream(n: usize, flows: u64) -> (Vec<u64>, HashMap<u64, u64>) {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(11);
        let z = Zipf::new(flows as f64, 1.1).unwrap();
        let s: Vec<u64> = (0..n).map(|_| mix(z.sample(&mut rng) as u64, 1)).collect();
        let mut exact = HashMap::new();
        s.iter().for_each(|h| *exact.entry(*h).or_insert(0) += 1);
        (s, exact)
    }

    /// Count `keys` as the app does: an update for each packet that is due, a pass for each other.
    fn count(sk: &mut Sketch, keys: &[u64]) -> usize {
        let mut p = NoProbe::new();
        keys.iter()
            .filter(|&&k| {
                let due = sk.due();
                if due {
                    sk.update(&mut p, k)
                } else {
                    sk.pass()
                }
                due
            })
            .count()
    }

    #[test]
    fn count_min_never_under_counts_and_keeps_its_bound() {
        let (n, width, depth) = (100_000, 1000, 4);
        let (s, exact) = stream(n, 20_000);
        let mut sk = Sketch::new(width, depth, 1.0, 1);
        assert_eq!(count(&mut sk, &s), n);
        // ε = e/w, δ = e^-d: P[estimate > exact + εN] <= δ for each flow.
        let (eps, delta) = (std::f64::consts::E / width as f64, (-(depth as f64)).exp());
        let mut over = 0;
        for (&h, &c) in &exact {
            let e = sk.estimate(&mut NoProbe::new(), h);
            assert!(e >= c, "under-count: {e} < {c}");
            over += usize::from((e - c) as f64 > eps * n as f64);
        }
        assert!((over as f64) <= delta * exact.len() as f64, "{over} of {} flows beyond εN", exact.len());
    }

    #[test]
    fn sampled_sketch_is_close_for_heavy_hitters() {
        let (n, width) = (400_000, 4096);
        let (s, exact) = stream(n, 10_000);
        let mut sk = Sketch::new(width, 5, 0.01, 2);
        let sampled = count(&mut sk, &s);
        // 1 - 0.99^5 = 4.9 % of packets update at least one row.
        assert!((0.044..0.054).contains(&(sampled as f64 / n as f64)), "{sampled}");
        let mut top: Vec<_> = exact.iter().collect();
        top.sort_by(|a, b| b.1.cmp(a.1));
        for &(&h, &c) in top.iter().take(5) {
            let e = sk.estimate(&mut NoProbe::new(), h) as f64;
            // Unbiased per row, with noise ~ sqrt(c/p); the heaviest flows are within 15 % (plus the CMS εN term).
            assert!(
                (e - c as f64).abs() < 0.15 * c as f64 + std::f64::consts::E / width as f64 * n as f64,
                "{e} vs {c}"
            );
        }
    }

    #[test]
    fn heavy_hitters_from_packets_which_leave_with_their_macs_swapped() {
        let core = TestCore::new();
        let mut app =
            Telemetry::new(AppParams::parse("sample=1,width=1000,top=4").unwrap().reader("telemetry"), 0).unwrap();
        let mut frames = Vec::new();
        for (src, count) in [("10.0.0.1", 40), ("10.0.0.2", 20), ("10.0.0.3", 1), ("10.0.0.4", 1), ("10.0.0.5", 1)] {
            frames.extend((0..count).map(|i| frame(src, i, "10.0.0.9", 80, 17, 64)));
        }
        frames.extend((0..30).map(|_| frame("fd00::6", 7, "fd00::9", 80, 17, 80)));
        frames.push(vec![0; 10]);
        let sent: Vec<Vec<u8>> = frames.chunks(32).flat_map(|chunk| core.run(&mut app, chunk)).collect();
        let got: Vec<(String, u64)> = app.heavy_hitters(10).iter().map(|(pair, c)| (pair.0.to_string(), *c)).collect();
        assert_eq!(got, vec![("10.0.0.1".into(), 40), ("fd00::6".into(), 30), ("10.0.0.2".into(), 20)]);
        assert_eq!(app.metrics()["drop_malformed"], 1.0);
        assert_eq!(sent.len(), frames.len() - 1);
        assert_eq!((&sent[0][..6], &sent[0][6..12]), (&frames[0][6..12], &frames[0][..6]));
        let e = Telemetry::new(AppParams::parse("sample=0.3").unwrap().reader("telemetry"), 0).unwrap_err();
        assert!(e.to_string().starts_with("app telemetry: sample:"), "{e}");
    }
}
