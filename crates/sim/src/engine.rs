//! The discrete-event engine: it drives one design's real device and driver code and the real apps,
//! single-threaded, in virtual time.
//!
//! Agents and their events:
//! - arrivals: one event per generated packet, when it reaches the NIC, which holds it in its buffer
//!   (per descriptor ring, [`crate::nic`]) or drops it;
//! - the NIC receive pipeline: one event per held packet, when its DMA lands; the device side's `rx`
//!   runs then;
//! - the NIC transmit engine: runs when a doorbell reaches it and while packets are queued; `tx` puts
//!   packets on the wire, where latency (from NIC arrival) and throughput are measured;
//! - cores: a poll runs `rx_burst` and the app with a [`SimProbe`]; `tx_burst` runs as its own event
//!   when that work would have finished (so the NIC never sees packets before the core's time reaches
//!   them), and the next poll follows when the transmit burst ends. A poll that finds nothing puts the core
//!   to sleep: it wakes when the NIC delivers to a queue it serves (or after [`RECHECK_PS`]), at the next
//!   instant of its idle polling rhythm, so idle polling costs no events yet stays in phase.
//!
//! - the sampler: every [`PERIOD_PS`] the design's controller gets a [`ifaces::Sample`].
//!
//! Which sleeping cores a delivery wakes is the design's [`Design::WAKE`]. Deliveries are checked as
//! they happen ([`DeliveryCheck`]: duplicates, and per-flow order where [`Design::PER_FLOW_ORDER`]
//! promises it); what leaves on the wire feeds RFC 4737 reordering.
//!
//! Each step runs atomically at its start time, so state another agent changes during a step's
//! virtual duration is seen at the next step: the usual granularity of execution-driven simulation.
//! Races for one word are settled in virtual time instead, by the probe: a lock whose holder's section
//! lasts beyond an agent's time makes a blocking lock wait ([`Probe::lock`]) and a try-lock fail
//! ([`Probe::lock_free`]), and a compare-and-swap against a value loaded before another agent's
//! winning swap loses ([`Probe::cas_fresh`]).

use crate::antagonist::{AntagonistReport, CopyLoop, OnCore, PageRank, Program, StreamTriad, after_triads};
use crate::config::{Arrivals, SimConfig, SimError};
use crate::event::{Event, Queue};
use crate::machine::Machine;
use crate::nic::Nic;
use crate::noise::{CoreNoise, NoiseReport};
use crate::order::{DeliveryCheck, WireOrder};
use crate::probe::{Agent, SimProbe, Step};
use crate::profile::Profile;
use crate::progress::{Part, Progress};
use crate::remote::{OtherSocket, Socket};
use crate::report::{
    Accounting, Cycles, DescriptorWait, HitRates, LlcDuel, MemBw, MissesPerPacket, PcieDir, PcieReport, PoolShare,
    SettleReport, SharedPoolShares, SimReport, ratio,
};
use crate::sampler::{PERIOD_PS, Sampler};
use crate::settle::{OBSERVE_PS, Observation, Settle};
use crate::stages::{Point, StageClock};
use crate::timeline::Timeline;
use apps::App;
use ifaces::invariants::{RunCounts, Violation, check_buffers};
use ifaces::{
    Arena, CoreCtx, Design, DeviceSide, DriverSide, DropReason, Drops, Metrics, Packet, Phase, Probe, SharedPool,
};
use measure::{LatencyHistogram, ReorderTracker, Throughput};
use rand::SeedableRng;
use rand_distr::{Distribution, Exp1};
use rand_xoshiro::Xoshiro256PlusPlus;
use std::cell::Cell;
use std::collections::BTreeMap;
use std::sync::Arc;
use traffic::{FrameBuf, GenConfig, Generator};
use wire::frame::{FCS_LEN, wire_bits};
use wire::stamp::STAMP_LEN;
use wire::{FiveTuple, IndirectionTable, PacketView, QueueId, Stamp};

/// Longest a sleeping core goes without polling, ps (10 µs): bounds the idle time of designs whose
/// progress does not come from the NIC's deliveries to the core's own queue.
pub const RECHECK_PS: u64 = 10_000_000;
/// How long after the offered traffic ends a packet may still leave and count as delivered in a no-drop
/// trial, ps: RFC 2544 §23 waits two seconds for residual frames after a trial of at least 60 s (§24), so
/// a run, which stands for such a trial, waits 2/60 of its length; and never less than [`RESIDUAL_MIN_PS`].
fn residual_ps(run_ps: u64) -> u64 {
    (run_ps / 30).max(RESIDUAL_MIN_PS)
}
/// The shortest residual allowance, ps (100 us): twice the longest interruption of a typical core's
/// noise (the sysjitter profile's 47.5 us), so that the packets in flight at a short run's end, and a
/// core that was away just then, are not counted late.
const RESIDUAL_MIN_PS: u64 = 100_000_000;

/// How long a run may take to drain after the offered traffic ends, ps (100 ms), and past that, how long
/// it may go without a packet leaving: a slow core emptying a full ring (a processing-variability target
/// core at hundreds of reads a packet, shRing §5.3, rxBisect §6.2) drains on, a stalled design stops.
const DRAIN_LIMIT_PS: u64 = 100_000_000_000;
/// Arrivals between two ring occupancy samples.
const OCCUPANCY_EVERY: u64 = 8;
/// Sequence numbers the RFC 4737 tracker remembers for extents (as the live engine's sink).
const REORDER_WINDOW: usize = 1 << 12;

/// One core's engine-side state.
#[derive(Debug)]
struct CoreState<'c> {
    rx: Vec<Packet<'c>>,
    tx: Vec<Packet<'c>>,
    /// The sequence numbers of `tx`'s packets, in order (marked at each [`Point`] they pass).
    tx_seqs: Vec<u64>,
    /// Time of the core's pending event (its poll or transmit burst), if any.
    scheduled: Option<u64>,
    /// Set while the core idles: (start of the empty poll, its length).
    idle: Option<(u64, u64)>,
    /// Set while the core spins on a full Tx ring (a blocking transmit, [`ifaces::TxFull::Wait`]):
    /// when its last try ended.
    blocked: Option<u64>,
}

/// The next packet to arrive, drawn into the generator's frame buffer.
#[derive(Debug, Clone, Copy)]
struct Upcoming {
    /// Arrival at the NIC, ps.
    at: u64,
    hash: u32,
    seq: u64,
}

