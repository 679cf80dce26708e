//! Multi-Packet RQ ("Striding RQ", MPWQE): the receive path ConnectX NICs ship, which no paper measures.
//! A shipping design, not a paper's.
//!
//! Each receive WQE posts one large buffer divided into `strides` fixed strides of `stride_size` bytes;
//! the NIC writes each packet into the next free strides of the current WQE (as many as it needs) and
//! writes a CQE carrying the WQE, the first stride's index and the stride count in its byte count (DPDK
//! `mlx5_rx.c` `mlx5_rx_burst_mprq`: `MLX5_MPRQ_STRIDE_NUM_MASK`). A packet that does not fit the WQE's
//! remaining strides makes the NIC close it with a *filler* CQE that consumes them (Linux `en_rx.c`
//! `mpwrq_is_filler_cqe`; DPDK `MLX5_MPRQ_FILLER_MASK`) and start the next. The NIC reads one WQE per
//! `strides` strides, so descriptor fetches and RQ doorbells fall by that factor; with small strides
//! (64 B: Linux mlx5e's `MLX5_MPWRQ_DEF_LOG_STRIDE_SZ` where a packet need not fit one stride, 256 B with
//! CQE compression; for a standard MTU mlx5e picks strides of a whole packet buffer,
//! `mlx5e_mpwqe_get_log_stride_size`) packets lie densely as in Ensō's pipes.
//!
//! The driver is DPDK's mlx5 PMD with `mprq_en=1` (`mlx5_rx_burst_mprq`): a packet of at most
//! `memcpy_max` bytes (`mprq_max_memcpy_len`, default 128) is copied into an mbuf of the application's
//! pool; a larger one is attached to an mbuf as an external buffer (`rte_pktmbuf_attach_extbuf`), which
//! takes a reference on the WQE's buffer (`mlx5_mprq_buf.refcnt`). When every stride of a WQE has been
//! consumed, the driver reposts the same buffer if no packet holds it, else posts a spare from the PMD's
//! own buffer pool (`mprq_buf_replace`) and drops its reference; the buffer goes back to that pool when
//! its last attached packet is freed (`mlx5_mprq_buf_free_cb`). Without a spare, every packet is copied
//! (so that the buffer can be reposted in place), as the PMD does when its pool is empty.
//!
//! CQE compression: mini-CQEs of a Multi-Packet RQ carry the byte count (stride count included) and the
//! stride index instead of the RSS hash (the CSUM_STRIDX mini-CQE format, which DPDK selects for the
//! scalar MPRQ burst: `mlx5_devx.c` "Select CSUM miniCQE format only for non-vectorized MPRQ Rx burst";
//! "mini-CQE for MPRQ doesn't have hash result", `mlx5_rx.c`). The NIC compresses them as any other
//! completion whose WQE is implicit ([`crate::cqring`]); filler CQEs are full entries.
//!
//! Ring sizes follow DPDK: `--ring` counts strides (`nb_rx_desc`), the RQ has `ring / strides` WQEs
//! ("Trim the number of descs needed", `mlx5_rxq_new`: `desc >>= log_stride_num`) and the CQ `ring`
//! entries, one per stride a packet may take.
//!
//! Attached packets are lent memory ([`crate::packet::Backing::Lent`]): the core reads and writes the
//! stride in place, transmits it from there ([`crate::txring`]), and its token, which names the mbuf
//! header and the buffer, comes back when the packet is freed or sent.

// Lending a stride to a packet (`Packet::lent`) is the one unsafe step; its SAFETY comment says why.
#![allow(unsafe_code)]

use crate::arena::{Arena, BufId, BufLayout, Owner};
use crate::core::CoreCtx;
use crate::cqring::{
    Completion, CqConsumer, CqFormat, CqProducer, Mini, close_all, completion_ring, compression_metrics, expire_all,
};
use crate::desc::{DescPrefetch, DescRing};
use crate::design::{ConfigError, Design, DeviceSide, DriverSide, DropReason, IfaceConfig, Metrics, Occupancy};
use crate::mbuf::BufKind;
use crate::packet::Packet;
use crate::pool::{PoolCache, SharedPool};
use crate::probe::{Access, NoProbe, Phase, Probe, in_phase};
use crate::ringsize::RingSize;
use crate::sync::{Arc, AtomicU32, AtomicUsize, Ordering, fence};
use crate::txring::TxDriver;
use crate::txset::TxSet;
use std::ptr::NonNull;
use wire::QueueId;

