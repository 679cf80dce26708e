//! shRing RxList (000 §4.4, Listing 2): the free descriptors form a linked list overlaid on the
//! descriptor array (each descriptor's `next` field, [`crate::desc::RxDesc::next`]), and the NIC fills
//! them in list order from `hwHead`. A core links the descriptors it consumed into a chain (lines 11-13)
//! and, under the ring's lock, appends the chain after `hwTail` and rings the doorbell with the number of
//! descriptors appended (lines 18-24). Cores need not repost in array order, so no core waits for another.
//!
//! As in ConnectX shared receive queues, the list's last descriptor (`hwTail`) is never filled: its `next`
//! is not known until the next append writes it, so the NIC may use all but one descriptor.
//!
//! The price is the NIC's descriptor prefetching (§4.4, "Prefetching Problem", Figure 6): the NIC reads
//! several array-contiguous descriptors per DMA read, and once reposting has shuffled the list, the next
//! descriptor in list order is rarely among them. The NIC side here asks its [`DescPrefetch`] for the
//! list's next descriptor at its position in array order after the last fetched one, so every jump costs
//! a fetch; `desc_fetches` and `list_jumps` count them.
//!
//! Descriptors may hold several packets ([`super::batched`]); the logic here serves both, with one packet
//! per descriptor for RxList.

use super::{NicOrder, Place, Repost, ShDevice, ShDriver, Sharing, lock_metrics, prefetch_metrics};
use crate::desc::{DescPrefetch, DescRing};
use crate::design::{ConfigError, Design, IfaceConfig, Metrics};
use crate::pool::SharedPool;
use crate::probe::{NoProbe, Probe};
use crate::spinlock::SpinLock;
use crate::sync::{Arc, AtomicU32, Ordering};

/// The RxList design (`--iface rxlist`).
#[derive(Debug)]
pub struct RxList;

/// One shared list ring (Listing 2's `sd_ring`).
#[derive(Debug)]
pub struct ListShared {
    ring: DescRing,
    segs: u32,
    lock: SpinLock,
    /// `hwTail`: the last descriptor of the free list. Only touched under `lock`.
    tail: AtomicU32,
    /// `sdr->ci`: descriptors appended so far, which is what the doorbell carries. Only touched under
    /// `lock`.
    appended: AtomicU32,
}

/// The NIC's side: it follows the list, keeping per group member the descriptor it is filling
/// (the "mini hwHeads" of batched RxList; with one packet per descriptor they are never kept open).
#[derive(Debug)]
pub struct ListNic {
    shared: Arc<ListShared>,
    /// `hwHead`: the next descriptor of the list to take.
    head: u32,
    /// Descriptors taken so far, compared with the doorbell.
    taken: u32,
    /// Each member's descriptor being filled and its next packet slot.
    open: Vec<Option<Place>>,
    /// Free-running array position of the last descriptor entry the NIC read, to place the next one.
    cursor: u32,
    prefetch: DescPrefetch,
    /// Descriptors taken that did not follow the previous one in array order.
    jumps: u64,
}

/// A core's chain of consumed descriptors (Listing 2's `myhead` and `iptr`).
#[derive(Debug)]
pub struct ListRepost {
    shared: Arc<ListShared>,
    chain: Option<(u32, u32)>,
    len: u32,
}

impl Design for RxList {
    const NAME: &'static str = "rxlist";
    type Device = ShDevice<ListNic>;
    type Driver = ShDriver<ListRepost>;

    fn buffers_needed(cfg: &IfaceConfig) -> u32 {
        super::buffers_needed(cfg)
    }

    fn build(cfg: &IfaceConfig, pool: &Arc<SharedPool>) -> Result<(Self::Device, Vec<Self::Driver>), ConfigError> {
        super::build::<RxList>(cfg, pool)
    }
}

impl Sharing for RxList {
    type Nic = ListNic;
    type Repost = ListRepost;

    fn segs(_: &IfaceConfig) -> u32 {
        1
    }

    fn validate(_: &IfaceConfig) -> Result<(), ConfigError> {
        Ok(())
    }

    fn make(ring: DescRing, descs: u32, cfg: &IfaceConfig, share: usize) -> (ListNic, Vec<ListRepost>) {
        make(ring, descs, 1, cfg, share)
    }
}

