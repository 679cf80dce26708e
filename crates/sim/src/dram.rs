//! DRAM: loaded latency as a function of utilisation over a sliding window, and byte counters from
//! which memory bandwidth is reported as Intel PCM would (reference/hardware.md, "DRAM loaded latency").
//!
//! Utilisation is the bytes moved in the last [`WINDOW_PS`] divided by what the sustained maximum
//! bandwidth ([`DramParams::max_gbs`]) moves in that time, for that window's mix of reads and writes
//! ([`DramParams::mix`]: a mix sustains less than reads alone). Latency is interpolated on the
//! profile's curve; offered load above the maximum is queued, so the excess adds the time the backlog
//! takes to drain at that bandwidth.
//!
//! The window ends at the engine's clock ([`Dram::set_clock`]), not at an access's own time. Within a
//! step an agent's clock runs ahead of the engine's (a core's burst of FastClick work spans 20-40 us of
//! its own time), and traffic after the engine's clock is only what agents that ran ahead have
//! reported so far: a window at the access's time would see the other agents' load as missing and
//! charge an idle memory's latency. The last complete window before the clock holds every agent's
//! traffic; it is the load an access issued now meets, as far as the simulation can know. Buckets
//! ahead of the clock keep what agents report there until the clock reaches them.

use crate::profile::DramParams;

/// Width of one utilisation bucket, ps (1 µs).
const BUCKET_PS: u64 = 1_000_000;
/// Buckets in the window.
const BUCKETS: u64 = 8;
/// Length of the sliding window over which utilisation is measured, ps.
pub const WINDOW_PS: u64 = BUCKET_PS * BUCKETS;
/// Buckets kept: the window behind the engine's clock and 248 us ahead of it, more than any step's own
/// clock runs ahead (a burst of 32 packets at 3000 cycles each is 46 us at 2.1 GHz); traffic reported
/// further ahead counts in the last bucket kept.
const RING: u64 = 256;

/// The memory controller model.
#[derive(Debug, Clone)]
pub struct Dram {
    curve: Vec<(f64, f64)>,
    /// The sustained maximum of a read-write mix, as a share of the all-reads one.
    mix: Vec<(f64, f64)>,
    /// Bytes per ps at the sustained maximum (the curve's utilisation 1).
    peak_bpps: f64,
    /// Bytes read and written in each bucket, and the bucket number each slot currently holds.
    buckets: Vec<Bucket>,
    /// The engine's clock, in buckets: every agent has reported its traffic before it.
    clock: u64,
    /// Bytes read and written since the counters were last reset.
    pub read_bytes: u64,
    /// Bytes written.
    pub write_bytes: u64,
    /// Bytes moved since the start of the run (never reset; for periodic samples).
    pub moved: u64,
}

impl Dram {
    /// A memory with the given parameters.
    pub fn new(p: &DramParams) -> Dram {
        Dram {
            curve: p.curve.clone(),
            mix: p.mix.clone(),
            peak_bpps: p.max_gbs() * 1e9 / 1e12,
            buckets: vec![Bucket { id: u64::MAX, ..Bucket::default() }; RING as usize],
            clock: 0,
            read_bytes: 0,
            write_bytes: 0,
            moved: 0,
        }
    }

    /// Move the engine's clock to `now_ps` (the time of the event being processed; it never goes back).
    #[inline]
    pub fn set_clock(&mut self, now_ps: u64) {
        self.clock = self.clock.max(now_ps / BUCKET_PS);
    }

    /// Account `bytes` moved at time `now_ps`.
    #[inline]
    pub fn transfer(&mut self, now_ps: u64, bytes: u64, write: bool) {
        self.moved += bytes;
        if write {
            self.write_bytes += bytes;
        } else {
            self.read_bytes += bytes;
        }
        // The buckets kept are the window before the clock and those after it up to the ring's size;
        // traffic stamped outside counts in the nearest of them.
        let first = self.clock.saturating_sub(BUCKETS);
        let b = (now_ps / BUCKET_PS).clamp(first, first + RING - 1);
        let slot = &mut self.buckets[(b % RING) as usize];
        if slot.id != b {
            *slot = Bucket { id: b, ..Bucket::default() };
        }
        if write {
            slot.written += bytes;
        } else {
            slot.read += bytes;
        }
    }

    /// Utilisation of the sustained maximum, for the traffic's mix of reads and writes, over the last
    /// complete window before the engine's clock (may exceed 1 under overload).
    pub fn utilisation(&self) -> f64 {
        let first = self.clock.saturating_sub(BUCKETS);
        let (read, written) = (first..self.clock)
            .map(|b| (b, &self.buckets[(b % RING) as usize]))
            .filter(|(b, s)| s.id == *b)
            .fold((0, 0), |(r, w), (_, s)| (r + s.read, w + s.written));
        let moved = (read + written) as f64;
        let mixed = if self.mix.is_empty() || moved == 0.0 {
            1.0
        } else {
            interpolate(&self.mix, read.min(written) as f64 / moved)
        };
        moved / (self.peak_bpps * mixed * WINDOW_PS as f64)
    }

    /// Latency of one access issued now, in ps: the curve at the utilisation of the last window.
    #[inline]
    pub fn latency_ps(&self) -> u64 {
        let u = self.utilisation();
        let ns = interpolate(&self.curve, u.min(1.0));
        let backlog_ps = if u > 1.0 { (u - 1.0) * WINDOW_PS as f64 } else { 0.0 };
        (ns * 1000.0 + backlog_ps) as u64
    }

    /// Forget the byte counters (not the window), at the start of a measurement.
    pub fn reset_counters(&mut self) {
        self.read_bytes = 0;
        self.write_bytes = 0;
    }
}

