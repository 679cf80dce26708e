//! nmNFV's receive and transmit paths (nicmem §4.1, §4.2.1, Figures 5 and 6) in the four configurations
//! of §6.1, one registry name each:
//!
//! - `nicmem-host`: the baseline; every packet in one host buffer.
//! - `nicmem-split`: header/data split at [`super::NicMemConfig::split_at`] bytes: header in a host
//!   buffer from a header ring, payload in a host buffer; the overhead of splitting alone.
//! - `nmnfv-`: payload in NIC memory: split rings, a primary ring of nicmem buffers and a secondary ring of
//!   host buffers that absorbs traffic when nicmem runs out; one completion ring says which ring each
//!   packet used, and payload buffers return to their own ring.
//! - `nmnfv`: plus header inlining: the NIC writes the header into the completion entry's own slot (no
//!   header descriptor to fetch) and the driver copies it into the transmit descriptor (the NIC reads no
//!   header buffer).
//!
//! With [`super::NicMemConfig::queues`] only the first queues of `nmnfv-` and `nmnfv` have NIC memory;
//! the others are host queues, as `nicmem-host`'s (nicmem §6.4).
//!
//! A split packet is a header packet with the payload as its second segment ([`Packet::attach_tail`]);
//! the transmit path gathers both. The transmit queue is modelled as a locked queue of descriptors
//! (touches reported at their addresses) that holds at most a Tx ring's worth (`tx_ring`, FastClick's
//! `ToDPDKDevice NDESC`): a burst that does not fit is dropped or left to the caller, as
//! [`IfaceConfig::tx_full`] says. The NIC serves the cores' queues round-robin; completions return the
//! buffers.

#![allow(unsafe_code)]

use super::region::NicMem;
use super::rings::{DevRing, DrvRing, rx_ring};
use super::{NicMemCapacity, NicMemConfig, PAPER_CAPACITY};
use crate::arena::{Arena, BufId, BufLayout, Owner};
use crate::core::CoreCtx;
use crate::cqring::{CqConsumer, CqProducer, close_all, completion_ring, expire_all};
use crate::design::{ConfigError, Design, DeviceSide, DriverSide, DropReason, IfaceConfig, Metrics, Occupancy};
use crate::doorbell::Doorbell;
use crate::packet::{Backing, Packet};
use crate::pool::SharedPool;
use crate::probe::{Access, NoProbe, Phase, Probe, in_phase};
use crate::ringsize::RingSize;
use crate::sync::{Arc, Mutex};
use crate::txfetch::{TxFetch, in_turn, send_or_wait};
use crate::txring::TxFull;
use std::collections::VecDeque;
use wire::QueueId;

/// Which ring a payload came from (the completion's ring field, Figure 5), or, for a segment an app
/// attached, that it is a nicmem buffer held by reference (nmKVS's stable buffer, §4.2.2). A segment's
/// token is this kind in the high 32 bits and the buffer in the low 32.
const PRIMARY: u64 = 1;
const SECONDARY: u64 = 2;
pub(crate) const HELD: u64 = 3;

/// The nicmem NF design; `M` picks the configuration (see the module docs). Use the aliases.
#[derive(Debug)]
pub struct NicMemDesign<const M: u8>;

/// `nicmem-host`.
pub type NicMemHost = NicMemDesign<0>;
/// `nicmem-split`.
pub type NicMemSplit = NicMemDesign<1>;
/// `nmnfv-`.
pub type NmNfvMinus = NicMemDesign<2>;
/// `nmnfv`.
pub type NmNfv = NicMemDesign<3>;

/// A transmit descriptor: the header (a host buffer, or inlined bytes) and the payload.
#[derive(Debug)]
struct TxDesc {
    header: Header,
    /// Ring, buffer and length of the payload.
    payload: Option<(u64, BufId, u32)>,
    /// Its slot in the queue's descriptor memory.
    slot: usize,
}

#[derive(Debug)]
enum Header {
    Buf(BufId, u32),
    Inline(Vec<u8>),
}

