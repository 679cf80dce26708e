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
//! A simulated run of milliseconds sees the frequent, short interruptions but almost never the rare, long
//! ones that decide a no-drop trial of a minute (RFC 2544 §24: at least 60 s) or tip a server whose working
//! set leaks out of the LLC into its second state (rings full, buffers in DRAM: the papers' runs last tens of
//! seconds). With a horizon `H`, each core's run (warm-up included, standing for the real trial) carries
//! the rare interruptions that core has in `H` seconds, each at a time drawn uniformly over the run as in
//! the real trial, while the shorter ones keep their real rate. Which of them, [`Tail`] says:
//!
//! - [`Tail::Rare`] (the default) carries every one beyond the profile's last quantile below its longest
//!   (sysjitter's p99.99): a Poisson number, rate x `H` x 10^-4 on average (five per core in 50 s at
//!   1 kHz), each with its length drawn from that tail. A server tips on an interruption by chance, not by
//!   its length alone (measured: privRing's NAT on 16 cores, which the housekeeping core's long
//!   interruption tips, tipped on 11 of the 21 seeds whose longest fell before the run's last 10 ms, and
//!   neither length nor time told which: 218 us at 14.2 ms tipped, 285 us at 14.7 ms did not), so a trial
//!   with five chances tips more often than one with one, as the papers' privRing, which "collapses" in
//!   every trial of ten with a standard deviation under 5 %. The price is density: five interruptions of
//!   a trial's tens of seconds come within the run's tens of milliseconds, 0.5 % of a worker core's time
//!   (five of 38-47 us in 40 ms) and 3 % of the housekeeping core's (five of 184-347 us), where the real
//!   trial's cost is negligible; a core within 3 % of its budget may fall behind where the real one would not.
//! - [`Tail::Longest`] carries the longest alone, which decides a no-drop trial (a trial fails on any
//!   overflow) and keeps each core's load as the real one's, but gives a server one chance to tip where the
//!   trial has several.

use rand::{Rng, SeedableRng};
use rand_distr::{Distribution, Exp1, Poisson};
use rand_xoshiro::Xoshiro256PlusPlus;
use serde::{Deserialize, Serialize};

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

    /// The share beyond which the profile gives only the longest length: its last quantile below 1.
    pub fn rare_share(&self) -> f64 {
        self.quantiles.iter().rev().map(|q| q.0).find(|&u| u < 1.0).unwrap_or(0.0)
    }

    /// Check that the profile's tail is rare enough for [`Tail::Rare`]: its last quantile below 1 at a
    /// share of at least [`RARE_SHARE_MIN`], so that what a run carries beyond it is a trial's handful of
    /// long interruptions, not a horizon's worth of ordinary ones compressed into milliseconds.
    pub fn check_rare_tail(&self) -> Result<(), String> {
        let share = self.rare_share();
        if !self.is_on() || share >= RARE_SHARE_MIN {
            return Ok(());
        }
        Err(format!(
            "a rare tail carries every interruption beyond the noise's last quantile below 1, here at share {share}; \
             give the distribution a point at share {RARE_SHARE_MIN} or above (sysjitter's p99.9 or p99.99), or \
             use the longest tail"
        ))
    }

    /// The share of the distribution of the longest interruption in `horizon_ps` of real time, `None`
    /// when the horizon likely has none. Above any share u, a Poisson stream has Poisson(rate x horizon
    /// x (1 - u)) interruptions, so 1 - u of the longest is exponential with mean 1 / (rate x horizon).
    pub fn longest(&self, horizon_ps: u64, rng: &mut impl Rng) -> Option<f64> {
        let expected = self.rate_hz * horizon_ps as f64 * 1e-12;
        let u = 1.0 - <Exp1 as Distribution<f64>>::sample(&Exp1, rng) / expected;
        (u > 0.0).then_some(u)
    }
}

/// The lowest last quantile below 1 a profile may give for [`Tail::Rare`]: sysjitter's p99.9. At 1 kHz a
/// 50 s horizon then carries about 50 interruptions beyond it; at p99.99, the built-in profiles', about 5.
pub const RARE_SHARE_MIN: f64 = 0.999;

/// Which of a horizon's rare interruptions a run carries (module documentation).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tail {
    /// The horizon's longest interruption alone, which decides a no-drop trial.
    Longest,
    /// Every interruption of the horizon beyond the profile's last quantile below the maximum (sysjitter's
    /// p99.99): the chances a trial of that length has to tip a server with two states (the default).
    Rare,
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
/// longest is the horizon's (module doc).
#[derive(Debug)]
pub struct CoreNoise {
    params: NoiseParams,
    rng: Xoshiro256PlusPlus,
    /// Mean gap between interruptions, ps (0: none).
    mean_gap_ps: f64,
    /// The run's end, ps.
    run_ps: u64,
    /// Share above which the stream's interruptions are left to the horizon's ([`Tail`]).
    tail_share: f64,
    /// The next interruption of the Poisson stream.
    next: Option<Interruption>,
    /// The horizon's interruptions the run carries ([`Tail`]), latest first, until taken.
    rare: Vec<Interruption>,
}