/// Bits of a Multi-Packet RQ CQE's byte count (DPDK `mlx5_prm.h`): the length, the strides consumed, and
/// the filler flag.
const LEN_MASK: u32 = 0xffff;
const STRIDES_SHIFT: u32 = 16;
const STRIDES_MASK: u32 = 0x3fff;
const FILLER: u32 = 1 << 31;

/// Bytes of one `struct rte_mbuf_ext_shared_info` (free callback, its argument, a 16-bit reference count),
/// one per stride in the buffer's header (`mlx5_mprq_buf.shinfos`).
const SHINFO: usize = 24;
/// `RTE_PKTMBUF_HEADROOM`, kept before the first stride (`mlx5_mprq_buf_addr`).
const HEADROOM: usize = 128;
/// Cache of each core over the PMD's buffer pool (`MLX5_MPRQ_MP_CACHE_SZ`).
const MP_CACHE: usize = 32;

/// MPRQ's options (`IfaceConfig::mprq`), named after DPDK's mlx5 device arguments.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MprqConfig {
    /// Bytes per stride (`mprq_log_stride_size`); a power of two from 64 to 8 Ki (ConnectX: log 6..13).
    pub stride_size: u32,
    /// Strides per WQE (`mprq_log_stride_num`); a power of two from 8 to 64 Ki (ConnectX with the
    /// extended range: log 3..16).
    pub strides: u32,
    /// Largest packet copied into an mbuf rather than attached (`mprq_max_memcpy_len`).
    pub memcpy_max: u32,
}

impl Default for MprqConfig {
    /// DPDK's mlx5 defaults (`mlx5_defs.h`): `MLX5_MPRQ_DEFAULT_LOG_STRIDE_SIZE` 11 (2 KiB),
    /// `MLX5_MPRQ_DEFAULT_LOG_STRIDE_NUM` 6 (64 strides), `MLX5_MPRQ_MEMCPY_DEFAULT_LEN` 128. The mlx5
    /// guide of earlier releases documents 16 strides ("The default value is 4 which is 16 strides per a
    /// buffer", `mlx5.rst`, `mprq_log_stride_num`).
    fn default() -> Self {
        MprqConfig { stride_size: 2048, strides: 64, memcpy_max: 128 }
    }
}

/// Smallest strides per WQE: ConnectX's extended range (log 3); 2 under loom, whose models need tiny rings.
const MIN_STRIDES: u32 = if cfg!(loom) { 2 } else { 8 };

impl MprqConfig {
    /// Bytes of one WQE's buffer.
    pub fn wqe_bytes(&self) -> usize {
        self.stride_size as usize * self.strides as usize
    }

    /// Check the options against `cfg`; the error names the option and the fix.
    pub fn check(&self, cfg: &IfaceConfig) -> Result<(), ConfigError> {
        let pow2 = |v: u32, lo: u32, hi: u32| v.is_power_of_two() && (lo..=hi).contains(&v);
        if !pow2(self.stride_size, 64, 8192) {
            return Err(ConfigError::new(
                "mprq-stride-size",
                format!("must be a power of two from 64 to 8192 bytes (ConnectX), got {}", self.stride_size),
            ));
        }
        if !pow2(self.strides, MIN_STRIDES, 65536) {
            return Err(ConfigError::new(
                "mprq-strides",
                format!("must be a power of two from {MIN_STRIDES} to 65536 (ConnectX), got {}", self.strides),
            ));
        }
        if cfg.ring.len() <= self.strides as usize {
            return Err(ConfigError::new(
                "mprq-strides",
                format!(
                    "{} strides per WQE leave --ring {} (which counts strides, as DPDK's nb_rx_desc does) fewer \
                     than two WQEs; use fewer strides or a larger --ring",
                    self.strides, cfg.ring
                ),
            ));
        }
        if self.memcpy_max as usize > cfg.layout.data_room() {
            return Err(ConfigError::new(
                "mprq-memcpy",
                format!(
                    "packets of up to {} bytes cannot be copied into mbufs of {} bytes; use at most {}",
                    self.memcpy_max,
                    cfg.layout.data_room(),
                    cfg.layout.data_room()
                ),
            ));
        }
        if let CqFormat::Wb32 { .. } = cfg.cq {
            return Err(ConfigError::new(
                "profile",
                "mprq is ConnectX's Multi-Packet RQ, but this profile's NIC writes Intel 32-byte write-backs; \
                 use a ConnectX profile",
            ));
        }
        Ok(())
    }

