//! The comparison table: one line per point with the headline metrics, and the parameters that differ
//! between points. Printed by `rxlab run` (several points) and `rxlab sweep`, and shown in the report.

use crate::report::metrics;
use crate::results::Row;
use std::fmt::Write;

/// A metric column of the tables: its results.csv key and decimals; its header and scale come from the
/// metric registry.
pub struct Column {
    /// The metric column.
    pub key: &'static str,
    /// Decimals shown.
    pub decimals: usize,
}

impl Column {
    /// Header text ("p50 us").
    pub fn header(&self) -> String {
        metrics::lookup(self.key).header()
    }

    /// The value, formatted (`-` when the run did not report it, and for latency when no packet came
    /// back to be timed, as with an app that only receives).
    pub fn value(&self, r: &Row) -> String {
        let untimed = self.key.starts_with("latency.") && r.metric("latency.count") == Some(0.0);
        metrics::lookup(self.key).cell(if untimed { None } else { r.metric(self.key) }, self.decimals)
    }
}

const fn col(key: &'static str, decimals: usize) -> Column {
    Column { key, decimals }
}

/// The headline metrics (the papers' figures): throughput, latency, cycles, caches, memory, PCIe, drops.
pub const COLUMNS: &[Column] = &[
    col("throughput.gbps_wire", 1),
    col("throughput.mpps", 2),
    col("latency.p50", 1),
    col("latency.p99", 1),
    col("cycles.total", 0),
    col("cycles.sync_share", 1),
    col("hit_rates.nic_write", 1),
    col("derived.memory_gbs", 1),
    col("pcie.to_host.utilisation", 1),
    col("derived.drops", 0),
];

/// The no-drop rate's columns, shown when some row ran an NDR search (`--ndr`).
pub const NDR_COLUMNS: &[Column] = &[col("ndr.gbps", 2), col("ndr.mpps", 2)];

/// What the cores received, shown when some row sent nothing back (Ensō Table 1's receive-only app).
pub const RECEIVED_COLUMNS: &[Column] = &[col("received_mpps", 2)];

/// The metric columns of a table of `rows`: the headline ones, then the NDR's and what the cores
/// received if some row has them.
pub fn columns(rows: &[Row]) -> Vec<&'static Column> {
    let ndr = rows.iter().any(|r| r.metrics.contains_key("ndr.trial_count"));
    let sent_nothing = rows
        .iter()
        .any(|r| r.metric("throughput.mpps") == Some(0.0) && r.metric("received_mpps").is_some_and(|m| m > 0.0));
    let extra = [(ndr, NDR_COLUMNS), (sent_nothing, RECEIVED_COLUMNS)];
    COLUMNS.iter().chain(extra.iter().filter(|(shown, _)| *shown).flat_map(|(_, cols)| cols.iter())).collect()
}

/// Parameters whose value differs between rows (besides the label), in key order.
pub fn varying_params(rows: &[Row]) -> Vec<String> {
    let Some(first) = rows.first() else { return vec![] };
    first.params.keys().filter(|k| *k != "label" && rows.iter().any(|r| r.text(k) != first.text(k))).cloned().collect()
}

/// The table as aligned text.
pub fn table(rows: &[Row]) -> String {
    let params = varying_params(rows);
    let columns = columns(rows);
    let mut header: Vec<String> = vec!["point".into()];
    header.extend(params.iter().cloned());
    header.extend(columns.iter().map(|c| c.header()));
    let body: Vec<Vec<String>> = rows
        .iter()
        .map(|r| {
            let mut line = vec![r.label()];
            line.extend(params.iter().map(|p| r.text(p)));
            line.extend(columns.iter().map(|c| c.value(r)));
            line
        })
        .collect();
    let widths: Vec<usize> = (0..header.len())
        .map(|i| body.iter().map(|l| l[i].len()).chain([header[i].len()]).max().unwrap_or(0))
        .collect();
    let mut out = String::new();
    for line in std::iter::once(&header).chain(&body) {
        let cells: Vec<String> = line
            .iter()
            .zip(&widths)
            .enumerate()
            .map(|(i, (c, w))| if i == 0 { format!("{c:<w$}") } else { format!("{c:>w$}") })
            .collect();
        let _ = writeln!(out, "{}", cells.join("  ").trim_end());
    }
    out.trim_end().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;
    use std::collections::BTreeMap;

    fn row(label: &str, metrics: &[(&str, f64)]) -> Row {
        let metrics: BTreeMap<String, Value> = metrics.iter().map(|(k, v)| (k.to_string(), (*v).into())).collect();
        let params = BTreeMap::from([("label".to_string(), label.into())]);
        Row { index: 0, id: String::new(), params, metrics, error: None, build: String::new() }
    }

    /// A receive-only run shows what its cores received and no latency, where a forwarding run shows
    /// its latency.
    #[test]
    fn a_run_that_sends_nothing_back_shows_what_it_received_and_no_latency() {
        let fwd = row("fwd", &[("throughput.mpps", 10.0), ("latency.count", 5.0), ("latency.p50", 2000.0)]);
        let sink = row(
            "sink",
            &[("throughput.mpps", 0.0), ("received_mpps", 148.9), ("latency.count", 0.0), ("latency.p50", 0.0)],
        );
        assert!(columns(std::slice::from_ref(&fwd)).iter().all(|c| c.key != "received_mpps"));
        let cols = columns(&[fwd.clone(), sink.clone()]);
        let cell = |r: &Row, key: &str| cols.iter().find(|c| c.key == key).unwrap().value(r);
        assert_eq!(cell(&sink, "received_mpps"), "148.90");
        assert_eq!(cell(&sink, "latency.p50"), "-");
        assert_eq!(cell(&fwd, "latency.p50"), "2.0");
        assert!(table(&[fwd, sink]).contains("148.90"));
    }
}
