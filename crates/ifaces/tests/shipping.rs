//! The shipping designs, Multi-Packet RQ ([`ifaces::mprq`]) and AF_XDP ([`ifaces::afxdp`]), under random
//! single-threaded schedules of NIC arrivals of any size, core polls, transmissions and held packets:
//! conservation with drop reasons, nothing delivered twice, per-queue order on the wire, byte-exact
//! packets, and after a drain and teardown every mbuf, MPRQ buffer and UMEM chunk back in its pool. Then
//! MPRQ's stride bookkeeping against an oracle of the NIC's packing (fillers included), the copy/attach
//! split, the buffer release when a WQE's last packet is freed and CQE compression; AF_XDP's shared FILL
//! ring; and both designs' option errors.

#![cfg(not(loom))]

use ifaces::cqring::CqFormat;
use ifaces::probe::CountingProbe;
use ifaces::{
    AfXdp, AfXdpConfig, Arena, BufLayout, CoreCtx, Design, DeviceSide, DriverSide, DropReason, Drops, IfaceConfig,
    Mprq, MprqConfig, NoProbe, Packet, RingSize, SharedPool,
};
use proptest::prelude::*;
use std::collections::{HashSet, VecDeque};
use std::sync::Arc;

const CORES: usize = 3;

fn cfg(stride_size: u32, strides: u32, memcpy_max: u32, compress: bool) -> IfaceConfig {
    IfaceConfig {
        cores: CORES,
        ring: RingSize::new(32).unwrap(),
        tx_ring: RingSize::new(16).unwrap(),
        cache: 4,
        burst: 4,
        mprq: MprqConfig { stride_size, strides, memcpy_max },
        cq: CqFormat::Cqe64 { compress },
        ..IfaceConfig::default()
    }
}

#[derive(Debug, Clone)]
enum Step {
    /// A packet of this many bytes for this queue.
    Arrive(u16, usize),
    /// This core polls; keeps the packets it received if the flag says so (an application holding them).
    Poll(usize, bool),
    /// The NIC sends up to this many packets.
    Transmit(usize),
    /// This core transmits the packets it holds.
    Release(usize),
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        4 => (0u16..CORES as u16, 60usize..=1514).prop_map(|(q, n)| Step::Arrive(q, n)),
        1 => (0u16..CORES as u16, 60usize..=200).prop_map(|(q, n)| Step::Arrive(q, n)),
        3 => (0..CORES, any::<bool>()).prop_map(|(c, h)| Step::Poll(c, h)),
        1 => (1usize..6).prop_map(Step::Transmit),
        1 => (0..CORES).prop_map(Step::Release),
    ]
}

/// The frame of packet `seq` for `queue`: `len` bytes, the sequence number and queue first, then a pattern.
fn frame(seq: u64, queue: u16, len: usize) -> Vec<u8> {
    let mut f: Vec<u8> = (0..len).map(|i| (i as u64 ^ seq) as u8).collect();
    f[..8].copy_from_slice(&seq.to_le_bytes());
    f[8..10].copy_from_slice(&queue.to_le_bytes());
    f
}

