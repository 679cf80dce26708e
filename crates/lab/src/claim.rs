//! A paper's claim recorded in an experiment file, and its verdict against rxlab's results.
//!
//! ```toml
//! [claim]
//! paper = "rxBisect (001)"
//! figure = "Figure 10"
//! text = "At 200 Gbps privRing loses 20 % of rxBisect's NAT throughput"
//!
//! [[claim.check]]
//! what = "privRing / rxBisect throughput"
//! metric = "throughput.gbps_wire"   # a column of results.csv
//! a = "privRing"                    # rows with this label, or a table of parameters: { iface = "privring", ring = 64 }
//!                                   # a parameter may be given a range: { rate = { from = "10G", to = "30G" } }
//!                                   # or a list of values, any of which matches: { app = ["nat", "lb"] }
//! b = "rxBisect"                    # leave out to compare a's value itself; the higher of two sides'
//!                                   # values: { higher_of = [{ label = "privRing" }, { label = "shRing/8" }] }
//! paper = 0.80                      # the paper's a / b
//! tolerance = 0.25                  # default: within ±25 % of the paper's ratio
//! bound = "about"                   # or "at_least" / "at_most" (the paper's "≥ 46 %"), tolerance included
//! ```
//!
//! The paper's own numbers, where its text or tables state them, are recorded beside the checks and drawn
//! in the experiment's figures next to rxlab's (hollow markers, dashed lines):
//!
//! ```toml
//! [[claim.published]]
//! metric = "ring_occupancy"         # the figure's y column
//! x = "privRing"                    # the figure's x value (a label, a ring size, a rate such as "35Mpps")
//! series = "privRing"               # the rxlab series it belongs beside (its colour); optional
//! value = 0.94                      # in the column's unit (ns, fractions, Gbps)
//! section = "§2.3"                  # where the paper states it
//! ```
//!
//! A side's value is the mean of `metric` over its rows, or with `above = X` the share of its rows
//! whose metric exceeds X. Tolerances are fixed per claim from the paper's wording, never fitted.
//!
//! A claim about each configuration ("shRing/8 outperforms privRing in all cases", "up to 2.1x") pairs the
//! two sides' rows instead, by the columns that name a configuration, and takes one ratio per pair:
//!
//! ```toml
//! pair = ["app_params"]             # a's and b's rows with equal values of these columns, one ratio each
//! take = "min"                      # "mean" (default), "min" or "max" of the ratios; with `above = X`
//!                                   # the share of the ratios above X
//! ```
//!
//! A pair whose denominator is zero or missing has no ratio and is left out.
//!
//! Statements of other shapes: `b_metric = "..."` gives b's side its own metric (two metrics of the same
//! rows), `compare = "difference"` takes a - b instead of a / b, and `c` with `d` divide a / b by c / d
//! (a ratio of ratios).
//!
//! Where both sides' points ran `--trials` (the papers' "trimmed means of ten runs"), the verdict also
//! says how the ratio spreads over the simulator seeds: each seed's own ratio, from the numbers every
//! trial keeps (`crate::trials::per_run`). The papers' runs spread less than 5 %; a check whose seeds
//! fall on both sides of its tolerance rests on a server with two states (docs/model.md, "Two states").

use crate::results::Row;
use serde::{Deserialize, Serialize};

/// The claim of one experiment.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Claim {
    /// The paper (`papers/INDEX.md` name and number).
    pub paper: String,
    /// Figure or table.
    pub figure: String,
    /// What the paper states.
    pub text: String,
    /// The ratios checked.
    pub check: Vec<Check>,
    /// The paper's published points.
    #[serde(default)]
    pub published: Vec<Published>,
}

/// One number the paper states, placed in a figure.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Published {
    /// The metric column (a figure's `y`).
    pub metric: String,
    /// The x value in the figure (a label, a number, a rate).
    pub x: toml::Value,
    /// The rxlab series it is compared with.
    pub series: Option<String>,
    /// The paper's value, in the column's unit.
    pub value: f64,
    /// The paper's section, figure or table that states it.
    pub section: String,
}

impl Published {
    /// The x value as the figure's rows write it.
    pub fn x_text(&self) -> String {
        match &self.x {
            toml::Value::String(s) => s.clone(),
            v => v.to_string(),
        }
    }
}

/// Rows chosen for one side of a ratio.
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub enum Select {
    /// Rows with this label.
    Label(String),
    /// The higher of several sides' values (see [`HigherOf`]).
    Higher(HigherOf),
    /// Rows whose parameters have these values.
    Params(toml::Table),
}

