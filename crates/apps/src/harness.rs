//! Running apps outside an engine, for tests and benchmarks: a core with its own buffer pool, packets made
//! from frame bytes, and frames built from text addresses.

use crate::App;
use ifaces::nicmem::NicMem;
use ifaces::nicmem::kvs::complete_attached;
use ifaces::sync::Arc;
use ifaces::{Arena, BufLayout, CoreCtx, NoProbe, Packet, Probe, SharedPool};
use wire::{FiveTuple, FrameSpec, build_frame};

/// Buffers in a test core's pool: enough for a few bursts of requests and responses.
const BUFFERS: u32 = 1024;

/// A core with a private pool of 2 KiB buffers, and NIC memory if the app needs it.
#[derive(Debug)]
pub struct TestCore {
    core: CoreCtx,
    nicmem: Option<Arc<NicMem>>,
}

impl Default for TestCore {
    fn default() -> Self {
        TestCore::new()
    }
}

impl TestCore {
    /// A core (id 0) over a fresh pool.
    pub fn new() -> TestCore {
        TestCore::with_id(0)
    }

    /// A core with id `id` over a fresh pool.
    pub fn with_id(id: u16) -> TestCore {
        let arena = Arena::new("apps-harness", BUFFERS, BufLayout::default()).expect("a small arena allocates");
        let pool = SharedPool::new(Arc::new(arena));
        TestCore { core: CoreCtx::new(id, 64, &pool), nicmem: None }
    }

    /// A core (id 0) with `bytes` of NIC memory, given to apps with [`App::bind_nicmem`].
    pub fn with_nicmem(bytes: usize) -> TestCore {
        let nicmem = NicMem::new(bytes, BufLayout::PACKED_2K).expect("a NIC memory of whole buffers");
        TestCore { nicmem: Some(nicmem), ..TestCore::new() }
    }

    /// The NIC memory, if any.
    pub fn nicmem(&self) -> Option<&Arc<NicMem>> {
        self.nicmem.as_ref()
    }

    /// The core.
    pub fn core(&self) -> &CoreCtx {
        &self.core
    }

    /// Packets holding copies of `frames` (cut to the buffer size), appended to `out`.
    pub fn fill<'c>(&'c self, frames: &[Vec<u8>], out: &mut Vec<Packet<'c>>) {
        let mut p = NoProbe::new();
        for f in frames {
            let mut pkt = self.core.alloc_packet(&mut p).expect("the harness pool holds a burst");
            pkt.set_len(f.len());
            let n = pkt.len();
            pkt.copy_from_slice(&f[..n]);
            out.push(pkt);
        }
    }

    /// Run `app` once over `frames` with probe `p`; returns the bytes of the packets it sends (both
    /// segments), completing their transmission at once.
    pub fn run_with<A: App, P: Probe>(&self, app: &mut A, p: &mut P, frames: &[Vec<u8>]) -> Vec<Vec<u8>> {
        let (mut rx, mut tx) = (Vec::new(), Vec::new());
        self.fill(frames, &mut rx);
        app.process(p, &self.core, &mut rx, &mut tx);
        let sent = tx.iter().map(|pkt| [&pkt[..], pkt.tail().unwrap_or_default()].concat()).collect();
        drop(tx);
        let mut returned = Vec::new();
        self.core.take_returned(&mut returned);
        for t in returned {
            let nicmem = self.nicmem.as_ref().expect("only NIC memory segments are lent to apps");
            assert!(complete_attached(nicmem, t), "a segment the harness did not lend");
        }
        sent
    }

    /// Run `app` once over `frames` without a probe; returns the bytes of the packets it sends.
    pub fn run<A: App>(&self, app: &mut A, frames: &[Vec<u8>]) -> Vec<Vec<u8>> {
        self.run_with(app, &mut NoProbe::new(), frames)
    }
}

/// A UDP (17) or TCP (6) frame of `len` bytes (FCS included) between text addresses, payload zeroed.
pub fn frame(src: &str, src_port: u16, dst: &str, dst_port: u16, proto: u8, len: usize) -> Vec<u8> {
    let tuple = FiveTuple {
        src: src.parse().expect("a valid source address"),
        dst: dst.parse().expect("a valid destination address"),
        src_port,
        dst_port,
        proto,
    };
    build_frame(&FrameSpec { tuple, frame_len: len }, &[]).expect("a buildable frame")
}
