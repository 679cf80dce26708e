//! Every design under random single-threaded interleavings of NIC and core steps, including a
//! permanently slow core: packets are conserved (delivered + dropped + still queued = offered), none is
//! delivered twice, order is kept per core wherever the design promises it (all but COREC), and after a
//! drain and teardown every buffer is back in the pool (`Arena::census`). Then the behaviours the papers
//! describe: a slow core delays its shRing peers' reposting but not rxBisect's other cores (001 §4.3),
//! RxList's shuffled list costs descriptor fetches that batching saves (000 §4.4), a dynamic switch
//! loses nothing, and COREC's descheduled worker stalls the tail and reorders (003 §3.4.4).

#![cfg(not(loom))]

use ifaces::corec::{Corec, CorecDriver};
use ifaces::cqring::CqFormat;
use ifaces::probe::CountingProbe;
use ifaces::shring::dynamic::{Controller, RingSet};
use ifaces::{
    Arena, BatchedRxList, BufLayout, CoreCtx, Design, DeviceSide, DriverSide, DropReason, Drops, Dynamic, IfaceConfig,
    Metrics, PrivRing, RingSize, RxArr, RxBisect, RxList, Sample, SharedPool,
};
use proptest::prelude::*;
use std::collections::HashSet;
use std::sync::Arc;

/// A small configuration every design accepts: 4 cores in groups of 2, 32-entry rings, 64-entry Ax rings
/// and 128-entry Bx rings (so that a slow core's Ax ring runs dry before its Bx ring fills, and others'
/// buffers are borrowed).
fn small() -> IfaceConfig {
    IfaceConfig {
        cores: 4,
        share: 2,
        ring: RingSize::new(32).unwrap(),
        tx_ring: RingSize::new(32).unwrap(),
        cache: 8,
        burst: 8,
        ax: 64,
        bx: RingSize::new(128).unwrap(),
        list_batch: 4,
        ..IfaceConfig::default()
    }
}

/// [`small`] with Intel 32-byte write-backs packed four to a line, partial lines waiting 1 us (the rig's
/// clock advances 100 ns a step).
fn packed() -> IfaceConfig {
    let packing = ifaces::wbpack::WbPacking::new(4, 1000).unwrap();
    IfaceConfig { cq: CqFormat::Wb32 { packing }, ..small() }
}

/// One design, its cores, and the bookkeeping of what was offered, dropped and delivered.
struct Rig<D: Design> {
    dev: D::Device,
    drivers: Vec<D::Driver>,
    cores: Vec<CoreCtx>,
    pool: Arc<SharedPool>,
    p: CountingProbe,
    offered: u64,
    drops: Vec<Drops>,
    delivered: Vec<Vec<u64>>,
    seen: HashSet<u64>,
}

impl<D: Design> Rig<D> {
    fn new(cfg: &IfaceConfig) -> Rig<D> {
        let arena = Arena::new("test", D::buffers_needed(cfg), BufLayout::default()).unwrap();
        let pool = SharedPool::new(Arc::new(arena));
        let (dev, drivers) = D::build(cfg, &pool).unwrap();
        let cores = (0..cfg.cores).map(|c| CoreCtx::new(c as u16, cfg.cache, &pool)).collect();
        Rig {
            dev,
            drivers,
            cores,
            pool,
            p: CountingProbe::default(),
            offered: 0,
            drops: vec![Drops::default(); cfg.cores],
            delivered: vec![vec![]; cfg.cores],
            seen: HashSet::new(),
        }
    }

    /// The NIC receives packet number `offered` for `queue` (64 B, the sequence number first).
    fn send(&mut self, queue: usize) -> Result<(), DropReason> {
        let mut frame = [0u8; 64];
        frame[..8].copy_from_slice(&self.offered.to_le_bytes());
        self.offered += 1;
        self.p.now += 100;
        let r = self.dev.rx(&mut self.p, queue as u16, self.offered as u32, &frame);
        if let Err(why) = r {
            self.drops[queue].add(why);
        }
        r
    }