fn run<D: Design>(c: &IfaceConfig, steps: &[Step]) -> Result<(), TestCaseError> {
    let pool = SharedPool::new(Arc::new(Arena::new("t", D::buffers_needed(c), BufLayout::default()).unwrap()));
    let (mut dev, mut drivers) = D::build(c, &pool).unwrap();
    let cores: Vec<CoreCtx> = (0..CORES).map(|i| CoreCtx::new(i as u16, c.cache, &pool)).collect();
    let p = &mut CountingProbe { dma_wait_ns: 300, ..CountingProbe::default() };
    let (mut offered, mut drops, mut frames) = (0u64, Drops::default(), Vec::new());
    let mut held: Vec<Vec<Packet<'_>>> = (0..CORES).map(|_| Vec::new()).collect();
    let mut wire: Vec<Vec<u8>> = Vec::new();
    let mut delivered = 0u64;
    let transmit = |dev: &mut D::Device, wire: &mut Vec<Vec<u8>>, budget| {
        dev.tx(&mut NoProbe::default(), &mut |f: &[u8]| wire.push(f.to_vec()), budget)
    };
    for s in steps {
        match *s {
            Step::Arrive(q, len) => {
                let f = frame(offered, q, len);
                p.now += 100;
                match dev.rx(p, q, 0, &f) {
                    Ok(()) => frames.push(Some(f)),
                    Err(r) => {
                        drops.add(r);
                        frames.push(None);
                    }
                }
                offered += 1;
            }
            Step::Poll(core, hold) => {
                let mut rx = Vec::new();
                delivered += drivers[core].rx_burst(&mut NoProbe::default(), &cores[core], &mut rx, c.burst) as u64;
                // Held packets go out first, in order.
                held[core].append(&mut rx);
                if !hold {
                    drivers[core].tx_burst(&mut NoProbe::default(), &cores[core], &mut held[core]);
                }
            }
            Step::Transmit(b) => {
                transmit(&mut dev, &mut wire, b);
            }
            Step::Release(core) => {
                drivers[core].tx_burst(&mut NoProbe::default(), &cores[core], &mut held[core]);
            }
        }
        prop_assert_eq!(offered, delivered + drops.total() + dev.occupancy().used, "conservation");
    }
    dev.idle(p);
    for (core, h) in held.iter_mut().enumerate() {
        drivers[core].tx_burst(&mut NoProbe::default(), &cores[core], h);
    }
    while dev.occupancy().used > 0 || dev.tx_pending() > 0 {
        for core in 0..CORES {
            let mut rx = Vec::new();
            delivered += drivers[core].rx_burst(&mut NoProbe::default(), &cores[core], &mut rx, c.burst) as u64;
            drivers[core].tx_burst(&mut NoProbe::default(), &cores[core], &mut rx);
        }
        transmit(&mut dev, &mut wire, usize::MAX);
    }
    prop_assert_eq!(offered, delivered + drops.total());
    let tx_full: f64 = drivers.iter().map(|d| d.metrics()["tx_full_drops"]).sum();
    prop_assert_eq!(wire.len() as u64 + tx_full as u64, delivered);
    let (mut seen, mut last) = (HashSet::new(), [None::<u64>; CORES]);
    for f in &wire {
        let seq = u64::from_le_bytes(f[..8].try_into().unwrap());
        let q = u16::from_le_bytes([f[8], f[9]]) as usize;
        prop_assert!(seen.insert(seq), "packet {} delivered twice", seq);
        prop_assert!(last[q].is_none_or(|l| l < seq), "queue {} out of order at {}", q, seq);
        last[q] = Some(seq);
        prop_assert_eq!(Some(f), frames[seq as usize].as_ref(), "packet {} changed", seq);
    }
    drop(held);
    for (d, core) in drivers.iter_mut().zip(&cores) {
        d.teardown(core);
    }
    drop(cores);
    let n = pool.arena().count();
    prop_assert_eq!(pool.arena().census(), [n, 0, 0, 0], "mbufs leaked");
    Ok(())
}

