//! privRing: the receive interface of today's NICs and the baseline of papers 000-002 (shRing §2.1,
//! rxBisect §2): one Rx descriptor ring and one completion ring per core, pre-filled with buffers. The NIC
//! writes each packet into the buffer of the next descriptor of the ring RSS chose and posts a
//! completion; the core processes completions in order, reposts a fresh buffer in each consumed slot and
//! rings the doorbells once per burst. A "small privRing" (shRing §3) is this design with a small `--ring`.

use crate::arena::{Arena, BufId, Owner};
use crate::core::CoreCtx;
use crate::cqring::{CqConsumer, CqProducer, completion_ring};
use crate::desc::{DescPrefetch, DescRing};
use crate::design::{ConfigError, Design, DeviceSide, DriverSide, DropReason, IfaceConfig, Metrics, Occupancy};
use crate::packet::Packet;
use crate::pool::{PoolCache, SharedPool};
use crate::probe::{Access, NoProbe, Phase, Probe, in_phase};
use crate::sync::{Arc, Ordering};
use crate::txring::{TxDevice, TxDriver, tx_ring};
use wire::QueueId;

/// The privRing design.
#[derive(Debug)]
pub struct PrivRing;

/// Encode a completion: descriptor slot, packet length and RSS hash.
#[inline]
fn cqe(slot: usize, len: usize, hash: u32) -> [u64; 3] {
    [slot as u64 | (len as u64) << 32, u64::from(hash), 0]
}

/// One core's rings as the NIC sees them.
#[derive(Debug)]
struct DeviceQueue {
    ring: Arc<DescRing>,
    head: u32,
    prefetch: DescPrefetch,
    cq: CqProducer,
    tx: TxDevice,
}

/// privRing's NIC side.
#[derive(Debug)]
pub struct PrivRingDevice {
    arena: Arc<Arena>,
    queues: Vec<DeviceQueue>,
    next_tx: usize,
}

/// privRing's driver side for one core.
#[derive(Debug)]
pub struct PrivRingDriver {
    ring: Arc<DescRing>,
    tail: u32,
    shadow: Vec<BufId>,
    cq: CqConsumer,
    tx: TxDriver,
    alloc_failures: u64,
}

impl Design for PrivRing {
    const NAME: &'static str = "privring";
    type Device = PrivRingDevice;
    type Driver = PrivRingDriver;

    fn buffers_needed(cfg: &IfaceConfig) -> u32 {
        let per_core = cfg.ring.len() + cfg.tx_ring.len() + cfg.cache * 3 / 2 + 2 * cfg.burst;
        (cfg.cores * per_core + cfg.burst) as u32
    }

    fn build(cfg: &IfaceConfig, pool: &Arc<SharedPool>) -> Result<(PrivRingDevice, Vec<PrivRingDriver>), ConfigError> {
        cfg.validate_common()?;
        let arena = pool.arena().clone();
        let mut queues = Vec::with_capacity(cfg.cores);
        let mut drivers = Vec::with_capacity(cfg.cores);
        for core in 0..cfg.cores {
            let ring = Arc::new(DescRing::new(cfg.ring));
            let mut cache = PoolCache::new(core as u16, 0, pool.clone());
            let p = &mut NoProbe::default();
            let shadow = (0..cfg.ring.len())
                .map(|slot| {
                    let id = cache.alloc(p).ok_or_else(|| {
                        ConfigError::new("ring", format!("the buffer pool is too small to fill {} rings", cfg.cores))
                    })?;
                    arena.transfer(id, Owner::Core, Owner::Posted);
                    ring.post(p, slot, arena.data_addr(id), arena.layout().data_room() as u32);
                    Ok(id)
                })
                .collect::<Result<Vec<_>, ConfigError>>()?;
            ring.doorbell.ring(p, cfg.ring.get());
            let (cq_dev, cq_drv) = completion_ring(cfg.ring);
            let (tx_dev, tx_drv) = tx_ring(cfg.tx_ring, cfg.prefetch);
            queues.push(DeviceQueue {
                ring: ring.clone(),
                head: 0,
                prefetch: DescPrefetch::new(cfg.prefetch),
                cq: cq_dev,
                tx: tx_dev,
            });
            drivers.push(PrivRingDriver {
                ring,
                tail: cfg.ring.get(),
                shadow,
                cq: cq_drv,
                tx: tx_drv,
                alloc_failures: 0,
            });
        }
        Ok((PrivRingDevice { arena, queues, next_tx: 0 }, drivers))
    }
}

