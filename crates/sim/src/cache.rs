//! A set-associative cache array over real line addresses with true LRU: the simulator's hot path.
//!
//! Layout: per set, one 128-byte record. Its first 64-byte host line holds everything a lookup that
//! misses reads and all the metadata: an 8-bit fingerprint of each way's tag (0 for an invalid way),
//! one-byte LRU ages, and bit masks for valid, dirty and two flags the owner of the array may use. The
//! adjacent line holds the 16 compact `u32` tags. A lookup compares the 16 fingerprints at once (one
//! vector compare) and reads the full tag only of a way whose fingerprint matches, so a miss usually
//! reads one host line. A DMA sweep over consecutive lines walks the array sequentially.
//!
//! Sets are indexed by the low bits of the line address (real LLCs hash lines over slices; with modulo
//! indexing, buffers 2 KiB apart fall into every 32nd set, as they do within one slice).

/// Most ways a cache may have.
pub const MAX_WAYS: usize = 16;
/// The tag of an invalid way (no line address maps to it: simulated addresses stay below 2^42 bytes).
const INVALID: u32 = u32::MAX;

/// One set: fingerprints and metadata in one host cache line, tags in the next.
#[derive(Debug, Clone, Copy)]
#[repr(C, align(64))]
struct Set {
    /// Fingerprint of each way's tag ([`Key`], never 0), or 0 for an invalid way.
    fp: [u8; MAX_WAYS],
    /// LRU rank of each way: 0 is most recent; unused ways hold 255 and never age.
    age: [u8; MAX_WAYS],
    valid: u16,
    dirty: u16,
    /// Owner-defined flag A (the LLC: some core holds the line in its private caches).
    flag_a: u16,
    /// Owner-defined flag B (the LLC: a core holds the line modified).
    flag_b: u16,
    tags: [u32; MAX_WAYS],
}

/// Of 16 bytes, the ones equal to `b`, as a bit mask (bit i for byte i): one byte-compare and one mask
/// extraction.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn bytes_equal(bytes: [u8; MAX_WAYS], b: u8) -> u16 {
    use std::arch::x86_64::{_mm_cmpeq_epi8, _mm_loadu_si128, _mm_movemask_epi8, _mm_set1_epi8};
    // SAFETY: SSE2 is part of the x86-64 baseline, and the load reads the 16 bytes of `bytes`.
    #[allow(unsafe_code)]
    unsafe {
        let v = _mm_loadu_si128(bytes.as_ptr().cast());
        _mm_movemask_epi8(_mm_cmpeq_epi8(v, _mm_set1_epi8(b as i8))) as u16
    }
}

/// [`bytes_equal`] elsewhere.
#[cfg(not(target_arch = "x86_64"))]
#[inline(always)]
fn bytes_equal(bytes: [u8; MAX_WAYS], b: u8) -> u16 {
    bytes.iter().enumerate().fold(0, |m, (i, &x)| m | u16::from(x == b) << i)
}

/// A tag with its 8-bit fingerprint, never 0 (the mark of an invalid way). Consecutive lines share
/// their tag until the set index wraps, so a run of lines computes it once per wrap.
#[derive(Debug, Clone, Copy)]
struct Key {
    tag: u32,
    fp: u8,
}

impl Key {
    #[inline(always)]
    fn new(tag: u32) -> Key {
        Key { tag, fp: ((tag.wrapping_mul(0x9E37_79B1) >> 24) as u8).max(1) }
    }
}

/// Where a line sits: its set and way.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Slot {
    /// Set index.
    pub set: u32,
    /// Way within the set.
    pub way: u32,
}

impl Slot {
    /// A dense index over all slots, for per-line side tables.
    #[inline]
    pub fn index(self) -> usize {
        self.set as usize * MAX_WAYS + self.way as usize
    }
}

/// A line pushed out of the cache.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Evicted {
    /// Its line address (byte address / 64).
    pub line: u64,
    /// Whether it was dirty.
    pub dirty: bool,
    /// Flag A as it was.
    pub flag_a: bool,
}

/// A line found by [`SetAssoc::access`]: where it is and its state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Hit {
    /// Its slot.
    pub slot: Slot,
    /// Whether it is dirty.
    pub dirty: bool,
    /// Flag A.
    pub flag_a: bool,
    /// Flag B.
    pub flag_b: bool,
}

