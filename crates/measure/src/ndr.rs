//! RFC 2544 no-drop-rate (throughput) search: the highest offered rate at which the device loses no
//! packet, or no more than a stated fraction.
//!
//! RFC 2544 §26.1 defines throughput as the fastest rate with no frame lost; like T-Rex's `ndr_bench`,
//! [`search`] finds it by binary search between a passing low and a failing high bound, stopping once
//! the bracket is narrower than a resolution or after a maximum number of trials. The trial function is
//! any closure "run one trial at rate r → (offered, received)", so the same search drives a live run,
//! a simulation or a test double. Rates are in whatever unit the closure takes (Gbps, Mpps).

use serde::{Deserialize, Serialize};
use thiserror::Error;

/// What one trial reports: packets offered to the device and packets that came out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Trial {
    /// Packets offered during the trial.
    pub offered: u64,
    /// Packets received (delivered) during the trial.
    pub received: u64,
}

impl Trial {
    /// Fraction of offered packets lost (0 when nothing was offered or more came out than went in).
    pub fn loss(&self) -> f64 {
        if self.offered == 0 { 0.0 } else { self.offered.saturating_sub(self.received) as f64 / self.offered as f64 }
    }
}

/// When the search stops narrowing the bracket.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub enum Resolution {
    /// Stop when high - low is at most this many rate units (the Enso paper: 0.1 Gbps).
    Absolute(f64),
    /// Stop when high - low is at most this fraction of the high bound (T-Rex: 0.01).
    FractionOfMax(f64),
}

/// Parameters of an NDR search; [`NdrConfig::new`] gives T-Rex's defaults.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct NdrConfig {
    /// A rate expected to pass (>= 0); tried only if no rate in between passes.
    pub low: f64,
    /// A rate expected to fail, the maximum tried; if it passes, it is the result.
    pub high: f64,
    /// Largest loss fraction a passing trial may have, in [0, 1); 0 is "no drop".
    pub tolerance: f64,
    /// When to stop narrowing.
    pub resolution: Resolution,
    /// Most bisection steps (trials between the bounds).
    pub max_iterations: u32,
}

impl NdrConfig {
    /// Search between `low` and `high` with no loss allowed, to 1 % of `high`, in at most 10 steps.
    pub fn new(low: f64, high: f64) -> Self {
        NdrConfig { low, high, tolerance: 0.0, resolution: Resolution::FractionOfMax(0.01), max_iterations: 10 }
    }
}

/// One trial the search ran.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct TrialRecord {
    /// Offered rate asked of the trial function.
    pub rate: f64,
    /// What it reported.
    pub trial: Trial,
    /// Loss fraction.
    pub loss: f64,
    /// Whether the loss was within tolerance.
    pub passed: bool,
}

/// Outcome of an NDR search.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NdrResult {
    /// Highest rate that passed; `None` if none did (a low bound of 0 is never tried).
    pub rate: Option<f64>,
    /// Whether the bracket closed to the resolution (false: stopped at `max_iterations`).
    pub converged: bool,
    /// Every trial, in the order run.
    pub trials: Vec<TrialRecord>,
}

/// A search that cannot run: each message names the argument and the fix.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum NdrError {
    /// The bounds are not finite, negative, or not ordered.
    #[error(
        "NDR search bounds: low {low} and high {high} must be finite with 0 <= low < high; pass a low rate that passes and a higher one that fails"
    )]
    Bounds {
        /// The low bound given.
        low: f64,
        /// The high bound given.
        high: f64,
    },
    /// The loss tolerance is outside [0, 1).
    #[error("NDR loss tolerance {0} must be a fraction in [0, 1); use 0 for no drop, 0.001 for 0.1 %")]
    Tolerance(f64),
    /// The resolution is not a positive finite step (or a fraction above 1).
    #[error("NDR resolution {0:?} must be > 0 (and a fraction at most 1); e.g. Absolute(0.1) or FractionOfMax(0.01)")]
    Resolution(Resolution),
    /// The trial function offered no packets, so loss is undefined.
    #[error("NDR trial at rate {rate} offered no packets; the trial function must send traffic at every rate > 0")]
    EmptyTrial {
        /// The rate of that trial.
        rate: f64,
    },
}

impl NdrConfig {
    /// Check the arguments; the search's resolution as an absolute step if they are valid.
    fn validate(&self) -> Result<f64, NdrError> {
        let (low, high) = (self.low, self.high);
        if !(low.is_finite() && high.is_finite() && 0.0 <= low && low < high) {
            return Err(NdrError::Bounds { low, high });
        }
        if !(0.0..1.0).contains(&self.tolerance) {
            return Err(NdrError::Tolerance(self.tolerance));
        }
        let step = match self.resolution {
            Resolution::Absolute(r) => r,
            Resolution::FractionOfMax(f) if f <= 1.0 => f * high,
            Resolution::FractionOfMax(_) => f64::NAN,
        };
        if !(step.is_finite() && step > 0.0) {
            return Err(NdrError::Resolution(self.resolution));
        }
        Ok(step)
    }
}

