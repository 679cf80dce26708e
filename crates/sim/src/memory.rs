//! The memory hierarchy: private L1d and L2 per core, a shared LLC with DDIO, and DRAM behind it.
//!
//! Two hierarchies, as the profile says ([`crate::profile::CpuParams::snoop_filter_ways`]):
//! - **Inclusive** (L1 in L2 in LLC): the LLC doubles as the directory: per LLC line, a mask of the cores
//!   whose private caches may hold it and a flag saying one of them holds it modified; an LLC eviction
//!   takes the line from those cores.
//! - **Non-inclusive with a snoop filter** (Skylake-SP; [`crate::snoop`]): a core's fill from DRAM goes to
//!   its L2 alone; a line the LLC holds moves to the L2 that asks for it and leaves the LLC, except one
//!   read from a DDIO way or an inclusive way, which the LLC keeps in its inclusive ways (Park et al.'s
//!   A4, [`crate::profile::CpuParams::inclusive_ways`]); what the L2s evict goes into the LLC (in any
//!   way), so the LLC holds what the L2s gave up and what the NIC wrote.
//!   The snoop filter tracks the lines the L2s hold; its evictions take them from the cores, who give
//!   them to the LLC as their own evictions. A core's miss finds another core's copy through it; a DMA
//!   write takes the line from the cores that hold it; a DMA read of a line a core holds is served from
//!   there, not from DRAM. Assumptions where Intel publishes nothing: an L2 victim always enters the LLC
//!   (Skylake-SP chooses per line by an unpublished heuristic), and an LLC hit always moves the line
//!   (a line several cores share moves between their L2s through the filter and enters the LLC when
//!   the last copy is evicted).
//!
//! Approximations, each chosen to keep the model small and the hot path fast:
//! - L1 in L2: the L2 holds every L1 line, with its dirty state mirrored.
//! - MESI reduced to what costs time: a write to a line other cores hold invalidates them; a line another
//!   core holds modified costs the core-to-core transfer; a write to a line this core alone holds is free.
//! - DDIO (reference/hardware.md): a NIC write updates the line in place wherever it is in the LLC
//!   (invalidating core copies), which ages its set as any hit does; on a miss it allocates only in the
//!   DDIO ways (the highest ways), inserted as any fill is. With DDIO off every DMA write goes to DRAM
//!   and drops the line's cached copies (Intel's "classic" I/O mode, [`crate::cache`]). NIC reads
//!   hit the LLC or read DRAM without allocating, and leave the replacement state as it was. Partial-line
//!   DMA writes are treated as whole-line writes.
//! - The LLC is split into slices and replaces lines as the profile says ([`crate::slices`],
//!   [`crate::cache::Policy`]); the private caches are LRU, indexed by the low line bits.
//! - Dirty lines evicted from the LLC are written back to DRAM.
//! - Hardware prefetches ([`crate::prefetcher`]) fill the caches at once, as if they had been issued far
//!   enough ahead (the streamer runs up to 20 lines ahead of the loads); they pay LLC and DRAM traffic
//!   and are counted apart from demand accesses.

use crate::cache::{Lru, Miss, Policy, SetAssoc, Shootdown, Slot};
use crate::dram::Dram;
use crate::prefetcher::{LoadSite, Prefetcher};
use crate::profile::{CacheGeom, LINE, Profile};
use crate::slices::{Modulo, Sliced};
use crate::snoop::SnoopFilter;
use serde::Serialize;

/// Hit and miss counters of the hierarchy.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct MemStats {
    /// CPU accesses that hit L1d / missed it.
    pub l1: (u64, u64),
    /// CPU accesses that reached L2: hits, misses.
    pub l2: (u64, u64),
    /// CPU accesses that reached the LLC: hits, misses.
    pub llc: (u64, u64),
    /// NIC (DMA) writes per line: LLC hits, misses.
    pub nic_write: (u64, u64),
    /// NIC (DMA) reads per line: LLC hits, misses.
    pub nic_read: (u64, u64),
    /// Lines moved from another core's private cache (modified there).
    pub transfers: u64,
    /// Write-upgrades that invalidated other cores' copies.
    pub invalidations: u64,
    /// Lines the hardware prefetchers brought into a core's caches: from the LLC or another core, from
    /// DRAM.
    pub prefetches: (u64, u64),
}

/// Latencies in picoseconds.
#[derive(Debug, Clone, Copy)]
struct Lat {
    l1: u64,
    l2: u64,
    llc: u64,
    transfer: u64,
}

/// Caches and DRAM of the simulated machine.
#[derive(Debug, Clone)]
pub struct Memory {
    l1: Vec<SetAssoc<Lru, Modulo>>,
    l2: Vec<SetAssoc<Lru, Modulo>>,
    llc: SetAssoc<Policy, Sliced>,
    /// Per LLC slot of an inclusive LLC: cores that may hold the line privately; meaningful only while
    /// the slot's flag A is set (so a NIC install, which clears it, never reads or writes this array).
    sharers: Vec<u32>,
    /// The snoop filter beside a non-inclusive LLC; `None`: the LLC is inclusive and is the directory.
    sf: Option<SnoopFilter>,
    /// Scratch list of a NIC write run's lines whose core copies must be dropped.
    shootdowns: Vec<Shootdown>,
    ddio_mask: u16,
    /// Beside a snoop filter, the LLC ways that keep a copy of a line a core reads from them or from a
    /// DDIO way ([`crate::profile::CpuParams::inclusive_ways`]); empty: every such line leaves the LLC.
    inclusive_mask: u16,
    /// Each core's hardware prefetchers, if the profile runs them.
    prefetchers: Option<Vec<Prefetcher>>,
    /// Whether the L2 spatial prefetcher runs (with the others).
    adjacent_prefetch: bool,
    /// With a software NIC ([`crate::profile::NicParams::software`]), the index of the core that runs
    /// it: its private caches stay empty, and the lines it writes are modified in it.
    nic_core: Option<usize>,
    lat: Lat,
    /// Main memory.
    pub dram: Dram,
    /// Counters.
    pub stats: MemStats,
}

