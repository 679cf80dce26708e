//! privRing: the receive interface of today's NICs and the baseline of papers 000-002 (shRing §2.1,
//! rxBisect §2): one Rx descriptor ring and one completion ring per core, pre-filled with buffers. The NIC
//! writes each packet into the buffer of the next descriptor of the ring RSS chose and posts a
//! completion; the core processes completions in order, reposts a fresh buffer in each consumed slot and
//! rings the doorbells once per burst, or, as a poll-mode driver's vector path does, leaves consumed slots
//! empty until a bulk refill at the start of a later burst ([`crate::refill`]). On an Intel NIC (write-back
//! completions, [`CqFormat::Wb32`]) the driver does as ice and i40e do: the completions are the descriptor
//! ring itself, with no consumer register, and the scalar path writes the RX tail once it holds more than
//! [`INTEL_RX_FREE_THRESH`] reposted descriptors (`ice_recv_pkts`, `i40e_recv_pkts`). A "small privRing"
//! (shRing §3) is this design with a small `--ring`.

use crate::arena::{Arena, BufId};
use crate::core::CoreCtx;
use crate::cqring::{
    Completion, CqConsumer, CqFormat, CqProducer, Mini, close_all, completion_ring, compression_metrics, expire_all,
};
use crate::desc::{DescPrefetch, DescRing};
use crate::design::{ConfigError, Design, DeviceSide, DriverSide, DropReason, IfaceConfig, Metrics, Occupancy};
use crate::packet::Packet;
use crate::pool::{PoolCache, SharedPool};
use crate::probe::{NoProbe, Phase, Probe, in_phase};
use crate::refill::{AtRingEnd, RxRefill};
use crate::slots;
use crate::sync::Arc;
use crate::txring::TxDriver;
use crate::txset::TxSet;
use wire::QueueId;

/// The privRing design.
#[derive(Debug)]
pub struct PrivRing;

/// Reposted descriptors an Intel PMD holds before it writes the RX tail: DPDK's
/// `ICE_DEFAULT_RX_FREE_THRESH` and `I40E_DEFAULT_RX_FREE_THRESH`, 32.
pub const INTEL_RX_FREE_THRESH: u32 = 32;

/// One core's receive rings as the NIC sees them.
#[derive(Debug)]
struct DeviceQueue {
    ring: Arc<DescRing>,
    head: u32,
    prefetch: DescPrefetch,
    cq: CqProducer,
}

/// privRing's NIC side.
#[derive(Debug)]
pub struct PrivRingDevice {
    arena: Arc<Arena>,
    queues: Vec<DeviceQueue>,
    tx: TxSet,
}