    /// Core `c` receives up to `max` packets and frees them; returns the sequence numbers.
    fn poll(&mut self, c: usize, max: usize) -> Vec<u64> {
        self.p.now += 100;
        let mut out = Vec::new();
        self.drivers[c].rx_burst(&mut self.p, &self.cores[c], &mut out, max);
        let seqs: Vec<u64> = out.iter().map(|pkt| u64::from_le_bytes(pkt[..8].try_into().unwrap())).collect();
        for &s in &seqs {
            assert!(self.seen.insert(s), "packet {s} delivered twice");
        }
        self.delivered[c].extend(&seqs);
        seqs
    }

    fn dropped(&self) -> u64 {
        self.drops.iter().map(Drops::total).sum()
    }

    /// Conservation: offered = delivered + dropped + still queued.
    fn check_conservation(&self) {
        let queued = self.dev.occupancy().used;
        assert_eq!(self.offered, self.seen.len() as u64 + self.dropped() + queued, "conservation");
    }

    /// Poll every core until nothing is left, then tear down and check that every buffer is free.
    fn drain_and_teardown(mut self) {
        // The NIC writes what it holds (mini-CQE arrays) once traffic stops.
        self.dev.idle(&mut self.p);
        for _ in 0..10_000 {
            let got: usize = (0..self.cores.len()).map(|c| self.poll(c, 32).len()).sum();
            if got == 0 && self.dev.occupancy().used == 0 {
                break;
            }
        }
        self.check_conservation();
        assert_eq!(self.dev.occupancy().used, 0, "the run did not drain");
        for (d, c) in self.drivers.iter_mut().zip(&self.cores) {
            d.teardown(c);
        }
        drop(self.drivers);
        drop(self.cores);
        drop(self.dev);
        let n = self.pool.arena().count();
        assert_eq!(self.pool.arena().census(), [n, 0, 0, 0], "buffers leaked");
    }

    fn device_metrics(&self) -> Metrics {
        self.dev.metrics()
    }
}

#[derive(Debug, Clone)]
enum Step {
    /// A packet for this queue.
    Nic(usize),
    /// This core polls with this burst.
    Core(usize, usize),
    /// The engine's periodic sample.
    Sample,
}

/// Random steps; core 0 is permanently slow: it gets a poll step 1/20 as often as the others.
fn steps(cores: usize) -> impl Strategy<Value = Vec<Step>> {
    let step = (0u32..100, 0..cores, 1usize..12).prop_map(move |(k, c, n)| match k {
        0..45 => Step::Nic(c),
        45..46 => Step::Sample,
        _ if c == 0 && k % 20 != 0 => Step::Nic(c),
        _ => Step::Core(c, n),
    });
    proptest::collection::vec(step, 0..600)
}

/// Run `steps` on design `D`, checking the invariants after every step and at the end.
fn run<D: Design>(cfg: &IfaceConfig, steps: &[Step], ordered: bool, prepare: impl FnOnce(&mut Rig<D>)) {
    let mut rig = Rig::<D>::new(cfg);
    prepare(&mut rig);
    for s in steps {
        match *s {
            Step::Nic(q) => {
                let _ = rig.send(q);
            }
            Step::Core(c, n) => {
                rig.poll(c, n);
            }
            Step::Sample => rig.dev.sample(&Sample::default()),
        }
        rig.check_conservation();
    }
    if ordered {
        for (c, d) in rig.delivered.iter().enumerate() {
            assert!(d.windows(2).all(|w| w[0] < w[1]), "core {c} received out of order: {d:?}");
        }
    }
    rig.drain_and_teardown();
}

/// Flips the ring set at every sample (a worst case for the drain protocol).
struct Toggle;

