//! A core's hardware data prefetchers, the ones Ensō's pipes are built to please (Ensō §2 "chaotic memory
//! access", §7.2.3: scattered buffers "reduce the effectiveness of hardware prefetchers (e.g., streaming
//! prefetcher)"). They follow \[OPT\] (Intel Optimization Reference Manual, "Data Prefetching", Sandy
//! Bridge and later cores, Skylake Server included). All four are on in the hardware unless the BIOS
//! turns them off (Intel, "Disclosure of H/W prefetcher control on some Intel processors": MSR 0x1A4's
//! four disable bits are 0 by default), and so in the built-in profiles; the spatial one
//! has its own switch (`cpu.adjacent_prefetch`, whose source says why it is on):
//!
//! - The L1 DCU prefetcher fetches the next line into the L1 when a load is ascending to very recently
//!   loaded data: here, an access to the line after one of the core's last [`RECENT`] lines.
//! - The L1 IP-based stride prefetcher keeps track of individual load instructions: one that shows a
//!   regular stride of up to 2 KiB gets the line of its next address fetched into the L1
//!   ([`Prefetcher::ip`]). Unlike the DCU's, its history is per instruction, so a stream survives other
//!   loads in between: a driver walking a pipe batch after batch, with other work between batches.
//! - The L2 streamer watches the L1's misses (its L2 lookups) for ascending or descending addresses
//!   within a 4 KiB page. It tracks up to 32 streams, one per page, issues up to two prefetches per
//!   lookup, runs up to 20 lines ahead of the loads, and never crosses a 4 KiB page. (Here the 32
//!   entries are indexed by page number, a new page taking over its entry: the manual does not say
//!   how streams are replaced, and a direct lookup keeps the simulator fast.)
//! - The L2 spatial prefetcher "strives to complete every cache line fetched to the L2 cache with the
//!   pair line that completes it to a 128-byte aligned chunk": a demand access that misses the L2 also
//!   fetches `line ^ 1` into it ([`Prefetcher::spatial`]).
//!
//! None of them does more than say which lines to fetch; [`crate::memory::Memory`] fetches them, so they cost
//! LLC and DRAM traffic like any other fill and a DMA write still invalidates what they brought in.

use rustc_hash::FxHashMap;
use std::collections::hash_map::Entry;

/// Lines the DCU prefetcher remembers as very recently loaded.
pub const RECENT: usize = 4;
/// Lines per 4 KiB page, the prefetchers' horizon.
const PAGE_LINES: u64 = 64;
/// Streams the L2 streamer tracks ([OPT]: 32).
const STREAMS: usize = 32;
/// How far ahead of the loads the streamer runs, in lines ([OPT]: 20).
const DISTANCE: u64 = 20;
/// Prefetches the streamer issues per L2 lookup ([OPT]: two).
const PER_LOOKUP: usize = 2;

/// The longest stride the IP prefetcher detects, in lines ([OPT]: "strides of up to 2 KB").
const MAX_STRIDE: i64 = 2048 / 64;

/// A load instruction as the IP prefetcher tells them apart. rxlab's code has no instruction pointer
/// the simulator could see; its stand-in is the source location that reports the load (`Probe::touch`
/// and its helpers are `#[track_caller]`), one load instruction in a loop.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct LoadSite(usize);

impl LoadSite {
    /// The load site of a reporting source location: its address, the same for one site and distinct
    /// for two within a run. It serves only as a key, never as an order or an index, so a run does
    /// not depend on where the compiler or the loader put it.
    #[inline]
    pub fn of(loc: &'static std::panic::Location<'static>) -> LoadSite {
        LoadSite(loc as *const _ as usize)
    }
}

/// How sure the IP prefetcher is of a site's stride: the reference prediction table's states (Chen and
/// Baer, "Effective hardware-based data prefetching for high-performance processors", IEEE Trans.
/// Computers 44(5), 1995, §3): a confirmed stride survives one irregular access.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Confidence {
    /// A new entry, or a steady stride that was just broken once (prefetching goes on).
    Initial,
    /// A stride seen once and not confirmed yet.
    Transient,
    /// A stride seen at least twice in a row.
    Steady,
    /// Irregular accesses.
    NoPrediction,
}

/// One site's history: the last line it loaded, its stride in lines, and how sure it is of it.
#[derive(Debug, Clone, Copy)]
struct Site {
    last: u64,
    stride: i64,
    confidence: Confidence,
}

/// One tracked stream: a page, the last line offset looked up in it, and once confirmed its direction
/// and the next line offset to prefetch.
#[derive(Debug, Clone, Copy, Default)]
struct Stream {
    /// Page number + 1 (0 for an unused entry).
    page: u64,
    last: u8,
    /// +1 ascending, -1 descending, 0 not yet confirmed.
    dir: i8,
    next: u8,
}

