//! nicmem's four configurations under random single-threaded interleavings (packets of 60-1500 B, a
//! NIC memory small enough that split rings spill to the secondary ring): conservation, no duplicate,
//! per-core order, byte-exact transmission of both gathered segments, and every buffer of both arenas
//! (host and NIC memory) back at the end, also with NIC memory on one queue of two (§6.4). Then nmKVS
//! under real threads: no transmitted value is torn. And the bad inputs: a split offset beyond the buffer,
//! NIC memory too small, NIC memory queues on a design without split rings or beyond the cores' queues.

#![cfg(not(loom))]

use ifaces::nicmem::kvs::{HotSet, Payload};
use ifaces::nicmem::{NicMemCapacity, NicMemConfig, NicMemDesign, NicMemHost};
use ifaces::probe::NoProbe;
use ifaces::{
    Arena, BufLayout, CoreCtx, Design, DeviceSide, DriverSide, Drops, IfaceConfig, NicMemSplit, NmNfv, RingSize,
    SharedPool, TxFull,
};
use proptest::prelude::*;
use std::collections::HashSet;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

fn small() -> IfaceConfig {
    IfaceConfig {
        cores: 2,
        ring: RingSize::new(16).unwrap(),
        tx_ring: RingSize::new(16).unwrap(),
        cache: 4,
        burst: 8,
        nicmem: NicMemConfig { capacity: NicMemCapacity::Bytes(16 * 2048), split_at: 64, queues: None },
        ..IfaceConfig::default()
    }
}

fn frame(seq: u64) -> Vec<u8> {
    let len = 60 + (seq as usize * 389) % 1441;
    let mut f: Vec<u8> = (0..len).map(|i| (i as u8) ^ (seq as u8)).collect();
    f[..8].copy_from_slice(&seq.to_le_bytes());
    f
}

fn run<const M: u8>(steps: &[(u8, usize)]) {
    run_on::<M>(small(), steps)
}

fn run_on<const M: u8>(cfg: IfaceConfig, steps: &[(u8, usize)]) {
    let pool = SharedPool::new(Arc::new(
        Arena::new("t", NicMemDesign::<M>::buffers_needed(&cfg), BufLayout::default()).unwrap(),
    ));
    let (mut dev, mut drivers) = NicMemDesign::<M>::build(&cfg, &pool).unwrap();
    let nicmem = dev.nicmem().expect("nicmem designs expose NIC memory").clone();
    let cores: Vec<CoreCtx> = (0..2).map(|c| CoreCtx::new(c, cfg.cache, &pool)).collect();
    let (mut offered, mut drops, mut seen, mut sent) = (0u64, Drops::default(), HashSet::new(), HashSet::<u64>::new());
    let delivered = |seen: &HashSet<u64>| seen.len() as u64;
    let mut last = [None::<u64>; 2];
    let mut wire = vec![];
    let mut tx_dropped = 0u64;
    let p = &mut NoProbe::default();
    let mut poll = |c: usize, echo: bool, drivers: &mut Vec<ifaces::nicmem::NicMemDriver>, seen: &mut HashSet<u64>| {
        let mut rx = vec![];
        drivers[c].rx_burst(p, &cores[c], &mut rx, 8);
        for pkt in &rx {
            let s = u64::from_le_bytes(pkt[..8].try_into().unwrap());
            let mut whole = pkt.to_vec();
            whole.extend_from_slice(pkt.tail().unwrap_or(&[]));
            assert_eq!(whole, frame(s), "packet {s} split wrongly");
            assert!(seen.insert(s), "packet {s} delivered twice");
            assert!(last[c].is_none_or(|l| l < s), "core {c} out of order");
            last[c] = Some(s);
        }
        if echo {
            // The driver queues from the front and frees what its full Tx ring has no room for
            // (`TxFull::Drop`, counted as `tx_full_drops`): only what it queued must reach the wire.
            let seqs: Vec<u64> = rx.iter().map(|pkt| u64::from_le_bytes(pkt[..8].try_into().unwrap())).collect();
            let queued = drivers[c].tx_burst(p, &cores[c], &mut rx);
            sent.extend(&seqs[..queued]);
            tx_dropped += (seqs.len() - queued) as u64;
        }
    };
    for &(kind, x) in steps {
        match kind {
            0 => {
                if let Err(r) = dev.rx(&mut NoProbe::default(), (x % 2) as u16, 0, &frame(offered)) {
                    drops.add(r);
                }
                offered += 1;
            }
            1 => poll(x % 2, x % 3 != 0, &mut drivers, &mut seen),
            _ => {
                dev.tx(&mut NoProbe::default(), &mut |f: &[u8]| wire.push(f.to_vec()), x);
            }
        }
        assert_eq!(offered, delivered(&seen) + drops.total() + dev.occupancy().used, "conservation");
    }
    for _ in 0..100 {
        poll(0, false, &mut drivers, &mut seen);
        poll(1, false, &mut drivers, &mut seen);
        dev.tx(&mut NoProbe::default(), &mut |f: &[u8]| wire.push(f.to_vec()), usize::MAX);
    }
    assert_eq!(offered, seen.len() as u64 + drops.total(), "drained");
    for f in &wire {
        let s = u64::from_le_bytes(f[..8].try_into().unwrap());
        assert_eq!(f, &frame(s), "packet {s} gathered wrongly on transmit");
        assert!(sent.remove(&s), "packet {s} sent twice");
    }
    assert!(sent.is_empty(), "queued packets never left");
    let counted: f64 = drivers.iter().map(|d| d.metrics()["tx_full_drops"]).sum();
    assert_eq!(counted, tx_dropped as f64, "Tx-full drops miscounted");
    for (d, c) in drivers.iter_mut().zip(&cores) {
        d.teardown(c);
    }
    drop(cores);
    let n = pool.arena().count();
    assert_eq!(pool.arena().census(), [n, 0, 0, 0], "host buffers leaked");
    assert_eq!(nicmem.available() as u32, nicmem.arena().count(), "nicmem buffers leaked");
    assert_eq!(nicmem.arena().census()[0], nicmem.arena().count());
}

