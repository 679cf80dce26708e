//! shRing (paper 000, §4): one Rx descriptor ring shared by a group of `share` cores, with a completion
//! ring per core through which the NIC tells each core which descriptors hold its packets (§4.2,
//! Figure 4). RSS picks the core, hence its completion ring; the shared ring supplies the buffer.
//!
//! The designs differ only in the order in which the NIC takes descriptors and in how cores give them
//! back, so this module holds what they share — the NIC's delivery step ([`ShDevice`]) and a core's
//! receive loop ([`ShDriver`], Listing 1 lines 9-28 = Listing 2 lines 4-17) — and each design supplies
//! a [`NicOrder`] and a [`Repost`]:
//! - [`arr`]: RxArr (§4.3, Listing 1): array order; a bitmap and a lock advance the head;
//! - [`list`]: RxList (§4.4, Listing 2): list order; reposted descriptors are appended under a lock;
//! - [`batched`]: Batched RxList (§4.4, Figure 5b): RxList with multi-packet descriptors;
//! - [`dynamic`]: Dynamic shRing (§4.5-4.6): privRing and RxArr ring sets, switched at run time.

pub mod arr;
pub mod batched;
pub mod dynamic;
pub mod list;

use crate::arena::Arena;
use crate::core::CoreCtx;
use crate::cqring::{CqConsumer, CqProducer, close_all, completion_ring, expire_all};
use crate::desc::DescRing;
use crate::design::{ConfigError, DeviceSide, DriverSide, DropReason, IfaceConfig, Metrics, Occupancy};
use crate::packet::Packet;
use crate::pool::{PoolCache, SharedPool};
use crate::probe::{Phase, Probe, in_phase};
use crate::slots;
use crate::sync::Arc;
use crate::txring::TxDriver;
use crate::txset::TxSet;
use wire::QueueId;

/// The sharing degree actually used, `min(share, cores)`, which must divide `cores`.
pub fn share_of(cfg: &IfaceConfig) -> Result<usize, ConfigError> {
    let share = cfg.share.min(cfg.cores);
    if share == 0 || !cfg.cores.is_multiple_of(share) {
        return Err(ConfigError::new(
            "share",
            format!("{} cores cannot be split into groups of {}; use a divisor of --cores", cfg.cores, cfg.share),
        ));
    }
    Ok(share)
}

/// Where the NIC put a packet: descriptor `desc` of the shared ring, segment `seg` of it (always 0 unless
/// descriptors hold several packets), and whether that filled the descriptor.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Place {
    /// Descriptor index in the shared ring.
    pub desc: u32,
    /// Packet slot within the descriptor.
    pub seg: u32,
}

/// Encode a completion entry: the place, the length and RSS hash, and whether the descriptor is full.
#[inline]
fn cqe(at: Place, len: usize, hash: u32, last: bool) -> [u64; 3] {
    [u64::from(at.desc) | u64::from(at.seg) << 32, len as u64 | u64::from(hash) << 32, u64::from(last)]
}

/// How the NIC takes descriptors from one shared ring.
pub trait NicOrder: Send {
    /// The ring (descriptors of `segs` consecutive entries each).
    fn ring(&self) -> &DescRing;
    /// Where the next packet for group member `member` would go, if a descriptor is available, fetching
    /// descriptors as the NIC would.
    fn peek<P: Probe>(&mut self, p: &mut P, member: usize) -> Option<Place>;
    /// The packet was written where [`NicOrder::peek`] said; returns true if that filled the descriptor.
    fn advance(&mut self, member: usize) -> bool;
    /// Design-specific counters, added to `m`.
    fn metrics(&self, m: &mut Metrics);
}

/// How a core gives consumed descriptors back to the NIC.
pub trait Repost: Send {
    /// The shared ring.
    fn ring(&self) -> &DescRing;
    /// Descriptor `desc` has been re-armed with fresh buffers and may be reused.
    fn consumed<P: Probe>(&mut self, p: &mut P, desc: u32);
    /// End of a burst: hand the consumed descriptors to the NIC.
    fn publish<P: Probe>(&mut self, p: &mut P);
}

