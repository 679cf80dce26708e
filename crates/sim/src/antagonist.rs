//! Co-located programs: cores beside the NF's that run a memory-bound loop, so that the NF's cores and
//! its NIC meet their memory bandwidth pressure through the same caches and the same loaded DRAM
//! latency ([`crate::dram`]), or that measure what the simulated server gives such a loop. rxBisect §6.2
//! co-locates STREAM triads with NAT and LB (Figure 16: PageRank; Figure 17: "a varying number of
//! co-located STREAM triad instances, which are memory bandwidth intensive"); nicmem §6.5 (Figure 14)
//! times a copy loop between host memory and NIC memory ([`CopyLoop`]).
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
//! **PageRank** ([`PageRank`]): the GAP Benchmark Suite's pull PageRank over its uniform random
//! graph, one thread a core; each edge reads a line of the contributions array at random.
//!
//! **On the other socket** ([`crate::remote::Socket::Remote`]) a triad or PageRank thread runs as `numactl
//! --cpunodebind=1 --membind=0` runs it: its arrays in the memory of the NIC's socket, its core and caches on
//! the other (a server whose every core on the NIC's socket runs the NF has no other place for it). Its lines
//! never enter this socket's caches: they go through the other socket's LLC, and each miss reads this
//! socket's DRAM across the links, each dirty victim is written back to it ([`crate::remote`]). A miss waits
//! for the LLC, the loaded DRAM latency and the links' round trip, over the fill buffers, and the data
//! crosses the links' bandwidth, shared by every program there ([`crate::upi`]).
//!
//! An instance's accesses are its own: the NF's counters (cache hit rates, cycles) leave them out, as a
//! `perf` run on the NF's cores would; its DRAM traffic counts in the memory bandwidth, as Intel PCM's
//! does. Its arrays take simulated addresses of their own ([`crate::addr::ANTAGONIST_LINE`]); no host
//! memory backs them.

use crate::addr::ANTAGONIST_LINE;
use crate::machine::Machine;
use crate::memory::{MemStats, Memory, Op};
pub use crate::pagerank::PageRank;
use serde::Serialize;

/// Lines of each array a step covers (one page of each: the streamer prefetcher's horizon).
pub const LINES_PER_STEP: u64 = 64;
/// Doubles per array: stream.c's default `STREAM_ARRAY_SIZE`.
const STREAM_ARRAY_SIZE: u64 = 10_000_000;
/// Lines per array, rounded up to whole 4 KiB pages so that the arrays start page-aligned.
const ARRAY_LINES: u64 = (STREAM_ARRAY_SIZE * 8).div_ceil(4096) * 64;

/// One STREAM triad instance: the lines of its three arrays, a step at a time.
#[derive(Debug, Clone)]
pub struct StreamTriad {
    /// First line of array `a`; `b` and `c` follow.
    base: u64,
    /// Next line of the arrays to process.
    pos: u64,
    /// Lines of the three arrays processed so far (each counts three: two loads and a store).
    pub lines: u64,
}

impl StreamTriad {
    /// Instance `i` (from 0).
    pub fn new(i: usize) -> StreamTriad {
        StreamTriad { base: after_triads(i), pos: 0, lines: 0 }
    }
}

impl Walk for StreamTriad {
    fn next(&mut self, out: &mut Vec<(u64, Op)>) {
        let n = LINES_PER_STEP.min(ARRAY_LINES - self.pos);
        for j in self.pos..self.pos + n {
            out.extend([
                (self.base + ARRAY_LINES + j, Op::Read),
                (self.base + 2 * ARRAY_LINES + j, Op::Read),
                (self.base + j, Op::Write),
            ]);
        }
        self.pos = (self.pos + n) % ARRAY_LINES;
        self.lines += 3 * n;
    }
}

/// A memory-bound loop: the lines each of its steps touches, in order.
pub trait Walk {
    /// Append the next step's lines to `out`.
    fn next(&mut self, out: &mut Vec<(u64, Op)>);
}

