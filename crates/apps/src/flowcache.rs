//! A small flow cache that never fills: Ensō's Maglev (enso_eval `maglev/src/maglev.hpp`) caches recent
//! flows in DPDK's `rte_fbk_hash` (1024 entries per core, buckets of 4), keyed by the flow's 32-bit hash,
//! and when a bucket is full replaces its oldest entry ("we remove the oldest key"). Under a SYN flood
//! every packet misses and takes a slot; with a few flows every packet hits (Ensō §7.3.1, Figure 15).

use crate::flow::FlowKey;
use crate::lb::FlowTable;
use ifaces::Probe;
use std::ops::Range;

/// Entries per bucket (enso_eval's `kEntriesPerBucket`).
const WAYS: usize = 4;
/// Cycles to compare a bucket's four keys.
const BUCKET_WORK: u32 = 4;

/// One entry: the flow's hash and its value, 8 bytes as `rte_fbk_hash_entry`.
#[derive(Debug, Clone, Copy, Default)]
#[repr(C)]
struct Entry {
    key: u32,
    value: u16,
    used: bool,
}

/// A bucket: four entries (which one was written last is kept in [`FlowCache::newest`]).
#[derive(Debug, Clone, Copy, Default)]
#[repr(C, align(32))]
struct Bucket {
    entries: [Entry; WAYS],
}

const _: () = assert!(std::mem::size_of::<Bucket>() == 32);

/// The cache: `len` entries in buckets of four, the newest entry of each bucket remembered so that a
/// full bucket replaces the entry after it (the oldest, entries being written round-robin).
#[derive(Debug)]
pub struct FlowCache {
    buckets: Vec<Bucket>,
    /// Per bucket, the entry written last.
    newest: Vec<u8>,
    len: usize,
}

impl FlowCache {
    /// A cache of `entries` entries, rounded up to a power of two of at least one bucket.
    pub fn new(entries: usize) -> FlowCache {
        let buckets = entries.div_ceil(WAYS).max(1).next_power_of_two();
        FlowCache { buckets: vec![Bucket::default(); buckets], newest: vec![0; buckets], len: 0 }
    }

    fn bucket(&self, hash: u32) -> usize {
        hash as usize & (self.buckets.len() - 1)
    }
}

impl FlowTable for FlowCache {
    fn get<P: Probe>(&mut self, p: &mut P, _: &FlowKey, hash: u64) -> Option<u16> {
        let b = &self.buckets[self.bucket(hash as u32)];
        p.read(b);
        p.work(BUCKET_WORK);
        b.entries.iter().find(|e| e.used && e.key == hash as u32).map(|e| e.value)
    }

    fn insert<P: Probe>(&mut self, p: &mut P, _: FlowKey, hash: u64, value: u16) -> bool {
        let i = self.bucket(hash as u32);
        let b = &mut self.buckets[i];
        let way = match b.entries.iter().position(|e| !e.used) {
            Some(free) => {
                self.len += 1;
                free
            }
            None => (usize::from(self.newest[i]) + 1) % WAYS,
        };
        b.entries[way] = Entry { key: hash as u32, value, used: true };
        p.write(&b.entries[way]);
        self.newest[i] = way as u8;
        true
    }

    fn flows(&self) -> usize {
        self.len
    }

    fn tables(&self) -> Vec<Range<usize>> {
        vec![
            crate::span(self.buckets.as_ptr(), self.buckets.len()),
            crate::span(self.newest.as_ptr(), self.newest.len()),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ifaces::NoProbe;

    #[test]
    fn a_full_bucket_replaces_its_oldest_entry() {
        let mut c = FlowCache::new(8);
        let p = &mut NoProbe::new();
        let key = FlowKey::default();
        // Hashes 0, 2, 4, ... all land in bucket 0 of 2.
        for (n, h) in (0..5u64).map(|n| (n, n * 2)) {
            assert_eq!(c.get(p, &key, h), None);
            assert!(c.insert(p, key, h, n as u16));
        }
        assert_eq!(c.flows(), 4);
        // The fifth flow took the slot of the first; the others are still there.
        assert_eq!(c.get(p, &key, 0), None);
        assert_eq!((1..5u64).map(|n| c.get(p, &key, n * 2)).collect::<Vec<_>>(), [Some(1), Some(2), Some(3), Some(4)]);
        assert!(c.insert(p, key, 10, 5));
        assert_eq!(c.get(p, &key, 2), None, "then the second");
        assert_eq!(c.get(p, &key, 10), Some(5));
    }
}
