//! A bucketized cuckoo hash table keyed by IPv4 flow, as the NAT and LB flow tables of the papers
//! ("per-core cuckoo hash tables caching up to 10 M flows", shRing §5.2, nicmem §6.3), laid out as DPDK's
//! `rte_hash` that FastClick uses: 64-byte buckets of 8 (16-bit signature, entry index) slots, and a
//! separate array of entries. A lookup reads the primary bucket, then the alternate bucket, and the entry of
//! each matching signature; inserts move entries along a cuckoo path found before anything is moved.
//!
//! Where a flow's value lives is the table's [`Layout`]: beside its key in the entry, or, as FastClick's
//! flow manager keeps NF state, in a 64-byte flow control block of an array indexed by the key's position
//! in `rte_hash`'s key store (FastClick `elements/research/flowipmanager.cc`: `fcb = fcbs +
//! _flow_state_size_full * ret`, with `ret` from `rte_hash_lookup`), which every packet of the flow reads
//! and writes (its elements' state and the flow's last-seen time).

use crate::flow::{FlowKey, HASH_WORK};
use crate::sparse::{LINE, Lines, SparseArray};
use ifaces::{Access, Probe};

/// Slots per bucket.
const SLOTS: usize = 8;
/// Longest cuckoo path tried before an insert reports the table full.
const MAX_PATH: usize = 64;
/// Target load factor that sizes the bucket array (8-way cuckoo tables work well up to ~95%).
const LOAD: f64 = 0.85;
/// Cycles to compare 8 signatures with one SIMD compare and a mask scan.
const SIG_WORK: u32 = 4;
/// Cycles to compare a 13-byte key.
const KEY_WORK: u32 = 3;

/// A bucket's slots: 1-based entry indices (0 = empty slot). Each bucket has a 64-byte line of its own
/// ([`SparseArray`]), which holds each slot's signature as well; the host keeps the signature with the
/// entry (the table's `sigs`), since a slot's signature is its entry's.
#[derive(Debug, Clone, Copy, Default)]
struct Bucket {
    slots: [u32; SLOTS],
}

/// A stored flow and its value.
#[derive(Debug, Clone, Copy)]
#[repr(C)]
struct Entry<V> {
    key: FlowKey,
    value: V,
}

/// Where each flow's value lives.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Layout {
    /// In the entry, beside the key (one line for both).
    #[default]
    Inline,
    /// In a 64-byte flow control block of its own, indexed by the key's position (FastClick's flow
    /// manager): one more line per packet, read and written.
    ControlBlock,
}

impl Layout {
    /// The `state` app parameter: `inline` (default) or `fcb` (a flow control block per flow, as
    /// FastClick's flow manager keeps it; the FastClick runtime sets it for the NFs it hosts).
    pub fn read(r: &mut crate::params::Reader<'_>) -> Result<Layout, crate::AppError> {
        Ok(match r.choice("state", &["inline", "fcb"])? {
            "fcb" => Layout::ControlBlock,
            _ => Layout::Inline,
        })
    }
}

/// The table is full: no free slot within a cuckoo path of `MAX_PATH` moves, or no entry left.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TableFull;

/// A cuckoo hash table from [`FlowKey`] to `V`, holding at most `capacity` flows. Entries are never
/// removed (the NFs keep every flow they see, up to the capacity).
#[derive(Debug)]
pub struct CuckooTable<V> {
    /// The bucket array; host memory holds only the buckets written, so a table takes memory in
    /// proportion to the flows it holds.
    buckets: SparseArray<Bucket>,
    entries: Vec<Entry<V>>,
    /// Each entry's signature, which its slot's signature in a bucket line stands for.
    sigs: Vec<u16>,
    /// With [`Layout::ControlBlock`], the lines of the entries' flow control blocks, at the entries'
    /// indices. A block holds the flow's value and when it was last seen: the value is the entry's (it
    /// never changes) and the time is written, never read, so the host keeps neither.
    blocks: Option<Lines>,
    mask: usize,
    capacity: usize,
}

/// Where a key lives: its 16-bit signature and its two candidate buckets.
#[derive(Debug, Clone, Copy)]
struct Place {
    sig: u16,
    primary: usize,
}