    /// The layout of the PMD's buffers: a header line (`struct mlx5_mprq_buf`, its reference count
    /// first), a shared-info entry per stride and the headroom, then the strides.
    fn layout(&self) -> BufLayout {
        let header = (self.strides as usize * SHINFO + HEADROOM).next_multiple_of(64);
        BufLayout { kind: BufKind::Packed { stride: 64 + header + self.wqe_bytes() }, priv_len: header }
    }

    /// Buffers of the PMD's pool for `cores` queues of `wqes` WQEs (`mlx5_mprq_alloc_mp`: four per WQE,
    /// "to speculatively prepare enough buffers", plus a cache's worth per queue, at least two caches).
    fn pool_buffers(&self, cores: usize, wqes: usize) -> u32 {
        (4 * wqes * cores + MP_CACHE * cores).max(2 * MP_CACHE) as u32
    }
}

/// The Multi-Packet RQ design.
#[derive(Debug)]
pub struct Mprq;

/// The PMD's buffers, shared by the device and every driver: the arena, its pool, and each buffer's
/// reference count.
#[derive(Debug)]
pub struct MprqMem {
    arena: Arc<Arena>,
    pool: Arc<SharedPool>,
    /// `mlx5_mprq_buf.refcnt`: 1 for the WQE (or for the driver that retired it) plus one per attached
    /// packet. Kept apart from the arena's bytes (as owner words are); the probe reports each access at
    /// the buffer's header line, where it lives on a real system.
    refs: Box<[AtomicU32]>,
    /// Packets each queue's driver has taken (not fillers): bookkeeping for [`DeviceSide::occupancy`].
    taken: Box<[AtomicU32]>,
    /// Drivers not yet torn down; the last checks that every buffer is back in the pool.
    drivers_left: AtomicUsize,
}

impl MprqMem {
    /// A pool of `count` buffers laid out as `layout`, each with a reference count of 1, for `queues`.
    pub fn new(count: u32, layout: BufLayout, queues: usize) -> Result<MprqMem, ConfigError> {
        let arena = Arena::new("mprq", count, layout).map_err(|e| ConfigError::new("mprq-strides", e.to_string()))?;
        let arena = Arc::new(arena);
        Ok(MprqMem {
            pool: SharedPool::new(arena.clone()),
            arena,
            refs: (0..count).map(|_| AtomicU32::new(1)).collect(),
            taken: (0..queues).map(|_| AtomicU32::new(0)).collect(),
            drivers_left: AtomicUsize::new(queues),
        })
    }

    /// The buffers' arena.
    pub fn arena(&self) -> &Arc<Arena> {
        &self.arena
    }

    /// A packet is attached to a stride of `id` (`rte_atomic16_add_return(&buf->refcnt, 1)`). Relaxed: the
    /// caller holds a reference already (the WQE's), so the count cannot reach zero meanwhile.
    #[inline]
    pub fn share<P: Probe>(&self, p: &mut P, id: BufId) {
        p.touch(self.arena.meta_addr(id), 4, Access::Write);
        self.refs[id.0 as usize].fetch_add(1, Ordering::Relaxed);
    }

    /// Whether a packet still holds a stride of `id` (the driver's `refcnt > 1` when a WQE is consumed).
    /// Acquire: if none does, their reads of its strides happened before the NIC writes them again.
    #[inline]
    pub fn in_use<P: Probe>(&self, p: &mut P, id: BufId) -> bool {
        p.touch(self.arena.meta_addr(id), 4, Access::Read);
        self.refs[id.0 as usize].load(Ordering::Acquire) > 1
    }

