//! Model tests of every sharing protocol under loom (`RUSTFLAGS="--cfg loom"`, see the crate README):
//! the NIC (the model's main thread) delivers packets while two cores receive, repost and free them,
//! on rings shrunk to a few entries. After the threads join, the invariants hold in every explored
//! interleaving: no packet delivered twice, conservation, per-core order where promised, and, after a
//! drain and teardown, every buffer free. The probe is a [`CountingProbe`], whose clock stands still: a
//! model must be deterministic, and wall-clock times would steer the wait histogram.

use crate::corec::Corec;
use crate::design::{Design, DeviceSide, DriverSide, IfaceConfig};
use crate::probe::{CountingProbe, NoProbe};
use crate::shring::dynamic::{Dynamic, RingSet};
use crate::sync::Arc;
use crate::{Arena, BatchedRxList, BufLayout, CoreCtx, RingSize, RxArr, RxBisect, RxList, SharedPool};
use loom::thread;
use std::collections::HashSet;

fn tiny(cores: usize, ring: u64) -> IfaceConfig {
    IfaceConfig {
        cores,
        share: cores,
        ring: RingSize::new(ring).unwrap(),
        tx_ring: RingSize::new(2).unwrap(),
        cache: 2,
        burst: 2,
        ax: 2,
        bx: RingSize::new(4).unwrap(),
        list_batch: 2,
        ..IfaceConfig::default()
    }
}

fn model(f: impl Fn() + Sync + Send + 'static) {
    let mut b = loom::model::Builder::new();
    if b.preemption_bound.is_none() {
        b.preemption_bound = Some(2);
    }
    b.check(f);
}

/// One NIC thread and one core echoing `packets` packets through design `D` under `cfg`, in every
/// interleaving loom explores (preemption bound 2): the NIC delivers them all, then transmits while the
/// core receives, reposts and sends. What leaves on the wire is what arrived, in order, and after the
/// core's teardown every buffer of the arena is free. The designs' own model tests run it on their
/// smallest rings.
pub(crate) fn echo<D: Design>(cfg: IfaceConfig, packets: u8)
where
    D::Driver: 'static,
{
    let mut builder = loom::model::Builder::new();
    builder.preemption_bound = Some(2);
    builder.check(move || {
        let pool =
            SharedPool::new(Arc::new(Arena::new("loom", D::buffers_needed(&cfg), BufLayout::default()).unwrap()));
        let (mut dev, mut drivers) = D::build(&cfg, &pool).unwrap();
        let mut drv = drivers.pop().unwrap();
        let pool2 = pool.clone();
        let core = thread::spawn(move || {
            let core = CoreCtx::new(0, 1, &pool2);
            let p = &mut NoProbe::new();
            let (mut got, mut rx) = (0, Vec::new());
            while got < usize::from(packets) {
                got += drv.rx_burst(p, &core, &mut rx, 2);
                drv.tx_burst(p, &core, &mut rx);
                thread::yield_now();
            }
            drop(rx);
            (drv, core)
        });
        let p = &mut NoProbe::new();
        let (mut sent, mut out) = (0, Vec::new());
        while sent < packets {
            match dev.rx(p, 0, 0, &[sent; 60]) {
                Ok(()) => sent += 1,
                Err(_) => thread::yield_now(),
            }
        }
        while out.len() < usize::from(packets) {
            dev.tx(p, &mut |f: &[u8]| out.push(f[0]), 2);
            thread::yield_now();
        }
        assert_eq!(out, (0..packets).collect::<Vec<_>>());
        let (mut drv, core) = core.join().unwrap();
        drv.teardown(&core);
        drop(core);
        assert_eq!(pool.arena().census()[0], pool.arena().count());
    });
}

fn frame(seq: u64) -> [u8; 64] {
    let mut f = [0u8; 64];
    f[..8].copy_from_slice(&seq.to_le_bytes());
    f
}

/// A design, its cores, and what the NIC offered and dropped.
struct Rig<D: Design> {
    pool: Arc<SharedPool>,
    dev: D::Device,
    cores: Vec<(D::Driver, CoreCtx)>,
    offered: u64,
    dropped: u64,
}

