//! Ensō under random single-threaded interleavings of NIC and core steps, in every variant (reactive,
//! per-packet, prefetching, chaotic): small one-page pipes that wrap and fill, apps that drop, echo in
//! place, hold packets across calls (out-of-order frees) and send fresh pool packets through the TX pipe.
//! Invariants: packets are conserved (delivered + dropped + queued = offered), none is delivered twice,
//! per-flow order is kept, every transmitted frame is byte-exact, bytes are conserved (Tail_NIC - Head_SW
//! is what the pipes still hold, zero after the drain), and nothing leaks (teardown, pool census).

#![cfg(not(loom))]

use ifaces::enso::{EnsoConfig, EnsoDesign, EnsoDriver, NotifyMode, Visit};
use ifaces::probe::NoProbe;
use ifaces::{
    Arena, BufLayout, CoreCtx, Design, DeviceSide, DriverSide, DropReason, Drops, Enso, EnsoChaotic, EnsoPerPacket,
    EnsoPrefetch, IfaceConfig, Packet, RingSize, SharedPool,
};
use proptest::prelude::*;
use std::collections::{HashMap, HashSet};
use std::sync::Arc;

fn small() -> IfaceConfig {
    IfaceConfig {
        cores: 2,
        ring: RingSize::new(16).unwrap(),
        tx_ring: RingSize::new(4).unwrap(),
        cache: 4,
        burst: 8,
        enso: EnsoConfig { pipe_size: 4096, pipes_per_core: 2, ..EnsoConfig::default() },
        ..IfaceConfig::default()
    }
}

/// A frame carrying its sequence number, its length varying with it, the rest a pattern.
fn frame(seq: u64) -> Vec<u8> {
    let len = 60 + (seq as usize * 37) % 260;
    let mut f = vec![seq as u8; len];
    f[..8].copy_from_slice(&seq.to_le_bytes());
    f
}

fn seq_of(f: &[u8]) -> u64 {
    u64::from_le_bytes(f[..8].try_into().unwrap())
}

#[derive(Debug, Clone)]
enum Step {
    /// A packet for this queue, with this RSS hash.
    Nic(u16, u32),
    /// Core polls with this burst; then drops, echoes or holds what it got (0, 1, 2), and sends a fresh
    /// pool packet if the flag is set.
    Core(usize, usize, u8, bool),
    /// The NIC transmits up to this many packets.
    Tx(usize),
}

fn steps() -> impl Strategy<Value = Vec<Step>> {
    let step = prop_oneof![
        4 => (0u16..2, 0u32..4).prop_map(|(q, h)| Step::Nic(q, h << 16)),
        3 => (0usize..2, 1usize..9, 0u8..3, proptest::bool::weighted(0.1)).prop_map(|(c, n, a, f)| Step::Core(c, n, a, f)),
        1 => (1usize..12).prop_map(Step::Tx),
    ];
    proptest::collection::vec(step, 0..400)
}

/// What the cores received and queued for transmission.
#[derive(Default)]
struct Seen {
    delivered: HashSet<u64>,
    /// Flow (queue, hash) of each packet offered, and the last sequence number delivered per flow.
    flow: HashMap<u64, (u16, u32)>,
    last: HashMap<(u16, u32), u64>,
    echoed: HashSet<u64>,
    fresh: u64,
}

/// Core `c` polls up to `n` packets, increments their last byte, then drops (0), echoes (1) or holds (2) them, sends what it held
/// before, and a fresh pool packet if `send_fresh`.
fn poll<'c>(
    c: usize,
    (n, action, send_fresh): (usize, u8, bool),
    d: &mut EnsoDriver,
    core: &'c CoreCtx,
    held: &mut Vec<Packet<'c>>,
    seen: &mut Seen,
) {
    let p = &mut NoProbe::default();
    let mut rx = vec![];
    d.rx_burst(p, core, &mut rx, n);
    for pkt in &rx {
        let s = seq_of(pkt);
        assert_eq!(&pkt[..], &frame(s)[..], "packet {s} corrupted in the pipe");
        assert!(seen.delivered.insert(s), "packet {s} delivered twice");
        let flow = seen.flow[&s];
        assert_eq!(usize::from(flow.0), c, "packet {s} on the wrong core");
        assert!(seen.last.insert(flow, s).is_none_or(|l| l < s), "flow {flow:?} out of order");
    }
    let mut tx = std::mem::take(held);
    for pkt in &mut rx {
        let l = pkt.len() - 1;
        pkt[l] = pkt[l].wrapping_add(1);
    }
    match action {
        0 => drop(rx),
        1 => tx.append(&mut rx),
        _ => held.append(&mut rx),
    }
    for pkt in &tx {
        seen.echoed.insert(seq_of(pkt));
    }
    if send_fresh {
        let mut pkt = core.alloc_packet(p).unwrap();
        pkt.set_len(100);
        pkt.fill(0xee);
        pkt[..8].copy_from_slice(&u64::MAX.to_le_bytes());
        tx.push(pkt);
        seen.fresh += 1;
    }
    d.tx_burst(p, core, &mut tx);
}