/// Counters of the measurement window and of the whole run.
#[derive(Debug, Default)]
struct Counters {
    offered: (u64, u64),
    offered_win: (u64, u64),
    sent: u64,
    /// Packets put on the wire after the residual allowance ([`residual_ps`]).
    sent_late: u64,
    sent_win: (u64, u64),
    delivered: u64,
    /// Packets an app that sends nothing back took ([`apps::App::sends`]), and of those the ones taken
    /// after the residual allowance.
    consumed: (u64, u64),
    delivered_win: u64,
    /// Packets each core received in the window.
    delivered_win_core: Vec<u64>,
    app_dropped: u64,
    drops: Drops,
    drops_win: Drops,
    /// Bytes of the packets the device accepted (the NIC's receive counter, for samples).
    rx_bytes: u64,
    /// Rx calls per core, including the empty polls of its idle rhythm.
    polls: Vec<u64>,
    busy_ps: [u64; Phase::ALL.len()],
    /// Time each core spent in the allocator's shared level in the window, ps: refills, flushes.
    pool_ps: Vec<[u64; 2]>,
    idle_ps: u64,
    occupancy: (f64, u64),
    /// Occupancy samples of the whole run (summed, count), and the cores' busy time in it, ps.
    occupancy_all: (f64, u64),
    busy_all_ps: u64,
    rx_events: u64,
    /// Interruptions that started in the window: count, summed and longest length (ps).
    noise: (u64, u64, u64),
}

impl Counters {
    /// Count a step of core `core` that did work, if it started in the window.
    fn charge(&mut self, win: &Window, t: u64, core: usize, step: &Step) {
        self.busy_all_ps += step.phase_ps.iter().sum::<u64>();
        if win.contains(t) {
            for (b, p) in self.busy_ps.iter_mut().zip(step.phase_ps) {
                *b += p;
            }
        }
        self.pool(win, t, core, step);
    }

    /// Count the time a step of core `core` spent in the allocator's shared level, if it started in the
    /// window; a poll that received nothing counts too (rxBisect: a core re-arms the Ax slots another
    /// core's packets took, refilling its cache to do so).
    fn pool(&mut self, win: &Window, t: u64, core: usize, step: &Step) {
        if win.contains(t) {
            let pool = &mut self.pool_ps[core];
            pool[0] += step.phase_ps[Phase::PoolRefill as usize];
            pool[1] += step.phase_ps[Phase::PoolFlush as usize];
        }
    }

    /// Count an interruption of a core, if it started in the window.
    fn interrupted(&mut self, win: &Window, x: crate::noise::Interruption) {
        if win.contains(x.at) {
            self.noise = (self.noise.0 + 1, self.noise.1 + x.len, self.noise.2.max(x.len));
        }
    }

    /// Count a core's spin on a full Tx ring from `from` to `to` as transmit time, within the window.
    fn spin(&mut self, win: &Window, from: u64, to: u64) {
        self.busy_all_ps += to - from;
        self.busy_ps[Phase::Tx as usize] += win.overlap(from, to);
    }
}

/// The measurement window [start, end) in ps.
#[derive(Debug, Clone, Copy)]
struct Window(u64, u64);

impl Window {
    fn contains(&self, t: u64) -> bool {
        (self.0..self.1).contains(&t)
    }

    /// Length of the overlap of [a, b) with the window.
    fn overlap(&self, a: u64, b: u64) -> u64 {
        b.min(self.1).saturating_sub(a.max(self.0))
    }
}

/// The whole-run counters a settling run is observed by ([`crate::settle`]).
#[derive(Debug, Clone, Copy, Default)]
struct Observed {
    occupancy: (f64, u64),
    busy_ps: u64,
    delivered: u64,
    dram_bytes: u64,
}

impl Observed {
    fn at(c: &Counters, m: &Machine) -> Observed {
        Observed {
            occupancy: c.occupancy_all,
            busy_ps: c.busy_all_ps,
            delivered: c.delivered,
            dram_bytes: m.mem.dram.moved,
        }
    }

    /// The observation of the [`OBSERVE_PS`] since `last`, with cores of `cycle_ps` ps per cycle.
    fn since(&self, last: &Observed, cycle_ps: f64) -> Observation {
        let packets = (self.delivered - last.delivered) as f64;
        Observation {
            occupancy: ratio(self.occupancy.0 - last.occupancy.0, (self.occupancy.1 - last.occupancy.1) as f64),
            cycles: ratio((self.busy_ps - last.busy_ps) as f64 / cycle_ps, packets),
            dram: (self.dram_bytes - last.dram_bytes) as f64 / (OBSERVE_PS as f64 / 1e12),
        }
    }
}

/// Hardware counters read when the window closes.
#[derive(Debug, Clone, Copy)]
struct Snapshot {
    mem: crate::memory::MemStats,
    /// [`crate::memory::Memory::llc_followers_mr161`].
    duel: Option<f64>,
    dram: (u64, u64),
    pcie: (crate::pcie::DirStats, crate::pcie::DirStats),
    read_latency_ns: f64,
    lock_wait_ps: u64,
}

impl Snapshot {
    fn take(m: &Machine) -> Snapshot {
        Snapshot {
            mem: m.mem.stats,
            duel: m.mem.llc_followers_mr161(),
            dram: (m.mem.dram.read_bytes, m.mem.dram.write_bytes),
            pcie: m.pcie.stats(),
            read_latency_ns: m.pcie.read_latency().0,
            lock_wait_ps: m.lock_wait_ps,
        }
    }
}