impl<V: Copy> CuckooTable<V> {
    /// A table for up to `capacity` entries (at least 1) with values laid out as `layout` says. The entry
    /// and control-block arrays are reserved, not touched, and the buckets held sparsely, so memory is
    /// committed only as flows arrive.
    pub fn with_capacity(capacity: usize, layout: Layout) -> CuckooTable<V> {
        let capacity = capacity.clamp(1, u32::MAX as usize - 1);
        let buckets = ((capacity as f64 / SLOTS as f64 / LOAD).ceil() as usize).next_power_of_two();
        CuckooTable {
            buckets: SparseArray::new(buckets),
            entries: Vec::with_capacity(capacity),
            sigs: Vec::new(),
            blocks: (layout == Layout::ControlBlock).then(|| Lines::new(capacity)),
            mask: buckets - 1,
            capacity,
        }
    }

    /// The memory of the control blocks' and the entry array's whole capacity and of the buckets
    /// ([`crate::App::tables`]), in that order: the simulator starts the LLC with the tables written
    /// last, and `rte_hash` zeroes its buckets when the table is built while the rest is only reserved.
    pub fn tables(&self) -> Vec<std::ops::Range<usize>> {
        let blocks = self.blocks.iter().map(Lines::span);
        blocks.chain([crate::span(self.entries.as_ptr(), self.entries.capacity()), self.buckets.span()]).collect()
    }

    /// Flows stored.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether no flow is stored.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Most flows the table holds.
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    fn place(&self, hash: u64) -> Place {
        Place { sig: (hash >> 48) as u16, primary: hash as usize & self.mask }
    }

    /// The other bucket of an entry with signature `sig` that sits in bucket `b` (an involution).
    fn alt(&self, b: usize, sig: u16) -> usize {
        (b ^ (usize::from(sig).wrapping_mul(0x5bd1_e995) | 1)) & self.mask
    }

    /// Report an access to bucket `b` (its whole line).
    #[inline]
    #[track_caller]
    fn touch_bucket<P: Probe>(&self, p: &mut P, b: usize, access: Access) {
        p.touch(self.buckets.addr(b), LINE, access);
    }

    /// Find `key` (whose [`FlowKey::hash`] is `hash`) in bucket `b`, reporting the bucket and entry reads.
    fn find_in<P: Probe>(&self, p: &mut P, b: usize, sig: u16, key: &FlowKey) -> Option<usize> {
        let bucket = self.buckets.get(b);
        self.touch_bucket(p, b, Access::Read);
        p.work(SIG_WORK);
        for slot in bucket.slots {
            if let Some(i) = (slot as usize).checked_sub(1).filter(|&i| self.sigs[i] == sig) {
                let e = &self.entries[i];
                p.read(e);
                p.work(KEY_WORK);
                if e.key == *key {
                    return Some(i);
                }
            }
        }
        None
    }

    /// Look `key` up; `hash` must be `key.hash()` (passed in so callers hash once). With control blocks,
    /// the flow's block is read for its value and written with the time it was seen.
    pub fn get<P: Probe>(&self, p: &mut P, key: &FlowKey, hash: u64) -> Option<V> {
        p.work(HASH_WORK);
        let pl = self.place(hash);
        let i = self
            .find_in(p, pl.primary, pl.sig, key)
            .or_else(|| self.find_in(p, self.alt(pl.primary, pl.sig), pl.sig, key))?;
        if let Some(blocks) = &self.blocks {
            p.touch(blocks.addr(i), LINE, Access::Read);
            p.touch(blocks.addr(i), LINE, Access::Write);
        }
        Some(self.entries[i].value)
    }

    fn free_slot(&self, b: usize) -> Option<usize> {
        self.buckets.get(b).slots.iter().position(|&s| s == 0)
    }