/// Drop `line` from the private caches (`l1`, `l2`) of every core in `mask`; returns whether any copy
/// was dirty.
fn drop_private(l1: &mut [SetAssoc<Lru, Modulo>], l2: &mut [SetAssoc<Lru, Modulo>], mut mask: u32, line: u64) -> bool {
    let mut dirty = false;
    while mask != 0 {
        let c = mask.trailing_zeros() as usize;
        mask &= mask - 1;
        // L1 in L2: a line not in L2 is not in L1 either.
        if let Some(s) = l2[c].find(line) {
            dirty |= l2[c].invalidate(s);
            if let Some(s) = l1[c].find(line) {
                dirty |= l1[c].invalidate(s);
            }
        }
    }
    dirty
}

/// The private caches a demand access missed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Missed {
    /// It hit the L1.
    None,
    /// It missed the L1 and hit the L2.
    L1,
    /// It missed both: the line came from the LLC, another core or DRAM.
    L2,
}

/// What a CPU access does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    /// A load.
    Read,
    /// A store (or a locked read-modify-write).
    Write,
}

impl Memory {
    /// The hierarchy of `p` for `cores` cores.
    pub fn new(p: &Profile, cores: usize) -> Memory {
        let c = &p.cpu;
        let ps = |cycles: u32| (f64::from(cycles) * p.ps_per_cycle()) as u64;
        let mut llc = SetAssoc::new(c.llc.ways, c.llc_policy, Sliced::new(c.llc.sets(), c.llc_slices.as_ref()));
        llc.start_duel(c.llc_duel_start);
        let private = |g: CacheGeom| SetAssoc::new(g.ways, Lru, Modulo::new(g.sets()));
        let ways = c.llc.ways;
        let ddio_mask = (((1u32 << p.ddio_ways) - 1) << (ways - p.ddio_ways)) as u16;
        // The sharer masks have a bit per core: a software NIC needs one left over.
        let nic_core = (p.nic.software && cores < u32::BITS as usize).then_some(cores);
        let private_caches = cores + usize::from(nic_core.is_some());
        Memory {
            l1: (0..private_caches).map(|_| private(c.l1d)).collect(),
            l2: (0..private_caches).map(|_| private(c.l2)).collect(),
            sharers: if c.snoop_filter_ways > 0 { Vec::new() } else { vec![0; c.llc.sets() * crate::cache::MAX_WAYS] },
            sf: (c.snoop_filter_ways > 0)
                .then(|| SnoopFilter::new(c.snoop_filter_ways, c.llc.sets(), c.llc_slices.as_ref())),
            shootdowns: Vec::new(),
            llc,
            ddio_mask,
            inclusive_mask: ((1u32 << c.inclusive_ways) - 1) as u16,
            prefetchers: c.hw_prefetch.then(|| vec![Prefetcher::default(); cores]),
            adjacent_prefetch: c.adjacent_prefetch,
            nic_core,
            lat: Lat {
                l1: ps(c.l1d.latency_cycles),
                l2: ps(c.l2.latency_cycles),
                llc: ps(c.llc.latency_cycles),
                transfer: ps(c.transfer_cycles),
            },
            dram: Dram::new(&p.dram),
            stats: MemStats::default(),
        }
    }

    /// Lines the LLC holds.
    pub fn llc_lines(&self) -> u64 {
        self.llc.lines()
    }

    /// Put `line` in the LLC as a fill does, clean and in no core's private cache, unless it is there
    /// already; nothing is counted. The state initialisation leaves a table in
    /// before the run starts ([`crate::machine::Machine::add_tables`]).
    pub fn warm_llc(&mut self, line: u64) {
        if let Err(miss) = self.llc.access(line) {
            let (s, _) = self.llc_install(miss, self.llc.all_ways(), false);
            self.llc.set_state(s, false, false, false);
        }
    }

    /// The share of the LLC's slices whose follower sets fill as the thrash-resistant variant
    /// ([`SetAssoc::followers_mr161`]; `None` unless the LLC's policy is adaptive).
    pub fn llc_followers_mr161(&self) -> Option<f64> {
        self.llc.followers_mr161()
    }

    /// LLC hit latency, ps.
    pub fn llc_latency_ps(&self) -> u64 {
        self.lat.llc
    }

    /// L1 hit latency, ps.
    pub fn l1_latency_ps(&self) -> u64 {
        self.lat.l1
    }

