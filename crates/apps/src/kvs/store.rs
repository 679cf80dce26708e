//! One MICA partition in cache mode (Lim et al., NSDI'14, §4.3): a circular log holding the items and a
//! lossy, set-associative hash index pointing into it. Both are owned by one core (MICA's EREW mode), so
//! nothing is shared or locked.
//!
//! - Log (MICA §4.3.1): items are appended at the head; once the log wraps, the oldest items are
//!   overwritten, and an index entry whose offset lies more than the log size behind the head is stale.
//! - Index (MICA §4.3.2): 64-byte buckets of 8 entries, each a 16-bit tag and a 48-bit log offset. A PUT
//!   reuses the key's entry, else an empty or stale one, else evicts the entry of the oldest item.

use crate::flow::hash_bytes_work;
use ifaces::Probe;
use ifaces::probe::Access;
use traffic::kvs::proto;

/// Entries per index bucket.
const WAYS: usize = 8;
/// Bytes of an item header in the log: key length u8, reserved u8, value length u16.
const ITEM_HEADER: usize = 4;
/// Offsets are 48-bit.
const OFFSET_MASK: u64 = (1 << 48) - 1;
/// Cycles to scan a bucket's 8 tags.
const SCAN_WORK: u32 = 6;

/// A 64-byte index bucket.
#[derive(Debug, Clone, Copy, Default)]
#[repr(C, align(64))]
struct Bucket {
    entries: [u64; WAYS],
}

/// A key's hash and what is derived from it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KeyHash(pub u64);

impl KeyHash {
    /// Hash a key (reports the hashing work).
    pub fn of<P: Probe>(p: &mut P, key: &[u8]) -> KeyHash {
        p.work(hash_bytes_work(key.len()));
        KeyHash(proto::key_hash(key))
    }

    /// The partition (core) that owns the key ([`proto::partition`]).
    pub fn partition(self, partitions: usize) -> usize {
        proto::partition(self.0, partitions)
    }

    fn tag(self) -> u64 {
        // Never zero, so that an entry of 0 is empty.
        (self.0 >> 48) | 1
    }
}

/// A partition: index and log.
#[derive(Debug)]
pub struct Partition {
    index: Vec<Bucket>,
    log: Vec<u8>,
    /// Bytes ever appended (the log position is `head % log.len()`).
    head: u64,
}

impl Partition {
    /// A partition with `buckets` index buckets (rounded up to a power of two) and a `log_bytes` log.
    pub fn new(buckets: usize, log_bytes: usize) -> Partition {
        Partition {
            index: vec![Bucket::default(); buckets.max(1).next_power_of_two()],
            log: vec![0; log_bytes.max(64)],
            head: 0,
        }
    }

    /// The memory of the index and the log ([`crate::App::tables`]).
    pub fn tables(&self) -> Vec<std::ops::Range<usize>> {
        vec![crate::span(self.index.as_ptr(), self.index.len()), crate::span(self.log.as_ptr(), self.log.len())]
    }

    /// The key's bucket, from hash bits 24 up: disjoint from the bits that pick the partition (16 up,
    /// [`KeyHash::partition`]: with the low bits, a core's keys would all land in a quarter of its buckets
    /// when there are four partitions) and from the tag (48 up) for indexes of up to 2^24 buckets.
    fn bucket(&self, h: KeyHash) -> usize {
        (h.0 >> 24) as usize & (self.index.len() - 1)
    }

    fn live(&self, offset: u64) -> bool {
        offset + self.log.len() as u64 >= self.head
    }

    /// The item at log offset `offset` as (key, value), reporting the read of its header and key.
    fn item<P: Probe>(&self, p: &mut P, offset: u64) -> (&[u8], &[u8]) {
        let at = (offset % self.log.len() as u64) as usize;
        let h = &self.log[at..at + ITEM_HEADER];
        let (klen, vlen) = (usize::from(h[0]), usize::from(u16::from_le_bytes([h[2], h[3]])));
        let key = &self.log[at + ITEM_HEADER..at + ITEM_HEADER + klen];
        p.touch(h.as_ptr() as usize, ITEM_HEADER + klen, Access::Read);
        (key, &self.log[at + ITEM_HEADER + klen..at + ITEM_HEADER + klen + vlen])
    }