/// A side whose value is the higher of several sides' values, each chosen as any side is: rxBisect's
/// idealized dynamic shRing, which "does not run but instead reports the better result between privRing
/// and shRing" (rxBisect §6), is `{ higher_of = [{ label = "privRing" }, { label = "shRing/8" }] }`.
/// Every alternative must have a value; a paired check takes the higher of the alternatives' partners.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HigherOf {
    /// The alternatives.
    pub higher_of: Vec<Select>,
}

fn default_tolerance() -> f64 {
    0.25
}

/// One number checked against the paper.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Check {
    /// What the number is, for the verdict table.
    pub what: String,
    /// The metric (a flattened report key, e.g. `latency.p99`).
    pub metric: String,
    /// Numerator rows.
    pub a: Select,
    /// Denominator rows; without them, a's value is compared directly.
    pub b: Option<Select>,
    /// The paper's value.
    pub paper: f64,
    /// Allowed relative deviation from the paper's value.
    #[serde(default = "default_tolerance")]
    pub tolerance: f64,
    /// Use the share of rows whose metric exceeds this instead of the mean.
    pub above: Option<f64>,
    /// How rxlab's value must relate to the paper's.
    #[serde(default)]
    pub bound: Bound,
    /// Pair a's and b's rows by these columns and compare each pair's own ratio (see the module docs).
    #[serde(default)]
    pub pair: Vec<String>,
    /// What the pairs' ratios give.
    #[serde(default)]
    pub take: Take,
    /// b's (and d's) metric where it is not a's: two metrics of the same rows, as nicmem §3.1's "PCIe out
    /// exceeds PCIe in".
    pub b_metric: Option<String>,
    /// How a's value is compared with b's.
    #[serde(default)]
    pub compare: Compare,
    /// With `d`, a second ratio c / d that divides a / b: a ratio of ratios ("deterministic service is
    /// the case with fewer benefits", COREC §3.2).
    pub c: Option<Select>,
    /// The denominator of the second ratio.
    pub d: Option<Select>,
}

/// Two sides' values seed by seed, `f` of each seed's pair; `None` where the seeds differ or `f` has no
/// value.
fn zip(x: Vec<(u64, f64)>, y: Vec<(u64, f64)>, f: impl Fn(f64, f64) -> Option<f64>) -> Option<Vec<(u64, f64)>> {
    if x.len() != y.len() {
        return None;
    }
    x.into_iter().zip(y).map(|(x, y)| if x.0 == y.0 { f(x.1, y.1).map(|v| (x.0, v)) } else { None }).collect()
}

/// How a check compares a's value with b's.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Compare {
    /// a / b (none where b is zero).
    #[default]
    Ratio,
    /// a - b, in the metric's unit ("reduces latency by up to 8 us", Ensō §7.3.3).
    Difference,
}

impl Compare {
    fn apply(self, x: f64, y: f64) -> Option<f64> {
        match self {
            Compare::Ratio => (y != 0.0).then_some(x / y),
            Compare::Difference => Some(x - y),
        }
    }
}

/// What a paired check takes of its ratios (`take`); `above = X` takes the share above X instead.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Take {
    /// Their mean.
    #[default]
    Mean,
    /// The lowest ("in all cases").
    Min,
    /// The highest ("up to").
    Max,
}

/// The relation a check asks for; every form allows the check's relative tolerance.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Bound {
    /// About the paper's value ("a 20 % drop").
    #[default]
    About,
    /// At least the paper's value ("at least 46 %").
    AtLeast,
    /// At most the paper's value ("at most 16 %").
    AtMost,
}

/// The outcome of one check.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Verdict {
    /// The check's description.
    pub what: String,
    /// The paper's value.
    pub paper: f64,
    /// rxlab's value (`None` when no row matched a side).
    pub rxlab: Option<f64>,
    /// Allowed relative deviation.
    pub tolerance: f64,
    /// The relation asked for.
    pub bound: Bound,
    /// Whether rxlab's value is within tolerance of the paper's.
    pub within: bool,
    /// How the ratio spreads over the seeds of points run with `--trials` (`None` otherwise).
    pub seeds: Option<Seeds>,
}

impl Verdict {
    /// The allowed deviation as the verdict table prints it: `±25 %`, `±2.5 %`.
    pub fn tolerance_text(&self) -> String {
        let pct = self.tolerance * 100.0;
        if (pct - pct.round()).abs() < 1e-9 { format!("±{pct:.0} %") } else { format!("±{pct:.1} %") }
    }
}

/// A check's ratio seed by seed: the ratio of each seed's own runs of the two sides.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Seeds {
    /// Seeds compared.
    pub n: usize,
    /// How many of them are within tolerance on their own.
    pub within: usize,
    /// The lowest seed's ratio.
    pub min: f64,
    /// The highest seed's ratio.
    pub max: f64,
}

