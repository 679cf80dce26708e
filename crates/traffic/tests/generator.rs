//! Generator properties: determinism, rate accounting, popularity skew, steering, stamps, round trips.

use proptest::prelude::*;
use std::collections::HashMap;
use traffic::kvs::client::ClientConfig;
use traffic::kvs::proto::{Op, Request};
use traffic::{
    Burst, Container, FrameBuf, GenConfig, Generator, IpVersion, LoadSwitch, OutputFormat, Payload, Popularity, Rate,
    Resolution, SizeSpec, Steering, Stop, Trace,
};
use wire::frame::wire_bits;
use wire::{L4Proto, PacketView, Stamp};

fn cfg() -> GenConfig {
    GenConfig { flows: 64, size: SizeSpec::Imix, ..GenConfig::default() }
}

#[test]
fn same_seed_same_bytes_other_seed_other_bytes() {
    let a = Generator::new(&cfg()).unwrap().packets(500);
    let b = Generator::new(&cfg()).unwrap().packets(500);
    let c = Generator::new(&GenConfig { seed: 2, ..cfg() }).unwrap().packets(500);
    assert_eq!(a, b);
    assert_ne!(a, c);
}

#[test]
fn timestamps_follow_the_bit_rate_with_framing() {
    let mut g = Generator::new(&GenConfig { rate: Rate::Gbps(40.0), ..cfg() }).unwrap();
    let pkts = g.packets(10_000);
    let mut expect_ps = 0f64;
    for p in &pkts {
        assert!((p.ts_ns as f64 - expect_ps / 1000.0).abs() <= 1.0, "{} vs {}", p.ts_ns, expect_ps / 1000.0);
        expect_ps += wire_bits(p.frame_len()) as f64 * 1000.0 / 40.0;
    }
}

#[test]
fn timestamps_follow_the_packet_rate_and_bursts() {
    let mut g = Generator::new(&GenConfig { rate: Rate::Mpps(2.5), ..cfg() }).unwrap();
    let pkts = g.packets(1001);
    assert_eq!(pkts[1000].ts_ns, 400_000);
    let burst = Some(Burst { on_ns: 10_000, off_ns: 30_000 });
    let t =
        Generator::new(&GenConfig { rate: Rate::Mpps(1.0), burst, ..cfg() }).unwrap().to_trace(Stop::Duration(100_000));
    // 10 packets per 40 us period, over 100 us: periods at 0, 40 and 80 us.
    assert_eq!(t.packets.len(), 30);
    assert!(t.packets.iter().all(|p| p.ts_ns % 40_000 < 10_000));
}

#[test]
fn every_packet_parses_and_carries_its_stamp() {
    for (proto, ip) in [(L4Proto::Udp, IpVersion::V4), (L4Proto::Tcp, IpVersion::V4), (L4Proto::Udp, IpVersion::V6)] {
        let c = GenConfig { proto, ip, size: SizeSpec::Dc, ..cfg() };
        let mut g = Generator::new(&c).unwrap();
        let mut buf = vec![0u8; g.max_len()];
        for i in 0..200 {
            let m = g.next_packet(&mut buf);
            let v = PacketView::new_checked(&buf[..m.len]).unwrap();
            assert_eq!(Stamp::read(v.payload()), Some(Stamp { seq: i, tx_ns: m.ts_ns }));
            assert_eq!(*v.five_tuple(), g.flows().get(m.flow as usize).unwrap().tuple);
        }
    }
}

#[test]
fn configurations_that_cannot_carry_the_stamp_are_rejected() {
    let e = Generator::new(&GenConfig { proto: L4Proto::Tcp, ..GenConfig::default() }).unwrap_err();
    assert!(e.to_string().contains("at least 74 B"), "{e}");
    let e = Generator::new(&GenConfig { ip: IpVersion::V6, size: SizeSpec::Imix, ..cfg() }).unwrap_err();
    assert!(e.to_string().contains("IPv6"), "{e}");
}