/// One bucket of the window: the bytes read and written in it.
#[derive(Debug, Clone, Copy, Default)]
struct Bucket {
    read: u64,
    written: u64,
    /// The bucket number the slot holds.
    id: u64,
}

/// Piecewise-linear interpolation on `(x, y)` points sorted by x, clamped at both ends.
pub fn interpolate(curve: &[(f64, f64)], x: f64) -> f64 {
    let first = curve[0];
    if x <= first.0 {
        return first.1;
    }
    for w in curve.windows(2) {
        let ((x0, y0), (x1, y1)) = (w[0], w[1]);
        if x <= x1 {
            return y0 + (y1 - y0) * (x - x0) / (x1 - x0);
        }
    }
    curve[curve.len() - 1].1
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::profile::Profile;

    /// Bytes that move `share` of the sustained maximum in one bucket.
    fn per_bucket(d: &Dram, share: f64) -> u64 {
        (d.peak_bpps * BUCKET_PS as f64 * share) as u64
    }

    #[test]
    fn idle_and_loaded_latency_follow_the_curve() {
        let p = Profile::r640_silver4216();
        let mut d = Dram::new(&p.dram);
        assert_eq!(d.latency_ps(), 79_500);
        // Half of the sustained maximum over one window is 0.5 utilisation.
        let bytes = per_bucket(&d, 0.5);
        for i in 0..BUCKETS {
            d.transfer(i * BUCKET_PS, bytes, false);
        }
        d.set_clock(WINDOW_PS);
        assert!((d.utilisation() - 0.5).abs() < 1e-3, "{}", d.utilisation());
        let want = interpolate(&p.dram.curve, 0.5) * 1000.0;
        assert!((d.latency_ps() as f64 - want).abs() < 200.0);
        // A window later, the old traffic has aged out.
        d.set_clock(3 * WINDOW_PS);
        d.transfer(3 * WINDOW_PS, 64, true);
        assert!(d.utilisation() < 1e-3);
        assert_eq!((d.read_bytes, d.write_bytes), (bytes * BUCKETS, 64));
    }

    /// An agent whose clock runs ahead of the engine's (a core in the middle of a long burst) reports
    /// traffic into buckets the window has not reached: it neither erases the window's traffic nor
    /// counts before the clock gets there, and accesses it issues meet the load of the window behind
    /// the engine's clock, which every agent has reported.
    #[test]
    fn traffic_ahead_of_the_clock_waits_for_it() {
        let p = Profile::r640_silver4216();
        let mut d = Dram::new(&p.dram);
        let bytes = per_bucket(&d, 0.9);
        for i in 0..2 * BUCKETS {
            d.transfer(i * BUCKET_PS, bytes, false);
        }
        d.set_clock(2 * WINDOW_PS);
        let loaded = d.latency_ps();
        assert!(loaded > 125_000, "{loaded}");
        // 20-40 us ahead of the clock: a step's own time.
        for ahead in 20..40 {
            d.transfer(2 * WINDOW_PS + ahead * BUCKET_PS, 64, false);
        }
        assert_eq!(d.latency_ps(), loaded);
        // When the clock gets there, the window holds only what was reported there.
        d.set_clock(2 * WINDOW_PS + 28 * BUCKET_PS);
        assert!((d.utilisation() - 8.0 * 64.0 / (d.peak_bpps * WINDOW_PS as f64)).abs() < 1e-9);
        assert_eq!(d.latency_ps(), 79_500);
    }

    /// A window of reads and writes in equal shares meets the 1:1 mix's lower maximum ([MLC8269]: 88.5 %
    /// of all reads), one of a read to three writes the 3:1 mix's (the turnarounds cost the same either
    /// way round), and the same bytes all written the all-reads one, as the bus never turns around.
    #[test]
    fn a_read_write_mix_sustains_less_than_one_direction() {
        let p = Profile::r640_silver4216();
        let util = |writes_per_read: Option<u64>| {
            let mut d = Dram::new(&p.dram);
            let bytes = per_bucket(&d, 0.5);
            for i in 0..BUCKETS {
                match writes_per_read {
                    Some(w) => {
                        d.transfer(i * BUCKET_PS, bytes / (1 + w), false);
                        d.transfer(i * BUCKET_PS, bytes - bytes / (1 + w), true);
                    }
                    None => d.transfer(i * BUCKET_PS, bytes, true),
                }
            }
            d.set_clock(WINDOW_PS);
            d.utilisation()
        };
        let half = util(Some(1));
        assert!((half - 0.5 / (199_315.4 / 225_097.1)).abs() < 1e-3, "{half}");
        assert!((util(Some(3)) - 0.5 / (212_457.8 / 225_097.1)).abs() < 1e-3, "{}", util(Some(3)));
        assert!((util(None) - 0.5).abs() < 1e-3, "{}", util(None));
        // A profile without a mix table charges nothing for mixing.
        let mut flat = p.dram.clone();
        flat.mix.clear();
        let mut d = Dram::new(&flat);
        d.transfer(0, per_bucket(&d, 0.25), false);
        d.transfer(0, per_bucket(&d, 0.25), true);
        d.set_clock(BUCKET_PS);
        assert!((d.utilisation() - 0.5 / BUCKETS as f64).abs() < 1e-3, "{}", d.utilisation());
    }

    #[test]
    fn overload_queues() {
        let p = Profile::r640_silver4216();
        let mut d = Dram::new(&p.dram);
        let bytes = per_bucket(&d, 2.0);
        for i in 0..BUCKETS {
            d.transfer(i * BUCKET_PS, bytes, false);
        }
        d.set_clock(WINDOW_PS);
        assert!(d.latency_ps() > 260_000 + WINDOW_PS / 2);
    }
}