impl std::fmt::Display for Seeds {
    /// `4 of 10 seeds within, 0.737-1.001`.
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        write!(f, "{} of {} seeds within, {}-{}", self.within, self.n, number(self.min), number(self.max))
    }
}

/// A verdict table's number: three decimals, or three significant digits below 0.01 (a share of cycles
/// such as rxBisect Table 3's 0.039 % would otherwise print as 0.000).
pub fn number(x: f64) -> String {
    if x == 0.0 || !x.is_finite() || x.abs() >= 0.01 {
        return format!("{x:.3}");
    }
    let decimals = 2 - x.abs().log10().floor() as i32;
    format!("{x:.*}", decimals as usize)
}

/// The sign shown before a paper's value: `≥`, `≤` or nothing.
pub fn bound_sign(b: Bound) -> &'static str {
    match b {
        Bound::About => "",
        Bound::AtLeast => ">=",
        Bound::AtMost => "<=",
    }
}

/// A parameter's value as a number to compare with a range's bounds: for an offered load (`rate`,
/// `ndr_*`) a rate (`70G`, `5Mpps`, compared only with rates of its own kind), else a count (`1Ki`,
/// `1M`) or a decimal.
fn quantity(key: &str, text: &str) -> Option<(u8, f64)> {
    if key == "rate" || key.starts_with("ndr_") {
        return text.parse::<traffic::Rate>().ok().map(|rate| match rate {
            traffic::Rate::Gbps(g) => (1, g),
            traffic::Rate::Mpps(m) => (2, m),
        });
    }
    ifaces::ringsize::count::<u64>(text)
        .map(|n| (0, n as f64))
        .ok()
        .or_else(|| text.trim().parse().ok().map(|x| (0, x)))
}

fn value_text(v: &toml::Value) -> String {
    match v {
        toml::Value::String(s) => s.clone(),
        v => v.to_string(),
    }
}

/// Whether a parameter's `text` lies within `range` (`{ from = X, to = Y }`, either bound optional, both
/// inclusive), each bound in the parameter's own grammar.
fn in_range(key: &str, text: &str, range: &toml::Table) -> bool {
    let Some((kind, x)) = quantity(key, text) else { return false };
    let bound = |b: &str| range.get(b).map(|v| quantity(key, &value_text(v)));
    let holds = |key: &str, ok: fn(f64, f64) -> bool| match bound(key) {
        None => true,
        Some(Some((k, b))) => k == kind && ok(x, b),
        Some(None) => false,
    };
    holds("from", |x, b| x >= b) && holds("to", |x, b| x <= b)
}

impl Select {
    /// Whether `r` is one of the rows selected: its label, or each parameter's value, for a value given
    /// as `{ from = X, to = Y }` a value within that range (an offered load's share of a curve), for a
    /// list any of its values.
    pub fn matches(&self, r: &Row) -> bool {
        fn one(k: &str, v: &toml::Value, r: &Row) -> bool {
            match v {
                toml::Value::Table(range) => in_range(k, &r.text(k), range),
                toml::Value::Array(any) => any.iter().any(|v| one(k, v, r)),
                v => r.text(k) == value_text(v),
            }
        }
        match self {
            Select::Label(l) => r.label() == *l,
            Select::Higher(h) => h.higher_of.iter().any(|s| s.matches(r)),
            Select::Params(t) => t.iter().all(|(k, v)| one(k, v, r)),
        }
    }

    /// Refuse a range with keys other than `from` and `to`, or a bound that is no number, rate or count,
    /// and a `higher_of` with no alternatives or beside parameters.
    pub fn validate(&self) -> anyhow::Result<()> {
        let t = match self {
            Select::Label(_) => return Ok(()),
            Select::Higher(h) if h.higher_of.is_empty() => anyhow::bail!("`higher_of` needs alternatives"),
            Select::Higher(h) => return h.higher_of.iter().try_for_each(Select::validate),
            Select::Params(t) => t,
        };
        if t.contains_key("higher_of") {
            anyhow::bail!("`higher_of` stands alone: give each alternative its own parameters");
        }
        for (k, v) in t {
            let toml::Value::Table(range) = v else { continue };
            if range.is_empty() {
                anyhow::bail!("`{k}`: a range needs `from`, `to` or both");
            }
            for (bk, bv) in range {
                if bk != "from" && bk != "to" {
                    anyhow::bail!("`{k}`: a range has `from` and `to`, not `{bk}`");
                }
                if quantity(k, &value_text(bv)).is_none() {
                    anyhow::bail!(
                        "`{k}.{bk}`: {bv} is no {}",
                        if k == "rate" || k.starts_with("ndr_") {
                            "rate (70G, 5Mpps)"
                        } else {
                            "number or count (1Ki)"
                        }
                    );
                }
            }
        }
        Ok(())
    }

