//! One axis of a figure: its title with the unit, its range (always containing every point drawn), a
//! linear or log scale, and ticks at round values written with SI prefixes ("25 µs", "1 Ki").
//!
//! Values are stored in the metric's unit (ns, a fraction, ...); the axis multiplies them by a display
//! factor (1e-3 for µs) and, on a log axis, draws their logarithm. [`Axis::at`] maps a stored value to the
//! plot coordinate, so every series, bar and published point goes through one transformation.

use super::metrics::{Resolved, Unit, binary};
use plotters::coord::ranged1d::{DefaultFormatting, KeyPointHint, Ranged};

/// How an axis places values.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Scale {
    /// Linear.
    Linear,
    /// Logarithmic, with this base for its ticks (2 for ring sizes, 10 otherwise).
    Log(f64),
    /// Evenly placed categories (design names).
    Categories,
}

/// A drawn axis.
#[derive(Debug, Clone)]
pub struct Axis {
    /// Title with the scaled unit.
    pub title: String,
    /// Scale.
    pub scale: Scale,
    /// Display factor applied to stored values.
    pub factor: f64,
    /// Category names, for [`Scale::Categories`].
    pub categories: Vec<String>,
    /// Plot-coordinate range.
    pub range: (f64, f64),
    /// Tick positions in plot coordinates.
    pub ticks: Vec<f64>,
    unit: Unit,
}

/// A round step of about `span / n` (or a little less): 1, 2, 2.5 or 5 times a power of ten; for counts (cores, entries)
/// a whole number that is 1, 2 or 5 times a power of ten.
fn nice_step(span: f64, n: f64, integer: bool) -> f64 {
    let raw = (span / n).max(if integer { 1.0 } else { f64::MIN_POSITIVE });
    let mag = 10f64.powf(raw.log10().floor());
    let steps: &[f64] = if integer { &[1.0, 2.0, 5.0, 10.0] } else { &[1.0, 2.0, 2.5, 5.0, 10.0] };
    steps.iter().map(|m| m * mag).find(|s| *s >= raw * 0.8).unwrap_or(10.0 * mag)
}

/// `x` without float noise: 0.30000000000000004 → "0.3", 1e6 → "1000000".
fn number(x: f64) -> String {
    let r = (x * 1e9).round() / 1e9;
    let s = format!("{r}");
    if s == "-0" { "0".into() } else { s }
}

impl Axis {
    /// An axis for numeric values `values` (stored units) of column `col`; `log` overrides the registry's
    /// preference (by default a log axis when the values span more than 20x); `from_zero` starts a
    /// linear axis at 0 (bars, and quantities read as "how much").
    pub fn numeric(col: &Resolved, unit: Unit, values: &[f64], log: Option<bool>, from_zero: bool) -> Axis {
        let finite: Vec<f64> = values.iter().copied().filter(|v| v.is_finite()).collect();
        let lo = finite.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = finite.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let (lo, hi) = if lo.is_finite() { (lo, hi) } else { (0.0, 1.0) };
        let (factor, unit_text) = unit.axis_scale(hi.abs().max(lo.abs()));
        let base = if unit == Unit::Entries { 2.0 } else { 10.0 };
        let wants_log = log.unwrap_or(col.log && lo > 0.0 && hi / lo > 20.0);
        let mut axis = Axis {
            title: col.axis_title(unit_text),
            scale: if wants_log && lo > 0.0 { Scale::Log(base) } else { Scale::Linear },
            factor,
            categories: vec![],
            range: (0.0, 1.0),
            ticks: vec![],
            unit,
        };
        let (a, b) = (axis.at(lo), axis.at(hi));
        match axis.scale {
            Scale::Log(base) => {
                let pad = ((b - a) * 0.06).max(0.08);
                axis.range = (a - pad, b + pad);
                let step_of = |x: f64| x.log10() / base.log10();
                let (k0, k1) = ((a - pad).ceil() as i64, (b + pad).floor() as i64);
                axis.ticks = (k0..=k1).map(|k| k as f64).collect();
                if base == 10.0 && axis.ticks.len() < 3 {
                    let extra = (k0 - 1..=k1).flat_map(|k| [2.0, 5.0].map(|m| k as f64 + step_of(m)));
                    axis.ticks.extend(extra.filter(|t| (a - pad..=b + pad).contains(t)));
                    axis.ticks.sort_by(f64::total_cmp);
                }
                if axis.ticks.len() < 2 {
                    // Less than a decade: round values between the ends, placed on the log scale.
                    let (vlo, vhi) = (base.powf(a - pad), base.powf(b + pad));
                    let step = nice_step(vhi - vlo, 4.0, false);
                    let first = (vlo / step).ceil() as i64;
                    axis.ticks = (first..)
                        .map(|k| k as f64 * step)
                        .take_while(|v| *v <= vhi)
                        .filter(|v| *v > 0.0)
                        .map(|v| v.log10() / base.log10())
                        .collect();
                }
            }
            _ => {
                let a = if from_zero && a >= 0.0 { 0.0 } else { a };
                let span = if b > a { b - a } else { a.abs().max(1.0) };
                let step = nice_step(span, 5.0, matches!(unit, Unit::Count | Unit::Entries) && factor == 1.0);
                let (lo, hi) =
                    if from_zero && a == 0.0 { (0.0, b + span * 0.05) } else { (a - span * 0.05, b + span * 0.05) };
                axis.range = (lo, hi.max(lo + step));
                let first = (lo / step).ceil() as i64;
                axis.ticks =
                    (first..).map(|k| k as f64 * step).take_while(|t| *t <= axis.range.1 + step * 1e-9).collect();
            }
        }
        axis
    }