impl Controller for Toggle {
    fn decide(&mut self, _: &Sample, now: RingSet) -> RingSet {
        match now {
            RingSet::Private => RingSet::Shared,
            RingSet::Shared => RingSet::Private,
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn privring_invariants(s in steps(4)) { run::<PrivRing>(&small(), &s, true, |_| ()) }

    #[test]
    fn rxarr_invariants(s in steps(4)) { run::<RxArr>(&small(), &s, true, |_| ()) }

    #[test]
    fn rxarr_one_group_of_four(s in steps(4)) { run::<RxArr>(&IfaceConfig { share: 8, ..small() }, &s, true, |_| ()) }

    #[test]
    fn rxlist_invariants(s in steps(4)) { run::<RxList>(&small(), &s, true, |_| ()) }

    #[test]
    fn batched_rxlist_invariants(s in steps(4)) { run::<BatchedRxList>(&small(), &s, true, |_| ()) }

    #[test]
    fn dynamic_invariants_across_switches(s in steps(4)) {
        run::<Dynamic>(&small(), &s, true, |rig| rig.dev.set_controller(Box::new(Toggle)))
    }

    #[test]
    fn rxbisect_invariants(s in steps(4)) { run::<RxBisect>(&small(), &s, true, |_| ()) }

    /// Under PCIe back pressure, so that combined entries become mini-CQEs held in arrays.
    #[test]
    fn rxbisect_compressed_invariants(s in steps(4)) {
        let cfg = IfaceConfig { cq: CqFormat::Cqe64 { compress: true }, ..small() };
        run::<RxBisect>(&cfg, &s, true, |rig| rig.p.dma_wait_ns = 300)
    }

    #[test]
    fn rxbisect_round_robin_invariants(s in steps(4)) {
        let cfg = IfaceConfig { ax_policy: ifaces::AxPolicy::LinkedThenRoundRobin, ..small() };
        run::<RxBisect>(&cfg, &s, true, |_| ())
    }

    #[test]
    fn corec_invariants(s in steps(4)) { run::<Corec>(&small(), &s, false, |_| ()) }

    /// Intel write-backs a line of four at a time, partial lines written when the ITR timer ends.
    #[test]
    fn corec_packed_write_back_invariants(s in steps(4)) { run::<Corec>(&packed(), &s, false, |_| ()) }

    #[test]
    /// An Intel ring holds up to 32 reposted descriptors before its tail is written: 64 entries.
    fn privring_packed_write_back_invariants(s in steps(4)) {
        run::<PrivRing>(&IfaceConfig { ring: RingSize::new(64).unwrap(), ..packed() }, &s, true, |_| ())
    }

    #[test]
    fn rxarr_packed_write_back_invariants(s in steps(4)) { run::<RxArr>(&packed(), &s, true, |_| ()) }

    #[test]
    fn rxlist_packed_write_back_invariants(s in steps(4)) { run::<RxList>(&packed(), &s, true, |_| ()) }

    #[test]
    fn rxbisect_packed_write_back_invariants(s in steps(4)) { run::<RxBisect>(&packed(), &s, true, |_| ()) }

    #[test]
    fn nmnfv_packed_write_back_invariants(s in steps(4)) { run::<ifaces::NmNfv>(&packed(), &s, true, |_| ()) }

    // Ensō keeps order per flow (a flow goes to one pipe), not per core; every packet here is its own flow.
    #[test]
    fn enso_invariants(s in steps(4)) { run::<ifaces::Enso>(&small(), &s, false, |_| ()) }

    #[test]
    fn enso_per_packet_invariants(s in steps(4)) { run::<ifaces::EnsoPerPacket>(&small(), &s, false, |_| ()) }

    #[test]
    fn nmnfv_invariants(s in steps(4)) { run::<ifaces::NmNfv>(&small(), &s, true, |_| ()) }

    /// Multi-Packet RQ with 8 strides of 64 B per WQE: packets copied (DPDK's 128 B threshold) or, with no
    /// threshold, attached, and with CQE compression.
    #[test]
    fn mprq_invariants(s in steps(4), memcpy_max in prop_oneof![Just(0u32), Just(128)], compress: bool) {
        let mprq = ifaces::MprqConfig { stride_size: 64, strides: 8, memcpy_max };
        run::<ifaces::Mprq>(&IfaceConfig { mprq, cq: CqFormat::Cqe64 { compress }, ..small() }, &s, true, |_| ())
    }

    /// AF_XDP with a FILL ring per queue or one shared by every queue, zero-copy or copy mode.
    #[test]
    fn afxdp_invariants(s in steps(4), shared_fill: bool, zero_copy: bool) {
        let afxdp = ifaces::AfXdpConfig { fill: RingSize::new(64).unwrap(), shared_fill, zero_copy, ..Default::default() };
        run::<ifaces::AfXdp>(&IfaceConfig { afxdp, ..small() }, &s, true, |_| ())
    }

    #[test]
    fn seventh_design_invariants(s in steps(4)) { run::<seventh::Seventh>(&small(), &s, true, |_| ()) }
}

/// The skeleton of `docs/adding-a-design.md`, its required methods filled by delegating to privRing: if
/// the seam's signatures change, this stops compiling and the page needs the same change.
mod seventh {
    use ifaces::privring::{PrivRingDevice, PrivRingDriver};
    use ifaces::probe::Probe;
    use ifaces::{ConfigError, CoreCtx, Design, DeviceSide, DriverSide, DropReason, IfaceConfig, Occupancy};
    use ifaces::{Packet, PrivRing, SharedPool};
    use std::sync::Arc;
    use wire::QueueId;

    pub struct Seventh;
    pub struct MyDevice(PrivRingDevice);
    pub struct MyDriver(PrivRingDriver);

    impl Design for Seventh {
        const NAME: &'static str = "seventh";
        type Device = MyDevice;
        type Driver = MyDriver;

        fn buffers_needed(cfg: &IfaceConfig) -> u32 {
            PrivRing::buffers_needed(cfg)
        }

        fn build(cfg: &IfaceConfig, pool: &Arc<SharedPool>) -> Result<(MyDevice, Vec<MyDriver>), ConfigError> {
            cfg.validate_common()?;
            let (device, drivers) = PrivRing::build(cfg, pool)?;
            Ok((MyDevice(device), drivers.into_iter().map(MyDriver).collect()))
        }
    }

    impl DeviceSide for MyDevice {
        fn rx<P: Probe>(&mut self, p: &mut P, queue: QueueId, hash: u32, frame: &[u8]) -> Result<(), DropReason> {
            self.0.rx(p, queue, hash, frame)
        }
        fn tx<P: Probe, W: FnMut(&[u8])>(&mut self, p: &mut P, wire: &mut W, budget: usize) -> usize {
            self.0.tx(p, wire, budget)
        }
        fn occupancy(&self) -> Occupancy {
            self.0.occupancy()
        }
        fn tx_pending(&self) -> u64 {
            self.0.tx_pending()
        }
        fn idle<P: Probe>(&mut self, p: &mut P) {
            self.0.idle(p)
        }
    }

    impl DriverSide for MyDriver {
        fn rx_burst<'c, P: Probe>(
            &mut self,
            p: &mut P,
            core: &'c CoreCtx,
            out: &mut Vec<Packet<'c>>,
            max: usize,
        ) -> usize {
            self.0.rx_burst(p, core, out, max)
        }
        fn tx_burst<'c, P: Probe>(&mut self, p: &mut P, core: &'c CoreCtx, pkts: &mut Vec<Packet<'c>>) -> usize {
            self.0.tx_burst(p, core, pkts)
        }
        fn teardown(&mut self, core: &CoreCtx) {
            self.0.teardown(core)
        }
    }
}