/// Where a line that [`SetAssoc::access`] did not find goes: its set and key.
#[derive(Debug, Clone, Copy)]
pub struct Miss {
    set: usize,
    key: Key,
}

/// A line whose flag A was set when a [`SetAssoc::write_run`] updated or replaced it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shootdown {
    /// Its line address.
    pub line: u64,
    /// The slot it was in.
    pub slot: Slot,
    /// If it was replaced, whether it was dirty; `None` if it was updated in place.
    pub replaced_dirty: Option<bool>,
}

/// A set-associative array of `sets` x `ways` lines.
#[derive(Debug, Clone)]
pub struct SetAssoc {
    set_bits: u32,
    ways: usize,
    sets: Vec<Set>,
}

impl Set {
    /// The way holding `k`, if any: the ways whose fingerprint matches, checked against the full tag.
    #[inline(always)]
    fn way_of(&self, k: Key) -> Option<u32> {
        let mut candidates = bytes_equal(self.fp, k.fp);
        while candidates != 0 {
            let w = candidates.trailing_zeros();
            if self.tags[w as usize & (MAX_WAYS - 1)] == k.tag {
                return Some(w);
            }
            candidates &= candidates - 1;
        }
        None
    }

    /// Make `way` the most recently used.
    #[inline(always)]
    fn touch(&mut self, way: u32) {
        let age = &mut self.age;
        let a = age[way as usize & (MAX_WAYS - 1)];
        for x in age.iter_mut() {
            *x += u8::from(*x < a);
        }
        age[way as usize & (MAX_WAYS - 1)] = 0;
    }

    /// The way of `mask` (non-empty) to replace: an invalid one if there is one, else the least recently
    /// used. `all` is the mask of every way and `oldest` the age of the least recently used way.
    ///
    /// The ages of a set's ways are always a permutation of `0..ways` (fills and touches keep it so), so
    /// the least recently used of all ways is the one aged `ways - 1`, the only byte of that value; a
    /// narrower mask (the DDIO ways) scans only its own ways.
    #[inline(always)]
    fn victim(&self, mask: u16, all: u16, oldest: u8) -> u32 {
        let free = mask & !self.valid;
        if free != 0 {
            return free.trailing_zeros();
        }
        if mask == all {
            return bytes_equal(self.age, oldest).trailing_zeros();
        }
        let (mut rest, mut best) = (mask, (0u8, 0u32));
        while rest != 0 {
            let w = rest.trailing_zeros();
            rest &= rest - 1;
            let a = self.age[w as usize & (MAX_WAYS - 1)];
            if a >= best.0 {
                best = (a, w);
            }
        }
        best.1
    }

    /// Put `k` in `way` as the most recently used line, with both flags clear. Returns the tag it
    /// replaced with that line's dirty bit and flag A, if the way was valid.
    #[inline(always)]
    fn put(&mut self, way: u32, k: Key, dirty: bool) -> Option<(u32, bool, bool)> {
        let bit = 1u16 << way;
        let w = way as usize & (MAX_WAYS - 1);
        let old = (self.valid & bit != 0).then(|| (self.tags[w], self.dirty & bit != 0, self.flag_a & bit != 0));
        self.tags[w] = k.tag;
        self.fp[w] = k.fp;
        self.valid |= bit;
        self.dirty = (self.dirty & !bit) | if dirty { bit } else { 0 };
        self.flag_a &= !bit;
        self.flag_b &= !bit;
        self.touch(way);
        old
    }
}

impl SetAssoc {
    /// An empty cache; `sets` must be a power of two and `ways` at most [`MAX_WAYS`].
    pub fn new(sets: usize, ways: usize) -> SetAssoc {
        assert!(sets.is_power_of_two() && (1..=MAX_WAYS).contains(&ways), "cache geometry checked by the profile");
        let mut age = [u8::MAX; MAX_WAYS];
        for (w, a) in age.iter_mut().enumerate().take(ways) {
            *a = w as u8;
        }
        let empty = Set { fp: [0; MAX_WAYS], age, valid: 0, dirty: 0, flag_a: 0, flag_b: 0, tags: [INVALID; MAX_WAYS] };
        SetAssoc { set_bits: sets.trailing_zeros(), ways, sets: vec![empty; sets] }
    }

    /// Number of ways.
    pub fn ways(&self) -> usize {
        self.ways
    }