/// A [`Walk`] running on a core of the NIC's socket (`Some`, the memory model's index, after the NF's
/// workers) or of the other socket (`None`, [`crate::remote`]).
#[derive(Debug, Clone)]
pub struct OnCore<W> {
    /// The loop.
    pub walk: W,
    core: Option<usize>,
    lines: Vec<(u64, Op)>,
}

impl<W: Walk> OnCore<W> {
    /// `walk` on memory core `core`, or on the other socket.
    pub fn new(walk: W, core: Option<usize>) -> OnCore<W> {
        OnCore { walk, core, lines: Vec::new() }
    }

    /// Run one step at `now`; returns when it ends, ps. On the NIC's socket every line goes through the
    /// core's caches, the hierarchy's counters left as they were (module doc); on the other one, through
    /// that socket's LLC and the links. Either way a line the caches serve costs its latency, the core
    /// overlaps its lines' latencies up to its fill buffers, and each line is issued when the ones before
    /// it have taken their share of the step.
    pub fn step(&mut self, m: &mut Machine, now: u64) -> u64 {
        self.lines.clear();
        self.walk.next(&mut self.lines);
        match self.core {
            // Each line is issued as a fill buffer frees: a step of misses spans microseconds, and its
            // DRAM traffic is spread over them as the core issues it.
            Some(core) => {
                let mut spent = 0;
                for &(line, op) in &self.lines {
                    let counters = m.mem.stats;
                    m.mem.cpu_access(core, line, op, now + spent);
                    spent += charge(&mut m.mem, counters, 1, m.cycle_ps, m.fill_buffers);
                }
                now + spent
            }
            None => {
                let other = m.other_socket.as_mut().expect("checked: the profile has a second socket");
                let (mut latency, mut arrival) = (0, now);
                for &(line, op) in &self.lines {
                    let at = now + latency / m.fill_buffers;
                    let (l, a) = other.access(&mut m.mem.dram, line, op == Op::Write, at);
                    latency += l;
                    arrival = arrival.max(a);
                }
                (now + latency / m.fill_buffers).max(arrival)
            }
        }
    }
}

/// What `accesses` made since the counters were `before` cost a co-located core: a cycle each its private
/// caches served, and each line brought from the LLC or DRAM, asked for or prefetched, its latency over
/// the fill buffers. The counters are put back as they were (module doc).
fn charge(mem: &mut Memory, before: MemStats, accesses: u64, cycle_ps: u64, fill_buffers: u64) -> u64 {
    let s = mem.stats;
    let from_llc = s.llc.0 - before.llc.0 + s.prefetches.0 - before.prefetches.0;
    let from_dram = s.llc.1 - before.llc.1 + s.prefetches.1 - before.prefetches.1;
    let llc = mem.llc_latency_ps();
    let fills = from_llc * llc + from_dram * (llc + mem.dram.latency_ps());
    let private = accesses - (s.llc.0 + s.llc.1 - before.llc.0 - before.llc.1);
    mem.stats = before;
    private * cycle_ps + fills / fill_buffers
}

/// Bytes of the copy loop's small buffer (the artifact's `dstsize`, "memcpy from buffer to 128KiB").
const COPY_PIECE: u64 = 128 * 1024;

/// What [`CopyLoop`] copies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CopySpec {
    /// Bytes of the host buffer (the artifact's source size, 1 KiB to 1 GiB).
    pub bytes: u64,
    /// Whether the 128 KiB buffer is NIC memory (`ibv_alloc_dm`) rather than host memory.
    pub nicmem: bool,
    /// Whether the copy goes from the 128 KiB buffer into the host buffer (the artifact's `-r`).
    pub from: bool,
}

