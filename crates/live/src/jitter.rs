//! A jitter probe, as Solarflare's `sysjitter` and the kernel's `osnoise` tracer measure host noise: one
//! thread pinned to each CPU spins reading the clock and records every gap between two reads longer than
//! a threshold. Each such gap is a time the CPU was taken from the thread (a timer tick, an interrupt, an
//! SMI, another thread, the hypervisor). Its histogram is what a machine profile's host noise is made of
//! (the simulator's `noise` module).

use crate::pin;
use serde::Serialize;
use std::time::{Duration, Instant};

/// Quantiles every summary gives: the shortest, the median, p90, p99, p99.9, p99.99 and the longest, as
/// sysjitter prints them.
pub const SHARES: [f64; 7] = [0.0, 0.5, 0.9, 0.99, 0.999, 0.9999, 1.0];

/// What one CPU's thread saw.
#[derive(Debug, Clone, Serialize)]
pub struct CpuJitter {
    /// The CPU it ran on.
    pub cpu: usize,
    /// Whether it was pinned there.
    pub pinned: bool,
    /// How long it spun, seconds.
    pub runtime_s: f64,
    /// Gaps above the threshold.
    pub interruptions: u64,
    /// Their rate, per second.
    pub rate_hz: f64,
    /// Share of the run they took.
    pub share: f64,
    /// Gap lengths at [`SHARES`], ns.
    pub quantiles_ns: Vec<u64>,
    /// Histogram: (lower bound ns, count) of power-of-two bins from the threshold up.
    pub histogram: Vec<(u64, u64)>,
}

/// A probe run on every CPU this process may use.
#[derive(Debug, Clone, Serialize)]
pub struct JitterReport {
    /// Gaps shorter than this were not counted, ns.
    pub threshold_ns: u64,
    /// One entry per CPU.
    pub cpus: Vec<CpuJitter>,
}

/// Spin on every allowed CPU for `duration`, counting gaps longer than `threshold`.
pub fn probe(duration: Duration, threshold: Duration) -> JitterReport {
    let cpus = pin::allowed_cpus();
    let threshold_ns = threshold.as_nanos() as u64;
    let cpus = std::thread::scope(|s| {
        let handles: Vec<_> = cpus.iter().map(|&cpu| s.spawn(move || spin(cpu, duration, threshold_ns))).collect();
        handles.into_iter().map(|h| h.join().expect("a jitter thread panicked")).collect()
    });
    JitterReport { threshold_ns, cpus }
}

/// One pinned thread's spin.
fn spin(cpu: core_affinity::CoreId, duration: Duration, threshold_ns: u64) -> CpuJitter {
    let pinned = pin::pin(Some(cpu));
    let start = Instant::now();
    let mut last = start;
    let mut gaps = Vec::new();
    loop {
        let now = Instant::now();
        let gap = now.duration_since(last).as_nanos() as u64;
        if gap > threshold_ns {
            gaps.push(gap);
        }
        last = now;
        if now.duration_since(start) >= duration {
            break;
        }
    }
    summarize(cpu.id, pinned, last.duration_since(start).as_secs_f64(), threshold_ns, gaps)
}

/// The summary of one CPU's gaps.
fn summarize(cpu: usize, pinned: bool, runtime_s: f64, threshold_ns: u64, mut gaps: Vec<u64>) -> CpuJitter {
    gaps.sort_unstable();
    let n = gaps.len();
    let quantiles_ns =
        SHARES.iter().map(|&p| if n == 0 { 0 } else { gaps[((p * n as f64) as usize).min(n - 1)] }).collect();
    let mut histogram: Vec<(u64, u64)> = Vec::new();
    for &g in &gaps {
        let lo = threshold_ns.max(1) << (g / threshold_ns.max(1)).max(1).ilog2();
        match histogram.last_mut() {
            Some((l, c)) if *l == lo => *c += 1,
            _ => histogram.push((lo, 1)),
        }
    }
    let total: u64 = gaps.iter().sum();
    CpuJitter {
        cpu,
        pinned,
        runtime_s,
        interruptions: n as u64,
        rate_hz: n as f64 / runtime_s.max(f64::MIN_POSITIVE),
        share: total as f64 * 1e-9 / runtime_s.max(f64::MIN_POSITIVE),
        quantiles_ns,
        histogram,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summaries_give_sysjitters_quantiles_and_power_of_two_bins() {
        let gaps = vec![300, 250, 900, 260, 5000, 270, 280, 290, 310, 320];
        let s = summarize(0, true, 2.0, 200, gaps);
        assert_eq!(s.interruptions, 10);
        assert_eq!(s.rate_hz, 5.0);
        assert_eq!(s.quantiles_ns.first(), Some(&250));
        assert_eq!(s.quantiles_ns.last(), Some(&5000));
        assert_eq!(s.histogram, vec![(200, 8), (800, 1), (3200, 1)]);
        assert!((s.share - 8180e-9 / 2.0).abs() < 1e-12);
    }

    #[test]
    fn a_short_probe_reports_every_cpu() {
        let r = probe(Duration::from_millis(20), Duration::from_micros(1));
        assert_eq!(r.cpus.len(), pin::allowed_cpus().len());
        assert!(r.cpus.iter().all(|c| c.runtime_s >= 0.02 && c.quantiles_ns.len() == SHARES.len()));
    }
}