    /// The index slot holding `key`, if any (reports the bucket and item reads).
    fn find<P: Probe>(&self, p: &mut P, key: &[u8], h: KeyHash) -> Option<(usize, usize)> {
        let b = self.bucket(h);
        let bucket = &self.index[b];
        p.read(bucket);
        p.work(SCAN_WORK);
        bucket.entries.iter().enumerate().find_map(|(w, &e)| {
            let offset = e & OFFSET_MASK;
            (e != 0 && e >> 48 == h.tag() && self.live(offset) && self.item(p, offset).0 == key).then_some((b, w))
        })
    }

    /// Prefetch the key's bucket, a few requests before it is looked up (mica2's `LTable::prefetch_table`,
    /// `src/mica/table/ltable_impl/prefetch.h`).
    pub fn prefetch_bucket<P: Probe>(&self, p: &mut P, h: KeyHash) {
        p.prefetch(std::ptr::from_ref(&self.index[self.bucket(h)]) as usize, size_of::<Bucket>());
    }

    /// Read the key's bucket (prefetched by [`Partition::prefetch_bucket`]) and prefetch the item of every
    /// entry with the key's tag: its first line and the next, where MICA's header and key begin (mica2's
    /// `LTable::prefetch_pool` and `CircularLog::prefetch_item`, `src/mica/pool/circular_log_impl`).
    pub fn prefetch_items<P: Probe>(&self, p: &mut P, h: KeyHash) {
        let bucket = &self.index[self.bucket(h)];
        p.read(bucket);
        p.work(SCAN_WORK);
        let (base, len) = (self.log.as_ptr() as usize, self.log.len());
        for &e in bucket.entries.iter().filter(|&&e| e != 0 && e >> 48 == h.tag()) {
            let at = base + ((e & OFFSET_MASK) % len as u64) as usize;
            let end = (at / 64 * 64 + 128).min(base + len);
            p.prefetch(at, end - at);
        }
    }

    /// The value of `key`, if present (reports the value read too).
    pub fn get<P: Probe>(&self, p: &mut P, key: &[u8], h: KeyHash) -> Option<&[u8]> {
        let (b, w) = self.find(p, key, h)?;
        let value = self.item(p, self.index[b].entries[w] & OFFSET_MASK).1;
        p.touch(value.as_ptr() as usize, value.len(), Access::Read);
        Some(value)
    }

    /// The item whose key hashes to `h`, as (key, value), if present: an entry of `h`'s bucket with its
    /// tag whose key rehashes to `h` (nmKVS promotes hot items by hash, nicmem §4.2.2).
    pub fn get_by_hash<P: Probe>(&self, p: &mut P, h: KeyHash) -> Option<(&[u8], &[u8])> {
        let bucket = &self.index[self.bucket(h)];
        p.read(bucket);
        p.work(SCAN_WORK);
        bucket.entries.iter().find_map(|&e| {
            let offset = e & OFFSET_MASK;
            if e == 0 || e >> 48 != h.tag() || !self.live(offset) {
                return None;
            }
            let (key, value) = self.item(p, offset);
            (KeyHash::of(p, key) == h).then(|| {
                p.touch(value.as_ptr() as usize, value.len(), Access::Read);
                (key, value)
            })
        })
    }