impl CopySpec {
    /// The loop `way` (`to-host`, `to-nicmem`, `from-host` or `from-nicmem`: to or from a 128 KiB buffer
    /// in host or NIC memory) over a host buffer of `bytes`.
    pub fn new(way: &str, bytes: u64) -> Result<CopySpec, String> {
        let (from, nicmem) = match way.trim() {
            "to-host" => (false, false),
            "to-nicmem" => (false, true),
            "from-host" => (true, false),
            "from-nicmem" => (true, true),
            _ => return Err(format!("'{way}': write to-host, to-nicmem, from-host or from-nicmem")),
        };
        if !(64..=1 << 40).contains(&bytes) {
            return Err(format!("the host buffer must be 64 B to 1 TiB, got {bytes} B"));
        }
        Ok(CopySpec { bytes, nicmem, from })
    }
}

/// nicmem's Figure 14 copy loop (the artifact's `fig14/rdma-core/libibverbs/examples/dm_copy.c`):
/// `memcpy` between a host buffer of [`CopySpec::bytes`] and a 128 KiB buffer in host or NIC memory, in
/// pieces of at most 128 KiB, again and again, on a core of its own. Host lines go through the core's
/// caches as the triad's do (a cycle where its private caches serve, else the fill over the fill
/// buffers); a line of NIC memory read is an uncached PCIe round trip, serialized as uncached loads are,
/// and a line written leaves through the core's write-combining buffers ([`crate::wc`]).
#[derive(Debug, Clone)]
pub struct CopyLoop {
    core: usize,
    spec: CopySpec,
    /// First line of the host buffer; the 128 KiB host buffer, when there is one, follows it.
    base: u64,
    /// Next line of the host buffer.
    pos: u64,
    /// Lines copied so far.
    pub lines: u64,
}

impl CopyLoop {
    /// The loop of `spec` on memory core `core`, its host lines after `first_line`.
    pub fn new(spec: CopySpec, core: usize, first_line: u64) -> CopyLoop {
        CopyLoop { core, spec, base: first_line, pos: 0, lines: 0 }
    }

    fn host_lines(&self) -> u64 {
        self.spec.bytes.div_ceil(64)
    }

    /// Run one step at `now`; returns when it ends, ps.
    pub fn step(&mut self, m: &mut Machine, now: u64) -> u64 {
        let counters = m.mem.stats;
        let total = self.host_lines();
        let piece = COPY_PIECE / 64;
        let n = LINES_PER_STEP.min(total - self.pos).min(piece - self.pos % piece);
        let small = self.base + total.next_multiple_of(64);
        // Which side is NIC memory: the 128 KiB buffer, read (`from`) or written.
        let (src_nic, dst_nic) = (self.spec.nicmem && self.spec.from, self.spec.nicmem && !self.spec.from);
        let mut uncached = 0;
        let mut host = 0;
        for j in self.pos..self.pos + n {
            let big = self.base + j;
            let other = small + j % piece;
            let (src, dst) = if self.spec.from { (other, big) } else { (big, other) };
            if src_nic {
                uncached = m.pcie.mmio_read(now + uncached, 64) - now;
            } else {
                m.mem.cpu_access(self.core, src, Op::Read, now);
                host += 1;
            }
            if !dst_nic {
                m.mem.cpu_access(self.core, dst, Op::Write, now);
                host += 1;
            }
        }
        let mut end = now + charge(&mut m.mem, counters, host, m.cycle_ps, m.fill_buffers) + uncached;
        if dst_nic {
            end = end.max(m.wc_write(self.core, now, n * 64));
        }
        self.pos = (self.pos + n) % total;
        self.lines += n;
        end
    }
}

/// A co-located program.
#[derive(Debug, Clone)]
pub enum Program {
    /// A STREAM triad instance.
    Triad(OnCore<StreamTriad>),
    /// A PageRank thread.
    PageRank(OnCore<PageRank>),
    /// nicmem Figure 14's copy loop.
    Copy(CopyLoop),
}