/// Lines one lookup asks to prefetch.
pub type Lines = ([u64; PER_LOOKUP], usize);

/// The prefetchers of one core.
#[derive(Debug, Clone)]
pub struct Prefetcher {
    streams: [Stream; STREAMS],
    /// The IP prefetcher's table: an entry per load site, never evicted. [OPT] gives no size; a core in
    /// rxlab runs a few dozen load sites, fewer than any table the hardware could have, and an entry
    /// that no other site can take keeps every run independent of the code's layout.
    sites: FxHashMap<LoadSite, Site>,
    /// The last distinct lines accessed, most recent first.
    recent: [u64; RECENT],
}

impl Default for Prefetcher {
    fn default() -> Self {
        Prefetcher { streams: [Stream::default(); STREAMS], sites: FxHashMap::default(), recent: [u64::MAX; RECENT] }
    }
}

impl Prefetcher {
    /// The core accesses `line`: the line the DCU prefetcher fetches into the L1, if any.
    #[inline]
    pub fn dcu(&mut self, line: u64) -> Option<u64> {
        if self.recent[0] == line {
            return None;
        }
        let ascending = self.recent.contains(&line.wrapping_sub(1));
        self.recent.copy_within(0..RECENT - 1, 1);
        self.recent[0] = line;
        let next = line + 1;
        (ascending && !next.is_multiple_of(PAGE_LINES)).then_some(next)
    }

    /// The load at `site` reads `line` (its first line): the line the IP prefetcher fetches into the L1,
    /// if any. A load of the same line again teaches it nothing.
    #[inline]
    pub fn ip(&mut self, site: LoadSite, line: u64) -> Option<u64> {
        use Confidence::*;
        let e = match self.sites.entry(site) {
            Entry::Occupied(e) => e.into_mut(),
            Entry::Vacant(v) => {
                v.insert(Site { last: line, stride: 0, confidence: Initial });
                return None;
            }
        };
        if line == e.last {
            return None;
        }
        let stride = line.wrapping_sub(e.last) as i64;
        let correct = stride == e.stride;
        // Chen and Baer's transitions: only a stride seen twice in a row, or a steady one broken once,
        // predicts; a wrong prediction learns the new stride except in the steady state.
        (e.confidence, e.stride) = match (e.confidence, correct) {
            (Initial | Transient | Steady, true) => (Steady, e.stride),
            (NoPrediction, true) => (Transient, e.stride),
            (Steady, false) => (Initial, e.stride),
            (Initial, false) => (Transient, stride),
            (Transient | NoPrediction, false) => (NoPrediction, stride),
        };
        e.last = line;
        // The stride is never 0 here: a new entry returned above, and a repeated line too.
        let predicts = matches!(e.confidence, Steady | Initial) && e.stride.abs() <= MAX_STRIDE;
        let next = line.wrapping_add(e.stride as u64);
        (predicts && next / PAGE_LINES == line / PAGE_LINES).then_some(next)
    }

    /// A demand fetch brought `line` into the L2: the line the spatial prefetcher fetches with it, the
    /// other half of its 128-byte aligned pair.
    #[inline]
    pub fn spatial(line: u64) -> u64 {
        line ^ 1
    }

