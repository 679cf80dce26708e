//! AF_XDP with a shared UMEM in zero-copy mode: the receive path Linux ships for user-space packet
//! processing, which no paper measures. A shipping design, not a paper's.
//!
//! One UMEM, a region of equal chunks, is registered once and shared by the sockets of every queue
//! (`XDP_SHARED_UMEM`, `Documentation/networking/af_xdp.rst`). Each socket has an RX ring; software posts
//! empty chunks on a FILL ring, one per queue ("you have to create a fill ring and a completion ring for
//! each unique netdev,queue_id pair", af_xdp.rst "XDP_SHARED_UMEM bind flag"), or, with `shared_fill`,
//! one for all queues, as sockets bound to one queue id share theirs. The device takes a chunk from the
//! FILL ring, writes the packet at the chunk's headroom (`XDP_PACKET_HEADROOM`, 256 B) and puts a
//! 16-byte descriptor (`struct xdp_desc`: address, length, options) on the socket's RX ring. Software
//! reads the RX ring, processes the packet in place, sends it from there or frees the chunk to its
//! allocator, and posts fresh chunks on the FILL ring in bulk after each burst, as DPDK's af_xdp PMD does
//! (`af_xdp_rx_zc`, `reserve_fill_queue_zc`). The FILL and RX rings are rxBisect's allocation and
//! reception rings (001 §4), with a FILL ring per queue by default; a shared FILL ring is one allocation
//! ring for all queues, whose producers (the cores) serialise on a lock, since every ring is
//! single-producer single-consumer (af_xdp.rst: "the single-producer single-consumer semantics of the
//! rings").
//!
//! The rings are AF_XDP's: an entry array with a producer and a consumer index, each in its own cache
//! line (`net/xdp/xsk_queue.h`, `struct xdp_ring`); the producer writes entries, then its index
//! (release), and reads the consumer's index (acquire) for free room; the consumer reads the producer's
//! index (acquire), the entries, then writes its own (release). No done bits: [`XskRing`].
//!
//! What this model leaves out: in Linux the kernel driver's NAPI poll, not the NIC, moves chunks from the
//! FILL ring to the NIC's own descriptor ring and descriptors from the NIC's completions to the RX ring
//! (`xsk_buff_alloc`, the XDP program's `XDP_REDIRECT`, `xsk_rcv_zc`), on a core. rxlab's device side does
//! that work as if the NIC served the rings, so the cores' cycles here are a lower bound on AF_XDP's.
//! The TX side keeps rxlab's Tx ring, which sends chunks from where they lie (as AF_XDP's TX and
//! COMPLETION rings do).
//!
//! Copy mode (`XDP_COPY`, `zero_copy` off): the NIC receives into the kernel driver's own pages, a ring of
//! them per queue that the page pool recycles in place, and writes a completion ([`crate::cqring`], as
//! privRing's NIC does); the kernel, running its NAPI poll on the socket's core (busy polling), takes a
//! chunk from the FILL ring, copies the packet into it (`xsk_rcv` -> `xsk_copy_xdp`), reposts the page and
//! puts the descriptor on the RX ring, which the application then reads. Here the driver side does that
//! work, so its cycles and cache traffic are charged to the core; the FILL ring is then consumed by the
//! cores (under its lock if shared). A packet finding the FILL ring empty stays in the kernel's ring
//! until a chunk comes, so drops happen at the NIC.

// Lending a chunk to a packet (`Packet::lent`) is the one unsafe step; its SAFETY comment says why.
#![allow(unsafe_code)]

use crate::arena::{Arena, BufId, BufLayout, Owner};
use crate::core::CoreCtx;
use crate::cqring::{
    Completion, CqConsumer, CqProducer, Mini, close_all, completion_ring, compression_metrics, expire_all,
};
use crate::desc::{DescPrefetch, DescRing};
use crate::design::{ConfigError, Design, DeviceSide, DriverSide, DropReason, IfaceConfig, Metrics, Occupancy};
use crate::mbuf::BufKind;
use crate::packet::Packet;
use crate::pool::{PoolCache, SharedPool};
use crate::probe::{Access, NoProbe, Phase, Probe, in_phase};
use crate::ringsize::RingSize;
use crate::slots;
use crate::spinlock::SpinLock;
use crate::sync::{Arc, AtomicU32, AtomicU64, AtomicUsize, Ordering};
use crate::txring::TxDriver;
use crate::txset::TxSet;
use std::ptr::NonNull;
use wire::QueueId;

/// `XDP_PACKET_HEADROOM`: bytes the kernel keeps before the packet in a chunk.
const HEADROOM: usize = 256;
/// Smallest chunk (`XDP_UMEM_MIN_CHUNK_SIZE`) and the largest, the page size (`xdp_umem_reg`).
const MIN_CHUNK: u32 = 2048;
const MAX_CHUNK: u32 = 4096;
/// FILL entries the device reads at once: one cache line of 8-byte addresses.
const FILL_LINE: u32 = 8;

