//! Simulated physical addresses: what the cache models index with, made independent of where the host's
//! allocator happened to put things, so that the same run gives the same result in any process.
//!
//! - The packet buffer arena keeps its layout: an address in it maps to the same offset from a fixed
//!   base (buffers stay 2 KiB apart, as DPDK's hugepage-backed mbufs are physically). So do the other
//!   regions that hold packet data ([`AddrMap::add_region`]: Ensō's pipes), each from its own
//!   page-aligned base: they are physically contiguous buffers, which the cores' prefetchers stream
//!   through, not heap objects to be numbered in the order the NIC happened to touch them.
//! - Every other 16-byte chunk (rings, completions, pools, app tables) gets the next free simulated chunk
//!   the first time it is touched; four consecutive simulated chunks make a line. 16 bytes is the
//!   alignment the host allocator guarantees, so which elements share a chunk never depends on where an
//!   allocation landed, and first-touch order is itself deterministic. Objects touched in order stay
//!   contiguous; unrelated heap objects that share a host line do not share a simulated one, as they
//!   would not on the papers' machines.
//!
//! Translation is a two-level table: host page -> a page of 256 chunk numbers, with
//! the pages used last kept at hand in a small direct-mapped table (a core's step moves between a
//! handful of pages: its rings, pools and tables), so a touch costs one page lookup (a hash only when
//! that misses) and an array index per chunk.

use rustc_hash::FxHashMap;

/// First simulated line of the arena (byte address 2^40).
const ARENA_LINE: u64 = 1 << 34;
/// First simulated line of the data regions (byte address 2^41).
const REGION_LINE: u64 = 1 << 35;
/// First simulated line of the co-located programs' arrays (byte address 2^42; [`crate::antagonist`]),
/// which no host memory backs.
pub const ANTAGONIST_LINE: u64 = 1 << 36;
/// Lines per 4 KiB page: data regions start on a page.
const PAGE_LINES: u64 = 64;
/// First simulated chunk handed out on first touch (byte address 2^36).
const HEAP_CHUNK: u64 = 1 << 32;
/// Bytes per chunk.
const CHUNK: usize = 16;
/// Bytes per host page of the translation table.
const PAGE: usize = 4096;
/// Chunks per host page.
const PAGE_CHUNKS: usize = PAGE / CHUNK;
/// A chunk not touched yet.
const UNMAPPED: u32 = u32::MAX;
/// Entries of the table of pages used last (a power of two).
const RECENT: usize = 64;

/// The translation from host addresses to simulated line numbers.
#[derive(Debug, Clone)]
pub struct AddrMap {
    arena: (usize, usize),
    /// Data regions: host start, length, first simulated line; sorted by start.
    regions: Vec<(usize, usize, u64)>,
    /// The first simulated line of the next region.
    next_region: u64,
    /// Host page number -> index into `tables`.
    pages: FxHashMap<usize, u32>,
    /// Per touched host page, the simulated chunk of each of its chunks, as an offset from
    /// [`HEAP_CHUNK`].
    tables: Vec<[u32; PAGE_CHUNKS]>,
    /// Pages used last and their tables, by page number modulo [`RECENT`].
    recent: [(usize, u32); RECENT],
    next: u32,
}

impl AddrMap {
    /// A map in which `[base, base + len)` is the arena.
    pub fn new(arena_base: usize, arena_len: usize) -> AddrMap {
        AddrMap {
            arena: (arena_base, arena_len),
            regions: Vec::new(),
            next_region: REGION_LINE,
            pages: FxHashMap::default(),
            tables: Vec::new(),
            recent: [(usize::MAX, 0); RECENT],
            next: 0,
        }
    }

    /// Keep the layout of host memory `[start, start + len)` (disjoint from the arena and from earlier
    /// regions, or one of them again, which changes nothing), from the next free page of simulated
    /// memory: byte `start + i` lands at byte `i` of that page, wherever the host allocator put `start`.
    /// Returns the simulated lines of a new region.
    pub fn add_region(&mut self, start: usize, len: usize) -> Option<std::ops::Range<u64>> {
        if self.regions.iter().any(|r| (r.0, r.1) == (start, len)) {
            return None;
        }
        let first = self.next_region;
        self.next_region += (len as u64).div_ceil(64).div_ceil(PAGE_LINES) * PAGE_LINES;
        let at = self.regions.partition_point(|r| r.0 < start);
        self.regions.insert(at, (start, len, first));
        Some(first..first + (len as u64).div_ceil(64))
    }

    /// The region holding `addr`, if any.
    #[inline(always)]
    fn region(&self, addr: usize) -> Option<(usize, u64)> {
        if self.regions.is_empty() {
            return None;
        }
        let i = self.regions.partition_point(|r| r.0 <= addr);
        let &(start, len, first) = self.regions.get(i.checked_sub(1)?)?;
        (addr - start < len).then_some((addr - start, first))
    }