    /// Lines the cache holds.
    pub fn lines(&self) -> u64 {
        (self.sets.len() * self.ways) as u64
    }

    /// Mask of every way.
    pub fn all_ways(&self) -> u16 {
        ((1u32 << self.ways) - 1) as u16
    }

    #[inline(always)]
    fn split(&self, line: u64) -> (usize, Key) {
        let set = line as usize & (self.sets.len() - 1);
        let tag = line >> self.set_bits;
        debug_assert!(tag < u64::from(INVALID), "line {line:#x} does not fit a 32-bit tag");
        (set, Key::new(tag as u32))
    }

    /// The `n` lines from `first` as stretches of consecutive sets that share a key, each (first set,
    /// number of sets, key): the key is computed once per wrap of the set index.
    #[inline(always)]
    fn stretches(&self, first: u64, n: u64) -> impl Iterator<Item = (usize, usize, Key)> + use<> {
        let (sets, set_bits) = (self.sets.len(), self.set_bits);
        let (mut line, end) = (first, first + n);
        std::iter::from_fn(move || {
            (line < end).then(|| {
                let start = line as usize & (sets - 1);
                let count = (end - line).min((sets - start) as u64) as usize;
                let key = Key::new((line >> set_bits) as u32);
                line += count as u64;
                (start, count, key)
            })
        })
    }

    /// Start loading the record of `line`'s set into the host's caches, so that the lookups that follow
    /// find it there and several such loads overlap. (A plain load whose value goes to
    /// [`std::hint::black_box`]: a prefetch instruction would need `unsafe`.)
    #[inline(always)]
    pub fn preload(&self, line: u64) {
        std::hint::black_box(self.sets[line as usize & (self.sets.len() - 1)].valid);
    }

    /// The slot holding `line`, if cached.
    #[inline(always)]
    pub fn find(&self, line: u64) -> Option<Slot> {
        let (set, tag) = self.split(line);
        self.sets[set].way_of(tag).map(|way| Slot { set: set as u32, way })
    }

    /// Look `line` up and, if cached, make it the most recently used line of its set; if not, where to
    /// [`install`](Self::install) it.
    #[inline(always)]
    pub fn access(&mut self, line: u64) -> Result<Hit, Miss> {
        let (set, key) = self.split(line);
        let s = &mut self.sets[set];
        let Some(way) = s.way_of(key) else { return Err(Miss { set, key }) };
        s.touch(way);
        Ok(Hit {
            slot: Slot { set: set as u32, way },
            dirty: s.dirty >> way & 1 != 0,
            flag_a: s.flag_a >> way & 1 != 0,
            flag_b: s.flag_b >> way & 1 != 0,
        })
    }

    /// Put the line that `miss` missed in its set as the most recently used line, with both flags
    /// clear, replacing a way of `mask` (non-empty): an invalid one if there is one, else the least
    /// recently used. Returns its slot and the line it replaced.
    #[inline]
    pub fn install(&mut self, miss: Miss, mask: u16, dirty: bool) -> (Slot, Option<Evicted>) {
        let Miss { set, key } = miss;
        let (set_bits, oldest, all) = (self.set_bits, (self.ways - 1) as u8, self.all_ways());
        let s = &mut self.sets[set];
        let way = s.victim(mask, all, oldest);
        let old = s.put(way, key, dirty).map(|(t, dirty, flag_a)| Evicted {
            line: (u64::from(t) << set_bits) | set as u64,
            dirty,
            flag_a,
        });
        (Slot { set: set as u32, way }, old)
    }