fn steps() -> impl Strategy<Value = Vec<(u8, usize)>> {
    proptest::collection::vec((0u8..3, 1usize..12), 0..400)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn host(s in steps()) { run::<0>(&s) }

    #[test]
    fn split(s in steps()) { run::<1>(&s) }

    #[test]
    fn nmnfv_minus(s in steps()) { run::<2>(&s) }

    #[test]
    fn nmnfv(s in steps()) { run::<3>(&s) }

    /// Queue 0 with NIC memory, queue 1 a host queue (§6.4).
    #[test]
    fn nmnfv_on_one_queue(s in steps()) { run_on::<3>(one_nicmem_queue(), &s) }
}

fn one_nicmem_queue() -> IfaceConfig {
    IfaceConfig { nicmem: NicMemConfig { queues: Some(1), ..small().nicmem }, ..small() }
}

/// With one of two queues on NIC memory, that queue's payloads land in NIC memory and the other queue
/// keeps whole packets in host buffers, headers not inlined; emulated NIC memory is sized for one queue.
#[test]
fn only_the_nicmem_queues_split() {
    let cfg = IfaceConfig {
        nicmem: NicMemConfig { capacity: NicMemCapacity::Emulated, ..one_nicmem_queue().nicmem },
        ..one_nicmem_queue()
    };
    let pool = SharedPool::new(Arc::new(Arena::new("t", NmNfv::buffers_needed(&cfg), BufLayout::default()).unwrap()));
    let (mut dev, mut drivers) = NmNfv::build(&cfg, &pool).unwrap();
    let wanted = cfg.ring.len() + cfg.tx_ring.len() + 2 * cfg.burst;
    assert_eq!(dev.nicmem().unwrap().arena().count() as usize, wanted, "NIC memory for one queue");
    let cores: Vec<CoreCtx> = (0..2).map(|c| CoreCtx::new(c, cfg.cache, &pool)).collect();
    let p = &mut NoProbe::default();
    for q in 0..2u16 {
        dev.rx(p, q, 0, &frame(7)).unwrap();
    }
    let mut wire = vec![];
    for (c, core) in cores.iter().enumerate() {
        let mut rx = vec![];
        assert_eq!(drivers[c].rx_burst(p, core, &mut rx, 8), 1);
        let (len, tail) = (rx[0].len(), rx[0].tail().map(<[u8]>::len));
        if c == 0 {
            assert_eq!((len, tail), (64, Some(frame(7).len() - 64)), "queue 0 splits");
        } else {
            assert_eq!((len, tail), (frame(7).len(), None), "queue 1 keeps the whole packet");
        }
        drivers[c].tx_burst(p, core, &mut rx);
        dev.tx(p, &mut |f: &[u8]| wire.push(f.to_vec()), usize::MAX);
    }
    assert_eq!(wire, [frame(7), frame(7)]);
    assert_eq!(dev.nicmem().unwrap().cpu_accesses(), (0, 0));
    for (d, c) in drivers.iter_mut().zip(&cores) {
        d.teardown(c);
    }
}