    /// Drop one reference to `id` (`mlx5_mprq_buf_free_cb`); true if it was the last, and the caller
    /// then holds the buffer alone and returns it to the pool. Release: this holder's accesses to its
    /// stride happen before the buffer's reuse; the last holder's acquire fence pairs with every
    /// earlier release. The count is reset to 1 for the buffer's next WQE.
    #[inline]
    pub fn release<P: Probe>(&self, p: &mut P, id: BufId) -> bool {
        p.touch(self.arena.meta_addr(id), 4, Access::Write);
        let r = &self.refs[id.0 as usize];
        if r.fetch_sub(1, Ordering::Release) != 1 {
            return false;
        }
        fence(Ordering::Acquire);
        r.store(1, Ordering::Relaxed);
        true
    }
}

/// One core's Multi-Packet RQ as the NIC sees it.
#[derive(Debug)]
struct DeviceQueue {
    /// The WQEs: one descriptor per buffer.
    ring: Arc<DescRing>,
    /// Free-running index of the WQE being filled.
    wqe: u32,
    /// Its buffer, once its descriptor has been read.
    buf: Option<(BufId, usize)>,
    /// The next free stride in it.
    stride: u32,
    prefetch: DescPrefetch,
    cq: CqProducer,
    /// Packets written (fillers not counted).
    packets: u32,
}

/// MPRQ's NIC side.
#[derive(Debug)]
pub struct MprqDevice {
    arena: Arc<Arena>,
    mem: Arc<MprqMem>,
    cfg: MprqConfig,
    queues: Vec<DeviceQueue>,
    tx: TxSet,
    fillers: u64,
    filler_strides: u64,
}

/// MPRQ's driver side for one core (`struct mlx5_rxq_data` of an MPRQ queue).
#[derive(Debug)]
pub struct MprqDriver {
    ring: Arc<DescRing>,
    mem: Arc<MprqMem>,
    cfg: MprqConfig,
    queue: usize,
    /// Each WQE's buffer (`rxq->mprq_bufs`).
    bufs: Vec<BufId>,
    /// Free-running index of the WQE being consumed (`rq_ci`).
    wqe: u32,
    /// Its strides consumed so far (`consumed_strd`).
    consumed: u32,
    /// WQEs posted so far (the RQ doorbell's value).
    posted: u32,
    cq: CqConsumer,
    tx: TxDriver,
    /// This core's cache of the PMD's pool.
    cache: PoolCache,
    /// The buffer stashed for the next replacement (`rxq->mprq_repl`).
    spare: Option<BufId>,
    /// An mbuf allocated for a completion that turned out to be a filler, kept for the next packet.
    fresh: Option<BufId>,
    returned: Vec<u64>,
    copied: u64,
    attached: u64,
    replaced: u64,
    alloc_failures: u64,
}

impl MprqDevice {
    /// The PMD's buffers.
    pub fn mem(&self) -> &Arc<MprqMem> {
        &self.mem
    }
}

