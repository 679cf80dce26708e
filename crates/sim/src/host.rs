//! Reading this host's cores, caches and frequency from /sys and /proc (the `this-machine` profile).

use std::fs;

/// What the host reports.
#[derive(Debug, Clone, PartialEq)]
pub struct Host {
    /// Online CPUs.
    pub cores: usize,
    /// Nominal frequency in GHz.
    pub freq_ghz: f64,
    /// L1 data cache (bytes, ways).
    pub l1d: (usize, usize),
    /// L2 (bytes, ways).
    pub l2: (usize, usize),
    /// Last-level cache (bytes, ways).
    pub llc: (usize, usize),
}

/// Parse a cache size as /sys writes it: `32K`, `1024K`, `32768K`, `8M`.
fn parse_size(s: &str) -> Option<usize> {
    let s = s.trim();
    let (num, mul) = match s.chars().last()? {
        'K' => (&s[..s.len() - 1], 1 << 10),
        'M' => (&s[..s.len() - 1], 1 << 20),
        'G' => (&s[..s.len() - 1], 1 << 30),
        _ => (s, 1),
    };
    num.parse::<usize>().ok().map(|n| n * mul)
}

/// Count the CPUs of a list such as `0-3,8,10-11`.
fn count_cpus(list: &str) -> Option<usize> {
    list.trim().split(',').filter(|p| !p.is_empty()).try_fold(0, |n, part| match part.split_once('-') {
        Some((a, b)) => Some(n + b.parse::<usize>().ok()? + 1 - a.parse::<usize>().ok()?),
        None => part.parse::<usize>().ok().map(|_| n + 1),
    })
}

/// The first `cpu MHz` line of /proc/cpuinfo, in GHz.
fn cpuinfo_ghz(cpuinfo: &str) -> Option<f64> {
    let line = cpuinfo.lines().find(|l| l.starts_with("cpu MHz"))?;
    line.split(':').nth(1)?.trim().parse::<f64>().ok().map(|mhz| mhz / 1000.0)
}

/// Read the host. Errors name the file that could not be read or parsed.
pub fn read() -> Result<Host, String> {
    let read = |path: &str| fs::read_to_string(path).map_err(|e| format!("cannot read {path}: {e}"));
    let cores =
        count_cpus(&read("/sys/devices/system/cpu/online")?).ok_or("cannot parse /sys/devices/system/cpu/online")?;
    let max_khz = fs::read_to_string("/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq").ok();
    let freq_ghz = match max_khz.and_then(|s| s.trim().parse::<f64>().ok()) {
        Some(khz) => khz / 1e6,
        None => cpuinfo_ghz(&read("/proc/cpuinfo")?).ok_or("no 'cpu MHz' line in /proc/cpuinfo")?,
    };
    let (mut l1d, mut l2, mut llc) = (None, None, None);
    for i in 0..8 {
        let dir = format!("/sys/devices/system/cpu/cpu0/cache/index{i}");
        let Ok(level) = fs::read_to_string(format!("{dir}/level")) else { break };
        let kind = read(&format!("{dir}/type"))?;
        let size = parse_size(&read(&format!("{dir}/size"))?).ok_or(format!("cannot parse {dir}/size"))?;
        let ways = read(&format!("{dir}/ways_of_associativity"))?
            .trim()
            .parse::<usize>()
            .map_err(|_| format!("cannot parse {dir}/ways_of_associativity"))?;
        match (level.trim(), kind.trim()) {
            ("1", "Data") => l1d = Some((size, ways)),
            ("2", _) => l2 = Some((size, ways)),
            ("3", _) => llc = Some((size, ways)),
            _ => {}
        }
    }
    let missing = |what: &str| format!("/sys/devices/system/cpu/cpu0/cache lists no {what}");
    let l1d = l1d.ok_or_else(|| missing("L1 data cache"))?;
    let l2 = l2.ok_or_else(|| missing("L2 cache"))?;
    Ok(Host { cores, freq_ghz, l1d, l2, llc: llc.unwrap_or(l2) })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_sys_formats() {
        assert_eq!(parse_size("32K\n"), Some(32 << 10));
        assert_eq!(parse_size("32768K"), Some(32 << 20));
        assert_eq!(count_cpus("0-3,8,10-11\n"), Some(7));
        assert_eq!(count_cpus("0"), Some(1));
        assert_eq!(cpuinfo_ghz("model name\t: X\ncpu MHz\t\t: 2445.422\n"), Some(2.445422));
    }
}