/// A queue's transmit descriptors: posted, and completed.
#[derive(Debug)]
struct TxQueue {
    posted: Mutex<VecDeque<TxDesc>>,
    done: Mutex<Vec<TxDesc>>,
    /// The descriptor ring in memory: the n-th descriptor posted is written to and read from slot
    /// n mod its length, 64 B each, at addresses fixed for the run (a growing queue's heap addresses
    /// would depend on what the allocator hands back, and so would the simulated caches).
    ring: Box<[[u64; 8]]>,
    size: RingSize,
    /// The producer index software rings once a burst (mlx5's `mlx5_tx_dbrec`: the UAR register, a posted
    /// MMIO write).
    doorbell: Doorbell,
}

impl TxQueue {
    fn new(size: RingSize) -> TxQueue {
        TxQueue {
            posted: Mutex::default(),
            done: Mutex::default(),
            ring: vec![[0; 8]; size.len()].into_boxed_slice(),
            size,
            doorbell: Doorbell::default(),
        }
    }

    fn slot_addr(&self, slot: usize) -> usize {
        &self.ring[slot] as *const [u64; 8] as usize
    }
}

/// One queue as the NIC sees it.
#[derive(Debug)]
struct DevQueue {
    /// Header ring (whole packets in `nicmem-host`; inline slots in `nmnfv`).
    hdr: DevRing,
    primary: Option<DevRing>,
    secondary: Option<DevRing>,
    cq: CqProducer,
    tx: Arc<TxQueue>,
    /// The header/data split offset, if this queue splits.
    split_at: Option<usize>,
    /// Whether this queue inlines headers.
    inline: bool,
    /// The next descriptor the NIC sends, by free-running index.
    tx_next: u32,
    /// Its reads of the descriptors the doorbell announced: a descriptor holds the header's address, so
    /// "the NIC must first read the descriptor in order to obtain the header's address" (nicmem §4.2.1).
    tx_fetch: TxFetch,
}

impl DevQueue {
    /// Read the descriptors the doorbell announced, all in one request (the ConnectX-5's descriptor fetch
    /// size is not published), beside the reads already on their way ([`TxFetch::fetch`]).
    fn fetch_descriptors<P: Probe>(&mut self, p: &mut P) {
        let tx = &self.tx;
        self.tx_fetch.fetch(p, tx.doorbell.read(), tx.size.get(), tx.size, |p, slot, k| {
            p.touch(tx.slot_addr(slot), 64 * k, Access::Read);
        });
    }

    /// The oldest posted descriptor, if the NIC has read it.
    fn next_descriptor(&mut self) -> Option<TxDesc> {
        if !self.tx_fetch.has(self.tx_next) {
            return None;
        }
        let d = self.tx.posted.lock().unwrap().pop_front()?;
        self.tx_next = self.tx_next.wrapping_add(1);
        Some(d)
    }
}

/// The NIC side.
#[derive(Debug)]
pub struct NicMemDevice {
    queues: Vec<DevQueue>,
    nicmem: Arc<NicMem>,
    host: Arc<Arena>,
    scratch: Vec<u8>,
    spilled: u64,
    /// The queue whose Tx ring the next transmit run serves first (round-robin, as [`crate::txset`]).
    next_tx: usize,
}

/// One core's side.
#[derive(Debug)]
pub struct NicMemDriver {
    hdr: DrvRing,
    primary: Option<DrvRing>,
    secondary: Option<DrvRing>,
    cq: CqConsumer,
    tx: Arc<TxQueue>,
    /// Descriptors this core (the queue's only producer) posted so far.
    tx_posted: usize,
    /// Of those, the ones sent and reclaimed: the ring holds `tx_posted - tx_reclaimed`.
    tx_reclaimed: usize,
    /// What a burst the Tx ring has no room for does ([`IfaceConfig::tx_full`]).
    tx_full: TxFull,
    tx_full_drops: u64,
    inline: bool,
    nicmem: Arc<NicMem>,
    /// nicmem buffers back from packets, waiting to be reposted in the primary ring.
    nic_free: Vec<BufId>,
    returned: Vec<u64>,
    alloc_failures: u64,
}