    /// The L1 missed `line` and looks it up in the L2: the lines the streamer prefetches into the L2.
    #[inline]
    pub fn l2_lookup(&mut self, line: u64) -> Lines {
        let (page, off) = (line / PAGE_LINES, (line % PAGE_LINES) as u8);
        let mut out = ([0; PER_LOOKUP], 0);
        let s = &mut self.streams[page as usize % STREAMS];
        if s.page != page + 1 {
            *s = Stream { page: page + 1, last: off, dir: 0, next: 0 };
            return out;
        }
        if s.dir == 0 {
            // Two lookups to adjacent lines confirm a direction.
            s.dir = match i16::from(off) - i16::from(s.last) {
                1 => 1,
                -1 => -1,
                _ => 0,
            };
            s.next = off;
        }
        let ahead = i16::from(off) - i16::from(s.last);
        s.last = off;
        if s.dir == 0 || ahead.signum() != i16::from(s.dir) && ahead != 0 {
            return out;
        }
        // Move the prefetch point past this load, then issue up to two lines, at most DISTANCE ahead.
        let step = |x: u8| i16::from(x) + i16::from(s.dir);
        let mut next =
            if (step(off) - i16::from(s.next)) * i16::from(s.dir) > 0 { step(off) } else { i16::from(s.next) };
        while out.1 < PER_LOOKUP
            && (0..PAGE_LINES as i16).contains(&next)
            && (next - i16::from(off)).unsigned_abs() as u64 <= DISTANCE
        {
            out.0[out.1] = page * PAGE_LINES + next as u64;
            out.1 += 1;
            next += i16::from(s.dir);
        }
        s.next = next.clamp(0, PAGE_LINES as i16 - 1) as u8;
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(l: Lines) -> Vec<u64> {
        l.0[..l.1].to_vec()
    }

    #[test]
    fn dcu_fetches_the_next_line_of_an_ascending_walk_within_the_page() {
        let mut p = Prefetcher::default();
        assert_eq!(p.dcu(100), None);
        assert_eq!(p.dcu(101), Some(102));
        assert_eq!(p.dcu(101), None, "the same line again");
        // Other lines in between: 102 still follows a very recent line.
        assert_eq!(p.dcu(7000), None);
        assert_eq!(p.dcu(102), Some(103));
        assert_eq!(p.dcu(50), None);
        assert_eq!(p.dcu(62), None);
        assert_eq!(p.dcu(63), None, "line 64 is the next page");
    }

    #[test]
    fn ip_prefetcher_follows_a_sites_confirmed_stride_across_other_loads() {
        let (walk, other) =
            (LoadSite::of(std::panic::Location::caller()), LoadSite::of(std::panic::Location::caller()));
        let mut p = Prefetcher::default();
        assert_eq!(p.ip(walk, 640), None, "a new site");
        assert_eq!(p.ip(walk, 641), None, "a stride seen once");
        assert_eq!(p.ip(walk, 642), Some(643), "seen twice: steady");
        assert_eq!(p.ip(walk, 642), None, "the same line again");
        // Another site's loads in between do not break the walk (the DCU's history would be gone).
        for l in [9000, 17, 4242, 77] {
            assert_eq!(p.ip(other, l), None);
        }
        assert_eq!(p.ip(walk, 643), Some(644));
        // One jump (the next pipe) keeps the stride; the walk goes on from there.
        assert_eq!(p.ip(walk, 700), Some(701));
        assert_eq!(p.ip(walk, 701), Some(702));
        // Never into the next 4 KiB page.
        assert_eq!(p.ip(walk, 703 - 703 % 64 + 62), Some(703 - 703 % 64 + 63));
        assert_eq!(p.ip(walk, 703 - 703 % 64 + 63), None);
    }

    #[test]
    fn ip_prefetcher_ignores_irregular_and_long_strides() {
        let site = LoadSite::of(std::panic::Location::caller());
        let mut p = Prefetcher::default();
        for l in [5, 90, 2, 400, 17, 3000] {
            assert_eq!(p.ip(site, l), None);
        }
        // A descending stride of 3 lines is followed, one of 37 lines (an mbuf apart) is not.
        let mut q = Prefetcher::default();
        assert_eq!([q.ip(site, 130), q.ip(site, 127), q.ip(site, 124)], [None, None, Some(121)]);
        let mut r = Prefetcher::default();
        assert_eq!([r.ip(site, 0), r.ip(site, 37), r.ip(site, 74), r.ip(site, 111)], [None; 4]);
    }

    #[test]
    fn streamer_confirms_a_direction_then_runs_ahead_two_lines_per_lookup() {
        let mut p = Prefetcher::default();
        assert!(lines(p.l2_lookup(640)).is_empty(), "first lookup of the page");
        assert_eq!(lines(p.l2_lookup(641)), [642, 643]);
        assert_eq!(lines(p.l2_lookup(642)), [644, 645]);
        // Never more than 20 lines ahead of the load.
        for l in 643..650 {
            p.l2_lookup(l);
        }
        assert_eq!(lines(p.l2_lookup(650)), [660, 661]);
        for _ in 0..6 {
            p.l2_lookup(650);
        }
        assert_eq!(lines(p.l2_lookup(651)), [671]);
        // A descending stream on another page.
        p.l2_lookup(2 * 64 + 30);
        assert_eq!(lines(p.l2_lookup(2 * 64 + 29)), [2 * 64 + 28, 2 * 64 + 27]);
    }

    #[test]
    fn streamer_stops_at_the_page_end_and_ignores_scattered_lookups() {
        let mut p = Prefetcher::default();
        p.l2_lookup(62);
        assert_eq!(lines(p.l2_lookup(63)), Vec::<u64>::new());
        let mut q = Prefetcher::default();
        for l in [5, 9, 2, 40, 17] {
            assert!(lines(q.l2_lookup(l)).is_empty());
        }
    }
}