/// AF_XDP's options (`IfaceConfig::afxdp`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AfXdpConfig {
    /// Bytes per UMEM chunk (`xdp_umem_reg.chunk_size`): a power of two from 2 KiB to the page size in
    /// aligned mode.
    pub chunk_size: u32,
    /// Entries of each FILL ring (`fill_size`); a power of two.
    pub fill: RingSize,
    /// One FILL ring for every queue, its producers serialised by a lock, instead of one per queue.
    pub shared_fill: bool,
    /// Zero-copy (`XDP_ZEROCOPY`): the NIC writes into UMEM chunks; off, the kernel copies from its own
    /// pages (`XDP_COPY`).
    pub zero_copy: bool,
}

impl Default for AfXdpConfig {
    /// libxdp's defaults (`xsk.h`): `XSK_UMEM__DEFAULT_FRAME_SIZE` 4096, `XSK_RING_PROD__DEFAULT_NUM_DESCS`
    /// 2048 FILL entries; a FILL ring per queue. The RX ring is `--ring`.
    fn default() -> Self {
        AfXdpConfig {
            chunk_size: 4096,
            fill: RingSize::new(2048).expect("power of two"),
            shared_fill: false,
            zero_copy: true,
        }
    }
}

impl AfXdpConfig {
    /// Check the options against `cfg`; the error names the option and the fix.
    pub fn check(&self, cfg: &IfaceConfig) -> Result<(), ConfigError> {
        if !self.chunk_size.is_power_of_two() || !(MIN_CHUNK..=MAX_CHUNK).contains(&self.chunk_size) {
            return Err(ConfigError::new(
                "afxdp-chunk",
                format!(
                    "UMEM chunks are a power of two from {MIN_CHUNK} to the {MAX_CHUNK} B page (xdp_umem_reg), got {}",
                    self.chunk_size
                ),
            ));
        }
        if (self.chunk_size as usize) < HEADROOM + 64 {
            return Err(ConfigError::new("afxdp-chunk", "a chunk must hold the 256 B XDP headroom and a packet"));
        }
        if self.fill.len() < cfg.burst {
            return Err(ConfigError::new(
                "afxdp-fill",
                format!(
                    "a FILL ring of {} entries cannot take a burst of {}; use at least --burst",
                    self.fill, cfg.burst
                ),
            ));
        }
        Ok(())
    }

    /// The UMEM's chunk layout: the headroom (its first line standing for the chunk's metadata), then data.
    fn layout(&self) -> BufLayout {
        BufLayout { kind: BufKind::Packed { stride: self.chunk_size as usize }, priv_len: HEADROOM - 64 }
    }

    /// The kernel's receive pages in copy mode: a page each, the XDP headroom first.
    fn page_layout() -> BufLayout {
        BufLayout { kind: BufKind::Packed { stride: 4096 }, priv_len: HEADROOM - 64 }
    }

    /// FILL rings: one per queue, or one.
    fn fill_rings(&self, cores: usize) -> usize {
        if self.shared_fill { 1 } else { cores }
    }
}

/// A producer or consumer index in its own cache line (`____cacheline_aligned_in_smp`).
#[derive(Debug, Default)]
#[repr(align(64))]
struct Index(AtomicU32);

/// One AF_XDP ring: `size` entries of `words` 8-byte words (FILL: an address; RX: `struct xdp_desc`),
/// a producer and a consumer index (`net/xdp/xsk_queue.h`). Single producer, single consumer: callers
/// that share a side serialise it themselves.
#[derive(Debug)]
pub struct XskRing {
    size: RingSize,
    words: usize,
    producer: Index,
    consumer: Index,
    entries: Box<[AtomicU64]>,
}

impl XskRing {
    /// An empty ring of `size` entries of `words` words.
    pub fn new(size: RingSize, words: usize) -> XskRing {
        XskRing {
            size,
            words,
            producer: Index::default(),
            consumer: Index::default(),
            entries: (0..size.len() * words).map(|_| AtomicU64::new(0)).collect(),
        }
    }

    /// Entries.
    pub fn size(&self) -> RingSize {
        self.size
    }

    #[inline]
    fn word(&self, i: u32, w: usize) -> &AtomicU64 {
        &self.entries[self.size.slot(i) * self.words + w]
    }

    #[inline]
    fn entry_addr(&self, i: u32) -> usize {
        self.word(i, 0) as *const AtomicU64 as usize
    }

    /// Producer: the entries it may write before the consumer frees more (`xsk_prod_nb_free`), and its
    /// index. Acquire on the consumer's index: the consumer's reads of the entries it released are done.
    /// The producer's own index is read relaxed: only the producer (or a lock holder) writes it.
    #[inline]
    pub fn room<P: Probe>(&self, p: &mut P) -> (u32, u32) {
        p.touch(&self.consumer as *const Index as usize, 4, Access::Read);
        let cons = self.consumer.0.load(Ordering::Acquire);
        let prod = self.producer.0.load(Ordering::Relaxed);
        (self.size.get() - prod.wrapping_sub(cons), prod)
    }