/// Run `steps` on variant `V` of Ensō and check every invariant.
fn run<const V: u8>(cfg: &IfaceConfig, steps: &[Step]) {
    let pool =
        SharedPool::new(Arc::new(Arena::new("t", EnsoDesign::<V>::buffers_needed(cfg), BufLayout::default()).unwrap()));
    let (mut dev, mut drivers) = EnsoDesign::<V>::build(cfg, &pool).unwrap();
    let cores: Vec<CoreCtx> = (0..cfg.cores).map(|c| CoreCtx::new(c as u16, cfg.cache, &pool)).collect();
    let mut held: Vec<Vec<Packet<'_>>> = vec![vec![], vec![]];
    let (mut offered, mut drops, mut seen) = (0u64, Drops::default(), Seen::default());
    let mut wire: Vec<Vec<u8>> = vec![];
    let p = &mut NoProbe::default();
    for s in steps {
        match *s {
            Step::Nic(q, h) => {
                seen.flow.insert(offered, (q, h));
                if let Err(r) = dev.rx(p, q, h, &frame(offered)) {
                    drops.add(r);
                }
                offered += 1;
            }
            Step::Core(c, n, a, f) => poll(c, (n, a, f), &mut drivers[c], &cores[c], &mut held[c], &mut seen),
            Step::Tx(b) => {
                dev.tx(p, &mut |f: &[u8]| wire.push(f.to_vec()), b);
            }
        }
        assert_eq!(offered, seen.delivered.len() as u64 + drops.total() + dev.occupancy().used, "conservation");
    }
    // Drain: hand back held packets, receive and drop everything, send everything.
    for _ in 0..1000 {
        for c in 0..cfg.cores {
            poll(c, (64, 0, false), &mut drivers[c], &cores[c], &mut held[c], &mut seen);
        }
        dev.tx(p, &mut |f: &[u8]| wire.push(f.to_vec()), usize::MAX);
        if dev.occupancy().used == 0 && dev.tx_pending() == 0 && held.iter().all(Vec::is_empty) {
            break;
        }
    }
    for c in 0..cfg.cores {
        poll(c, (64, 0, false), &mut drivers[c], &cores[c], &mut held[c], &mut seen);
    }
    assert_eq!(offered, seen.delivered.len() as u64 + drops.total(), "drained");
    assert_eq!(drops.get(DropReason::TooLong), 0);
    let tx_drops: f64 = drivers.iter().map(|d| d.metrics()["tx_full_drops"]).sum();
    let mut fresh_seen = 0;
    for f in &wire {
        let s = seq_of(f);
        if s == u64::MAX {
            assert!(f.len() == 100 && f[8..].iter().all(|&b| b == 0xee), "fresh packet corrupted");
            fresh_seen += 1;
            continue;
        }
        let mut want = frame(s);
        let l = want.len() - 1;
        want[l] = want[l].wrapping_add(1);
        assert_eq!(f, &want, "packet {s} corrupted on transmit");
        assert!(seen.echoed.remove(&s), "packet {s} transmitted twice or never sent");
    }
    assert_eq!(
        seen.echoed.len() as u64 + seen.fresh - fresh_seen,
        tx_drops as u64,
        "every sent packet left or was counted"
    );
    let (written, freed) = dev.pipe_bytes();
    assert_eq!(written, freed, "byte conservation: every byte written was freed");
    for (d, c) in drivers.iter_mut().zip(&cores) {
        d.teardown(c);
    }
    drop(held);
    drop(cores);
    assert_eq!(pool.arena().census()[0], pool.arena().count(), "pool buffers leaked");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn reactive(s in steps()) { run::<0>(&small(), &s) }

    #[test]
    fn per_packet(s in steps()) { run::<1>(&small(), &s) }

    #[test]
    fn prefetching(s in steps()) { run::<2>(&small(), &s) }

    #[test]
    fn chaotic(s in steps()) { run::<3>(&small(), &s) }

    #[test]
    fn round_robin(s in steps()) {
        let cfg = IfaceConfig { enso: EnsoConfig { visit: Visit::RoundRobin, ..small().enso }, ..small() };
        run::<0>(&cfg, &s)
    }

    #[test]
    fn round_robin_prefetching(s in steps()) {
        let cfg = IfaceConfig { enso: EnsoConfig { visit: Visit::RoundRobin, ..small().enso }, ..small() };
        run::<2>(&cfg, &s)
    }

    #[test]
    fn one_pipe_per_core(s in steps()) {
        let cfg = IfaceConfig { enso: EnsoConfig { pipes_per_core: 1, ..small().enso }, ..small() };
        run::<0>(&cfg, &s)
    }
}

