//! Transmit rings, shared by the designs that do not change the transmit side (privRing, shRing,
//! rxBisect and COREC all keep per-core Tx rings; rxBisect §4: "RxBisect does not modify the Tx side").
//!
//! Software writes a 16-byte descriptor per packet and rings the tail doorbell once per burst; packets that
//! find the ring full are dropped or left to the caller, as [`TxFull`] says (DPDK's `rte_eth_tx_burst`
//! queues what fits and returns the rest to the caller, who frees or retries them). The device reads the
//! descriptors a doorbell announced ([`crate::txfetch`]: it cannot read them ahead, as it reads receive
//! descriptors software posted long before), then DMA-reads each packet and puts it on the wire. It
//! reports progress only for descriptors software asked about: DPDK drivers request a completion on every
//! 32nd descriptor (mlx5's `MLX5_TX_COMP_THRESH` 32; Intel's RS bit every
//! `tx_rs_thresh` = 32 descriptors), and the device then writes its 4-byte head index to host memory
//! (Intel's Tx head write-back). Software frees the buffers of sent packets on its next transmit call,
//! as DPDK drivers do, and so holds up to one threshold's worth of sent buffers.
//!
//! A packet may also be a slice of memory a design lent ([`Backing::Lent`]): an MPRQ stride that DPDK's
//! mlx5 PMD attached to an mbuf as an external buffer ([`crate::mprq`]). The ring sends it from where it
//! lies, without a copy, and gives its token back to the core when the send completes
//! (`rte_pktmbuf_free` of an attached mbuf calls the buffer's free callback).

use crate::arena::{Arena, BufId, Owner};
use crate::core::CoreCtx;
use crate::desc::DescRing;
use crate::packet::{Backing, Packet, Parts};
use crate::probe::{Access, NoProbe, Phase, Probe, in_phase};
use crate::ringsize::RingSize;
use crate::sync::{Arc, AtomicU32, Ordering};
use crate::txfetch::TxFetch;

/// Descriptors between completion requests: DPDK's mlx5 `MLX5_TX_COMP_THRESH` and the Intel drivers'
/// default `tx_rs_thresh`, both 32.
pub const TX_COMPLETION_EVERY: u32 = 32;

/// What a driver does with the packets of a burst its Tx ring has no room for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TxFull {
    /// Free them and count them (`tx_full_drops`), as DPDK's sample apps (l3fwd) do with what
    /// `rte_eth_tx_burst` did not take.
    #[default]
    Drop,
    /// Leave them in the burst for the caller to retry once the device has sent some: FastClick's
    /// `ToDPDKDevice(BLOCKING true)`, which the papers' NFs run (nicmem artifact, fig8/nat.x.1.npf).
    Wait,
}

/// Head write-back word, in its own cache line.
#[derive(Debug, Default)]
#[repr(align(64))]
struct HeadWriteBack(AtomicU32);

#[derive(Debug)]
struct TxShared {
    ring: DescRing,
    head: HeadWriteBack,
    /// Software requests a completion on every descriptor whose index + 1 is a multiple of this (the
    /// RS bit set by a fixed rule, so the device can tell from the index). At most half the ring, so
    /// that a small ring never waits on a request it cannot reach (Intel: `tx_rs_thresh` < ring - 2).
    completion_every: u32,
}

/// Build one Tx ring whose driver treats a full ring as `full` says and frees sent buffers without reading
/// them if `fast_free`; returns its device and driver halves.
pub fn tx_ring(size: RingSize, full: TxFull, fast_free: bool) -> (TxDevice, TxDriver) {
    let completion_every = TX_COMPLETION_EVERY.min(size.get() / 2).max(1);
    let shared = Arc::new(TxShared { ring: DescRing::new(size), head: HeadWriteBack::default(), completion_every });
    (
        TxDevice { shared: shared.clone(), head: 0, fetch: TxFetch::default() },
        TxDriver {
            shared,
            tail: 0,
            reclaimed: 0,
            shadow: vec![Queued::Buf(BufId(0)); size.len()],
            full,
            fast_free,
            full_drops: 0,
        },
    )
}

/// What a queued descriptor holds until its send completes.
#[derive(Debug, Clone, Copy)]
enum Queued {
    /// A pool buffer, [`Owner::Tx`] meanwhile.
    Buf(BufId),
    /// Lent memory, whose token goes back to the core.
    Lent(u64),
}

/// The driver's half of a Tx ring.
#[derive(Debug)]
pub struct TxDriver {
    shared: Arc<TxShared>,
    tail: u32,
    reclaimed: u32,
    shadow: Vec<Queued>,
    full: TxFull,
    fast_free: bool,
    full_drops: u64,
}

impl TxDriver {
    /// Free the buffers of packets the device has reported sent since the last call.
    #[inline]
    pub fn reclaim<P: Probe>(&mut self, p: &mut P, core: &CoreCtx) {
        p.touch(&self.shared.head as *const HeadWriteBack as usize, 4, Access::Read);
        let head = self.shared.head.0.load(Ordering::Acquire);
        self.free_to(p, core, head);
    }

    /// Free every buffer still queued, at the end of a run once the device has sent everything (as
    /// stopping a DPDK Tx queue frees its mbufs): the last ones may never have been reported.
    pub fn teardown(&mut self, core: &CoreCtx) {
        self.free_to(&mut NoProbe::default(), core, self.tail);
    }