proptest! {
    /// Every invariant, with DPDK's defaults scaled to a 32-stride ring (2 KiB strides, every packet one
    /// stride, copied up to 128 B), with 64 B strides (packets over several strides, fillers), with every
    /// packet attached, and with CQE compression under back pressure.
    #[test]
    fn schedules_keep_the_invariants(steps in proptest::collection::vec(step(), 0..300), which in 0usize..4) {
        let c = [cfg(2048, 8, 128, false), cfg(64, 16, 128, false), cfg(256, 8, 0, false), cfg(64, 16, 96, true)][which].clone();
        let c = if which == 1 { IfaceConfig { ring: RingSize::new(512).unwrap(), ..c } } else { c };
        run::<Mprq>(&c, &steps)?;
    }

    /// AF_XDP with a FILL ring per queue and with one shared FILL ring, 2 KiB and 4 KiB chunks, zero-copy
    /// and copy mode (whose NIC completions may be compressed).
    #[test]
    fn afxdp_schedules_keep_the_invariants(steps in proptest::collection::vec(step(), 0..300), shared_fill: bool, big: bool, zero_copy: bool, compress: bool) {
        let afxdp = AfXdpConfig { chunk_size: if big { 4096 } else { 2048 }, fill: RingSize::new(16).unwrap(), shared_fill, zero_copy };
        let afxdp_cfg = IfaceConfig { afxdp, ..cfg(2048, 8, 128, compress) };
        run::<AfXdp>(&afxdp_cfg, &steps)?;
    }

    /// The NIC packs packets into strides as the oracle does: each takes `ceil(len / stride_size)`
    /// consecutive strides of the current WQE, and one that does not fit makes a filler that consumes
    /// the rest and starts the next WQE. Every packet is attached (`memcpy_max` 0), so its address says
    /// which stride it starts at.
    #[test]
    fn strides_follow_the_packing(sizes in proptest::collection::vec(60usize..=1514, 1..200), polls in proptest::collection::vec(1usize..6, 1..50)) {
        let c = IfaceConfig { cores: 1, ring: RingSize::new(256).unwrap(), ..cfg(128, 16, 0, false) };
        let pool = SharedPool::new(Arc::new(Arena::new("t", Mprq::buffers_needed(&c), BufLayout::default()).unwrap()));
        let (mut dev, mut drivers) = Mprq::build(&c, &pool).unwrap();
        let core = CoreCtx::new(0, c.cache, &pool);
        let np = &mut NoProbe::default();
        let (mut stride, mut fillers, mut want) = (0usize, 0u64, VecDeque::new());
        let mut polls = polls.into_iter().cycle();
        for (i, &len) in sizes.iter().enumerate() {
            let need = len.div_ceil(128);
            if dev.rx(np, 0, 0, &frame(i as u64, 0, len)).is_err() {
                // The ring is full; let the core catch up and retry once.
                let mut rx = Vec::new();
                while drivers[0].rx_burst(np, &core, &mut rx, 64) > 0 {}
                for pkt in rx.drain(..) {
                    prop_assert_eq!(Some(pkt_stride(&dev, &pkt)), want.pop_front());
                }
                prop_assert_eq!(dev.rx(np, 0, 0, &frame(i as u64, 0, len)), Ok(()));
            }
            if stride + need > 16 {
                fillers += 1;
                stride = 0;
            }
            want.push_back(stride);
            stride = (stride + need) % 16;
            let mut rx = Vec::new();
            drivers[0].rx_burst(np, &core, &mut rx, polls.next().unwrap());
            for pkt in rx.drain(..) {
                prop_assert_eq!(Some(pkt_stride(&dev, &pkt)), want.pop_front());
            }
        }
        let mut rx = Vec::new();
        while drivers[0].rx_burst(np, &core, &mut rx, 64) > 0 {}
        for pkt in rx.drain(..) {
            prop_assert_eq!(Some(pkt_stride(&dev, &pkt)), want.pop_front());
        }
        prop_assert!(want.is_empty());
        prop_assert_eq!(dev.metrics()["mprq_fillers"], fillers as f64);
        drop(rx);
        drivers[0].teardown(&core);
    }
}

/// The stride an attached packet starts at.
fn pkt_stride(dev: &ifaces::mprq::MprqDevice, pkt: &Packet<'_>) -> usize {
    let region = &dev.data_regions()[0];
    assert!(region.contains(&pkt.addr()), "an attached packet lies in the MPRQ buffers");
    let arena_of = dev.mem().arena();
    let (_, off) = arena_of.locate(pkt.addr()).expect("a stride of a buffer");
    off / 128
}

/// One core and a small MPRQ: its device, driver, core and pool.
fn one(c: &IfaceConfig) -> (ifaces::mprq::MprqDevice, Vec<ifaces::mprq::MprqDriver>, CoreCtx, Arc<SharedPool>) {
    let pool = SharedPool::new(Arc::new(Arena::new("t", Mprq::buffers_needed(c), BufLayout::default()).unwrap()));
    let (dev, drivers) = Mprq::build(c, &pool).unwrap();
    let core = CoreCtx::new(0, c.cache, &pool);
    (dev, drivers, core, pool)
}

/// DPDK copies packets up to `mprq_max_memcpy_len` into mbufs and attaches larger ones; a WQE whose
/// strides are all consumed is reposted in place when nothing holds it, replaced by a spare while an
/// attached packet does, and that buffer returns to the pool when the packet is freed.
#[test]
fn small_packets_are_copied_large_ones_attached_and_a_held_buffer_is_replaced() {
    let c = IfaceConfig { cores: 1, ..cfg(2048, 8, 128, false) };
    let (mut dev, mut drivers, core, _pool) = one(&c);
    let np = &mut NoProbe::default();
    let mprq_free = |dev: &ifaces::mprq::MprqDevice| dev.mem().arena().census()[0];
    let free0 = mprq_free(&dev);
    // One WQE of 8 strides: 7 small packets and one large.
    for i in 0..7 {
        dev.rx(np, 0, 0, &frame(i, 0, 100)).unwrap();
    }
    dev.rx(np, 0, 0, &frame(7, 0, 1000)).unwrap();
    let mut rx = Vec::new();
    assert_eq!(drivers[0].rx_burst(np, &core, &mut rx, 8), 8);
    let m = drivers[0].metrics();
    assert_eq!((m["mprq_copied"], m["mprq_attached"]), (7.0, 1.0));
    let large = rx.pop().unwrap();
    assert_eq!(large.len(), 1000);
    assert_eq!(&large[..8], &7u64.to_le_bytes());
    drop(rx);
    // The next burst retires the WQE: the large packet still holds its buffer, so the spare replaces it.
    dev.rx(np, 0, 0, &frame(8, 0, 100)).unwrap();
    let mut rx = Vec::new();
    assert_eq!(drivers[0].rx_burst(np, &core, &mut rx, 8), 1);
    assert_eq!(drivers[0].metrics()["mprq_replaced"], 1.0);
    let held = mprq_free(&dev);
    drop(large);
    drop(rx);
    drivers[0].rx_burst(np, &core, &mut Vec::new(), 8);
    assert_eq!(mprq_free(&dev), held + 1, "the buffer is back in the pool once its last packet is freed");
    drivers[0].teardown(&core);
    assert!(free0 < mprq_free(&dev));
    assert_eq!(mprq_free(&dev), dev.mem().arena().count(), "every buffer back in the pool");
}

