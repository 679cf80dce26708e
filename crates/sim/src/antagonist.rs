//! Co-located programs: cores beside the NF's that load the LLC and DRAM as a memory-bound program does,
//! so that the NF's cores and its NIC meet their memory bandwidth pressure through the same caches and
//! the same loaded DRAM latency ([`crate::dram`]). rxBisect §6.2 co-locates such programs with NAT and LB
//! (Figure 16: PageRank; Figure 17: "a varying number of co-located STREAM triad instances, which are
//! memory bandwidth intensive").
//!
//! **STREAM triad** (McCalpin, stream.c 5.10): `a[j] = b[j] + q * c[j]` over three arrays of
//! `STREAM_ARRAY_SIZE` = 10,000,000 doubles (80 MB each, stream.c's default, which its own rule of four
//! times the LLCs' total sizes keeps far above a 22 MiB LLC), again and again. Each instance is one
//! thread on a core of its own, with its own private caches and hardware prefetchers, beside the NF's
//! cores on the same LLC and DRAM. A step does [`LINES_PER_STEP`] lines of the three arrays: per line, a
//! load of `b`'s and `c`'s and a store to `a`'s (a write-allocating store, as stream.c compiled without
//! non-temporal stores issues it). An out-of-order core overlaps its misses, at most its L1D fill
//! buffers at a time (the rule [`crate::probe`] applies to stores and prefetches: Little's law), and
//! the hardware prefetchers' fills take the same buffers: so every line the step brings from the LLC or
//! DRAM, asked for or prefetched, costs its latency divided by the fill buffers, and every access the
//! private caches serve a cycle. A core's bandwidth is then bounded by its fill buffers over the loaded
//! latency. The triad's arithmetic (two flops a double) hides under the misses and is not charged.
//!
//! An instance's accesses are its own: the NF's counters (cache hit rates, cycles) leave them out, as a
//! `perf` run on the NF's cores would; its DRAM traffic counts in the memory bandwidth, as Intel PCM's
//! does. Its arrays take simulated addresses of their own ([`crate::addr::ANTAGONIST_LINE`]); no host
//! memory backs them.

use crate::addr::ANTAGONIST_LINE;
use crate::memory::{Memory, Op};
use serde::Serialize;

/// Lines of each array a step covers (one page of each: the streamer prefetcher's horizon).
pub const LINES_PER_STEP: u64 = 64;
/// Doubles per array: stream.c's default `STREAM_ARRAY_SIZE`.
const STREAM_ARRAY_SIZE: u64 = 10_000_000;
/// Lines per array, rounded up to whole 4 KiB pages so that the arrays start page-aligned.
const ARRAY_LINES: u64 = (STREAM_ARRAY_SIZE * 8).div_ceil(4096) * 64;

/// One STREAM triad instance on its own core.
#[derive(Debug, Clone)]
pub struct StreamTriad {
    /// The core it runs on (the memory model's index: after the NF's workers).
    core: usize,
    /// First line of array `a`; `b` and `c` follow.
    base: u64,
    /// Next line of the arrays to process.
    pos: u64,
    /// Lines of the three arrays processed so far (each counts three: two loads and a store).
    pub lines: u64,
}

impl StreamTriad {
    /// Instance `i` (from 0) on memory core `core`.
    pub fn new(i: usize, core: usize) -> StreamTriad {
        StreamTriad { core, base: ANTAGONIST_LINE + 3 * ARRAY_LINES * i as u64, pos: 0, lines: 0 }
    }

    /// Run one step at `now`; returns when it ends, ps. The hierarchy's hit and miss counters are left as
    /// they were (module doc).
    pub fn step(&mut self, mem: &mut Memory, now: u64, cycle_ps: u64, fill_buffers: u64) -> u64 {
        let counters = mem.stats;
        let n = LINES_PER_STEP.min(ARRAY_LINES - self.pos);
        for j in self.pos..self.pos + n {
            mem.cpu_access(self.core, self.base + ARRAY_LINES + j, Op::Read, now);
            mem.cpu_access(self.core, self.base + 2 * ARRAY_LINES + j, Op::Read, now);
            mem.cpu_access(self.core, self.base + j, Op::Write, now);
        }
        let s = mem.stats;
        let from_llc = s.llc.0 - counters.llc.0 + s.prefetches.0 - counters.prefetches.0;
        let from_dram = s.llc.1 - counters.llc.1 + s.prefetches.1 - counters.prefetches.1;
        let llc = mem.llc_latency_ps();
        let fills = from_llc * llc + from_dram * (llc + mem.dram.latency_ps());
        let private = 3 * n - (s.llc.0 + s.llc.1 - counters.llc.0 - counters.llc.1);
        self.pos = (self.pos + n) % ARRAY_LINES;
        self.lines += 3 * n;
        mem.stats = counters;
        now + private * cycle_ps + fills / fill_buffers
    }
}

/// What the co-located programs did in the measurement window.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct AntagonistReport {
    /// STREAM triad instances.
    pub instances: usize,
    /// Their combined triad bandwidth in the window, GB/s, counted as stream.c counts it (24 bytes of
    /// arrays per element).
    pub triad_gbs: f64,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::profile::Profile;

    /// One instance alone runs at the bandwidth its fill buffers allow over the loaded DRAM latency, far
    /// from the whole DRAM's; its accesses leave the hierarchy's counters alone; two instances touch
    /// disjoint arrays.
    #[test]
    fn a_triad_is_bound_by_its_fill_buffers_and_leaves_the_counters_alone() {
        let p = Profile::r640_silver4216();
        let mut mem = Memory::new(&p, 1);
        let cycle = p.ps_per_cycle() as u64;
        let mut s = StreamTriad::new(0, 0);
        let mut t = 0;
        while t < 2_000_000_000 {
            mem.dram.set_clock(t);
            t = s.step(&mut mem, t, cycle, u64::from(p.cpu.fill_buffers));
        }
        assert_eq!(mem.stats, Default::default());
        let gbs = s.lines as f64 * 64.0 / t as f64 * 1000.0;
        let moved = (mem.dram.read_bytes + mem.dram.write_bytes) as f64 / t as f64 * 1000.0;
        // 10 fill buffers x 64 B over ~100 ns of loaded latency: several GB/s, a fraction of the 76.8
        // GB/s peak; DRAM moves the three lines each element touches plus the write-backs.
        assert!((3.0..30.0).contains(&gbs), "{gbs} GB/s");
        assert!(moved > gbs * 0.9, "{moved} GB/s moved for {gbs}");
        assert!(StreamTriad::new(1, 1).base >= s.base + 3 * ARRAY_LINES);
    }
}