/// Find the no-drop rate of the device behind `trial` (see the module doc).
pub fn search(config: &NdrConfig, mut trial: impl FnMut(f64) -> Trial) -> Result<NdrResult, NdrError> {
    try_search(config, |rate| Ok(trial(rate)))
}

/// [`search`] with a trial function that may fail (a run that cannot start, a broken invariant): the
/// first failing trial ends the search with its error.
pub fn try_search<E: From<NdrError>>(
    config: &NdrConfig,
    mut trial: impl FnMut(f64) -> Result<Trial, E>,
) -> Result<NdrResult, E> {
    let step = config.validate()?;
    let mut trials = Vec::new();
    let mut run = |rate: f64| -> Result<bool, E> {
        let t = trial(rate)?;
        if t.offered == 0 {
            return Err(NdrError::EmptyTrial { rate }.into());
        }
        let loss = t.loss();
        // RFC 2544 §26.1: a trial passes when no frame is lost (here: loss within the tolerance).
        let passed = t.offered.saturating_sub(t.received) as f64 <= config.tolerance * t.offered as f64;
        trials.push(TrialRecord { rate, trial: t, loss, passed });
        Ok(passed)
    };

    // T-Rex ndr_bench: try the maximum first; if the device keeps up, that is the answer.
    if run(config.high)? {
        return Ok(NdrResult { rate: Some(config.high), converged: true, trials });
    }
    let (mut lo, mut hi, mut best) = (config.low, config.high, None);
    // RFC 2544 §26.1: halve the bracket between the best passing and the lowest failing rate.
    for _ in 0..config.max_iterations {
        if hi - lo <= step {
            break;
        }
        let mid = lo + (hi - lo) / 2.0;
        if run(mid)? {
            (lo, best) = (mid, Some(mid));
        } else {
            hi = mid;
        }
    }
    // Nothing in between passed: confirm the low bound rather than assume it.
    if best.is_none() && config.low > 0.0 && run(config.low)? {
        best = Some(config.low);
    }
    Ok(NdrResult { rate: best, converged: hi - lo <= step, trials })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// A device that forwards everything up to `capacity` and drops a packet above it.
    fn step(capacity: f64) -> impl FnMut(f64) -> Trial {
        move |rate| Trial { offered: 1000, received: if rate <= capacity { 1000 } else { 999 } }
    }

    fn config(low: f64, high: f64, resolution: Resolution) -> NdrConfig {
        NdrConfig { resolution, ..NdrConfig::new(low, high) }
    }

    #[test]
    fn finds_a_step_to_the_resolution() {
        let r = search(&config(0.0, 10.0, Resolution::Absolute(0.01)), step(7.3)).unwrap();
        let rate = r.rate.unwrap();
        assert!(rate <= 7.3 && 7.3 - rate <= 0.01, "{r:?}");
        assert!(r.converged);
        assert!(r.trials.iter().all(|t| t.passed == (t.rate <= 7.3)), "{r:?}");
    }

    #[test]
    fn trex_rule_one_percent_of_max_in_ten_steps() {
        let r = search(&NdrConfig::new(0.0, 100.0), step(42.0)).unwrap();
        assert!(r.converged && r.trials.len() <= 11, "{r:?}");
        let rate = r.rate.unwrap();
        assert!(rate <= 42.0 && 42.0 - rate <= 1.0, "{r:?}");
    }

    #[test]
    fn iteration_cap_stops_an_unconverged_search() {
        let cfg = NdrConfig { max_iterations: 5, ..config(0.0, 10.0, Resolution::Absolute(1e-9)) };
        let r = search(&cfg, step(3.3)).unwrap();
        assert_eq!(r.trials.len(), 6);
        assert!(!r.converged && r.rate.is_some_and(|x| x <= 3.3));
    }

    #[test]
    fn passing_high_bound_is_the_answer() {
        let r = search(&NdrConfig::new(1.0, 10.0), step(20.0)).unwrap();
        assert_eq!((r.rate, r.trials.len(), r.converged), (Some(10.0), 1, true));
    }

    #[test]
    fn failing_low_bound_gives_none() {
        let r = search(&config(1.0, 10.0, Resolution::Absolute(0.5)), step(0.5)).unwrap();
        assert_eq!(r.rate, None);
        let last = r.trials.last().unwrap();
        assert_eq!((last.rate, last.passed), (1.0, false));
    }

    #[test]
    fn loss_tolerance_accepts_small_loss() {
        // Everything above 5.0 is lost: at rate r the loss is (r - 5) / r, 5 % at r = 5 / 0.95.
        let device =
            |rate: f64| Trial { offered: 1_000_000, received: (1e6 * 5.0_f64.min(rate) / rate).round() as u64 };
        let cfg = NdrConfig { tolerance: 0.05, max_iterations: 20, ..config(0.0, 10.0, Resolution::Absolute(0.001)) };
        let rate = search(&cfg, device).unwrap().rate.unwrap();
        let limit = 5.0 / 0.95;
        assert!(rate <= limit + 1e-5 && limit - rate <= 0.001, "{rate}");
    }

    #[test]
    fn noisy_device_lands_below_its_noise_band() {
        // Loses nothing below 6.0, loses at random (seeded) between 6.0 and 6.5, always above 6.5.
        let mut state = 0x9e37_79b9_7f4a_7c15_u64;
        let device = move |rate: f64| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let lossy = rate > 6.5 || (rate > 6.0 && state & 1 == 0);
            Trial { offered: 10_000, received: if lossy { 9_990 } else { 10_000 } }
        };
        let r = search(&config(0.0, 10.0, Resolution::Absolute(0.05)), device).unwrap();
        let rate = r.rate.unwrap();
        assert!((6.0 - 0.05..=6.5).contains(&rate), "{r:?}");
    }

    #[test]
    fn bad_arguments_are_named() {
        let bad = |cfg: NdrConfig| search(&cfg, step(1.0)).unwrap_err().to_string();
        assert!(bad(NdrConfig::new(5.0, 5.0)).contains("0 <= low < high"));
        assert!(bad(NdrConfig::new(-1.0, 5.0)).contains("bounds"));
        assert!(bad(NdrConfig::new(0.0, f64::INFINITY)).contains("bounds"));
        assert!(bad(NdrConfig { tolerance: 1.0, ..NdrConfig::new(0.0, 1.0) }).contains("tolerance"));
        assert!(bad(NdrConfig { tolerance: f64::NAN, ..NdrConfig::new(0.0, 1.0) }).contains("tolerance"));
        assert!(bad(config(0.0, 1.0, Resolution::Absolute(0.0))).contains("resolution"));
        assert!(bad(config(0.0, 1.0, Resolution::Absolute(f64::NAN))).contains("resolution"));
        assert!(bad(config(0.0, 1.0, Resolution::FractionOfMax(2.0))).contains("resolution"));
        let empty = search(&NdrConfig::new(0.0, 1.0), |_| Trial { offered: 0, received: 0 });
        assert_eq!(empty, Err(NdrError::EmptyTrial { rate: 1.0 }));
    }

    #[test]
    fn a_failing_trial_ends_the_search_with_its_error() {
        #[derive(Debug, PartialEq)]
        enum E {
            Search(NdrError),
            Broken(f64),
        }
        impl From<NdrError> for E {
            fn from(e: NdrError) -> Self {
                E::Search(e)
            }
        }
        let mut calls = 0;
        let r = try_search(&NdrConfig::new(0.0, 10.0), |rate| {
            calls += 1;
            if rate < 10.0 { Err(E::Broken(rate)) } else { Ok(Trial { offered: 10, received: 9 }) }
        });
        assert_eq!((r, calls), (Err(E::Broken(5.0)), 2));
        let bad = try_search(&NdrConfig::new(3.0, 1.0), |_| Ok::<_, E>(Trial { offered: 1, received: 1 }));
        assert!(matches!(bad, Err(E::Search(NdrError::Bounds { .. }))));
    }

    proptest! {
        /// On any step device the result passes, lies within one resolution of the capacity once
        /// converged, and the search runs at most max_iterations + 2 trials.
        #[test]
        fn step_devices(capacity in 0.0f64..100.0, low in 0.0f64..50.0, width in 1.0f64..100.0,
                        res in 0.001f64..5.0, iters in 0u32..20) {
            let cfg = NdrConfig { max_iterations: iters, ..config(low, low + width, Resolution::Absolute(res)) };
            let r = search(&cfg, step(capacity)).unwrap();
            prop_assert!(r.trials.len() as u32 <= iters + 2);
            if let Some(rate) = r.rate {
                prop_assert!(r.trials.iter().any(|t| t.rate == rate && t.passed));
                if r.converged && rate < cfg.high {
                    prop_assert!(capacity - rate <= res + 1e-9);
                }
            }
        }
    }
}
