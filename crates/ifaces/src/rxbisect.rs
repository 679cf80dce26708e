//! rxBisect (paper 001, §4): the Rx ring's two jobs, taking empty buffers from software and giving
//! packets to it, are split into allocation (Ax) rings, where a core posts empty buffers, and bisected
//! reception (Bx) rings, where the NIC reports packets — with independent sizes (`--ax`, `--bx`).
//!
//! NIC side (§4.1, Figure 5): RSS picks the Bx ring; each Bx ring is associated with a set of Ax rings
//! (all of them by default, §4.5), and each Ax ring is linked to one Bx ring (its core's), where the NIC
//! reports the buffers it consumed from it. The NIC takes the buffer from the Bx ring's own Ax ring (the
//! one linked to it) if that has one, else from another non-empty associated Ax ring chosen at random or
//! round-robin (`--ax-policy`). A Bx entry carries the packet's buffer (or none), the Ax ring and index
//! the buffer came from, and the done bit; when the receiving and allocating core coincide, packet and
//! consumption notice are one combined entry, otherwise the allocating core's Bx ring gets a notice-only
//! entry. Bx rings are completion rings ([`crate::cqring`]), compressed as the NIC's CQs are (§4.4:
//! "completion compression" mechanisms already exist in NVIDIA NICs): a combined entry names the next
//! buffer of the ring's own Ax ring, which is consumed in order, so it may be a mini-CQE; a borrowed
//! buffer's entry and a notice name another ring's buffer and stay full. Drops: `bx_full` (the
//! receiving Bx ring is full) and `no_ax_buffer` (no associated Ax ring has a buffer whose consumption
//! can be reported).
//!
//! Software side (§4.2, Listing 1): a core polls its Bx ring, takes packets, and re-arms each slot of its
//! own Ax ring that a notice names, in order, ringing the Ax doorbell once per burst. Packets in buffers
//! from other cores' Ax rings are freed on the receiving core through the two-level allocator
//! ([`crate::pool`]), which counts them as cross-core frees.
//!
//! An overloaded core can only hold buffers in its full Bx ring; others keep receiving into their own Ax
//! buffers (§4.3), unlike shRing, where it stalls the shared ring.

use crate::arena::{Arena, BufId};
use crate::core::CoreCtx;
use crate::cqring::{
    Completion, CqConsumer, CqProducer, Mini, close_all, completion_ring, compression_metrics, expire_all,
};
use crate::desc::{DescPrefetch, DescRing};
use crate::design::{ConfigError, Design, DeviceSide, DriverSide, DropReason, IfaceConfig, Metrics, Occupancy};
use crate::packet::{Packet, push_in_place};
use crate::pool::{PoolCache, SharedPool};
use crate::probe::{NoProbe, Phase, Probe, in_phase};
use crate::ringsize::RingSize;
use crate::slots;
use crate::sync::Arc;
use crate::txring::TxDriver;
use crate::txset::TxSet;
use std::collections::VecDeque;
use std::fmt;
use std::str::FromStr;
use wire::QueueId;

/// The vendor minimum Ax ring size (NVIDIA NICs, §4.5); 2 under loom, whose models need tiny rings.
pub const AX_MIN: u32 = if cfg!(loom) { 2 } else { 64 };

/// How the NIC picks an Ax ring when the Bx ring's own one is empty (§4.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum AxPolicy {
    /// A random non-empty associated ring.
    #[default]
    LinkedThenRandom,
    /// The next non-empty associated ring after the one used last for this Bx ring.
    LinkedThenRoundRobin,
}

impl FromStr for AxPolicy {
    type Err = String;
    fn from_str(s: &str) -> Result<AxPolicy, String> {
        match s {
            "random" | "linked-then-random" => Ok(AxPolicy::LinkedThenRandom),
            "round-robin" | "rr" | "linked-then-round-robin" => Ok(AxPolicy::LinkedThenRoundRobin),
            _ => Err(format!("unknown Ax policy '{s}' (use random or round-robin)")),
        }
    }
}

impl fmt::Display for AxPolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            AxPolicy::LinkedThenRandom => "random",
            AxPolicy::LinkedThenRoundRobin => "round-robin",
        })
    }
}

/// The rxBisect design (`--iface rxbisect`).
#[derive(Debug)]
pub struct RxBisect;