    /// Insert `key` (not present; `hash` = `key.hash()`) with `value`. Reports the bucket reads of the
    /// path search, and the writes of moved slots and of the new entry.
    pub fn insert<P: Probe>(&mut self, p: &mut P, key: FlowKey, hash: u64, value: V) -> Result<(), TableFull> {
        if self.entries.len() >= self.capacity {
            return Err(TableFull);
        }
        let pl = self.place(hash);
        // Find a path: bucket, slot pairs ending at a free slot; path[i]'s occupant moves to path[i + 1].
        let mut path = [(0usize, 0usize); MAX_PATH];
        let mut len = 0;
        let mut b = pl.primary;
        for step in 0..MAX_PATH {
            self.touch_bucket(p, b, Access::Read);
            if let Some(s) = self.free_slot(b) {
                path[len] = (b, s);
                len += 1;
                break;
            }
            let alt = self.alt(pl.primary, pl.sig);
            if step == 0 && self.free_slot(alt).is_some() {
                b = alt;
                continue;
            }
            // Evict a slot chosen by step and hash (so that repeated inserts try different victims) that is
            // not on the path already: a path through one slot twice would lose an entry when executed.
            let start = step + (hash >> 32) as usize;
            let Some(s) = (0..SLOTS).map(|i| (start + i) % SLOTS).find(|&s| !path[..len].contains(&(b, s))) else {
                return Err(TableFull);
            };
            path[len] = (b, s);
            len += 1;
            b = self.alt(b, self.sigs[self.buckets.get(b).slots[s] as usize - 1]);
            if len == MAX_PATH {
                return Err(TableFull);
            }
        }
        if len == 0 || self.buckets.get(path[len - 1].0).slots[path[len - 1].1] != 0 {
            return Err(TableFull);
        }
        // Move occupants one step along the path, from the free end back to the start.
        for i in (1..len).rev() {
            let (from_b, from_s) = path[i - 1];
            let (to_b, to_s) = path[i];
            let from = self.buckets.get(from_b);
            self.buckets.get_mut(to_b).slots[to_s] = from.slots[from_s];
            self.touch_bucket(p, to_b, Access::Write);
        }
        let (b, s) = path[0];
        self.entries.push(Entry { key, value });
        self.sigs.push(pl.sig);
        self.buckets.get_mut(b).slots[s] = self.entries.len() as u32;
        self.touch_bucket(p, b, Access::Write);
        p.write(&self.entries[self.entries.len() - 1]);
        if let Some(blocks) = &self.blocks {
            p.touch(blocks.addr(self.entries.len() - 1), LINE, Access::Write);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ifaces::probe::{Access, CountingProbe};
    use std::collections::HashMap;

    fn key(i: u32) -> FlowKey {
        FlowKey { src: i, dst: i.rotate_left(7) ^ 0x0a00_0001, src_port: i as u16, dst_port: 80, proto: 17 }
    }

    #[test]
    fn holds_what_was_inserted_up_to_high_load() {
        let n = 20_000;
        let mut t = CuckooTable::<u32>::with_capacity(n, Layout::Inline);
        let mut p = CountingProbe::default();
        let mut oracle = HashMap::new();
        for i in 0..n as u32 {
            let k = key(i);
            assert_eq!(t.get(&mut p, &k, k.hash()), None);
            if t.insert(&mut p, k, k.hash(), i * 3).is_ok() {
                oracle.insert(k, i * 3);
            }
        }
        // An 8-way cuckoo table at 85% target load places (nearly) everything.
        assert!(oracle.len() as f64 >= 0.99 * n as f64, "{}", oracle.len());
        for (k, v) in &oracle {
            assert_eq!(t.get(&mut p, k, k.hash()), Some(*v));
        }
        assert_eq!(t.insert(&mut p, key(n as u32 + 1), key(n as u32 + 1).hash(), 0).is_err(), oracle.len() == n);
    }

    #[test]
    fn lookups_report_buckets_and_entries() {
        let mut t = CuckooTable::<u64>::with_capacity(64, Layout::Inline);
        let mut p = CountingProbe::default();
        let k = key(1);
        t.insert(&mut p, k, k.hash(), 9).unwrap();
        let mut p = CountingProbe::default();
        assert_eq!(t.get(&mut p, &k, k.hash()), Some(9));
        // The primary bucket and the entry (a hit in the alternate bucket would add one more bucket).
        assert!(p.touches[0] == 2 || p.touches[0] == 3, "{:?}", p.touches);
    }

    #[test]
    fn control_blocks_hold_the_values_in_lines_of_their_own() {
        let n = 5_000;
        let mut t = CuckooTable::<u32>::with_capacity(n, Layout::ControlBlock);
        let mut p = CountingProbe::default();
        for i in 0..n as u32 {
            let k = key(i);
            t.insert(&mut p, k, k.hash(), i + 7).unwrap();
        }
        for i in 0..n as u32 {
            let k = key(i);
            assert_eq!(t.get(&mut p, &k, k.hash()), Some(i + 7));
        }
        let k = key(3);
        let mut p = CountingProbe::default();
        t.get(&mut p, &k, k.hash());
        // The bucket(s), the key, and the flow's control block read then written.
        assert!(p.touches[0] == 3 || p.touches[0] == 4, "{:?}", p.touches);
        assert_eq!(p.touches[1], 1, "{:?}", p.touches);
        assert_eq!(t.tables().len(), 3);
    }

    /// A probe that records each touch as (table, offset in it, length, access, load site), the load
    /// site numbered in order of first appearance: what the simulator sees of a table whatever host
    /// addresses it has.
    struct Recorder {
        tables: Vec<std::ops::Range<usize>>,
        sites: Vec<&'static std::panic::Location<'static>>,
        touches: Vec<(usize, usize, usize, Access, usize)>,
    }

    impl Recorder {
        fn new<V: Copy>(t: &CuckooTable<V>) -> Recorder {
            Recorder { tables: t.tables(), sites: Vec::new(), touches: Vec::new() }
        }

        /// FNV-1a over the recorded touches.
        fn digest(&self) -> u64 {
            let words = self.touches.iter().flat_map(|&(t, o, l, a, s)| [t, o, l, a as usize, s]);
            words.fold(0xcbf2_9ce4_8422_2325, |h, w| (h ^ w as u64).wrapping_mul(0x100_0000_01b3))
        }
    }

    impl Probe for Recorder {
        #[track_caller]
        fn touch(&mut self, addr: usize, len: usize, access: Access) {
            let t = self.tables.iter().position(|r| r.contains(&addr) && addr + len <= r.end);
            let t = t.unwrap_or_else(|| panic!("touch at {addr:#x}+{len} outside the tables {:x?}", self.tables));
            let loc = std::panic::Location::caller();
            let site = match self.sites.iter().position(|&s| std::ptr::eq(s, loc)) {
                Some(s) => s,
                None => {
                    self.sites.push(loc);
                    self.sites.len() - 1
                }
            };
            self.touches.push((t, addr - self.tables[t].start, len, access, site));
        }
        fn work(&mut self, _: u32) {}
        fn mmio_write(&mut self, _: usize, _: usize) {}
        fn lock(&mut self, _: usize) {}
        fn unlock(&mut self, _: usize) {}
        fn phase(&mut self, phase: ifaces::Phase) -> ifaces::Phase {
            phase
        }
        fn now_ns(&self) -> u64 {
            0
        }
    }

    /// Fill a table of 512 buckets to 85 % (cuckoo paths move entries), looking each key up before
    /// inserting it, then look every key and a few absent ones up: (flows placed, lookups that hit, bucket
    /// writes, load sites, digest of the touches).
    fn fill(layout: Layout) -> (usize, usize, usize, usize, u64) {
        let n = 3480;
        let mut t = CuckooTable::<u32>::with_capacity(n, layout);
        let mut p = Recorder::new(&t);
        let (mut placed, mut hits) = (0, 0);
        for i in 0..n as u32 {
            let k = key(i);
            assert_eq!(t.get(&mut p, &k, k.hash()), None);
            placed += usize::from(t.insert(&mut p, k, k.hash(), i).is_ok());
        }
        for i in 0..n as u32 + 20 {
            let k = key(i);
            let v = t.get(&mut p, &k, k.hash());
            assert!(v.is_none() || v == Some(i));
            hits += usize::from(v.is_some());
        }
        let buckets = p.tables.len() - 1;
        let writes = p.touches.iter().filter(|t| t.0 == buckets && t.3 == Access::Write).count();
        (placed, hits, writes, p.sites.len(), p.digest())
    }

    #[test]
    fn touches_are_those_recorded_from_the_dense_bucket_array() {
        // Pinned values, computed with every bucket an element of a dense array. More bucket writes than
        // flows placed are the moves along cuckoo paths.
        for (layout, expected) in [
            (Layout::Inline, (3480, 3480, 3639, 6, 15065317597692119091)),
            (Layout::ControlBlock, (3480, 3480, 3639, 9, 2987689531736385935)),
        ] {
            assert_eq!(fill(layout), expected, "{layout:?}");
        }
    }

    #[test]
    fn lookups_report_each_bucket_at_its_place_in_the_bucket_range() {
        let t = CuckooTable::<u32>::with_capacity(1000, Layout::Inline);
        let k = key(7);
        let mut p = Recorder::new(&t);
        assert_eq!(t.get(&mut p, &k, k.hash()), None);
        let Place { sig, primary } = t.place(k.hash());
        let buckets = p.tables.len() - 1;
        assert_eq!(p.tables[buckets].len(), (t.mask + 1) * 64);
        let touched: Vec<_> = p.touches.iter().map(|&(t, offset, len, access, _)| (t, offset, len, access)).collect();
        let bucket = |b: usize| (buckets, b * 64, 64, Access::Read);
        assert_eq!(touched, [bucket(primary), bucket(t.alt(primary, sig))]);
    }
}