    /// The first of `rows` this selects that has `row`'s values of the `pair` columns: the row a paired
    /// check compares `row` with, or a relative figure draws it over.
    pub fn partner<'r>(&self, rows: impl IntoIterator<Item = &'r Row>, row: &Row, pair: &[String]) -> Option<&'r Row> {
        rows.into_iter().find(|o| self.matches(o) && pair.iter().all(|k| o.text(k) == row.text(k)))
    }

    /// The value a side takes of its rows with `value` (a mean, a share, one seed's mean): of a
    /// `higher_of` the highest of its alternatives' values, `None` where any alternative has none.
    fn value<T>(&self, value: &impl Fn(&Select) -> Option<T>, higher: fn(T, T) -> Option<T>) -> Option<T> {
        match self {
            Select::Higher(h) => h.higher_of.iter().map(|s| s.value(value, higher)).reduce(|x, y| higher(x?, y?))?,
            s => value(s),
        }
    }
}

impl Check {
    /// Refuse `pair` without a `b` to pair with, `take` without `pair`, and sides or options that have
    /// nothing to apply to.
    pub fn validate(&self) -> anyhow::Result<()> {
        if !self.pair.is_empty() && self.b.is_none() {
            anyhow::bail!("`pair` compares a's rows with b's: give `b`, or leave `pair` out");
        }
        if self.pair.is_empty() && self.take != Take::Mean {
            anyhow::bail!("`take` chooses among paired ratios: give `pair = [columns]`, or leave `take` out");
        }
        let higher = |s: Option<&Select>| matches!(s, Some(Select::Higher(_)));
        if !self.pair.is_empty() && higher(Some(&self.a)) {
            anyhow::bail!("a paired check takes its configurations from a's rows: `higher_of` goes in `b`");
        }
        if self.above.is_some()
            && [Some(&self.a), self.b.as_ref(), self.c.as_ref(), self.d.as_ref()].into_iter().any(higher)
        {
            anyhow::bail!("`above` counts rows, `higher_of` compares values: use one or the other");
        }
        if self.b.is_none() && (self.b_metric.is_some() || self.compare != Compare::Ratio) {
            anyhow::bail!("`b_metric` and `compare` apply to b's side: give `b`");
        }
        if self.c.is_some() != self.d.is_some() {
            anyhow::bail!("a ratio of ratios divides by c / d: give both `c` and `d`, or neither");
        }
        if self.c.is_some() && (self.b.is_none() || !self.pair.is_empty() || self.compare != Compare::Ratio) {
            anyhow::bail!("`c` and `d` divide the ratio a / b of an unpaired check: give `b`, no `pair`, no `compare`");
        }
        for (name, side) in
            [("a", Some(&self.a)), ("b", self.b.as_ref()), ("c", self.c.as_ref()), ("d", self.d.as_ref())]
        {
            if let Some(s) = side {
                s.validate().map_err(|e| anyhow::anyhow!("{name}: {e:#}"))?;
            }
        }
        Ok(())
    }

    /// The metric of b's and d's side.
    fn b_metric(&self) -> &str {
        self.b_metric.as_deref().unwrap_or(&self.metric)
    }

    /// The check's value from its sides' values, one per seed (or a single value under seed 0):
    /// a, a compared with b, or that divided by c / d; `None` where a side has no value, the sides ran
    /// different seeds, or a ratio's denominator is zero.
    fn combine(&self, side: impl Fn(&Select, &str) -> Option<Vec<(u64, f64)>>) -> Option<Vec<f64>> {
        let a = side(&self.a, &self.metric)?;
        let mut v = match &self.b {
            None => a,
            Some(b) => zip(a, side(b, self.b_metric())?, |x, y| self.compare.apply(x, y))?,
        };
        if let (Some(c), Some(d)) = (&self.c, &self.d) {
            let cd = zip(side(c, &self.metric)?, side(d, self.b_metric())?, |x, y| Compare::Ratio.apply(x, y))?;
            v = zip(v, cd, |x, y| Compare::Ratio.apply(x, y))?;
        }
        Some(v.into_iter().map(|x| x.1).collect())
    }

    /// Each seed's value of a side (the mean over its rows of that seed's run), paired by seed; `None`
    /// unless every row ran the same two or more seeds and kept this metric per run.
    fn side_seeds(s: &Select, metric: &str, rows: &[Row]) -> Option<Vec<(u64, f64)>> {
        s.value(&|s| Self::rows_seeds(s, metric, rows), |x, y| zip(x, y, |x, y| Some(x.max(y))))
    }

