//! Latency histograms in nanoseconds, backed by HdrHistogram.
//!
//! Each core records into its own [`LatencyHistogram`]; the run merges them at the end and reports a
//! [`LatencySummary`]. The histogram is sized once, at construction, for 1 ns to [`MAX_NS`] at
//! [`SIGFIG`] significant digits (about 220 KiB), so recording never allocates. Values above
//! [`MAX_NS`] are recorded as [`MAX_NS`] and counted as saturated.

use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

/// Largest latency recorded exactly: 100 s. Anything longer is a hung run, not a latency.
pub const MAX_NS: u64 = 100_000_000_000;
/// Significant decimal digits kept: values are within 0.1 % of what was recorded.
pub const SIGFIG: u8 = 3;

/// A latency histogram over nanoseconds; cheap to record on a hot path.
#[derive(Debug, Clone)]
pub struct LatencyHistogram {
    hist: Histogram<u64>,
    saturated: u64,
}

/// What a run reports about latency, in nanoseconds (all zero when nothing was recorded).
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct LatencySummary {
    /// Number of samples.
    pub count: u64,
    /// Mean of the samples.
    pub mean: f64,
    /// Median.
    pub p50: u64,
    /// 99th percentile.
    pub p99: u64,
    /// 99.9th percentile.
    pub p999: u64,
    /// Largest sample (at most [`MAX_NS`], to 0.1 %).
    pub max: u64,
    /// Smallest sample.
    pub min: u64,
    /// Samples above [`MAX_NS`], recorded as [`MAX_NS`].
    pub saturated: u64,
}

/// The probabilities at which [`LatencyHistogram::cdf`] samples the distribution: enough to draw a CDF
/// (COREC Figure 6) and its tail, few enough to keep one column per point in `results.csv`.
pub const CDF_QUANTILES: [f64; 24] = [
    0.0, 0.01, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.4, 0.5, 0.6, 0.7, 0.75, 0.8, 0.85, 0.9, 0.95, 0.97, 0.98, 0.99,
    0.995, 0.999, 0.9999, 1.0,
];

/// One point of a latency CDF: the share `q` of samples at or below `ns` nanoseconds.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct CdfPoint {
    /// Latency, ns (histogram bucket bound).
    pub ns: u64,
    /// Share of samples at or below it, in [0, 1].
    pub q: f64,
}

impl Default for LatencyHistogram {
    fn default() -> Self {
        Self::new()
    }
}

impl LatencyHistogram {
    /// An empty histogram covering 1 ns to [`MAX_NS`] at [`SIGFIG`] digits.
    pub fn new() -> Self {
        // Constant bounds that HdrHistogram accepts (1 <= low, high >= 2 * low, sigfig <= 5): this cannot
        // fail for any caller, and every test constructs one.
        let hist = Histogram::new_with_bounds(1, MAX_NS, SIGFIG).expect("constant histogram bounds are valid");
        LatencyHistogram { hist, saturated: 0 }
    }

    /// Record one sample of `ns` nanoseconds. Never allocates.
    #[inline]
    pub fn record(&mut self, ns: u64) {
        self.record_n(ns, 1);
    }

    /// Record `count` samples of `ns` nanoseconds each. Never allocates.
    #[inline]
    pub fn record_n(&mut self, ns: u64, count: u64) {
        if ns > MAX_NS {
            self.saturated = self.saturated.saturating_add(count);
        }
        self.hist.saturating_record_n(ns.min(MAX_NS), count);
    }

    /// Add every sample of `other` (e.g. another core's histogram) into this one.
    pub fn merge(&mut self, other: &LatencyHistogram) {
        // Re-record bucket by bucket: both sides share one bucket layout, so this is exact, and unlike
        // `Histogram::add` it has no error case to handle. Merging happens once per core per run.
        for v in other.hist.iter_recorded() {
            self.hist.saturating_record_n(v.value_iterated_to(), v.count_at_value());
        }
        self.saturated = self.saturated.saturating_add(other.saturated);
    }

    /// Number of samples recorded.
    pub fn count(&self) -> u64 {
        self.hist.len()
    }

    /// The value at quantile `q` in [0, 1] (clamped), in nanoseconds; 0 when empty.
    pub fn quantile(&self, q: f64) -> u64 {
        if self.hist.is_empty() {
            return 0;
        }
        let q = if q.is_nan() { 0.0 } else { q.clamp(0.0, 1.0) };
        self.hist.value_at_quantile(q)
    }