impl Program {
    /// Run one step at `now`; returns when it ends, ps.
    pub fn step(&mut self, m: &mut Machine, now: u64) -> u64 {
        match self {
            Program::Triad(t) => t.step(m, now),
            Program::PageRank(p) => p.step(m, now),
            Program::Copy(c) => c.step(m, now),
        }
    }

    /// What the program has done so far as its own benchmark counts it: the triad's bytes (24 an
    /// element, 64 a line of each of its three arrays), PageRank's edges, the copy's bytes copied.
    pub fn moved(&self) -> u64 {
        match self {
            Program::Triad(t) => t.walk.lines * 64,
            Program::PageRank(p) => p.walk.edges,
            Program::Copy(c) => c.lines * 64,
        }
    }
}

/// First simulated line after the arrays of `triads` STREAM triad instances.
pub fn after_triads(triads: usize) -> u64 {
    ANTAGONIST_LINE + 3 * ARRAY_LINES * triads as u64
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// What the co-located programs did in the measurement window.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct AntagonistReport {
    /// STREAM triad instances.
    pub instances: usize,
    /// Their combined triad bandwidth in the window, GB/s, counted as stream.c counts it (24 bytes of
    /// arrays per element).
    pub triad_gbs: f64,
    /// PageRank threads.
    #[serde(skip_serializing_if = "is_zero")]
    pub pagerank_threads: usize,
    /// The edges they traversed in the window, billions a second (GTEPS).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pagerank_gteps: Option<f64>,
    /// The copy loop's rate in the window, bytes copied a core cycle (the unit of nicmem Figure 14 and
    /// of the artifact's `dm_copy.c`, which counts TSC cycles: the same on a part run at its base
    /// frequency, Turbo Boost off).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub copy_bytes_per_cycle: Option<f64>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::machine::Machine;
    use crate::profile::Profile;

    /// One instance alone runs at the bandwidth its fill buffers allow over the loaded DRAM latency, far
    /// from the whole DRAM's; its accesses leave the hierarchy's counters alone; two instances touch
    /// disjoint arrays.
    #[test]
    fn a_triad_is_bound_by_its_fill_buffers_and_leaves_the_counters_alone() {
        let p = Profile::r640_silver4216();
        let mut m = Machine::new(&p, 1, (1 << 30, 1 << 20));
        let mut s = OnCore::new(StreamTriad::new(0), Some(0));
        let mut t = 0;
        while t < 2_000_000_000 {
            m.mem.dram.set_clock(t);
            t = s.step(&mut m, t);
        }
        let s = s.walk;
        let mem = &m.mem;
        assert_eq!(mem.stats, Default::default());
        let gbs = s.lines as f64 * 64.0 / t as f64 * 1000.0;
        let moved = (mem.dram.read_bytes + mem.dram.write_bytes) as f64 / t as f64 * 1000.0;
        // 10 fill buffers x 64 B over ~100 ns of loaded latency: several GB/s, a fraction of the 76.8
        // GB/s peak; DRAM moves the three lines each element touches plus the write-backs.
        assert!((3.0..30.0).contains(&gbs), "{gbs} GB/s");
        assert!(moved > gbs * 0.9, "{moved} GB/s moved for {gbs}");
        assert!(StreamTriad::new(1).base >= s.base + 3 * ARRAY_LINES);
    }

    /// On the other socket, one instance is bound by its fill buffers over the LLC's and DRAM's latency
    /// and the links' round trip, slower than on the NIC's; sixteen together by the links' bandwidth towards them. They
    /// read three lines and write one back for each line of `a`, and leave this socket's caches alone.
    #[test]
    fn remote_triads_cross_the_links_and_leave_the_caches_alone() {
        let p = Profile::r640_silver4216();
        let link = p.remote_socket.as_ref().unwrap().link_gbs;
        // Run `instances` for `warm` ps, until the other socket's LLC is full of dirty lines, and measure
        // the next `ps`.
        let rate = |instances: usize, warm: u64, ps: u64| {
            let mut m = Machine::new(&p, 1, (1 << 30, 1 << 20));
            m.other_socket = crate::remote::OtherSocket::new(&p);
            let mut triads: Vec<_> = (0..instances).map(|i| OnCore::new(StreamTriad::new(i), None)).collect();
            let mut at = vec![0; instances];
            let (mut t, mut lines) = (0, 0);
            while t < warm + ps {
                if lines == 0 && t >= warm {
                    m.mem.dram.reset_counters();
                    lines = triads.iter().map(|s| s.walk.lines).sum::<u64>();
                }
                let i = (0..instances).min_by_key(|&i| at[i]).unwrap();
                t = at[i];
                m.mem.dram.set_clock(t);
                at[i] = triads[i].step(&mut m, t);
            }
            assert_eq!(m.mem.stats, Default::default());
            // Three lines read for each written back.
            let (read, written) = (m.mem.dram.read_bytes as f64, m.mem.dram.write_bytes as f64);
            assert!((read / written - 3.0).abs() < 0.1, "{read} B read, {written} B written");
            (triads.iter().map(|s| s.walk.lines).sum::<u64>() - lines) as f64 * 64.0 / (t - warm) as f64 * 1000.0
        };
        let one = rate(1, 30_000_000_000, 10_000_000_000);
        // The other socket's LLC (60 cycles at 2.1 GHz), idle DRAM and the links' round trip.
        let lat = (28.6 + 80.0 + 110.0) * 1e-9;
        let bound = f64::from(p.cpu.fill_buffers) * 64.0 / lat / 1e9;
        assert!(one < bound && one > 0.8 * bound, "{one} GB/s, fill buffers allow {bound}");
        let sixteen = rate(16, 3_000_000_000, 3_000_000_000);
        assert!(sixteen <= link && sixteen > 0.95 * link, "{sixteen} GB/s over links of {link}");
    }

    /// nicmem Figure 14's mechanisms: a copy within host memory from an L1-sized source costs two cycles
    /// a line; into NIC memory it runs at one link's rate for 64 B posted writes; out of it, one uncached
    /// round trip a line.
    #[test]
    fn a_copy_loop_is_bound_by_the_caches_the_link_or_the_round_trip() {
        let p = Profile::r640_silver4216();
        let rate = |way: &str| {
            let mut m = Machine::new(&p, 1, (1 << 30, 1 << 20));
            let mut c = CopyLoop::new(CopySpec::new(way, 8192).unwrap(), 0, after_triads(0));
            let (mut t, mut warm) = (0, (0, 0));
            while t < 200_000_000 {
                if warm == (0, 0) && t > 100_000_000 {
                    warm = (t, c.lines);
                }
                t = c.step(&mut m, t);
            }
            (c.lines - warm.1) as f64 * 64.0 / (t - warm.0) as f64 * 1000.0
        };
        let cycle_gbs = 64.0 / p.ps_per_cycle() * 1000.0;
        let host = rate("to-host");
        assert!((host - cycle_gbs / 2.0).abs() < 0.01 * host, "{host} GB/s within host memory");
        let m = Machine::new(&p, 1, (1 << 30, 1 << 20));
        let link = 64.0 / m.pcie.posted_line_ps() as f64 * 1000.0;
        let into = rate("to-nicmem");
        assert!((into - link).abs() < 0.01 * link, "{into} GB/s into NIC memory, the link carries {link}");
        let out = rate("from-nicmem");
        let trip = 64.0 / (p.pcie.read_base_ns * 1000.0 + p.pcie.read_per_byte_ns * 64_000.0) * 1000.0;
        assert!((out - trip).abs() < 0.02 * trip, "{out} GB/s out of NIC memory, {trip} a round trip a line");
        assert!(CopySpec::new("sideways", 8192).unwrap_err().contains("to-nicmem"));
        assert!(CopySpec::new("to-host", 8).unwrap_err().contains("64 B"));
    }
}
