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

    /// The value, formatted (`-` when the run did not report it).
    pub fn value(&self, r: &Row) -> String {
        metrics::lookup(self.key).cell(r.metric(self.key), self.decimals)
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

/// The metric columns of a table of `rows`: the headline ones, then the NDR's if some row has them.
pub fn columns(rows: &[Row]) -> Vec<&'static Column> {
    let ndr: &[Column] = if rows.iter().any(|r| r.metrics.contains_key("ndr.trial_count")) { NDR_COLUMNS } else { &[] };
    COLUMNS.iter().chain(ndr).collect()
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