    /// [`Check::side_seeds`] of the rows one selection chooses.
    fn rows_seeds(s: &Select, metric: &str, rows: &[Row]) -> Option<Vec<(u64, f64)>> {
        let per: Vec<Vec<(u64, f64)>> =
            rows.iter().filter(|r| s.matches(r)).map(|r| crate::trials::per_run(r, metric)).collect::<Option<_>>()?;
        let first = per.first()?;
        let same = per.iter().all(|p| p.len() == first.len() && p.iter().zip(first).all(|(x, y)| x.0 == y.0));
        (first.len() >= 2 && same).then(|| {
            let n = per.len() as f64;
            first
                .iter()
                .enumerate()
                .map(|(i, (seed, _))| (*seed, per.iter().map(|p| p[i].1).sum::<f64>() / n))
                .collect()
        })
    }

    /// The check's value seed by seed; none for shares (`above`) and paired checks.
    fn seeds(&self, rows: &[Row]) -> Option<Seeds> {
        if self.above.is_some() || !self.pair.is_empty() {
            return None;
        }
        let values = self.combine(|s, m| Self::side_seeds(s, m, rows))?;
        Some(Seeds {
            n: values.len(),
            within: values.iter().filter(|x| self.holds(**x)).count(),
            min: values.iter().copied().fold(f64::INFINITY, f64::min),
            max: values.iter().copied().fold(f64::NEG_INFINITY, f64::max),
        })
    }

    /// Whether `x` is within tolerance of the paper's value, as the bound asks.
    fn holds(&self, x: f64) -> bool {
        let (lo, hi) = (self.paper * (1.0 - self.tolerance), self.paper * (1.0 + self.tolerance));
        match self.bound {
            Bound::About => (lo..=hi).contains(&x),
            Bound::AtLeast => x >= lo,
            Bound::AtMost => x <= hi,
        }
    }

    /// A side's value: the mean of `metric` over its rows, or the share above `above`.
    fn side(&self, s: &Select, metric: &str, rows: &[Row]) -> Option<f64> {
        s.value(&|s| self.rows_side(s, metric, rows), |x, y| Some(x.max(y)))
    }

    /// [`Check::side`] of the rows one selection chooses.
    fn rows_side(&self, s: &Select, metric: &str, rows: &[Row]) -> Option<f64> {
        let vals: Vec<f64> = rows.iter().filter(|r| s.matches(r)).filter_map(|r| r.metric(metric)).collect();
        if vals.is_empty() {
            return None;
        }
        let n = vals.len() as f64;
        Some(match self.above {
            Some(t) => vals.iter().filter(|v| **v > t).count() as f64 / n,
            None => vals.iter().sum::<f64>() / n,
        })
    }

    /// A paired check's value: one comparison for each of a's rows and the b row with the same values
    /// of the `pair` columns, then their share above `above`, or the `take` of them.
    fn paired(&self, b: &Select, rows: &[Row]) -> Option<f64> {
        let values: Vec<f64> = rows
            .iter()
            .filter(|r| self.a.matches(r))
            .filter_map(|r| {
                let partner = |s: &Select| s.partner(rows, r, &self.pair)?.metric(self.b_metric());
                self.compare.apply(r.metric(&self.metric)?, b.value(&partner, |x, y| Some(x.max(y)))?)
            })
            .collect();
        if values.is_empty() {
            return None;
        }
        let n = values.len() as f64;
        Some(match (self.above, self.take) {
            (Some(t), _) => values.iter().filter(|x| **x > t).count() as f64 / n,
            (None, Take::Mean) => values.iter().sum::<f64>() / n,
            (None, Take::Min) => values.iter().copied().fold(f64::INFINITY, f64::min),
            (None, Take::Max) => values.iter().copied().fold(f64::NEG_INFINITY, f64::max),
        })
    }