    /// Producer: write entry `i` (reserved with [`XskRing::room`]).
    #[inline]
    pub fn write<P: Probe>(&self, p: &mut P, i: u32, words: &[u64]) {
        p.touch(self.entry_addr(i), 8 * self.words, Access::Write);
        for (w, v) in words.iter().enumerate() {
            self.word(i, w).store(*v, Ordering::Relaxed);
        }
    }

    /// Producer: publish the entries written up to `prod` (`xsk_ring_prod__submit`). Release: the
    /// entries are visible to the consumer that acquires the index.
    #[inline]
    pub fn submit<P: Probe>(&self, p: &mut P, prod: u32) {
        p.touch(&self.producer as *const Index as usize, 4, Access::Write);
        self.producer.0.store(prod, Ordering::Release);
    }

    /// Consumer at `cons`: entries ready to read (`xsk_ring_cons__peek`). Acquire on the producer's index.
    #[inline]
    pub fn ready<P: Probe>(&self, p: &mut P, cons: u32) -> u32 {
        p.touch(&self.producer as *const Index as usize, 4, Access::Read);
        self.producer.0.load(Ordering::Acquire).wrapping_sub(cons)
    }

    /// Consumer: word `w` of entry `i`, which [`XskRing::ready`] said is there.
    #[inline]
    pub fn read(&self, i: u32, w: usize) -> u64 {
        self.word(i, w).load(Ordering::Relaxed)
    }

    /// Consumer: free the entries before `cons` (`xsk_ring_cons__release`). Release: this side's reads
    /// of them are done before the producer overwrites them.
    #[inline]
    pub fn release<P: Probe>(&self, p: &mut P, cons: u32) {
        p.touch(&self.consumer as *const Index as usize, 4, Access::Write);
        self.consumer.0.store(cons, Ordering::Release);
    }

    /// Producer: the consumer's index (acquire, as in [`XskRing::room`]), for a producer that keeps its
    /// own position.
    #[inline]
    pub fn consumed<P: Probe>(&self, p: &mut P) -> u32 {
        p.touch(&self.consumer as *const Index as usize, 4, Access::Read);
        self.consumer.0.load(Ordering::Acquire)
    }
}

/// A FILL ring, the lock its producers take if several cores share it, and the device's reading state.
#[derive(Debug)]
struct Fill {
    ring: XskRing,
    lock: Option<SpinLock>,
    /// Entries the device has taken (its consumer position; published a line at a time). Device-side.
    taken: AtomicU32,
}

/// The UMEM: its chunks, their allocator, and the FILL rings.
#[derive(Debug)]
pub struct Umem {
    arena: Arc<Arena>,
    pool: Arc<SharedPool>,
    fills: Vec<Arc<Fill>>,
    /// Drivers not yet torn down; the last releases a shared FILL ring and checks the UMEM is whole.
    drivers_left: AtomicUsize,
}

impl Umem {
    /// The chunks' arena.
    pub fn arena(&self) -> &Arc<Arena> {
        &self.arena
    }
}

/// One socket's RX ring as the device sees it.
#[derive(Debug)]
struct DeviceQueue {
    rx: Arc<XskRing>,
    /// Entries written and published (the producer index).
    prod: u32,
    fill: Arc<Fill>,
    /// Copy mode: the kernel driver's ring of pages.
    kernel: Option<KernelQueue>,
}

/// Copy mode, the NIC's side of the kernel driver's receive ring: pages it writes and completions.
#[derive(Debug)]
struct KernelQueue {
    ring: Arc<DescRing>,
    head: u32,
    prefetch: DescPrefetch,
    cq: CqProducer,
}

/// Copy mode, the kernel's side of it on the socket's core.
#[derive(Debug)]
struct KernelRx {
    ring: Arc<DescRing>,
    /// Pages posted (the ring's doorbell value).
    tail: u32,
    cq: CqConsumer,
}

/// AF_XDP's device side (the NIC and the kernel's zero-copy path together).
#[derive(Debug)]
pub struct AfXdpDevice {
    arena: Arc<Arena>,
    umem: Arc<Umem>,
    /// Copy mode: the kernel's receive pages.
    pages: Option<Arc<Arena>>,
    queues: Vec<DeviceQueue>,
    tx: TxSet,
    fill_reads: u64,
}

/// AF_XDP's driver side for one core: DPDK's af_xdp PMD in zero-copy mode, whose UMEM is its mempool
/// (each chunk an mbuf, its header in the chunk's headroom).
#[derive(Debug)]
pub struct AfXdpDriver {
    umem: Arc<Umem>,
    rx: Arc<XskRing>,
    /// RX entries consumed (the consumer index).
    cons: u32,
    fill: Arc<Fill>,
    /// Fewest free FILL entries worth a refill.
    batch: u32,
    tx: TxDriver,
    /// This core's cache of UMEM chunks.
    cache: PoolCache,
    returned: Vec<u64>,
    fill_failures: u64,
    refills: u64,
    /// Copy mode: the kernel's ring and pages of this queue, and bursts cut short by an empty FILL ring.
    kernel: Option<(KernelRx, Arc<Arena>)>,
    fill_empty: u64,
}