/// A packet larger than a WQE is dropped as too long; one that does not fit the current WQE's remaining
/// strides makes a filler and goes into the next.
#[test]
fn fillers_and_too_long_packets() {
    let c = IfaceConfig { cores: 1, ..cfg(64, 8, 128, false) };
    let (mut dev, mut drivers, core, _pool) = one(&c);
    let np = &mut NoProbe::default();
    assert_eq!(dev.rx(np, 0, 0, &frame(0, 0, 8 * 64 + 1)), Err(DropReason::TooLong));
    dev.rx(np, 0, 0, &frame(1, 0, 5 * 64)).unwrap();
    dev.rx(np, 0, 0, &frame(2, 0, 4 * 64)).unwrap();
    assert_eq!(dev.metrics()["mprq_fillers"], 1.0);
    assert_eq!(dev.metrics()["mprq_filler_strides"], 3.0);
    let mut rx = Vec::new();
    assert_eq!(drivers[0].rx_burst(np, &core, &mut rx, 8), 2);
    assert_eq!((rx[0].len(), rx[1].len()), (320, 256));
    assert_eq!(dev.occupancy().used, 0, "fillers are not packets");
    drop(rx);
    drivers[0].teardown(&core);
}

/// The NIC reads one WQE descriptor per WQE, not one per packet.
#[test]
fn the_nic_reads_one_descriptor_per_wqe() {
    let c = IfaceConfig { cores: 1, ring: RingSize::new(256).unwrap(), ..cfg(2048, 16, 128, false) };
    let (mut dev, mut drivers, core, _pool) = one(&c);
    let np = &mut NoProbe::default();
    for i in 0..64 {
        dev.rx(np, 0, 0, &frame(i, 0, 64)).unwrap();
    }
    let m = dev.metrics();
    assert_eq!(m["desc_fetches"] + m["desc_prefetch_hits"], 4.0, "64 packets, 4 WQEs of 16 strides");
    while drivers[0].rx_burst(np, &core, &mut Vec::new(), 32) > 0 {}
    drivers[0].teardown(&core);
}

/// Under PCIe back pressure the NIC writes MPRQ completions as mini-CQEs carrying the stride index
/// (CSUM_STRIDX); the driver finds every packet where it lies.
#[test]
fn compressed_completions_carry_the_stride_index() {
    let c = IfaceConfig { cores: 1, ..cfg(64, 8, 0, true) };
    let (mut dev, mut drivers, core, _pool) = one(&c);
    let p = &mut CountingProbe { dma_wait_ns: 10_000, ..CountingProbe::default() };
    for (i, len) in [64usize, 130, 64, 200, 64].into_iter().enumerate() {
        dev.rx(p, 0, 0, &frame(i as u64, 0, len)).unwrap();
    }
    dev.idle(p);
    assert!(dev.metrics()["cqe_minis"] >= 4.0, "{:?}", dev.metrics());
    let mut rx = Vec::new();
    assert_eq!(drivers[0].rx_burst(&mut NoProbe::default(), &core, &mut rx, 8), 5);
    let seqs: Vec<u64> = rx.iter().map(|p| u64::from_le_bytes(p[..8].try_into().unwrap())).collect();
    assert_eq!(seqs, [0, 1, 2, 3, 4]);
    drop(rx);
    drivers[0].teardown(&core);
}

