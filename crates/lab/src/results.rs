//! Results of a sweep on disk: `points.jsonl` (one finished point a line, appended as points finish, the
//! record a rerun resumes from), and `results.csv` / `results.json` (one row per point in point order,
//! every parameter and every output metric flattened to dotted column names), with `columns.csv` saying
//! what each metric column is (its name and unit, from [`crate::report::metrics`]).

use crate::cancel;
use crate::experiment::Point;
use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::io::Write;
use std::path::{Path, PathBuf};
use traffic::atomic::{self, AtomicFile};

/// The experiment's text, saved next to its results.
pub const EXPERIMENT_FILE: &str = "experiment.toml";
/// Finished points, one JSON object a line.
pub const POINTS_FILE: &str = "points.jsonl";

/// One finished point.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Row {
    /// Position in the experiment's expansion.
    pub index: usize,
    /// Stable point id.
    pub id: String,
    /// Resolved parameters, flattened.
    pub params: BTreeMap<String, Value>,
    /// Output metrics, flattened (empty when the run failed).
    pub metrics: BTreeMap<String, Value>,
    /// Why the run failed, if it did (the point is retried on the next run).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The rxlab build that ran it ([`crate::build::id`]).
    #[serde(default)]
    pub build: String,
}

impl Row {
    /// A row for `point` from its report (or its error).
    pub fn new(point: &Point, report: Result<&Value, String>) -> Row {
        let params = flatten(&serde_json::to_value(&point.params).expect("Params serialise"));
        let (metrics, error) = match report {
            Ok(v) => (with_derived(flatten(v)), None),
            Err(e) => (BTreeMap::new(), Some(e)),
        };
        Row { index: point.index, id: point.id.clone(), params, metrics, error, build: crate::build::id().into() }
    }

    /// The row of `point` from `same`, a finished row of another point with its id (the same run under
    /// another label): `point`'s own index and parameters, `same`'s results.
    pub fn taken(point: &Point, same: &Row) -> Row {
        debug_assert_eq!(point.id, same.id);
        let params = flatten(&serde_json::to_value(&point.params).expect("Params serialise"));
        Row {
            index: point.index,
            id: point.id.clone(),
            params,
            metrics: same.metrics.clone(),
            error: None,
            build: same.build.clone(),
        }
    }

    /// A metric as a number (`None` when missing or not numeric).
    pub fn metric(&self, key: &str) -> Option<f64> {
        self.metrics.get(key).and_then(Value::as_f64)
    }

    /// A parameter or metric as display text (`""` when missing).
    pub fn text(&self, key: &str) -> String {
        match self.params.get(key).or_else(|| self.metrics.get(key)) {
            Some(Value::String(s)) => s.clone(),
            Some(Value::Null) | None => String::new(),
            Some(v) => v.to_string(),
        }
    }

    /// The point's label.
    pub fn label(&self) -> String {
        self.text("label")
    }
}

/// Add the sums the papers plot but the engines report in parts: `derived.memory_gbs` (DRAM read +
/// write), `derived.drops` (all drop reasons) and `derived.cycles_processing` (cycles per packet outside
/// synchronisation, shRing Fig. 2a's "orig"), and `derived.rx_max_over_min`, the most packets a core
/// received over the fewest (rxBisect Fig. 4's per-core RSS imbalance: the simulator's
/// `received_per_core_mpps`, the live engine's `per_core.N.rx`; absent when a core received none).
fn with_derived(mut m: BTreeMap<String, Value>) -> BTreeMap<String, Value> {
    let num = |k: &str| m.get(k).and_then(Value::as_f64);
    let memory = num("memory.read_gbs").zip(num("memory.write_gbs")).map(|(r, w)| r + w);
    let processing = num("cycles.total").zip(num("cycles.phases.sync")).map(|(t, s)| t - s);
    if let Some(x) = processing {
        m.insert("derived.cycles_processing".into(), x.into());
    }
    let drops: f64 = m.iter().filter(|(k, _)| k.starts_with("drops.")).filter_map(|(_, v)| v.as_f64()).sum();
    if let Some(x) = memory {
        m.insert("derived.memory_gbs".into(), x.into());
    }
    m.insert("derived.drops".into(), (drops + 0.0).into());
    let rx: Vec<f64> = m
        .iter()
        .filter(|(k, _)| {
            k.strip_prefix("per_core.").and_then(|k| k.split_once('.')).is_some_and(|(_, f)| f == "rx")
                || k.strip_prefix("received_per_core_mpps.").is_some_and(|i| i.parse::<usize>().is_ok())
        })
        .filter_map(|(_, v)| v.as_f64())
        .collect();
    let (lo, hi) = rx.iter().fold((f64::INFINITY, 0.0f64), |(lo, hi), &x| (lo.min(x), hi.max(x)));
    if rx.len() > 1 && lo > 0.0 {
        m.insert("derived.rx_max_over_min".into(), (hi / lo).into());
    }
    m
}