impl DeviceSide for AfXdpDevice {
    #[inline]
    fn rx<P: Probe>(&mut self, p: &mut P, queue: QueueId, hash: u32, frame: &[u8]) -> Result<(), DropReason> {
        let q = &mut self.queues[usize::from(queue)];
        if frame.len() > self.umem.arena.layout().data_room() {
            return Err(DropReason::TooLong);
        }
        if let (Some(k), Some(pages)) = (&mut q.kernel, &self.pages) {
            // Copy mode: the NIC receives into the kernel's next page, as privRing's does into a buffer.
            let tail = k.ring.doorbell.read();
            if k.head == tail {
                return Err(DropReason::NoRxDescriptor);
            }
            if k.cq.is_full() {
                return Err(DropReason::CompletionRingFull);
            }
            let d = k.prefetch.get(p, &k.ring, k.head, tail);
            slots::dma_into(p, pages, d, frame)?;
            let (slot, len) = (k.ring.size().slot(k.head), frame.len());
            k.cq.push(p, [slot as u64 | (len as u64) << 32, u64::from(hash), 0], Some(Mini { len: len as u32, hash }));
            k.head = k.head.wrapping_add(1);
            expire_all(p, self.queues.iter_mut().filter_map(|q| q.kernel.as_mut().map(|k| &mut k.cq)));
            return Ok(());
        }
        // RX ring full (the kernel's `rx_ring_full`): room is read from the consumer's index.
        if q.prod.wrapping_sub(q.rx.consumed(p)) >= q.rx.size().get() {
            return Err(DropReason::CompletionRingFull);
        }
        // A chunk from the FILL ring (empty: `rx_fill_ring_empty_descs`), read a line at a time.
        let fill = &q.fill;
        let taken = fill.taken.load(Ordering::Relaxed);
        if fill.ring.ready(p, taken) == 0 {
            return Err(DropReason::NoRxDescriptor);
        }
        if taken.is_multiple_of(FILL_LINE) {
            p.touch(fill.ring.entry_addr(taken), 8 * FILL_LINE as usize, Access::Read);
            self.fill_reads += 1;
        }
        let addr = fill.ring.read(taken, 0) as usize;
        fill.taken.store(taken.wrapping_add(1), Ordering::Relaxed);
        // The consumer index is published a line at a time (or the ring, if smaller).
        if (taken + 1).is_multiple_of(FILL_LINE.min(fill.ring.size().get())) {
            fill.ring.release(p, taken.wrapping_add(1));
        }
        let arena = &self.umem.arena;
        let id = arena.id_of(addr).expect("a FILL entry points outside the UMEM");
        p.touch(addr, frame.len(), Access::Write);
        arena.dma_write(id, 0, frame);
        // Each descriptor is published at once: the kernel flushes its RX entries at the end of every NAPI
        // poll (`xsk_flush`), which under light load holds one packet.
        q.rx.write(p, q.prod, &[addr as u64, frame.len() as u64]);
        q.prod = q.prod.wrapping_add(1);
        q.rx.submit(p, q.prod);
        Ok(())
    }

    /// Publish how far the FILL rings have been read (the device has nothing else to do).
    fn idle<P: Probe>(&mut self, p: &mut P) {
        close_all(p, self.queues.iter_mut().filter_map(|q| q.kernel.as_mut().map(|k| &mut k.cq)));
        for f in &self.umem.fills {
            f.ring.release(p, f.taken.load(Ordering::Relaxed));
        }
    }

    fn tx<P: Probe, W: FnMut(&[u8])>(&mut self, p: &mut P, wire: &mut W, budget: usize) -> usize {
        self.tx.transmit(p, &self.arena, wire, budget)
    }

    fn occupancy(&self) -> Occupancy {
        self.queues.iter().fold(Occupancy::default(), |o, q| Occupancy {
            used: o.used
                + u64::from(q.prod.wrapping_sub(q.rx.consumer.0.load(Ordering::Acquire)))
                + q.kernel.as_ref().map_or(0, |k| u64::from(k.cq.queued())),
            capacity: o.capacity + u64::from(q.rx.size().get()),
        })
    }

    fn tx_pending(&self) -> u64 {
        self.tx.pending()
    }

    fn metrics(&self) -> Metrics {
        let mut m = Metrics::from([("fill_line_reads".into(), self.fill_reads as f64)]);
        if self.pages.is_some() {
            m.extend(compression_metrics(self.queues.iter().filter_map(|q| q.kernel.as_ref().map(|k| &k.cq))));
        }
        m
    }

    fn data_regions(&self) -> Vec<std::ops::Range<usize>> {
        let region = |a: &Arena| a.base_addr()..a.base_addr() + a.size();
        std::iter::once(region(&self.umem.arena)).chain(self.pages.as_deref().map(region)).collect()
    }
}