/// One Ax ring as the NIC sees it.
#[derive(Debug)]
struct AxNic {
    ring: Arc<DescRing>,
    next: u32,
    prefetch: DescPrefetch,
    /// The Bx ring that receives this ring's consumption notices.
    link: usize,
}

/// rxBisect's NIC side.
#[derive(Debug)]
pub struct RxBisectDevice {
    arena: Arc<Arena>,
    ax: Vec<AxNic>,
    bx: Vec<CqProducer>,
    /// Per Bx ring, the associated Ax rings, its own (linked) one first.
    assoc: Vec<Vec<usize>>,
    policy: AxPolicy,
    /// Per Bx ring, where the round-robin search starts next.
    rr: Vec<usize>,
    rng: u64,
    tx: TxSet,
    /// Packets stored in a buffer from another core's Ax ring.
    borrowed: u64,
    /// Per Bx ring, the positions of notice-only entries software may not have consumed yet, so that
    /// occupancy counts packets, not entries.
    notices: Vec<VecDeque<u32>>,
}

/// rxBisect's driver side for one core.
#[derive(Debug)]
pub struct RxBisectDriver {
    ax_id: usize,
    ax: Arc<DescRing>,
    /// Ax slots re-armed so far (the Ax tail), free-running.
    tail: u32,
    bx: CqConsumer,
    tx: TxDriver,
    /// A buffer allocated ahead, so that an entry is consumed only when its Ax slot can be re-armed.
    spare: Option<BufId>,
    alloc_failures: u64,
    notices: u64,
}

/// Bx entry: `[buffer data address or 0, ax ring | ax index << 32, length | hash << 32]`.
#[inline]
fn bxe(addr: usize, ax: usize, idx: u32, len: usize, hash: u32) -> [u64; 3] {
    [addr as u64, ax as u64 | u64::from(idx) << 32, len as u64 | u64::from(hash) << 32]
}

impl IfaceConfig {
    /// Check rxBisect's ring sizes (001 §4.5).
    pub fn validate_rxbisect(&self) -> Result<RingSize, ConfigError> {
        match RingSize::new(u64::from(self.ax)) {
            Ok(size) if self.ax >= AX_MIN => Ok(size),
            _ => Err(ConfigError::new(
                "ax",
                format!(
                    "Ax rings need a power of two of at least {AX_MIN} entries (the vendor minimum), got {}",
                    self.ax
                ),
            )),
        }
    }
}

impl Design for RxBisect {
    const NAME: &'static str = "rxbisect";
    type Device = RxBisectDevice;
    type Driver = RxBisectDriver;

    /// Ax buffers, plus as many as full Bx rings can hold (§4.3: the pool must keep allocations going
    /// while overloaded cores' Bx rings are full), plus each core's Tx ring, cache and bursts.
    fn buffers_needed(cfg: &IfaceConfig) -> u32 {
        let per_core = cfg.ax as usize + cfg.bx.len() + cfg.tx_ring.len() + cfg.cache * 3 / 2 + 2 * cfg.burst;
        (cfg.cores * per_core + cfg.burst) as u32
    }

    fn build(cfg: &IfaceConfig, pool: &Arc<SharedPool>) -> Result<(RxBisectDevice, Vec<RxBisectDriver>), ConfigError> {
        cfg.validate_common()?;
        let ax_size = cfg.validate_rxbisect()?;
        let (tx, tx_drivers) = TxSet::new(cfg);
        let mut ax = Vec::with_capacity(cfg.cores);
        let mut drivers = Vec::with_capacity(cfg.cores);
        let mut bx = Vec::with_capacity(cfg.cores);
        for (core, tx) in tx_drivers.into_iter().enumerate() {
            let ring = Arc::new(DescRing::new(ax_size));
            slots::fill(&ring, ax_size.len(), &mut PoolCache::new(core as u16, 0, pool.clone()), "ax")?;
            ring.doorbell.ring(&mut NoProbe::default(), ax_size.get());
            let (prod, cons) = completion_ring(cfg.bx, cfg.cq);
            bx.push(prod);
            ax.push(AxNic { ring: ring.clone(), next: 0, prefetch: DescPrefetch::new(cfg.prefetch), link: core });
            drivers.push(RxBisectDriver {
                ax_id: core,
                ax: ring,
                tail: ax_size.get(),
                bx: cons,
                tx,
                spare: None,
                alloc_failures: 0,
                notices: 0,
            });
        }
        // All-to-all association (§4.5), each Bx ring's linked Ax ring first.
        let assoc = (0..cfg.cores).map(|b| (0..cfg.cores).map(|i| (b + i) % cfg.cores).collect()).collect();
        let device = RxBisectDevice {
            arena: pool.arena().clone(),
            ax,
            bx,
            assoc,
            policy: cfg.ax_policy,
            rr: vec![1; cfg.cores],
            rng: 0x9e37_79b9_7f4a_7c15,
            tx,
            borrowed: 0,
            notices: vec![VecDeque::new(); cfg.cores],
        };
        Ok((device, drivers))
    }
}