    /// Core `core` accesses `line` at `now`; returns the access latency in ps.
    #[inline]
    pub fn cpu_access(&mut self, core: usize, line: u64, op: Op, now: u64) -> u64 {
        let (cost, missed) = self.demand(core, line, op, now);
        if let Some(pf) = &mut self.prefetchers {
            let p = &mut pf[core];
            let next = p.dcu(line);
            let (lines, n) = if missed != Missed::None { p.l2_lookup(line) } else { ([0; 2], 0) };
            if let Some(next) = next {
                self.prefetch(core, next, true, now);
            }
            if missed == Missed::L2 && self.adjacent_prefetch {
                self.prefetch(core, Prefetcher::spatial(line), false, now);
            }
            for &l in &lines[..n] {
                self.prefetch(core, l, false, now);
            }
        }
        cost
    }

    /// Core `core`'s load at `site`, whose first line is `line`, trains the core's IP prefetcher, which
    /// may fetch a line into the L1 (after the load's own access, [`Memory::cpu_access`]).
    #[inline]
    pub fn ip_load(&mut self, core: usize, site: LoadSite, line: u64, now: u64) {
        if let Some(next) = self.prefetchers.as_mut().and_then(|pf| pf[core].ip(site, line)) {
            self.prefetch(core, next, true, now);
        }
    }

    /// A hardware prefetch of `line` into `core`'s L2, and its L1 too if `l1`: a read fill, counted apart.
    fn prefetch(&mut self, core: usize, line: u64, l1: bool, now: u64) {
        let l1_miss = if l1 {
            match self.l1[core].access(line) {
                Ok(_) => return,
                Err(m) => Some(m),
            }
        } else {
            None
        };
        if let Err(l2_miss) = self.l2[core].access(line) {
            let (demand, dram) = (self.stats.llc, self.dram.read_bytes);
            let (_, dirty) = self.llc_access(core, line, false, now);
            self.fill_l2(core, l2_miss, dirty, now);
            let from_dram = self.dram.read_bytes > dram;
            self.stats.llc = demand;
            self.stats.prefetches.0 += u64::from(!from_dram);
            self.stats.prefetches.1 += u64::from(from_dram);
        }
        if let Some(m) = l1_miss {
            let l1 = &mut self.l1[core];
            l1.install(m, l1.all_ways(), false);
        }
    }

    /// The demand access of [`Memory::cpu_access`]; also says which private caches it missed.
    #[inline]
    fn demand(&mut self, core: usize, line: u64, op: Op, now: u64) -> (u64, Missed) {
        let write = op == Op::Write;
        let l1_miss = match self.l1[core].access(line) {
            Ok(h) => {
                self.stats.l1.0 += 1;
                let mut cost = self.lat.l1;
                if write && !h.dirty {
                    cost += self.upgrade(core, line);
                    self.l1[core].set_dirty(h.slot, true);
                    if let Some(s2) = self.l2[core].find(line) {
                        self.l2[core].set_dirty(s2, true);
                    }
                }
                return (cost, Missed::None);
            }
            Err(miss) => miss,
        };
        self.stats.l1.1 += 1;
        // Almost every L1 miss goes on to the L2 and the LLC: their loads overlap.
        self.l2[core].preload(line);
        self.llc.preload(line);
        if let Some(sf) = &self.sf {
            sf.preload(line);
        }
        let (cost, missed) = match self.l2[core].access(line) {
            Ok(h) => {
                self.stats.l2.0 += 1;
                let mut cost = self.lat.l2;
                if write && !h.dirty {
                    cost += self.upgrade(core, line);
                    self.l2[core].set_dirty(h.slot, true);
                }
                (cost, Missed::L1)
            }
            Err(l2_miss) => {
                self.stats.l2.1 += 1;
                let (cost, dirty) = self.llc_access(core, line, write, now);
                self.fill_l2(core, l2_miss, dirty, now);
                (cost, Missed::L2)
            }
        };
        // L1 evictions are silent: L2 holds every L1 line with its dirty state mirrored. (The L1 set
        // may have lost a line to the L2 fill since the lookup; the victim is chosen now.)
        let l1 = &mut self.l1[core];
        l1.install(l1_miss, l1.all_ways(), write);
        (cost, missed)
    }

    /// The cores that may hold the line in LLC slot `s` privately.
    #[inline(always)]
    fn sharers_of(&self, s: Slot) -> u32 {
        if self.llc.flag_a(s) { self.sharers[s.index()] } else { 0 }
    }

    /// A write to a line this core holds clean: take ownership. Free if no other core shares it.
    fn upgrade(&mut self, core: usize, line: u64) -> u64 {
        let me = 1u32 << core;
        let others = match &mut self.sf {
            Some(sf) => {
                let t = sf.find(line).expect("the snoop filter tracks every privately cached line");
                sf.set(t.slot, me, true);
                t.cores & !me
            }
            None => {
                let s = self.llc.find(line).expect("inclusive hierarchy: a privately cached line is in the LLC");
                let others = self.sharers_of(s) & !me;
                self.sharers[s.index()] = me;
                self.llc.set_flag_a(s, true);
                self.llc.set_flag_b(s, true);
                others
            }
        };
        if others == 0 {
            return 0;
        }
        self.stats.invalidations += 1;
        self.invalidate_cores(others, line);
        self.lat.llc
    }