#[test]
fn bad_inputs_are_config_errors() {
    let pool = SharedPool::new(Arc::new(Arena::new("t", 512, BufLayout::default()).unwrap()));
    let cfg = IfaceConfig { nicmem: NicMemConfig { split_at: 4096, ..small().nicmem }, ..small() };
    let e = NicMemSplit::build(&cfg, &pool).unwrap_err();
    assert_eq!(e.option, "nicmem-split");
    let room = format!("{} B buffer", BufLayout::default().data_room());
    assert!(e.to_string().contains(&room), "{e}");
    let cfg =
        IfaceConfig { nicmem: NicMemConfig { capacity: NicMemCapacity::Bytes(2048), ..small().nicmem }, ..small() };
    assert_eq!(NmNfv::build(&cfg, &pool).unwrap_err().option, "nicmem");
    // NIC memory queues: nmNFV's, and no more than the cores' queues.
    let queues = |n| IfaceConfig { nicmem: NicMemConfig { queues: Some(n), ..small().nicmem }, ..small() };
    assert_eq!(NicMemHost::build(&queues(1), &pool).unwrap_err().option, "nicmem-queues");
    assert_eq!(NmNfv::build(&queues(3), &pool).unwrap_err().option, "nicmem-queues");
    assert!(NmNfv::build(&queues(0), &pool).is_ok());
}

/// A core serves gets and sets of hot items and sends the responses through nicmem's transmit path
/// (header packets with the value attached zero-copy, or copied) while the NIC thread transmits them and
/// completes them: every transmitted value is one complete written value (all its bytes equal), and every
/// reference comes back.
#[test]
fn nmkvs_never_transmits_a_torn_value() {
    const VALUE: usize = 1024;
    // The core waits for room in its Tx ring (as FastClick's blocking ToDPDKDevice), so that every
    // response it pushes is sent.
    let cfg = IfaceConfig {
        cores: 1,
        nicmem: NicMemConfig { capacity: NicMemCapacity::Bytes(8 * 2048), split_at: 64, queues: None },
        tx_full: TxFull::Wait,
        ..small()
    };
    let pool = SharedPool::new(Arc::new(
        Arena::new("t", NicMemHost::buffers_needed(&cfg) + 64, BufLayout::default()).unwrap(),
    ));
    let (mut dev, mut drivers) = NicMemHost::build(&cfg, &pool).unwrap();
    let nicmem = dev.nicmem().unwrap().clone();
    let done = AtomicBool::new(false);
    let (zero_copy, copies, sent) = std::thread::scope(|s| {
        let nic = s.spawn(|| {
            let mut sent = 0u64;
            let mut wire = |f: &[u8]| {
                let v = &f[8..];
                assert!(v.len() == VALUE && v.iter().all(|&b| b == v[0]), "torn value");
                sent += 1;
            };
            while !done.load(Ordering::Acquire) || dev.tx_pending() > 0 {
                dev.tx(&mut NoProbe::default(), &mut wire, 8);
            }
            sent
        });
        let core = CoreCtx::new(0, cfg.cache, &pool);
        let drv = &mut drivers[0];
        let p = &mut NoProbe::default();
        let mut hot = HotSet::new(nicmem.clone(), 0, 0);
        for k in 0..4 {
            hot.insert(p, k, &[0u8; VALUE]).unwrap();
        }
        let (mut zero_copy, mut copies, mut pushed, mut tx) = (0u64, 0u64, 0u64, Vec::new());
        for i in 0..20_000u64 {
            let k = i % 4;
            if i % 3 == 0 {
                hot.set(p, k, &[(i % 251) as u8; VALUE]);
                continue;
            }
            // Wait for the NIC to complete transmissions when every buffer is in flight.
            let mut pkt = loop {
                match core.alloc_packet(p) {
                    Some(pkt) => break pkt,
                    None => {
                        drv.tx_burst(p, &core, &mut tx);
                        std::thread::yield_now();
                    }
                }
            };
            pkt.set_len(8);
            pkt.copy_from_slice(&i.to_le_bytes());
            match hot.get(p, k).unwrap() {
                Payload::ZeroCopy(z) => {
                    z.attach(&mut pkt);
                    zero_copy += 1;
                }
                Payload::Copy(v) => {
                    pkt.set_len(8 + VALUE);
                    pkt[8..].copy_from_slice(v);
                    copies += 1;
                }
            }
            // Some responses are dropped before they are sent: their references come back too.
            if i % 7 != 0 {
                tx.push(pkt);
                pushed += 1;
            }
            if tx.len() >= 8 {
                drv.tx_burst(p, &core, &mut tx);
            }
        }
        while !tx.is_empty() {
            drv.tx_burst(p, &core, &mut tx);
            std::thread::yield_now();
        }
        done.store(true, Ordering::Release);
        let sent = nic.join().unwrap();
        drv.teardown(&core);
        for k in 0..4 {
            assert!(hot.evict(k).is_some(), "every reference was released");
        }
        assert_eq!(sent, pushed, "every queued response was sent");
        (zero_copy, copies, sent)
    });
    println!("nmKVS: {zero_copy} zero-copy responses, {copies} copies of the pending buffer, {sent} sent");
    // How many go zero-copy depends on how fast the NIC thread completes; the first get of each key
    // always does.
    assert!(zero_copy >= 4, "{zero_copy} zero-copy");
    assert_eq!(nicmem.available() as u32, nicmem.arena().count(), "nicmem buffers leaked");
    let n = pool.arena().count();
    assert_eq!(pool.arena().census(), [n, 0, 0, 0], "host buffers leaked");
}