/// `{"a": {"b": 1}, "c": [2]}` → `{"a.b": 1, "c.0": 2}`; nulls are dropped.
pub fn flatten(v: &Value) -> BTreeMap<String, Value> {
    fn go(prefix: &str, v: &Value, out: &mut BTreeMap<String, Value>) {
        let key = |k: &str| if prefix.is_empty() { k.to_string() } else { format!("{prefix}.{k}") };
        match v {
            Value::Object(m) => m.iter().for_each(|(k, v)| go(&key(k), v, out)),
            Value::Array(a) => a.iter().enumerate().for_each(|(i, v)| go(&key(&i.to_string()), v, out)),
            Value::Null => {}
            v => {
                out.insert(prefix.to_string(), v.clone());
            }
        }
    }
    let mut out = BTreeMap::new();
    go("", v, &mut out);
    out
}

/// The rows recorded in `dir/points.jsonl` (none if the file does not exist).
pub fn load_points(dir: &Path) -> Result<Vec<Row>> {
    let path = dir.join(POINTS_FILE);
    let Ok(text) = std::fs::read_to_string(&path) else { return Ok(vec![]) };
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, l)| {
            serde_json::from_str(l).with_context(|| {
                format!("{}:{}: not a result line; delete the line (its point will rerun)", path.display(), i + 1)
            })
        })
        .collect()
}

/// The successful rows of `rows`, the latest per id, in point order.
pub fn finished(rows: Vec<Row>) -> Vec<Row> {
    let mut by_id: BTreeMap<String, Row> = BTreeMap::new();
    for r in rows.into_iter().filter(|r| r.error.is_none()) {
        by_id.insert(r.id.clone(), r);
    }
    let mut out: Vec<Row> = by_id.into_values().collect();
    out.sort_by_key(|r| r.index);
    out
}

/// Appends rows to `points.jsonl`, one whole line per write.
pub struct PointLog(std::sync::Mutex<std::fs::File>);

impl PointLog {
    /// Open `dir/points.jsonl` for appending.
    pub fn open(dir: &Path) -> Result<PointLog> {
        let path = dir.join(POINTS_FILE);
        let f = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .with_context(|| format!("cannot write {}: check the directory's permissions", path.display()))?;
        Ok(PointLog(std::sync::Mutex::new(f)))
    }

    /// Record one row, whole even if a signal comes ([`cancel::critical`]).
    pub fn append(&self, row: &Row) -> Result<()> {
        let mut line = serde_json::to_string(row)?;
        line.push('\n');
        let mut f = self.0.lock().expect("no writer panics while holding the log");
        cancel::critical(|| f.write_all(line.as_bytes())).context("cannot append to points.jsonl")
    }
}

/// What an interrupted sweep keeps in results directories `dirs`: their finished points, as a phrase.
pub fn kept_points(dirs: &[PathBuf], place: &Path) -> String {
    let n: usize = dirs.iter().map(|d| finished(load_points(d).unwrap_or_default()).len()).sum();
    format!("{n} finished points in {} (the same command resumes from them)", place.display())
}