impl RxBisectDevice {
    /// Whether Ax ring `a` has a buffer and its notice can be reported to the packet's Bx ring `b` or,
    /// if another, to its linked one.
    #[inline]
    fn usable(&self, a: usize, b: usize) -> bool {
        let ax = &self.ax[a];
        // Acquire (in `read`): the posted descriptors are visible.
        ax.next != ax.ring.doorbell.read() && (ax.link == b || !self.bx[ax.link].is_full())
    }

    /// The NIC's choice of Ax ring for a packet to Bx ring `b` (§4.1): its own, else another associated
    /// one by the policy.
    #[inline]
    fn choose(&mut self, b: usize) -> Option<usize> {
        let set = &self.assoc[b];
        if self.usable(set[0], b) {
            return Some(set[0]);
        }
        let others = set.len() - 1;
        if others == 0 {
            return None;
        }
        let start = match self.policy {
            AxPolicy::LinkedThenRandom => {
                // xorshift64: a cheap, reproducible NIC-side random choice.
                self.rng ^= self.rng << 13;
                self.rng ^= self.rng >> 7;
                self.rng ^= self.rng << 17;
                (self.rng % others as u64) as usize
            }
            AxPolicy::LinkedThenRoundRobin => self.rr[b] % others,
        };
        let found = (0..others).map(|i| 1 + (start + i) % others).find(|&i| self.usable(self.assoc[b][i], b))?;
        self.rr[b] = found % others;
        Some(self.assoc[b][found])
    }

    /// Replace the association sets (each Bx ring's Ax rings, its own first) and the Ax -> Bx links.
    /// Panics on an index out of range or an empty set.
    pub fn associate(&mut self, assoc: Vec<Vec<usize>>, links: &[usize]) {
        assert_eq!(assoc.len(), self.bx.len(), "one association set per Bx ring");
        assert!(assoc.iter().flatten().chain(links).all(|&i| i < self.ax.len()), "ring index out of range");
        assert!(assoc.iter().all(|s| !s.is_empty()), "an empty association set");
        for (ax, &l) in self.ax.iter_mut().zip(links) {
            ax.link = l;
        }
        self.assoc = assoc;
    }
}

impl DeviceSide for RxBisectDevice {
    #[inline]
    fn rx<P: Probe>(&mut self, p: &mut P, queue: QueueId, hash: u32, frame: &[u8]) -> Result<(), DropReason> {
        let b = usize::from(queue);
        if self.bx[b].is_full() {
            return Err(DropReason::BxFull);
        }
        let a = self.choose(b).ok_or(DropReason::NoAxBuffer)?;
        let ax = &mut self.ax[a];
        let idx = ax.next;
        let d = ax.prefetch.get(p, &ax.ring, idx, ax.ring.doorbell.read());
        let addr = slots::dma_into(p, &self.arena, d, frame)?;
        ax.next = idx.wrapping_add(1);
        let link = ax.link;
        // A buffer of the Bx ring's own Ax ring is implicit, as privRing's descriptors are.
        let mini = (link == b).then_some(Mini { len: frame.len() as u32, hash });
        self.bx[b].push(p, bxe(addr, a, idx, frame.len(), hash), mini);
        if link != b {
            // The allocating core's notice-only entry, written in parallel (§4.4).
            let bx = &mut self.bx[link];
            let pending = &mut self.notices[link];
            let consumed = bx.produced().wrapping_sub(bx.queued());
            while pending.front().is_some_and(|&i| (i.wrapping_sub(consumed) as i32) < 0) {
                pending.pop_front();
            }
            pending.push_back(bx.produced());
            bx.push(p, bxe(0, a, idx, 0, 0), None);
            self.borrowed += 1;
        }
        expire_all(p, &mut self.bx);
        Ok(())
    }

