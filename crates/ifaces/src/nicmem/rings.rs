//! One receive ring as nicmem's split design uses it (nicmem §4.1, Figure 5): descriptors over the
//! buffers of one arena (host or NIC memory), the device's consumer half and the driver's producer half.
//! Unlike privRing the driver reposts in ring order from whatever buffers it has, so a primary ring of
//! scarce nicmem buffers is refilled as buffers come back ("returned to their original ring").

use crate::arena::{Arena, BufId, Owner};
use crate::desc::{DescPrefetch, DescRing, PrefetchParams};
use crate::probe::{Access, Probe};
use crate::ringsize::RingSize;
use crate::sync::{Arc, Ordering};

/// A ring's two halves.
pub fn rx_ring(size: RingSize, arena: Arc<Arena>, prefetch: PrefetchParams) -> (DevRing, DrvRing) {
    let ring = Arc::new(DescRing::new(size));
    (
        DevRing { ring: ring.clone(), arena: arena.clone(), head: 0, prefetch: DescPrefetch::new(prefetch) },
        DrvRing { ring, arena, shadow: vec![BufId(0); size.len()], tail: 0, consumed: 0 },
    )
}

/// The device's half.
#[derive(Debug)]
pub struct DevRing {
    ring: Arc<DescRing>,
    arena: Arc<Arena>,
    head: u32,
    prefetch: DescPrefetch,
}

impl DevRing {
    /// Whether a posted buffer is available (the tail doorbell, acquired).
    #[inline]
    pub fn ready(&self) -> bool {
        self.head != self.ring.doorbell.read()
    }

    /// Bytes the next buffer takes.
    #[inline]
    pub fn room(&self) -> usize {
        self.arena.layout().data_room()
    }

    /// DMA-write `data` into the next posted buffer; `fetch` says whether the NIC reads the descriptor
    /// (false for header inlining, where the completion entry's slot is the buffer). Returns the slot.
    /// The caller checked [`DevRing::ready`] and the length.
    #[inline]
    pub fn fill<P: Probe>(&mut self, p: &mut P, data: &[u8], fetch: bool) -> u32 {
        let tail = self.ring.doorbell.read();
        let slot = self.ring.size().slot(self.head);
        let d = if fetch { self.prefetch.get(p, &self.ring, self.head, tail) } else { self.ring.desc(slot) };
        // Relaxed: the doorbell's Acquire published the descriptor.
        let addr = d.addr.load(Ordering::Relaxed) as usize;
        let id = self.arena.id_of(addr).expect("descriptor points outside its arena");
        p.touch(addr, data.len(), Access::Write);
        self.arena.dma_write(id, 0, data);
        self.head = self.head.wrapping_add(1);
        slot as u32
    }
}

/// The driver's half.
#[derive(Debug)]
pub struct DrvRing {
    ring: Arc<DescRing>,
    arena: Arc<Arena>,
    shadow: Vec<BufId>,
    tail: u32,
    consumed: u32,
}

impl DrvRing {
    /// The buffers' arena.
    pub fn arena(&self) -> &Arc<Arena> {
        &self.arena
    }

    /// Whether a slot is free to post into.
    #[inline]
    pub fn has_room(&self) -> bool {
        self.tail.wrapping_sub(self.consumed) < self.ring.size().get()
    }

    /// Post buffer `id` (held as [`Owner::Core`]) in the next slot. Ring the doorbell with
    /// [`DrvRing::doorbell`].
    #[inline]
    pub fn post<P: Probe>(&mut self, p: &mut P, id: BufId) {
        debug_assert!(self.has_room());
        let slot = self.ring.size().slot(self.tail);
        self.arena.transfer(id, Owner::Core, Owner::Posted);
        self.ring.post(p, slot, self.arena.data_addr(id), self.arena.layout().data_room() as u32);
        self.shadow[slot] = id;
        self.tail = self.tail.wrapping_add(1);
    }

    /// Publish posted descriptors (the tail doorbell, an MMIO write).
    #[inline]
    pub fn doorbell<P: Probe>(&mut self, p: &mut P) {
        if self.ring.doorbell.read() != self.tail {
            self.ring.doorbell.ring(p, self.tail);
        }
    }

    /// Take the filled buffer of `slot` (still [`Owner::Posted`]: the caller reclaims it); the device
    /// fills slots in order.
    #[inline]
    pub fn take(&mut self, slot: u32) -> BufId {
        debug_assert_eq!(slot as usize, self.ring.size().slot(self.consumed));
        self.consumed = self.consumed.wrapping_add(1);
        self.shadow[slot as usize]
    }

    /// Take back every posted buffer (teardown after draining), as [`Owner::Core`].
    pub fn release(&mut self) -> Vec<BufId> {
        let mut out = Vec::new();
        while self.consumed != self.tail {
            let id = self.shadow[self.ring.size().slot(self.consumed)];
            self.arena.transfer(id, Owner::Posted, Owner::Core);
            out.push(id);
            self.consumed = self.consumed.wrapping_add(1);
        }
        out
    }
}