    /// A DMA write of the `n` lines from `first`: each line cached is updated in place (made dirty and
    /// most recently used, both flags cleared); each other line is installed dirty among the ways of
    /// `mask`, or, with `mask` empty, not cached at all.
    ///
    /// Lines whose flag A was set, updated or replaced, are pushed to `shootdowns` for the owner (whose
    /// private copies must go); their slots keep whatever the owner keeps per slot. Returns the number
    /// of hits and the number of lines that go to DRAM: the uncached ones, and the dirty lines replaced
    /// other than those in `shootdowns`.
    #[inline]
    pub fn write_run(&mut self, first: u64, n: u64, mask: u16, shootdowns: &mut Vec<Shootdown>) -> (u64, u64) {
        let (set_bits, oldest, all) = (self.set_bits, (self.ways - 1) as u8, self.all_ways());
        let (mut hits, mut to_dram) = (0, 0);
        for (start, count, key) in self.stretches(first, n) {
            for (i, s) in self.sets[start..start + count].iter_mut().enumerate() {
                let set = start + i;
                if let Some(way) = s.way_of(key) {
                    hits += 1;
                    s.touch(way);
                    let bit = 1u16 << way;
                    if s.flag_a & bit != 0 {
                        let line = (u64::from(key.tag) << set_bits) | set as u64;
                        shootdowns.push(Shootdown { line, slot: Slot { set: set as u32, way }, replaced_dirty: None });
                    }
                    s.dirty |= bit;
                    s.flag_a &= !bit;
                    s.flag_b &= !bit;
                } else if mask == 0 {
                    to_dram += 1;
                } else {
                    let way = s.victim(mask, all, oldest);
                    match s.put(way, key, true) {
                        Some((t, dirty, true)) => shootdowns.push(Shootdown {
                            line: (u64::from(t) << set_bits) | set as u64,
                            slot: Slot { set: set as u32, way },
                            replaced_dirty: Some(dirty),
                        }),
                        Some((_, dirty, false)) => to_dram += u64::from(dirty),
                        None => {}
                    }
                }
            }
        }
        (hits, to_dram)
    }

    /// How many of the `n` lines from `first` are not cached.
    #[inline]
    pub fn misses(&self, first: u64, n: u64) -> u64 {
        let sets = &self.sets;
        self.stretches(first, n)
            .map(|(start, count, key)| sets[start..start + count].iter().filter(|s| s.way_of(key).is_none()).count())
            .sum::<usize>() as u64
    }

    /// Drop the line in `s`; returns whether it was dirty.
    #[inline]
    pub fn invalidate(&mut self, s: Slot) -> bool {
        let bit = 1u16 << s.way;
        let w = s.way as usize & (MAX_WAYS - 1);
        let m = &mut self.sets[s.set as usize];
        let dirty = m.dirty & bit != 0;
        m.tags[w] = INVALID;
        m.fp[w] = 0;
        m.valid &= !bit;
        m.dirty &= !bit;
        m.flag_a &= !bit;
        m.flag_b &= !bit;
        dirty
    }

    /// Whether the line in `s` is dirty.
    #[inline(always)]
    pub fn dirty(&self, s: Slot) -> bool {
        self.sets[s.set as usize].dirty & (1 << s.way) != 0
    }

    /// Set or clear the dirty bit of `s`.
    #[inline(always)]
    pub fn set_dirty(&mut self, s: Slot, on: bool) {
        let m = &mut self.sets[s.set as usize];
        m.dirty = (m.dirty & !(1 << s.way)) | (u16::from(on) << s.way);
    }

    /// Flag A of `s`.
    #[inline(always)]
    pub fn flag_a(&self, s: Slot) -> bool {
        self.sets[s.set as usize].flag_a & (1 << s.way) != 0
    }

    /// Set or clear flag A of `s`.
    #[inline(always)]
    pub fn set_flag_a(&mut self, s: Slot, on: bool) {
        let m = &mut self.sets[s.set as usize];
        m.flag_a = (m.flag_a & !(1 << s.way)) | (u16::from(on) << s.way);
    }

    /// Set or clear flag B of `s`.
    #[inline(always)]
    pub fn set_flag_b(&mut self, s: Slot, on: bool) {
        let m = &mut self.sets[s.set as usize];
        m.flag_b = (m.flag_b & !(1 << s.way)) | (u16::from(on) << s.way);
    }

    /// Set the dirty bit and both flags of `s` at once.
    #[inline(always)]
    pub fn set_state(&mut self, s: Slot, dirty: bool, flag_a: bool, flag_b: bool) {
        let m = &mut self.sets[s.set as usize];
        let bit = 1u16 << s.way;
        let put = |v: u16, on: bool| (v & !bit) | if on { bit } else { 0 };
        m.dirty = put(m.dirty, dirty);
        m.flag_a = put(m.flag_a, flag_a);
        m.flag_b = put(m.flag_b, flag_b);
    }