/// privRing's driver side for one core.
#[derive(Debug)]
pub struct PrivRingDriver {
    ring: Arc<DescRing>,
    /// Buffers posted so far (free-running).
    tail: u32,
    /// The tail as last written to the ring's doorbell.
    rung: u32,
    /// Reposted descriptors held before the tail is written: 0 (every burst), or
    /// [`INTEL_RX_FREE_THRESH`] on an Intel NIC, which also has no completion register.
    free_thresh: u32,
    cq: CqConsumer,
    tx: TxDriver,
    refill: RxRefill,
    /// A bulk refill's buffers, taken all or none (`rte_mempool_get_bulk`).
    fresh: Vec<BufId>,
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
        cfg.rx_refill.check(cfg.ring.get()).map_err(|e| ConfigError::new("rx-refill", e))?;
        let free_thresh = if matches!(cfg.cq, CqFormat::Wb32 { .. }) { INTEL_RX_FREE_THRESH } else { 0 };
        if free_thresh > 0 && cfg.ring.get() <= free_thresh {
            return Err(ConfigError::new(
                "ring",
                format!(
                    "an Intel NIC's driver holds up to {INTEL_RX_FREE_THRESH} reposted descriptors before it writes \
                     the RX tail (rx_free_thresh), so DPDK's ice and i40e need a larger ring; got {}",
                    cfg.ring
                ),
            ));
        }
        let (tx, tx_drivers) = TxSet::new(cfg);
        let mut queues = Vec::with_capacity(cfg.cores);
        let mut drivers = Vec::with_capacity(cfg.cores);
        for (core, tx) in tx_drivers.into_iter().enumerate() {
            let ring = Arc::new(DescRing::new(cfg.ring));
            slots::fill(&ring, cfg.ring.len(), &mut PoolCache::new(core as u16, 0, pool.clone()), "ring")?;
            ring.doorbell.ring(&mut NoProbe::default(), cfg.ring.get());
            let (cq_dev, cq) = completion_ring(cfg.ring, cfg.cq);
            queues.push(DeviceQueue {
                ring: ring.clone(),
                head: 0,
                prefetch: DescPrefetch::new(cfg.prefetch),
                cq: cq_dev,
            });
            drivers.push(PrivRingDriver {
                ring,
                tail: cfg.ring.get(),
                rung: cfg.ring.get(),
                free_thresh,
                cq,
                tx,
                refill: cfg.rx_refill,
                fresh: Vec::new(),
                alloc_failures: 0,
            });
        }
        Ok((PrivRingDevice { arena: pool.arena().clone(), queues, tx }, drivers))
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
        slots::dma_into(p, &self.arena, d, frame)?;
        let (slot, len) = (q.ring.size().slot(q.head), frame.len());
        // The descriptor is implicit (completions follow the ring in order), so it may be a mini-CQE.
        q.cq.push(p, [slot as u64 | (len as u64) << 32, u64::from(hash), 0], Some(Mini { len: len as u32, hash }));
        q.head = q.head.wrapping_add(1);
        expire_all(p, self.queues.iter_mut().map(|q| &mut q.cq));
        Ok(())
    }

    fn idle<P: Probe>(&mut self, p: &mut P) {
        close_all(p, self.queues.iter_mut().map(|q| &mut q.cq));
    }

    fn tx<P: Probe, W: FnMut(&[u8])>(&mut self, p: &mut P, wire: &mut W, budget: usize) -> usize {
        self.tx.transmit(p, &self.arena, wire, budget)
    }

    fn occupancy(&self) -> Occupancy {
        self.queues.iter().fold(Occupancy::default(), |o, q| Occupancy {
            used: o.used + u64::from(q.cq.queued()),
            capacity: o.capacity + u64::from(q.ring.size().get()),
        })
    }

    fn tx_pending(&self) -> u64 {
        self.tx.pending()
    }

    fn metrics(&self) -> Metrics {
        let (mut fetches, mut hits) = (0, 0);
        for q in &self.queues {
            fetches += q.prefetch.stats().fetches;
            hits += q.prefetch.stats().hits;
        }
        let mut m =
            Metrics::from([("desc_fetches".into(), fetches as f64), ("desc_prefetch_hits".into(), hits as f64)]);
        m.extend(compression_metrics(self.queues.iter().map(|q| &q.cq)));
        m
    }
}

impl PrivRingDriver {
    /// A vector path's bulk refill at the start of a burst ([`crate::refill`]: mlx5's
    /// `mlx5_rx_replenish_bulk_mbuf`, i40e's `i40e_rxq_rearm`): the empty slots the policy says are due get
    /// fresh buffers, all or none, as `rte_mempool_get_bulk` hands them, and one doorbell.
    fn replenish<P: Probe>(&mut self, p: &mut P, core: &CoreCtx) {
        let size = self.ring.size();
        let empty = self.cq.consumed().wrapping_add(size.get()).wrapping_sub(self.tail);
        let due = self.refill.due(size.get(), size.slot(self.tail) as u32, empty);
        if due == 0 {
            return;
        }
        for _ in 0..due {
            match core.alloc(p) {
                Some(id) => self.fresh.push(id),
                None => {
                    for id in self.fresh.drain(..) {
                        core.free(p, id);
                    }
                    self.alloc_failures += 1;
                    return;
                }
            }
        }
        for (k, id) in self.fresh.drain(..).enumerate() {
            slots::post(p, &self.ring, size.slot(self.tail.wrapping_add(k as u32)), id, core);
        }
        self.tail = self.tail.wrapping_add(due);
        self.ring_tail(p);
    }