/// The transmit queue holds one Tx ring's worth of descriptors (FastClick's `ToDPDKDevice NDESC`): a burst
/// that does not fit is dropped and counted, or left to the caller (a blocking `ToDPDKDevice`), until
/// the NIC has sent and the driver reclaimed what was queued.
#[test]
fn a_full_tx_ring_drops_or_holds_what_does_not_fit() {
    for full in [TxFull::Drop, TxFull::Wait] {
        let cfg = IfaceConfig { cores: 1, tx_full: full, ..small() };
        let pool = SharedPool::new(Arc::new(
            Arena::new("t", NicMemHost::buffers_needed(&cfg) + 64, BufLayout::default()).unwrap(),
        ));
        let (mut dev, mut drivers) = NicMemHost::build(&cfg, &pool).unwrap();
        let core = CoreCtx::new(0, cfg.cache, &pool);
        let p = &mut NoProbe::default();
        let ring = cfg.tx_ring.len();
        let mut tx: Vec<_> = (0..ring + 8)
            .map(|i| {
                let mut pkt = core.alloc_packet(p).unwrap();
                pkt.set_len(64);
                pkt[..8].copy_from_slice(&(i as u64).to_le_bytes());
                pkt
            })
            .collect();
        assert_eq!(drivers[0].tx_burst(p, &core, &mut tx), ring);
        assert_eq!(dev.tx_pending(), ring as u64);
        let dropped = drivers[0].metrics()["tx_full_drops"];
        match full {
            TxFull::Drop => assert_eq!((tx.len(), dropped), (0, 8.0)),
            TxFull::Wait => assert_eq!((tx.len(), dropped), (8, 0.0)),
        }
        let mut sent = vec![];
        assert_eq!(dev.tx(p, &mut |f: &[u8]| sent.push(u64::from_le_bytes(f[..8].try_into().unwrap())), 64), ring);
        assert_eq!(sent, (0..ring as u64).collect::<Vec<_>>());
        assert_eq!(drivers[0].tx_burst(p, &core, &mut tx), if full == TxFull::Wait { 8 } else { 0 });
        assert!(tx.is_empty());
    }
}

/// Packets spilled to the secondary ring when a core receives a full ring's worth and sends it, and the
/// NIC transmits it, `rounds` times over.
fn spilled(capacity: NicMemCapacity, rounds: u64) -> (f64, u32) {
    let cfg = IfaceConfig { cores: 1, nicmem: NicMemConfig { capacity, split_at: 64, queues: None }, ..small() };
    let pool = SharedPool::new(Arc::new(Arena::new("t", NmNfv::buffers_needed(&cfg), BufLayout::default()).unwrap()));
    let (mut dev, mut drivers) = NmNfv::build(&cfg, &pool).unwrap();
    let core = CoreCtx::new(0, cfg.cache, &pool);
    let p = &mut NoProbe::default();
    let mut seq = 0;
    for _ in 0..rounds {
        for _ in 0..cfg.ring.len() {
            dev.rx(p, 0, 0, &frame(seq)).expect("a ring's worth fits");
            seq += 1;
        }
        let mut rx = vec![];
        while drivers[0].rx_burst(p, &core, &mut rx, cfg.burst) > 0 {
            drivers[0].tx_burst(p, &core, &mut rx);
        }
        dev.tx(p, &mut |_: &[u8]| {}, usize::MAX);
    }
    let nicmem = dev.nicmem().unwrap().arena().count();
    drivers[0].teardown(&core);
    (dev.metrics()["secondary_ring_packets"], nicmem)
}

/// The paper's emulated nicmem (§5) gives the queue its rings' worth of NIC buffers, so a full ring of
/// payloads lands in NIC memory every time; with 16 real buffers the primary ring is still empty when
/// the next ring's worth arrives (its buffers are on their way out), so the split rings spill.
#[test]
fn emulated_nicmem_keeps_every_payload_on_the_nic() {
    let c = small();
    let (emulated, bufs) = spilled(NicMemCapacity::Emulated, 4);
    assert_eq!((emulated, bufs as usize), (0.0, c.ring.len() + c.tx_ring.len() + 2 * c.burst));
    let (device, bufs) = spilled(NicMemCapacity::Bytes(16 * 2048), 4);
    assert_eq!(bufs, 16);
    assert!(device > 0.0, "{device}");
}
