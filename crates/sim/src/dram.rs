//! DRAM: loaded latency as a function of utilisation over a sliding window, and byte counters from
//! which memory bandwidth is reported as Intel PCM would (reference/hardware.md, "DRAM loaded latency").
//!
//! Utilisation is the bytes moved in the last [`WINDOW_PS`] divided by what the sustained maximum
//! bandwidth ([`DramParams::max_gbs`]) moves in that time. Latency is interpolated on the profile's
//! curve; offered load above the maximum is queued, so the excess adds the time the backlog takes to
//! drain at that bandwidth.

use crate::profile::DramParams;

/// Width of one utilisation bucket, ps (1 µs).
const BUCKET_PS: u64 = 1_000_000;
/// Buckets in the window.
const BUCKETS: usize = 8;
/// Length of the sliding window over which utilisation is measured, ps.
pub const WINDOW_PS: u64 = BUCKET_PS * BUCKETS as u64;

/// The memory controller model.
#[derive(Debug, Clone)]
pub struct Dram {
    curve: Vec<(f64, f64)>,
    /// Bytes per ps at the sustained maximum (the curve's utilisation 1).
    peak_bpps: f64,
    /// Bytes per bucket, and the bucket number each slot currently holds.
    buckets: [(u64, u64); BUCKETS],
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
            peak_bpps: p.max_gbs() * 1e9 / 1e12,
            buckets: [(0, 0); BUCKETS],
            read_bytes: 0,
            write_bytes: 0,
            moved: 0,
        }
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
        let b = now_ps / BUCKET_PS;
        let slot = &mut self.buckets[(b % BUCKETS as u64) as usize];
        if slot.1 != b {
            if slot.1 > b {
                // An access stamped before this window (agents' clocks are not in lockstep): count it
                // in the oldest bucket that is still live.
                slot.0 += bytes;
                return;
            }
            *slot = (0, b);
        }
        slot.0 += bytes;
    }

    /// Utilisation of the sustained maximum over the window ending at `now_ps` (may exceed 1 under
    /// overload).
    pub fn utilisation(&self, now_ps: u64) -> f64 {
        let b = now_ps / BUCKET_PS;
        let live: u64 =
            self.buckets.iter().filter(|(_, id)| *id + BUCKETS as u64 > b && *id <= b).map(|(n, _)| *n).sum();
        live as f64 / (self.peak_bpps * WINDOW_PS as f64)
    }

    /// Latency of one access at `now_ps`, in ps.
    #[inline]
    pub fn latency_ps(&self, now_ps: u64) -> u64 {
        let u = self.utilisation(now_ps);
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

    #[test]
    fn idle_and_loaded_latency_follow_the_curve() {
        let p = Profile::r640_silver4216();
        let mut d = Dram::new(&p.dram);
        assert_eq!(d.latency_ps(0), 79_500);
        // Half of the sustained maximum over one window is 0.5 utilisation.
        let bytes = (p.dram.max_gbs() * 1e9 * 0.5 * WINDOW_PS as f64 / 1e12) as u64;
        for i in 0..BUCKETS as u64 {
            d.transfer(i * BUCKET_PS, bytes / BUCKETS as u64, false);
        }
        let now = WINDOW_PS - 1;
        assert!((d.utilisation(now) - 0.5).abs() < 1e-3, "{}", d.utilisation(now));
        let want = interpolate(&p.dram.curve, 0.5) * 1000.0;
        assert!((d.latency_ps(now) as f64 - want).abs() < 200.0);
        // A window later, the old traffic has aged out.
        d.transfer(3 * WINDOW_PS, 64, true);
        assert!(d.utilisation(3 * WINDOW_PS) < 1e-3);
        assert_eq!((d.read_bytes, d.write_bytes), (bytes / BUCKETS as u64 * BUCKETS as u64, 64));
    }

    #[test]
    fn overload_queues() {
        let p = Profile::r640_silver4216();
        let mut d = Dram::new(&p.dram);
        let bytes = (p.dram.max_gbs() * 1e9 * 2.0 * WINDOW_PS as f64 / 1e12) as u64;
        d.transfer(WINDOW_PS - 1, bytes, false);
        assert!(d.latency_ps(WINDOW_PS - 1) > 260_000 + WINDOW_PS / 2);
    }
}