#[test]
fn bad_options_name_their_option() {
    let err = |c: IfaceConfig| {
        let pool = SharedPool::new(Arc::new(Arena::new("t", 4096, BufLayout::default()).unwrap()));
        Mprq::build(&c, &pool).map(|_| ()).unwrap_err()
    };
    let base = cfg(2048, 8, 128, false);
    assert_eq!(
        err(IfaceConfig { mprq: MprqConfig { stride_size: 100, ..base.mprq }, ..base.clone() }).option,
        "mprq-stride-size"
    );
    assert_eq!(
        err(IfaceConfig { mprq: MprqConfig { stride_size: 16384, ..base.mprq }, ..base.clone() }).option,
        "mprq-stride-size"
    );
    assert_eq!(
        err(IfaceConfig { mprq: MprqConfig { strides: 4, ..base.mprq }, ..base.clone() }).option,
        "mprq-strides"
    );
    let e = err(IfaceConfig { mprq: MprqConfig { strides: 32, ..base.mprq }, ..base.clone() });
    assert_eq!(e.option, "mprq-strides");
    assert!(e.to_string().contains("--ring"), "{e}");
    assert_eq!(
        err(IfaceConfig { mprq: MprqConfig { memcpy_max: 4096, ..base.mprq }, ..base.clone() }).option,
        "mprq-memcpy"
    );
    let intel = CqFormat::Wb32 { packing: ifaces::wbpack::WbPacking::NONE };
    assert_eq!(err(IfaceConfig { cq: intel, ..base.clone() }).option, "profile");
    assert!(!err(IfaceConfig { mprq: MprqConfig { strides: 3, ..base.mprq }, ..base }).to_string().contains('\n'));
}

/// With one shared FILL ring, chunks any core posted serve every queue: a core that stops polling (and
/// so stops posting) does not starve the others, who keep the ring full; with a FILL ring per queue its
/// queue runs dry once its own ring is used up.
#[test]
fn a_shared_fill_ring_serves_every_queue() {
    for shared_fill in [false, true] {
        let afxdp = AfXdpConfig { chunk_size: 2048, fill: RingSize::new(16).unwrap(), shared_fill, zero_copy: true };
        let c = IfaceConfig { cores: 2, afxdp, ..cfg(2048, 8, 128, false) };
        let pool = SharedPool::new(Arc::new(Arena::new("t", AfXdp::buffers_needed(&c), BufLayout::default()).unwrap()));
        let (mut dev, mut drivers) = AfXdp::build(&c, &pool).unwrap();
        let cores: Vec<CoreCtx> = (0..2).map(|i| CoreCtx::new(i, c.cache, &pool)).collect();
        let np = &mut NoProbe::default();
        // Core 1 polls, core 0 never does; queue 0 gets a packet for each of queue 1's.
        let mut dropped0 = 0;
        for i in 0..64 {
            dropped0 += usize::from(dev.rx(np, 0, 0, &frame(2 * i, 0, 64)).is_err());
            dev.rx(np, 1, 0, &frame(2 * i + 1, 1, 64)).unwrap();
            let mut rx = Vec::new();
            drivers[1].rx_burst(np, &cores[1], &mut rx, 4);
            drop(rx);
            dev.idle(np);
        }
        // Queue 0's RX ring (32) fills either way; before that, its own FILL ring of 16 ran dry.
        assert_eq!(dropped0, if shared_fill { 64 - 32 } else { 64 - 16 }, "shared {shared_fill}");
        while drivers[0].rx_burst(np, &cores[0], &mut Vec::new(), 8) > 0 {}
        while drivers[1].rx_burst(np, &cores[1], &mut Vec::new(), 8) > 0 {}
        dev.idle(np);
        for (d, core) in drivers.iter_mut().zip(&cores) {
            d.teardown(core);
        }
    }
}

#[test]
fn afxdp_bad_options_name_their_option() {
    let err = |afxdp: AfXdpConfig| {
        let c = IfaceConfig { afxdp, ..cfg(2048, 8, 128, false) };
        let pool = SharedPool::new(Arc::new(Arena::new("t", 4096, BufLayout::default()).unwrap()));
        AfXdp::build(&c, &pool).map(|_| ()).unwrap_err()
    };
    let base = AfXdpConfig { fill: RingSize::new(16).unwrap(), ..AfXdpConfig::default() };
    assert_eq!(err(AfXdpConfig { chunk_size: 1024, ..base }).option, "afxdp-chunk");
    assert_eq!(err(AfXdpConfig { chunk_size: 3000, ..base }).option, "afxdp-chunk");
    assert_eq!(err(AfXdpConfig { chunk_size: 8192, ..base }).option, "afxdp-chunk");
    assert_eq!(err(AfXdpConfig { fill: RingSize::new(2).unwrap(), ..base }).option, "afxdp-fill");
}
