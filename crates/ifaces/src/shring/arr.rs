//! shRing RxArr (000 §4.3, Listing 1): the NIC fills the shared ring's descriptors in array order, as
//! with privRing; cores, which consume them out of order, mark reposted descriptors in a shared bitmap
//! (batched per 64-bit word, lines 16-26) and, under the ring's lock, advance the head over the maximal
//! contiguous run of marked descriptors with find-first-set and ring the doorbell (lines 29-37).
//!
//! The cost of that order is that a descriptor reposted by one core waits for every earlier descriptor,
//! possibly held by a slow peer, before the NIC may reuse it. That wait is measured from the moment a
//! core marks the descriptor to the moment a lock holder hands it back (Figures 11b and 12b) and
//! reported as `repost_wait_ns_*` in the device's metrics.

use super::{NicOrder, Place, Repost, ShDevice, ShDriver, Sharing, lock_metrics, prefetch_metrics};
use crate::bitmap::{MarkBatch, ReuseBitmap};
use crate::desc::{DescPrefetch, DescRing};
use crate::design::{ConfigError, Design, IfaceConfig, Metrics};
use crate::pool::SharedPool;
use crate::probe::Probe;
use crate::spinlock::SpinLock;
use crate::sync::{Arc, AtomicU32, AtomicU64, Ordering};

/// The RxArr design (`--iface shring`).
#[derive(Debug)]
pub struct RxArr;

/// One shared ring and its reposting state (Listing 1's `sd_ring`).
#[derive(Debug)]
pub struct ArrShared {
    ring: DescRing,
    lock: SpinLock,
    bitmap: ReuseBitmap,
    /// The head (`sdr->ci`): descriptors handed back so far, free-running. Written only under `lock`.
    head: AtomicU32,
    /// Per descriptor, when a core marked it (ns).
    marked_at: Box<[AtomicU64]>,
    waits: WaitHist,
}

/// The NIC's side: the next descriptor in array order.
#[derive(Debug)]
pub struct ArrNic {
    shared: Arc<ArrShared>,
    next: u32,
    prefetch: DescPrefetch,
}

/// A core's reposting state: bits collected for the current bitmap word.
#[derive(Debug)]
pub struct ArrRepost {
    shared: Arc<ArrShared>,
    batch: MarkBatch,
    /// Time of the first mark of this burst (one clock read per burst).
    now: Option<u64>,
}

impl Design for RxArr {
    const NAME: &'static str = "shring";
    type Device = ShDevice<ArrNic>;
    type Driver = ShDriver<ArrRepost>;

    fn buffers_needed(cfg: &IfaceConfig) -> u32 {
        super::buffers_needed(cfg)
    }

    fn build(cfg: &IfaceConfig, pool: &Arc<SharedPool>) -> Result<(Self::Device, Vec<Self::Driver>), ConfigError> {
        super::build::<RxArr>(cfg, pool)
    }
}

impl Sharing for RxArr {
    type Nic = ArrNic;
    type Repost = ArrRepost;

    fn segs(_: &IfaceConfig) -> u32 {
        1
    }

    fn validate(_: &IfaceConfig) -> Result<(), ConfigError> {
        Ok(())
    }

    fn make(ring: DescRing, descs: u32, cfg: &IfaceConfig, share: usize) -> (ArrNic, Vec<ArrRepost>) {
        let p = &mut crate::probe::NoProbe::default();
        ring.doorbell.ring(p, descs);
        let shared = Arc::new(ArrShared {
            bitmap: ReuseBitmap::new(ring.size()),
            marked_at: (0..descs).map(|_| AtomicU64::new(0)).collect(),
            ring,
            lock: SpinLock::new(),
            head: AtomicU32::new(0),
            waits: WaitHist::default(),
        });
        let members = (0..share).map(|_| ArrRepost { shared: shared.clone(), batch: MarkBatch::default(), now: None });
        (ArrNic { shared: shared.clone(), next: 0, prefetch: DescPrefetch::new(cfg.prefetch) }, members.collect())
    }
}

impl NicOrder for ArrNic {
    fn ring(&self) -> &DescRing {
        &self.shared.ring
    }

    #[inline]
    fn peek<P: Probe>(&mut self, p: &mut P, _member: usize) -> Option<Place> {
        let ring = &self.shared.ring;
        let tail = ring.doorbell.read();
        if self.next == tail {
            return None;
        }
        self.prefetch.get(p, ring, self.next, tail);
        Some(Place { desc: ring.size().slot(self.next) as u32, seg: 0 })
    }

    #[inline]
    fn advance(&mut self, _member: usize) -> bool {
        self.next = self.next.wrapping_add(1);
        true
    }

    fn metrics(&self, m: &mut Metrics) {
        prefetch_metrics(&self.prefetch, m);
        lock_metrics(&self.shared.lock, m);
        self.shared.waits.report(m);
    }
}

impl Repost for ArrRepost {
    fn ring(&self) -> &DescRing {
        &self.shared.ring
    }

    /// Listing 1 lines 16-22: collect the descriptor's bit, publishing the previous word's bits when the
    /// word changes.
    #[inline]
    fn consumed<P: Probe>(&mut self, p: &mut P, desc: u32) {
        let now = *self.now.get_or_insert_with(|| p.now_ns());
        let s = &self.shared;
        p.write(&s.marked_at[desc as usize]);
        // Relaxed: published by the bitmap's release OR below, read after the lock holder's acquire.
        s.marked_at[desc as usize].store(now, Ordering::Relaxed);
        s.bitmap.mark(p, &mut self.batch, desc);
    }

