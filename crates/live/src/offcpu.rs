//! When a run's threads were off their CPUs, and what that did to its numbers.
//!
//! A busy-polling thread cannot tell a millisecond the host took from it from a slow packet: the packets
//! that arrive meanwhile queue up, and show as latency tails and, once a ring fills, as drops. Three
//! measures say when it happened: the paced source's lag behind its schedule (the NIC thread), the
//! workers' stalls while polling an empty ring, and the hypervisor's steal time on the run's CPUs, read
//! from the `steal` column of `/proc/stat`'s per-CPU lines (proc(5)). [`warnings`] turns them into the
//! report's warnings.

use crate::worker::{Stalls, WorkerStats};

/// A thread off its CPU this long is worth a warning: a paced source this far behind its schedule
/// offers its backlog as one burst, and a worker stalled this long lets a ring of a thousand 64 B
/// packets at 10 Mpps fill. Normal iterations of either loop take well under this.
pub const WARN_NS: u64 = 100_000;

/// `/proc/stat` counts in units of USER_HZ, which Linux fixes at 100 per second for user space.
const TICK_MS: f64 = 10.0;

/// Steal time so far of each CPU, in ticks, indexed by CPU number; `None` where `/proc/stat` cannot be
/// read (not Linux).
pub fn per_cpu() -> Option<Vec<u64>> {
    parse(&std::fs::read_to_string("/proc/stat").ok()?)
}

/// Milliseconds stolen from the CPUs `cpus` between two readings of [`per_cpu`].
pub fn stolen_ms(before: &[u64], after: &[u64], cpus: impl IntoIterator<Item = usize>) -> f64 {
    let ticks: u64 =
        cpus.into_iter().map(|c| after.get(c).zip(before.get(c)).map_or(0, |(a, b)| a.saturating_sub(*b))).sum();
    ticks as f64 * TICK_MS
}

/// The warnings for a run: the NIC thread's furthest lag behind a paced rate of `pps` (ns), the
/// workers' stalls (reported only for pinned workers: unpinned ones yield their CPU by design), and the
/// steal time to put next to them.
pub fn warnings(
    lag_ns: u64,
    pps: Option<f64>,
    workers: &[WorkerStats],
    pinned: bool,
    steal_ms: Option<f64>,
) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(pps) = pps.filter(|_| lag_ns > WARN_NS) {
        out.push(format!(
            "the NIC thread fell up to {:.0} us behind its schedule and then offered the backlog at full speed: \
             the design saw bursts, not an even {:.3} Mpps",
            lag_ns as f64 / 1e3,
            pps / 1e6
        ));
    }
    let Stalls { count, total_ns, max_ns } = Stalls::sum(workers.iter().map(|w| w.stalls));
    if pinned && max_ns > WARN_NS {
        out.push(format!(
            "workers were off their CPUs {count} times while polling, {:.2} ms in all (longest {:.0} us; the \
             hypervisor's steal time on these CPUs: {}): packets queue meanwhile, so latency tails and drops may \
             come from the machine, not the design",
            total_ns as f64 / 1e6,
            max_ns as f64 / 1e3,
            steal_ms.map_or("unknown".into(), |ms| format!("about {ms:.0} ms, in 10 ms ticks"))
        ));
    }
    out
}

/// The steal column of each `cpuN` line of a `/proc/stat` text.
fn parse(stat: &str) -> Option<Vec<u64>> {
    let mut steal = Vec::new();
    for line in stat.lines() {
        let mut fields = line.split_ascii_whitespace();
        let Some(cpu) = fields.next().and_then(|f| f.strip_prefix("cpu")).and_then(|n| n.parse::<usize>().ok()) else {
            continue;
        };
        // user nice system idle iowait irq softirq steal
        let value = fields.nth(7).and_then(|v| v.parse::<u64>().ok())?;
        if steal.len() <= cpu {
            steal.resize(cpu + 1, 0);
        }
        steal[cpu] = value;
    }
    (!steal.is_empty()).then_some(steal)
}

#[cfg(test)]
mod tests {
    use super::*;

    const STAT: &str = "cpu  1479097 47 166163 997056 20350 0 702 1780 0 0\n\
                        cpu0 724471 24 80685 520825 5505 0 83 944 0 0\n\
                        cpu1 754626 22 85478 476230 14844 0 618 835 0 0\n\
                        intr 123 4 5\nctxt 99\n";

    #[test]
    fn reads_the_steal_column_of_each_cpu() {
        assert_eq!(parse(STAT), Some(vec![944, 835]));
        assert_eq!(parse("intr 1\n"), None);
        assert_eq!(parse("cpu0 1 2 3\n"), None, "a line without a steal column is not guessed at");
    }

    #[test]
    fn counts_only_the_cpus_asked_for() {
        let after = parse(&STAT.replace(" 944 ", " 947 ").replace(" 835 ", " 900 ")).unwrap();
        let before = parse(STAT).unwrap();
        assert_eq!(stolen_ms(&before, &after, [0]), 30.0);
        assert_eq!(stolen_ms(&before, &after, [0, 1, 7]), 680.0);
    }

    #[test]
    fn warnings_past_the_threshold_only() {
        let stalled = |longest: u64| WorkerStats {
            stalls: Stalls { count: 3, total_ns: 2 * longest, max_ns: longest },
            ..WorkerStats::default()
        };
        assert!(warnings(WARN_NS, Some(1e6), &[stalled(WARN_NS)], true, Some(0.0)).is_empty());
        let w = warnings(WARN_NS + 1, Some(2e6), &[stalled(WARN_NS + 1)], true, None);
        assert_eq!(w.len(), 2, "{w:?}");
        assert!(w[0].contains("behind its schedule") && w[0].contains("2.000 Mpps"), "{}", w[0]);
        assert!(w[1].contains("3 times") && w[1].contains("unknown"), "{}", w[1]);
        assert!(warnings(u64::MAX, None, &[stalled(u64::MAX / 4)], false, None).is_empty(), "unpaced, unpinned");
    }

    #[test]
    fn this_host_has_a_reading_on_linux() {
        if cfg!(target_os = "linux") {
            assert!(per_cpu().is_some_and(|s| !s.is_empty()));
        }
    }
}