/// Check a run's parameters against the profile.
fn check(cfg: &SimConfig, profile: &Profile) -> Result<(), SimError> {
    cfg.validate()?;
    profile.validate()?;
    if cfg.noise && cfg.noise_tail == crate::noise::Tail::Rare && cfg.noise_horizon_ps.is_some() {
        for core in 0..cfg.iface.cores.min(profile.cpu.cores) {
            profile
                .core_noise(core, cfg.iface.cores)
                .check_rare_tail()
                .map_err(|message| SimError::Config { option: "noise-tail", message })?;
        }
    }
    if cfg.iface.cores > profile.cpu.cores {
        return Err(SimError::Config {
            option: "cores",
            message: format!(
                "{} cores requested but profile {} has {}; use at most {}",
                cfg.iface.cores, profile.name, profile.cpu.cores, profile.cpu.cores
            ),
        });
    }
    let looping = cfg.stream_triads + cfg.pagerank_threads;
    let option = if cfg.stream_triads > 0 { "stream-triads" } else { "pagerank-threads" };
    if cfg.colocated_socket == Socket::Remote {
        if profile.remote_socket.is_none() {
            return Err(SimError::Config {
                option: "colocated-socket",
                message: format!("profile {} has no second socket (remote_socket)", profile.name),
            });
        }
        if looping > profile.cpu.cores {
            return Err(SimError::Config {
                option,
                message: format!(
                    "{looping} STREAM triads and PageRank threads on the other socket, which has {} cores as \
                     profile {}'s has",
                    profile.cpu.cores, profile.name
                ),
            });
        }
    }
    if cfg.nf_socket == Socket::Remote {
        let refuse = |message: String| Err(SimError::Config { option: "nf-socket", message });
        if profile.remote_socket.is_none() {
            return refuse(format!("profile {} has no second socket (remote_socket)", profile.name));
        }
        if cfg.colocated_socket == Socket::Remote {
            return refuse("the NF on the other socket leaves none for --colocated-socket remote".into());
        }
        if profile.nic.software {
            return refuse(format!("profile {}'s NIC is a core of the NF's socket (nic.software)", profile.name));
        }
    }
    let programs = local_programs(cfg);
    if cfg.iface.cores + programs > profile.cpu.cores {
        return Err(SimError::Config {
            option: if looping > 0 { option } else { "copy-loop" },
            message: format!(
                "each co-located program (STREAM triad, PageRank thread, copy loop) on this socket takes a core \
                 of its own: {} workers and {} programs need {} cores, and profile {} has {}",
                cfg.iface.cores,
                programs,
                cfg.iface.cores + programs,
                profile.name,
                profile.cpu.cores
            ),
        });
    }
    Ok(())
}

/// Co-located programs that take cores of the NIC's socket.
fn local_programs(cfg: &SimConfig) -> usize {
    let looping = cfg.stream_triads + cfg.pagerank_threads;
    usize::from(cfg.copy_loop.is_some()) + if cfg.colocated_socket == Socket::Local { looping } else { 0 }
}

/// Flows handed to the cores' apps at a time when their tables are warmed.
const WARM_CHUNK: usize = 1 << 16;