#[test]
fn zipf_popularity_is_skewed() {
    let mut g = Generator::new(&GenConfig { popularity: Popularity::Zipf(1.2), ..cfg() }).unwrap();
    let mut buf = vec![0u8; g.max_len()];
    let mut counts = vec![0u32; 64];
    for _ in 0..50_000 {
        counts[g.next_packet(&mut buf).flow as usize] += 1;
    }
    // Rank 1 of Zipf(1.2) over 64 flows draws 1/H = 26 % of the packets; rank 2 2^-1.2 of that.
    let h: f64 = (1..=64).map(|k| (k as f64).powf(-1.2)).sum();
    assert!((f64::from(counts[0]) / 50_000.0 - 1.0 / h).abs() < 0.01, "{counts:?}");
    assert!((f64::from(counts[0]) / f64::from(counts[1]) - 2f64.powf(1.2)).abs() < 0.15);
}

/// T-Rex's `op = "inc"`: every flow in turn, the cycle repeating, in every packet's headers too.
#[test]
fn stepped_flows_come_in_turn() {
    let mut g = Generator::new(&GenConfig { popularity: Popularity::Stepped, ..cfg() }).unwrap();
    let mut buf = vec![0u8; g.max_len()];
    for i in 0..3 * 64 {
        let m = g.next_packet(&mut buf);
        assert_eq!(m.flow as usize, i % 64);
        let v = PacketView::new_checked(&buf[..m.len]).unwrap();
        assert_eq!(*v.five_tuple(), g.flows().get(i % 64).unwrap().tuple);
    }
}

/// Steering finds its flows through the NIC's table: with 12 queues a 128-entry and a 512-entry table
/// steer some hashes differently, and every flow of the target lands on queue 5 of the one it was given.
#[test]
fn steering_uses_the_nics_indirection_table() {
    let key = wire::Toeplitz::new(wire::RssKey::MICROSOFT);
    for entries in [128, 512] {
        let steering = Steering::Target { queues: 12, queue: 5, percent: 100.0, target_size: None, ports: 1 };
        let c = GenConfig { flows: 200, steering, reta: entries, ..GenConfig::default() };
        let g = Generator::new(&c).unwrap();
        let reta = wire::IndirectionTable::round_robin_sized(12, entries).unwrap();
        for f in g.flows().iter() {
            assert_eq!(reta.queue(key.hash_tuple(&f.tuple, wire::RssFields::IpPorts)), 5, "{entries} entries");
        }
    }
    let (small, large) =
        (wire::IndirectionTable::round_robin(12).unwrap(), wire::IndirectionTable::round_robin_sized(12, 512).unwrap());
    assert!((0..512).any(|h| small.queue(h) != large.queue(h)));
    let bad = GenConfig { reta: 100, ..GenConfig::default() };
    assert!(Generator::new(&bad).unwrap_err().to_string().contains("power-of-two"));
}

#[test]
fn target_queue_gets_its_share() {
    for percent in [0.0, 5.0, 30.0, 100.0] {
        let steering = Steering::Target { queues: 8, queue: 3, percent, target_size: Some(64), ports: 1 };
        let c = GenConfig { flows: 40, size: SizeSpec::Fixed(1518), steering, ..GenConfig::default() };
        let mut g = Generator::new(&c).unwrap();
        let mut buf = vec![0u8; g.max_len()];
        let n = 40_000;
        let (mut hits, mut per_queue) = (0, [0u32; 8]);
        for _ in 0..n {
            let m = g.next_packet(&mut buf);
            let q = g.flows().get(m.flow as usize).unwrap().queue;
            per_queue[usize::from(q)] += 1;
            if q == 3 {
                hits += 1;
                assert_eq!(m.frame_len(), 64);
            } else {
                assert_eq!(m.frame_len(), 1518);
            }
        }
        let got = 100.0 * f64::from(hits) / f64::from(n);
        assert!((got - percent).abs() < 1.0, "asked {percent} %, got {got} %");
        if percent < 100.0 {
            assert!(per_queue.iter().enumerate().all(|(q, &c)| q == 3 || c > 0), "{per_queue:?}");
        }
    }
}