    /// Count, mean, p50, p99, p99.9, max and min of what was recorded.
    pub fn summary(&self) -> LatencySummary {
        if self.hist.is_empty() {
            return LatencySummary::default();
        }
        LatencySummary {
            count: self.hist.len(),
            mean: self.hist.mean(),
            p50: self.quantile(0.50),
            p99: self.quantile(0.99),
            p999: self.quantile(0.999),
            max: self.hist.max(),
            min: self.hist.min(),
            saturated: self.saturated,
        }
    }

    /// The distribution at [`CDF_QUANTILES`]; empty when nothing was recorded.
    pub fn cdf(&self) -> Vec<CdfPoint> {
        if self.hist.is_empty() {
            return vec![];
        }
        CDF_QUANTILES.iter().map(|&q| CdfPoint { ns: self.quantile(q), q }).collect()
    }

    /// Forget every sample, keeping the allocation.
    pub fn reset(&mut self) {
        self.hist.reset();
        self.saturated = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// True when `got` is within HdrHistogram's relative error of `want`.
    fn close(got: u64, want: u64) -> bool {
        got.abs_diff(want) as f64 <= want as f64 * 1e-3 + 1.0
    }

    #[test]
    fn empty_summary_is_zero() {
        assert_eq!(LatencyHistogram::new().summary(), LatencySummary::default());
        assert_eq!(LatencyHistogram::new().quantile(0.5), 0);
    }

    #[test]
    fn uniform_one_to_a_million() {
        let mut h = LatencyHistogram::new();
        for ns in 1..=1_000_000 {
            h.record(ns);
        }
        let s = h.summary();
        assert_eq!(s.count, 1_000_000);
        assert!((s.mean - 500_000.5).abs() < 500.0, "{s:?}");
        assert!(close(s.p50, 500_000), "{s:?}");
        assert!(close(s.p99, 990_000), "{s:?}");
        assert!(close(s.p999, 999_000), "{s:?}");
        assert!(close(s.max, 1_000_000), "{s:?}");
        assert_eq!(s.min, 1);
        assert_eq!(s.saturated, 0);
    }

    #[test]
    fn huge_values_saturate_instead_of_failing() {
        let mut h = LatencyHistogram::new();
        h.record(u64::MAX);
        h.record(0);
        let s = h.summary();
        assert_eq!((s.count, s.saturated, s.min), (2, 1, 0));
        assert!(close(s.max, MAX_NS));
    }

    #[test]
    fn summary_serialises() {
        let mut h = LatencyHistogram::new();
        h.record(1500);
        let json = serde_json::to_string(&h.summary()).unwrap();
        assert!(json.contains("\"p999\":1500"), "{json}");
        let back: LatencySummary = serde_json::from_str(&json).unwrap();
        assert_eq!(back, h.summary());
    }

    #[test]
    fn cdf_is_monotone_and_ends_at_the_extremes() {
        assert!(LatencyHistogram::new().cdf().is_empty());
        let mut h = LatencyHistogram::new();
        (1..=1000).for_each(|ns| h.record(ns));
        let cdf = h.cdf();
        assert_eq!(cdf.len(), CDF_QUANTILES.len());
        assert!(cdf.windows(2).all(|w| w[0].ns <= w[1].ns && w[0].q < w[1].q), "{cdf:?}");
        assert_eq!((cdf[0].ns, cdf[cdf.len() - 1].ns), (1, 1000));
    }

    proptest! {
        /// Merging per-core histograms gives the histogram of all samples.
        #[test]
        fn merge_equals_recording_everything(a in prop::collection::vec(0u64..MAX_NS * 2, 0..200),
                                             b in prop::collection::vec(0u64..MAX_NS * 2, 0..200)) {
            let (mut ha, mut hb, mut all) = (LatencyHistogram::new(), LatencyHistogram::new(), LatencyHistogram::new());
            a.iter().for_each(|&v| { ha.record(v); all.record(v) });
            b.iter().for_each(|&v| { hb.record(v); all.record(v) });
            ha.merge(&hb);
            prop_assert_eq!(ha.summary(), all.summary());
        }

        /// Percentiles are ordered and within the recorded range.
        #[test]
        fn percentiles_are_ordered(v in prop::collection::vec(0u64..10_000_000, 1..300)) {
            let mut h = LatencyHistogram::new();
            v.iter().for_each(|&x| h.record(x));
            let s = h.summary();
            prop_assert!(s.min <= s.p50 && s.p50 <= s.p99 && s.p99 <= s.p999 && s.p999 <= s.max);
            prop_assert!(close(s.max, *v.iter().max().unwrap()));
        }
    }
}