impl CoreNoise {
    /// Core `core`'s interruptions for a run of `run_ps` (warm-up included), whose rare ones stand for
    /// `horizon_ps` of real time (`None`: the run's own length), as `tail` says. Streams are seeded from
    /// `seed` and the core, apart from every other random stream of the run.
    pub fn new(params: &NoiseParams, seed: u64, core: usize, run_ps: u64, horizon_ps: Option<u64>, tail: Tail) -> Self {
        // The seed is spread over the word before the core is mixed in: `seed ^ core` alone gives
        // seeds below the core count the same streams on other cores.
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(
            seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ 0x6e6f_6973_6500_0000 ^ core as u64,
        );
        let length = |u: f64| (params.length_ns(u) * 1000.0) as u64;
        let (mut rare, tail_share): (Vec<Interruption>, f64) = match (tail, horizon_ps.filter(|_| params.is_on())) {
            (Tail::Rare, Some(h)) => {
                let from = params.rare_share();
                let expected = params.rate_hz * h as f64 * 1e-12 * (1.0 - from);
                let n = Poisson::new(expected).map_or(0.0, |d| d.sample(&mut rng)) as usize;
                let all = (0..n).map(|_| {
                    let u = from + (1.0 - from) * rng.random::<f64>();
                    Interruption { at: rng.random_range(0..run_ps.max(1)), len: length(u) }
                });
                (all.collect(), from)
            }
            (_, horizon) => {
                let u = horizon.and_then(|h| params.longest(h, &mut rng));
                let at = rng.random_range(0..run_ps.max(1));
                (u.map(|u| Interruption { at, len: length(u) }).into_iter().collect(), u.unwrap_or(1.0))
            }
        };
        rare.sort_by_key(|x| std::cmp::Reverse(x.at));
        let mean_gap_ps = if params.is_on() { 1e12 / params.rate_hz } else { 0.0 };
        let mut noise = CoreNoise { params: params.clone(), rng, mean_gap_ps, run_ps, tail_share, next: None, rare };
        noise.next = noise.draw(0);
        noise
    }

    /// The stream's next interruption after `t`, thinned inside the run to the shares below the
    /// horizon's ([`Tail`]).
    fn draw(&mut self, mut t: u64) -> Option<Interruption> {
        if self.mean_gap_ps == 0.0 {
            return None;
        }
        loop {
            let gap: f64 = Exp1.sample(&mut self.rng);
            t += (gap * self.mean_gap_ps) as u64;
            let u: f64 = self.rng.random();
            if u < self.tail_share || t >= self.run_ps {
                return Some(Interruption { at: t, len: (self.params.length_ns(u) * 1000.0) as u64 });
            }
        }
    }