/// Two cores sharing one ring (or one rxBisect pool); core 1 polls every `slow_every` rounds, core 0 every
/// round. Returns the rig after `rounds` rounds of one packet per queue.
fn skewed<D: Design>(slow_every: usize, rounds: usize) -> Rig<D> {
    let cfg = IfaceConfig { cores: 2, share: 2, ..small() };
    let mut rig = Rig::<D>::new(&cfg);
    for r in 0..rounds {
        let _ = rig.send(0);
        let _ = rig.send(1);
        rig.poll(0, 8);
        if r % slow_every == 0 {
            rig.poll(1, 8);
        }
    }
    rig
}

#[test]
fn a_slow_core_delays_its_shring_peers_reposting() {
    let fast = skewed::<RxArr>(1, 400);
    let slow = skewed::<RxArr>(50, 400);
    let (f, s) = (fast.device_metrics(), slow.device_metrics());
    println!(
        "repost wait mean: {} ns with peers at pace, {} ns with a slow peer",
        f["repost_wait_ns_mean"], s["repost_wait_ns_mean"]
    );
    assert!(s["repost_wait_ns_mean"] > 10.0 * f["repost_wait_ns_mean"].max(100.0));
    // ... and the slow core's packets fill the shared ring, so the fast core loses packets too.
    assert!(slow.drops[0].get(DropReason::NoRxDescriptor) > 0);
    assert_eq!(fast.dropped(), 0);
    fast.drain_and_teardown();
    slow.drain_and_teardown();
}