    /// Listing 1 lines 25-26 and 29-37: publish the last word, then under the lock advance the head over
    /// the contiguous run of marked descriptors and ring the ring's doorbell.
    #[inline]
    fn publish<P: Probe>(&mut self, p: &mut P) {
        let s = &*self.shared;
        s.bitmap.flush(p, &mut self.batch);
        self.now = None;
        s.lock.with(p, |p| {
            let now = p.now_ns();
            // Relaxed: `head` is only touched under the lock, whose acquire/release orders it.
            let head = s.head.load(Ordering::Relaxed);
            let size = s.ring.size();
            let n = s.bitmap.take_run(p, head, |i| {
                let marked = s.marked_at[size.slot(i)].load(Ordering::Relaxed);
                s.waits.record_locked(now.saturating_sub(marked));
            });
            if n > 0 {
                let head = head.wrapping_add(n);
                s.head.store(head, Ordering::Relaxed);
                // Descriptors `head..head + size` are the NIC's (doorbell: release).
                s.ring.doorbell.ring(p, head.wrapping_add(size.get()));
            }
        });
    }
}

/// Sub-buckets per power of two: values are kept to within 1/8 (12.5 %).
const SUB: u32 = 8;

/// A log-linear histogram of reposting waits, written only by the holder of the ring's lock (so plain
/// loads and stores suffice) and read racily for reports.
#[derive(Debug)]
struct WaitHist {
    buckets: Box<[AtomicU64]>,
    sum: AtomicU64,
    max: AtomicU64,
}

impl Default for WaitHist {
    fn default() -> Self {
        WaitHist {
            buckets: (0..64 * SUB).map(|_| AtomicU64::new(0)).collect(),
            sum: AtomicU64::new(0),
            max: AtomicU64::new(0),
        }
    }
}

/// Bucket of `v`: exact below `SUB`, then `SUB` linear steps per power of two.
fn bucket(v: u64) -> usize {
    if v < u64::from(SUB) {
        return v as usize;
    }
    let msb = 63 - v.leading_zeros();
    let shift = msb - SUB.trailing_zeros();
    ((shift + 1) * SUB + ((v >> shift) as u32 & (SUB - 1))) as usize
}

/// Smallest value of bucket `b` (the inverse of [`bucket`]).
fn bucket_floor(b: usize) -> u64 {
    let (hi, lo) = (b as u32 / SUB, b as u32 % SUB);
    if hi == 0 { u64::from(lo) } else { u64::from(SUB + lo) << (hi - 1) }
}

impl WaitHist {
    /// Add one wait. The caller holds the ring's lock: no other writer exists, so a relaxed load and
    /// store (no read-modify-write) suffice, and the lock orders successive holders.
    fn record_locked(&self, ns: u64) {
        let add = |a: &AtomicU64, v: u64| a.store(a.load(Ordering::Relaxed).wrapping_add(v), Ordering::Relaxed);
        add(&self.buckets[bucket(ns)], 1);
        add(&self.sum, ns);
        if ns > self.max.load(Ordering::Relaxed) {
            self.max.store(ns, Ordering::Relaxed);
        }
    }

    /// Add `repost_waits`, `repost_wait_ns_{mean,p50,p99,max}` to `m` (merging with other rings' values).
    fn report(&self, m: &mut Metrics) {
        let counts: Vec<u64> = self.buckets.iter().map(|b| b.load(Ordering::Relaxed)).collect();
        let n: u64 = counts.iter().sum();
        let prev_n = m.get("repost_waits").copied().unwrap_or(0.0);
        let total = prev_n + n as f64;
        if total == 0.0 {
            return;
        }
        let q = |frac: f64| {
            let rank = (frac * n as f64).ceil() as u64;
            let mut acc = 0;
            counts.iter().position(|&c| {
                acc += c;
                acc >= rank.max(1)
            })
        };
        let merge_max = |m: &mut Metrics, k: &str, v: f64| {
            let e = m.entry(k.into()).or_insert(0.0);
            *e = e.max(v);
        };
        let mean = m.get("repost_wait_ns_mean").copied().unwrap_or(0.0) * prev_n;
        m.insert("repost_wait_ns_mean".into(), (mean + self.sum.load(Ordering::Relaxed) as f64) / total);
        m.insert("repost_waits".into(), total);
        if n > 0 {
            // Percentiles of several rings are reported as the worst ring's.
            merge_max(m, "repost_wait_ns_p50", q(0.5).map_or(0, bucket_floor) as f64);
            merge_max(m, "repost_wait_ns_p99", q(0.99).map_or(0, bucket_floor) as f64);
            merge_max(m, "repost_wait_ns_max", self.max.load(Ordering::Relaxed) as f64);
        }
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn histogram_buckets_invert() {
        for v in [0u64, 1, 7, 8, 9, 15, 16, 17, 100, 1000, 257_000, u64::MAX / 3] {
            let b = bucket(v);
            assert!(bucket_floor(b) <= v && (b + 1 == 64 * SUB as usize || v < bucket_floor(b + 1)), "{v}");
        }
        let h = WaitHist::default();
        (1..=100).for_each(|v| h.record_locked(v * 10));
        let mut m = Metrics::new();
        h.report(&mut m);
        assert_eq!(m["repost_waits"], 100.0);
        assert_eq!(m["repost_wait_ns_mean"], 505.0);
        assert_eq!(m["repost_wait_ns_max"], 1000.0);
        assert!((896.0..=990.0).contains(&m["repost_wait_ns_p99"]), "{}", m["repost_wait_ns_p99"]);
    }
}
