//! Steal time: CPU time the hypervisor gave to something else while this VM's CPUs had work to run,
//! read from the `steal` column of `/proc/stat`'s per-CPU lines (proc(5)).
//!
//! A busy-polling thread cannot tell a millisecond the host took from it from a slow packet: the packets
//! that arrive meanwhile queue up, and show as latency tails and, once a ring fills, as drops. A live run
//! measures the steal time of its CPUs so that its report can say so.

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
    fn this_host_has_a_reading_on_linux() {
        if cfg!(target_os = "linux") {
            assert!(per_cpu().is_some_and(|s| !s.is_empty()));
        }
    }
}