/// Run design `D` with one app per core (`apps[i]` on core `i`) on `profile` (already resolved, with
/// any DDIO override applied), storing the virtual time reached into `progress` at every sample and the
/// CPU time of each [`Part`] of the run.
pub fn run_design<D: Design, A: App>(
    cfg: &SimConfig,
    profile: &Profile,
    mut apps: Vec<A>,
    progress: &Progress,
) -> Result<SimReport, SimError> {
    check(cfg, profile)?;
    let cores = cfg.iface.cores;
    assert_eq!(apps.len(), cores, "one app per core");
    let mut iface = cfg.iface.clone();
    iface.prefetch.batch = profile.nic.prefetch;
    iface.cq = profile
        .nic
        .cq_format(cfg.cqe_compress)
        .map_err(|message| SimError::Config { option: "cqe-compress", message })?;
    iface.rx_refill = cfg.rx_refill.unwrap_or(profile.nic.rx_refill);
    cfg.runtime.configure(&mut iface);
    iface.tx_fast_free &= profile.nic.tx_fast_free;
    let arena = Arc::new(Arena::new("sim", iface.pool_size::<D>(), iface.layout).map_err(SimError::Arena)?);
    let pool = SharedPool::new(arena.clone());
    let (mut device, mut drivers) = D::build(&iface, &pool)?;
    for app in &mut apps {
        app.bind_nicmem(device.nicmem())?;
    }
    let ctxs: Vec<CoreCtx> = (0..cores).map(|i| CoreCtx::new(i as u16, iface.cache, &pool)).collect();
    // The NIC's indirection table, which the generator's steering relies on too.
    let entries = profile.nic.reta_entries;
    let mut source = Generator::new(&GenConfig { reta: entries, ..cfg.traffic.clone() }).map_err(SimError::Traffic)?;
    let reta = IndirectionTable::round_robin_sized(cores, entries)
        .map_err(|message| SimError::Config { option: "cores", message })?;
    // The cores that receive the target queues' packets, if the traffic has targets.
    let mut targets = vec![false; cores];
    for q in cfg.traffic.steering.targets().into_iter().filter(|&q| q < cores) {
        D::WAKE.cores(q as QueueId, cores).for_each(|i| targets[i] = true);
    }
    if cfg.warm_tables {
        // The papers measure after 10 s of warm-up traffic (nicmem artifact, fig9/run_test.sh): each core
        // has seen every flow RSS steers to it, here in index order: the order a stepped generator sends
        // them (`traffic::Popularity::Stepped`), so its table entries lie in the order they come round.
        // One pass over the flows hands each to the cores that receive its queue, a chunk of flows at a
        // time so that each core's table stays in the host's caches while it takes its share.
        let mut batches: Vec<Vec<FiveTuple>> = vec![Vec::new(); cores];
        let flows = source.flows();
        for (n, f) in flows.iter().enumerate() {
            D::WAKE.cores(reta.queue(f.hash), cores).for_each(|i| batches[i].push(f.tuple));
            if (n + 1) % WARM_CHUNK == 0 || n + 1 == flows.len() {
                for (app, batch) in apps.iter_mut().zip(&mut batches) {
                    app.warm(&mut batch.drain(..));
                }
            }
        }
    }
    // Co-located programs run on cores of their own after the workers, or on the other socket
    // ([`crate::antagonist`]): the triads, the PageRank threads, the copy loop.
    let core = |i: usize| (cfg.colocated_socket == Socket::Local).then_some(cores + i);
    let (triads, threads) = (cfg.stream_triads, cfg.pagerank_threads);
    let mut programs: Vec<Program> = (0..triads)
        .map(|i| Program::Triad(OnCore::new(StreamTriad::new(i), core(i))))
        .chain((0..threads).map(|i| Program::PageRank(OnCore::new(PageRank::new(i, threads), core(triads + i)))))
        .collect();
    if let Some(spec) = cfg.copy_loop {
        programs.push(Program::Copy(CopyLoop::new(spec, cores + local_programs(cfg) - 1, after_triads(triads))));
    }
    let mut m = Machine::new(profile, cores + local_programs(cfg), (arena.base_addr(), arena.size()));
    if cfg.colocated_socket == Socket::Remote && triads + threads > 0 {
        m.other_socket = OtherSocket::new(profile);
    }
    if let (Socket::Remote, Some(r)) = (cfg.nf_socket, &profile.remote_socket) {
        m.nic_across_sockets(r);
    }
    m.nicmem = device.nicmem().map_or(0..0, |n| n.range());
    m.uc_registers = D::UNCACHED_REGISTERS;
    m.add_data_regions(device.data_regions());
    for app in &apps {
        m.add_tables(app.tables());
    }
    let mut nic = Nic::new(profile);
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(cfg.seed);
    let mut q = Queue::new(cores + programs.len());
    let mut win = Window(cfg.warmup_ps, cfg.duration_ps);
    let mut c = Counters {
        polls: vec![0; cores],
        delivered_win_core: vec![0; cores],
        pool_ps: vec![[0; 2]; cores],
        ..Counters::default()
    };
    let mut late_ps = cfg.duration_ps + residual_ps(cfg.duration_ps);
    let mut hist = LatencyHistogram::new();
    let mut stages = StageClock::default();
    let mut service = LatencyHistogram::new();
    let mut check = DeliveryCheck::new(source.flows().len(), D::PER_FLOW_ORDER);
    let mut reorder = ReorderTracker::new(REORDER_WINDOW);
    let mut wire_order = WireOrder::new(source.flows().len());
    let mut sampler = Sampler::default();
    let mut timeline = Timeline::new(cfg.duration_ps);
    let mut noise: Vec<CoreNoise> = (0..cores)
        .map(|i| {
            let params =
                if cfg.noise { profile.core_noise(i, cores).clone() } else { crate::noise::NoiseParams::none() };
            CoreNoise::new(&params, cfg.seed, i, cfg.duration_ps, cfg.noise_horizon_ps, cfg.noise_tail)
        })
        .collect();
    let mut core_state: Vec<CoreState<'_>> = (0..cores)
        .map(|_| CoreState {
            rx: Vec::with_capacity(iface.burst),
            tx: Vec::with_capacity(iface.burst),
            tx_seqs: Vec::with_capacity(iface.burst),
            scheduled: None,
            idle: None,
            blocked: None,
        })
        .collect();

    // The frame of the upcoming packet; the payload offset is the same for every generated packet.
    let mut frame = FrameBuf::new(&source);
    // The heads of the frames the NIC holds, spare buffers for them, and where a landing frame is
    // put together.
    let mut spare: Vec<Vec<u8>> = Vec::new();
    let mut staging = FrameBuf::new(&source);
    let mut poisson_t = 0u64;
    let mut arrivals_done = false;
    let mut stamp_at = None;
    let mut next_packet = |win: &Window,
                           source: &mut Generator,
                           frame: &mut FrameBuf,
                           c: &mut Counters,
                           check: &mut DeliveryCheck,
                           wire_order: &mut WireOrder| {
        let meta = source.next_frame(frame);
        let arrival = match cfg.arrivals {
            Arrivals::Paced => meta.ts_ns * 1000,
            Arrivals::Poisson => {
                let mean = cfg.traffic.rate.gap_ps(meta.frame_len());
                let gap: f64 = Exp1.sample(&mut rng);
                let t = poisson_t;
                poisson_t += (gap * mean) as u64;
                t
            }
        };
        if arrival >= win.1 {
            return None;
        }
        let at = *stamp_at.get_or_insert_with(|| {
            PacketView::new_checked(frame.frame()).map(|v| v.payload_offset()).unwrap_or(meta.len)
        });
        // The NIC's arrival time replaces the generator's send time in the stamp (at the start of the
        // payload or its trailer).
        frame.restamp(at, Stamp { seq: meta.seq, tx_ns: arrival / 1000 });
        let bytes = meta.frame_len() as u64;
        c.offered = (c.offered.0 + 1, c.offered.1 + bytes);
        if win.contains(arrival) {
            c.offered_win = (c.offered_win.0 + 1, c.offered_win.1 + bytes);
        }
        let hash = source.flows().get(meta.flow as usize).map_or(0, |f| f.hash);
        check.offered(meta.seq, meta.flow);
        wire_order.offered(meta.seq, meta.flow);
        Some((Upcoming { at: arrival, hash, seq: meta.seq }, at))
    };

    let land_ps = |m: &Machine, len: usize| m.pcie.wire_ps(m.pcie.write_wire(len as u64)) + m.pcie.write_latency_ps();
    let mut upcoming = None;
    let mut stamp_off = 0;
    if let Some((u, at)) = next_packet(&win, &mut source, &mut frame, &mut c, &mut check, &mut wire_order) {
        q.push(u.at, Event::Arrival);
        upcoming = Some(u);
        stamp_off = at;
    } else {
        arrivals_done = true;
    }
    for (i, st) in core_state.iter_mut().enumerate() {
        st.scheduled = Some(cfg.stall_ps);
        q.push(cfg.stall_ps, Event::Core(i as u16));
    }
    for i in 0..programs.len() {
        q.push(0, Event::Antagonist((cores + i) as u16));
    }
    // Bytes each co-located program had moved when the window opened and when it closed.
    let moved = |p: &[Program]| p.iter().map(Program::moved).collect::<Vec<u64>>();
    let mut moved_window = (Vec::new(), Vec::new());
    q.push(win.0, Event::WindowStart);
    q.push(win.1, Event::WindowEnd);
    if PERIOD_PS < cfg.duration_ps {
        q.push(PERIOD_PS, Event::Sample);
    }
    // With `settle`, the run is observed until its warm-up ends ([`crate::settle`]).
    let mut settle = cfg.settle.then(|| (Settle::default(), Observed::default()));
    if settle.is_some() {
        q.push(OBSERVE_PS, Event::Observe);
    }
    let (mut snapshot, mut duel_at_start, mut settled_at) = (None, None, None);
    // Packets delivered when the drain limit last saw one leave, and when ([`DRAIN_LIMIT_PS`]).
    let mut last_leaving = (0u64, 0u64);
    let cell = Cell::new(0u64);

    progress.enter(Part::Warmup);
    while let Some((t, ev)) = q.pop() {
        m.mem.dram.set_clock(t);
        if t > win.1 + DRAIN_LIMIT_PS {
            if c.delivered != last_leaving.0 {
                last_leaving = (c.delivered, t);
            }
            if t > last_leaving.1 + DRAIN_LIMIT_PS {
                break;
            }
        }
        match ev {
            Event::WindowStart if settled_at.is_none() => {
                duel_at_start = open_window(&mut m, progress);
                moved_window.0 = moved(&programs);
            }
            // A settled run opened its window when it settled.
            Event::WindowStart => {}
            Event::WindowEnd => {
                progress.enter(Part::Drain);
                snapshot = Some(Snapshot::take(&m));
                moved_window.1 = moved(&programs);
            }
            Event::Observe => {
                let Some((rule, last)) = settle.as_mut() else { continue };
                let now = Observed::at(&c, &m);
                if rule.observe(now.since(last, m.cycle_ps_f)) {
                    // Settled: the window opens now and lasts the measured duration.
                    win = Window(t, t + (cfg.duration_ps - cfg.warmup_ps));
                    late_ps = win.1 + residual_ps(win.1);
                    duel_at_start = open_window(&mut m, progress);
                    moved_window.0 = moved(&programs);
                    // The window's events move with it (an agent's new event replaces its pending one, so
                    // the longest warm-up's are gone).
                    q.push(t, Event::WindowStart);
                    q.push(win.1, Event::WindowEnd);
                    settled_at = Some(t);
                } else if t + OBSERVE_PS < win.0 {
                    *last = now;
                    q.push(t + OBSERVE_PS, Event::Observe);
                }
            }
            Event::Sample => {
                progress.reach(t);
                device.sample(&sampler.sample(t, c.rx_bytes, m.mem.dram.moved, &c.polls));
                if t + PERIOD_PS < win.1 {
                    q.push(t + PERIOD_PS, Event::Sample);
                }
            }
            Event::Arrival => {
                let Some(u) = upcoming.take() else { continue };
                let ring = device.ring_of(reta.queue(u.hash));
                let mut head = spare.pop().unwrap_or_default();
                head.clear();
                head.extend_from_slice(frame.head());
                let held = (u.hash, u.seq, frame.frame().len());
                if let Err(buf) = nic.arrive(t, ring, held, head, |len| land_ps(&m, len)) {
                    spare.push(buf);
                    check.dropped(u.seq);
                    c.drops.add(DropReason::NicBufferFull);
                    if win.contains(t) {
                        c.drops_win.add(DropReason::NicBufferFull);
                    }
                }
                match next_packet(&win, &mut source, &mut frame, &mut c, &mut check, &mut wire_order) {
                    Some((u, _)) => {
                        q.push(u.at.max(t), Event::Arrival);
                        upcoming = Some(u);
                    }
                    None => arrivals_done = true,
                }
                if schedule_rx(&mut q, &nic, t) && arrivals_done {
                    drained(&mut device, &mut m, &mut q, &mut core_state, t, &cell);
                }
            }
            Event::NicRx => {
                let Some(l) = nic.land(t) else {
                    schedule_rx(&mut q, &nic, t);
                    continue;
                };
                // The step runs when the DMA lands (this event), so software sees the packet no
                // earlier; its writes go on the link from a posted-write latency after the DMA's start,
                // as they left the NIC, so that a short packet after a long one does not queue behind
                // the long one's writes twice. The DMA stage is free again once the link has taken them.
                let issue = l.start + m.pcie.write_latency_ps();
                let mut probe = SimProbe::new(&mut m, Agent::Nic, issue, &cell).with_dma_wait(l.dma_wait);
                let queue = reta.queue(l.held.hash);
                staging.put(&l.held.head, l.held.len);
                let r = device.rx(&mut probe, queue, l.held.hash, staging.frame());
                let step = probe.finish();
                nic.finish_rx(l.ring, l.start, step.end - issue, step.stall, |len| land_ps(&m, len));
                let (len, seq) = (l.held.len, l.held.seq);
                spare.push(l.held.head);
                match r {
                    Ok(()) => {
                        stages.mark(seq, Point::Landed, t);
                        c.rx_bytes += (len + FCS_LEN) as u64;
                        for i in D::WAKE.cores(queue, cores) {
                            wake_core(&mut q, &mut core_state[i], i, t);
                        }
                    }
                    Err(reason) => {
                        check.dropped(seq);
                        c.drops.add(reason);
                        if win.contains(t) {
                            c.drops_win.add(reason);
                        }
                    }
                }
                c.rx_events += 1;
                if c.rx_events.is_multiple_of(OCCUPANCY_EVERY) {
                    let o = device.occupancy();
                    let share = ratio(o.used as f64, o.capacity as f64);
                    timeline.occupancy(t, share);
                    c.occupancy_all = (c.occupancy_all.0 + share, c.occupancy_all.1 + 1);
                    if win.contains(t) {
                        c.occupancy = (c.occupancy.0 + share, c.occupancy.1 + 1);
                    }
                }
                if schedule_rx(&mut q, &nic, t) && arrivals_done {
                    drained(&mut device, &mut m, &mut q, &mut core_state, t, &cell);
                }
            }
            Event::NicTx => {
                debug_assert_eq!(nic.tx_wake, Some(t), "the queue keeps only the latest schedule");
                nic.tx_wake = None;
                let start = t.max(nic.tx_free);
                let batch = nic.tx_batch;
                cell.set(start);
                let mut probe = SimProbe::new(&mut m, Agent::Nic, start, &cell);
                let mut out = |f: &[u8]| {
                    let done = nic.wire_out(cell.get(), f.len() + FCS_LEN);
                    timeline.sent(done, wire_bits(f.len() + FCS_LEN) as u64);
                    if let Some(stamp) = Stamp::in_frame(f, Some(stamp_off)) {
                        reorder.record(stamp.seq);
                        wire_order.sent(stamp.seq);
                        if win.contains(stamp.tx_ns * 1000) {
                            hist.record((done / 1000).saturating_sub(stamp.tx_ns));
                            stages.left(stamp.seq, stamp.tx_ns * 1000, done);
                        }
                    }
                    c.sent += 1;
                    c.sent_late += u64::from(done > late_ps);
                    if win.contains(done) {
                        c.sent_win = (c.sent_win.0 + 1, c.sent_win.1 + (f.len() + FCS_LEN) as u64);
                    }
                };
                let sent = device.tx(&mut probe, &mut out, batch);
                let Step { end, .. } = probe.finish();
                nic.tx_free = end.max(start + sent as u64 * nic.pkt_ps);
                if device.tx_pending() > 0 {
                    let at = nic.tx_free;
                    schedule_tx(&mut q, &mut nic, at);
                }
                // Cores spinning on a full Tx ring try again once the NIC has sent (and perhaps written
                // back its progress); the spin until then was busy time.
                for (i, st) in core_state.iter_mut().enumerate() {
                    if let Some(since) = st.blocked.take() {
                        let retry = end.max(since);
                        c.spin(&win, since, retry);
                        st.scheduled = Some(retry);
                        q.push(retry, Event::CoreTx(i as u16));
                    }
                }
            }
            Event::Core(i) => {
                let i = usize::from(i);
                let st = &mut core_state[i];
                debug_assert_eq!(st.scheduled, Some(t), "the queue keeps only the latest schedule");
                if let Some(resume) = interruptions(&mut noise[i], st, t, &mut c, &win, i) {
                    st.scheduled = Some(resume);
                    q.push(resume, Event::Core(i as u16));
                    continue;
                }
                st.scheduled = None;
                if let Some((since, period)) = st.idle.take() {
                    c.idle_ps += win.overlap(since, t);
                    // The empty polls of the idle rhythm between the last real poll and this one.
                    c.polls[i] += ((t - since) / period).saturating_sub(1);
                }
                c.polls[i] += 1;
                let ctx = &ctxs[i];
                let mut probe = SimProbe::new(&mut m, Agent::Core(i as u16), t, &cell);
                let n = drivers[i].rx_burst(&mut probe, ctx, &mut st.rx, iface.burst);
                for pkt in &st.rx {
                    let seq = stamp_of(pkt, stamp_off).map_or(u64::MAX, |s| s.seq);
                    check.delivered(seq);
                    stages.mark(seq, Point::Taken, t);
                }
                probe.phase(Phase::App);
                apps[i].process(&mut probe, ctx, &mut st.rx, &mut st.tx);
                let taken = (n as u64).saturating_sub(st.tx.len() as u64);
                if apps[i].sends() {
                    c.app_dropped += taken;
                } else {
                    c.consumed.0 += taken;
                    c.consumed.1 += if t > late_ps { taken } else { 0 };
                }
                c.delivered += n as u64;
                if win.contains(t) {
                    c.delivered_win += n as u64;
                    c.delivered_win_core[i] += n as u64;
                }
                if !st.tx.is_empty() {
                    // The transmit burst runs when the app's work is done, so the NIC cannot see the
                    // packets before the core's virtual time reaches them.
                    let step = probe.finish();
                    st.tx_seqs.clear();
                    st.tx_seqs.extend(st.tx.iter().map(|pkt| stamp_of(pkt, stamp_off).map_or(u64::MAX, |s| s.seq)));
                    for &seq in &st.tx_seqs {
                        stages.mark(seq, Point::Handed, step.end);
                    }
                    if win.contains(t) {
                        service.record_n((step.end - t) / 1000 / n as u64, n as u64);
                    }
                    c.charge(&win, t, i, &step);
                    st.scheduled = Some(step.end);
                    q.push(step.end, Event::CoreTx(i as u16));
                    continue;
                }
                drivers[i].tx_burst(&mut probe, ctx, &mut st.tx);
                let step = probe.finish();
                if n > 0 {
                    c.charge(&win, t, i, &step);
                    if win.contains(t) {
                        service.record_n((step.end - t) / 1000 / n as u64, n as u64);
                    }
                    let next = step.end.max(t + 1);
                    st.scheduled = Some(next);
                    q.push(next, Event::Core(i as u16));
                    continue;
                }
                c.pool(&win, t, i, &step);
                let period = (step.end - t).max(m.cycle_ps);
                st.idle = Some((t, period));
                let idle_everywhere =
                    arrivals_done && nic.rx_empty() && device.occupancy().used == 0 && device.tx_pending() == 0;
                if !idle_everywhere {
                    let next = t + (RECHECK_PS / period).max(1) * period;
                    st.scheduled = Some(next);
                    q.push(next, Event::Core(i as u16));
                }
            }
            Event::Antagonist(i) => {
                // It runs until the offered traffic ends.
                let end = programs[usize::from(i) - cores].step(&mut m, t);
                if end < win.1 {
                    q.push(end, Event::Antagonist(i));
                }
            }
            Event::CoreTx(i) => {
                let i = usize::from(i);
                let st = &mut core_state[i];
                debug_assert_eq!(st.scheduled, Some(t), "the queue keeps only the latest schedule");
                if let Some(resume) = interruptions(&mut noise[i], st, t, &mut c, &win, i) {
                    st.scheduled = Some(resume);
                    q.push(resume, Event::CoreTx(i as u16));
                    continue;
                }
                let mut probe = SimProbe::new(&mut m, Agent::Core(i as u16), t, &cell);
                let queued = drivers[i].tx_burst(&mut probe, &ctxs[i], &mut st.tx);
                let step = probe.finish();
                c.charge(&win, t, i, &step);
                if queued > 0 {
                    let rung = step.doorbell_at.unwrap_or(step.end).max(t);
                    for seq in st.tx_seqs.drain(..queued) {
                        stages.mark(seq, Point::Queued, rung);
                    }
                    schedule_tx(&mut q, &mut nic, rung);
                }
                if !st.tx.is_empty() {
                    // The ring was full and the runtime waits (FastClick's blocking ToDPDKDevice): the
                    // core spins until the NIC's next transmit run wakes it.
                    st.scheduled = None;
                    st.blocked = Some(step.end.max(t + 1));
                    if nic.tx_wake.is_none() {
                        let at = nic.tx_free.max(t);
                        schedule_tx(&mut q, &mut nic, at);
                    }
                    continue;
                }
                let next = step.end.max(t + 1);
                st.scheduled = Some(next);
                q.push(next, Event::Core(i as u16));
            }
        }
    }

    // End of run: the invariants (DESIGN.md, "Invariants"), then the report.
    let occupancy = device.occupancy();
    if !nic.rx_empty() || occupancy.used > 0 || device.tx_pending() > 0 {
        return Err(SimError::Invariant {
            invariant: "drained",
            detail: format!(
                "{} packets still in rings and {} waiting for transmission, none having left for {} ms, after the \
                 traffic ended",
                occupancy.used,
                device.tx_pending(),
                DRAIN_LIMIT_PS / 1_000_000_000
            ),
        });
    }
    let counts = RunCounts {
        offered: c.offered.0,
        delivered: c.delivered,
        dropped: c.drops.total(),
        queued: occupancy.used,
        duplicates: check.duplicates,
        out_of_order: check.out_of_order(),
        ordered: D::PER_FLOW_ORDER,
        examples: check.examples.clone(),
    };
    counts.check().map_err(invariant)?;
    let device_metrics = device.metrics();
    let driver_metrics = sum_metrics(drivers.iter().map(|d| d.metrics()));
    let app_metrics = sum_metrics(apps.iter().map(|a| a.metrics()));
    let events = q.processed;
    for (d, ctx) in drivers.iter_mut().zip(&ctxs) {
        d.teardown(ctx);
    }
    drop(core_state);
    let nicmem = device.nicmem().cloned();
    drop((drivers, device));
    drop(ctxs);
    drop(pool);
    check_buffers(&arena, None, nicmem.as_deref()).map_err(invariant)?;

    let snap = snapshot.unwrap_or_else(|| Snapshot::take(&m));
    let secs = (win.1 - win.0) as f64 / 1e12;
    let tp = |(pk, by): (u64, u64)| {
        Throughput::over(pk, by, secs).unwrap_or(Throughput { mpps: 0.0, gbps: 0.0, gbps_wire: 0.0 })
    };
    let busy: u64 = c.busy_ps.iter().sum();
    let per_pkt = |ps: u64| ratio(ps as f64 / m.cycle_ps_f, c.delivered_win as f64);
    let rate = |(h, miss): (u64, u64)| ratio(h as f64, (h + miss) as f64);
    let pcie_bps = m.pcie.bytes_per_sec();
    let dir = |s: crate::pcie::DirStats| PcieDir {
        utilisation: ratio(s.wire_bytes as f64, pcie_bps * secs),
        goodput_gbps: s.payload_bytes as f64 * 8.0 / secs / 1e9,
        data_gbps: s.data_bytes as f64 * 8.0 / secs / 1e9,
        metadata_share: 1.0 - ratio(s.data_bytes as f64, s.payload_bytes as f64),
    };
    let (latency, received_mpps) = (hist.summary(), ratio(c.delivered_win as f64, secs) / 1e6);
    let report = SimReport {
        setup: format!("sim: {} on {}, {} cores, app {}", D::NAME, profile, cores, cfg.app),
        window_s: secs,
        offered: tp(c.offered_win),
        throughput: tp(c.sent_win),
        received_mpps,
        received_per_core_mpps: c.delivered_win_core.iter().map(|&n| ratio(n as f64, secs) / 1e6).collect(),
        latency_ring_sets: ratio(latency.mean * received_mpps * 1e-3, occupancy.capacity as f64),
        latency,
        latency_stages: stages.report(),
        service_ns: service.summary(),
        latency_cdf: hist.cdf(),
        ring_occupancy: ratio(c.occupancy.0, c.occupancy.1 as f64),
        timeline: timeline.slices(win.1),
        settle: cfg.settle.then(|| SettleReport { warmup_us: win.0 as f64 / 1e6, settled: settled_at.is_some() }),
        cycles: Cycles {
            total: per_pkt(busy),
            phases: Phase::ALL.iter().map(|p| (phase_name(*p), per_pkt(c.busy_ps[*p as usize]))).collect(),
            sync_share: ratio(c.busy_ps[Phase::Sync as usize] as f64, busy as f64),
            idle_share: ratio(c.idle_ps as f64, (c.idle_ps + busy) as f64),
            shared_pool: pool_shares(&c.pool_ps, &targets, win.1 - win.0),
        },
        hit_rates: HitRates {
            l1: rate(snap.mem.l1),
            l2: rate(snap.mem.l2),
            llc: rate(snap.mem.llc),
            cache_references: rate((snap.mem.llc.0 + snap.mem.prefetches.0, snap.mem.llc.1 + snap.mem.prefetches.1)),
            nic_write: rate(snap.mem.nic_write),
            nic_read: rate(snap.mem.nic_read),
            pcie: rate((snap.mem.nic_write.0 + snap.mem.nic_read.0, snap.mem.nic_write.1 + snap.mem.nic_read.1)),
        },
        antagonists: (!programs.is_empty()).then(|| {
            // What the programs of one kind did in the window, a second.
            let rate = |kind: fn(&Program) -> bool| {
                let done = programs.iter().zip(moved_window.1.iter().zip(&moved_window.0));
                done.filter(|(p, _)| kind(p)).map(|(_, (b, a))| b - a).sum::<u64>() as f64 / secs
            };
            AntagonistReport {
                instances: cfg.stream_triads,
                triad_gbs: rate(|p| matches!(p, Program::Triad(_))) / 1e9,
                pagerank_threads: cfg.pagerank_threads,
                pagerank_gteps: (cfg.pagerank_threads > 0).then(|| rate(|p| matches!(p, Program::PageRank(_))) / 1e9),
                copy_bytes_per_cycle: cfg
                    .copy_loop
                    .map(|_| rate(|p| matches!(p, Program::Copy(_))) / 1e9 * m.cycle_ps_f / 1000.0),
            }
        }),
        llc_duel: duel_at_start.zip(snap.duel).map(|(window_start, window_end)| LlcDuel { window_start, window_end }),
        misses_per_packet: MissesPerPacket {
            l1: ratio(snap.mem.l1.1 as f64, c.delivered_win as f64),
            l2: ratio(snap.mem.l2.1 as f64, c.delivered_win as f64),
            llc: ratio(snap.mem.llc.1 as f64, c.delivered_win as f64),
        },
        memory: MemBw { read_gbs: snap.dram.0 as f64 / secs / 1e9, write_gbs: snap.dram.1 as f64 / secs / 1e9 },
        pcie: PcieReport {
            to_host: dir(snap.pcie.0),
            to_device: dir(snap.pcie.1),
            read_latency_ns: snap.read_latency_ns,
        },
        drops: c.drops_win.by_name(),
        reordering: reorder.report(),
        flow_reordering: wire_order.report(),
        descriptor_wait: DescriptorWait::from_metrics(&device_metrics),
        lock_wait_ns: snap.lock_wait_ps as f64 / 1e3,
        noise: NoiseReport {
            interruptions: c.noise.0,
            total_us: c.noise.1 as f64 / 1e6,
            max_us: c.noise.2 as f64 / 1e6,
            share: ratio(c.noise.1 as f64, (win.1 - win.0) as f64 * cores as f64),
        },
        device_metrics,
        driver_metrics,
        app_metrics,
        accounting: Accounting {
            offered: c.offered.0,
            delivered: c.delivered,
            consumed: c.consumed.0,
            consumed_late: c.consumed.1,
            dropped: c.drops.by_name(),
            queued: occupancy.used,
            app_dropped: c.app_dropped,
            sent: c.sent,
            sent_late: c.sent_late,
        },
        events,
    };
    progress.close();
    Ok(report)
}