impl<D: Design> Rig<D>
where
    D::Driver: 'static,
{
    fn new(cfg: &IfaceConfig) -> Rig<D> {
        let arena = Arena::new("loom", D::buffers_needed(cfg), BufLayout::default()).unwrap();
        let pool = SharedPool::new(Arc::new(arena));
        let (dev, drivers) = D::build(cfg, &pool).unwrap();
        let cores =
            drivers.into_iter().enumerate().map(|(c, d)| (d, CoreCtx::new(c as u16, cfg.cache, &pool))).collect();
        Rig { pool, dev, cores, offered: 0, dropped: 0 }
    }

    fn send(&mut self, queue: u16) {
        let f = frame(self.offered);
        self.offered += 1;
        if self.dev.rx(&mut CountingProbe::default(), queue, 0, &f).is_err() {
            self.dropped += 1;
        }
    }

    /// Every core polls `polls` times on its own thread while the NIC sends `during` packets; then the
    /// invariants are checked and the run drained and torn down.
    fn run(mut self, polls: usize, during: &[u16], ordered: bool, mut nic: impl FnMut(&mut D::Device, usize)) {
        let handles: Vec<_> = self
            .cores
            .drain(..)
            .map(|(mut drv, core)| {
                thread::spawn(move || {
                    let mut got = vec![];
                    for _ in 0..polls {
                        got.extend(receive(&mut drv, &core, 2));
                    }
                    (drv, core, got)
                })
            })
            .collect();
        for (i, &q) in during.iter().enumerate() {
            self.send(q);
            nic(&mut self.dev, i);
        }
        let mut seen = HashSet::new();
        let mut delivered = 0;
        for h in handles {
            let (drv, core, got) = h.join().unwrap();
            if ordered {
                assert!(got.windows(2).all(|w| w[0] < w[1]), "out of order: {got:?}");
            }
            delivered += got.len() as u64;
            seen.extend(got);
            self.cores.push((drv, core));
        }
        assert_eq!(seen.len() as u64, delivered, "a packet was delivered twice");
        assert_eq!(self.offered, delivered + self.dropped + self.dev.occupancy().used, "conservation");
        for _ in 0..4 {
            for (drv, core) in &mut self.cores {
                for s in receive(drv, core, 8) {
                    assert!(seen.insert(s), "packet {s} delivered twice");
                }
            }
        }
        assert_eq!(self.dev.occupancy().used, 0, "not drained");
        assert_eq!(self.offered, seen.len() as u64 + self.dropped);
        for (drv, core) in &mut self.cores {
            drv.teardown(core);
        }
        let n = self.pool.arena().count();
        drop(self.cores);
        drop(self.dev);
        assert_eq!(self.pool.arena().census(), [n, 0, 0, 0], "buffers leaked");
    }
}

/// One receive call; the packets are freed on this core, and their sequence numbers returned.
fn receive<D: DriverSide>(drv: &mut D, core: &CoreCtx, max: usize) -> Vec<u64> {
    let mut out = vec![];
    drv.rx_burst(&mut CountingProbe::default(), core, &mut out, max);
    out.iter().map(|p| u64::from_le_bytes(p[..8].try_into().unwrap())).collect()
}

/// Two cores share a 4-entry ring: out-of-order reposting through the bitmap and the head advance.
#[test]
fn loom_rxarr_bitmap_and_head_advance() {
    model(|| {
        let mut rig = Rig::<RxArr>::new(&tiny(2, 4));
        for q in [0, 1, 0, 1] {
            rig.send(q);
        }
        rig.run(2, &[1, 0], true, |_, _| ());
    });
}

/// Two cores append to one free list while the NIC follows it.
#[test]
fn loom_rxlist_append() {
    model(|| {
        let mut rig = Rig::<RxList>::new(&tiny(2, 4));
        for q in [1, 0, 1] {
            rig.send(q);
        }
        rig.run(2, &[0, 1], true, |_, _| ());
    });
}

/// Two-packet descriptors: each core's mini head fills one while the other core reposts.
#[test]
fn loom_batched_rxlist_mini_heads() {
    model(|| {
        let mut rig = Rig::<BatchedRxList>::new(&tiny(2, 8));
        for q in [0, 1, 0, 1] {
            rig.send(q);
        }
        rig.run(2, &[0, 1], true, |_, _| ());
    });
}

/// Core 0 receives into core 1's Ax buffers (its own 2-entry Ax ring is exhausted) and frees them on its
/// own core, while core 1 re-arms its Ax ring from the notices and the NIC keeps delivering.
#[test]
fn loom_rxbisect_borrowed_buffers_and_cross_core_frees() {
    model(|| {
        let mut rig = Rig::<RxBisect>::new(&tiny(2, 4));
        for _ in 0..3 {
            rig.send(0);
        }
        rig.run(2, &[0, 1], true, |_, _| ());
    });
}

/// Two workers claim batches of one queue by CAS, publish READ_DONE and race for the tail try-lock.
#[test]
fn loom_corec_claim_read_done_and_tail() {
    model(|| {
        let mut rig = Rig::<Corec>::new(&tiny(2, 4));
        for q in [0, 0, 0] {
            rig.send(q);
        }
        rig.run(2, &[0, 0], false, |_, _| ());
    });
}

/// The NIC switches from private to shared rings mid-stream while a core receives: nothing lost or
/// duplicated, order kept.
#[test]
fn loom_dynamic_switch_with_drain() {
    model(|| {
        let mut rig = Rig::<Dynamic>::new(&tiny(1, 2));
        rig.send(0);
        rig.run(3, &[0, 0], true, |dev, i| {
            if i == 0 {
                assert!(dev.switch_to(RingSet::Shared));
            }
        });
    });
}