impl DriverSide for AfXdpDriver {
    /// DPDK's `af_xdp_rx_zc`: take the RX ring's descriptors, then post fresh chunks on the FILL ring.
    #[inline]
    fn rx_burst<'c, P: Probe>(&mut self, p: &mut P, core: &'c CoreCtx, out: &mut Vec<Packet<'c>>, max: usize) -> usize {
        in_phase(p, Phase::Rx, |p| {
            self.collect(p, core);
            if self.kernel.is_some() {
                let n = self.copy_burst(p, core, out, max);
                self.refill(p);
                return n;
            }
            let n = (self.rx.ready(p, self.cons) as usize).min(max);
            if n > 0 {
                let arena = &self.umem.arena;
                p.touch(self.rx.entry_addr(self.cons), 16 * n, Access::Read);
                for k in 0..n as u32 {
                    let i = self.cons.wrapping_add(k);
                    let (addr, len) = (self.rx.read(i, 0) as usize, self.rx.read(i, 1) as u32);
                    let id = arena.id_of(addr).expect("an RX descriptor points outside the UMEM");
                    arena.transfer(id, Owner::Posted, Owner::Core);
                    // The PMD's mbuf header lives in the chunk's headroom (its UMEM is the mempool).
                    p.touch(arena.meta_addr(id), 64, Access::Write);
                    p.pmd_packet();
                    let ptr = NonNull::new(addr as *mut u8).expect("arena memory is not null");
                    // SAFETY: the chunk's data room is this packet's alone until its token comes back: the
                    // device wrote it before the RX descriptor this core acquired and takes it again only
                    // from the FILL ring, where it goes after the token's return; the Tx ring reads it
                    // only once the packet is handed to it.
                    out.push(unsafe {
                        Packet::lent(core, ptr, len, arena.layout().data_room() as u32, u64::from(id.0))
                    });
                }
                self.cons = self.cons.wrapping_add(n as u32);
                self.rx.release(p, self.cons);
            }
            self.refill(p);
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
        self.collect(p, core);
        if self.fill.lock.is_none() {
            let fill = self.fill.clone();
            self.release_fill(&fill);
        }
        if let Some((k, pages)) = &self.kernel {
            // The kernel's pages go back when its queue stops.
            for i in 0..k.ring.size().len() {
                let addr = k.ring.desc(i).addr.load(Ordering::Relaxed) as usize;
                let id = pages.id_of(addr).expect("a kernel page");
                pages.transfer(id, Owner::Posted, Owner::Core);
                pages.transfer(id, Owner::Core, Owner::Free);
            }
        }
        if self.umem.drivers_left.fetch_sub(1, Ordering::AcqRel) == 1 {
            for f in self.umem.fills.clone().iter().filter(|f| f.lock.is_some()) {
                self.release_fill(f);
            }
            self.cache.drain();
            let (census, count) = (self.umem.arena.census(), self.umem.arena.count());
            assert_eq!(
                census[0], count,
                "invariant 'no-leak' failed: {} of {count} UMEM chunks are free after teardown (held {}, posted {})",
                census[0], census[1], census[2]
            );
        }
        self.cache.drain();
    }

    fn metrics(&self) -> Metrics {
        Metrics::from([
            ("fill_failures".into(), self.fill_failures as f64),
            ("fill_refills".into(), self.refills as f64),
            ("fill_empty".into(), self.fill_empty as f64),
            ("tx_full_drops".into(), self.tx.full_drops() as f64),
            ("doorbells".into(), self.tx.doorbell_writes() as f64),
        ])
    }
}

impl AfXdpDriver {
    /// Copy mode: the kernel's NAPI poll in busy-poll mode on this core (`xsk_rcv` -> `xsk_copy_xdp`),
    /// then the application's read of the RX ring: per completion, a chunk from the FILL ring, the packet
    /// copied from the page into it, the page reposted in place, the RX descriptor written and read.
    fn copy_burst<'c, P: Probe>(
        &mut self,
        p: &mut P,
        core: &'c CoreCtx,
        out: &mut Vec<Packet<'c>>,
        max: usize,
    ) -> usize {
        let Some((k, pages)) = &mut self.kernel else { return 0 };
        let (arena, size) = (&self.umem.arena, k.ring.size());
        let mut n = 0;
        while n < max && k.cq.ready() {
            let Some(addr) = take_fill(p, &self.fill) else {
                self.fill_empty += 1;
                break;
            };
            let at = size.slot(k.cq.consumed());
            let (slot, len) = match k.cq.poll(p).expect("a ready completion") {
                Completion::Full([w0, _hash, _]) => ((w0 & 0xffff_ffff) as usize, (w0 >> 32) as u32),
                Completion::Mini(m) => (at, m.len),
            };
            let page_addr = k.ring.desc(slot).addr.load(Ordering::Relaxed) as usize;
            let page = pages.id_of(page_addr).expect("a kernel page");
            let id = arena.id_of(addr as usize).expect("a FILL entry points outside the UMEM");
            arena.transfer(id, Owner::Posted, Owner::Core);
            p.touch(page_addr, len as usize, Access::Read);
            p.touch(addr as usize, len as usize, Access::Write);
            let ptr = NonNull::new(addr as *mut u8).expect("arena memory is not null");
            // SAFETY: as in the zero-copy path: the chunk, taken from the FILL ring and now held by this
            // core, is this packet's alone until its token comes back.
            let mut pkt = unsafe { Packet::lent(core, ptr, len, arena.layout().data_room() as u32, u64::from(id.0)) };
            pages.read_at(page, 0, len as usize, |src| pkt.copy_from_slice(src));
            k.ring.post(p, slot, page_addr, pages.layout().data_room() as u32);
            p.touch(self.rx.entry_addr(self.cons), 16, Access::Write);
            p.touch(self.rx.entry_addr(self.cons), 16, Access::Read);
            self.cons = self.cons.wrapping_add(1);
            p.touch(arena.meta_addr(id), 64, Access::Write);
            p.pmd_packet();
            out.push(pkt);
            n += 1;
        }
        if n > 0 {
            k.cq.ring_doorbell(p);
            k.tail = k.tail.wrapping_add(n as u32);
            k.ring.doorbell.ring(p, k.tail);
        }
        n
    }