/// "A target core per NIC" (shRing §5.3): with two ports of four queues, queues 1 and 5 are the targets
/// and each gets the share of its port's packets, so together they get the share of all of them.
#[test]
fn each_port_has_its_own_target_queue() {
    let percent = 30.0;
    let target = |queue, ports| Steering::Target { queues: 8, queue, percent, target_size: Some(64), ports };
    let steering = target(1, 2);
    let c = GenConfig { flows: 400, size: SizeSpec::Fixed(1518), steering, ..GenConfig::default() };
    let mut g = Generator::new(&c).unwrap();
    let mut buf = vec![0u8; g.max_len()];
    let n = 80_000;
    let mut per_queue = [0u32; 8];
    for _ in 0..n {
        let m = g.next_packet(&mut buf);
        let q = usize::from(g.flows().get(m.flow as usize).unwrap().queue);
        per_queue[q] += 1;
        assert_eq!(m.frame_len() == 64, q == 1 || q == 5, "queue {q}, {} B", m.frame_len());
    }
    let share = |q: usize| 100.0 * f64::from(per_queue[q]) / f64::from(n);
    for t in [1, 5] {
        assert!((share(t) - percent / 2.0).abs() < 1.0, "target {t}: {} % of all packets", share(t));
    }
    let rest = (100.0 - percent) / 6.0;
    assert!([0, 2, 3, 4, 6, 7].iter().all(|&q| (share(q) - rest).abs() < 1.0), "{per_queue:?}");
    let bad = |steering| GenConfig { flows: 400, steering, ..GenConfig::default() }.validate().unwrap_err().to_string();
    assert!(bad(target(1, 3)).contains("do not split evenly"));
    assert!(bad(target(4, 2)).contains("4 queues per port"));
}

/// shRing §5.3, Figure 13: an even load (each port's target queue with 1/4 of its port's packets, as
/// every other queue) turns pathological at 1 ms: the same flows, 30 % of the packets to the targets, in
/// 64 B frames.
#[test]
fn a_load_switch_changes_the_targets_share_and_sizes_from_its_time_on() {
    let steering = Steering::Target { queues: 8, queue: 1, percent: 25.0, target_size: None, ports: 2 };
    let at = LoadSwitch { at_ns: 1_000_000, percent: 30.0, target_size: Some(64) };
    let switch = Some(at);
    let c = GenConfig { flows: 400, size: SizeSpec::Fixed(1518), rate: Rate::Gbps(100.0), steering, switch, ..cfg() };
    let mut g = Generator::new(&c).unwrap();
    let mut buf = vec![0u8; g.max_len()];
    // Per phase: packets, those to a target queue, and the target's frame lengths seen.
    let mut phases = [(0u32, 0u32, Vec::new()), (0, 0, Vec::new())];
    let mut last = 0;
    while last < 3_000_000 {
        let m = g.next_packet(&mut buf);
        let target = [1, 5].contains(&g.flows().get(m.flow as usize).unwrap().queue);
        let p = &mut phases[usize::from(last >= 1_000_000)];
        p.0 += 1;
        if target {
            p.1 += 1;
            if !p.2.contains(&m.frame_len()) {
                p.2.push(m.frame_len());
            }
        } else {
            assert_eq!(m.frame_len(), 1518);
        }
        last = m.ts_ns;
    }
    let share = |p: &(u32, u32, Vec<usize>)| 100.0 * f64::from(p.1) / f64::from(p.0);
    assert!((share(&phases[0]) - 25.0).abs() < 2.0, "before: {} %", share(&phases[0]));
    assert!((share(&phases[1]) - 30.0).abs() < 1.0, "after: {} %", share(&phases[1]));
    assert_eq!((phases[0].2.as_slice(), phases[1].2.as_slice()), (&[1518][..], &[64][..]));
    let again = Generator::new(&c).unwrap().packets(30_000);
    assert_eq!(again, Generator::new(&c).unwrap().packets(30_000), "the same switch, the same bytes");
    let bad = |c: GenConfig| c.validate().unwrap_err().to_string();
    assert!(bad(GenConfig { steering: Steering::None, ..c.clone() }).contains("needs a target queue"));
    let all = Steering::Target { queues: 8, queue: 1, percent: 100.0, target_size: None, ports: 2 };
    assert!(bad(GenConfig { steering: all, ..c.clone() }).contains("between 0 and 100"));
    let over = Some(LoadSwitch { percent: 120.0, ..at });
    assert!(bad(GenConfig { switch: over, ..c.clone() }).contains("0..=100"));
    let tiny = Some(LoadSwitch { target_size: Some(40), ..at });
    assert!(bad(GenConfig { switch: tiny, ..c }).contains("out of range"));
}

