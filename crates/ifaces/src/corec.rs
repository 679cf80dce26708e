//! COREC (paper 003, §3.4, Listing 2): one Rx queue shared by all worker cores, with no lock on the
//! receive path. The NIC is an Intel-style one (§2): it fills descriptors in ring order and writes each
//! back with a "descriptor done" (DD) bit, a cache line of them at a time where the profile's NIC packs
//! its write-backs ([`crate::wbpack`]); there is no completion ring.
//!
//! A worker (§3.4.1):
//! 1. scans DD bits from the shared claim counter `rx_index` (lines 12-19);
//! 2. claims the batch with a compare-and-swap of the counter (line 21). The counter is a free-running
//!    32-bit transaction ID: slot = ID mod size, epoch = ID / size (§3.4.3, Table 1), so a worker that
//!    read an old value a whole ring ago fails its CAS instead of claiming stale slots (no ABA);
//! 3. takes the packets and re-arms the slots with buffers allocated in bulk beforehand (lines 24-31);
//! 4. publishes the batch in the READ_DONE bitmap (line 33; [`crate::bitmap`]);
//! 5. with a non-blocking try-lock, advances the tail over the contiguous READ_DONE run and rings the
//!    doorbell (lines 35-42); a worker that finds the lock taken just leaves.
//!
//! The listing leaves one bound implicit: the scan stops at `tail + size`. Beyond it lie slots whose
//! previous-epoch packet a descheduled worker may have claimed and not yet re-armed, so their DD bit is
//! still set from the previous epoch (the §3.4.4 situation). Without the bound a worker would claim such a
//! slot again.
//!
//! COREC does not keep per-flow order: batches claimed in order are processed in parallel, and a
//! descheduled worker holding a batch releases it late (§3.4.4). [`CorecDriver::claim`] and
//! [`CorecDriver::finish`] expose the two halves of a receive call so that a test or the simulator can
//! deschedule a worker between them.

use crate::arena::BufId;
use crate::bitmap::{MarkBatch, ReuseBitmap};
use crate::core::CoreCtx;
use crate::desc::{DescPrefetch, DescRing};
use crate::design::{ConfigError, Design, DeviceSide, DriverSide, DropReason, IfaceConfig, Metrics, Occupancy};
use crate::packet::Packet;
use crate::pool::{PoolCache, SharedPool};
use crate::probe::{Access, NoProbe, Phase, Probe, in_phase};
use crate::slots;
use crate::spinlock::SpinLock;
use crate::sync::{Arc, AtomicU32, AtomicU64, Ordering};
use crate::txring::TxDriver;
use crate::txset::TxSet;
use crate::wbpack::{WbHold, WbPacking, WbWrite};
use wire::QueueId;

/// The COREC design (`--iface corec`).
#[derive(Debug)]
pub struct Corec;

/// The DD bit of a written-back descriptor's `cap` word (ixgbe's `status_error`); the low bits then hold
/// the packet length. Software's re-arm writes the buffer capacity, which clears it.
const DD: u32 = 1 << 31;

/// The shared queue.
#[derive(Debug)]
pub struct CorecQueue {
    ring: DescRing,
    /// The claim counter (`queue->rx_index`): transaction IDs claimed so far.
    rx_index: AtomicU32,
    read_done: ReuseBitmap,
    tail_lock: SpinLock,
    /// IDs handed back to the NIC so far (the TAIL register, minus the ring size). Written under
    /// `tail_lock`.
    tail: AtomicU32,
    /// Failed claim CASes, over all workers.
    cas_failures: AtomicU64,
}

/// COREC's NIC side.
#[derive(Debug)]
pub struct CorecDevice {
    queue: Arc<CorecQueue>,
    next: u32,
    /// Filled descriptors not yet written back (their line is not full), and their packets' lengths by
    /// transaction ID modulo [`WbPacking::MAX_PER_WRITE`] (a line's IDs are consecutive).
    held: WbHold,
    held_lens: [u32; WbPacking::MAX_PER_WRITE as usize],
    prefetch: DescPrefetch,
    arena: Arc<crate::arena::Arena>,
    tx: TxSet,
}

