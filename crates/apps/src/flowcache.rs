//! A small flow cache that never fills: Ensō's Maglev (enso_eval `maglev/src/maglev.hpp`) caches recent
//! flows in DPDK's `rte_fbk_hash` (1024 entries per core, buckets of 4), keyed by the flow's 32-bit hash,
//! and when a bucket is full replaces its oldest entry ("we remove the oldest key",
//! `get_cached_hash_value_with_bucket`). Under a SYN flood every packet misses and takes a slot; with a
//! few flows every packet hits (Ensō §7.3.1, Figure 15). `rte_fbk_hash` picks a key's bucket by hashing
//! it once more (`crc32`); the key being a hash already, rxlab takes its low bits and charges the `crc32`.

use ifaces::Probe;
use std::ops::Range;

/// Entries per bucket (enso_eval's `kEntriesPerBucket`).
const WAYS: usize = 4;
/// Cycles to find the bucket and compare its keys: `rte_fbk_hash_get_bucket` (a `crc32` of the key, a
/// mask and a shift) and the loop's test of each used entry's key, which ends at the first match (the
/// common case, a flow's entry being written in the first free way).
const BUCKET_WORK: u32 = 4;
/// Cycles to write a new entry: compose its 64-bit word, store it and the bucket's newest-entry mark.
const INSERT_WORK: u32 = 3;

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

    /// The value cached for `key` and `true`, or else the value `miss` computes, cached in the bucket's
    /// first free entry or in place of its oldest, and `false`.
    #[inline]
    pub fn get_or_insert<P: Probe>(&mut self, p: &mut P, key: u32, miss: impl FnOnce(&mut P) -> u16) -> (u16, bool) {
        let i = key as usize & (self.buckets.len() - 1);
        let b = &mut self.buckets[i];
        p.read(b);
        p.work(BUCKET_WORK);
        if let Some(e) = b.entries.iter().find(|e| e.used && e.key == key) {
            return (e.value, true);
        }
        let value = miss(p);
        let way = match b.entries.iter().position(|e| !e.used) {
            Some(free) => {
                self.len += 1;
                free
            }
            None => (usize::from(self.newest[i]) + 1) % WAYS,
        };
        b.entries[way] = Entry { key, value, used: true };
        p.write(&b.entries[way]);
        p.work(INSERT_WORK);
        self.newest[i] = way as u8;
        (value, false)
    }

    /// How many entries are in use.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether no entry is in use.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The cache's memory ([`crate::App::tables`]).
    pub fn tables(&self) -> Vec<Range<usize>> {
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
        // Keys 0, 2, 4, ... all land in bucket 0 of 2.
        for n in 0..5u16 {
            assert_eq!(c.get_or_insert(p, u32::from(n) * 2, |_| n), (n, false));
        }
        assert_eq!(c.len(), 4);
        // The fifth flow took the slot of the first; the others are still there.
        assert_eq!(
            (1..5u16).map(|n| c.get_or_insert(p, u32::from(n) * 2, |_| 99)).collect::<Vec<_>>(),
            [(1, true), (2, true), (3, true), (4, true)]
        );
        assert_eq!(c.get_or_insert(p, 0, |_| 7), (7, false), "the first was replaced; it now replaces the second");
        assert_eq!(c.get_or_insert(p, 2, |_| 8), (8, false));
        assert_eq!(c.get_or_insert(p, 0, |_| 99), (7, true));
    }
}