/// Link the `descs` descriptors of `ring` in array order, ring the doorbell for all but the last (the
/// list's tail), and return the NIC's side and `share` members' reposting states.
pub(super) fn make(
    ring: DescRing,
    descs: u32,
    segs: u32,
    cfg: &IfaceConfig,
    share: usize,
) -> (ListNic, Vec<ListRepost>) {
    let p = &mut NoProbe::default();
    for d in 0..descs - 1 {
        // Relaxed: published by the doorbell's release below.
        ring.desc((d * segs) as usize).next.store(d + 1, Ordering::Relaxed);
    }
    ring.doorbell.ring(p, descs - 1);
    let shared = Arc::new(ListShared {
        ring,
        segs,
        lock: SpinLock::new(),
        tail: AtomicU32::new(descs - 1),
        appended: AtomicU32::new(descs - 1),
    });
    let members = (0..share).map(|_| ListRepost { shared: shared.clone(), chain: None, len: 0 }).collect();
    let nic = ListNic {
        shared,
        head: 0,
        taken: 0,
        open: vec![None; share],
        cursor: 0u32.wrapping_sub(1),
        prefetch: DescPrefetch::new(cfg.prefetch),
        jumps: 0,
    };
    (nic, members)
}

impl NicOrder for ListNic {
    fn ring(&self) -> &DescRing {
        &self.shared.ring
    }

    #[inline]
    fn peek<P: Probe>(&mut self, p: &mut P, member: usize) -> Option<Place> {
        if let Some(at) = self.open[member] {
            // The NIC keeps the descriptor it is filling for this member: no fetch (Figure 5b).
            return Some(at);
        }
        let ring = &self.shared.ring;
        // Acquire: the appends that made these descriptors available, `next` fields included.
        if ring.doorbell.read() == self.taken {
            return None;
        }
        let segs = self.shared.segs;
        let first = self.head * segs;
        // The descriptor's position in array order after the cursor: inside the last fetch if the list
        // runs on contiguously, a new fetch otherwise.
        let size = ring.size();
        let ahead = (first as usize).wrapping_sub(size.slot(self.cursor)) & (size.len() - 1);
        let at = self.cursor.wrapping_add(ahead as u32);
        if ahead != 1 {
            self.jumps += 1;
        }
        for s in 0..segs {
            // No limit from the doorbell: the list's order, not the array's, says what is posted.
            let i = at.wrapping_add(s);
            self.prefetch.get(p, ring, i, i.wrapping_add(size.get()));
        }
        self.cursor = at.wrapping_add(segs - 1);
        Some(Place { desc: self.head, seg: 0 })
    }

    #[inline]
    fn advance(&mut self, member: usize) -> bool {
        let at = match self.open[member] {
            Some(at) => at,
            None => {
                // Take `hwHead` off the list. It is not the tail (the doorbell said so), so its `next` was
                // written before the doorbell release the NIC acquired in `peek`.
                let ring = &self.shared.ring;
                let desc = self.head;
                self.head = ring.desc((desc * self.shared.segs) as usize).next.load(Ordering::Relaxed);
                self.taken = self.taken.wrapping_add(1);
                Place { desc, seg: 0 }
            }
        };
        let full = at.seg + 1 == self.shared.segs;
        self.open[member] = (!full).then_some(Place { desc: at.desc, seg: at.seg + 1 });
        full
    }

    fn metrics(&self, m: &mut Metrics) {
        prefetch_metrics(&self.prefetch, m);
        lock_metrics(&self.shared.lock, m);
        *m.entry("list_jumps".into()).or_default() += self.jumps as f64;
    }
}

impl Repost for ListRepost {
    fn ring(&self) -> &DescRing {
        &self.shared.ring
    }

    /// Listing 2 lines 11-13: link the descriptor after the previous one of this burst.
    #[inline]
    fn consumed<P: Probe>(&mut self, p: &mut P, desc: u32) {
        let s = &self.shared;
        self.chain = Some(match self.chain {
            None => (desc, desc),
            Some((first, last)) => {
                let d = s.ring.desc((last * s.segs) as usize);
                p.write(&d.next);
                // Relaxed: the chain is published by the doorbell's release in `publish`.
                d.next.store(desc, Ordering::Relaxed);
                (first, desc)
            }
        });
        self.len += 1;
    }

    /// Listing 2 lines 18-24: under the lock, append the chain after `hwTail` and tell the NIC.
    #[inline]
    fn publish<P: Probe>(&mut self, p: &mut P) {
        let Some((first, last)) = self.chain.take() else { return };
        let len = std::mem::take(&mut self.len);
        let s = &*self.shared;
        s.lock.with(p, |p| {
            // Relaxed: `tail` and `appended` are only touched under the lock.
            let tail = s.tail.load(Ordering::Relaxed);
            let d = s.ring.desc((tail * s.segs) as usize);
            p.write(&d.next);
            d.next.store(first, Ordering::Relaxed);
            s.tail.store(last, Ordering::Relaxed);
            let appended = s.appended.load(Ordering::Relaxed).wrapping_add(len);
            s.appended.store(appended, Ordering::Relaxed);
            // Release: the links and re-armed descriptors are visible to the NIC that reads the doorbell.
            s.ring.doorbell.ring(p, appended);
        });
    }
}