    /// An L2 miss of `core`: serve it from the LLC, another core, or DRAM. Returns the latency and
    /// whether the L2 takes the line dirty.
    #[inline]
    fn llc_access(&mut self, core: usize, line: u64, write: bool, now: u64) -> (u64, bool) {
        if self.sf.is_some() {
            return self.l2_miss_non_inclusive(core, line, write, now);
        }
        let me = 1u32 << core;
        let miss = match self.llc.access(line) {
            Err(miss) => miss,
            Ok(h) => {
                self.stats.llc.0 += 1;
                let s = h.slot;
                let held = if h.flag_a { self.sharers[s.index()] } else { 0 };
                let others = held & !me;
                let (mut cost, mut dirty, mut modified) = (self.lat.llc, h.dirty, h.flag_b);
                if h.flag_b && others != 0 {
                    // Modified in another core: it supplies the line.
                    self.stats.transfers += 1;
                    cost = self.lat.transfer;
                    if write {
                        self.invalidate_cores(others, line);
                    } else {
                        self.clean_core(others.trailing_zeros() as usize, line);
                        (dirty, modified) = (true, false);
                    }
                } else if write && others != 0 {
                    self.stats.invalidations += 1;
                    self.invalidate_cores(others, line);
                }
                self.sharers[s.index()] = if write { me } else { held | me };
                self.llc.set_state(s, dirty, true, modified || write);
                return (cost, write);
            }
        };
        self.stats.llc.1 += 1;
        let cost = self.lat.llc + self.dram.latency_ps();
        self.dram.transfer(now, LINE as u64, false);
        let (s, wb) = self.llc_install(miss, self.llc.all_ways(), false);
        if wb {
            self.dram.transfer(now, LINE as u64, true);
        }
        self.sharers[s.index()] = me;
        self.llc.set_state(s, false, true, write);
        (cost, write)
    }

    /// [`Memory::llc_access`] beside a non-inclusive LLC (module doc): another core's copy, found
    /// through the snoop filter, else the LLC's, which moves to the L2, else DRAM.
    fn l2_miss_non_inclusive(&mut self, core: usize, line: u64, write: bool, now: u64) -> (u64, bool) {
        let me = 1u32 << core;
        let Some(sf) = &mut self.sf else { unreachable!("called beside a snoop filter") };
        match sf.lookup(line) {
            Ok(t) => {
                // Held by other cores (this one missed): one of them supplies it. A holder of a modified
                // copy keeps it dirty when another core reads the line, and writes it back on eviction.
                self.stats.llc.0 += 1;
                sf.set(t.slot, if write { me } else { t.cores | me }, write);
                let others = t.cores & !me;
                let cost = if t.modified && others != 0 {
                    self.stats.transfers += 1;
                    self.lat.transfer
                } else {
                    self.stats.invalidations += u64::from(write && others != 0);
                    self.lat.llc
                };
                if write && others != 0 {
                    self.invalidate_cores(others, line);
                }
                (cost, write)
            }
            Err(miss) => {
                let (cost, dirty) = match self.llc.access(line) {
                    Ok(h) => {
                        self.stats.llc.0 += 1;
                        (self.lat.llc, self.llc_hit_non_inclusive(h, line, now))
                    }
                    Err(_) => {
                        self.stats.llc.1 += 1;
                        let cost = self.lat.llc + self.dram.latency_ps();
                        self.dram.transfer(now, LINE as u64, false);
                        (cost, false)
                    }
                };
                self.track(miss, me, write, now);
                (cost, dirty || write)
            }
        }
    }

    /// A core's hit in the non-inclusive LLC: a line in an inclusive way stays; one in a DDIO way
    /// migrates to the inclusive ways (A4's C1, [`crate::profile::CpuParams::inclusive_ways`]); any
    /// other leaves the LLC for the L2. Returns whether the L2 takes the line dirty (the LLC's dirty
    /// data goes with the only copy; a copy the LLC keeps keeps it).
    fn llc_hit_non_inclusive(&mut self, h: crate::cache::Hit, line: u64, now: u64) -> bool {
        let way = 1u16 << h.slot.way;
        if self.inclusive_mask & way != 0 {
            return false;
        }
        self.llc.invalidate(h.slot);
        if self.inclusive_mask == 0 || self.ddio_mask & way == 0 {
            return h.dirty;
        }
        let Err(miss) = self.llc.access(line) else { unreachable!("the line was just dropped") };
        if self.llc_install(miss, self.inclusive_mask, h.dirty).1 {
            self.dram.transfer(now, LINE as u64, true);
        }
        false
    }

    /// Track the line of the snoop filter's `miss` as held by `cores`; the entry displaced for it takes
    /// its line from the cores that hold it, which give it to the LLC.
    fn track(&mut self, miss: crate::cache::Miss, cores: u32, modified: bool, now: u64) {
        let Some(sf) = &mut self.sf else { unreachable!("called beside a snoop filter") };
        if let Some(d) = sf.track(miss, cores, modified) {
            let dirty = self.invalidate_cores(d.cores, d.line);
            self.llc_victim(d.line, dirty, now);
        }
    }

    /// A line a core gave up enters the non-inclusive LLC: updated in place if it is there, else
    /// installed in any way, the LLC's own victim written back to DRAM if dirty.
    fn llc_victim(&mut self, line: u64, dirty: bool, now: u64) {
        match self.llc.access(line) {
            Ok(h) => self.llc.set_dirty(h.slot, h.dirty || dirty),
            Err(miss) => {
                if self.llc_install(miss, self.llc.all_ways(), dirty).1 {
                    self.dram.transfer(now, LINE as u64, true);
                }
            }
        }
    }