impl<const M: u8> Design for NicMemDesign<M> {
    const NAME: &'static str = match M {
        0 => "nicmem-host",
        1 => "nicmem-split",
        2 => "nmnfv-",
        _ => "nmnfv",
    };
    type Device = NicMemDevice;
    type Driver = NicMemDriver;

    fn buffers_needed(cfg: &IfaceConfig) -> u32 {
        let per_core = 2 * cfg.ring.len() + cfg.tx_ring.len() + cfg.cache * 3 / 2 + 2 * cfg.burst;
        (cfg.cores * per_core + cfg.burst) as u32
    }

    fn build(cfg: &IfaceConfig, pool: &Arc<SharedPool>) -> Result<(NicMemDevice, Vec<NicMemDriver>), ConfigError> {
        cfg.validate_common()?;
        let o: NicMemConfig = cfg.nicmem;
        let host = pool.arena().clone();
        let room = host.layout().data_room();
        if M > 0 && (o.split_at == 0 || o.split_at > room) {
            return Err(ConfigError::new(
                "nicmem-split",
                format!("the header split offset must be between 1 and the {room} B buffer, got {}", o.split_at),
            ));
        }
        // NIC memory holds data buffers only (their mbuf headers stay in host memory): packed 2 KiB. A
        // queue uses at most its primary ring's worth, its Tx ring's and two bursts in its core's hands.
        let layout = BufLayout::PACKED_2K;
        let wanted = cfg.ring.len() + cfg.tx_ring.len() + 2 * cfg.burst;
        // Split rings on the first `nic_queues` queues; host queues after them (§6.4).
        let nic_queues = if M >= 2 { o.queues.unwrap_or(cfg.cores) } else { 0 };
        if o.queues.is_some() && (M < 2 || nic_queues > cfg.cores) {
            return Err(ConfigError::new(
                "nicmem-queues",
                format!(
                    "{nic_queues} queues with NIC memory: nmnfv and nmnfv- take 0 to the {} cores' queues",
                    cfg.cores
                ),
            ));
        }
        let capacity = match o.capacity {
            NicMemCapacity::Bytes(b) => b,
            NicMemCapacity::Emulated if nic_queues > 0 => nic_queues * wanted * layout.stride(),
            // Without split rings only nmKVS's hot items use NIC memory, and they are sized in items.
            NicMemCapacity::Emulated => PAPER_CAPACITY,
        };
        let nicmem = NicMem::new(capacity, layout).map_err(|e| ConfigError::new("nicmem", e.to_string()))?;
        let per_queue = (nicmem.arena().count() as usize / nic_queues.max(1)).min(wanted);
        // Split rings (§4.1): the primary ring is the configured ring, or what NIC memory fills of it.
        let primary_size = (M >= 2 && per_queue >= 2)
            .then(|| RingSize::new(1 << per_queue.ilog2()).expect("power of two").min(cfg.ring));
        if nic_queues > 0 && primary_size.is_none() {
            return Err(ConfigError::new(
                "nicmem",
                format!("{} of NIC memory gives {nic_queues} queues less than 2 buffers each", o.capacity),
            ));
        }
        let mut queues = Vec::new();
        let mut drivers = Vec::new();
        for c in 0..cfg.cores {
            // A host queue of an nmNFV design keeps whole packets in host buffers, as `nicmem-host`.
            let splits = M == 1 || (M >= 2 && c < nic_queues);
            let primary_size = primary_size.filter(|_| c < nic_queues);
            let inline = M == 3 && splits;
            let ring = |a: &Arc<Arena>, size| rx_ring(size, a.clone(), cfg.prefetch);
            let (hdr_dev, hdr_drv) = ring(&host, cfg.ring);
            let (sec_dev, sec_drv) = if splits { Some(ring(&host, cfg.ring)).unzip() } else { (None, None) };
            let (pri_dev, pri_drv) = primary_size.map(|size| ring(nicmem.arena(), size)).unzip();
            let nic_free = match primary_size {
                Some(_) => nicmem
                    .alloc_nicmem(per_queue * layout.data_room(), c as u16)
                    .map_err(|e| ConfigError::new("nicmem", e.to_string()))?,
                None => Vec::new(),
            };
            let (cq_dev, cq_drv) = completion_ring(cfg.ring, cfg.cq);
            let tx = Arc::new(TxQueue::new(cfg.tx_ring));
            queues.push(DevQueue {
                hdr: hdr_dev,
                primary: pri_dev,
                secondary: sec_dev,
                cq: cq_dev,
                tx: tx.clone(),
                split_at: splits.then_some(o.split_at),
                inline,
                tx_next: 0,
                tx_fetch: TxFetch::default(),
            });
            let mut drv = NicMemDriver {
                hdr: hdr_drv,
                primary: pri_drv,
                secondary: sec_drv,
                cq: cq_drv,
                tx,
                tx_posted: 0,
                tx_reclaimed: 0,
                tx_full: cfg.tx_full,
                tx_full_drops: 0,
                inline,
                nicmem: nicmem.clone(),
                nic_free,
                returned: Vec::new(),
                alloc_failures: 0,
            };
            let core = CoreCtx::new(c as u16, 0, pool);
            drv.refill(&mut NoProbe::default(), &core);
            if drv.alloc_failures > 0 {
                return Err(ConfigError::new("ring", "the buffer pool is too small to fill the rings"));
            }
            drivers.push(drv);
        }
        Ok((NicMemDevice { queues, nicmem, host, scratch: Vec::new(), spilled: 0, next_tx: 0 }, drivers))
    }
}

