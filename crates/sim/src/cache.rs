//! A set-associative cache array over real line addresses with true LRU: the simulator's hot path.
//!
//! Layout: per set, one 128-byte record: 16 compact `u32` tags in one 64-byte host line, and in the
//! adjacent line the metadata, one-byte LRU ages and bit masks for valid, dirty and two flags the owner
//! of the array may use (adjacent, so the host's adjacent-line prefetch brings both). An
//! invalid way holds the tag `INVALID`, so a lookup compares all 16 tags branch-free (the compiler
//! turns it into a vector compare) and reads one host cache line; only replacement and state changes
//! read the metadata. A DMA sweep over consecutive lines walks the arrays sequentially.
//!
//! Sets are indexed by the low bits of the line address (real LLCs hash lines over slices; with modulo
//! indexing, buffers 2 KiB apart fall into every 32nd set, as they do within one slice).

/// Most ways a cache may have.
pub const MAX_WAYS: usize = 16;
/// The tag of an invalid way (no line address maps to it: simulated addresses stay below 2^42 bytes).
const INVALID: u32 = u32::MAX;

/// One set: its tags in one host cache line, its metadata in the next.
#[derive(Debug, Clone, Copy)]
#[repr(C, align(64))]
struct Set {
    tags: [u32; MAX_WAYS],
    meta: Meta,
}

/// Metadata of one set.
#[derive(Debug, Clone, Copy)]
#[repr(C)]
struct Meta {
    /// LRU rank of each way: 0 is most recent; unused ways hold 255 and never age.
    age: [u8; MAX_WAYS],
    valid: u16,
    dirty: u16,
    /// Owner-defined flag A (the LLC: some core holds the line in its private caches).
    flag_a: u16,
    /// Owner-defined flag B (the LLC: a core holds the line modified).
    flag_b: u16,
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

/// A set-associative array of `sets` x `ways` lines.
#[derive(Debug, Clone)]
pub struct SetAssoc {
    set_bits: u32,
    ways: usize,
    sets: Vec<Set>,
}

impl SetAssoc {
    /// An empty cache; `sets` must be a power of two and `ways` at most [`MAX_WAYS`].
    pub fn new(sets: usize, ways: usize) -> SetAssoc {
        assert!(sets.is_power_of_two() && (1..=MAX_WAYS).contains(&ways), "cache geometry checked by the profile");
        let mut age = [u8::MAX; MAX_WAYS];
        for (w, a) in age.iter_mut().enumerate().take(ways) {
            *a = w as u8;
        }
        let meta = Meta { age, valid: 0, dirty: 0, flag_a: 0, flag_b: 0 };
        SetAssoc { set_bits: sets.trailing_zeros(), ways, sets: vec![Set { tags: [INVALID; MAX_WAYS], meta }; sets] }
    }

    /// Number of ways.
    pub fn ways(&self) -> usize {
        self.ways
    }

    /// Mask of every way.
    pub fn all_ways(&self) -> u16 {
        ((1u32 << self.ways) - 1) as u16
    }

    #[inline(always)]
    fn split(&self, line: u64) -> (usize, u32) {
        let set = (line & ((1 << self.set_bits) - 1)) as usize;
        let tag = line >> self.set_bits;
        debug_assert!(tag < u64::from(INVALID), "line {line:#x} does not fit a 32-bit tag");
        (set, tag as u32)
    }

    /// The slot holding `line`, if cached.
    #[inline(always)]
    pub fn find(&self, line: u64) -> Option<Slot> {
        let (set, tag) = self.split(line);
        let tags = &self.sets[set].tags;
        let mut hits = 0u32;
        for (w, &t) in tags.iter().enumerate() {
            hits |= u32::from(t == tag) << w;
        }
        (hits != 0).then(|| Slot { set: set as u32, way: hits.trailing_zeros() })
    }

    /// Make `s` the most recently used line of its set.
    #[inline(always)]
    pub fn touch(&mut self, s: Slot) {
        let age = &mut self.sets[s.set as usize].meta.age;
        let a = age[s.way as usize];
        for x in age.iter_mut() {
            *x += u8::from(*x < a);
        }
        age[s.way as usize] = 0;
    }

    /// The way to replace in the set of `line` among the ways in `mask` (non-empty): an invalid way if
    /// there is one, else the least recently used.
    #[inline]
    pub fn victim(&self, line: u64, mask: u16) -> Slot {
        let (set, _) = self.split(line);
        let m = &self.sets[set].meta;
        let free = mask & !m.valid;
        let way = if free != 0 {
            free.trailing_zeros()
        } else {
            let mut best = (0u8, 0u32);
            for w in 0..self.ways as u32 {
                if mask & (1 << w) != 0 && m.age[w as usize] >= best.0 {
                    best = (m.age[w as usize], w);
                }
            }
            best.1
        };
        Slot { set: set as u32, way }
    }