impl DeviceSide for MprqDevice {
    #[inline]
    fn rx<P: Probe>(&mut self, p: &mut P, queue: QueueId, hash: u32, frame: &[u8]) -> Result<(), DropReason> {
        let (size, strides) = (self.cfg.stride_size as usize, self.cfg.strides);
        let need = frame.len().div_ceil(size).max(1) as u32;
        if need > strides {
            return Err(DropReason::TooLong);
        }
        let q = &mut self.queues[usize::from(queue)];
        loop {
            let tail = q.ring.doorbell.read();
            if q.wqe == tail {
                return Err(DropReason::NoRxDescriptor);
            }
            if q.cq.is_full() {
                return Err(DropReason::CompletionRingFull);
            }
            // One descriptor read per WQE, not per packet: MPRQ's saving on PCIe.
            let (buf, addr) = *q.buf.get_or_insert_with(|| {
                let addr = q.prefetch.get(p, &q.ring, q.wqe, tail).addr.load(Ordering::Relaxed) as usize;
                (self.mem.arena.id_of(addr).expect("WQE points outside the MPRQ buffers"), addr)
            });
            let (wqe, stride) = (u64::from(q.wqe), u64::from(q.stride));
            if q.stride + need > strides {
                // The packet does not fit the WQE's remaining strides: a filler CQE consumes them.
                let rest = strides - q.stride;
                q.cq.push(p, [wqe | stride << 32, u64::from(FILLER | rest << STRIDES_SHIFT), 0], None);
                (self.fillers, self.filler_strides) = (self.fillers + 1, self.filler_strides + u64::from(rest));
                (q.wqe, q.stride, q.buf) = (q.wqe.wrapping_add(1), 0, None);
                continue;
            }
            let off = q.stride as usize * size;
            p.touch(addr + off, frame.len(), Access::Write);
            self.mem.arena.dma_write(buf, off, frame);
            let byte_cnt = frame.len() as u32 | need << STRIDES_SHIFT;
            // The WQE is implicit (completions follow the RQ in order), so this may be a mini-CQE; in the
            // CSUM_STRIDX format its second word is the stride index, not the hash.
            q.cq.push(
                p,
                [wqe | stride << 32, u64::from(byte_cnt), u64::from(hash)],
                Some(Mini { len: byte_cnt, hash: q.stride }),
            );
            q.packets = q.packets.wrapping_add(1);
            q.stride += need;
            if q.stride == strides {
                (q.wqe, q.stride, q.buf) = (q.wqe.wrapping_add(1), 0, None);
            }
            break;
        }
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
        self.queues.iter().zip(self.mem.taken.iter()).fold(Occupancy::default(), |o, (q, taken)| Occupancy {
            used: o.used + u64::from(q.packets.wrapping_sub(taken.load(Ordering::Relaxed))),
            capacity: o.capacity + u64::from(q.cq.size().get()),
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
        let mut m = Metrics::from([
            ("desc_fetches".into(), fetches as f64),
            ("desc_prefetch_hits".into(), hits as f64),
            ("mprq_fillers".into(), self.fillers as f64),
            ("mprq_filler_strides".into(), self.filler_strides as f64),
        ]);
        m.extend(compression_metrics(self.queues.iter().map(|q| &q.cq)));
        m
    }

    fn data_regions(&self) -> Vec<std::ops::Range<usize>> {
        let a = &self.mem.arena;
        std::iter::once(a.base_addr()..a.base_addr() + a.size()).collect()
    }
}

impl DriverSide for MprqDriver {
    /// `mlx5_rx_burst_mprq`.
    #[inline]
    fn rx_burst<'c, P: Probe>(&mut self, p: &mut P, core: &'c CoreCtx, out: &mut Vec<Packet<'c>>, max: usize) -> usize {
        in_phase(p, Phase::Rx, |p| {
            self.collect(p, core);
            let (strides, stride_size) = (self.cfg.strides, self.cfg.stride_size as usize);
            let (mut n, polled) = (0, self.cq.consumed());
            while n < max {
                if self.consumed == strides {
                    self.retire(p);
                }
                if !self.cq.ready() {
                    break;
                }
                // The mbuf first, so that a failed allocation leaves the packet in the ring.
                let Some(mbuf) = self.fresh.take().or_else(|| core.alloc(p)) else {
                    self.alloc_failures += 1;
                    break;
                };
                let (stride, byte_cnt) = match self.cq.poll(p).expect("a ready completion") {
                    Completion::Full([w0, byte_cnt, _hash]) => ((w0 >> 32) as u32, byte_cnt as u32),
                    Completion::Mini(m) => (m.hash, m.len),
                };
                let count = byte_cnt >> STRIDES_SHIFT & STRIDES_MASK;
                self.consumed += count;
                if byte_cnt & FILLER != 0 {
                    self.fresh = Some(mbuf);
                    continue;
                }
                let (len, buf) = (byte_cnt & LEN_MASK, self.bufs[self.ring.size().slot(self.wqe)]);
                let off = stride as usize * stride_size;
                let pkt = if len <= self.cfg.memcpy_max || self.spare.is_none() {
                    self.copied += 1;
                    self.copy(p, core, mbuf, buf, off, len)
                } else {
                    self.attached += 1;
                    self.attach(p, core, mbuf, buf, off, len, count as usize * stride_size)
                };
                out.push(pkt);
                n += 1;
            }
            if self.cq.consumed() != polled {
                self.cq.ring_doorbell(p);
                self.mem.taken[self.queue].fetch_add(n as u32, Ordering::Relaxed);
            }
            if self.ring.doorbell.read() != self.posted {
                self.ring.doorbell.ring(p, self.posted);
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
        self.collect(p, core);
        if let Some(m) = self.fresh.take() {
            core.free(p, m);
        }
        let size = self.ring.size();
        for k in 0..self.posted.wrapping_sub(self.wqe) {
            let buf = self.bufs[size.slot(self.wqe.wrapping_add(k))];
            self.mem.arena.transfer(buf, Owner::Posted, Owner::Core);
            assert!(
                self.mem.release(p, buf),
                "MPRQ teardown: buffer {} is still referenced by a packet; the run did not drain",
                buf.0
            );
            self.cache.free(p, buf);
        }
        if let Some(s) = self.spare.take() {
            self.cache.free(p, s);
        }
        self.cache.drain();
        if self.mem.drivers_left.fetch_sub(1, Ordering::AcqRel) == 1 {
            let (census, count) = (self.mem.arena.census(), self.mem.arena.count());
            assert_eq!(
                census[0], count,
                "invariant 'no-leak' failed: {} of {count} MPRQ buffers are back in the PMD's pool after teardown \
                 (held {}, posted {})",
                census[0], census[1], census[2]
            );
        }
    }

    fn metrics(&self) -> Metrics {
        Metrics::from([
            ("alloc_failures".into(), self.alloc_failures as f64),
            ("tx_full_drops".into(), self.tx.full_drops() as f64),
            ("mprq_copied".into(), self.copied as f64),
            ("mprq_attached".into(), self.attached as f64),
            ("mprq_replaced".into(), self.replaced as f64),
            (
                "doorbells".into(),
                (self.cq.doorbell_writes() + self.ring.doorbell.writes() + self.tx.doorbell_writes()) as f64,
            ),
        ])
    }
}

impl MprqDriver {
    /// A packet at most `memcpy_max` long (or any, without a spare buffer) is copied into `mbuf`: the
    /// driver writes the mbuf header, reads the stride and writes the mbuf's data.
    #[inline]
    fn copy<'c, P: Probe>(
        &mut self,
        p: &mut P,
        core: &'c CoreCtx,
        mbuf: BufId,
        buf: BufId,
        off: usize,
        len: u32,
    ) -> Packet<'c> {
        let mut pkt = Packet::from_owned(core, mbuf, len);
        p.touch(pkt.meta_addr(), 64, Access::Write);
        p.pmd_packet();
        p.touch(self.mem.arena.data_addr(buf) + off, len as usize, Access::Read);
        p.touch(pkt.addr(), len as usize, Access::Write);
        self.mem.arena.read_at(buf, off, len as usize, |src| pkt.copy_from_slice(src));
        pkt
    }

    /// A larger packet is attached to `mbuf` as an external buffer over its `cap` bytes of strides: one
    /// more reference on the WQE's buffer, the stride's shared info and the mbuf header written.
    #[allow(clippy::too_many_arguments)]
    #[inline]
    fn attach<'c, P: Probe>(
        &mut self,
        p: &mut P,
        core: &'c CoreCtx,
        mbuf: BufId,
        buf: BufId,
        off: usize,
        len: u32,
        cap: usize,
    ) -> Packet<'c> {
        let arena = &self.mem.arena;
        self.mem.share(p, buf);
        let stride = off / self.cfg.stride_size as usize;
        p.touch(arena.priv_addr(buf) + stride * SHINFO, 8, Access::Write);
        p.touch(core.arena().meta_addr(mbuf), 64, Access::Write);
        p.pmd_packet();
        let ptr = NonNull::new((arena.data_addr(buf) + off) as *mut u8).expect("arena memory is not null");
        let token = u64::from(buf.0) | u64::from(mbuf.0) << 32;
        // SAFETY: the packet's strides `[off, off + cap)` lie in the buffer's data room, and they are this
        // packet's alone until its token comes back: the NIC wrote them before the completion this core
        // acquired and writes the buffer again only once its last reference (this packet's among them) is
        // released and it is posted anew; no other packet covers them; the Tx ring reads them only after
        // the packet is handed to it.
        unsafe { Packet::lent(core, ptr, len, cap as u32, token) }
    }

