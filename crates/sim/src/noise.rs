//! Host noise: the interruptions that take a core away from its packets now and then (timer ticks,
//! other interrupts, SMIs, kernel threads). A receive ring's second role is to absorb them (rxBisect's
//! title; shRing §3, Figure 3): while a core is away its ring fills at the arrival rate, and a ring
//! smaller than the longest interruption times that rate drops packets.
//!
//! A machine profile gives each core's noise as a rate and a distribution of interruption lengths
//! ([`NoiseParams`]), measured as `sysjitter` measures it: a pinned thread spinning on the clock records
//! every gap above a threshold (`rxlab jitter` does that on this machine). Each core then draws its own
//! Poisson stream of interruptions ([`CoreNoise`]); the engine holds a core's next step back while one
//! lasts.
//!
//! A simulated window of milliseconds sees the frequent, short interruptions but almost never the rare,
//! long ones that decide a no-drop trial of a minute (RFC 2544 §24: at least 60 s). With a horizon `H`,
//! the window carries the rare interruptions of `H` seconds: those in the tail of the distribution
//! are drawn as many times as `H` would have them and spread evenly over the window (in a real trial they
//! are seconds apart, so each meets a ring that has drained), while the common ones keep their real
//! rate. The tail is the rarest part of the distribution whose added interruptions take at most
//! [`TAIL_BUDGET`] of the window, so the window's offered load per core stays within that share of the
//! real one.

use rand::{Rng, SeedableRng};
use rand_distr::{Distribution, Exp1};
use rand_xoshiro::Xoshiro256PlusPlus;
use serde::{Deserialize, Serialize};

/// Share of a window that a horizon's added rare interruptions may take: a core loses at most this
/// much more capacity in the window than in real time, so the regenerative reading (each rare
/// interruption meets a drained ring, as seconds apart in a real trial) holds at the loads where a
/// no-drop search ends.
pub const TAIL_BUDGET: f64 = 0.05;

/// How often and for how long a core is interrupted (per core, independent between cores).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NoiseParams {
    /// Interruptions per second per core; 0 turns noise off.
    pub rate_hz: f64,
    /// Interruption lengths as quantiles: (cumulative share, ns), both increasing, the first share 0
    /// (the shortest) and the last 1 (the longest). Lengths between two points are interpolated on a
    /// log scale; none is drawn beyond the longest measured.
    pub quantiles: Vec<(f64, f64)>,
}

impl NoiseParams {
    /// No interruptions.
    pub fn none() -> NoiseParams {
        NoiseParams { rate_hz: 0.0, quantiles: vec![(0.0, 0.0), (1.0, 0.0)] }
    }

    /// Whether any interruption happens.
    pub fn is_on(&self) -> bool {
        self.rate_hz > 0.0
    }

    /// Check the distribution: a rate of at least 0, shares from 0 to 1 and lengths increasing.
    pub fn validate(&self) -> Result<(), String> {
        if !(self.rate_hz.is_finite() && self.rate_hz >= 0.0) {
            return Err(format!("noise rate {} Hz must be 0 or more", self.rate_hz));
        }
        let q = &self.quantiles;
        if q.len() < 2 || q[0].0 != 0.0 || q[q.len() - 1].0 != 1.0 {
            return Err("noise quantiles need at least two points, the first at share 0 and the last at 1".into());
        }
        if q.iter().any(|&(_, ns)| !(ns.is_finite() && ns >= 0.0)) {
            return Err("noise lengths must be 0 ns or more".into());
        }
        if q.windows(2).any(|w| w[1].0 <= w[0].0 || w[1].1 < w[0].1) {
            return Err("noise quantiles must increase in share and not decrease in length".into());
        }
        Ok(())
    }

    /// The interruption length at cumulative share `u` in [0, 1], ns.
    pub fn length_ns(&self, u: f64) -> f64 {
        let q = &self.quantiles;
        let i = q.partition_point(|&(p, _)| p <= u).clamp(1, q.len() - 1);
        let ((p0, l0), (p1, l1)) = (q[i - 1], q[i]);
        let f = ((u - p0) / (p1 - p0)).clamp(0.0, 1.0);
        if l0 > 0.0 { l0 * (l1 / l0).powf(f) } else { l0 + (l1 - l0) * f }
    }

    /// Mean length of the interruptions with share in [a, b), ns (a numerical integral of the quantile
    /// function).
    pub fn mean_between_ns(&self, a: f64, b: f64) -> f64 {
        const STEPS: usize = 256;
        let h = (b - a) / STEPS as f64;
        (0..STEPS).map(|k| self.length_ns(a + (k as f64 + 0.5) * h)).sum::<f64>() / STEPS as f64
    }

