//! Figures an experiment asks for, and the points each draws.
//!
//! ```toml
//! [[figure]]
//! kind = "lines"                      # default; or "scatter", "stacked", "cdf", "timeline"
//! title = "Throughput vs ring size"   # default: from the metrics' names
//! x = "ring"                          # a parameter or metric column
//! y = "throughput.gbps_wire"          # a metric column
//! series = "label,cores"              # one line per value of these columns (default: label)
//! log_x = true                        # force a log (or, with false, linear) axis; default: the
//! log_y = false                       #   registry's preference when values span over 20x
//! only = { rate = "35Mpps" }          # draw only the rows with these parameter values
//! relative_to = { label = "privRing" } # draw each row's metrics over those of the row these parameters
//! pair = ["app_params"]               #   pick among the rows with its values of `pair` (shRing Fig. 7)
//! ```
//!
//! - `lines`: one point per row, one line per series; the paper's published points for `y` (from the
//!   experiment's `[[claim.published]]`) are drawn beside them, hollow and dashed.
//! - `scatter`: as `lines`, but points only, never joined: one dot per run, e.g. nicmem Fig. 7's 480 NFs
//!   per design placed by their cycles per packet and memory bandwidth.
//! - `stacked`: one bar per value of `x` (default `label`), stacking the metrics of `stack`, e.g. cycles
//!   per packet split into processing and synchronisation (shRing Fig. 2a):
//!   `stack = ["derived.cycles_processing", "cycles.phases.sync"]`, with `y` naming the axis.
//! - `cdf`: each row's latency CDF (`latency_cdf`, from its latency histogram; COREC Fig. 6).
//! - `timeline`: each row's ring occupancy (`y = "occupancy"`, default) or throughput (`y = "gbps_wire"`)
//!   over virtual time, warm-up included: whether the run settled before its window.
//!
//! `along = "ARRAY"` draws any array every row reports, one line per row, `x` and `y` naming fields of its
//! elements (`cdf` and `timeline` are `along` with their arrays and fields filled in).
//! Text x values (design names, `imix`) are placed evenly in order of first appearance and their points
//! are not joined (no line between two designs); rates such as `35Mpps` are numbers.

use super::axis::{Axis, Scale};
use super::metrics::{self, Resolved, Unit, legend_part};
use crate::claim::{Published, Select};
use crate::results::Row;
use anyhow::{Result, bail};
use serde::Deserialize;

/// What a figure draws.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// A metric against a parameter, one line per series.
    #[default]
    Lines,
    /// A metric against a parameter or another metric, points only.
    Scatter,
    /// Stacked bars of several metrics per category.
    Stacked,
    /// Latency CDFs, one per row.
    Cdf,
    /// Ring occupancy or throughput over the run, one line per row.
    Timeline,
}

/// One figure of an experiment.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FigureSpec {
    /// Title.
    pub title: Option<String>,
    /// Kind.
    #[serde(default)]
    pub kind: Kind,
    /// x column (default by kind).
    #[serde(default)]
    pub x: String,
    /// y column (default by kind).
    #[serde(default)]
    pub y: String,
    /// The metrics a `stacked` figure stacks, bottom first.
    #[serde(default)]
    pub stack: Vec<String>,
    /// Columns (comma-separated) whose values name the lines.
    #[serde(default = "default_series")]
    pub series: String,
    /// Log x axis (default: the registry's preference).
    pub log_x: Option<bool>,
    /// Log y axis (default: the registry's preference).
    pub log_y: Option<bool>,
    /// An array metric (such as `timeline`) to draw along, one line per row, with `x` and `y` naming
    /// fields of its elements.
    pub along: Option<String>,
    /// Only the rows whose parameters have these values.
    pub only: Option<toml::Table>,
    /// Draw each row's metrics (y, and x where it is a metric) over its reference row's: the row these
    /// parameters select among those with the same values of `pair`; the reference rows are not drawn.
    pub relative_to: Option<toml::Table>,
    /// The columns that pair a row with its reference row (`relative_to`).
    #[serde(default)]
    pub pair: Vec<String>,
}

fn default_series() -> String {
    "label".into()
}

/// One drawn series, in plot coordinates.
#[derive(Debug, Clone)]
pub struct Series {
    /// Legend text.
    pub name: String,
    /// The rxlab series it belongs beside (its colour and marker); for rxlab's own, its name.
    pub key: String,
    /// Points, in plot coordinates.
    pub pts: Vec<(f64, f64)>,
    /// The paper's published points rather than rxlab's.
    pub paper: bool,
}