    /// An axis of category names placed at 0, 1, 2, ...
    pub fn categories(col: &Resolved, names: Vec<String>) -> Axis {
        let n = names.len().max(1) as f64;
        Axis {
            title: col.name.clone(),
            scale: Scale::Categories,
            factor: 1.0,
            range: (-0.6, n - 0.4),
            ticks: (0..names.len()).map(|i| i as f64).collect(),
            categories: names,
            unit: Unit::Text,
        }
    }

    /// The plot coordinate of stored value `v` (for categories: its index).
    pub fn at(&self, v: f64) -> f64 {
        match self.scale {
            Scale::Log(base) => (v * self.factor).max(f64::MIN_POSITIVE).log10() / base.log10(),
            _ => v * self.factor,
        }
    }

    /// The text of the tick at plot coordinate `c`.
    pub fn label(&self, c: f64) -> String {
        match self.scale {
            Scale::Categories => {
                let i = c.round();
                if (c - i).abs() > 1e-6 || i < 0.0 {
                    return String::new();
                }
                self.categories.get(i as usize).cloned().unwrap_or_default()
            }
            Scale::Log(base) => {
                let v = base.powf(c);
                if self.unit == Unit::Entries { binary(v.round()) } else { number(v) }
            }
            Scale::Linear if self.unit == Unit::Entries => binary(c),
            Scale::Linear => number(c),
        }
    }
}

/// The axis as a plotters coordinate: its range, with grid lines and labels at its ticks only.
#[derive(Debug, Clone)]
pub struct Ticked {
    range: (f64, f64),
    ticks: Vec<f64>,
}

impl Axis {
    /// The plotters coordinate of this axis.
    pub fn coord(&self) -> Ticked {
        Ticked { range: self.range, ticks: self.ticks.clone() }
    }
}

impl Ranged for Ticked {
    type ValueType = f64;
    type FormatOption = DefaultFormatting;

    fn map(&self, v: &f64, limit: (i32, i32)) -> i32 {
        let share = (v - self.range.0) / (self.range.1 - self.range.0);
        limit.0 + (share * f64::from(limit.1 - limit.0)).round() as i32
    }

    fn key_points<H: KeyPointHint>(&self, hint: H) -> Vec<f64> {
        if hint.weight().allow_light_points() { vec![] } else { self.ticks.clone() }
    }

    fn range(&self) -> std::ops::Range<f64> {
        self.range.0..self.range.1
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::metrics::lookup;

    #[test]
    fn latency_in_microseconds_with_round_ticks() {
        let col = lookup("latency.mean");
        let a = Axis::numeric(&col, col.unit, &[25_000.0, 31_000.0], Some(false), true);
        assert_eq!(a.title, "Mean latency (µs)");
        assert_eq!(a.range.0, 0.0);
        assert!(a.range.1 >= 31.0);
        let labels: Vec<String> = a.ticks.iter().map(|t| a.label(*t)).collect();
        assert!(labels.contains(&"10".to_string()), "{labels:?}");
    }

    #[test]
    fn counts_tick_at_whole_numbers() {
        let col = lookup("cores");
        let a = Axis::numeric(&col, col.unit, &[2.0, 14.0], None, false);
        assert!(a.ticks.iter().all(|t| t.fract() == 0.0), "{:?}", a.ticks);
    }

    #[test]
    fn ring_sizes_on_a_log2_axis() {
        let col = lookup("ring");
        let a = Axis::numeric(&col, col.unit, &[64.0, 4096.0], None, false);
        assert_eq!(a.scale, Scale::Log(2.0));
        let labels: Vec<String> = a.ticks.iter().map(|t| a.label(*t)).collect();
        assert_eq!(labels, ["64", "128", "256", "512", "1 Ki", "2 Ki", "4 Ki"]);
    }

    #[test]
    fn every_value_is_inside_the_range() {
        let col = lookup("latency.p99");
        for vals in [vec![1.0, 1e7], vec![-5.0, 3.0], vec![7.0, 7.0], vec![0.0, 0.0]] {
            let a = Axis::numeric(&col, col.unit, &vals, None, false);
            for v in vals {
                let c = a.at(v);
                assert!(a.range.0 <= c && c <= a.range.1, "{v} -> {c} outside {:?}", a.range);
            }
        }
    }
}