    /// Share of the core's time that interruptions take.
    pub fn busy_share(&self) -> f64 {
        self.rate_hz * self.mean_between_ns(0.0, 1.0) * 1e-9
    }

    /// The share above which interruptions are a horizon's tail: the lowest quantile point whose
    /// interruptions, drawn as often as `horizon_ps` would have them, add at most [`TAIL_BUDGET`] of a
    /// `window_ps` window. 1 (no tail) when even the rarest part would add more.
    pub fn tail_share(&self, window_ps: u64, horizon_ps: u64) -> f64 {
        let extra_s = horizon_ps.saturating_sub(window_ps) as f64 * 1e-12;
        let budget_ns = TAIL_BUDGET * window_ps as f64 * 1e-3;
        self.quantiles
            .iter()
            .map(|&(p, _)| p)
            .filter(|&p| p < 1.0)
            .find(|&p| self.rate_hz * (1.0 - p) * extra_s * self.mean_between_ns(p, 1.0) <= budget_ns)
            .unwrap_or(1.0)
    }
}

/// One interruption: when it starts and how long it lasts, ps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Interruption {
    /// Start, ps.
    pub at: u64,
    /// Length, ps.
    pub len: u64,
}

/// One core's interruptions over a run, in time order: a Poisson stream at the profile's rate, whose
/// tail inside the measurement window is replaced by the horizon's (module doc).
#[derive(Debug)]
pub struct CoreNoise {
    params: NoiseParams,
    rng: Xoshiro256PlusPlus,
    /// Mean gap between interruptions, ps (0: none).
    mean_gap_ps: f64,
    /// The measurement window, ps.
    window: (u64, u64),
    /// Share above which an interruption inside the window belongs to the tail.
    tail_share: f64,
    /// The next interruption of the Poisson stream.
    next: Option<Interruption>,
    /// The window's tail interruptions not yet taken, latest first.
    tail: Vec<Interruption>,
}

impl CoreNoise {
    /// Core `core`'s interruptions for a run measured over `window` (ps), whose rare ones stand for
    /// `horizon_ps` of real time (`None`: the window's own length). Streams are seeded from `seed` and
    /// the core, apart from every other random stream of the run.
    pub fn new(params: &NoiseParams, seed: u64, core: usize, window: (u64, u64), horizon_ps: Option<u64>) -> Self {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed ^ 0x6e6f_6973_6500_0000 ^ core as u64);
        let win_ps = window.1 - window.0;
        let tail_share = horizon_ps.map_or(1.0, |h| params.tail_share(win_ps, h));
        let mut tail = Vec::new();
        if params.is_on() && tail_share < 1.0 {
            // Poisson count of the horizon's tail interruptions, spread evenly over the window.
            let mean = params.rate_hz * (1.0 - tail_share) * horizon_ps.unwrap_or(win_ps) as f64 * 1e-12;
            let mut n = 0u64;
            let mut acc: f64 = Exp1.sample(&mut rng);
            while acc < mean {
                n += 1;
                acc += <Exp1 as Distribution<f64>>::sample(&Exp1, &mut rng);
            }
            tail = (0..n)
                .rev()
                .map(|k| {
                    let u = tail_share + (1.0 - tail_share) * rng.random::<f64>();
                    let at = window.0 + ((2 * k + 1) as f64 * win_ps as f64 / (2 * n) as f64) as u64;
                    Interruption { at, len: (params.length_ns(u) * 1000.0) as u64 }
                })
                .collect();
        }
        let mean_gap_ps = if params.is_on() { 1e12 / params.rate_hz } else { 0.0 };
        let mut noise = CoreNoise { params: params.clone(), rng, mean_gap_ps, window, tail_share, next: None, tail };
        noise.next = noise.draw(0);
        noise
    }

    /// The stream's next interruption after `t`, thinned inside the window to the shares below the tail.
    fn draw(&mut self, mut t: u64) -> Option<Interruption> {
        if self.mean_gap_ps == 0.0 {
            return None;
        }
        loop {
            let gap: f64 = Exp1.sample(&mut self.rng);
            t += (gap * self.mean_gap_ps) as u64;
            let u: f64 = self.rng.random();
            if u < self.tail_share || !(self.window.0..self.window.1).contains(&t) {
                return Some(Interruption { at: t, len: (self.params.length_ns(u) * 1000.0) as u64 });
            }
        }
    }

    /// The earliest interruption starting at or before `t`, taken from the stream; `None` when the
    /// next one starts later.
    #[inline]
    pub fn take_until(&mut self, t: u64) -> Option<Interruption> {
        let stream = self.next.filter(|x| x.at <= t);
        let tail = self.tail.last().copied().filter(|x| x.at <= t);
        match (stream, tail) {
            (Some(s), Some(x)) if x.at < s.at => self.tail.pop(),
            (Some(s), _) => {
                self.next = self.draw(s.at);
                Some(s)
            }
            (None, Some(_)) => self.tail.pop(),
            (None, None) => None,
        }
    }
}

