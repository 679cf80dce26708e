//! The snoop filter beside a non-inclusive LLC: the directory of the lines the cores' private caches
//! hold.
//!
//! Skylake-SP's LLC is non-inclusive (Intel support article 000027820): a line in a core's L2 need not
//! be in the LLC, so the LLC cannot say which cores hold a line. Each slice has a snoop filter instead,
//! set-associative over the same 2048 sets as the slice's LLC ways, with 12 ways to the LLC's 11 (Yan et
//! al., "Attack Directories, Not Caches: Side Channel Attacks in a Non-Inclusive World", IEEE S&P 2019,
//! §IV). It tracks every line an L2 holds, with the cores that hold it and whether one holds it
//! modified; an entry it must evict to track a new line takes the line from every core that holds it
//! (back-invalidation, Yan et al. §IV-C), which is how one core's fills can evict another core's private
//! lines on this part. Its replacement policy is not published: here it is LRU, which a directory that
//! sees every L2 fill approximates as well as any.

use crate::cache::{Lru, Miss, SetAssoc, Slot};
use crate::slices::{SliceHash, Sliced};

/// A line the filter tracks: where its entry is, the cores that hold it, and whether one of them holds
/// it modified.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Tracked {
    /// Its entry.
    pub slot: Slot,
    /// Cores that hold it in their private caches (bit per core).
    pub cores: u32,
    /// Whether one of them holds it modified (then it is the only one).
    pub modified: bool,
}

/// An entry pushed out to make room: the line and the cores whose copies must go.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Displaced {
    /// Its line address.
    pub line: u64,
    /// Cores that held it.
    pub cores: u32,
}

/// A sliced, set-associative directory of privately cached lines (module doc).
#[derive(Debug, Clone)]
pub struct SnoopFilter {
    /// Entries: flag B marks a line held modified.
    dir: SetAssoc<Lru, Sliced>,
    /// Per entry, the cores holding its line.
    cores: Vec<u32>,
}

impl SnoopFilter {
    /// A filter of `ways` ways over `sets` sets placed by `hash`, as the LLC beside it.
    pub fn new(ways: usize, sets: usize, hash: Option<&SliceHash>) -> SnoopFilter {
        SnoopFilter {
            dir: SetAssoc::new(ways, Lru, Sliced::new(sets, hash)),
            cores: vec![0; sets * crate::cache::MAX_WAYS],
        }
    }

    /// Start loading the entry set of `line` into the host's caches ([`SetAssoc::preload`]).
    #[inline(always)]
    pub fn preload(&self, line: u64) {
        self.dir.preload(line);
    }

    /// The entry of `line`, if some core holds it; the lookup does not age the set.
    #[inline]
    pub fn find(&self, line: u64) -> Option<Tracked> {
        self.dir.find(line).map(|slot| self.tracked(slot))
    }

    /// Look `line` up for a core's fill: its entry (aged as the most recently used), or where a new one
    /// goes ([`SnoopFilter::track`]).
    #[inline]
    pub fn lookup(&mut self, line: u64) -> Result<Tracked, Miss> {
        self.dir.access(line).map(|h| self.tracked(h.slot))
    }

    /// Record that `cores` hold the line of `t` now, `modified` or not; no cores frees the entry.
    #[inline]
    pub fn set(&mut self, t: Slot, cores: u32, modified: bool) {
        if cores == 0 {
            self.dir.invalidate(t);
        } else {
            self.cores[t.index()] = cores;
            self.dir.set_flag_b(t, modified);
        }
    }

    /// Track the line of `miss`, held by `cores`, `modified` or not; returns the entry displaced for it, if
    /// any, whose lines its cores must give up.
    #[inline]
    pub fn track(&mut self, miss: Miss, cores: u32, modified: bool) -> Option<Displaced> {
        let (slot, old) = self.dir.install(miss, self.dir.all_ways(), false);
        let displaced = old.map(|ev| Displaced { line: ev.line, cores: self.cores[slot.index()] });
        self.set(slot, cores, modified);
        displaced
    }

    /// Record that `core` no longer holds `line` (an L2 eviction); returns the cores still holding it.
    #[inline]
    pub fn release(&mut self, line: u64, core: usize) -> u32 {
        let Some(t) = self.find(line) else { return 0 };
        let left = t.cores & !(1 << core);
        self.set(t.slot, left, t.modified && left != 0);
        left
    }

    /// Entries in use (for tests and reports).
    pub fn occupancy(&self) -> usize {
        self.dir.occupancy()
    }

    fn tracked(&self, slot: Slot) -> Tracked {
        Tracked { slot, cores: self.cores[slot.index()], modified: self.dir.flag_b(slot) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Lines of one set of a 4-set, 2-way filter without slices: every fourth line.
    fn l(i: u64) -> u64 {
        i * 4
    }

    #[test]
    fn tracks_holders_and_displaces_the_least_recently_filled_entry() {
        let mut sf = SnoopFilter::new(2, 4, None);
        let miss = sf.lookup(l(1)).unwrap_err();
        assert_eq!(sf.track(miss, 0b01, false), None);
        let miss = sf.lookup(l(2)).unwrap_err();
        assert_eq!(sf.track(miss, 0b10, true), None);
        assert_eq!(sf.find(l(2)).map(|t| (t.cores, t.modified)), Some((0b10, true)));
        // A third line of the set displaces l(1), the least recently used, with its holders.
        let miss = sf.lookup(l(3)).unwrap_err();
        assert_eq!(sf.track(miss, 0b01, false), Some(Displaced { line: l(1), cores: 0b01 }));
        assert_eq!(sf.find(l(1)), None);
        // The last holder's release frees the entry.
        assert_eq!(sf.release(l(2), 1), 0);
        assert_eq!((sf.find(l(2)), sf.occupancy()), (None, 1));
    }
}