    /// Write the RX tail, unless fewer than `free_thresh` reposted descriptors are held since the last write.
    #[inline]
    fn post_tail<P: Probe>(&mut self, p: &mut P) {
        if self.tail.wrapping_sub(self.rung) > self.free_thresh {
            self.ring_tail(p);
        }
    }

    #[inline]
    fn ring_tail<P: Probe>(&mut self, p: &mut P) {
        self.ring.doorbell.ring(p, self.tail);
        self.rung = self.tail;
    }
}

impl DriverSide for PrivRingDriver {
    #[inline]
    fn rx_burst<'c, P: Probe>(&mut self, p: &mut P, core: &'c CoreCtx, out: &mut Vec<Packet<'c>>, max: usize) -> usize {
        in_phase(p, Phase::Rx, |p| {
            let (size, per_slot) = (self.ring.size(), self.refill.per_slot());
            if !per_slot {
                self.replenish(p, core);
            }
            let mut n = 0;
            while n < max && self.cq.ready() {
                // A vector path's burst that has wrapped refills again first, or ends (`crate::refill`).
                if n > 0 && size.slot(self.cq.consumed()) == 0 {
                    match self.refill.at_ring_end() {
                        AtRingEnd::Continue => {}
                        AtRingEnd::Refill => self.replenish(p, core),
                        AtRingEnd::Stop => break,
                    }
                }
                // Per slot, allocate the replacement first, so a failed allocation leaves the packet in the
                // ring (as DPDK drivers do on `rx_mbuf_alloc_failed`).
                let fresh = if per_slot {
                    let Some(fresh) = core.alloc(p) else {
                        self.alloc_failures += 1;
                        break;
                    };
                    Some(fresh)
                } else {
                    None
                };
                let at = size.slot(self.cq.consumed());
                let (slot, len) = match self.cq.poll(p).expect("a ready completion") {
                    Completion::Full([w0, _hash, _]) => ((w0 & 0xffff_ffff) as usize, (w0 >> 32) as u32),
                    Completion::Mini(m) => (at, m.len),
                };
                match fresh {
                    Some(fresh) => slots::swap(p, &self.ring, slot, len, fresh, core, out),
                    None => slots::take(p, &self.ring, slot, len, core, out),
                }
                n += 1;
            }
            if n > 0 {
                if self.free_thresh > 0 {
                    self.cq.release();
                } else {
                    self.cq.ring_doorbell(p);
                }
                if per_slot {
                    debug_assert_eq!(size.slot(self.tail), size.slot(self.cq.consumed().wrapping_sub(n as u32)));
                    self.tail = self.tail.wrapping_add(n as u32);
                    self.post_tail(p);
                }
            }
            n
        })
    }

    #[inline]
    fn tx_burst<'c, P: Probe>(&mut self, p: &mut P, core: &'c CoreCtx, pkts: &mut Vec<Packet<'c>>) -> usize {
        self.tx.send(p, core, pkts)
    }

    fn teardown(&mut self, core: &CoreCtx) {
        self.tx.teardown(core);
        let (size, consumed) = (self.ring.size(), self.cq.consumed());
        let posted = (0..self.tail.wrapping_sub(consumed)).map(|k| size.slot(consumed.wrapping_add(k)));
        slots::release(&self.ring, posted, core, "privRing");
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

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use crate::arena::BufLayout;
    use crate::cqring::CqFormat;
    use crate::design::Drops;
    use crate::probe::CountingProbe;
    use crate::ringsize::RingSize;
    use proptest::prelude::*;

    fn small(cores: usize) -> IfaceConfig {
        IfaceConfig {
            cores,
            ring: RingSize::new(8).unwrap(),
            tx_ring: RingSize::new(8).unwrap(),
            cache: 4,
            burst: 4,
            ..IfaceConfig::default()
        }
    }

    /// privRing on one core of `cfg`: its device, its driver, the core and the buffer pool.
    fn one_core(cfg: &IfaceConfig) -> (PrivRingDevice, Vec<PrivRingDriver>, CoreCtx, Arc<SharedPool>) {
        let pool =
            SharedPool::new(Arc::new(Arena::new("t", PrivRing::buffers_needed(cfg), BufLayout::default()).unwrap()));
        let (dev, drivers) = PrivRing::build(cfg, &pool).unwrap();
        (dev, drivers, CoreCtx::new(0, cfg.cache, &pool), pool)
    }

    /// One step of a single-threaded schedule of NIC and core actions.
    #[derive(Debug, Clone)]
    enum Step {
        Arrive(u16),
        Poll(usize),
        Transmit(usize),
    }

    fn step() -> impl Strategy<Value = Step> {
        prop_oneof![
            (0u16..3).prop_map(Step::Arrive),
            (0usize..3).prop_map(Step::Poll),
            (1usize..6).prop_map(Step::Transmit),
        ]
    }

    proptest! {
        /// Random schedules keep every invariant: conservation with drop reasons, no buffer leaked or
        /// owned twice (the arena panics on a bad hand-off), nothing delivered twice, per-queue order.
        /// In every completion format; with compression, under PCIe back pressure (so that mini-CQE
        /// arrays are held, written and consumed) and with the NIC's clock moving (so that holds end);
        /// with every refill policy (a bulk one leaves slots empty at teardown).
        #[test]
        fn schedules_keep_the_invariants(
            steps in proptest::collection::vec(step(), 0..300),
            format in 0usize..3,
            refill in 0usize..3,
        ) {
            let cq = [CqFormat::Cqe64 { compress: false }, CqFormat::Cqe64 { compress: true }, CqFormat::Wb32 { packing: crate::wbpack::WbPacking::NONE }][format];
            let (rx_refill, ring) = [(RxRefill::PerSlot, 8), (RxRefill::Intel { chunk: 2 }, 8), (RxRefill::Mlx5, 32)][refill];
            // An Intel ring holds up to 32 reposted descriptors before its tail is written: more than that.
            let ring = if matches!(cq, CqFormat::Wb32 { .. }) { 64 } else { ring };
            let cfg = IfaceConfig { cq, rx_refill, ring: RingSize::new(ring).unwrap(), ..small(3) };
            let arena = Arena::new("t", PrivRing::buffers_needed(&cfg), BufLayout::default()).unwrap();
            let pool = SharedPool::new(Arc::new(arena));
            let (mut dev, mut drivers) = PrivRing::build(&cfg, &pool).unwrap();
            let cores: Vec<CoreCtx> = (0..3).map(|i| CoreCtx::new(i, cfg.cache, &pool)).collect();
            let p = &mut CountingProbe { dma_wait_ns: 300, ..CountingProbe::default() };
            let (mut offered, mut delivered, mut drops) = (0u64, 0u64, Drops::default());
            let mut wire: Vec<(u16, u64)> = Vec::new();
            let poll = |core: usize, drivers: &mut Vec<PrivRingDriver>, delivered: &mut u64| {
                let p = &mut NoProbe::default();
                let mut rx = Vec::new();
                let n = drivers[core].rx_burst(p, &cores[core], &mut rx, cfg.burst);
                *delivered += n as u64;
                drivers[core].tx_burst(p, &cores[core], &mut rx);
            };
            let transmit = |dev: &mut PrivRingDevice, wire: &mut Vec<(u16, u64)>, budget: usize| {
                dev.tx(&mut NoProbe::default(), &mut |f: &[u8]| {
                    wire.push((u16::from_le_bytes([f[0], f[1]]), u64::from_le_bytes(f[2..10].try_into().unwrap())))
                }, budget)
            };
            for s in steps {
                match s {
                    Step::Arrive(q) => {
                        let mut frame = [0u8; 60];
                        frame[..2].copy_from_slice(&q.to_le_bytes());
                        frame[2..10].copy_from_slice(&offered.to_le_bytes());
                        p.now += 100;
                        if let Err(r) = dev.rx(p, q, 0, &frame) { drops.add(r); }
                        offered += 1;
                    }
                    Step::Poll(c) => poll(c, &mut drivers, &mut delivered),
                    Step::Transmit(b) => { transmit(&mut dev, &mut wire, b); }
                }
            }
            // Drain: the NIC writes what it holds, every core polls until its rings are empty, and the NIC
            // sends everything.
            dev.idle(p);
            while dev.occupancy().used > 0 || dev.tx_pending() > 0 {
                for c in 0..3 { poll(c, &mut drivers, &mut delivered); }
                transmit(&mut dev, &mut wire, usize::MAX);
            }
            prop_assert_eq!(offered, delivered + drops.total());
            let tx_full: f64 = drivers.iter().map(|d| d.metrics()["tx_full_drops"]).sum();
            prop_assert_eq!(wire.len() as u64 + tx_full as u64, delivered);
            let mut seen = std::collections::HashSet::new();
            let mut last = [None::<u64>; 3];
            for &(q, seq) in &wire {
                prop_assert!(seen.insert(seq), "seq {} delivered twice", seq);
                prop_assert!(last[q as usize].is_none_or(|l| l < seq), "queue {} out of order", q);
                last[q as usize] = Some(seq);
            }
            for (d, c) in drivers.iter_mut().zip(&cores) { d.teardown(c); }
            drop(cores);
            prop_assert_eq!(pool.available() as u32, pool.arena().count());
            prop_assert_eq!(pool.arena().census()[0], pool.arena().count());
        }
    }

    #[test]
    fn a_full_ring_drops_with_a_reason_and_recovers() {
        let (mut dev, mut drivers, core, _) = one_core(&small(1));
        let p = &mut NoProbe::default();
        for _ in 0..8 {
            assert_eq!(dev.rx(p, 0, 0, &[0u8; 60]), Ok(()));
        }
        assert_eq!(dev.rx(p, 0, 0, &[0u8; 60]), Err(DropReason::NoRxDescriptor));
        assert_eq!(dev.occupancy().used, 8);
        let mut rx = Vec::new();
        assert_eq!(drivers[0].rx_burst(p, &core, &mut rx, 4), 4);
        assert_eq!(dev.rx(p, 0, 0, &[0u8; 60]), Ok(()));
        assert_eq!(dev.rx(p, 0, 0, &[0u8; 3000]), Err(DropReason::TooLong));
        drop(rx);
    }

    /// The driver writes each received mbuf's header and leaves the packet's data to whoever reads it:
    /// DPDK's receive paths prefetch no packet data (FastClick and l3fwd do it themselves).
    #[test]
    fn receiving_writes_the_mbuf_header_and_prefetches_nothing() {
        let (mut dev, mut drivers, core, _) = one_core(&small(1));
        for _ in 0..4 {
            assert_eq!(dev.rx(&mut NoProbe::default(), 0, 0, &[0u8; 60]), Ok(()));
        }
        let (p, mut rx) = (&mut CountingProbe::default(), Vec::new());
        assert_eq!(drivers[0].rx_burst(p, &core, &mut rx, 4), 4);
        assert_eq!(p.prefetched, 0);
        assert!(p.touches[crate::probe::Access::Write as usize] >= 4, "{p:?}");
        drop(rx);
    }

    /// Reclaiming sent buffers reads each mbuf's second line (`rte_pktmbuf_prefree_seg`) unless the
    /// driver frees them fast (`IfaceConfig::tx_fast_free`, DPDK's `MBUF_FAST_FREE`).
    #[test]
    fn a_fast_free_reclaims_sent_buffers_without_reading_them() {
        for fast in [false, true] {
            let cfg = IfaceConfig { tx_fast_free: fast, ..small(1) };
            let (mut dev, mut drivers, core, _) = one_core(&cfg);
            let np = &mut NoProbe::default();
            for _ in 0..8 {
                assert_eq!(dev.rx(np, 0, 0, &[0u8; 60]), Ok(()));
                let mut rx = Vec::new();
                assert_eq!(drivers[0].rx_burst(np, &core, &mut rx, 4), 1);
                drivers[0].tx_burst(np, &core, &mut rx);
                dev.tx(np, &mut |_: &[u8]| {}, usize::MAX);
            }
            // The next transmit call frees what the device has reported sent.
            let p = &mut CountingProbe::default();
            drivers[0].tx_burst(p, &core, &mut Vec::new());
            let freed = p.overlapped;
            assert_eq!(freed == 0, fast, "fast free {fast}: {freed} second lines read");
            drivers[0].teardown(&core);
        }
    }

    /// A vector path's bulk refill (mlx5's, [`crate::refill`]) leaves the slots its core emptied last
    /// without buffers, so when the core stops the NIC finds fewer than the ring's size; per slot, every
    /// one is posted again in the burst that empties it.
    #[test]
    fn a_bulk_refill_leaves_slots_empty_when_the_core_stops() {
        for (rx_refill, room) in [(RxRefill::PerSlot, 32..=32), (RxRefill::Mlx5, 21..=28)] {
            let cfg = IfaceConfig { rx_refill, ring: RingSize::new(32).unwrap(), ..small(1) };
            let (mut dev, mut drivers, core, pool) = one_core(&cfg);
            let p = &mut NoProbe::default();
            let mut got = 0;
            for _ in 0..20 {
                assert_eq!(dev.rx(p, 0, 0, &[0u8; 60]), Ok(()));
                let mut rx = Vec::new();
                got += drivers[0].rx_burst(p, &core, &mut rx, 4);
                drivers[0].tx_burst(p, &core, &mut rx);
                dev.tx(p, &mut |_: &[u8]| {}, usize::MAX);
            }
            assert_eq!(got, 20);
            // The core stops; the NIC fills what is posted.
            let accepted = (0..40).take_while(|_| dev.rx(p, 0, 0, &[0u8; 60]).is_ok()).count();
            assert!(room.contains(&accepted), "{rx_refill}: {accepted} slots posted after the core stopped");
            loop {
                let mut rx = Vec::new();
                if drivers[0].rx_burst(p, &core, &mut rx, 4) == 0 {
                    break;
                }
                drivers[0].tx_burst(p, &core, &mut rx);
                dev.tx(p, &mut |_: &[u8]| {}, usize::MAX);
            }
            drivers[0].teardown(&core);
            drop(core);
            assert_eq!(pool.available() as u32, pool.arena().count(), "{rx_refill}: every buffer back");
        }
    }

    /// A burst that reaches the ring's end: the scalar path goes on, mlx5's vector path checks its bulk
    /// refill again and goes on (`mlx5_rx_burst_vec` calling `rxq_burst_v` again), and i40e's stops there
    /// (its trailing dummy descriptors are never done). Each ring takes `n - 4` packets, idles (a vector
    /// path refills from the first slot meanwhile), then gets four packets in its last slots and four in
    /// its first, and a burst of eight polls them. Then the NIC fills what is posted: with mlx5's second
    /// check 24 slots (20 without it).
    #[test]
    fn a_vector_burst_refills_again_or_stops_at_the_rings_end() {
        for (rx_refill, n, taken, posted) in
            [(RxRefill::PerSlot, 16, 8, 16), (RxRefill::Intel { chunk: 4 }, 16, 4, 4), (RxRefill::Mlx5, 32, 8, 24)]
        {
            let cfg = IfaceConfig { rx_refill, ring: RingSize::new(n).unwrap(), ..small(1) };
            let (mut dev, mut drivers, core, pool) = one_core(&cfg);
            let p = &mut NoProbe::default();
            let pass = |p: &mut NoProbe, dev: &mut PrivRingDevice, drivers: &mut [PrivRingDriver], packets, max| {
                for _ in 0..packets {
                    assert_eq!(dev.rx(p, 0, 0, &[0u8; 60]), Ok(()), "{rx_refill}");
                }
                let mut rx = Vec::new();
                let got = drivers[0].rx_burst(p, &core, &mut rx, max);
                drivers[0].tx_burst(p, &core, &mut rx);
                dev.tx(p, &mut |_: &[u8]| {}, usize::MAX);
                got
            };
            let n_us = n as usize;
            assert_eq!(pass(p, &mut dev, &mut drivers, n_us - 4, n_us), n_us - 4);
            for _ in 0..4 {
                assert_eq!(pass(p, &mut dev, &mut drivers, 0, 8), 0);
            }
            assert_eq!(pass(p, &mut dev, &mut drivers, 8, 8), taken, "{rx_refill}: packets of the burst");
            let filled = (0..2 * n).take_while(|_| dev.rx(p, 0, 0, &[0u8; 60]).is_ok()).count();
            assert_eq!(filled, posted, "{rx_refill}: slots posted after the burst");
            while pass(p, &mut dev, &mut drivers, 0, n_us) > 0 {}
            drivers[0].teardown(&core);
            drop(core);
            assert_eq!(pool.available() as u32, pool.arena().count(), "{rx_refill}: every buffer back");
        }
    }

    #[test]
    fn a_small_ring_for_a_bulk_refill_is_a_config_error() {
        let cfg = IfaceConfig { rx_refill: RxRefill::Mlx5, ..small(1) };
        let pool = SharedPool::new(Arc::new(Arena::new("t", 64, BufLayout::default()).unwrap()));
        assert_eq!(PrivRing::build(&cfg, &pool).unwrap_err().option, "rx-refill");
    }

    #[test]
    fn bad_burst_is_a_config_error() {
        let cfg = IfaceConfig { burst: 0, ..small(1) };
        let pool = SharedPool::new(Arc::new(Arena::new("t", 64, BufLayout::default()).unwrap()));
        assert_eq!(PrivRing::build(&cfg, &pool).unwrap_err().option, "burst");
        let cfg = IfaceConfig { cores: 0, ..small(1) };
        assert_eq!(PrivRing::build(&cfg, &pool).unwrap_err().option, "cores");
    }
}

#[cfg(all(test, loom))]
mod loom_tests {
    use super::*;
    use crate::ringsize::RingSize;

    /// The NIC thread delivers and transmits while a core receives, reposts and transmits: descriptor
    /// posting, the tail doorbell, the completion's done bit, the Tx doorbell and head write-back, and
    /// every buffer hand-off, under all interleavings of a 2-entry ring.
    #[test]
    fn nic_and_core() {
        model(RxRefill::PerSlot, 2);
    }

    /// The same with a bulk refill (one slot once more than one is empty): the third packet needs the
    /// slot the core reposts at the start of a later burst.
    #[test]
    fn nic_and_core_with_a_bulk_refill() {
        model(RxRefill::Intel { chunk: 1 }, 3);
    }

    fn model(rx_refill: RxRefill, packets: u8) {
        let cfg = IfaceConfig {
            ring: RingSize::new(2).unwrap(),
            // Room for every packet: the NIC thread transmits only once it has delivered them all.
            tx_ring: RingSize::new(u64::from(packets).next_power_of_two()).unwrap(),
            cache: 1,
            burst: 2,
            rx_refill,
            ..IfaceConfig::default()
        };
        crate::loom_tests::echo::<PrivRing>(cfg, packets);
    }
}