    /// The earliest interruption starting at or before `t`, taken from the stream; `None` when the
    /// next one starts later.
    #[inline]
    pub fn take_until(&mut self, t: u64) -> Option<Interruption> {
        let stream = self.next.filter(|x| x.at <= t);
        let rare = self.rare.last().filter(|x| x.at <= t);
        match (stream, rare) {
            (Some(s), Some(x)) if x.at < s.at => self.rare.pop(),
            (Some(s), _) => {
                self.next = self.draw(s.at);
                Some(s)
            }
            (None, Some(_)) => self.rare.pop(),
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

    /// Interruptions of one core over a run of `run_ps`, all taken.
    fn all(n: &NoiseParams, horizon: Option<u64>, run_ps: u64) -> Vec<Interruption> {
        let mut c = CoreNoise::new(n, 7, 0, run_ps, horizon, Tail::Longest);
        std::iter::from_fn(|| c.take_until(run_ps)).collect()
    }

    #[test]
    fn the_stream_has_the_rate_and_comes_in_order() {
        let xs = all(&jit(), None, 1_000_000_000_000);
        assert!((900..1100).contains(&xs.len()), "{} in 1 s at 1 kHz", xs.len());
        assert!(xs.windows(2).all(|w| w[0].at <= w[1].at));
    }

    #[test]
    fn a_horizon_brings_its_longest_interruption_into_the_run() {
        let h = 60_000_000_000_000; // 60 s horizon over a 10 ms run
        let n = jit();
        let long = |xs: &[Interruption]| xs.iter().filter(|x| x.len >= 37_700_000).count();
        let plain: usize = (0..20).map(|s| long(&all_seeded(&n, s, None, Tail::Longest))).sum();
        assert!(plain <= 2, "a 10 ms run rarely sees p99.99: {plain} in 20 runs");
        for seed in 0..20 {
            let xs = all_seeded(&n, seed, Some(h), Tail::Longest);
            assert!(xs.windows(2).all(|w| w[0].at <= w[1].at), "the longest merged in order");
            // 60 s has about six interruptions above p99.99; the run carries the longest.
            let longest = xs.iter().max_by_key(|x| x.len).unwrap();
            assert!(longest.len >= 37_700_000, "seed {seed}: {longest:?}");
            assert!(long(&xs) <= 2, "seed {seed}: the others keep their real rate");
        }
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(1);
        let shares: Vec<f64> = (0..1000).filter_map(|_| n.longest(h, &mut rng)).collect();
        let above = shares.iter().filter(|&&u| u > 0.9999).count();
        assert!(shares.len() == 1000 && above > 990, "60 000 interruptions: the longest is above p99.99 ({above})");
        let some = (0..1000).filter(|_| n.longest(1_000_000, &mut rng).is_some()).count();
        assert!(some < 10, "1 us has an interruption once in a thousand: {some} of 1000");
    }

    #[test]
    fn a_rare_tail_needs_a_last_quantile_in_the_far_tail() {
        assert_eq!(jit().check_rare_tail(), Ok(()));
        let two = NoiseParams { rate_hz: 1000.0, quantiles: vec![(0.0, 1000.0), (1.0, 50_000.0)] };
        let err = two.check_rare_tail().unwrap_err();
        assert!(err.contains("share 0") && err.contains("0.999"), "{err}");
        let p99 = NoiseParams { rate_hz: 1000.0, quantiles: vec![(0.0, 1000.0), (0.99, 5000.0), (1.0, 50_000.0)] };
        assert!(p99.check_rare_tail().is_err(), "p99 would carry 500 of a minute's interruptions");
        assert_eq!(NoiseParams { rate_hz: 0.0, ..two }.check_rare_tail(), Ok(()), "no noise, nothing to carry");
    }

    /// Interruptions of core 0 over a 10 ms run with seed `seed`, horizon `h` and tail `tail`, all taken.
    fn all_seeded(n: &NoiseParams, seed: u64, h: Option<u64>, tail: Tail) -> Vec<Interruption> {
        let run = 10_000_000_000;
        let mut c = CoreNoise::new(n, seed, 0, run, h, tail);
        std::iter::from_fn(|| c.take_until(run)).collect()
    }

    #[test]
    fn a_rare_tail_brings_every_interruption_beyond_the_last_quantile() {
        let (h, n) = (60_000_000_000_000, jit());
        assert_eq!(n.rare_share(), 0.9999);
        let long = |xs: &[Interruption]| xs.iter().filter(|x| x.len >= 37_700_000).count();
        let runs: Vec<Vec<Interruption>> = (0..50).map(|s| all_seeded(&n, s, Some(h), Tail::Rare)).collect();
        assert!(runs.iter().all(|xs| xs.windows(2).all(|w| w[0].at <= w[1].at)), "merged in order");
        // 60 s at 1 kHz has about six interruptions beyond p99.99: each run carries its own Poisson count.
        let counts: Vec<usize> = runs.iter().map(|xs| long(xs)).collect();
        let mean = counts.iter().sum::<usize>() as f64 / counts.len() as f64;
        assert!((4.5..7.5).contains(&mean), "{mean} beyond p99.99 a run: {counts:?}");
        assert!(counts.iter().min() < counts.iter().max(), "a Poisson number, not a constant");
        assert!(runs.iter().flatten().all(|x| x.len <= 47_500_000), "none beyond the longest measured");
        // Without a horizon the tail changes nothing.
        assert_eq!(all_seeded(&n, 3, None, Tail::Rare), all_seeded(&n, 3, None, Tail::Longest));
    }

    #[test]
    fn seeds_give_every_core_its_own_streams() {
        let first =
            |seed: u64, core: usize| CoreNoise::new(&jit(), seed, core, 1_000_000_000, None, Tail::Longest).next;
        assert_ne!(first(1, 0), first(0, 1), "seed 1 on core 0 is not seed 0 on core 1");
        assert_ne!(first(2, 3), first(3, 2));
        assert_eq!(first(2, 3), first(2, 3));
    }

    #[test]
    fn no_noise_draws_nothing() {
        assert!(all(&NoiseParams::none(), Some(10_000_000), 1_000_000).is_empty());
    }
}