/// Everything a figure draws.
#[derive(Debug, Clone)]
pub struct Plot {
    /// Title.
    pub title: String,
    /// x axis.
    pub x: Axis,
    /// y axis.
    pub y: Axis,
    /// Series; for stacked bars, one per stacked metric with one point per category.
    pub series: Vec<Series>,
    /// How the series' points are drawn.
    pub mark: Mark,
    /// Thresholds drawn across the plot.
    pub rules: Vec<Rule>,
}

/// A threshold a claim counts runs against (`above = X`), drawn across the plot where an axis shows its
/// metric: nicmem Fig. 7's 1808-cycle budget and 30 GB/s.
#[derive(Debug, Clone, PartialEq)]
pub struct Rule {
    /// A vertical line (a threshold on x) rather than a horizontal one.
    pub vertical: bool,
    /// Where, in plot coordinates.
    pub at: f64,
}

impl Plot {
    /// Draw `value` of `metric` as a rule on each numeric axis of `spec` that shows `metric`, if it lies
    /// inside that axis's range.
    pub fn rule(&mut self, spec: &FigureSpec, metric: &str, value: f64) {
        for (vertical, key, axis) in [(true, spec.x_key(), &self.x), (false, spec.y_key(), &self.y)] {
            let at = axis.at(value);
            let inside = axis.range.0 <= at && at <= axis.range.1;
            let rule = Rule { vertical, at };
            if key == metric && axis.scale != Scale::Categories && inside && !self.rules.contains(&rule) {
                self.rules.push(rule);
            }
        }
    }
}

/// How a plot draws its series.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mark {
    /// Points joined in x order (curves: CDFs, timelines).
    Lines,
    /// Points joined unless a series has several at one x (a sweep with one run per NF at each x).
    Auto,
    /// Points only (scatter plots, categories).
    Points,
    /// Stacked bars, one per category.
    Bars,
}

impl FigureSpec {
    /// The figures drawn when an experiment names none: throughput and p99 latency against the first
    /// sweep axis, or against the point when there is none.
    pub fn defaults(first_axis: Option<&str>) -> Vec<FigureSpec> {
        let x = first_axis.unwrap_or("label").to_string();
        let series = if first_axis.is_some() { "label" } else { "engine" }.to_string();
        ["throughput.gbps_wire", "latency.p99"]
            .into_iter()
            .map(|y| FigureSpec { x: x.clone(), y: y.into(), series: series.clone(), ..FigureSpec::default() })
            .collect()
    }

    /// The array drawn along, if any.
    fn array(&self) -> Option<&str> {
        match self.kind {
            Kind::Cdf => Some("latency_cdf"),
            Kind::Timeline => Some("timeline"),
            _ => self.along.as_deref(),
        }
    }

    /// The x column, with the kind's default.
    pub fn x_key(&self) -> &str {
        match (self.kind, self.x.as_str()) {
            (_, x) if !x.is_empty() => x,
            (Kind::Cdf, _) => "ns",
            (Kind::Timeline, _) => "t_us",
            _ => "label",
        }
    }

    /// The y column, with the kind's default.
    pub fn y_key(&self) -> &str {
        match (self.kind, self.y.as_str()) {
            (_, y) if !y.is_empty() => y,
            (Kind::Cdf, _) => "q",
            (Kind::Timeline, _) => "occupancy",
            (Kind::Stacked, _) => self.stack.first().map_or("", String::as_str),
            _ => "",
        }
    }

    /// The registry entry of a column; fields of an array are looked up as `ARRAY.*.FIELD`.
    fn column(&self, key: &str) -> Resolved {
        match self.array() {
            Some(a) => metrics::lookup(&format!("{a}.0.{key}")),
            None => metrics::lookup(key),
        }
    }

    /// The metrics this figure shows on its y axis, or on either axis of a scatter (a claim about one
    /// of them links here).
    pub fn shows(&self, metric: &str) -> bool {
        let on_x = self.kind == Kind::Scatter && self.x_key() == metric;
        self.array().is_none() && (self.y_key() == metric || on_x || self.stack.iter().any(|s| s == metric))
    }