    /// Attached packets freed or sent since the last call: free their mbufs and drop their references,
    /// returning buffers whose last reference that was to the pool.
    #[inline]
    fn collect<P: Probe>(&mut self, p: &mut P, core: &CoreCtx) {
        core.take_returned(&mut self.returned);
        for token in self.returned.drain(..) {
            let (buf, mbuf) = (BufId(token as u32), BufId((token >> 32) as u32));
            core.free(p, mbuf);
            if self.mem.release(p, buf) {
                self.cache.free(p, buf);
            }
        }
    }

    /// Every stride of the current WQE is consumed: repost its buffer in place if no packet holds it,
    /// else post the spare and let the packets' frees return it (`mprq_buf_replace`); move to the next.
    #[inline]
    fn retire<P: Probe>(&mut self, p: &mut P) {
        let slot = self.ring.size().slot(self.wqe);
        let buf = self.bufs[slot];
        if self.mem.in_use(p, buf) {
            // Packets are attached only while a spare is stashed, and the spare goes only here.
            let rep = self.spare.take().expect("a WQE with attached packets has a spare buffer to replace it");
            let arena = &self.mem.arena;
            arena.transfer(rep, Owner::Core, Owner::Posted);
            self.ring.post(p, slot, arena.data_addr(rep), self.cfg.wqe_bytes() as u32);
            self.bufs[slot] = rep;
            arena.transfer(buf, Owner::Posted, Owner::Core);
            if self.mem.release(p, buf) {
                self.cache.free(p, buf);
            }
            self.spare = self.cache.alloc(p);
            self.replaced += 1;
        } else if self.spare.is_none() {
            self.spare = self.cache.alloc(p);
        }
        (self.wqe, self.consumed, self.posted) = (self.wqe.wrapping_add(1), 0, self.posted.wrapping_add(1));
    }
}