    /// Chunks of packets freed or sent since the last call go back to the allocator.
    #[inline]
    fn collect<P: Probe>(&mut self, p: &mut P, core: &CoreCtx) {
        core.take_returned(&mut self.returned);
        for token in self.returned.drain(..) {
            self.cache.free(p, BufId(token as u32));
        }
    }

    /// Post fresh chunks on the FILL ring once a batch's worth of entries is free
    /// (`reserve_fill_queue_zc`: allocate in bulk, write the addresses, submit once), under the FILL
    /// ring's lock if cores share it.
    #[inline]
    fn refill<P: Probe>(&mut self, p: &mut P) {
        let (fill, cache, batch) = (&self.fill, &mut self.cache, self.batch);
        let mut post = |p: &mut P| -> Result<u32, ()> {
            let (room, prod) = fill.ring.room(p);
            if room < batch {
                return Ok(0);
            }
            let arena = cache.arena().clone();
            for k in 0..room {
                let Some(id) = cache.alloc(p) else {
                    if k > 0 {
                        fill.ring.submit(p, prod.wrapping_add(k));
                    }
                    return Err(());
                };
                arena.transfer(id, Owner::Core, Owner::Posted);
                fill.ring.write(p, prod.wrapping_add(k), &[arena.data_addr(id) as u64]);
            }
            fill.ring.submit(p, prod.wrapping_add(room));
            Ok(room)
        };
        let r = match &fill.lock {
            Some(lock) => lock.with(p, post),
            None => post(p),
        };
        match r {
            Ok(0) => {}
            Ok(_) => self.refills += 1,
            Err(()) => self.fill_failures += 1,
        }
    }

    /// Take back the chunks `fill` still holds (teardown, after the run drained).
    fn release_fill(&mut self, fill: &Arc<Fill>) {
        let p = &mut NoProbe::default();
        let arena = self.umem.arena.clone();
        let (taken, prod) = (fill.taken.load(Ordering::Relaxed), fill.ring.producer.0.load(Ordering::Acquire));
        for i in (0..prod.wrapping_sub(taken)).map(|k| taken.wrapping_add(k)) {
            let id = arena.id_of(fill.ring.read(i, 0) as usize).expect("a FILL entry in the UMEM");
            arena.transfer(id, Owner::Posted, Owner::Core);
            self.cache.free(p, id);
        }
        fill.taken.store(prod, Ordering::Relaxed);
        fill.ring.release(p, prod);
    }
}

/// Copy mode: the kernel takes one chunk from `fill` for a packet (`xskq_cons_peek_addr`), under the
/// ring's lock if cores share it.
fn take_fill<P: Probe>(p: &mut P, fill: &Fill) -> Option<u64> {
    let take = |p: &mut P| {
        let taken = fill.taken.load(Ordering::Relaxed);
        if fill.ring.ready(p, taken) == 0 {
            return None;
        }
        p.touch(fill.ring.entry_addr(taken), 8, Access::Read);
        let addr = fill.ring.read(taken, 0);
        fill.taken.store(taken.wrapping_add(1), Ordering::Relaxed);
        fill.ring.release(p, taken.wrapping_add(1));
        Some(addr)
    };
    match &fill.lock {
        Some(lock) => lock.with(p, take),
        None => take(p),
    }
}

/// The AF_XDP design.
#[derive(Debug)]
pub struct AfXdp;

impl AfXdp {
    /// UMEM chunks: every FILL ring full, and per core an RX ring, a Tx ring, a cache and bursts' worth.
    fn chunks(cfg: &IfaceConfig) -> u32 {
        let a = cfg.afxdp;
        let per_core = cfg.ring.len() + cfg.tx_ring.len() + cfg.cache * 3 / 2 + 2 * cfg.burst;
        (a.fill_rings(cfg.cores) * a.fill.len() + cfg.cores * per_core + cfg.burst) as u32
    }
}

impl Design for AfXdp {
    const NAME: &'static str = "afxdp";
    type Device = AfXdpDevice;
    type Driver = AfXdpDriver;