impl NicMemDevice {
    /// Read what doorbells announced, then send up to `budget` packets whose descriptors the NIC has,
    /// the queues in turn.
    fn transmit_fetched<P: Probe, W: FnMut(&[u8])>(&mut self, p: &mut P, wire: &mut W, budget: usize) -> usize {
        for q in &mut self.queues {
            q.fetch_descriptors(p);
        }
        in_turn(self.queues.len(), self.next_tx, budget, |q, left| self.transmit_queue(p, q, wire, left))
    }

    /// Send up to `budget` packets of queue `q` whose descriptors the NIC has: each packet's header (a host
    /// buffer, or the inlined bytes) and its payload.
    fn transmit_queue<P: Probe, W: FnMut(&[u8])>(&mut self, p: &mut P, q: usize, wire: &mut W, budget: usize) -> usize {
        let q = &mut self.queues[q];
        let mut sent = 0;
        while sent < budget {
            let Some(d) = q.next_descriptor() else { break };
            self.scratch.clear();
            match &d.header {
                Header::Buf(id, len) => {
                    p.touch(self.host.data_addr(*id), *len as usize, Access::Read);
                    self.host.dma_read(*id, *len as usize, |b| self.scratch.extend_from_slice(b));
                }
                Header::Inline(bytes) => self.scratch.extend_from_slice(bytes),
            }
            match d.payload {
                Some((HELD, id, len)) => {
                    p.touch(self.nicmem.arena().data_addr(id), len as usize, Access::Read);
                    self.nicmem.dma_read_held(id, len as usize, |b| self.scratch.extend_from_slice(b));
                }
                Some((which, id, len)) => {
                    let a = if which == PRIMARY { self.nicmem.arena() } else { &self.host };
                    p.touch(a.data_addr(id), len as usize, Access::Read);
                    a.dma_read(id, len as usize, |b| self.scratch.extend_from_slice(b));
                }
                None => {}
            }
            wire(&self.scratch);
            q.tx.done.lock().unwrap().push(d);
            sent += 1;
        }
        sent
    }
}

impl DeviceSide for NicMemDevice {
    fn rx<P: Probe>(&mut self, p: &mut P, queue: QueueId, hash: u32, frame: &[u8]) -> Result<(), DropReason> {
        let q = &mut self.queues[usize::from(queue)];
        if q.cq.is_full() {
            return Err(DropReason::CompletionRingFull);
        }
        if !q.hdr.ready() {
            return Err(DropReason::NoRxDescriptor);
        }
        let h = q.split_at.map_or(frame.len(), |s| s.min(frame.len()));
        let (head, payload) = frame.split_at(h);
        let has_primary = q.primary.is_some();
        // Split rings (§4.1): the primary (nicmem) ring first, the secondary (host) ring when it is empty.
        let target = match (&mut q.primary, &mut q.secondary) {
            _ if payload.is_empty() => None,
            (Some(r), _) if r.ready() => Some((PRIMARY, r)),
            (_, Some(r)) if r.ready() => Some((SECONDARY, r)),
            _ => return Err(DropReason::NoRxDescriptor),
        };
        if head.len() > q.hdr.room() || target.as_ref().is_some_and(|(_, r)| payload.len() > r.room()) {
            return Err(DropReason::TooLong);
        }
        let hslot = q.hdr.fill(p, head, !q.inline);
        let (which, pslot) = match target {
            Some((which, r)) => {
                self.spilled += u64::from(which == SECONDARY && has_primary);
                (which, r.fill(p, payload, true))
            }
            None => (0, 0),
        };
        let w0 = u64::from(hslot) | (h as u64) << 32;
        let w1 = which | u64::from(pslot) << 8 | (payload.len() as u64) << 32;
        q.cq.push(p, [w0, w1, u64::from(hash)], None);
        expire_all(p, self.queues.iter_mut().map(|q| &mut q.cq));
        Ok(())
    }