#[test]
fn rxbisect_does_not_let_a_stalled_core_block_the_others() {
    // Core 1 never polls: its Bx ring fills and only its own packets are dropped (001 §4.3).
    let rig = skewed::<RxBisect>(usize::MAX, 2000);
    assert_eq!(rig.drops[0].total(), 0, "core 0 lost packets: {:?}", rig.drops[0].by_name());
    assert!(rig.drops[1].get(DropReason::BxFull) > 0);
    assert_eq!(rig.delivered[0].len(), 2000);
    // The same load on shRing: the stalled core's packets monopolise the shared ring.
    let sh = skewed::<RxArr>(usize::MAX, 2000);
    assert!(sh.drops[0].get(DropReason::NoRxDescriptor) > 1000);
    rig.drain_and_teardown();
    sh.drain_and_teardown();
}

#[test]
fn rxbisect_borrows_buffers_from_other_cores_when_its_own_ax_ring_is_empty() {
    let cfg = IfaceConfig { cores: 2, bx: RingSize::new(128).unwrap(), ..small() };
    let mut rig = Rig::<RxBisect>::new(&cfg);
    // A burst of 100 packets to core 0 exhausts its 64-entry Ax ring; the rest come from core 1's.
    for _ in 0..100 {
        rig.send(0).unwrap();
    }
    assert_eq!(rig.device_metrics()["borrowed_buffers"], 36.0);
    assert_eq!(rig.poll(0, 64).len(), 64);
    assert_eq!(rig.poll(0, 64).len(), 36);
    // Core 1 re-arms its slots from the notice-only entries; core 0 freed core 1's buffers.
    assert_eq!(rig.poll(1, 64).len(), 0);
    assert_eq!(rig.drivers[1].metrics()["notice_only_entries"], 36.0);
    assert_eq!(rig.cores[0].cache_stats().cross_core_frees, 36);
    rig.drain_and_teardown();
}

/// Under PCIe back pressure a Bx ring's entries for its own Ax ring's buffers are mini-CQEs (that ring is
/// consumed in order, so the buffer is implicit), while a borrowed buffer's entry and its owner's notice
/// name another ring's buffer and stay full (001 §4.4, "completion compression").
#[test]
fn rxbisect_compresses_entries_for_its_own_buffers_only() {
    let cfg =
        IfaceConfig { cores: 2, bx: RingSize::new(128).unwrap(), cq: CqFormat::Cqe64 { compress: true }, ..small() };
    let mut rig = Rig::<RxBisect>::new(&cfg);
    rig.p.dma_wait_ns = 1_000_000;
    // 64 packets fill core 0's Ax ring's buffers (minis: nine full arrays of seven and one of one, closed
    // by the first full entry); 36 more borrow core 1's buffers.
    for _ in 0..100 {
        rig.send(0).unwrap();
    }
    let m = rig.device_metrics();
    assert_eq!((m["cqe_minis"], m["cqe_arrays"], m["borrowed_buffers"]), (64.0, 10.0, 36.0));
    let got: Vec<u64> = [rig.poll(0, 64), rig.poll(0, 64)].concat();
    assert_eq!(got, (0..100).collect::<Vec<u64>>());
    assert_eq!(rig.poll(1, 64).len(), 0);
    assert_eq!(rig.drivers[1].metrics()["notice_only_entries"], 36.0);
    rig.drain_and_teardown();
}