    /// Store `key` = `value`; `false` if the item cannot fit in the log at all (or the key is too long).
    pub fn put<P: Probe>(&mut self, p: &mut P, key: &[u8], value: &[u8], h: KeyHash) -> bool {
        let (Ok(klen), Ok(vlen)) = (u8::try_from(key.len()), u16::try_from(value.len())) else { return false };
        let size = (ITEM_HEADER + key.len() + value.len()).next_multiple_of(8);
        let len = self.log.len();
        if size > len {
            return false;
        }
        let existing = self.find(p, key, h);
        // Append; an item never straddles the end of the log: skip to the start instead (MICA maps the log
        // twice for this; skipping keeps the offsets arithmetic the same).
        let mut at = (self.head % len as u64) as usize;
        if at + size > len {
            self.head += (len - at) as u64;
            at = 0;
        }
        let offset = self.head & OFFSET_MASK;
        let item = &mut self.log[at..at + size];
        item[..ITEM_HEADER].copy_from_slice(&[klen, 0, vlen.to_le_bytes()[0], vlen.to_le_bytes()[1]]);
        item[ITEM_HEADER..ITEM_HEADER + key.len()].copy_from_slice(key);
        item[ITEM_HEADER + key.len()..ITEM_HEADER + key.len() + value.len()].copy_from_slice(value);
        p.touch(item.as_ptr() as usize, size, Access::Write);
        self.head += size as u64;
        // Index: the key's own entry, else an empty or stale one, else the oldest item's (MICA §4.3.2).
        let b = self.bucket(h);
        let w = existing.map(|(_, w)| w).unwrap_or_else(|| {
            let entries = &self.index[b].entries;
            entries
                .iter()
                .position(|&e| e == 0 || !self.live(e & OFFSET_MASK))
                .or_else(|| (0..WAYS).min_by_key(|&w| entries[w] & OFFSET_MASK))
                .unwrap_or(0)
        });
        self.index[b].entries[w] = (h.tag() << 48) | offset;
        p.write(&self.index[b]);
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ifaces::NoProbe;

    fn put(s: &mut Partition, k: &[u8], v: &[u8]) {
        let mut p = NoProbe::new();
        let h = KeyHash::of(&mut p, k);
        assert!(s.put(&mut p, k, v, h));
    }

    fn get(s: &Partition, k: &[u8]) -> Option<Vec<u8>> {
        let mut p = NoProbe::new();
        let h = KeyHash::of(&mut p, k);
        s.get(&mut p, k, h).map(<[u8]>::to_vec)
    }

    #[test]
    fn returns_what_was_put_and_the_latest_value() {
        let mut s = Partition::new(64, 1 << 16);
        for i in 0u32..200 {
            put(&mut s, &i.to_le_bytes(), &[i as u8; 8]);
        }
        put(&mut s, &7u32.to_le_bytes(), b"newer");
        assert_eq!(get(&s, &7u32.to_le_bytes()).as_deref(), Some(&b"newer"[..]));
        for i in (0u32..200).filter(|&i| i != 7) {
            assert_eq!(get(&s, &i.to_le_bytes()), Some(vec![i as u8; 8]), "key {i}");
        }
        assert_eq!(get(&s, b"absent"), None);
        let mut p = NoProbe::new();
        let h = KeyHash::of(&mut p, &7u32.to_le_bytes());
        assert_eq!(s.get_by_hash(&mut p, h), Some((&7u32.to_le_bytes()[..], &b"newer"[..])));
        assert_eq!(s.get_by_hash(&mut p, KeyHash(h.0 ^ 1)), None);
    }

    #[test]
    fn the_log_wrapping_loses_the_oldest_items() {
        // 4 KiB of log holds about 128 items of 32 bytes: after 1000 puts only the newest survive.
        let mut s = Partition::new(1024, 4096);
        for i in 0u32..1000 {
            put(&mut s, &i.to_le_bytes(), &[1; 20]);
        }
        let alive: Vec<u32> = (0u32..1000).filter(|i| get(&s, &i.to_le_bytes()).is_some()).collect();
        assert!(alive.len() <= 4096 / 32 && alive.len() > 100, "{}", alive.len());
        assert!(alive.iter().all(|&i| i >= 1000 - 4096 / 32), "only the newest items survive: {alive:?}");
    }

    #[test]
    fn a_partitions_keys_use_all_its_buckets() {
        // Four partitions: the keys of partition 0 must spread over every bucket, not a quarter of them.
        let mut s = Partition::new(64, 1 << 20);
        let mut p = NoProbe::new();
        let mut used = std::collections::HashSet::new();
        for k in 0u32..2000 {
            let h = KeyHash::of(&mut p, &k.to_le_bytes());
            if h.partition(4) == 0 {
                used.insert(s.bucket(h));
                assert!(s.put(&mut p, &k.to_le_bytes(), b"v", h));
            }
        }
        assert_eq!(used.len(), 64);
    }

    #[test]
    fn a_full_bucket_evicts_its_oldest_entry() {
        // One bucket of 8 ways: the 9th key evicts the first, which is the oldest.
        let mut s = Partition::new(1, 1 << 16);
        for i in 0u32..9 {
            put(&mut s, &i.to_le_bytes(), b"v");
        }
        assert_eq!(get(&s, &0u32.to_le_bytes()), None);
        assert!((1u32..9).all(|i| get(&s, &i.to_le_bytes()).is_some()));
        // Re-putting a key updates its entry rather than taking another.
        put(&mut s, &5u32.to_le_bytes(), b"w");
        assert!((1u32..9).all(|i| get(&s, &i.to_le_bytes()).is_some()));
        let mut p = NoProbe::new();
        assert!(!s.put(&mut p, b"k", &vec![0; 70_000], KeyHash(1)));
    }
}