/// A shRing variant: its NIC order, its reposting protocol, and their shared state.
pub trait Sharing {
    /// The NIC's side of one shared ring.
    type Nic: NicOrder;
    /// One core's reposting state.
    type Repost: Repost;
    /// Packets per descriptor.
    fn segs(cfg: &IfaceConfig) -> u32;
    /// Check the design's own options.
    fn validate(cfg: &IfaceConfig) -> Result<(), ConfigError>;
    /// Wrap a filled ring of `descs` descriptors: ring its first doorbell and return the NIC's side and
    /// one reposting state per group member.
    fn make(ring: DescRing, descs: u32, cfg: &IfaceConfig, share: usize) -> (Self::Nic, Vec<Self::Repost>);
}

/// The NIC side of every shRing variant.
#[derive(Debug)]
pub struct ShDevice<N> {
    arena: Arc<Arena>,
    share: usize,
    segs: u32,
    groups: Vec<N>,
    cqs: Vec<CqProducer>,
    tx: TxSet,
}

/// A core's side of every shRing variant.
#[derive(Debug)]
pub struct ShDriver<R> {
    repost: R,
    segs: u32,
    /// The first core of a group releases the shared ring's buffers at teardown.
    leader: bool,
    cq: CqConsumer,
    tx: TxDriver,
    alloc_failures: u64,
}

/// Host buffers a shRing variant needs: the shared rings plus each core's Tx ring, cache and bursts.
pub fn buffers_needed(cfg: &IfaceConfig) -> u32 {
    let groups = cfg.cores / cfg.share.clamp(1, cfg.cores.max(1));
    let per_core = cfg.tx_ring.len() + cfg.cache * 3 / 2 + 2 * cfg.burst;
    (groups * cfg.ring.len() + cfg.cores * per_core + cfg.burst) as u32
}

/// Both sides of variant `S`.
pub type Built<S> = (ShDevice<<S as Sharing>::Nic>, Vec<ShDriver<<S as Sharing>::Repost>>);

/// Build variant `S`: per group, a shared ring of `cfg.ring` packet buffers (`cfg.ring / segs`
/// descriptors), and per core a completion ring and a Tx ring.
pub fn build<S: Sharing>(cfg: &IfaceConfig, pool: &Arc<SharedPool>) -> Result<Built<S>, ConfigError> {
    cfg.validate_common()?;
    let share = share_of(cfg)?;
    S::validate(cfg)?;
    let segs = S::segs(cfg);
    let (tx, mut tx_drivers) = TxSet::new(cfg);
    let mut groups = Vec::new();
    let mut reposts = Vec::new();
    for g in 0..cfg.cores / share {
        let ring = DescRing::new(cfg.ring);
        let mut cache = PoolCache::new((g * share) as u16, 0, pool.clone());
        slots::fill(&ring, cfg.ring.len(), &mut cache, "ring")?;
        let (nic, members) = S::make(ring, cfg.ring.get() / segs, cfg, share);
        groups.push(nic);
        reposts.extend(members);
    }
    let (cqs, consumers): (Vec<_>, Vec<_>) = (0..cfg.cores).map(|_| completion_ring(cfg.ring, cfg.cq)).unzip();
    let drivers = reposts
        .into_iter()
        .zip(consumers)
        .enumerate()
        .map(|(c, (repost, cq))| ShDriver {
            repost,
            segs,
            leader: c % share == 0,
            cq,
            tx: tx_drivers.remove(0),
            alloc_failures: 0,
        })
        .collect();
    Ok((ShDevice { arena: pool.arena().clone(), share, segs, groups, cqs, tx }, drivers))
}

