//! PageRank as a co-located program (rxBisect §6.2, Figure 16: NAT and LB "co-located with PageRank to
//! increase memory bandwidth pressure"). The paper names neither the implementation nor the graph; rxlab
//! runs the GAP Benchmark Suite's (Beamer, Asanović and Patterson, arXiv:1508.03619) pull PageRank in
//! its Gauss-Seidel form (`pr.cc`, `PageRankPullGS`) on the suite's `urand` benchmark graph: 2^27
//! vertices with 16 uniformly random edges each, undirected, so each vertex's neighbour list in the CSR
//! holds 32 (both directions of its edges). The uniform graph is the suite's one without locality: its
//! contributions array (512 MiB of 4-byte floats) is read at random, and a graph with hubs (its `kron`)
//! would hit the cache more often and load memory less.
//!
//! For each vertex `u`, in order, the kernel reads its CSR offsets, its neighbour list, the contribution
//! of each neighbour (a random line), and writes `u`'s score and contribution. A step does
//! [`VERTICES_PER_STEP`] vertices, one line of scores. Threads take blocks of [`CHUNK`] vertices in
//! turn, as OpenMP's `schedule(dynamic, 16384)` hands them out. The arrays are shared by every thread and
//! take simulated addresses of their own; the neighbours are a hash of the edge's index, so every pass
//! and every thread sees the same graph.

use crate::addr::ANTAGONIST_LINE;
use crate::antagonist::Walk;
use crate::memory::Op;

/// Vertices (GAP's `-u 27`).
const VERTICES: u64 = 1 << 27;
/// Neighbours a vertex: 16 edges a vertex, stored both ways.
const DEGREE: u64 = 32;
/// Vertices a step: one line of 4-byte scores.
pub const VERTICES_PER_STEP: u64 = 16;
/// Vertices a thread takes at a time (GAP `pr.cc`'s `schedule(dynamic, 16384)`).
pub const CHUNK: u64 = 16384;
/// First line of the graph's arrays, far above the STREAM triads' and the copy loop's.
const BASE: u64 = ANTAGONIST_LINE + (1 << 30);
/// Lines of the 8-byte CSR offsets, the 4-byte neighbour ids, and the 4-byte contributions and scores.
const OFFSET_LINES: u64 = (VERTICES + 1) * 8 / 64 + 1;
const NEIGHBOUR_LINES: u64 = VERTICES * DEGREE * 4 / 64;
const VALUE_LINES: u64 = VERTICES * 4 / 64;
const OFFSETS: u64 = BASE;
const NEIGHBOURS: u64 = OFFSETS + OFFSET_LINES;
const CONTRIB: u64 = NEIGHBOURS + NEIGHBOUR_LINES;
const SCORES: u64 = CONTRIB + VALUE_LINES;

/// One PageRank thread of `threads`.
#[derive(Debug, Clone)]
pub struct PageRank {
    threads: u64,
    /// Next vertex.
    u: u64,
    /// Edges traversed so far.
    pub edges: u64,
}

impl PageRank {
    /// Thread `thread` (from 0) of `threads`.
    pub fn new(thread: usize, threads: usize) -> PageRank {
        let (thread, threads) = (thread as u64, threads.max(1) as u64);
        PageRank { threads, u: thread * CHUNK, edges: 0 }
    }
}

/// The neighbour of edge `e`: a vertex drawn uniformly by a hash of the edge (SplitMix64's finaliser).
fn neighbour(e: u64) -> u64 {
    let mut z = e.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    (z ^ (z >> 31)) % VERTICES
}

impl Walk for PageRank {
    fn next(&mut self, out: &mut Vec<(u64, Op)>) {
        let first = self.u;
        let n = VERTICES_PER_STEP;
        // The block's offsets, then each vertex's neighbour list and the contributions it reads.
        out.extend((first * 8 / 64..=(first + n) * 8 / 64).map(|l| (OFFSETS + l, Op::Read)));
        let edges = first * DEGREE..(first + n) * DEGREE;
        out.extend((edges.start * 4 / 64..edges.end * 4 / 64).map(|l| (NEIGHBOURS + l, Op::Read)));
        out.extend(edges.map(|e| (CONTRIB + neighbour(e) * 4 / 64, Op::Read)));
        // The block's new scores and contributions.
        out.extend([(SCORES + first * 4 / 64, Op::Write), (CONTRIB + first * 4 / 64, Op::Write)]);
        self.edges += n * DEGREE;
        self.u += n;
        if self.u.is_multiple_of(CHUNK) {
            self.u = (self.u + (self.threads - 1) * CHUNK) % VERTICES;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A step reads a line or two of offsets, the block's 32 lines of neighbours and one line of
    /// contributions an edge, spread over the whole array; threads take the chunks in turn and wrap
    /// around the graph.
    #[test]
    fn a_step_reads_the_blocks_lists_and_a_random_line_an_edge() {
        let mut t = PageRank::new(1, 4);
        let mut out = Vec::new();
        t.next(&mut out);
        let reads = |lo: u64, hi: u64| out.iter().filter(|&&(l, op)| op == Op::Read && (lo..hi).contains(&l)).count();
        assert_eq!(reads(NEIGHBOURS, CONTRIB), 32);
        assert_eq!(reads(CONTRIB, SCORES), 512);
        assert!((1..=3).contains(&reads(OFFSETS, NEIGHBOURS)));
        assert_eq!(out.iter().filter(|&&(_, op)| op == Op::Write).count(), 2);
        let lines: std::collections::HashSet<u64> =
            out.iter().filter(|&&(l, _)| (CONTRIB..SCORES).contains(&l)).map(|&(l, _)| l).collect();
        assert!(lines.len() > 500, "{} distinct contribution lines", lines.len());
        assert_eq!((t.u, t.edges), (CHUNK + 16, 512));
        for _ in 1..CHUNK / 16 {
            t.next(&mut out);
        }
        assert_eq!(t.u, 5 * CHUNK);
        let mut last = PageRank::new(3, 4);
        last.u = VERTICES - 16;
        last.next(&mut out);
        assert_eq!(last.u, 3 * CHUNK);
    }
}