    /// Packets live in the UMEM; the mbuf pool serves only packets apps build (a response, a copy).
    fn buffers_needed(cfg: &IfaceConfig) -> u32 {
        (cfg.cores * (cfg.tx_ring.len() + cfg.cache * 3 / 2 + 2 * cfg.burst) + cfg.burst) as u32
    }

    fn build(cfg: &IfaceConfig, pool: &Arc<SharedPool>) -> Result<(AfXdpDevice, Vec<AfXdpDriver>), ConfigError> {
        cfg.validate_common()?;
        let a = cfg.afxdp;
        a.check(cfg)?;
        let arena = Arena::new("umem", AfXdp::chunks(cfg), a.layout())
            .map_err(|e| ConfigError::new("afxdp-chunk", e.to_string()))?;
        let arena = Arc::new(arena);
        let fills: Vec<Arc<Fill>> = (0..a.fill_rings(cfg.cores))
            .map(|_| {
                Arc::new(Fill {
                    ring: XskRing::new(a.fill, 1),
                    lock: a.shared_fill.then(SpinLock::new),
                    taken: AtomicU32::new(0),
                })
            })
            .collect();
        let umem = Arc::new(Umem {
            pool: SharedPool::new(arena.clone()),
            arena,
            fills,
            drivers_left: AtomicUsize::new(cfg.cores),
        });
        let (mut tx, tx_drivers) = TxSet::new(cfg);
        tx.lend_from(umem.arena.clone());
        let pages = match a.zero_copy {
            true => None,
            false => Some(Arc::new(
                Arena::new("kernel pages", (cfg.cores * cfg.ring.len()) as u32, AfXdpConfig::page_layout())
                    .map_err(|e| ConfigError::new("ring", e.to_string()))?,
            )),
        };
        let (mut queues, mut drivers) = (Vec::with_capacity(cfg.cores), Vec::with_capacity(cfg.cores));
        for (core, tx) in tx_drivers.into_iter().enumerate() {
            let rx = Arc::new(XskRing::new(cfg.ring, 2));
            let fill = umem.fills[if a.shared_fill { 0 } else { core }].clone();
            let (kernel, kernel_rx) = match &pages {
                None => (None, None),
                Some(pages) => {
                    // The kernel driver's ring, each slot its own page for the run (the page pool recycles
                    // a page in place once its packet is copied out).
                    let ring = Arc::new(DescRing::new(cfg.ring));
                    let np = &mut NoProbe::default();
                    for i in 0..cfg.ring.len() {
                        let id = BufId((core * cfg.ring.len() + i) as u32);
                        pages.take_free(id, core as u16);
                        pages.transfer(id, Owner::Core, Owner::Posted);
                        ring.post(np, i, pages.data_addr(id), pages.layout().data_room() as u32);
                    }
                    ring.doorbell.ring(np, cfg.ring.get());
                    let (cq_dev, cq) = completion_ring(cfg.ring, cfg.cq);
                    let prefetch = DescPrefetch::new(cfg.prefetch);
                    (
                        Some(KernelQueue { ring: ring.clone(), head: 0, prefetch, cq: cq_dev }),
                        Some((KernelRx { ring, tail: cfg.ring.get(), cq }, pages.clone())),
                    )
                }
            };
            queues.push(DeviceQueue { rx: rx.clone(), prod: 0, fill: fill.clone(), kernel });
            let mut d = AfXdpDriver {
                umem: umem.clone(),
                rx,
                cons: 0,
                fill,
                batch: cfg.burst as u32,
                tx,
                cache: PoolCache::new(core as u16, cfg.cache, umem.pool.clone()),
                returned: Vec::new(),
                fill_failures: 0,
                refills: 0,
                kernel: kernel_rx,
                fill_empty: 0,
            };
            // Fill the FILL ring before the socket starts (xdpsock, DPDK's `reserve_fill_queue` at setup).
            d.refill(&mut NoProbe::default());
            if d.fill_failures > 0 {
                return Err(ConfigError::new("afxdp-fill", "the UMEM is too small to fill the FILL rings"));
            }
            d.refills = 0;
            drivers.push(d);
        }
        let device = AfXdpDevice { arena: pool.arena().clone(), umem, pages, queues, tx, fill_reads: 0 };
        Ok((device, drivers))
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Any interleaving of reserving, writing, submitting, peeking, reading and releasing matches a
        /// VecDeque oracle across many wraps: the producer never overwrites an entry the consumer has
        /// not released, and the consumer sees every entry once, in order.
        #[test]
        fn ring_matches_a_queue(steps in proptest::collection::vec((0u8..4, 1u32..5), 0..400), size in 1u32..4) {
            let ring = XskRing::new(RingSize::new(1 << size).unwrap(), 2);
            let p = &mut NoProbe::default();
            let (mut oracle, mut next, mut cons, mut written) = (std::collections::VecDeque::new(), 0u64, 0u32, 0u32);
            for (op, n) in steps {
                match op {
                    0 => {
                        // Write up to n entries into the room (less what is written and not submitted).
                        let (room, prod) = ring.room(p);
                        let k = n.min(room - written.wrapping_sub(prod));
                        for j in 0..k {
                            ring.write(p, written.wrapping_add(j), &[next, !next]);
                            oracle.push_back(next);
                            next += 1;
                        }
                        written = written.wrapping_add(k);
                    }
                    1 => ring.submit(p, written),
                    2 => {
                        let ready = ring.ready(p, cons);
                        prop_assert!(ready as usize <= oracle.len());
                        for _ in 0..ready.min(n) {
                            let want = oracle.pop_front().unwrap();
                            prop_assert_eq!((ring.read(cons, 0), ring.read(cons, 1)), (want, !want));
                            cons = cons.wrapping_add(1);
                        }
                    }
                    _ => ring.release(p, cons),
                }
                let used = ring.producer.0.load(Ordering::Relaxed).wrapping_sub(ring.consumer.0.load(Ordering::Relaxed));
                prop_assert!(used <= ring.size().get());
            }
        }
    }
}