#[test]
fn rxlist_reordering_costs_descriptor_fetches_and_batching_recovers_them() {
    // Four cores sharing one ring, polled in an order that shuffles the free list.
    fn fetches_per_packet<D: Design>() -> (f64, f64) {
        let cfg = IfaceConfig { cores: 4, share: 4, ring: RingSize::new(256).unwrap(), ..small() };
        let mut rig = Rig::<D>::new(&cfg);
        let mut sent = 0u64;
        for r in 0..4000usize {
            if rig.send((r * 7 + r / 3) % 4).is_ok() {
                sent += 1;
            }
            if r % 5 == 0 {
                for c in [(r / 5) % 4, (r / 5 + 2) % 4] {
                    rig.poll(c, 32);
                }
            }
        }
        let m = rig.device_metrics();
        let r = (m["desc_fetches"] / sent as f64, m.get("list_jumps").copied().unwrap_or(0.0) / sent as f64);
        rig.drain_and_teardown();
        r
    }
    let (arr, _) = fetches_per_packet::<RxArr>();
    let (list, jumps) = fetches_per_packet::<RxList>();
    let (batched, _) = fetches_per_packet::<BatchedRxList>();
    println!(
        "descriptor fetches per packet: RxArr {arr:.3}, RxList {list:.3} ({jumps:.3} jumps), batched {batched:.3}"
    );
    assert!(arr <= 0.2, "RxArr fetches 8 contiguous descriptors at a time");
    assert!(list > 2.0 * arr, "a shuffled list defeats prefetching");
    assert!(batched < list / 2.0, "one fetch per batch of 4");
}

#[test]
fn dynamic_switches_on_the_heuristic_and_drains_without_loss() {
    let mut rig = Rig::<Dynamic>::new(&small());
    let hot = Sample { rx_bits_per_s: 190e9, rx_gap_ns: vec![100.0; 4], ..Sample::default() };
    let cold = Sample { rx_bits_per_s: 10e9, ..hot.clone() };
    for i in 0..16u64 {
        let _ = rig.send((i % 4) as usize);
        rig.dev.sample(&hot);
    }
    assert_eq!(rig.dev.ring_set(), RingSet::Shared);
    // Packets delivered to the private rings before the switch are received first.
    for c in 0..4 {
        assert_eq!(rig.poll(c, 32).len(), 4);
    }
    for i in 0..8 {
        rig.send(i % 4).unwrap();
    }
    for _ in 0..16 {
        rig.dev.sample(&cold);
    }
    assert_eq!(rig.dev.ring_set(), RingSet::Private);
    rig.send(0).unwrap();
    assert_eq!(rig.poll(0, 32), vec![16, 20, 24]);
    rig.drain_and_teardown();
}

#[test]
fn dynamic_waits_for_every_core_to_drain_before_switching_again() {
    let mut rig = Rig::<Dynamic>::new(&small());
    rig.send(1).unwrap();
    assert!(rig.dev.switch_to(RingSet::Shared));
    rig.send(1).unwrap();
    // Core 1 has not drained its private ring: no switch back yet.
    assert!(!rig.dev.switch_to(RingSet::Private));
    for c in 0..4 {
        rig.poll(c, 32);
    }
    assert_eq!(rig.delivered[1], vec![0, 1]);
    assert!(rig.dev.switch_to(RingSet::Private));
    rig.drain_and_teardown();
}

#[test]
fn a_descheduled_corec_worker_stalls_the_tail_and_reorders() {
    // §3.4.4: worker 0 claims the first batch and is descheduled; worker 1 consumes the rest of the ring,
    // but the tail cannot pass worker 0's batch, so the NIC runs out of descriptors.
    let cfg = IfaceConfig { cores: 2, ring: RingSize::new(16).unwrap(), burst: 4, ..small() };
    let mut rig = Rig::<Corec>::new(&cfg);
    let mut order = vec![];
    for _ in 0..16 {
        rig.send(0).unwrap();
    }
    let held = rig.drivers[0].claim(&mut rig.p, &rig.cores[0], 4).expect("a batch");
    assert_eq!((held.first(), held.len()), (0, 4));
    for _ in 0..8 {
        order.extend(rig.poll(1, 4));
        let _ = rig.send(0);
    }
    assert_eq!(order, (4..16).collect::<Vec<_>>(), "worker 1 consumed the rest of the ring");
    assert_eq!(rig.drops[0].get(DropReason::NoRxDescriptor), 8, "the tail is stalled: the NIC has no descriptor");
    // Worker 0 resumes: its packets arrive last, and the tail moves over the whole ring.
    let mut out = vec![];
    CorecDriver::finish(&mut rig.drivers[0], &mut rig.p, &rig.cores[0], held, &mut out);
    let late: Vec<u64> = out.iter().map(|p| u64::from_le_bytes(p[..8].try_into().unwrap())).collect();
    drop(out);
    order.extend(&late);
    rig.seen.extend(&late);
    rig.delivered[0].extend(&late);
    rig.send(0).unwrap();
    let mut reorder = measure::reorder::ReorderTracker::default();
    reorder.record_all(order.iter().copied());
    let report = reorder.report();
    println!(
        "COREC §3.4.4 reordering: ratio {:.3}, extent max {} mean {:.1}",
        report.ratio, report.extent.max, report.extent.mean
    );
    assert_eq!(report.reordered, 4);
    // RFC 4737 extent: packet 0 arrives 12 places late, packet 3 15 places.
    assert_eq!(report.extent.max, 15);
    rig.drain_and_teardown();
}