    /// The title shown.
    pub fn title(&self) -> String {
        if let Some(t) = &self.title {
            return t.clone();
        }
        let (x, y) = (self.column(self.x_key()).name, self.column(self.y_key()).name);
        match self.kind {
            Kind::Cdf => "Latency CDF".into(),
            Kind::Timeline => format!("{y} over the run"),
            Kind::Stacked => {
                let parts: Vec<String> = self.stack.iter().map(|s| metrics::lookup(s).short).collect();
                format!("{} ({}) by {}", metrics::lookup(self.y_key()).name, parts.join(" + "), x.to_lowercase())
            }
            Kind::Lines | Kind::Scatter => format!("{y} vs {}", x.to_lowercase()),
        }
    }

    /// Check the spec's fields fit its kind; the error names the field to fix.
    pub fn validate(&self) -> Result<()> {
        match self.kind {
            Kind::Stacked if self.stack.is_empty() => {
                bail!("a `stacked` figure needs `stack`, e.g. [\"derived.cycles_processing\", \"cycles.phases.sync\"]")
            }
            Kind::Lines | Kind::Scatter if self.y.is_empty() => {
                bail!("a `lines` or `scatter` figure needs `y`, a metric column of results.csv")
            }
            Kind::Lines | Kind::Scatter if self.x.is_empty() => {
                bail!("a `lines` or `scatter` figure needs `x`, a parameter or metric column")
            }
            Kind::Lines | Kind::Scatter if self.relative_to.is_some() == self.pair.is_empty() => {
                bail!("`relative_to` and `pair` go together: the reference's parameters and the columns that pair rows")
            }
            _ if self.relative_to.is_some() && !matches!(self.kind, Kind::Lines | Kind::Scatter) => {
                bail!("`relative_to` draws a `lines` or `scatter` figure; leave it out of a `{:?}` one", self.kind)
            }
            _ => Ok(()),
        }
    }

    /// The name of `row`'s line: the values of the spec's series columns, in words.
    fn series_name(&self, row: &Row) -> String {
        self.series.split(',').map(|c| legend_part(c.trim(), &row.text(c.trim()))).collect::<Vec<_>>().join(", ")
    }

    /// The points to draw over `rows`, with `published` (the claim's points, if any) beside them.
    pub fn plot(&self, rows: &[Row], published: &[Published], paper: &str) -> Result<Plot> {
        self.validate()?;
        let only = self.only.clone().map(Select::Params);
        let rows: Vec<&Row> = rows.iter().filter(|r| only.as_ref().is_none_or(|s| s.matches(r))).collect();
        if rows.is_empty() {
            bail!("figure '{}': no row matches `only`; check its parameter values", self.title());
        }
        let relative;
        let rows = match &self.relative_to {
            Some(t) => {
                relative = self.relative(&rows, &Select::Params(t.clone()));
                if relative.is_empty() {
                    bail!("figure '{}': no row has a `relative_to` row with its `pair` values", self.title());
                }
                relative.iter().collect()
            }
            None => rows,
        };
        match (self.kind, self.array()) {
            (Kind::Stacked, _) => self.stacked(&rows),
            (_, Some(array)) => self.along(array, &rows),
            (_, None) => self.across(&rows, published, paper),
        }
    }

    /// Each row but the reference rows, its y (and x, where x is a metric) divided by its reference row's;
    /// a row whose reference lacks one of them, or has it at zero, is left out.
    fn relative(&self, rows: &[&Row], reference: &Select) -> Vec<Row> {
        rows.iter()
            .filter(|r| !reference.matches(r))
            .filter_map(|r| {
                let base = reference.partner(rows.iter().copied(), r, &self.pair)?;
                let mut out = (*r).clone();
                for k in [self.x_key(), self.y_key()] {
                    // A metric without a ratio (no reference value, or zero) leaves the row out.
                    if let Some(v) = r.metric(k) {
                        let b = base.metric(k).filter(|b| *b != 0.0)?;
                        out.metrics.insert(k.to_string(), (v / b).into());
                    }
                }
                Some(out)
            })
            .collect()
    }

    /// The registry entry of `key` as this figure draws it: over the reference's, a plain ratio.
    fn drawn(&self, key: &str, rows: &[&Row]) -> Resolved {
        let col = metrics::lookup(key);
        match &self.relative_to {
            Some(t) if rows.iter().any(|r| r.metrics.contains_key(key)) => {
                let of: Vec<String> = t.values().map(|v| v.as_str().map_or(v.to_string(), str::to_string)).collect();
                let of = of.join(", ");
                Resolved {
                    name: format!("{} / {of}", col.name),
                    short: format!("{} / {of}", col.short),
                    unit: Unit::Number,
                    log: col.log,
                }
            }
            _ => col,
        }
    }