    /// Put the line of `miss` into this core's L2, handling the line it replaces.
    #[inline]
    fn fill_l2(&mut self, core: usize, miss: Miss, dirty: bool, now: u64) {
        let l2 = &mut self.l2[core];
        let Some(ev) = l2.install(miss, l2.all_ways(), dirty).1 else { return };
        // Keep L1 within L2.
        if let Some(s1) = self.l1[core].find(ev.line) {
            self.l1[core].invalidate(s1);
        }
        if let Some(sf) = &mut self.sf {
            // The last copy, or a modified one, goes to the LLC.
            if sf.release(ev.line, core) == 0 || ev.dirty {
                self.llc_victim(ev.line, ev.dirty, now);
            }
            return;
        }
        match self.llc.find(ev.line) {
            Some(s) => {
                let left = self.sharers_of(s) & !(1 << core);
                self.sharers[s.index()] = left;
                if ev.dirty {
                    self.llc.set_state(s, true, left != 0, false);
                } else {
                    self.llc.set_flag_a(s, left != 0);
                }
            }
            None if ev.dirty => self.dram.transfer(now, LINE as u64, true),
            None => {}
        }
    }

    /// Install the line of `miss` in the LLC among the ways of `mask`, evicting a victim (and, in an
    /// inclusive LLC, invalidating the cores' copies of it). Returns the slot and whether the victim must
    /// be written back to DRAM (the caller accounts it, so that a DMA run accounts its write-backs at
    /// once).
    #[inline]
    fn llc_install(&mut self, miss: Miss, mask: u16, dirty: bool) -> (Slot, bool) {
        let (v, ev) = self.llc.install(miss, mask, dirty);
        let Some(ev) = ev else { return (v, false) };
        // The victim's sharer mask is still in place: the slot's new line has flag A clear.
        let wb = ev.dirty | (ev.flag_a && self.invalidate_cores(self.sharers[v.index()], ev.line));
        (v, wb)
    }

    /// Drop `line` from the private caches of every core in `mask`; returns whether any copy was dirty.
    fn invalidate_cores(&mut self, mask: u32, line: u64) -> bool {
        drop_private(&mut self.l1, &mut self.l2, mask, line)
    }

    /// Make `core`'s copy of `line` clean (it was read by another core).
    fn clean_core(&mut self, core: usize, line: u64) {
        if let Some(s) = self.l1[core].find(line) {
            self.l1[core].set_dirty(s, false);
        }
        if let Some(s) = self.l2[core].find(line) {
            self.l2[core].set_dirty(s, false);
        }
    }

    /// Turn DDIO off: every NIC write goes to DRAM and drops the line's cached copies.
    pub fn ddio_off(&mut self) {
        self.ddio_mask = 0;
    }

    /// The NIC writes the `n` consecutive lines from `first` at `now` (DDIO); returns how many hit in
    /// the LLC. The LLC is updated for the whole run first, then the cores' copies of the lines that
    /// some core held are dropped (the two touch disjoint state, so the order is immaterial), and the
    /// run's DRAM traffic (write-backs, or the writes themselves with DDIO off) is accounted at once: it
    /// all falls at the same time, so the result is the same as line by line.
    #[inline]
    pub fn nic_write(&mut self, first: u64, n: u64, now: u64) -> u64 {
        let mut shootdowns = std::mem::take(&mut self.shootdowns);
        let (hits, mut to_dram) = self.llc.write_run(first, n, self.ddio_mask, &mut shootdowns);
        for sd in &shootdowns {
            let mut cores = self.sharers[sd.slot.index()];
            while cores != 0 {
                self.l2[cores.trailing_zeros() as usize].preload(sd.line);
                cores &= cores - 1;
            }
        }
        for sd in shootdowns.drain(..) {
            let dirty = self.invalidate_cores(self.sharers[sd.slot.index()], sd.line);
            to_dram += u64::from(sd.replaced_dirty.is_some_and(|d| d || dirty));
        }
        self.shootdowns = shootdowns;
        if self.sf.is_some() {
            self.nic_write_private(first, n, now);
        } else if let Some(nic) = self.nic_core {
            // A software NIC's stores leave the lines modified in its core (see `llc_access`).
            for line in first..first + n {
                if let Some(s) = self.llc.find(line) {
                    self.sharers[s.index()] = 1 << nic;
                    self.llc.set_flag_a(s, true);
                    self.llc.set_flag_b(s, true);
                }
            }
        }
        self.stats.nic_write.0 += hits;
        self.stats.nic_write.1 += n - hits;
        if to_dram > 0 {
            self.dram.transfer(now, to_dram * LINE as u64, true);
        }
        hits
    }

    /// Beside a non-inclusive LLC, a NIC write's lines leave the cores that hold them (their copies,
    /// dirty or not, are dead: the whole line is written anew); a software NIC's stores leave them
    /// modified in its core.
    fn nic_write_private(&mut self, first: u64, n: u64, now: u64) {
        let Some(sf) = &mut self.sf else { return };
        let Some(nic) = self.nic_core else {
            for line in first..first + n {
                if let Some(t) = sf.find(line) {
                    sf.set(t.slot, 0, false);
                    drop_private(&mut self.l1, &mut self.l2, t.cores, line);
                }
            }
            return;
        };
        for line in first..first + n {
            let Some(sf) = &mut self.sf else { return };
            match sf.lookup(line) {
                Ok(t) => {
                    sf.set(t.slot, 1 << nic, true);
                    self.invalidate_cores(t.cores & !(1 << nic), line);
                }
                Err(miss) => self.track(miss, 1 << nic, true, now),
            }
        }
    }