#[test]
fn bad_configurations_name_their_option() {
    fn err<D: Design>(cfg: IfaceConfig) -> &'static str {
        let arena = Arena::new("t", D::buffers_needed(&cfg).min(4096), BufLayout::default()).unwrap();
        D::build(&cfg, &SharedPool::new(Arc::new(arena))).map(|_| ()).unwrap_err().option
    }
    assert_eq!(err::<RxArr>(IfaceConfig { cores: 6, share: 4, ..small() }), "share");
    assert_eq!(err::<Dynamic>(IfaceConfig { cores: 6, share: 4, ..small() }), "share");
    assert_eq!(err::<RxBisect>(IfaceConfig { ax: 32, ..small() }), "ax");
    assert_eq!(err::<RxBisect>(IfaceConfig { ax: 100, ..small() }), "ax");
    assert_eq!(err::<BatchedRxList>(IfaceConfig { list_batch: 3, ..small() }), "list-batch");
    assert_eq!(err::<BatchedRxList>(IfaceConfig { list_batch: 16, ..small() }), "list-batch");
    assert!(RingSize::new(1000).is_err(), "|Bx| is a RingSize: a power of two by construction");
    // COREC with one worker is allowed.
    let cfg = IfaceConfig { cores: 1, ..small() };
    let mut rig = Rig::<Corec>::new(&cfg);
    rig.send(0).unwrap();
    assert_eq!(rig.poll(0, 8), vec![0]);
    rig.drain_and_teardown();
}

/// shRing §4.3: a NIC waiting for a descriptor holds back the packets of that ring only, so an engine
/// needs to know which queues share a ring: a shRing group's cores share its ring, COREC's workers its
/// one queue, and every other design gives each queue its own.
#[test]
fn queues_name_the_descriptor_ring_they_take_buffers_from() {
    fn rings<D: Design>(cfg: &IfaceConfig) -> Vec<usize> {
        let arena = Arena::new("t", D::buffers_needed(cfg), BufLayout::default()).unwrap();
        let (dev, _drivers) = D::build(cfg, &SharedPool::new(Arc::new(arena))).unwrap();
        (0..cfg.cores).map(|q| dev.ring_of(q as u16)).collect()
    }
    let cfg = small();
    assert_eq!(rings::<RxArr>(&cfg), [0, 0, 1, 1]);
    assert_eq!(rings::<RxList>(&cfg), [0, 0, 1, 1]);
    assert_eq!(rings::<BatchedRxList>(&cfg), [0, 0, 1, 1]);
    assert_eq!(rings::<Dynamic>(&cfg), [0, 1, 2, 3], "dynamic shRing starts on private rings");
    assert_eq!(rings::<Corec>(&cfg), [0, 0, 0, 0]);
    assert_eq!(rings::<PrivRing>(&cfg), [0, 1, 2, 3]);
    assert_eq!(rings::<RxBisect>(&cfg), [0, 1, 2, 3]);
    assert_eq!(
        rings::<ifaces::Mprq>(&IfaceConfig { mprq: ifaces::MprqConfig { strides: 8, ..Default::default() }, ..cfg }),
        [0, 1, 2, 3]
    );
}