/// Open the measurement window: counters start afresh; returns the LLC selectors' state then.
fn open_window(m: &mut Machine, progress: &Progress) -> Option<f64> {
    progress.enter(Part::Measurement);
    m.reset_counters();
    m.mem.llc_followers_mr161()
}

/// An engine error for a violated invariant.
fn invariant(v: Violation) -> SimError {
    SimError::Invariant { invariant: v.invariant, detail: v.detail }
}

/// The interruptions of a core that began by `t`, when its next step was due ([`crate::noise`]): the
/// time it resumes, if they hold the step back. An interruption while the core slept delays it only if
/// it lasts beyond `t` (the sleep is then over, its idle time and empty polls counted up to the
/// interruption); one while it worked pushes its next step back by its whole length (steps are atomic,
/// so the work it cut into ends that much later).
fn interruptions(
    noise: &mut CoreNoise,
    st: &mut CoreState<'_>,
    t: u64,
    c: &mut Counters,
    win: &Window,
    i: usize,
) -> Option<u64> {
    let mut resume = t;
    let mut first = None;
    while let Some(x) = noise.take_until(resume) {
        c.interrupted(win, x);
        first.get_or_insert(x.at);
        resume = match st.idle {
            Some((since, _)) if x.at >= since => resume.max(x.at + x.len),
            _ => resume + x.len,
        };
    }
    if resume == t {
        return None;
    }
    if let (Some((since, period)), Some(at)) = (st.idle.take(), first) {
        let until = at.max(since);
        c.idle_ps += win.overlap(since, until);
        c.polls[i] += (until - since) / period;
    }
    Some(resume)
}