    fn idle<P: Probe>(&mut self, p: &mut P) {
        close_all(p, self.queues.iter_mut().map(|q| &mut q.cq));
    }

    /// The queues' descriptors are read as doorbells announce them, while the NIC sends those it has read;
    /// with none read, it waits for the first read to arrive ([`crate::txfetch`]).
    fn tx<P: Probe, W: FnMut(&[u8])>(&mut self, p: &mut P, wire: &mut W, budget: usize) -> usize {
        let sent = send_or_wait(
            self,
            p,
            |d, p| d.transmit_fetched(p, wire, budget),
            |d| d.queues.iter().filter_map(|q| q.tx_fetch.waiting(q.tx_next)).min(),
        );
        self.next_tx = (self.next_tx + 1) % self.queues.len();
        sent
    }

    fn occupancy(&self) -> Occupancy {
        self.queues.iter().fold(Occupancy::default(), |o, q| Occupancy {
            used: o.used + u64::from(q.cq.queued()),
            capacity: o.capacity + u64::from(q.cq.size().get()),
        })
    }

    fn tx_pending(&self) -> u64 {
        self.queues.iter().map(|q| q.tx.posted.lock().unwrap().len() as u64).sum()
    }

    fn nicmem(&self) -> Option<&Arc<NicMem>> {
        Some(&self.nicmem)
    }

    fn metrics(&self) -> Metrics {
        let (r, w) = self.nicmem.cpu_accesses();
        Metrics::from([
            ("secondary_ring_packets".into(), self.spilled as f64),
            ("nicmem_cpu_reads".into(), r as f64),
            ("nicmem_cpu_writes".into(), w as f64),
        ])
    }
}

impl NicMemDriver {
    /// Give a payload buffer back to its own ring's supply, or release a held one.
    fn return_payload<P: Probe>(&mut self, p: &mut P, core: &CoreCtx, which: u64, id: BufId) {
        match which {
            PRIMARY => self.nic_free.push(id),
            HELD => self.nicmem.release(id),
            _ => core.free(p, id),
        }
    }

    /// Returned packets' payloads and completed transmissions back to their rings; then repost.
    fn reclaim<P: Probe>(&mut self, p: &mut P, core: &CoreCtx) {
        core.take_returned(&mut self.returned);
        for t in std::mem::take(&mut self.returned) {
            self.return_payload(p, core, t >> 32, BufId(t as u32));
        }
        let done = std::mem::take(&mut *self.tx.done.lock().unwrap());
        self.tx_reclaimed += done.len();
        for d in done {
            // Sent: the buffers are the core's again (`Tx -> Core`).
            if let Header::Buf(id, _) = d.header {
                core.arena().transfer(id, Owner::Tx, Owner::Core);
                core.free(p, id);
            }
            if let Some((which, id, _)) = d.payload {
                match which {
                    HELD => {}
                    PRIMARY => self.nicmem.arena().transfer(id, Owner::Tx, Owner::Core),
                    _ => core.arena().transfer(id, Owner::Tx, Owner::Core),
                }
                self.return_payload(p, core, which, id);
            }
        }
        self.refill(p, core);
    }

    /// Post buffers in every slot that has none: nicmem buffers in the primary ring, fresh host buffers
    /// in the others.
    fn refill<P: Probe>(&mut self, p: &mut P, core: &CoreCtx) {
        if let Some(r) = &mut self.primary {
            while r.has_room() {
                let Some(id) = self.nic_free.pop() else { break };
                r.post(p, id);
            }
            r.doorbell(p);
        }
        for r in [Some(&mut self.hdr), self.secondary.as_mut()].into_iter().flatten() {
            while r.has_room() {
                let Some(id) = core.alloc(p) else {
                    self.alloc_failures += 1;
                    break;
                };
                r.post(p, id);
            }
            r.doorbell(p);
        }
    }
}

