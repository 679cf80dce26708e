//! Reading this host's cores, caches, frequency and memory from /sys and /proc, and a profile of it
//! (`rxlab profile detect`).

use crate::cache::Policy;
use crate::profile::{CacheGeom, Profile, ProfileError};
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
    /// Installed memory in bytes (`MemTotal`), where /proc/meminfo gives it.
    pub mem_bytes: Option<u64>,
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
    let mem_bytes = fs::read_to_string("/proc/meminfo").ok().as_deref().and_then(mem_total);
    Ok(Host { cores, freq_ghz, l1d, l2, llc: llc.unwrap_or(l2), mem_bytes })
}

/// `MemTotal` of /proc/meminfo, in bytes.
fn mem_total(meminfo: &str) -> Option<u64> {
    let line = meminfo.lines().find(|l| l.starts_with("MemTotal:"))?;
    line.split_whitespace().nth(1)?.parse::<u64>().ok().map(|kib| kib << 10)
}

/// Where each field [`profile`] reads from the host comes from; every other field is its base's.
pub const DETECTED: &[(&str, &str)] = &[
    ("cpu.cores", "detected: /sys/devices/system/cpu/online"),
    ("cpu.freq_ghz", "detected: cpufreq cpuinfo_max_freq, else /proc/cpuinfo \"cpu MHz\""),
    (
        "cpu.transfer_cycles",
        "detected frequency x about 50 ns core to core ([C2C] of the Skylake-SP mesh; not measured here)",
    ),
    ("cpu.l1d", "detected: /sys/devices/system/cpu/cpu0/cache (size, ways; latency from the base)"),
    ("cpu.l2", "detected: /sys/devices/system/cpu/cpu0/cache (size, ways; latency from the base)"),
    (
        "cpu.llc",
        "detected: /sys/devices/system/cpu/cpu0/cache (size, ways, kept to a power-of-two number of sets; \
         latency from the base)",
    ),
    (
        "cpu.llc_slices",
        "unknown for an arbitrary host (no published measurement covers it; it may not be an Intel CPU): \
         one slice",
    ),
    ("cpu.llc_policy", "unknown for an arbitrary host: LRU"),
    ("ddio_ways", "the base's, at most the detected LLC's ways"),
    ("nic.software", "the live engine's NIC is a thread on a core of its own (rxBisect §5)"),
];

/// A profile of `host` named `name`: cores, caches and frequency from the host; latencies, DRAM, PCIe and
/// NIC from `base`, since the live engine's NIC is a thread and /sys and /proc give no memory bandwidth.
pub fn profile(host: &Host, base: &Profile, name: &str) -> Result<Profile, ProfileError> {
    let mut p = base.clone();
    p.name = name.to_string();
    p.cpu.cores = host.cores;
    p.cpu.freq_ghz = host.freq_ghz;
    p.cpu.transfer_cycles = (50.0 * host.freq_ghz).round() as u32;
    p.cpu.l1d = CacheGeom::of_host(host.l1d, p.cpu.l1d.latency_cycles);
    p.cpu.l2 = CacheGeom::of_host(host.l2, p.cpu.l2.latency_cycles);
    p.cpu.llc = CacheGeom::of_host(host.llc, p.cpu.llc.latency_cycles);
    p.cpu.llc_slices = None;
    p.cpu.llc_policy = Policy::Lru;
    p.ddio_ways = p.ddio_ways.min(p.cpu.llc.ways);
    p.nic.software = true;
    p.validate()?;
    Ok(p)
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
        assert_eq!(mem_total("MemTotal:       16384 kB\nMemFree: 1 kB\n"), Some(16 << 20));
    }

    #[test]
    fn a_host_profile_takes_what_the_host_has_and_the_rest_from_its_base() {
        let host = Host {
            cores: 4,
            freq_ghz: 3.0,
            l1d: (48 << 10, 12),
            l2: (2 << 20, 16),
            llc: (30 << 20, 12),
            mem_bytes: None,
        };
        let p = profile(&host, &Profile::r640_silver4216(), "mine").unwrap();
        assert_eq!((p.cpu.cores, p.cpu.llc.ways, p.cpu.llc.size), (4, 12, 24 << 20));
        assert_eq!((p.cpu.llc_slices, p.pcie.clone()), (None, Profile::r640_silver4216().pcie));
    }
}
