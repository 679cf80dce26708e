//! Buffers held in descriptors, found through the descriptor itself: shRing's `sdr->desc[idx].buf`
//! (000 Listing 1 lines 14-15), rxBisect's `ax->desc[idx].buf` (001 Listing 1 line 9) and COREC's
//! buffer array (003 Listing 2 lines 26-28). Posting, swapping a filled buffer for a fresh one, and
//! taking posted buffers back at teardown, with the ownership hand-offs each step makes.

use crate::arena::{Arena, BufId, Owner};
use crate::core::CoreCtx;
use crate::desc::{DescRing, RxDesc};
use crate::design::{ConfigError, DropReason};
use crate::packet::{Packet, push_in_place};
use crate::pool::PoolCache;
use crate::probe::{Access, NoProbe, Probe};
use crate::sync::Ordering;

/// The device writes `frame` into the buffer descriptor `d` points to (a DMA write), or says it does not
/// fit. Returns the buffer's data address.
#[inline]
pub fn dma_into<P: Probe>(p: &mut P, arena: &Arena, d: &RxDesc, frame: &[u8]) -> Result<usize, DropReason> {
    // Relaxed: the caller acquired the doorbell (or list append) that published the descriptor.
    let (addr, cap) = (d.addr.load(Ordering::Relaxed) as usize, d.cap.load(Ordering::Relaxed) as usize);
    if frame.len() > cap {
        return Err(DropReason::TooLong);
    }
    let id = arena.id_of(addr).expect("descriptor points outside the buffer arena");
    p.touch(addr, frame.len(), Access::Write);
    arena.dma_write(id, 0, frame);
    Ok(addr)
}

/// Post buffer `id`, which the caller holds, in descriptor `i` (`Core -> Posted`).
#[inline]
pub fn post<P: Probe>(p: &mut P, ring: &DescRing, i: usize, id: BufId, core: &CoreCtx) {
    let arena = core.arena();
    arena.transfer(id, Owner::Core, Owner::Posted);
    ring.post(p, i, arena.data_addr(id), arena.layout().data_room() as u32);
}

/// The buffer descriptor `i` points to (a read of the descriptor, Listing 1 line 14).
#[inline]
pub fn buffer_of<P: Probe>(p: &mut P, ring: &DescRing, i: usize, core: &CoreCtx) -> BufId {
    p.touch(ring.slot_addr(i), 8, Access::Read);
    // Relaxed: the descriptor was written before a release that the caller has acquired (the
    // completion's done bit, or the claim that made the caller its consumer).
    let addr = ring.desc(i).addr.load(Ordering::Relaxed) as usize;
    core.arena().id_of(addr).expect("descriptor points outside the buffer arena")
}

/// Append to `out` the packet of `len` bytes the device wrote into descriptor `i`'s buffer and post
/// `fresh` in its place (Listing 1 lines 14-15). The packet is built in its slot of `out`
/// ([`push_in_place`]).
#[inline]
pub fn swap<'c, P: Probe>(
    p: &mut P,
    ring: &DescRing,
    i: usize,
    len: u32,
    fresh: BufId,
    core: &'c CoreCtx,
    out: &mut Vec<Packet<'c>>,
) {
    take(p, ring, i, len, core, out);
    post(p, ring, i, fresh, core);
}

/// Append to `out` the packet of `len` bytes the device wrote into descriptor `i`'s buffer and leave the
/// descriptor empty until a bulk refill reposts it (a PMD's vector path, [`crate::refill`]).
#[inline]
pub fn take<'c, P: Probe>(
    p: &mut P,
    ring: &DescRing,
    i: usize,
    len: u32,
    core: &'c CoreCtx,
    out: &mut Vec<Packet<'c>>,
) {
    let id = buffer_of(p, ring, i, core);
    push_in_place(out, || receive(p, core, id, len));
}

/// The received buffer `id` becomes the core's packet of `len` bytes (`Posted -> Core`): the driver
/// writes its mbuf header (length, RSS hash: one line) and leaves the packet's data alone, as DPDK's
/// receive paths do, and runs its own instructions for the packet ([`Probe::pmd_packet`]). Software
/// that prefetches the data does so itself (FastClick's `FromDPDKDevice`, `apps::fastclick`; DPDK's
/// l3fwd, `apps::l3fwd`); an application that does not (Ensō's DPDK Maglev) waits for its first read of
/// each packet.
#[inline]
pub fn receive<'c, P: Probe>(p: &mut P, core: &'c CoreCtx, id: BufId, len: u32) -> Packet<'c> {
    let pkt = Packet::reclaim(core, id, len);
    p.touch(pkt.meta_addr(), 64, Access::Write);
    p.pmd_packet();
    pkt
}

/// Fill descriptors `0..n` of a new ring with buffers from `cache` (build time).
pub fn fill(ring: &DescRing, n: usize, cache: &mut PoolCache, option: &'static str) -> Result<(), ConfigError> {
    let p = &mut NoProbe::default();
    let arena = cache.arena().clone();
    for i in 0..n {
        let id =
            cache.alloc(p).ok_or_else(|| ConfigError::new(option, "the buffer pool is too small to fill the rings"))?;
        arena.transfer(id, Owner::Core, Owner::Posted);
        ring.post(p, i, arena.data_addr(id), arena.layout().data_room() as u32);
    }
    Ok(())
}

/// Take back the posted buffers of descriptors `slots` and free them to `core` (teardown after the run
/// drained: every one of them then holds a posted buffer). Panics if one does not: the run did not drain.
pub fn release(ring: &DescRing, slots: impl IntoIterator<Item = usize>, core: &CoreCtx, design: &str) {
    let p = &mut NoProbe::default();
    for i in slots {
        let id = buffer_of(p, ring, i, core);
        match core.arena().owner(id) {
            Owner::Posted => core.arena().transfer(id, Owner::Posted, Owner::Core),
            other => panic!("{design} teardown: buffer {} of descriptor {i} is {other:?}; the run did not drain", id.0),
        }
        core.free(p, id);
    }
}
