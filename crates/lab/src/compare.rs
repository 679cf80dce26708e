//! The comparison table: one line per point with the headline metrics, and the parameters that differ
//! between points. Printed by `rxlab run` (several points) and `rxlab sweep`, and shown in the report.

use crate::results::Row;
use std::fmt::Write;

/// A metric column: header, and how to read it from a row.
pub struct Column {
    /// Header text.
    pub header: &'static str,
    /// The value, formatted (`-` when the run did not report it).
    pub value: fn(&Row) -> String,
}

fn fmt(v: Option<f64>, scale: f64, decimals: usize) -> String {
    v.map_or_else(|| "-".into(), |x| format!("{:.*}", decimals, x * scale))
}

/// The headline metrics (the papers' figures): throughput, latency, cycles, caches, memory, PCIe, drops.
pub const COLUMNS: &[Column] = &[
    Column { header: "Gbps", value: |r| fmt(r.metric("throughput.gbps_wire"), 1.0, 1) },
    Column { header: "Mpps", value: |r| fmt(r.metric("throughput.mpps"), 1.0, 2) },
    Column { header: "p50 us", value: |r| fmt(r.metric("latency.p50"), 1e-3, 1) },
    Column { header: "p99 us", value: |r| fmt(r.metric("latency.p99"), 1e-3, 1) },
    Column { header: "cyc/pkt", value: |r| fmt(r.metric("cycles.total"), 1.0, 0) },
    Column { header: "sync %", value: |r| fmt(r.metric("cycles.sync_share"), 100.0, 1) },
    Column { header: "NIC LLC hit %", value: |r| fmt(r.metric("hit_rates.nic_write"), 100.0, 1) },
    Column { header: "mem GB/s", value: |r| fmt(r.metric("derived.memory_gbs"), 1.0, 1) },
    Column { header: "PCIe %", value: |r| fmt(r.metric("pcie.to_host.utilisation"), 100.0, 1) },
    Column { header: "drops", value: |r| fmt(r.metric("derived.drops"), 1.0, 0) },
];

/// The no-drop rate's columns, shown when some row ran an NDR search (`--ndr`).
pub const NDR_COLUMNS: &[Column] = &[
    Column { header: "NDR Gbps", value: |r| fmt(r.metric("ndr.gbps"), 1.0, 2) },
    Column { header: "NDR Mpps", value: |r| fmt(r.metric("ndr.mpps"), 1.0, 2) },
];

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
    header.extend(columns.iter().map(|c| c.header.to_string()));
    let body: Vec<Vec<String>> = rows
        .iter()
        .map(|r| {
            let mut line = vec![r.label()];
            line.extend(params.iter().map(|p| r.text(p)));
            line.extend(columns.iter().map(|c| (c.value)(r)));
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