#[cfg(all(test, loom))]
mod loom_tests {
    use super::*;

    /// One producer writes four entries through a two-entry ring while the consumer reads them: the
    /// indices' release/acquire pairs order every entry's words, and the producer never overwrites an
    /// entry before the consumer has released it.
    #[test]
    fn ring_publication() {
        loom::model(|| {
            let ring = Arc::new(XskRing::new(RingSize::new(2).unwrap(), 2));
            let r = ring.clone();
            let producer = loom::thread::spawn(move || {
                let p = &mut NoProbe::new();
                let mut next = 0u64;
                while next < 4 {
                    let (room, prod) = r.room(p);
                    if room == 0 {
                        loom::thread::yield_now();
                        continue;
                    }
                    r.write(p, prod, &[next, next + 10]);
                    r.submit(p, prod.wrapping_add(1));
                    next += 1;
                }
            });
            let p = &mut NoProbe::new();
            let mut cons = 0u32;
            while cons < 4 {
                if ring.ready(p, cons) == 0 {
                    loom::thread::yield_now();
                    continue;
                }
                assert_eq!((ring.read(cons, 0), ring.read(cons, 1)), (u64::from(cons), u64::from(cons) + 10));
                cons += 1;
                ring.release(p, cons);
            }
            producer.join().unwrap();
        });
    }

    /// Two cores post chunks on a shared FILL ring under its lock while the device takes them: every
    /// posted chunk is taken once, and no core's entry is lost to another's concurrent reservation.
    #[test]
    fn shared_fill_ring() {
        let mut builder = loom::model::Builder::new();
        builder.preemption_bound = Some(2);
        builder.check(|| {
            let fill = Arc::new(Fill {
                ring: XskRing::new(RingSize::new(2).unwrap(), 1),
                lock: Some(SpinLock::new()),
                taken: AtomicU32::new(0),
            });
            let cores: Vec<_> = (0..2u64)
                .map(|c| {
                    let f = fill.clone();
                    loom::thread::spawn(move || {
                        let p = &mut NoProbe::new();
                        let lock = f.lock.as_ref().unwrap();
                        // Two entries, two posts: there is always room.
                        lock.with(p, |p| {
                            let (room, prod) = f.ring.room(p);
                            assert!(room > 0);
                            f.ring.write(p, prod, &[100 + c]);
                            f.ring.submit(p, prod.wrapping_add(1));
                        });
                    })
                })
                .collect();
            // The device takes what is there while the cores post (no spinning: a bounded model), then
            // the rest.
            let p = &mut NoProbe::new();
            let (mut got, mut taken) = (Vec::new(), 0u32);
            let mut take = |got: &mut Vec<u64>| {
                if fill.ring.ready(p, taken) > 0 {
                    got.push(fill.ring.read(taken, 0));
                    taken += 1;
                    fill.ring.release(p, taken);
                }
            };
            take(&mut got);
            take(&mut got);
            for c in cores {
                c.join().unwrap();
            }
            while got.len() < 2 {
                take(&mut got);
            }
            got.sort();
            assert_eq!(got, [100, 101]);
        });
    }

    /// The device delivers three packets into one core's two-entry RX ring, taking chunks from its
    /// two-entry FILL ring, while the core receives them, sends them from the UMEM and refills: every
    /// chunk hand-off, the RX and FILL indices, and the Tx ring's lent chunks under all interleavings
    /// (zero-copy mode).
    #[test]
    fn nic_and_core() {
        model(true);
    }

    /// The same in copy mode: the NIC's page ring and completions, the core taking chunks from the FILL
    /// ring it also fills.
    #[test]
    fn nic_and_core_in_copy_mode() {
        model(false);
    }

    fn model(zero_copy: bool) {
        let cfg = IfaceConfig {
            ring: RingSize::new(2).unwrap(),
            tx_ring: RingSize::new(4).unwrap(),
            cache: 1,
            burst: 1,
            afxdp: AfXdpConfig { chunk_size: 2048, fill: RingSize::new(2).unwrap(), shared_fill: false, zero_copy },
            ..IfaceConfig::default()
        };
        crate::loom_tests::echo::<AfXdp>(cfg, 3);
    }
}