impl DeviceSide for PrivRingDevice {
    #[inline]
    fn rx<P: Probe>(&mut self, p: &mut P, queue: QueueId, hash: u32, frame: &[u8]) -> Result<(), DropReason> {
        let q = &mut self.queues[usize::from(queue)];
        let tail = q.ring.doorbell.read();
        if q.head == tail {
            return Err(DropReason::NoRxDescriptor);
        }
        if q.cq.is_full() {
            return Err(DropReason::CompletionRingFull);
        }
        let d = q.prefetch.get(p, &q.ring, q.head, tail);
        let (addr, cap) = (d.addr.load(Ordering::Relaxed) as usize, d.cap.load(Ordering::Relaxed) as usize);
        if frame.len() > cap {
            return Err(DropReason::TooLong);
        }
        let id = self.arena.id_of(addr).expect("privRing descriptor points outside the buffer arena");
        p.touch(addr, frame.len(), Access::Write);
        self.arena.dma_write(id, 0, frame);
        let slot = q.ring.size().slot(q.head);
        q.cq.push(p, cqe(slot, frame.len(), hash));
        q.head = q.head.wrapping_add(1);
        Ok(())
    }

    fn tx<P: Probe, W: FnMut(&[u8])>(&mut self, p: &mut P, wire: &mut W, budget: usize) -> usize {
        let n = self.queues.len();
        let mut sent = 0;
        for i in 0..n {
            if sent >= budget {
                break;
            }
            let q = (self.next_tx + i) % n;
            sent += self.queues[q].tx.transmit(p, &self.arena, wire, budget - sent);
        }
        self.next_tx = (self.next_tx + 1) % n;
        sent
    }

    fn occupancy(&self) -> Occupancy {
        self.queues.iter().fold(Occupancy::default(), |o, q| Occupancy {
            used: o.used + u64::from(q.cq.occupancy()),
            capacity: o.capacity + u64::from(q.ring.size().get()),
        })
    }

    fn tx_pending(&self) -> u64 {
        self.queues.iter().map(|q| u64::from(q.tx.pending())).sum()
    }

    fn metrics(&self) -> Metrics {
        let (mut fetches, mut hits) = (0, 0);
        for q in &self.queues {
            fetches += q.prefetch.stats().fetches;
            hits += q.prefetch.stats().hits;
        }
        Metrics::from([("desc_fetches".into(), fetches as f64), ("desc_prefetch_hits".into(), hits as f64)])
    }
}

impl DriverSide for PrivRingDriver {
    #[inline]
    fn rx_burst<'c, P: Probe>(&mut self, p: &mut P, core: &'c CoreCtx, out: &mut Vec<Packet<'c>>, max: usize) -> usize {
        in_phase(p, Phase::Rx, |p| {
            let arena = core.arena();
            let size = self.ring.size();
            let mut n = 0;
            while n < max && self.cq.ready() {
                // Allocate the replacement first, so a failed allocation leaves the packet in the ring
                // (as DPDK drivers do on `rx_mbuf_alloc_failed`).
                let Some(fresh) = core.alloc(p) else {
                    self.alloc_failures += 1;
                    break;
                };
                let [w0, _hash, _] = self.cq.poll(p).expect("a ready completion");
                let slot = (w0 & 0xffff_ffff) as usize;
                let pkt = Packet::reclaim(core, self.shadow[slot], (w0 >> 32) as u32);
                p.touch(pkt.meta_addr(), 64, Access::Write);
                out.push(pkt);
                arena.transfer(fresh, Owner::Core, Owner::Posted);
                self.ring.post(p, slot, arena.data_addr(fresh), arena.layout().data_room() as u32);
                self.shadow[slot] = fresh;
                n += 1;
            }
            if n > 0 {
                debug_assert_eq!(size.slot(self.tail), size.slot(self.cq.consumed().wrapping_sub(n as u32)));
                self.cq.ring_doorbell(p);
                self.tail = self.tail.wrapping_add(n as u32);
                self.ring.doorbell.ring(p, self.tail);
            }
            n
        })
    }

    #[inline]
    fn tx_burst<'c, P: Probe>(&mut self, p: &mut P, core: &'c CoreCtx, pkts: &mut Vec<Packet<'c>>) -> usize {
        self.tx.send(p, core, pkts)
    }

    fn teardown(&mut self, core: &CoreCtx) {
        let p = &mut NoProbe::default();
        self.tx.reclaim(p, core);
        for &id in &self.shadow {
            match core.arena().owner(id) {
                Owner::Posted => core.arena().transfer(id, Owner::Posted, Owner::Core),
                other => panic!("privRing teardown: buffer {} is {other:?}; the run did not drain", id.0),
            }
            core.free(p, id);
        }
        self.shadow.clear();
    }

    fn metrics(&self) -> Metrics {
        Metrics::from([
            ("alloc_failures".into(), self.alloc_failures as f64),
            ("tx_full_drops".into(), self.tx.full_drops() as f64),
            (
                "doorbells".into(),
                (self.cq.doorbell_writes() + self.ring.doorbell.writes() + self.tx.doorbell_writes()) as f64,
            ),
        ])
    }
}
