//! Free space: refuse to start writing what the target file system cannot hold.

use anyhow::{Result, bail};
use std::path::Path;

/// Bytes available to this user on the file system holding `dir` (statvfs: available blocks × fragment
/// size); `None` when it cannot be asked (the check is then skipped, the write itself reports a full disk).
pub fn free_bytes(dir: &Path) -> Option<u64> {
    let dir = if dir.as_os_str().is_empty() { Path::new(".") } else { dir };
    let s = rustix::fs::statvfs(dir).ok()?;
    Some(s.f_bavail.saturating_mul(s.f_frsize))
}

/// Bytes as text with a decimal unit, e.g. `149.9 TB`.
pub fn human(bytes: u64) -> String {
    let units = ["B", "kB", "MB", "GB", "TB", "PB", "EB"];
    let mut x = bytes as f64;
    let mut i = 0;
    while x >= 1000.0 && i + 1 < units.len() {
        x /= 1000.0;
        i += 1;
    }
    if i == 0 { format!("{bytes} B") } else { format!("{x:.1} {}", units[i]) }
}

/// Fail with one line if `what` (about `needed` bytes) does not fit in the free space of the file system
/// holding `dir`; `fix` says how to ask for less.
pub fn ensure(dir: &Path, needed: u64, what: &str, fix: &str) -> Result<()> {
    match free_bytes(dir) {
        Some(free) if needed > free => bail!(
            "{what} needs about {} but {} has {} free; {fix}",
            human(needed),
            if dir.as_os_str().is_empty() { Path::new(".") } else { dir }.display(),
            human(free)
        ),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units_and_refusal() {
        assert_eq!(human(999), "999 B");
        assert_eq!(human(149_900_000_000_000), "149.9 TB");
        let dir = tempfile::tempdir().unwrap();
        assert!(free_bytes(dir.path()).is_some_and(|f| f > 0));
        ensure(dir.path(), 1, "x", "y").unwrap();
        let e = ensure(dir.path(), u64::MAX, "big.pcap", "write fewer packets").unwrap_err().to_string();
        assert!(e.starts_with("big.pcap needs about 18.4 EB but ") && e.ends_with("free; write fewer packets"), "{e}");
    }
}