#[test]
fn rss_even_puts_the_same_number_of_flows_on_each_queue() {
    for (flows, queues, ip) in [(64, 16, IpVersion::V4), (12, 3, IpVersion::V6), (128, 128, IpVersion::V4)] {
        let c = GenConfig { flows, ip, size: SizeSpec::Fixed(128), steering: Steering::RssEven { queues }, ..cfg() };
        let g = Generator::new(&c).unwrap();
        assert_eq!(g.flows().per_queue(), vec![flows / queues; queues]);
    }
}

#[test]
fn duration_stop_and_empirical_sizes_from_a_trace() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("src.pcap");
    let mut g = Generator::new(&GenConfig { size: SizeSpec::Imix, ..cfg() }).unwrap();
    g.write_trace(&path, Stop::Duration(1_000_000), OutputFormat::default(), |_, _| {}).unwrap();
    let t = Trace::read(&path).unwrap();
    assert!(t.packets.last().unwrap().ts_ns < 1_000_000);
    let c = GenConfig { size: SizeSpec::Pcap(path.clone()), ..cfg() };
    let sizes: HashMap<usize, usize> =
        Generator::new(&c).unwrap().packets(5000).iter().fold(HashMap::new(), |mut m, p| {
            *m.entry(p.frame_len()).or_default() += 1;
            m
        });
    let mut keys: Vec<_> = sizes.keys().copied().collect();
    keys.sort();
    assert_eq!(keys, [64, 570, 1518]);
}