    /// The NIC reads the `n` consecutive lines from `first` at `now`; returns how many missed on chip
    /// (a miss reads DRAM and does not allocate). Beside a non-inclusive LLC, a line a core holds is
    /// served from its cache.
    #[inline]
    pub fn nic_read(&mut self, first: u64, n: u64, now: u64) -> u64 {
        let misses = match &self.sf {
            None => self.llc.misses(first, n),
            Some(sf) => match self.llc.misses(first, n) {
                0 => 0,
                _ => (first..first + n).filter(|&l| self.llc.find(l).is_none() && sf.find(l).is_none()).count() as u64,
            },
        };
        self.stats.nic_read.0 += n - misses;
        self.stats.nic_read.1 += misses;
        if misses > 0 {
            self.dram.transfer(now, misses * LINE as u64, false);
        }
        misses
    }

    /// Whether `line` is in the LLC, and whether in a DDIO way (for tests and reports).
    pub fn llc_holds(&self, line: u64) -> Option<bool> {
        self.llc.find(line).map(|s| self.ddio_mask & (1 << s.way) != 0)
    }

    /// Whether `core` holds `line` in L1 or L2.
    pub fn core_holds(&self, core: usize, line: u64) -> bool {
        self.l1[core].find(line).is_some() || self.l2[core].find(line).is_some()
    }

