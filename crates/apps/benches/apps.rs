//! Cost of each app's `process` per packet, without a probe (the live engine's view): bursts of 32
//! prebuilt packets of about 64 B and 1500 B (Ethernet frame sizes, FCS included). Packets are copied into
//! buffers outside the timed part; freeing what the app sends is inside it, as in an engine's Tx path.
//!
//! Run: `cargo bench -p apps --bench apps`; ns/packet = time per burst / 32.

use apps::harness::{TestCore, frame};
use apps::{AnyApp, App, AppParams};
use criterion::{BatchSize, Criterion, Throughput};
use ifaces::NoProbe;
use traffic::kvs::client::{Client, ClientConfig};
use traffic::kvs::proto::Op;
use traffic::logs::{LineGen, packetize};

/// Packets per burst.
const BURST: usize = 32;

/// A burst of UDP frames of `len` bytes from 32 flows to spread-out destinations.
fn udp_burst(len: usize) -> Vec<Vec<u8>> {
    (0..BURST)
        .map(|i| {
            frame(
                &format!("10.0.{}.{}", i / 8, i + 1),
                1000 + i as u16,
                &format!("93.{}.7.{}", i * 7, i + 3),
                80,
                17,
                len,
            )
        })
        .collect()
}

/// The frames an app is measured on at frame size `len` (64 or 1518).
fn frames_for(app: &str, len: usize) -> Vec<Vec<u8>> {
    match app {
        "kvs" => {
            let (key_len, value_len) = if len <= 64 { (8, 8) } else { (128, 1024) };
            let cfg = ClientConfig { keys: 1000, key_len, value_len, get_ratio: 0.5, ..ClientConfig::default() };
            let mut c = Client::new(cfg, 1).expect("a valid client");
            // Store every key first, so GETs hit.
            let mut frames: Vec<Vec<u8>> = (0..1000).map(|k| c.frame(Op::Put, k, k)).collect();
            frames.extend((0..BURST).map(|_| c.next_frame()));
            frames
        }
        "logmon" => {
            let text = LineGen::new(7, 0.2).text(400);
            let tuple = wire::FiveTuple {
                src: "10.0.0.1".parse().unwrap(),
                dst: "10.0.0.2".parse().unwrap(),
                src_port: 1,
                dst_port: 514,
                proto: 17,
            };
            let chunk = len - 42 - wire::frame::FCS_LEN;
            packetize(text.as_bytes(), tuple, chunk).expect("UDP/IPv4 log frames").into_iter().take(BURST).collect()
        }
        _ => udp_burst(len),
    }
}

fn bench(c: &mut Criterion) {
    let core = TestCore::new();
    let mut group = c.benchmark_group("apps");
    group.throughput(Throughput::Elements(BURST as u64));
    for name in apps::APP_NAMES {
        for len in [64, 1518] {
            let mut app = AnyApp::new(name, &AppParams::new(), 0, 1).expect("default parameters are valid");
            let mut frames = frames_for(name, len);
            // Warm state (flow tables, the key-value store) with the setup frames and one pass.
            let burst = frames.split_off(frames.len().saturating_sub(BURST));
            for chunk in frames.chunks(BURST).chain([&burst[..]]) {
                core.run(&mut app, chunk);
            }
            let mut p = NoProbe::new();
            let mut tx = Vec::with_capacity(2 * BURST);
            group.bench_function(format!("{name}/{len}"), |b| {
                b.iter_batched_ref(
                    || {
                        let mut rx = Vec::with_capacity(BURST);
                        core.fill(&burst, &mut rx);
                        rx
                    },
                    |rx| {
                        app.process(&mut p, core.core(), rx, &mut tx);
                        tx.clear();
                    },
                    BatchSize::PerIteration,
                )
            });
        }
    }
    group.finish();
}

fn main() {
    let mut c = Criterion::default().configure_from_args();
    bench(&mut c);
    c.final_summary();
}