/// Wake a sleeping core at the first instant of its idle polling rhythm at or after `t`.
#[inline]
fn wake_core(q: &mut Queue, st: &mut CoreState<'_>, i: usize, t: u64) {
    let Some((since, period)) = st.idle else { return };
    let next = since + (t.saturating_sub(since)).div_ceil(period) * period;
    if st.scheduled.is_none_or(|s| next < s) {
        st.scheduled = Some(next);
        q.push(next, Event::Core(i as u16));
    }
}

/// Schedule the NIC's next receive landing, no earlier than `t`; true when its buffer holds nothing.
#[inline]
fn schedule_rx(q: &mut Queue, nic: &Nic, t: u64) -> bool {
    match nic.next_landing() {
        Some(at) => {
            q.push(at.max(t), Event::NicRx);
            false
        }
        None => true,
    }
}

/// The last packet is in and the NIC has delivered it: the NIC writes whatever completions it held
/// back, and every core looks once more.
fn drained<Dv: DeviceSide>(
    device: &mut Dv,
    m: &mut Machine,
    q: &mut Queue,
    core_state: &mut [CoreState<'_>],
    t: u64,
    cell: &Cell<u64>,
) {
    device.idle(&mut SimProbe::new(m, Agent::Nic, t, cell));
    for (i, st) in core_state.iter_mut().enumerate() {
        wake_core(q, st, i, t);
    }
}

/// Make the transmit engine run at `t`, or when it is done with its current work if that is later,
/// unless it already runs earlier. (Running it before then would take descriptors off the rings at
/// the event's time while its clock says it gets to them only later: a hidden queue.)
#[inline]
fn schedule_tx(q: &mut Queue, nic: &mut Nic, t: u64) {
    let t = t.max(nic.tx_free);
    if nic.tx_wake.is_none_or(|w| t < w) {
        nic.tx_wake = Some(t);
        q.push(t, Event::NicTx);
    }
}

/// Sum named counters over cores.
fn sum_metrics(all: impl Iterator<Item = Metrics>) -> BTreeMap<String, f64> {
    let mut out = BTreeMap::new();
    for m in all {
        for (k, v) in m {
            *out.entry(k).or_insert(0.0) += v;
        }
    }
    out
}

/// Each core group's share of its time in the allocator's shared level over a window of `window_ps`:
/// all cores, and with `targets` (a core flag each, some set) the target cores and the others.
fn pool_shares(pool_ps: &[[u64; 2]], targets: &[bool], window_ps: u64) -> SharedPoolShares {
    let share = |pick: &dyn Fn(usize) -> bool| {
        let cores: Vec<&[u64; 2]> = pool_ps.iter().enumerate().filter(|&(i, _)| pick(i)).map(|(_, p)| p).collect();
        let time = cores.len() as f64 * window_ps as f64;
        let sum = |k: usize| cores.iter().map(|p| p[k]).sum::<u64>() as f64;
        let (refill, flush) = (ratio(sum(0), time), ratio(sum(1), time));
        (!cores.is_empty()).then_some(PoolShare { refill, flush, total: refill + flush })
    };
    let split = targets.iter().any(|&t| t) && !targets.iter().all(|&t| t);
    SharedPoolShares {
        all: share(&|_| true).unwrap_or_default(),
        target: split.then(|| share(&|i| targets[i])).flatten(),
        other: split.then(|| share(&|i| !targets[i])).flatten(),
    }
}

/// Report name of a phase.
fn phase_name(p: Phase) -> &'static str {
    match p {
        Phase::Rx => "rx",
        Phase::App => "app",
        Phase::Tx => "tx",
        Phase::Sync => "sync",
        Phase::Alloc => "alloc",
        Phase::PoolRefill => "pool_refill",
        Phase::PoolFlush => "pool_flush",
    }
}