impl<N: NicOrder> DeviceSide for ShDevice<N> {
    #[inline]
    fn rx<P: Probe>(&mut self, p: &mut P, queue: QueueId, hash: u32, frame: &[u8]) -> Result<(), DropReason> {
        let core = usize::from(queue);
        let group = &mut self.groups[core / self.share];
        let member = core % self.share;
        let at = group.peek(p, member).ok_or(DropReason::NoRxDescriptor)?;
        let cq = &mut self.cqs[core];
        if cq.is_full() {
            return Err(DropReason::CompletionRingFull);
        }
        let d = group.ring().desc((at.desc * self.segs + at.seg) as usize);
        slots::dma_into(p, &self.arena, d, frame)?;
        let last = group.advance(member);
        cq.push(p, cqe(at, frame.len(), hash, last), None);
        expire_all(p, &mut self.cqs);
        Ok(())
    }

    fn idle<P: Probe>(&mut self, p: &mut P) {
        close_all(p, &mut self.cqs);
    }

    /// The group's shared ring: its cores' packets wait for its descriptors together (§4.3).
    fn ring_of(&self, queue: QueueId) -> usize {
        usize::from(queue) / self.share
    }

    fn tx<P: Probe, W: FnMut(&[u8])>(&mut self, p: &mut P, wire: &mut W, budget: usize) -> usize {
        self.tx.transmit(p, &self.arena, wire, budget)
    }

    fn occupancy(&self) -> Occupancy {
        Occupancy {
            used: self.cqs.iter().map(|q| u64::from(q.queued())).sum(),
            capacity: self.groups.iter().map(|g| u64::from(g.ring().size().get())).sum(),
        }
    }

    fn tx_pending(&self) -> u64 {
        self.tx.pending()
    }

    fn metrics(&self) -> Metrics {
        let mut m = Metrics::new();
        for g in &self.groups {
            g.metrics(&mut m);
        }
        m
    }
}

impl<R: Repost> DriverSide for ShDriver<R> {
    /// Listing 1 lines 9-28 (= Listing 2 lines 4-17): take each completion's buffer out of its descriptor,
    /// re-arm the descriptor with a fresh buffer, ring the completion doorbell; then the variant's
    /// [`Repost`] hands full descriptors back (Listing 1 lines 29-37, Listing 2 lines 18-24).
    #[inline]
    fn rx_burst<'c, P: Probe>(&mut self, p: &mut P, core: &'c CoreCtx, out: &mut Vec<Packet<'c>>, max: usize) -> usize {
        in_phase(p, Phase::Rx, |p| {
            let mut n = 0;
            while n < max && self.cq.ready() {
                // Allocate first, so a failed allocation leaves the packet in the ring.
                let Some(fresh) = core.alloc(p) else {
                    self.alloc_failures += 1;
                    break;
                };
                let [w0, w1, last] = self.cq.poll_full(p).expect("a ready completion");
                let at = Place { desc: w0 as u32, seg: (w0 >> 32) as u32 };
                let i = (at.desc * self.segs + at.seg) as usize;
                slots::swap(p, self.repost.ring(), i, w1 as u32, fresh, core, out);
                n += 1;
                if last != 0 {
                    self.repost.consumed(p, at.desc);
                }
            }
            if n > 0 {
                self.cq.ring_doorbell(p);
                self.repost.publish(p);
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
        if self.leader {
            let ring = self.repost.ring();
            slots::release(ring, 0..ring.size().len(), core, "shRing");
        }
    }

    fn metrics(&self) -> Metrics {
        Metrics::from([
            ("alloc_failures".into(), self.alloc_failures as f64),
            ("tx_full_drops".into(), self.tx.full_drops() as f64),
            ("doorbells".into(), (self.cq.doorbell_writes() + self.tx.doorbell_writes()) as f64),
        ])
    }
}

/// The descriptor-order counters every variant reports: DMA reads of descriptors and cache hits.
fn prefetch_metrics(pf: &crate::desc::DescPrefetch, m: &mut Metrics) {
    *m.entry("desc_fetches".into()).or_default() += pf.stats().fetches as f64;
    *m.entry("desc_prefetch_hits".into()).or_default() += pf.stats().hits as f64;
}

/// The lock counter every variant reports: acquisitions that found the ring's lock held.
fn lock_metrics(lock: &crate::spinlock::SpinLock, m: &mut Metrics) {
    *m.entry("lock_contended".into()).or_default() += lock.contended() as f64;
}