impl Design for Mprq {
    const NAME: &'static str = "mprq";
    type Device = MprqDevice;
    type Driver = MprqDriver;

    /// mbufs, as privRing needs them: every stride may hold a packet the application has not freed.
    fn buffers_needed(cfg: &IfaceConfig) -> u32 {
        let per_core = cfg.ring.len() + cfg.tx_ring.len() + cfg.cache * 3 / 2 + 2 * cfg.burst;
        (cfg.cores * per_core + cfg.burst) as u32
    }

    fn build(cfg: &IfaceConfig, pool: &Arc<SharedPool>) -> Result<(MprqDevice, Vec<MprqDriver>), ConfigError> {
        cfg.validate_common()?;
        let m = cfg.mprq;
        m.check(cfg)?;
        let wqes = cfg.ring.len() / m.strides as usize;
        let wqe_ring = RingSize::new(wqes as u64).expect("a power of two over a smaller one");
        let mem = Arc::new(MprqMem::new(m.pool_buffers(cfg.cores, wqes), m.layout(), cfg.cores)?);
        let (mut tx, tx_drivers) = TxSet::new(cfg);
        tx.lend_from(mem.arena.clone());
        let np = &mut NoProbe::default();
        let (mut queues, mut drivers) = (Vec::with_capacity(cfg.cores), Vec::with_capacity(cfg.cores));
        for (core, tx) in tx_drivers.into_iter().enumerate() {
            let ring = Arc::new(DescRing::new(wqe_ring));
            let mut cache = PoolCache::new(core as u16, MP_CACHE, mem.pool.clone());
            let mut take = || {
                cache
                    .alloc(&mut NoProbe::default())
                    .ok_or_else(|| ConfigError::new("mprq-strides", "the MPRQ buffer pool is too small"))
            };
            let mut bufs = Vec::with_capacity(wqes);
            for slot in 0..wqes {
                let id = take()?;
                mem.arena.transfer(id, Owner::Core, Owner::Posted);
                ring.post(np, slot, mem.arena.data_addr(id), m.wqe_bytes() as u32);
                bufs.push(id);
            }
            let spare = Some(take()?);
            ring.doorbell.ring(np, wqes as u32);
            let (cq_dev, cq) = completion_ring(cfg.ring, cfg.cq);
            queues.push(DeviceQueue {
                ring: ring.clone(),
                wqe: 0,
                buf: None,
                stride: 0,
                prefetch: DescPrefetch::new(cfg.prefetch),
                cq: cq_dev,
                packets: 0,
            });
            drivers.push(MprqDriver {
                ring,
                mem: mem.clone(),
                cfg: m,
                queue: core,
                bufs,
                wqe: 0,
                consumed: 0,
                posted: wqes as u32,
                cq,
                tx,
                cache,
                spare,
                fresh: None,
                returned: Vec::new(),
                copied: 0,
                attached: 0,
                replaced: 0,
                alloc_failures: 0,
            });
        }
        let device = MprqDevice { arena: pool.arena().clone(), mem, cfg: m, queues, tx, fillers: 0, filler_strides: 0 };
        Ok((device, drivers))
    }
}