/// A worker's side.
#[derive(Debug)]
pub struct CorecDriver {
    queue: Arc<CorecQueue>,
    leader: bool,
    /// Replacement buffers, allocated in bulk (line 24).
    spares: Vec<BufId>,
    tx: TxDriver,
    alloc_failures: u64,
    claims: u64,
}

/// A batch of transaction IDs `first..first + len` this worker won and must [`CorecDriver::finish`].
#[derive(Debug)]
#[must_use = "a claimed batch that is never finished stalls the queue's tail forever"]
pub struct Claim {
    first: u32,
    len: u32,
}

impl Claim {
    /// The first transaction ID of the batch.
    pub fn first(&self) -> u32 {
        self.first
    }

    /// Packets in the batch.
    pub fn len(&self) -> u32 {
        self.len
    }

    /// Never true: a claim has at least one packet.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

impl Design for Corec {
    const NAME: &'static str = "corec";
    const PER_FLOW_ORDER: bool = false;
    const ONE_PORT: Option<&'static str> =
        Some("COREC's cores all claim batches from one shared queue (003 §3.4); a port per NIC thread would split it");
    const WAKE: crate::design::Wake = crate::design::Wake::AllCores;
    type Device = CorecDevice;
    type Driver = CorecDriver;

    fn buffers_needed(cfg: &IfaceConfig) -> u32 {
        let per_core = cfg.tx_ring.len() + cfg.cache * 3 / 2 + 3 * cfg.burst;
        (cfg.ring.len() + cfg.cores * per_core + cfg.burst) as u32
    }

    fn build(cfg: &IfaceConfig, pool: &Arc<SharedPool>) -> Result<(CorecDevice, Vec<CorecDriver>), ConfigError> {
        cfg.validate_common()?;
        let ring = DescRing::new(cfg.ring);
        slots::fill(&ring, cfg.ring.len(), &mut PoolCache::new(0, 0, pool.clone()), "ring")?;
        ring.doorbell.ring(&mut NoProbe::default(), cfg.ring.get());
        let queue = Arc::new(CorecQueue {
            read_done: ReuseBitmap::new(cfg.ring),
            ring,
            rx_index: AtomicU32::new(0),
            tail_lock: SpinLock::new(),
            tail: AtomicU32::new(0),
            cas_failures: AtomicU64::new(0),
        });
        let (tx, tx_drivers) = TxSet::new(cfg);
        let drivers = tx_drivers
            .into_iter()
            .enumerate()
            .map(|(c, tx)| CorecDriver {
                queue: queue.clone(),
                leader: c == 0,
                spares: Vec::with_capacity(cfg.burst),
                tx,
                alloc_failures: 0,
                claims: 0,
            })
            .collect();
        let device = CorecDevice {
            queue,
            next: 0,
            held: WbHold::new(cfg.cq.packing()),
            held_lens: [0; WbPacking::MAX_PER_WRITE as usize],
            prefetch: DescPrefetch::new(cfg.prefetch),
            arena: pool.arena().clone(),
            tx,
        };
        Ok((device, drivers))
    }
}

impl CorecDevice {
    /// Write the held descriptors `w` back: one DMA write, each with its DD bit and length.
    #[inline(always)]
    fn write_back<P: Probe>(&self, p: &mut P, w: WbWrite) {
        let ring = &self.queue.ring;
        p.touch(ring.desc(ring.size().slot(w.first)) as *const _ as usize, 16 * w.n as usize, Access::Write);
        for id in (0..w.n).map(|k| w.first.wrapping_add(k)) {
            let len = self.held_lens[(id % WbPacking::MAX_PER_WRITE) as usize];
            // Release: the packet (and the buffer's hand-off) is visible to the worker that sees DD.
            ring.desc(ring.size().slot(id)).cap.store(DD | len, Ordering::Release);
        }
    }
}

impl DeviceSide for CorecDevice {
    /// Every packet goes to the one queue, whatever RSS said.
    #[inline]
    fn rx<P: Probe>(&mut self, p: &mut P, _queue: QueueId, _hash: u32, frame: &[u8]) -> Result<(), DropReason> {
        if let Some(w) = self.held.expire(|| p.now_ns()) {
            self.write_back(p, w);
        }
        let ring = &self.queue.ring;
        let tail = ring.doorbell.read();
        if self.next == tail {
            return Err(DropReason::NoRxDescriptor);
        }
        let d = self.prefetch.get(p, ring, self.next, tail);
        slots::dma_into(p, &self.arena, d, frame)?;
        let i = self.next;
        self.next = i.wrapping_add(1);
        let len = frame.len() as u32;
        match self.held.complete(i, ring.size().get(), || p.now_ns()) {
            // This descriptor alone (a NIC that does not pack, or a line it starts and ends): the
            // descriptor in hand. Release: the packet (and the buffer's hand-off) is visible to the
            // worker that sees DD.
            Some(w) if w.n == 1 => {
                p.touch(d as *const _ as usize, 16, Access::Write);
                d.cap.store(DD | len, Ordering::Release);
            }
            w => {
                self.held_lens[(i % WbPacking::MAX_PER_WRITE) as usize] = len;
                if let Some(w) = w {
                    self.write_back(p, w);
                }
            }
        }
        Ok(())
    }