    /// Forget the counters at the start of a measurement.
    pub fn reset_counters(&mut self) {
        self.stats = MemStats::default();
        self.dram.reset_counters();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A small machine: LLC of 4 sets x 4 ways with 1 DDIO way (one slice, LRU), L2 2 sets x 2 ways, L1
    /// 1 set x 2 ways.
    fn small(ddio: usize) -> Memory {
        Memory::new(&small_profile(ddio), 2)
    }

    /// The profile of [`small`].
    fn small_profile(ddio: usize) -> Profile {
        let mut p = Profile::r640_silver4216();
        p.cpu.llc.size = 4 * 4 * LINE;
        p.cpu.llc.ways = 4;
        p.cpu.llc_slices = None;
        p.cpu.llc_policy = Policy::Lru;
        p.cpu.l2.size = 2 * 2 * LINE;
        p.cpu.l2.ways = 2;
        p.cpu.l1d.size = 2 * LINE;
        p.cpu.l1d.ways = 2;
        // Pairs are tested on their own (each L2 miss would add a fetch to every other test's counts).
        p.cpu.adjacent_prefetch = false;
        p.ddio_ways = ddio;
        p.validate().unwrap();
        p
    }

    /// Lines that fall into LLC set 0 (4 sets).
    fn l(i: u64) -> u64 {
        i * 4
    }

    #[test]
    fn warmed_lines_are_clean_llc_hits_and_uncounted() {
        let mut m = small(1);
        for i in 1..=9 {
            m.warm_llc(l(i));
        }
        // Nine lines of one 4-way set: the first five are gone, written back to DRAM by no one (they are
        // clean), the last four are there in every way (not only the DDIO one), and nothing was counted.
        assert!((1..=5).all(|i| m.llc_holds(l(i)).is_none()));
        assert_eq!((6..=9).filter_map(|i| m.llc_holds(l(i))).filter(|&ddio| !ddio).count(), 3);
        assert_eq!((m.stats, m.dram.read_bytes, m.dram.write_bytes), (MemStats::default(), 0, 0));
        let hit = m.cpu_access(0, l(9), Op::Read, 0);
        assert_eq!((hit, m.stats.llc), (m.lat.llc, (1, 0)));
    }

    #[test]
    fn nic_writes_allocate_only_in_ddio_ways_and_update_in_place() {
        let mut m = small(1);
        // Two NIC writes to different lines of one set: the second evicts the first from the single
        // DDIO way, and the dirty victim goes to DRAM.
        assert_eq!(m.nic_write(l(1), 1, 0), 0);
        assert_eq!(m.llc_holds(l(1)), Some(true));
        assert_eq!(m.nic_write(l(2), 1, 0), 0);
        assert_eq!(m.llc_holds(l(1)), None);
        assert_eq!(m.dram.write_bytes, 64);
        // A line the CPU brought in (any way; the invalid non-DDIO ways first) is updated in place.
        m.cpu_access(0, l(3), Op::Read, 0);
        assert_eq!(m.llc_holds(l(3)), Some(false));
        assert_eq!(m.nic_write(l(3), 1, 0), 1);
        assert_eq!(m.llc_holds(l(3)), Some(false));
        // ... and the core's stale copy is gone.
        assert!(!m.core_holds(0, l(3)));
        assert_eq!(m.stats.nic_write, (1, 2));
    }

    #[test]
    fn ddio_off_writes_go_to_dram_and_reads_never_allocate() {
        let mut m = small(0);
        assert_eq!(m.nic_write(l(1), 1, 0), 0);
        assert_eq!(m.llc_holds(l(1)), None);
        assert_eq!(m.dram.write_bytes, 64);
        assert_eq!(m.nic_read(l(1), 1, 0), 1);
        assert_eq!(m.llc_holds(l(1)), None);
        assert_eq!(m.dram.read_bytes, 64);
        m.cpu_access(1, l(1), Op::Read, 0);
        assert_eq!(m.nic_read(l(1), 1, 0), 0);
        assert_eq!(m.stats.nic_read, (1, 1));
        // A line the core holds, even modified, is not updated in place: the write goes to DRAM, the
        // cached copies go, and the core's next read comes from DRAM. The write's lookup found the line,
        // which the uncore counts as a hit (PCM's pcm-pcie).
        m.cpu_access(1, l(1), Op::Write, 0);
        let written = m.dram.write_bytes;
        assert_eq!(m.nic_write(l(1), 1, 0), 1, "found, then dropped");
        assert_eq!(m.stats.nic_write, (1, 1));
        assert_eq!((m.llc_holds(l(1)), m.core_holds(1, l(1))), (None, false));
        assert_eq!(m.dram.write_bytes, written + 64, "the DMA data, not the core's dead copy");
        let read = m.dram.read_bytes;
        m.cpu_access(1, l(1), Op::Read, 0);
        assert_eq!(m.dram.read_bytes, read + 64);
    }

    /// A software NIC's writes are a core's stores: the worker's first read of the line is a
    /// core-to-core transfer, its second an L1 hit; a hardware NIC's DDIO write is an LLC hit.
    #[test]
    fn a_software_nic_leaves_its_lines_modified_in_its_core() {
        let mut hw = small(1);
        hw.nic_write(l(1), 1, 0);
        assert_eq!(hw.cpu_access(0, l(1), Op::Read, 0), hw.lat.llc);
        let mut m = small(1);
        m.nic_core = Some(2);
        m.l1.push(m.l1[0].clone());
        m.l2.push(m.l2[0].clone());
        m.nic_write(l(1), 1, 0);
        assert_eq!(m.cpu_access(0, l(1), Op::Read, 0), m.lat.transfer);
        assert_eq!(m.cpu_access(0, l(1), Op::Read, 0), m.lat.l1);
        assert_eq!(m.stats.transfers, 1);
        // The worker's copy goes when the NIC writes the line again.
        m.nic_write(l(1), 1, 0);
        assert!(!m.core_holds(0, l(1)));
        assert_eq!(m.cpu_access(0, l(1), Op::Read, 0), m.lat.transfer);
    }

    #[test]
    fn cpu_hits_per_level_and_cross_core_transfer() {
        let mut m = small(1);
        let miss = m.cpu_access(0, l(1), Op::Read, 0);
        let hit = m.cpu_access(0, l(1), Op::Read, 0);
        assert!(miss > 79_000 && hit == m.lat.l1, "{miss} {hit}");
        assert_eq!((m.stats.l1, m.stats.llc), ((1, 1), (0, 1)));
        // Core 0 writes it (silent upgrade: it is the only sharer), then core 1 reads it: a transfer.
        assert_eq!(m.cpu_access(0, l(1), Op::Write, 0), m.lat.l1);
        assert_eq!(m.cpu_access(1, l(1), Op::Read, 0), m.lat.transfer);
        assert_eq!(m.stats.transfers, 1);
        // Core 0 writes again: its copy is shared now, so the write invalidates core 1.
        assert_eq!(m.cpu_access(0, l(1), Op::Write, 0), m.lat.l1 + m.lat.llc);
        assert!(!m.core_holds(1, l(1)));
        // Core 1 writes it: transfer from core 0, which loses its copy.
        assert_eq!(m.cpu_access(1, l(1), Op::Write, 0), m.lat.transfer);
        assert!(!m.core_holds(0, l(1)));
    }

    /// The L2 spatial prefetcher, switched on: a demand fetch from beyond the L2 brings the other line of
    /// its 128-byte pair into the L2, whichever half was asked for (a prefetch, counted apart from demand
    /// accesses).
    #[test]
    fn an_l2_miss_brings_the_other_line_of_its_pair_into_the_l2() {
        for (asked, pair) in [(4, 5), (13, 12)] {
            let mut m = small(1);
            m.adjacent_prefetch = true;
            assert!(m.cpu_access(0, asked, Op::Read, 0) > 79_000);
            assert_eq!((m.stats.llc, m.stats.prefetches), ((0, 1), (0, 1)));
            assert_eq!(m.cpu_access(0, pair, Op::Read, 0), m.lat.l2);
            assert_eq!(m.stats.llc, (0, 1));
        }
        // Switched off (`cpu.adjacent_prefetch = false`, as `small` builds it), the pair is a miss of its own.
        let mut m = small(1);
        m.cpu_access(0, 4, Op::Read, 0);
        assert!(m.cpu_access(0, 5, Op::Read, 0) > 79_000);
        assert_eq!(m.stats.llc, (0, 2));
    }

    /// [`small`] with a non-inclusive LLC and a snoop filter of `sf_ways` ways over its 4 sets.
    fn small_non_inclusive(ddio: usize, sf_ways: usize) -> Memory {
        let mut p = small_profile(ddio);
        p.cpu.snoop_filter_ways = sf_ways;
        p.validate().unwrap();
        Memory::new(&p, 2)
    }

    /// Non-inclusive: a fill from DRAM goes to the L2 alone; the L2's victim enters the LLC; a hit there
    /// moves the line back to the L2 and out of the LLC.
    #[test]
    fn a_non_inclusive_llc_holds_what_the_l2s_evict() {
        let mut m = small_non_inclusive(1, 4);
        assert!(m.cpu_access(0, l(1), Op::Read, 0) > 79_000);
        assert_eq!((m.llc_holds(l(1)), m.core_holds(0, l(1))), (None, true));
        // Two more lines of the 2-way L2 set push l(1) out of the core, into the LLC (any way).
        m.cpu_access(0, l(2), Op::Read, 0);
        m.cpu_access(0, l(3), Op::Read, 0);
        assert_eq!((m.llc_holds(l(1)), m.core_holds(0, l(1))), (Some(false), false));
        assert_eq!(m.cpu_access(0, l(1), Op::Read, 0), m.lat.llc);
        assert_eq!((m.llc_holds(l(1)), m.core_holds(0, l(1))), (None, true));
        assert_eq!(m.stats.llc, (1, 3));
    }

    /// With inclusive ways (A4's C1), a line the NIC wrote into a DDIO way migrates to them when a core
    /// reads it and stays in the LLC, clean in the L2 and dirty in the LLC, so the NIC's next write to it
    /// hits; a line a core evicted into another way still leaves the LLC when read.
    #[test]
    fn a_line_read_from_a_ddio_way_migrates_to_the_inclusive_ways() {
        let mut p = small_profile(1);
        (p.cpu.snoop_filter_ways, p.cpu.inclusive_ways) = (4, 1);
        p.validate().unwrap();
        let mut m = Memory::new(&p, 2);
        assert_eq!(m.nic_write(l(1), 1, 0), 0);
        assert_eq!(m.llc_holds(l(1)), Some(true), "allocated in the DDIO way");
        assert_eq!(m.cpu_access(0, l(1), Op::Read, 0), m.lat.llc);
        let s = m.llc.find(l(1)).expect("kept in the LLC");
        assert_eq!((s.way, m.llc.dirty(s), m.core_holds(0, l(1))), (0, true, true));
        assert!(!m.l2[0].dirty(m.l2[0].find(l(1)).unwrap()));
        assert_eq!(m.nic_write(l(1), 1, 0), 1, "the NIC's next write hits");
        assert!(!m.core_holds(0, l(1)));
        // A line the L2 gave up, in a way that is neither: read, it leaves the LLC.
        m.cpu_access(0, l(2), Op::Read, 0);
        m.cpu_access(0, l(3), Op::Read, 0);
        m.cpu_access(0, l(5), Op::Read, 0);
        let s = m.llc.find(l(2)).expect("l(2) was evicted into the LLC");
        assert!(m.ddio_mask & 1 << s.way == 0 && m.inclusive_mask & 1 << s.way == 0);
        m.cpu_access(0, l(2), Op::Read, 0);
        assert_eq!(m.llc_holds(l(2)), None);
        assert!(p.cpu.inclusive_ways <= p.cpu.llc.ways);
        p.cpu.snoop_filter_ways = 0;
        let e = p.validate().unwrap_err().to_string();
        assert!(e.contains("inclusive ways"), "{e}");
    }

    /// A DMA write finds a core's copy through the snoop filter and takes it away; a DMA read of a line a
    /// core holds modified is served from that core, not DRAM; a core's miss on a line another core holds
    /// modified is a transfer.
    #[test]
    fn the_snoop_filter_serves_and_invalidates_private_copies() {
        let mut m = small_non_inclusive(1, 4);
        m.cpu_access(0, l(1), Op::Write, 0);
        assert_eq!(m.llc_holds(l(1)), None);
        let read = m.dram.read_bytes;
        assert_eq!(m.nic_read(l(1), 1, 0), 0, "served from core 0's L2");
        assert_eq!(m.dram.read_bytes, read);
        assert_eq!(m.cpu_access(1, l(1), Op::Read, 0), m.lat.transfer);
        assert!(m.core_holds(0, l(1)) && m.core_holds(1, l(1)));
        assert_eq!(m.nic_write(l(1), 1, 0), 0);
        assert_eq!((m.core_holds(0, l(1)), m.core_holds(1, l(1))), (false, false));
        assert_eq!(m.llc_holds(l(1)), Some(true), "allocated in the DDIO way");
        assert_eq!(m.sf.as_ref().map(SnoopFilter::occupancy), Some(0));
    }

    /// A snoop-filter entry displaced to track a new line takes its line from the core that held it
    /// (back-invalidation), and the line enters the LLC as that core's eviction would.
    #[test]
    fn a_snoop_filter_eviction_back_invalidates_the_l2() {
        let mut m = small_non_inclusive(1, 2);
        m.cpu_access(0, l(1), Op::Write, 0);
        m.cpu_access(1, l(2), Op::Read, 0);
        // The filter's set holds two lines: a third, in core 1's L2, displaces l(1), the least recent.
        m.cpu_access(1, l(3), Op::Read, 0);
        assert!(!m.core_holds(0, l(1)), "back-invalidated");
        assert!(m.core_holds(1, l(2)) && m.core_holds(1, l(3)));
        assert_eq!(m.llc_holds(l(1)), Some(false));
        // Its modified data went with it: the LLC's copy is dirty, and its eviction writes DRAM.
        assert_eq!(m.dram.write_bytes, 0);
        for i in 4..12 {
            m.cpu_access(0, l(i), Op::Read, 0);
        }
        assert_eq!((m.llc_holds(l(1)), m.dram.write_bytes), (None, 64));
    }

    #[test]
    fn llc_eviction_back_invalidates_and_writes_back() {
        let mut m = small(1);
        m.cpu_access(0, l(1), Op::Write, 0);
        // Four more lines of the same LLC set through core 1 push l(1) out of the LLC (4 ways).
        for i in 2..6 {
            m.cpu_access(1, l(i), Op::Read, 0);
        }
        assert_eq!(m.llc_holds(l(1)), None);
        assert!(!m.core_holds(0, l(1)));
        assert_eq!(m.dram.write_bytes, 64);
    }
}