    /// Put `line` in slot `s` as most recently used, returning the line it replaces.
    #[inline]
    pub fn fill(&mut self, s: Slot, line: u64, dirty: bool) -> Option<Evicted> {
        let (set, tag) = self.split(line);
        debug_assert_eq!(set, s.set as usize);
        let bit = 1u16 << s.way;
        let set_bits = self.set_bits;
        let Set { tags, meta: m } = &mut self.sets[set];
        let old = (m.valid & bit != 0).then(|| Evicted {
            line: (u64::from(tags[s.way as usize]) << set_bits) | set as u64,
            dirty: m.dirty & bit != 0,
            flag_a: m.flag_a & bit != 0,
        });
        tags[s.way as usize] = tag;
        m.valid |= bit;
        m.dirty = (m.dirty & !bit) | if dirty { bit } else { 0 };
        m.flag_a &= !bit;
        m.flag_b &= !bit;
        self.touch(s);
        old
    }

    /// Drop the line in `s`; returns whether it was dirty.
    #[inline]
    pub fn invalidate(&mut self, s: Slot) -> bool {
        let bit = 1u16 << s.way;
        let Set { tags, meta: m } = &mut self.sets[s.set as usize];
        let dirty = m.dirty & bit != 0;
        tags[s.way as usize] = INVALID;
        m.valid &= !bit;
        m.dirty &= !bit;
        m.flag_a &= !bit;
        m.flag_b &= !bit;
        dirty
    }

    /// Whether the line in `s` is dirty.
    #[inline(always)]
    pub fn dirty(&self, s: Slot) -> bool {
        self.sets[s.set as usize].meta.dirty & (1 << s.way) != 0
    }

    /// Set or clear the dirty bit of `s`.
    #[inline(always)]
    pub fn set_dirty(&mut self, s: Slot, on: bool) {
        let m = &mut self.sets[s.set as usize].meta;
        m.dirty = (m.dirty & !(1 << s.way)) | (u16::from(on) << s.way);
    }

    /// Flag A of `s`.
    #[inline(always)]
    pub fn flag_a(&self, s: Slot) -> bool {
        self.sets[s.set as usize].meta.flag_a & (1 << s.way) != 0
    }

    /// Set or clear flag A of `s`.
    #[inline(always)]
    pub fn set_flag_a(&mut self, s: Slot, on: bool) {
        let m = &mut self.sets[s.set as usize].meta;
        m.flag_a = (m.flag_a & !(1 << s.way)) | (u16::from(on) << s.way);
    }

    /// Flag B of `s`.
    #[inline(always)]
    pub fn flag_b(&self, s: Slot) -> bool {
        self.sets[s.set as usize].meta.flag_b & (1 << s.way) != 0
    }

    /// Set or clear flag B of `s`.
    #[inline(always)]
    pub fn set_flag_b(&mut self, s: Slot, on: bool) {
        let m = &mut self.sets[s.set as usize].meta;
        m.flag_b = (m.flag_b & !(1 << s.way)) | (u16::from(on) << s.way);
    }

    /// Lines currently valid (for tests and reports).
    pub fn occupancy(&self) -> usize {
        self.sets.iter().map(|s| s.meta.valid.count_ones() as usize).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Lines that map to set 0 of a cache with `sets` sets.
    fn same_set(sets: u64, i: u64) -> u64 {
        i * sets
    }

    #[test]
    fn lru_replaces_the_least_recently_used_way() {
        let mut c = SetAssoc::new(4, 4);
        for i in 0..4 {
            let l = same_set(4, i);
            let v = c.victim(l, c.all_ways());
            assert_eq!(c.fill(v, l, false), None);
        }
        // Touch line 0 again: line 1 is now the LRU.
        c.touch(c.find(0).unwrap());
        let v = c.victim(same_set(4, 9), c.all_ways());
        let ev = c.fill(v, same_set(4, 9), false).unwrap();
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
            let l = same_set(2, i);
            let v = c.victim(l, high);
            assert!(v.way >= 2);
            c.fill(v, l, true);
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
    fn line_addresses_round_trip_through_tags() {
        let mut c = SetAssoc::new(1024, 16);
        let line = 0x7f12_3456_789a_u64 >> 6;
        let v = c.victim(line, c.all_ways());
        c.fill(v, line, false);
        for i in 1..16 {
            let l = line + i * 1024;
            c.fill(c.victim(l, c.all_ways()), l, false);
        }
        let l = line + 16 * 1024;
        let ev = c.fill(c.victim(l, c.all_ways()), l, false).unwrap();
        assert_eq!(ev.line, line);
    }
}