    fn idle<P: Probe>(&mut self, p: &mut P) {
        if let Some(w) = self.held.flush() {
            self.write_back(p, w);
        }
    }

    /// COREC's one queue: every packet takes its descriptor.
    fn ring_of(&self, _queue: QueueId) -> usize {
        0
    }

    fn tx<P: Probe, W: FnMut(&[u8])>(&mut self, p: &mut P, wire: &mut W, budget: usize) -> usize {
        self.tx.transmit(p, &self.arena, wire, budget)
    }

    fn occupancy(&self) -> Occupancy {
        // Relaxed: a racy snapshot for reports.
        let claimed = self.queue.rx_index.load(Ordering::Relaxed);
        Occupancy {
            used: u64::from(self.next.wrapping_sub(claimed)),
            capacity: u64::from(self.queue.ring.size().get()),
        }
    }

    fn tx_pending(&self) -> u64 {
        self.tx.pending()
    }

    fn metrics(&self) -> Metrics {
        let q = &self.queue;
        Metrics::from([
            ("desc_fetches".into(), self.prefetch.stats().fetches as f64),
            ("claim_cas_failures".into(), q.cas_failures.load(Ordering::Relaxed) as f64),
            ("tail_trylock_failures".into(), q.tail_lock.contended() as f64),
        ])
    }
}

impl CorecDriver {
    /// Steps 1-2: refill the spare buffers in bulk, scan DD bits from the claim counter and claim what is
    /// ready (at most `max` and the spares), retrying when another worker won the race. `None` when
    /// nothing is ready (or no buffer could be allocated).
    pub fn claim<P: Probe>(&mut self, p: &mut P, core: &CoreCtx, max: usize) -> Option<Claim> {
        while self.spares.len() < max {
            let Some(id) = core.alloc(p) else { break };
            self.spares.push(id);
        }
        if self.spares.is_empty() {
            self.alloc_failures += 1;
            return None;
        }
        let q = &*self.queue;
        let size = q.ring.size();
        let want = self.spares.len().min(max) as u32;
        loop {
            p.read(&q.rx_index);
            let loaded = p.now_ns();
            // Acquire: pairs with the winning CAS of the previous claim (and, through it, the tail).
            let first = q.rx_index.load(Ordering::Acquire);
            // Acquire: descriptors before `tail + size` hold no stale DD bit (see the module doc).
            let bound = q.tail.load(Ordering::Acquire).wrapping_add(size.get()).wrapping_sub(first);
            let mut len = 0;
            while len < want.min(bound) {
                let d = q.ring.desc(size.slot(first.wrapping_add(len)));
                p.touch(d as *const _ as usize, 16, Access::Read);
                // Acquire: pairs with the NIC's write-back, so the packet is visible.
                if d.cap.load(Ordering::Acquire) & DD == 0 {
                    break;
                }
                len += 1;
            }
            if bound > size.get() {
                // The tail moved past the counter we read: both are stale, read them again.
                continue;
            }
            if len == 0 {
                return None;
            }
            let won = in_phase(p, Phase::Sync, |p| {
                p.atomic(&q.rx_index);
                // In the simulator's time another worker may have claimed after our load: we lose the
                // race there and retry, as line 21's losers do.
                p.cas_fresh(&q.rx_index as *const AtomicU32 as usize, loaded)
                    // AcqRel: the win orders our reads of the batch after the previous owners' re-arms,
                    // and publishes the new counter to the next claimer.
                    && q.rx_index
                        .compare_exchange(first, first.wrapping_add(len), Ordering::AcqRel, Ordering::Relaxed)
                        .is_ok()
            });
            if won {
                self.claims += 1;
                return Some(Claim { first, len });
            }
            // Relaxed: a statistic.
            q.cas_failures.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Steps 3-5: take the claimed packets into `out`, re-arm their slots, publish them in READ_DONE, and
    /// try to advance the tail. Returns the number of packets.
    pub fn finish<'c, P: Probe>(
        &mut self,
        p: &mut P,
        core: &'c CoreCtx,
        claim: Claim,
        out: &mut Vec<Packet<'c>>,
    ) -> usize {
        let q = &*self.queue;
        let size = q.ring.size();
        let mut batch = MarkBatch::default();
        for k in 0..claim.len {
            let id = claim.first.wrapping_add(k);
            let slot = size.slot(id);
            // Relaxed: the DD bit was acquired in `claim`.
            let len = q.ring.desc(slot).cap.load(Ordering::Relaxed) & !DD;
            let fresh = self.spares.pop().expect("claims never exceed the spares");
            slots::swap(p, &q.ring, slot, len, fresh, core, out);
            q.read_done.mark(p, &mut batch, id);
        }
        q.read_done.flush(p, &mut batch);
        self.advance_tail(p);
        claim.len as usize
    }

    /// Step 5 (lines 35-42): if the try-lock is free, hand the contiguous READ_DONE run at the tail back to
    /// the NIC. A worker that finds the lock taken leaves; the holder then looks again after unlocking,
    /// so a run completed meanwhile is not left behind.
    pub fn advance_tail<P: Probe>(&mut self, p: &mut P) {
        let q = &*self.queue;
        let size = q.ring.size();
        loop {
            let advanced = q.tail_lock.try_with(p, |p| {
                // Relaxed: `tail` is only written under the lock.
                let tail = q.tail.load(Ordering::Relaxed);
                let n = q.read_done.take_run(p, tail, |_| ());
                if n > 0 {
                    let tail = tail.wrapping_add(n);
                    // Release: claimers that bound their scan by this tail see the re-armed slots.
                    q.tail.store(tail, Ordering::Release);
                    q.ring.doorbell.ring(p, tail.wrapping_add(size.get()));
                }
            });
            if advanced.is_none() || !q.read_done.is_set(q.tail.load(Ordering::Acquire)) {
                return;
            }
        }
    }
}

impl DriverSide for CorecDriver {
    #[inline]
    fn rx_burst<'c, P: Probe>(&mut self, p: &mut P, core: &'c CoreCtx, out: &mut Vec<Packet<'c>>, max: usize) -> usize {
        in_phase(p, Phase::Rx, |p| match self.claim(p, core, max) {
            Some(c) => self.finish(p, core, c, out),
            None => {
                // Line 35 runs whether or not a batch was won: polling workers keep the tail moving.
                self.advance_tail(p);
                0
            }
        })
    }

    #[inline]
    fn tx_burst<'c, P: Probe>(&mut self, p: &mut P, core: &'c CoreCtx, pkts: &mut Vec<Packet<'c>>) -> usize {
        self.tx.send(p, core, pkts)
    }

    fn teardown(&mut self, core: &CoreCtx) {
        let p = &mut NoProbe::default();
        self.tx.teardown(core);
        for id in self.spares.drain(..) {
            core.free(p, id);
        }
        if self.leader {
            slots::release(&self.queue.ring, 0..self.queue.ring.size().len(), core, "COREC");
        }
    }

    fn metrics(&self) -> Metrics {
        Metrics::from([
            ("alloc_failures".into(), self.alloc_failures as f64),
            ("claims".into(), self.claims as f64),
            ("tx_full_drops".into(), self.tx.full_drops() as f64),
        ])
    }
}