    /// One line per row: the elements of its array metric.
    fn along(&self, array: &str, rows: &[&Row]) -> Result<Plot> {
        let (xk, yk) = (self.x_key(), self.y_key());
        let raw: Vec<(String, Vec<(f64, f64)>)> = rows
            .iter()
            .map(|r| {
                let field = |i: usize, f: &str| r.metric(&format!("{array}.{i}.{f}"));
                let pts: Vec<(f64, f64)> = (0..).map_while(|i| field(i, xk).zip(field(i, yk))).collect();
                (self.series_name(r), pts)
            })
            .filter(|(_, pts)| !pts.is_empty())
            .collect();
        if raw.is_empty() {
            bail!("figure '{}': no row reports `{array}` with fields `{xk}` and `{yk}`", self.title());
        }
        let values = |f: fn(&(f64, f64)) -> f64| raw.iter().flat_map(|(_, p)| p.iter().map(f)).collect::<Vec<_>>();
        let (xc, yc) = (self.column(xk), self.column(yk));
        let x = Axis::numeric(&xc, xc.unit, &values(|p| p.0), self.log_x, false);
        let y = Axis::numeric(&yc, yc.unit, &values(|p| p.1), self.log_y, true);
        let series = raw.into_iter().map(|(name, pts)| own(name, pts.iter().map(|p| (x.at(p.0), y.at(p.1))))).collect();
        Ok(Plot { title: self.title(), x, y, series, mark: Mark::Lines, rules: vec![] })
    }