#[cfg(all(test, loom))]
mod loom_tests {
    use super::*;

    /// The release of a buffer when its last stride's packet is freed (`mlx5_mprq_buf_free_cb`) racing
    /// the driver that consumed the WQE's last stride: the driver reposts the buffer in place if no packet
    /// holds it, else drops its own reference. Exactly one of them gets the buffer back, and the NIC's
    /// next write into it (the reuse, in whichever thread got it) happens after the application's read of
    /// its packet: loom reports a data race on the stride otherwise.
    #[test]
    fn the_last_release_returns_the_buffer_once() {
        loom::model(|| {
            let layout = MprqConfig { stride_size: 64, strides: 2, memcpy_max: 0 }.layout();
            let mem = Arc::new(MprqMem::new(1, layout, 1).unwrap());
            let stride = Arc::new(loom::cell::UnsafeCell::new(7u8));
            let id = BufId(0);
            mem.share(&mut NoProbe::default(), id);
            let (m, s) = (mem.clone(), stride.clone());
            let app = loom::thread::spawn(move || {
                // SAFETY: loom's cell checks the accesses; this is the packet's read of its stride.
                assert_eq!(s.with(|v| unsafe { *v }), 7);
                let last = m.release(&mut NoProbe::default(), id);
                if last {
                    // SAFETY: as above: the buffer is back in the pool, posted again and written.
                    s.with_mut(|v| unsafe { *v = 9 });
                }
                last
            });
            let p = &mut NoProbe::default();
            let driver_has_it = !mem.in_use(p, id) || mem.release(p, id);
            if driver_has_it {
                // SAFETY: as above: the NIC writes the reposted buffer.
                stride.with_mut(|v| unsafe { *v = 9 });
            }
            let app_had_it = app.join().unwrap();
            assert_eq!(u8::from(driver_has_it) + u8::from(app_had_it), 1, "exactly one holder returns the buffer");
            assert_eq!(mem.refs[0].load(Ordering::Relaxed), 1);
        });
    }

    /// The NIC thread delivers five packets into two WQEs of two strides while a core receives (copying
    /// or attaching), transmits them from the strides, and retires WQEs (reposting or replacing their
    /// buffers): the RQ doorbell, the CQE's done bit, the references, the Tx ring's lent slices and every
    /// buffer hand-off under all interleavings.
    #[test]
    fn nic_and_core() {
        for memcpy_max in [0, 128] {
            model(memcpy_max);
        }
    }

    fn model(memcpy_max: u32) {
        let cfg = IfaceConfig {
            ring: RingSize::new(4).unwrap(),
            tx_ring: RingSize::new(8).unwrap(),
            cache: 1,
            burst: 2,
            mprq: MprqConfig { stride_size: 64, strides: 2, memcpy_max },
            ..IfaceConfig::default()
        };
        crate::loom_tests::echo::<Mprq>(cfg, 5);
    }
}