    fn idle<P: Probe>(&mut self, p: &mut P) {
        close_all(p, &mut self.bx);
    }

    fn tx<P: Probe, W: FnMut(&[u8])>(&mut self, p: &mut P, wire: &mut W, budget: usize) -> usize {
        self.tx.transmit(p, &self.arena, wire, budget)
    }

    /// Packets in the Bx rings (notice-only entries are not packets).
    fn occupancy(&self) -> Occupancy {
        let packets = |(q, pending): (&CqProducer, &VecDeque<u32>)| {
            // One read of what the consumer has taken: it moves while we count, and two reads could disagree.
            let occupied = q.queued();
            let consumed = q.produced().wrapping_sub(occupied);
            let notices = pending.iter().filter(|&&i| (i.wrapping_sub(consumed) as i32) >= 0).count();
            u64::from(occupied).saturating_sub(notices as u64)
        };
        Occupancy {
            used: self.bx.iter().zip(&self.notices).map(packets).sum(),
            capacity: self.bx.iter().map(|q| u64::from(q.size().get())).sum(),
        }
    }

    fn tx_pending(&self) -> u64 {
        self.tx.pending()
    }

    fn metrics(&self) -> Metrics {
        let fetches: u64 = self.ax.iter().map(|a| a.prefetch.stats().fetches).sum();
        let mut m =
            Metrics::from([("desc_fetches".into(), fetches as f64), ("borrowed_buffers".into(), self.borrowed as f64)]);
        m.extend(compression_metrics(&self.bx));
        m
    }
}

impl DriverSide for RxBisectDriver {
    /// Listing 1: consume Bx entries; keep packets; re-arm own Ax slots named by notices; ring the Ax
    /// doorbell once.
    #[inline]
    fn rx_burst<'c, P: Probe>(&mut self, p: &mut P, core: &'c CoreCtx, out: &mut Vec<Packet<'c>>, max: usize) -> usize {
        in_phase(p, Phase::Rx, |p| {
            let arena = core.arena();
            let (mut n, mut rearmed, mut polled) = (0, 0u32, false);
            while n < max && self.bx.ready() {
                if self.spare.is_none() {
                    self.spare = core.alloc(p);
                    if self.spare.is_none() {
                        self.alloc_failures += 1;
                        break;
                    }
                }
                // Notices of our own buffers come in Ax order: the next is this slot's.
                let slot = self.ax.size().slot(self.tail.wrapping_add(rearmed));
                let (packet, own) = match self.bx.poll(p).expect("a ready Bx entry") {
                    Completion::Full([addr, ax, len]) => {
                        let own = (ax & 0xffff_ffff) as usize == self.ax_id;
                        debug_assert!(!own || self.ax.size().slot((ax >> 32) as u32) == slot);
                        let id = (addr != 0)
                            .then(|| arena.id_of(addr as usize).expect("Bx entry points outside the buffer arena"));
                        (id.map(|id| (id, len as u32)), own)
                    }
                    // A mini-CQE: a packet in the buffer of our Ax ring's next slot.
                    Completion::Mini(m) => (Some((slots::buffer_of(p, &self.ax, slot, core), m.len)), true),
                };
                polled = true;
                if let Some((id, len)) = packet {
                    push_in_place(out, || slots::receive(p, core, id, len));
                    n += 1;
                }
                if own {
                    // Line 8-10: our buffer was consumed; re-arm its slot.
                    slots::post(p, &self.ax, slot, self.spare.take().expect("allocated above"), core);
                    rearmed += 1;
                    self.notices += u64::from(packet.is_none());
                }
            }
            if rearmed > 0 {
                // Lines 13-16.
                self.tail = self.tail.wrapping_add(rearmed);
                self.ax.doorbell.ring(p, self.tail);
            }
            if polled {
                self.bx.ring_doorbell(p);
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
        self.tx.teardown(core);
        slots::release(&self.ax, 0..self.ax.size().len(), core, "rxBisect");
        if let Some(id) = self.spare.take() {
            core.free(p, id);
        }
    }

    fn metrics(&self) -> Metrics {
        Metrics::from([
            ("alloc_failures".into(), self.alloc_failures as f64),
            ("notice_only_entries".into(), self.notices as f64),
            ("tx_full_drops".into(), self.tx.full_drops() as f64),
            ("doorbells".into(), (self.bx.doorbell_writes() + self.ax.doorbell.writes()) as f64),
        ])
    }
}