    fn free_to<P: Probe>(&mut self, p: &mut P, core: &CoreCtx, head: u32) {
        while self.reclaimed != head {
            match self.shadow[self.shared.ring.size().slot(self.reclaimed)] {
                Queued::Buf(id) => {
                    core.arena().transfer(id, Owner::Tx, Owner::Core);
                    core.free_sent(p, id, self.fast_free);
                }
                Queued::Lent(token) => core.give_back(token),
            }
            self.reclaimed = self.reclaimed.wrapping_add(1);
        }
    }

    /// Queue `pkts` for transmission and ring the doorbell once. Packets that do not fit are freed and
    /// counted ([`TxFull::Drop`]) or stay in `pkts`, in order ([`TxFull::Wait`]). Returns the number queued.
    pub fn send<'c, P: Probe>(&mut self, p: &mut P, core: &'c CoreCtx, pkts: &mut Vec<Packet<'c>>) -> usize {
        in_phase(p, Phase::Tx, |p| {
            self.reclaim(p, core);
            let size = self.shared.ring.size();
            let room = size.get() - self.tail.wrapping_sub(self.reclaimed);
            let fits = pkts.len().min(room as usize);
            if self.full == TxFull::Drop {
                self.full_drops += (pkts.len() - fits) as u64;
                pkts.truncate(fits);
            }
            let arena = core.arena();
            let mut sent = 0;
            for pkt in pkts.drain(..fits) {
                let slot = size.slot(self.tail);
                self.shadow[slot] = match pkt.into_parts() {
                    Parts { backing: Backing::Buf(id), len, tail: None, .. } => {
                        arena.transfer(id, Owner::Core, Owner::Tx);
                        self.shared.ring.post(p, slot, arena.data_addr(id), len);
                        Queued::Buf(id)
                    }
                    Parts { backing: Backing::Lent(token), len, addr, tail: None } => {
                        self.shared.ring.post(p, slot, addr, len);
                        Queued::Lent(token)
                    }
                    _ => panic!("a Tx ring sends single-segment packets; this design must send two segments itself"),
                };
                self.tail = self.tail.wrapping_add(1);
                sent += 1;
            }
            if sent > 0 {
                self.shared.ring.doorbell.ring(p, self.tail);
            }
            sent
        })
    }

    /// Packets dropped because the ring was full.
    pub fn full_drops(&self) -> u64 {
        self.full_drops
    }

    /// Packets queued and not yet reclaimed.
    pub fn in_flight(&self) -> u32 {
        self.tail.wrapping_sub(self.reclaimed)
    }

    /// Doorbell writes so far.
    pub fn doorbell_writes(&self) -> u64 {
        self.shared.ring.doorbell.writes()
    }
}

/// The device's half of a Tx ring.
#[derive(Debug)]
pub struct TxDevice {
    shared: Arc<TxShared>,
    head: u32,
    /// Its reads of the descriptors the doorbell announced.
    fetch: TxFetch,
}

impl TxDevice {
    /// Send up to `budget` queued packets whose descriptors the device has read ([`TxDevice::fetch`]) to
    /// `wire`, reading pool buffers from `arena` and lent slices from `lent`; returns how many were sent.
    pub fn transmit<P: Probe, W: FnMut(&[u8])>(
        &mut self,
        p: &mut P,
        arena: &Arena,
        lent: Option<&Arena>,
        wire: &mut W,
        budget: usize,
    ) -> usize {
        let every = self.shared.completion_every;
        let mut sent = 0;
        let mut report = false;
        while self.fetch.has(self.head) && sent < budget {
            let d = self.shared.ring.desc(self.shared.ring.size().slot(self.head));
            let addr = d.addr.load(Ordering::Relaxed) as usize;
            let len = d.cap.load(Ordering::Relaxed) as usize;
            p.touch(addr, len, Access::Read);
            match arena.id_of(addr) {
                Some(id) => arena.dma_read(id, len, &mut *wire),
                None => {
                    let lent = lent.expect("Tx descriptor points outside the buffer arena");
                    let (id, off) = lent.locate(addr).expect("Tx descriptor points outside the lent memory");
                    lent.read_at(id, off, len, &mut *wire)
                }
            }
            self.head = self.head.wrapping_add(1);
            report |= self.head.is_multiple_of(every);
            sent += 1;
        }
        if report {
            p.touch(&self.shared.head as *const HeadWriteBack as usize, 4, Access::Write);
            self.shared.head.0.store(self.head, Ordering::Release);
        }
        sent
    }

    /// Read the descriptors the doorbell announced, all in one request (neither Intel's nor NVIDIA's
    /// transmit descriptor fetch size is published), beside the reads already on their way
    /// ([`TxFetch::fetch`]).
    pub fn fetch<P: Probe>(&mut self, p: &mut P) {
        let ring = &self.shared.ring;
        self.fetch
            .fetch(p, ring.doorbell.read(), ring.size().get(), ring.size(), |p, slot, k| ring.dma_read(p, slot, k));
    }

    /// When the oldest descriptor read on its way arrives, if the device has sent every descriptor it read.
    pub fn waiting(&self) -> Option<u64> {
        self.fetch.waiting(self.head)
    }

    /// Packets queued by software and not yet sent.
    pub fn pending(&self) -> u32 {
        self.shared.ring.doorbell.read().wrapping_sub(self.head)
    }
}