    /// One bar per category, stacking the `stack` metrics (means over the category's rows).
    fn stacked(&self, rows: &[&Row]) -> Result<Plot> {
        let xk = self.x_key();
        let cats = first_appearance(rows.iter().map(|r| r.text(xk)));
        let mean = |cat: &str, m: &str| {
            let v: Vec<f64> = rows.iter().filter(|r| r.text(xk) == cat).filter_map(|r| r.metric(m)).collect();
            (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
        };
        let parts: Vec<Vec<f64>> =
            self.stack.iter().map(|m| cats.iter().map(|c| mean(c, m).unwrap_or(0.0)).collect()).collect();
        if self.stack.iter().all(|m| cats.iter().all(|c| mean(c, m).is_none())) {
            bail!(
                "figure '{}': no row has the metrics of `stack`; check the column names in results.csv",
                self.title()
            );
        }
        let totals: Vec<f64> = (0..cats.len()).map(|i| parts.iter().map(|p| p[i]).sum()).collect();
        let yc = metrics::lookup(self.y_key());
        let y = Axis::numeric(&yc, yc.unit, &totals, Some(false), true);
        let x = Axis::categories(&metrics::lookup(xk), cats);
        let series = self
            .stack
            .iter()
            .zip(parts)
            .map(|(m, p)| own(metrics::lookup(m).short, p.into_iter().enumerate().map(|(i, v)| (i as f64, y.at(v)))))
            .collect();
        Ok(Plot { title: self.title(), x, y, series, mark: Mark::Bars, rules: vec![] })
    }

    /// One point per row, lines by series, and the paper's points for `y`.
    fn across(&self, rows: &[&Row], published: &[Published], paper: &str) -> Result<Plot> {
        let (xk, yk) = (self.x_key(), self.y_key());
        let published: Vec<&Published> = published.iter().filter(|p| p.metric == yk).collect();
        let texts: Vec<String> = rows.iter().map(|r| r.text(xk)).chain(published.iter().map(|p| p.x_text())).collect();
        let xc = self.drawn(xk, rows);
        let x_unit =
            if xc.unit == Unit::Rate { texts.first().map_or(Unit::Mpps, |t| Unit::of_rate(t)) } else { xc.unit };
        let numeric = texts.iter().all(|t| metrics::parse_value(xc.unit, t).is_some());
        let cats = first_appearance(texts.iter().cloned());
        let x_of = |t: &str| {
            if numeric { metrics::parse_value(xc.unit, t) } else { cats.iter().position(|c| c == t).map(|i| i as f64) }
        };
        let mut raw: Vec<Series> = vec![];
        let add = |raw: &mut Vec<Series>, name: String, key: String, pt: (f64, f64), paper: bool| match raw
            .iter_mut()
            .find(|s| s.name == name && s.paper == paper)
        {
            Some(s) => s.pts.push(pt),
            None => raw.push(Series { name, key, pts: vec![pt], paper }),
        };
        for r in rows {
            if let (Some(x), Some(y)) = (x_of(&r.text(xk)), r.metric(yk)) {
                let name = self.series_name(r);
                add(&mut raw, name.clone(), name, (x, y), false);
            }
        }
        if raw.is_empty() {
            bail!("figure '{}': no row has a numeric `{yk}`; check the column names in results.csv", self.title());
        }
        // A figure drawing only some rows (`only`) draws the paper's points of the series it draws.
        let drawn: Vec<String> = raw.iter().map(|s| s.key.clone()).collect();
        let shown = |p: &&&Published| self.only.is_none() || p.series.as_ref().is_none_or(|k| drawn.contains(k));
        for p in published.iter().filter(shown) {
            if let Some(x) = x_of(&p.x_text()) {
                let key = p.series.clone().unwrap_or_default();
                let sections = published_sections(&published, &key);
                let name =
                    if key.is_empty() { format!("{paper} {sections}") } else { format!("{key}: {paper} {sections}") };
                add(&mut raw, name, key, (x, p.value), true);
            }
        }
        let values = |f: fn(&(f64, f64)) -> f64| raw.iter().flat_map(|s| s.pts.iter().map(f)).collect::<Vec<_>>();
        let x = if numeric {
            let col = Resolved { unit: x_unit, ..xc.clone() };
            let xs: Vec<f64> = values(|p| p.0);
            Axis::numeric(&col, x_unit, &xs, self.log_x, false)
        } else if xk == "app_params" {
            Axis::categories(&xc, without_shared_params(&cats))
        } else {
            Axis::categories(&xc, cats)
        };
        let yc = self.drawn(yk, rows);
        let y = Axis::numeric(&yc, yc.unit, &values(|p| p.1), self.log_y, true);
        // Over categories, each series sits a little beside the others, so equal values stay visible; the
        // paper's points sit where the rxlab series they belong to does.
        let slots = first_appearance(raw.iter().map(|s| s.key.clone()));
        let dodge = |key: &str| match (x.scale, slots.len()) {
            (Scale::Categories, n) if n > 1 => {
                let k = slots.iter().position(|s| s == key).unwrap_or(0) as f64;
                (k - (n - 1) as f64 / 2.0) * (0.4 / (n - 1) as f64).min(0.12)
            }
            _ => 0.0,
        };
        let series = raw
            .into_iter()
            .map(|mut s| {
                s.pts.sort_by(|a, b| a.0.total_cmp(&b.0));
                let off = dodge(&s.key);
                let at = |p: &(f64, f64)| (if x.scale == Scale::Categories { p.0 + off } else { x.at(p.0) }, y.at(p.1));
                Series { pts: s.pts.iter().map(at).collect(), ..s }
            })
            .collect();
        let mark = match (self.kind, x.scale) {
            (Kind::Scatter, _) | (_, Scale::Categories) => Mark::Points,
            _ => Mark::Auto,
        };
        Ok(Plot { title: self.title(), x, y, series, mark, rules: vec![] })
    }
}

/// App parameter lists (`buffer=40MiB,reads=16`) less the `key=value` parts every one of them holds, so
/// that a category names what varies (`reads=16`).
fn without_shared_params(cats: &[String]) -> Vec<String> {
    let parts = |c: &str| c.split(',').map(str::to_string).collect::<Vec<_>>();
    let shared: Vec<String> = cats
        .first()
        .map(|c| parts(c))
        .unwrap_or_default()
        .into_iter()
        .filter(|p| cats.iter().all(|c| parts(c).contains(p)))
        .collect();
    cats.iter()
        .map(|c| {
            let kept: Vec<String> = parts(c).into_iter().filter(|p| !shared.contains(p)).collect();
            if kept.is_empty() { c.clone() } else { kept.join(",") }
        })
        .collect()
}

/// The sections of the published points of `key`'s series, as "§2.3, §5".
fn published_sections(published: &[&Published], key: &str) -> String {
    let mut s: Vec<&str> = vec![];
    for p in published.iter().filter(|p| p.series.as_deref().unwrap_or_default() == key) {
        if !s.contains(&p.section.as_str()) {
            s.push(&p.section);
        }
    }
    s.join(", ")
}

/// An rxlab series.
fn own(name: String, pts: impl Iterator<Item = (f64, f64)>) -> Series {
    Series { key: name.clone(), name, pts: pts.collect(), paper: false }
}

/// Distinct values in order of first appearance.
fn first_appearance(values: impl Iterator<Item = String>) -> Vec<String> {
    let mut out: Vec<String> = vec![];
    for v in values {
        if !out.contains(&v) {
            out.push(v);
        }
    }
    out
}