/// A run's interruptions as the report gives them: those that started in the measurement window.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct NoiseReport {
    /// Interruptions of all cores.
    pub interruptions: u64,
    /// Their summed length, µs.
    pub total_us: f64,
    /// The longest, µs.
    pub max_us: f64,
    /// Share of the cores' time they took.
    pub share: f64,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The sysjitter example's typical core (profile.rs, `[JIT]`), rounded.
    fn jit() -> NoiseParams {
        NoiseParams {
            rate_hz: 1000.0,
            quantiles: vec![(0.0, 1300.0), (0.5, 1360.0), (0.99, 2040.0), (0.9999, 37_700.0), (1.0, 47_500.0)],
        }
    }

    #[test]
    fn lengths_follow_the_quantiles() {
        let n = jit();
        n.validate().unwrap();
        assert_eq!(n.length_ns(0.0), 1300.0);
        assert_eq!(n.length_ns(0.5), 1360.0);
        assert_eq!(n.length_ns(1.0), 47_500.0);
        let mid = n.length_ns(0.995);
        assert!(2040.0 < mid && mid < 37_700.0, "{mid}");
        assert!(n.busy_share() > 0.001 && n.busy_share() < 0.002, "{}", n.busy_share());
    }

    #[test]
    fn bad_distributions_are_refused() {
        let mut n = jit();
        n.quantiles[1].1 = 1000.0;
        assert!(n.validate().is_err());
        n = jit();
        n.quantiles.pop();
        assert!(n.validate().unwrap_err().contains("last at 1"));
        n = jit();
        n.rate_hz = -1.0;
        assert!(n.validate().is_err());
    }

    /// Interruptions of one core over `run_ps`, all taken.
    fn all(n: &NoiseParams, window: (u64, u64), horizon: Option<u64>, run_ps: u64) -> Vec<Interruption> {
        let mut c = CoreNoise::new(n, 7, 0, window, horizon);
        std::iter::from_fn(|| c.take_until(run_ps)).collect()
    }

    #[test]
    fn the_stream_has_the_rate_and_comes_in_order() {
        let xs = all(&jit(), (0, 1_000_000_000_000), None, 1_000_000_000_000);
        assert!((900..1100).contains(&xs.len()), "{} in 1 s at 1 kHz", xs.len());
        assert!(xs.windows(2).all(|w| w[0].at <= w[1].at));
    }

    #[test]
    fn a_horizon_brings_its_rare_interruptions_into_the_window() {
        let (w, h) = (10_000_000_000, 60_000_000_000_000); // 10 ms window, 60 s horizon
        let n = jit();
        let tail = n.tail_share(w, h);
        assert_eq!(tail, 0.9999, "the band above p99.99 fits the budget, the one above p99 does not");
        let long = |xs: &[Interruption]| xs.iter().filter(|x| x.len >= 37_700_000).count();
        let plain: usize = (0..20).map(|s| long(&all_seeded(&n, s, None))).sum();
        let packed: usize = (0..20).map(|s| long(&all_seeded(&n, s, Some(h)))).sum();
        assert!(plain <= 2, "a 10 ms window rarely sees p99.99: {plain} in 20 runs");
        assert!((60..=180).contains(&packed), "60 s has about 6 per run: {packed} in 20 runs");
        let xs = all_seeded(&n, 3, Some(h));
        assert!(xs.windows(2).all(|w| w[0].at <= w[1].at), "tail merged in order");
        let extra: u64 = xs.iter().filter(|x| x.len >= 37_700_000).map(|x| x.len).sum();
        assert!(extra as f64 <= 2.0 * TAIL_BUDGET * w as f64, "{extra} ps");
        fn all_seeded(n: &NoiseParams, seed: u64, h: Option<u64>) -> Vec<Interruption> {
            let w = (0, 10_000_000_000);
            let mut c = CoreNoise::new(n, seed, 0, w, h);
            std::iter::from_fn(|| c.take_until(w.1)).collect()
        }
    }

    #[test]
    fn no_noise_draws_nothing() {
        assert!(all(&NoiseParams::none(), (0, 1_000_000), Some(10_000_000), 1_000_000).is_empty());
    }
}