    /// Call `f` with each run of consecutive simulated lines (first line, count) that `len` bytes at
    /// host address `addr` cover, in address order; returns how many lines in all. An arena range is
    /// one run.
    #[inline(always)]
    pub fn runs(&mut self, addr: usize, len: usize, mut f: impl FnMut(u64, u64)) -> u64 {
        let len = len.max(1);
        let off = addr.wrapping_sub(self.arena.0);
        if off < self.arena.1 {
            let (a, b) = ((off / 64) as u64, ((off + len - 1) / 64) as u64);
            f(ARENA_LINE + a, b - a + 1);
            return b - a + 1;
        }
        if let Some((off, first)) = self.region(addr) {
            let (a, b) = ((off / 64) as u64, ((off + len - 1) / 64) as u64);
            f(first + a, b - a + 1);
            return b - a + 1;
        }
        // The current run (first line, length) and the last line seen.
        let (mut run, mut prev, mut n) = ((0, 0), u64::MAX, 0);
        let (mut chunk, last) = (addr / CHUNK, (addr + len - 1) / CHUNK);
        while chunk <= last {
            let page = chunk / PAGE_CHUNKS;
            let end = last.min((page + 1) * PAGE_CHUNKS - 1);
            let t = self.table(page);
            let next = &mut self.next;
            for slot in &mut self.tables[t][chunk % PAGE_CHUNKS..=end % PAGE_CHUNKS] {
                if *slot == UNMAPPED {
                    *slot = *next;
                    *next += 1;
                }
                let line = (HEAP_CHUNK + u64::from(*slot)) / 4;
                if line == prev {
                    continue;
                }
                if n > 0 && line == prev + 1 {
                    run.1 += 1;
                } else {
                    if n > 0 {
                        f(run.0, run.1);
                    }
                    run = (line, 1);
                }
                prev = line;
                n += 1;
            }
            chunk = end + 1;
        }
        f(run.0, run.1);
        n
    }

    /// The table of host page `page`, made on first use.
    #[inline]
    fn table(&mut self, page: usize) -> usize {
        let slot = &mut self.recent[page % RECENT];
        if slot.0 == page {
            return slot.1 as usize;
        }
        let tables = &mut self.tables;
        let t = *self.pages.entry(page).or_insert_with(|| {
            tables.push([UNMAPPED; PAGE_CHUNKS]);
            (tables.len() - 1) as u32
        });
        *slot = (page, t);
        t as usize
    }
}
#[cfg(test)]
mod tests {
    use super::*;

    fn lines(m: &mut AddrMap, addr: usize, len: usize) -> Vec<u64> {
        let mut v = Vec::new();
        let n = m.runs(addr, len, |first, n| v.extend(first..first + n));
        assert_eq!(n, v.len() as u64);
        v
    }

    #[test]
    fn data_regions_keep_their_layout_from_page_aligned_bases() {
        let mut m = AddrMap::new(0x10_0000, 8192);
        m.add_region(0x7f00_0000, 4096 + 64);
        m.add_region(0x5000_0000, 128);
        assert_eq!(lines(&mut m, 0x7f00_0000 + 60, 8), [REGION_LINE, REGION_LINE + 1]);
        assert_eq!(lines(&mut m, 0x7f00_0000 + 4096, 64), [REGION_LINE + 64]);
        // The second region starts on the next free simulated page.
        assert_eq!(lines(&mut m, 0x5000_0040, 4), [REGION_LINE + 128 + 1]);
        // Outside every region: numbered on first touch.
        assert_eq!(lines(&mut m, 0x6000_0000, 4), [HEAP_CHUNK / 4]);
    }

    #[test]
    fn a_table_keeps_its_layout_wherever_the_host_put_it() {
        // The same 4 KiB table at two host addresses 8 bytes apart maps element for element alike:
        // lookups far apart stay on lines far apart, whatever was touched first.
        for start in [0x7f00_0000usize, 0x7f00_0008] {
            let mut m = AddrMap::new(0x10_0000, 8192);
            assert_eq!(m.add_region(start, 4096), Some(REGION_LINE..REGION_LINE + 64));
            assert_eq!(m.add_region(start, 4096), None, "a shared table is added once");
            assert_eq!(lines(&mut m, start + 4000, 8), [REGION_LINE + 62]);
            assert_eq!(lines(&mut m, start + 8, 8), [REGION_LINE]);
            assert_eq!(lines(&mut m, start + 64, 8), [REGION_LINE + 1]);
        }
    }

    #[test]
    fn arena_keeps_its_layout_and_other_chunks_are_numbered_on_first_touch() {
        let mut m = AddrMap::new(0x10_0000, 8192);
        assert_eq!(lines(&mut m, 0x10_0000 + 2048 + 60, 8), [ARENA_LINE + 32, ARENA_LINE + 33]);
        let h = HEAP_CHUNK / 4;
        // Four chunks touched in order fill one simulated line, wherever the host put them.
        assert_eq!(lines(&mut m, 0x7000_0030, 64), [h]);
        assert_eq!(lines(&mut m, 0x1234_5600, 4), [h + 1]);
        assert_eq!(lines(&mut m, 0x7000_0030, 16), [h]);
    }
}
