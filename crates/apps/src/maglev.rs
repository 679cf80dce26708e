//! `maglev`: Google's Maglev load balancer as Ensō §7.3.1 runs it: consistent hashing through a lookup
//! table of prime size built by the Maglev paper's permutation algorithm (Eisenbud et al., NSDI'16, §3.4,
//! Pseudocode 1), with a small flow cache (the connection tracking table of Maglev §3.3) in front, as Ensō's
//! implementation has it ([`FlowCache`]: 1024 entries per core, a full bucket replacing its oldest); the
//! packet's destination address is rewritten to the chosen backend's.
//!
//! Parameters: `backends=N` (default 32), `table=M` lookup-table size, a prime larger than the number of
//! backends (default 65537, the paper's), `flows=N` flow-cache entries per core (default 1024).

use crate::AppError;
use crate::flow::{FlowKey, hash_bytes};
use crate::flowcache::FlowCache;
use crate::lb::{Balancer, Select, read_common};
use crate::params::Reader;
use ifaces::Probe;

/// Cycles to reduce a 64-bit hash modulo the (non-power-of-two) table size: one 64-bit division.
const MOD_WORK: u32 = 26;

/// The Maglev lookup table: entry `i` is the backend of hashes congruent to `i`.
#[derive(Debug, Clone)]
pub struct MaglevTable {
    entries: Vec<u16>,
}

impl MaglevTable {
    /// Populate a table of size `m` (a prime) for backends named `names` (Maglev §3.4, Pseudocode 1): each
    /// backend walks its own permutation of the table, `(offset + j * skip) mod m`, and the backends take
    /// turns claiming their next still-empty entry until the table is full.
    pub fn build(names: &[String], m: usize) -> Result<MaglevTable, String> {
        if names.is_empty() || names.len() > usize::from(u16::MAX) || names.len() >= m || !is_prime(m as u64) {
            return Err(format!("the table size must be a prime larger than the {} backends, got {m}", names.len()));
        }
        let m64 = m as u64;
        // offset = h1(name) mod M, skip = h2(name) mod (M - 1) + 1 (Maglev §3.4).
        let perm: Vec<(u64, u64)> = names
            .iter()
            .map(|n| (hash_bytes(n.as_bytes(), 0x6d61676c) % m64, hash_bytes(n.as_bytes(), 0x65762131) % (m64 - 1) + 1))
            .collect();
        let mut next = vec![0u64; names.len()];
        let mut entries = vec![u16::MAX; m];
        let mut filled = 0;
        'fill: loop {
            for (i, &(offset, skip)) in perm.iter().enumerate() {
                let mut c = (offset + next[i] * skip) % m64;
                while entries[c as usize] != u16::MAX {
                    next[i] += 1;
                    c = (offset + next[i] * skip) % m64;
                }
                entries[c as usize] = i as u16;
                next[i] += 1;
                filled += 1;
                if filled == m {
                    break 'fill;
                }
            }
        }
        Ok(MaglevTable { entries })
    }

    /// The backend for a flow hash.
    #[inline]
    pub fn backend<P: Probe>(&self, p: &mut P, hash: u64) -> u16 {
        p.work(MOD_WORK);
        let e = &self.entries[(hash % self.entries.len() as u64) as usize];
        p.read(e);
        *e
    }
}

fn is_prime(n: u64) -> bool {
    n >= 2 && (2..).take_while(|d| d * d <= n).all(|d| !n.is_multiple_of(d))
}

impl Select for MaglevTable {
    fn pick<P: Probe>(&mut self, p: &mut P, _: &FlowKey, hash: u64) -> u16 {
        self.backend(p, hash)
    }

    fn tables(&self) -> Vec<std::ops::Range<usize>> {
        vec![crate::span(self.entries.as_ptr(), self.entries.len())]
    }
}

/// The `maglev` app.
pub type Maglev = Balancer<MaglevTable, FlowCache>;

/// Build the `maglev` app from parameters (see the module documentation).
pub fn new(mut r: Reader<'_>) -> Result<Maglev, AppError> {
    // enso_eval's Maglev caches `hash_params.entries = 1024` flows per core.
    let (backends, flows) = read_common(&mut r, 1024)?;
    let m = r.count("table", 65537, 3..=(1 << 24))? as usize;
    let names: Vec<String> = backends.iter().map(|b| b.addr.to_string()).collect();
    let table = MaglevTable::build(&names, m).map_err(|e| r.error("table", e))?;
    r.finish()?;
    Ok(Balancer::with(table, backends, FlowCache::new(flows)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::App;
    use crate::harness::{TestCore, frame};
    use crate::params::AppParams;

    fn names(n: usize) -> Vec<String> {
        (0..n).map(|i| format!("backend-{i}")).collect()
    }

    fn counts(t: &MaglevTable, n: usize) -> Vec<usize> {
        let mut c = vec![0; n];
        t.entries.iter().for_each(|&b| c[usize::from(b)] += 1);
        c
    }

    #[test]
    fn every_backend_gets_an_equal_share() {
        // Backends take turns, so shares differ by at most one entry (Maglev §3.4: "balance").
        for n in [1, 3, 32, 100] {
            let t = MaglevTable::build(&names(n), 65537).unwrap();
            let c = counts(&t, n);
            assert!(c.iter().max().unwrap() - c.iter().min().unwrap() <= 1, "{n} backends: {c:?}");
        }
    }

    #[test]
    fn removing_a_backend_moves_few_other_entries() {
        // Maglev §3.4, "minimal disruption": entries of remaining backends mostly keep their backend.
        let all = names(32);
        let before = MaglevTable::build(&all, 65537).unwrap();
        let removed = 7;
        let rest: Vec<String> = all.iter().enumerate().filter(|(i, _)| *i != removed).map(|(_, n)| n.clone()).collect();
        let after = MaglevTable::build(&rest, 65537).unwrap();
        let mut moved = 0;
        for (b, a) in before.entries.iter().zip(&after.entries) {
            let b = usize::from(*b);
            if b != removed && rest[usize::from(*a)] != all[b] {
                moved += 1;
            }
        }
        // The removed backend's 1/32 of the table must move; of the rest, only a small fraction does.
        let frac = moved as f64 / 65537.0;
        assert!(frac < 0.03, "{moved} entries of remaining backends moved ({:.2}%)", 100.0 * frac);
        let lost = before.entries.iter().filter(|&&b| usize::from(b) == removed).count();
        assert!(lost >= 65537 / 32);
    }

    #[test]
    fn flows_are_stable_and_consistent_across_cores() {
        let params = AppParams::new().with("flows", 100).with("table", 251).with("backends", 8);
        let mut a = new(params.reader("maglev")).unwrap();
        let mut b = new(params.reader("maglev")).unwrap();
        let core = TestCore::new();
        let frames: Vec<Vec<u8>> = (0..50).map(|i| frame("10.0.0.1", 1000 + i, "192.0.2.80", 80, 17, 64)).collect();
        let first = core.run(&mut a, &frames);
        assert_eq!(first, core.run(&mut a, &frames), "cached flows keep their backend");
        assert_eq!(first, core.run(&mut b, &frames), "another core picks the same backends without shared state");
        assert_eq!(a.metrics()["flow_hits"], 50.0);
        assert!(new(AppParams::new().with("table", 65536).reader("maglev")).unwrap_err().to_string().contains("prime"));
    }
}