fn format(pcapng: bool, nanos: bool) -> OutputFormat {
    OutputFormat {
        container: if pcapng { Container::PcapNg } else { Container::Pcap },
        resolution: if nanos { Resolution::Nano } else { Resolution::Micro },
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    /// generate → write → read back: identical bytes, and timestamps identical at the file's resolution.
    #[test]
    fn write_then_read_is_identical(seed: u64, pcapng: bool, nanos: bool, tcp: bool, v6: bool, n in 1usize..300) {
        let c = GenConfig {
            seed,
            flows: 5,
            size: SizeSpec::Dc,
            proto: if tcp { L4Proto::Tcp } else { L4Proto::Udp },
            ip: if v6 { IpVersion::V6 } else { IpVersion::V4 },
            rate: Rate::Gbps(3.3),
            ..GenConfig::default()
        };
        let mut trace = Generator::new(&c).unwrap().to_trace(Stop::Count(n as u64));
        for (i, p) in trace.packets.iter_mut().enumerate() {
            p.ts_ns += 1_700_000_000_000_000_000 + i as u64;
        }
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.trace");
        trace.write(&path, format(pcapng, nanos)).unwrap();
        let back = Trace::read(&path).unwrap();
        prop_assert_eq!(back.packets.len(), trace.packets.len());
        for (a, b) in trace.packets.iter().zip(&back.packets) {
            prop_assert_eq!(&a.data, &b.data);
            prop_assert_eq!(a.orig_len, b.orig_len);
            let want = if nanos { a.ts_ns } else { a.ts_ns / 1000 * 1000 };
            prop_assert_eq!(want, b.ts_ns);
        }
    }
}

/// `n` packets of `c`, the same bytes when generated again, each with valid checksums and its stamp (its
/// sequence number and send time) trailing the payload; each with its payload before the stamp.
fn stamped(c: &GenConfig, n: usize) -> Vec<(traffic::TracePacket, Vec<u8>)> {
    let a = Generator::new(c).unwrap().packets(n);
    assert_eq!(a, Generator::new(c).unwrap().packets(n), "same seed, same bytes");
    a.into_iter()
        .enumerate()
        .map(|(i, p)| {
            let v = PacketView::new_checked(&p.data[..]).unwrap();
            assert!(wire::rewrite::checksums_valid(&v));
            let (body, trailer) = v.payload().split_at(v.payload().len() - 16);
            let stamp = Stamp::read(trailer).unwrap();
            assert_eq!((stamp.seq, stamp.tx_ns), (i as u64, p.ts_ns));
            let body = body.to_vec();
            (p, body)
        })
        .collect()
}

#[test]
fn kvs_payload_carries_a_request_and_a_stamp_trailer() {
    let kvs = ClientConfig { keys: 100, get_ratio: 0.5, value_len: 100, ..ClientConfig::default() };
    let c = GenConfig { payload: Payload::Kvs(kvs.clone()), ..cfg() };
    let mut gets = 0;
    for (p, request) in stamped(&c, 400) {
        let r = Request::parse(&request).unwrap();
        gets += usize::from(r.op == Op::Get);
        assert!(p.data.len() + 4 >= 64);
        assert_eq!(p.data.len(), 42 + 12 + 8 + if r.op == Op::Put { 100 } else { 0 } + 16);
    }
    assert!((120..280).contains(&gets), "{gets}");
    let big = ClientConfig { key_len: 255, value_len: 1200, ..kvs };
    let err = Generator::new(&GenConfig { payload: Payload::Kvs(big), ..cfg() }).unwrap_err().to_string();
    assert!(err.contains("more than 1518"), "{err}");
}

/// Each log frame carries whole lines, as many as fit its drawn size, then the stamp.
#[test]
fn log_payload_carries_whole_lines_and_a_stamp_trailer() {
    let c = GenConfig {
        size: SizeSpec::Fixed(1518),
        payload: Payload::Logs(traffic::logs::LogConfig { attack_share: 0.5 }),
        ..cfg()
    };
    let mut lines = 0;
    for (p, text) in stamped(&c, 300) {
        let text = std::str::from_utf8(&text).unwrap();
        assert!(text.ends_with('\n') && text.lines().all(|l| l.starts_with("<38>")), "{text}");
        lines += text.lines().count();
        // At most a frame of 1518 B, and no line's room left over.
        assert!(p.data.len() + 4 <= 1518 && p.data.len() + 4 > 1518 - 200, "{}", p.data.len());
    }
    assert!(lines > 300 * 8, "{lines}");
    let small = GenConfig { size: SizeSpec::Fixed(128), ..c };
    let err = Generator::new(&small).unwrap_err().to_string();
    assert!(err.contains("cannot carry a log line"), "{err}");
}

/// MICA §4.1: each request reaches the core of its key's partition, whatever flow it travels on.
#[test]
fn kvs_requests_are_steered_to_their_partitions_core() {
    let kvs = ClientConfig { keys: 1000, partitions: 4, ..ClientConfig::default() };
    let mut g = Generator::new(&GenConfig { flows: 64, payload: Payload::Kvs(kvs), ..cfg() }).unwrap();
    let reta = wire::IndirectionTable::round_robin(4).unwrap();
    let key = wire::Toeplitz::new(wire::RssKey::MICROSOFT);
    for p in g.packets(500) {
        let v = PacketView::new_checked(&p.data[..]).unwrap();
        let req = Request::parse(v.payload()).unwrap();
        let core = reta.queue(key.hash_tuple(v.five_tuple(), wire::RssFields::IpPorts));
        let part = traffic::kvs::proto::partition(traffic::kvs::proto::key_hash(req.key), 4);
        assert_eq!(usize::from(core), part);
    }
    let one_flow = ClientConfig { keys: 1000, partitions: 4, ..ClientConfig::default() };
    let e = Generator::new(&GenConfig { flows: 1, payload: Payload::Kvs(one_flow), ..cfg() }).unwrap_err();
    assert!(e.to_string().contains("no flow reaches core"), "{e}");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    /// A reused frame buffer ([`Generator::next_frame`], restamped between packets as the simulator does)
    /// holds exactly the bytes [`Generator::next_packet`] writes into a fresh buffer, its
    /// [`FrameBuf::head`] is the frame up to where only zeros follow, and [`FrameBuf::put`] makes the
    /// frame again from it.
    #[test]
    fn reused_frame_buffer_holds_the_same_bytes(seed: u64, tcp: bool, v6: bool, size in 0usize..5, payload in 0usize..3) {
        let size = [SizeSpec::Imix, SizeSpec::Dc, SizeSpec::Fixed(1518), SizeSpec::Fixed(128), SizeSpec::Fixed(100)][size].clone();
        let payload = match payload {
            0 => Payload::Stamp,
            1 => Payload::Kvs(ClientConfig { keys: 100, get_ratio: 0.5, value_len: 300, ..ClientConfig::default() }),
            _ => Payload::Logs(traffic::logs::LogConfig::default()),
        };
        let c = GenConfig {
            seed,
            size,
            proto: if tcp { L4Proto::Tcp } else { L4Proto::Udp },
            ip: if v6 { IpVersion::V6 } else { IpVersion::V4 },
            payload,
            ..cfg()
        };
        let (Ok(mut a), Ok(mut b)) = (Generator::new(&c), Generator::new(&c)) else { return Ok(()) };
        let mut frame = FrameBuf::new(&a);
        let mut fresh = vec![0u8; a.max_len()];
        // Each frame put together again from its head, as the simulator's NIC does.
        let mut staged = FrameBuf::new(&a);
        for i in 0..300u64 {
            let meta = a.next_frame(&mut frame);
            let want = b.next_packet(&mut fresh);
            prop_assert_eq!(meta, want);
            prop_assert_eq!(frame.frame(), &fresh[..want.len]);
            let head_then_zeros = |f: &FrameBuf| {
                let (all, head) = (f.frame(), f.head());
                all.starts_with(head) && all[head.len()..].iter().all(|&b| b == 0)
            };
            prop_assert!(head_then_zeros(&frame));
            staged.put(frame.head(), frame.frame().len());
            prop_assert_eq!(staged.frame(), frame.frame());
            fresh.fill(0xa5);
            let at = PacketView::new_checked(frame.frame()).unwrap().payload_offset();
            if i % 3 == 0 {
                let stamp = Stamp { seq: meta.seq, tx_ns: meta.ts_ns + 7 };
                let had = frame.restamp(at, stamp);
                prop_assert!(had);
                let v = PacketView::new_checked(frame.frame()).unwrap();
                prop_assert_eq!(Stamp::find(v.payload()), Some(stamp));
                prop_assert!(head_then_zeros(&frame));
            }
        }
    }
}

/// [`FrameBuf::put`] rewrites what a longer head left behind.
#[test]
fn put_makes_each_frame_from_its_head() {
    let mut s = FrameBuf::new(&Generator::new(&cfg()).unwrap());
    let mut put = |head: &[u8], len| {
        s.put(head, len);
        s.frame().to_vec()
    };
    assert_eq!(put(&[1, 2, 3], 6), [1, 2, 3, 0, 0, 0]);
    assert_eq!(put(&[7], 4), [7, 0, 0, 0], "the longer head before it is gone");
    assert_eq!(put(&[5; 8], 8), [5; 8]);
    assert_eq!(put(&[], 9), [0; 9]);
}