    /// Lines currently valid (for tests and reports).
    pub fn occupancy(&self) -> usize {
        self.sets.iter().map(|s| s.valid.count_ones() as usize).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Install `line`, which is not cached.
    fn install(c: &mut SetAssoc, line: u64, mask: u16, dirty: bool) -> (Slot, Option<Evicted>) {
        let miss = c.access(line).expect_err("not cached");
        c.install(miss, mask, dirty)
    }

    /// Lines that map to set 0 of a cache with `sets` sets.
    fn same_set(sets: u64, i: u64) -> u64 {
        i * sets
    }

    #[test]
    fn lru_replaces_the_least_recently_used_way() {
        let mut c = SetAssoc::new(4, 4);
        let all = c.all_ways();
        for i in 0..4 {
            let l = same_set(4, i);
            assert_eq!(install(&mut c, l, all, false).1, None);
        }
        // Touch line 0 again: line 1 is now the LRU.
        assert!(c.access(0).is_ok());
        let ev = install(&mut c, same_set(4, 9), all, false).1.unwrap();
        assert_eq!(ev.line, same_set(4, 1));
        assert!(c.find(same_set(4, 1)).is_none());
        assert!(c.find(0).is_some() && c.find(same_set(4, 9)).is_some());
        assert_eq!(c.occupancy(), 4);
    }

    #[test]
    fn masks_restrict_victims_and_dirty_lines_report_it() {
        let mut c = SetAssoc::new(2, 4);
        let high = 0b1100;
        for i in 0..3 {
            let (v, _) = install(&mut c, same_set(2, i), high, true);
            assert!(v.way >= 2);
        }
        // Three fills into two ways: the first line was evicted dirty.
        assert!(c.find(0).is_none());
        assert_eq!(c.occupancy(), 2);
        let s = c.find(same_set(2, 2)).unwrap();
        assert!(c.dirty(s));
        assert!(c.invalidate(s));
        assert!(c.find(same_set(2, 2)).is_none());
    }

    #[test]
    fn a_full_set_evicts_its_oldest_way_after_masked_fills_and_touches() {
        let mut c = SetAssoc::new(1, 4);
        let all = c.all_ways();
        for i in 0..4 {
            install(&mut c, i, all, false);
        }
        // Lines 4 and 5 replace the older of ways 2 and 3 each time; then line 1 is touched.
        install(&mut c, 4, 0b1100, true);
        install(&mut c, 5, 0b1100, false);
        let hit = c.access(1).unwrap();
        assert_eq!((hit.slot.way, hit.dirty, hit.flag_a, hit.flag_b), (1, false, false, false));
        // Recency is now 1, 5, 4, 0 (most recent first): the whole set's victim is line 0, then 4.
        assert_eq!(install(&mut c, 6, all, false).1.map(|e| e.line), Some(0));
        let ev = install(&mut c, 7, all, false).1.unwrap();
        assert_eq!((ev.line, ev.dirty), (4, true));
    }

    #[test]
    fn runs_wrap_around_the_set_index() {
        let mut c = SetAssoc::new(4, 2);
        let all = c.all_ways();
        let mut shootdowns = Vec::new();
        // Lines 2..6 fill sets 2, 3, 0, 1; a second write of 4..8 hits 4 and 5.
        assert_eq!(c.write_run(2, 4, all, &mut shootdowns), (0, 0));
        assert_eq!(c.write_run(4, 4, all, &mut shootdowns), (2, 0));
        assert!(shootdowns.is_empty());
        assert_eq!(c.misses(0, 8), 2);
        assert!(c.find(3).is_some_and(|s| s.set == 3 && c.dirty(s)));
        // Line 0 takes set 0's free way; line 8 then replaces line 4, the older, dirty: it goes to DRAM.
        assert_eq!(c.write_run(0, 1, all, &mut shootdowns), (0, 0));
        assert_eq!(c.write_run(8, 1, all, &mut shootdowns), (0, 1));
        assert!(c.find(4).is_none() && c.find(0).is_some());
    }

    #[test]
    fn line_addresses_round_trip_through_tags() {
        let mut c = SetAssoc::new(1024, 16);
        let all = c.all_ways();
        let line = 0x7f12_3456_789a_u64 >> 6;
        install(&mut c, line, all, false);
        for i in 1..16 {
            install(&mut c, line + i * 1024, all, false);
        }
        let ev = install(&mut c, line + 16 * 1024, all, false).1.unwrap();
        assert_eq!(ev.line, line);
    }
}