#[test]
fn reactive_notifications_are_fewer_than_packets() {
    fn notifications<D: Design<Device = ifaces::enso::EnsoDevice>>() -> (f64, f64) {
        let cfg = IfaceConfig { cores: 1, enso: EnsoConfig { pipe_size: 1 << 16, ..EnsoConfig::default() }, ..small() };
        let pool = SharedPool::new(Arc::new(Arena::new("t", D::buffers_needed(&cfg), BufLayout::default()).unwrap()));
        let (mut dev, mut drivers) = D::build(&cfg, &pool).unwrap();
        let core = CoreCtx::new(0, cfg.cache, &pool);
        let p = &mut NoProbe::default();
        for round in 0..100u64 {
            for i in 0..8 {
                dev.rx(p, 0, (i as u32) << 16, &frame(round * 8 + i)).unwrap();
            }
            let mut rx = vec![];
            while drivers[0].rx_burst(p, &core, &mut rx, 32) > 0 {
                rx.clear();
            }
        }
        let m = dev.metrics();
        let n = drivers[0].metrics()["notifications_consumed"];
        drivers[0].teardown(&core);
        (m["notifications"], n)
    }
    let (reactive, _) = notifications::<Enso>();
    let (per_packet, _) = notifications::<EnsoPerPacket>();
    let (prefetch, consumed) = notifications::<EnsoPrefetch>();
    println!(
        "NIC notifications for 800 packets: reactive {reactive}, per packet {per_packet}, prefetching {prefetch} ({consumed} consumed)"
    );
    assert_eq!(per_packet, 800.0);
    assert!(reactive <= 200.0, "at most one per pipe per round");
    let _ = EnsoChaotic::NAME;
}

/// An app that visits its pipes in turn (Ensō's echo) takes one pipe's messages a visit, pipes 0, 1, 0,
/// 1; one that follows notifications takes every notified pipe's in one burst, in the notifications'
/// order. Either way a pipe's first message is notified as it lands and the others in answer to the free
/// of what software took (reactive notifications, Ensō §4.2, Figure 5).
#[test]
fn round_robin_takes_one_pipe_a_visit_in_turn() {
    let taken = |visit: Visit| {
        let cfg = IfaceConfig { cores: 1, enso: EnsoConfig { visit, ..small().enso }, ..small() };
        let pool =
            SharedPool::new(Arc::new(Arena::new("t", Enso::buffers_needed(&cfg), BufLayout::default()).unwrap()));
        let (mut dev, mut drivers) = Enso::build(&cfg, &pool).unwrap();
        let core = CoreCtx::new(0, cfg.cache, &pool);
        let p = &mut NoProbe::default();
        // Pipe 1 (hash 1 << 16) first, then pipe 0.
        for seq in 0..5 {
            dev.rx(p, 0, u32::from(seq < 3) << 16, &frame(seq)).unwrap();
        }
        let mut bursts = vec![];
        let mut rx = vec![];
        while drivers[0].rx_burst(p, &core, &mut rx, 32) > 0 {
            bursts.push(rx.iter().map(|pkt: &Packet<'_>| seq_of(pkt)).collect::<Vec<_>>());
            rx.clear();
        }
        drivers[0].teardown(&core);
        bursts
    };
    assert_eq!(taken(Visit::RoundRobin), [vec![3], vec![0], vec![4], vec![1, 2]]);
    assert_eq!(taken(Visit::Notified), [vec![0, 3], vec![4, 1, 2]]);
}

#[test]
fn bad_options_are_config_errors() {
    let pool = SharedPool::new(Arc::new(Arena::new("t", 64, BufLayout::default()).unwrap()));
    let with = |enso: EnsoConfig| IfaceConfig { enso, ..small() };
    let e = Enso::build(&with(EnsoConfig { pipe_size: 4096 + 64, ..small().enso }), &pool).unwrap_err();
    assert_eq!(e.option, "enso-pipe-size");
    assert!(e.to_string().contains("multiple of the page size"), "{e}");
    assert_eq!(
        Enso::build(&with(EnsoConfig { pipe_size: 100, ..small().enso }), &pool).unwrap_err().option,
        "enso-pipe-size"
    );
    assert_eq!(
        Enso::build(&with(EnsoConfig { pipes_per_core: 0, ..small().enso }), &pool).unwrap_err().option,
        "enso-pipes"
    );
    assert_eq!(
        Enso::build(&with(EnsoConfig { pipes_per_core: 17, ..small().enso }), &pool).unwrap_err().option,
        "enso-pipes"
    );
    let _ = NotifyMode::PerPacket;
}