/// The stamp of a packet a core holds: in its first segment, else as the trailer of the two segments
/// together (a split design leaves the payload's end, where a trailing stamp lies, in NIC memory, and
/// the split may fall inside the stamp).
fn stamp_of(pkt: &ifaces::Packet<'_>, stamp_off: usize) -> Option<Stamp> {
    Stamp::in_frame(pkt, Some(stamp_off)).or_else(|| {
        let tail = pkt.tail()?;
        let from_tail = tail.len().min(STAMP_LEN);
        let from_head = STAMP_LEN - from_tail;
        let mut last = [0u8; STAMP_LEN];
        last[..from_head].copy_from_slice(pkt.get(pkt.len().checked_sub(from_head)?..)?);
        last[from_head..].copy_from_slice(&tail[tail.len() - from_tail..]);
        Stamp::read(&last)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pool_shares_split_target_cores_from_the_others_only_where_there_are_both() {
        // Three cores over a window of 1000 ps: core 0 refilled 20 ps, core 2 flushed 10 ps.
        let pool = [[20, 0], [0, 0], [0, 10]];
        let s = pool_shares(&pool, &[true, false, false], 1000);
        assert_eq!(s.target, Some(PoolShare { refill: 0.02, flush: 0.0, total: 0.02 }));
        assert_eq!(s.other, Some(PoolShare { refill: 0.0, flush: 0.005, total: 0.005 }));
        assert!((s.all.total - 30.0 / 3000.0).abs() < 1e-12);
        for targets in [[false; 3], [true; 3]] {
            let s = pool_shares(&pool, &targets, 1000);
            assert_eq!((s.target, s.other), (None, None));
        }
    }
}