    /// The verdict over `rows`.
    pub fn verdict(&self, rows: &[Row]) -> Verdict {
        let rxlab = match &self.b {
            Some(b) if !self.pair.is_empty() => self.paired(b, rows),
            _ => self.combine(|s, m| self.side(s, m, rows).map(|x| vec![(0, x)])).map(|v| v[0]),
        };
        Verdict {
            what: self.what.clone(),
            paper: self.paper,
            rxlab,
            tolerance: self.tolerance,
            bound: self.bound,
            within: rxlab.is_some_and(|x| self.holds(x)),
            seeds: self.seeds(rows),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    fn row(label: &str, gbps: f64) -> Row {
        Row {
            index: 0,
            id: String::new(),
            params: BTreeMap::from([("label".to_string(), label.into())]),
            metrics: BTreeMap::from([("g".to_string(), gbps.into())]),
            error: None,
            build: String::new(),
        }
    }

    #[test]
    fn ratio_within_tolerance() {
        let c: Check = toml::from_str("what = \"x\"\nmetric = \"g\"\na = \"p\"\nb = \"r\"\npaper = 0.8").unwrap();
        let v = c.verdict(&[row("p", 150.0), row("r", 200.0)]);
        assert_eq!(v.rxlab, Some(0.75));
        assert!(v.within);
        let v = c.verdict(&[row("p", 50.0), row("r", 200.0)]);
        assert!(!v.within);
        assert_eq!(c.verdict(&[row("p", 1.0)]).rxlab, None);
        assert_eq!(c.verdict(&[row("p", 150.0), row("r", 200.0)]).seeds, None, "no trials, no spread");
        assert_eq!(v.tolerance_text(), "±25 %");
        let half: Check =
            toml::from_str("what = \"x\"\nmetric = \"g\"\na = \"p\"\npaper = 1.025\ntolerance = 0.025").unwrap();
        assert_eq!(half.verdict(&[row("p", 1.0)]).tolerance_text(), "±2.5 %", "a half percent is not rounded away");
    }

    /// A row run on seeds 1.. with these throughputs, as `--trials` records them.
    fn trials(label: &str, gbps: &[f64]) -> Row {
        let mut r = row(label, 0.0);
        r.metrics.insert("trials.n".into(), gbps.len().into());
        for (i, g) in gbps.iter().enumerate() {
            r.metrics.insert(format!("trials.runs.{i}.seed"), (i + 1).into());
            r.metrics.insert(format!("trials.runs.{i}.gbps_wire"), (*g).into());
        }
        r
    }

    /// A check of metric `g` and paper value 1 with these other keys.
    fn parse(keys: &str) -> Check {
        toml::from_str(&format!("what = \"x\"\nmetric = \"g\"\npaper = 1.0\n{keys}")).unwrap()
    }

    /// Why [`parse`]'s check with these keys is refused.
    fn refused(keys: &str) -> String {
        parse(keys).validate().unwrap_err().to_string()
    }

    fn config(label: &str, reads: u32, gbps: f64) -> Row {
        let mut r = row(label, gbps);
        r.params.insert("app_params".into(), format!("reads={reads}").into());
        r
    }

    #[test]
    fn small_numbers_keep_three_significant_digits() {
        let got: Vec<String> = [0.0, 1.23456, -0.5, 0.0014, 0.00039, 0.0123, -0.000659].map(number).into();
        assert_eq!(got, ["0.000", "1.235", "-0.500", "0.00140", "0.000390", "0.012", "-0.000659"]);
    }

    #[test]
    fn paired_checks_take_each_configurations_own_ratio() {
        let rows = [
            config("s", 1, 200.0),
            config("p", 1, 200.0),
            config("s", 8, 150.0),
            config("p", 8, 100.0),
            config("s", 12, 90.0),
            config("p", 12, 0.0),
        ];
        let check = |extra: &str| parse(&format!("a = \"s\"\nb = \"p\"\npair = [\"app_params\"]\n{extra}"));
        // Ratios 1.0 and 1.5; reads=12 has no denominator and is left out.
        assert_eq!(check("").verdict(&rows).rxlab, Some(1.25));
        assert_eq!(check("take = \"min\"").verdict(&rows).rxlab, Some(1.0));
        assert_eq!(check("take = \"max\"").verdict(&rows).rxlab, Some(1.5));
        assert_eq!(check("above = 1.02").verdict(&rows).rxlab, Some(0.5));
        // Unpaired, the same rows compare means: (200 + 150 + 90) / 3 over (200 + 100 + 0) / 3.
        let plain: Check = toml::from_str("what = \"x\"\nmetric = \"g\"\na = \"s\"\nb = \"p\"\npaper = 1.0").unwrap();
        assert_eq!(plain.verdict(&rows).rxlab, Some(440.0 / 300.0));
        assert_eq!(check("").verdict(&rows[..1]).rxlab, None, "no pair, no value");
        let lone: Check =
            toml::from_str("what = \"x\"\nmetric = \"g\"\na = \"s\"\npaper = 1.0\npair = [\"app_params\"]").unwrap();
        assert!(lone.validate().unwrap_err().to_string().contains("give `b`"));
        let take: Check =
            toml::from_str("what = \"x\"\nmetric = \"g\"\na = \"s\"\nb = \"p\"\npaper = 1.0\ntake = \"max\"").unwrap();
        assert!(take.validate().unwrap_err().to_string().contains("give `pair"));
        assert!(check("take = \"max\"").validate().is_ok());
    }

    fn at(label: &str, rate: &str, g: f64) -> Row {
        let mut r = row(label, g);
        r.params.insert("rate".into(), rate.into());
        r
    }

    #[test]
    fn a_range_selects_the_rows_within_it() {
        let rows = [
            at("e", "1Mpps", 1.0),
            at("e", "5Mpps", 2.0),
            at("e", "5.5Mpps", 10.0),
            at("e", "50G", 99.0),
            at("e", "x", 7.0),
        ];
        let check = |range: &str| -> Check {
            toml::from_str(&format!(
                "what = \"x\"\nmetric = \"g\"\na = {{ label = \"e\", rate = {range} }}\npaper = 1.0"
            ))
            .unwrap()
        };
        // 1 and 5 Mpps; not 5.5, nor a bit rate or a value that is no rate.
        assert_eq!(check("{ from = \"0.5Mpps\", to = \"5Mpps\" }").verdict(&rows).rxlab, Some(1.5));
        assert_eq!(check("{ from = \"5Mpps\" }").verdict(&rows).rxlab, Some(6.0));
        assert_eq!(check("{ to = \"100G\" }").verdict(&rows).rxlab, Some(99.0));
        assert_eq!(check("{ from = \"6Mpps\", to = \"7Mpps\" }").verdict(&rows).rxlab, None);
        assert!(check("{ to = \"5Mpps\" }").validate().is_ok());
        assert!(check("{ below = \"5Mpps\" }").validate().unwrap_err().to_string().contains("not `below`"));
        assert!(check("{ to = \"fast\" }").validate().unwrap_err().to_string().contains("no rate"));
        assert!(check("{}").validate().unwrap_err().to_string().contains("needs `from`"));
        // Counts compare as numbers: ring sizes 512 to 1 Ki.
        let mut ring = row("e", 3.0);
        ring.params.insert("ring".into(), 1024.into());
        let c: Check =
            toml::from_str("what = \"x\"\nmetric = \"g\"\na = { ring = { from = 512, to = \"1Ki\" } }\npaper = 1.0")
                .unwrap();
        assert_eq!(c.verdict(&[ring]).rxlab, Some(3.0));
    }

    #[test]
    fn higher_of_takes_the_better_alternative_per_configuration() {
        let rows =
            [("x", 1, 200.0), ("p", 1, 180.0), ("s", 1, 190.0), ("x", 9, 200.0), ("p", 9, 160.0), ("s", 9, 80.0)]
                .map(|(label, reads, g)| config(label, reads, g));
        let check =
            |extra: &str| parse(&format!("{extra}\nb = {{ higher_of = [{{ label = \"p\" }}, {{ label = \"s\" }}] }}"));
        // Per configuration: 200 / max(180, 190) and 200 / max(160, 80).
        let paired = check("a = \"x\"\npair = [\"app_params\"]\ntake = \"max\"");
        assert!(paired.validate().is_ok());
        assert_eq!(paired.verdict(&rows).rxlab, Some(200.0 / 160.0));
        // Unpaired, the higher of the alternatives' means: (180 + 160) / 2 against (190 + 80) / 2.
        assert_eq!(check("a = \"x\"").verdict(&rows).rxlab, Some(200.0 / 170.0));
        // An alternative without rows leaves the side without a value.
        let missing: Check = toml::from_str(
            "what = \"x\"\nmetric = \"g\"\npaper = 1.0\na = \"x\"\nb = { higher_of = [\"p\", \"none\"] }",
        )
        .unwrap();
        assert_eq!(missing.verdict(&rows).rxlab, None);
        // Seed by seed, the higher alternative of each seed.
        let seeded = [trials("x", &[200.0, 200.0]), trials("p", &[100.0, 190.0]), trials("s", &[160.0, 100.0])];
        let c: Check = toml::from_str(
            "what = \"x\"\nmetric = \"throughput.gbps_wire\"\npaper = 1.25\ntolerance = 0.01\na = \"x\"\nb = { higher_of = [\"p\", \"s\"] }",
        )
        .unwrap();
        let s = c.verdict(&seeded).seeds.expect("every side ran trials");
        assert_eq!((s.within, s.min, s.max), (1, 200.0 / 190.0, 1.25));
        // Refused: no alternatives, parameters beside them, a higher_of whose rows a paired check walks,
        // and `above` with it.
        for (keys, why) in [
            ("a = \"x\"\nb = { higher_of = [] }", "needs alternatives"),
            ("a = \"x\"\nb = { higher_of = [\"p\"], app = \"nat\" }", "stands alone"),
            ("b = \"x\"\na = { higher_of = [\"p\", \"s\"] }\npair = [\"app_params\"]", "goes in `b`"),
            ("a = \"x\"\nb = { higher_of = [\"p\"] }\nabove = 1.0", "one or the other"),
        ] {
            assert!(refused(keys).contains(why), "{keys}");
        }
    }

    #[test]
    fn two_metrics_differences_and_ratios_of_ratios() {
        let mut host = config("host", 1, 100.0);
        host.metrics.insert("h".into(), 80.0.into());
        let rows = [host, config("nic", 1, 60.0), config("host", 2, 30.0), config("nic", 2, 20.0)];
        let check = |t: &str| -> Check {
            let c: Check = toml::from_str(&format!("what = \"x\"\nmetric = \"g\"\npaper = 1.0\n{t}")).unwrap();
            c.validate().unwrap();
            c
        };
        let one = |label: &str, n: u32| format!("{{ label = \"{label}\", app_params = \"reads={n}\" }}");
        // One row's two metrics: g / h.
        assert_eq!(
            check(&format!("a = {0}\nb = {0}\nb_metric = \"h\"", one("host", 1))).verdict(&rows).rxlab,
            Some(1.25)
        );
        // Differences, unpaired and the largest of the paired ones.
        assert_eq!(check("a = \"host\"\nb = \"nic\"\ncompare = \"difference\"").verdict(&rows).rxlab, Some(25.0));
        let most = "a = \"host\"\nb = \"nic\"\ncompare = \"difference\"\npair = [\"app_params\"]\ntake = \"max\"";
        assert_eq!(check(most).verdict(&rows).rxlab, Some(40.0));
        // (100 / 60) / (30 / 20).
        let rr = check(&format!(
            "a = {}\nb = {}\nc = {}\nd = {}",
            one("host", 1),
            one("nic", 1),
            one("host", 2),
            one("nic", 2)
        ));
        assert_eq!(rr.verdict(&rows).rxlab, Some(100.0 / 60.0 / 1.5));
        // Seed by seed as well.
        let seeded = [
            trials("p", &[100.0, 90.0]),
            trials("q", &[50.0, 60.0]),
            trials("r", &[10.0, 10.0]),
            trials("s", &[10.0, 20.0]),
        ];
        let c: Check = toml::from_str(
            "what = \"x\"\nmetric = \"throughput.gbps_wire\"\npaper = 1.0\na = \"p\"\nb = \"q\"\nc = \"r\"\nd = \"s\"",
        )
        .unwrap();
        let s = c.verdict(&seeded).seeds.expect("every side ran trials");
        assert_eq!((s.n, s.min, s.max), (2, 2.0, 3.0));
        for (keys, why) in [
            ("a = \"p\"\nb_metric = \"h\"", "give `b`"),
            ("a = \"p\"\ncompare = \"difference\"", "give `b`"),
            ("a = \"p\"\nb = \"q\"\nc = \"r\"", "both `c` and `d`"),
            ("a = \"p\"\nb = \"q\"\nc = \"r\"\nd = \"s\"\ncompare = \"difference\"", "no `compare`"),
            ("a = \"p\"\nb = \"q\"\nc = \"r\"\nd = \"s\"\npair = [\"app\"]", "no `pair`"),
        ] {
            assert!(refused(keys).contains(why), "{keys}");
        }
    }

    #[test]
    fn a_list_selects_the_rows_with_any_of_its_values() {
        let rows = [at("a", "1Mpps", 1.0), at("b", "1Mpps", 2.0), at("c", "1Mpps", 4.0)];
        let check: Check =
            toml::from_str("what = \"x\"\nmetric = \"g\"\na = { label = [\"a\", \"c\"] }\npaper = 1.0").unwrap();
        assert_eq!(check.verdict(&rows).rxlab, Some(2.5));
    }

    #[test]
    fn trials_show_how_the_ratio_spreads_over_seeds() {
        let c: Check = toml::from_str(
            "what = \"x\"\nmetric = \"throughput.gbps_wire\"\na = \"p\"\nb = \"r\"\npaper = 0.8\ntolerance = 0.1",
        )
        .unwrap();
        // Seeds 1 and 3 tip (150 of 200: 0.75, within), seed 2 does not (1.0, a miss).
        let rows = [trials("p", &[150.0, 200.0, 150.0]), trials("r", &[200.0, 200.0, 200.0])];
        let s = c.verdict(&rows).seeds.expect("both sides ran trials");
        assert_eq!((s.n, s.within, s.min, s.max), (3, 2, 0.75, 1.0));
        assert_eq!(s.to_string(), "2 of 3 seeds within, 0.750-1.000");
        // Sides run on different seeds, or a metric the trials do not keep, give no spread.
        let mut other = trials("r", &[200.0, 200.0, 200.0]);
        other.metrics.insert("trials.runs.0.seed".into(), 7.into());
        assert_eq!(c.verdict(&[rows[0].clone(), other]).seeds, None);
        let p99: Check = toml::from_str("what = \"x\"\nmetric = \"latency.p99\"\na = \"p\"\npaper = 1.0").unwrap();
        assert_eq!(p99.verdict(&rows).seeds, None);
    }
}