impl DriverSide for NicMemDriver {
    fn rx_burst<'c, P: Probe>(&mut self, p: &mut P, core: &'c CoreCtx, out: &mut Vec<Packet<'c>>, max: usize) -> usize {
        in_phase(p, Phase::Rx, |p| {
            self.reclaim(p, core);
            let mut n = 0;
            while n < max {
                let Some([w0, w1, _hash]) = self.cq.poll_full(p) else { break };
                let id = self.hdr.take(w0 as u32);
                let mut pkt = crate::slots::receive(p, core, id, (w0 >> 32) as u32);
                let (which, slot, len) = (w1 & 0xff, (w1 >> 8) as u32 & 0xff_ffff, (w1 >> 32) as u32);
                let ring = match which {
                    PRIMARY => self.primary.as_mut(),
                    SECONDARY => self.secondary.as_mut(),
                    _ => None,
                };
                if let Some(r) = ring {
                    let id = r.take(slot);
                    r.arena().transfer(id, Owner::Posted, Owner::Core);
                    let ptr = std::ptr::NonNull::new(r.arena().data_addr(id) as *mut u8).expect("arena memory");
                    // SAFETY: the buffer was just reclaimed (`Posted -> Core`), so this packet is its only
                    // holder until the token comes back or the transmit path consumes the packet.
                    unsafe { pkt.attach_tail(ptr, len, which << 32 | u64::from(id.0)) };
                }
                out.push(pkt);
                n += 1;
            }
            if n > 0 {
                self.cq.ring_doorbell(p);
                self.refill(p, core);
            }
            n
        })
    }

    fn tx_burst<'c, P: Probe>(&mut self, p: &mut P, core: &'c CoreCtx, pkts: &mut Vec<Packet<'c>>) -> usize {
        in_phase(p, Phase::Tx, |p| {
            self.reclaim(p, core);
            // The Tx ring holds what was posted and not yet reclaimed; what does not fit is dropped or
            // left to the caller, as the runtime says (FastClick's ToDPDKDevice NDESC 1024, BLOCKING).
            let room = self.tx.ring.len() - (self.tx_posted - self.tx_reclaimed);
            let fits = pkts.len().min(room);
            if self.tx_full == TxFull::Drop {
                self.tx_full_drops += (pkts.len() - fits) as u64;
                pkts.truncate(fits);
            }
            let mut descs = Vec::with_capacity(fits);
            for pkt in pkts.drain(..fits) {
                let header_bytes = self.inline.then(|| pkt.to_vec());
                let parts = pkt.into_parts();
                let Backing::Buf(id) = parts.backing else { panic!("nicmem headers are host buffers") };
                let header = match header_bytes {
                    // Header inlining (§4.2.1): the header goes into the descriptor; its buffer is free now.
                    Some(bytes) => {
                        core.free(p, id);
                        Header::Inline(bytes)
                    }
                    None => {
                        core.arena().transfer(id, Owner::Core, Owner::Tx);
                        Header::Buf(id, parts.len)
                    }
                };
                let payload = parts.tail.map(|(token, _, len)| {
                    let (which, id) = (token >> 32, BufId(token as u32));
                    match which {
                        // A held buffer stays with its core; the reference travels with the descriptor.
                        HELD => {}
                        PRIMARY => self.nicmem.arena().transfer(id, Owner::Core, Owner::Tx),
                        _ => core.arena().transfer(id, Owner::Core, Owner::Tx),
                    }
                    (which, id, len)
                });
                let slot = self.tx_posted % self.tx.ring.len();
                self.tx_posted += 1;
                descs.push(TxDesc { header, payload, slot });
            }
            let n = descs.len();
            let mut posted = self.tx.posted.lock().unwrap();
            for d in descs {
                p.touch(self.tx.slot_addr(d.slot), 64, Access::Write);
                posted.push_back(d);
            }
            drop(posted);
            if n > 0 {
                self.tx.doorbell.ring(p, self.tx_posted as u32);
            }
            n
        })
    }

    fn teardown(&mut self, core: &CoreCtx) {
        let p = &mut NoProbe::default();
        self.reclaim(p, core);
        for r in [Some(&mut self.hdr), self.secondary.as_mut()].into_iter().flatten() {
            for id in r.release() {
                core.free(p, id);
            }
        }
        if let Some(r) = &mut self.primary {
            self.nic_free.extend(r.release());
        }
        self.nicmem.dealloc_nicmem(self.nic_free.drain(..));
    }

    fn metrics(&self) -> Metrics {
        Metrics::from([
            ("alloc_failures".into(), self.alloc_failures as f64),
            ("tx_full_drops".into(), self.tx_full_drops as f64),
        ])
    }
}