/// Write `results.csv` and `results.json` for `rows` into `dir`, each whole or not at all.
pub fn write_tables(dir: &Path, rows: &[Row]) -> Result<()> {
    let json = dir.join("results.json");
    atomic::write(&json, serde_json::to_string_pretty(rows)? + "\n")
        .with_context(|| format!("cannot write {}", json.display()))?;
    let params: BTreeSet<&String> = rows.iter().flat_map(|r| r.params.keys()).collect();
    let metrics: BTreeSet<&String> = rows.iter().flat_map(|r| r.metrics.keys()).collect();
    let csv_path = dir.join("results.csv");
    let cannot = || format!("cannot write {}", csv_path.display());
    let mut w = csv::Writer::from_writer(AtomicFile::create(&csv_path).with_context(cannot)?);
    let mut header = vec!["index".to_string(), "id".to_string()];
    header.extend(params.iter().map(|k| k.to_string()));
    header.extend(metrics.iter().map(|k| k.to_string()));
    w.write_record(&header).with_context(cannot)?;
    for r in rows {
        let mut rec = vec![r.index.to_string(), r.id.clone()];
        rec.extend(params.iter().map(|k| r.text(k)));
        rec.extend(metrics.iter().map(|k| r.metrics.get(*k).map_or(String::new(), cell)));
        w.write_record(&rec).with_context(cannot)?;
    }
    w.into_inner().map_err(|e| anyhow::anyhow!("{}", e.error())).and_then(|f| Ok(f.commit()?)).with_context(cannot)?;
    write_columns(dir, &metrics)
}

/// `columns.csv`: what each metric column of results.csv is (name and unit, from the metric registry).
fn write_columns(dir: &Path, metrics: &BTreeSet<&String>) -> Result<()> {
    let mut w = csv::Writer::from_writer(Vec::new());
    w.write_record(["column", "name", "unit"])?;
    for k in metrics {
        let m = crate::report::metrics::lookup(k);
        w.write_record([k.as_str(), &m.name, m.unit.stored()])?;
    }
    let bytes = w.into_inner().map_err(|e| anyhow::anyhow!("{}", e.error()))?;
    let path = dir.join("columns.csv");
    atomic::write(&path, bytes).with_context(|| format!("cannot write {}", path.display()))
}

fn cell(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        v => v.to_string(),
    }
}

/// Read `results.json` from a results directory.
pub fn load_results(dir: &Path) -> Result<Vec<Row>> {
    let path = dir.join("results.json");
    let text = std::fs::read_to_string(&path)
        .with_context(|| format!("cannot read {}: run `rxlab sweep` or `rxlab merge` first", path.display()))?;
    let rows: Vec<Row> =
        serde_json::from_str(&text).with_context(|| format!("{} is not an rxlab results file", path.display()))?;
    // Results written before a derived column existed get it too.
    Ok(rows.into_iter().map(|r| Row { metrics: with_derived(r.metrics), ..r }).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flatten_nests_with_dots() {
        let f = flatten(&serde_json::json!({"a": {"b": 1}, "c": [2, null], "d": "x"}));
        assert_eq!(f.keys().collect::<Vec<_>>(), ["a.b", "c.0", "d"]);
    }

    proptest::proptest! {
        /// A row read back from `points.jsonl` is the row written, to the last bit of every number: what a
        /// resumed sweep or `rxlab merge` writes is what one sweep writes.
        #[test]
        fn rows_read_back_from_the_point_log_are_the_rows_written(xs in proptest::collection::vec(proptest::num::f64::NORMAL | proptest::num::f64::SUBNORMAL | proptest::num::f64::ZERO, 1..16)) {
            let metrics = xs.iter().enumerate().map(|(i, &x)| (format!("m.{i}"), Value::from(x))).collect();
            let row = Row { index: 3, id: "p".into(), params: BTreeMap::new(), metrics, error: None, build: "b".into() };
            let back: Row = serde_json::from_str(&serde_json::to_string(&row).unwrap()).unwrap();
            let bits = |r: &Row| r.metrics.values().map(|v| v.as_f64().unwrap().to_bits()).collect::<Vec<_>>();
            proptest::prop_assert_eq!(bits(&back), bits(&row));
        }
    }
}
