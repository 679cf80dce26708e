//! When a run has settled: the end of its warm-up decided by the run itself, with MSER-5.
//!
//! A run's warm-up is there so that the window measures the steady state, not the start: empty rings,
//! an LLC that has not yet met the app's data. How long that takes depends on the run. A core that keeps
//! up settles within a few milliseconds, while one that falls behind fills its rings over 10-25 ms
//! (docs/model.md, "Runs long enough"). With `settle`, the configured warm-up is a ceiling: the engine
//! observes the run every [`OBSERVE_PS`] and opens the window at the first batch boundary where every
//! observed series has settled.
//!
//! The rule is MSER-5 (\[W97\], \[WCS00\]): observations are averaged in batches of five, and over the
//! batch means `Z_1..Z_k` the truncation point `d*` minimises `sum_{j>d} (Z_j - mean_{>d})^2 / (k-d)^2`,
//! the squared standard error of the mean that remains once the first `d` batches are dropped. A series
//! whose `d*` lies in its second half is still moving (a ring that fills drives `d*` to the end, since
//! every later batch is closer to the ones after it), and one whose `d*` lies in its first half has
//! reached its steady state; the truncation point beyond half the series is the usual sign that a run
//! is too short for MSER to judge (\[HRD10\]). The series observed are the ones the claims measure:
//! ring occupancy, the cores' busy cycles per delivered packet and DRAM bandwidth.
//!
//! A drift of slope `s` per batch in noise of deviation `σ` gives `d*` in the first half while the
//! series is shorter than `4√3 σ / s` batches, so a short series hides a slow drift: the rule judges no
//! series shorter than [`MIN_BATCHES`].
//!
//! - \[W97\] K. P. White Jr., "An effective truncation heuristic for bias reduction in simulation
//!   output", Simulation 69(6), 1997.
//! - \[WCS00\] K. P. White Jr., M. J. Cobb, S. C. Spratt, "A comparison of five steady-state truncation
//!   heuristics for simulation", Winter Simulation Conference 2000 (MSER-5).
//! - \[HRD10\] K. Hoad, S. Robinson, R. Davies, "Automating warm-up length estimation", Journal of the
//!   Operational Research Society 61(9), 2010 (MSER-5 chosen among 44 methods; a truncation point in
//!   the second half of the output is rejected as unreliable).

/// How often the engine observes a settling run, ps (100 µs).
pub const OBSERVE_PS: u64 = 100_000_000;
/// Observations per batch (the 5 of MSER-5).
pub const BATCH: usize = 5;
/// Fewest batches judged (5 ms at [`OBSERVE_PS`]): the ten batch means whose last half, five of them,
/// must show no drift.
pub const MIN_BATCHES: usize = 10;
/// Fewest batches a truncation point may keep: with fewer, two or three batch means that happen to lie
/// close together would pass for a steady state at the series' end (MSER's end effect).
pub const MIN_KEPT: usize = 5;
/// Series observed: ring occupancy, busy cycles per delivered packet, DRAM bandwidth.
const SERIES: usize = 3;

/// One observation of a run over the last [`OBSERVE_PS`].
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Observation {
    /// Mean ring occupancy (used / capacity).
    pub occupancy: f64,
    /// The cores' busy cycles per packet delivered to them (0 when none was).
    pub cycles: f64,
    /// DRAM traffic, bytes per second.
    pub dram: f64,
}

impl Observation {
    fn values(self) -> [f64; SERIES] {
        [self.occupancy, self.cycles, self.dram]
    }
}

/// MSER-5 over a run's observations, one batch mean per series every [`BATCH`] observations.
#[derive(Debug, Clone, Default)]
pub struct Settle {
    /// Sums of the batch being filled.
    batch: [f64; SERIES],
    /// Observations in it.
    filled: usize,
    /// Batch means, per series.
    means: [Vec<f64>; SERIES],
}

impl Settle {
    /// Add an observation; true when it completes a batch and every series has settled.
    pub fn observe(&mut self, o: Observation) -> bool {
        for (s, v) in self.batch.iter_mut().zip(o.values()) {
            *s += v;
        }
        self.filled += 1;
        if self.filled < BATCH {
            return false;
        }
        for (means, s) in self.means.iter_mut().zip(&mut self.batch) {
            means.push(*s / BATCH as f64);
            *s = 0.0;
        }
        self.filled = 0;
        self.means[0].len() >= MIN_BATCHES && self.means.iter().all(|z| 2 * truncation(z) < z.len())
    }
}

/// MSER's truncation point of the batch means `z`: the `d` minimising the squared standard error of the
/// mean of `z[d..]` (the earliest on ties), over every `d` leaving at least [`MIN_KEPT`] batches.
pub fn truncation(z: &[f64]) -> usize {
    let k = z.len();
    if k <= MIN_KEPT {
        return 0;
    }
    // Welford's update, from the end, gives each d's sum of squared deviations in one stable pass (a
    // constant series gives exact zeros, so ties pick the earliest d).
    let (mut mean, mut m2) = (0.0, 0.0);
    let mut best = (f64::INFINITY, 0);
    for d in (0..k).rev() {
        let n = (k - d) as f64;
        let delta = z[d] - mean;
        mean += delta / n;
        m2 += delta * (z[d] - mean);
        if k - d < MIN_KEPT {
            continue;
        }
        let mser = m2 / (n * n);
        if mser <= best.0 {
            best = (mser, d);
        }
    }
    best.1
}

#[cfg(test)]
mod tests {
    use super::*;

    fn obs(v: f64) -> Observation {
        Observation { occupancy: v, cycles: 1000.0 + v, dram: 7.3e9 }
    }

    /// Deterministic noise in [-1, 1).
    fn noise(i: usize) -> f64 {
        ((i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
    }

    #[test]
    fn a_flat_series_settles_as_soon_as_it_is_judged() {
        let mut s = Settle::default();
        let at = (0..1000).position(|i| s.observe(obs(0.5 + 0.01 * noise(i)))).unwrap();
        assert_eq!(at + 1, MIN_BATCHES * BATCH);
    }

    #[test]
    fn a_filling_ring_settles_only_once_full() {
        // Occupancy rises over 200 observations (20 ms), then stays full.
        let mut s = Settle::default();
        let at = (0..1000).position(|i| s.observe(obs((i as f64 / 200.0).min(1.0) + 0.002 * noise(i)))).unwrap();
        assert!(at > 200, "settled at observation {at}, while still filling");
        assert!(at < 500, "settled only at observation {at}");
    }

    #[test]
    fn a_series_still_moving_never_settles() {
        let mut s = Settle::default();
        assert!(!(0..400).any(|i| s.observe(obs(i as f64 / 400.0 + 0.001 * noise(i)))));
        assert_eq!(s.means[0].len(), 80);
    }

    #[test]
    fn the_truncation_point_drops_the_transient() {
        let mut z = vec![10.0, 6.0, 3.0];
        z.extend((0..17).map(|i| 1.0 + 0.01 * noise(i)));
        // The transient goes; after it, MSER may drop a batch that is merely noisy.
        assert!((3..=5).contains(&truncation(&z)), "{}", truncation(&z));
        assert_eq!(truncation(&[1.0, 1.0, 1.0, 1.0]), 0);
        assert_eq!(truncation(&[5.0]), 0);
    }
}
