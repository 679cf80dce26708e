//! Packets as apps see them: a view over bytes this core holds, as ixy.rs's `Packet`.
//!
//! Most packets live in a pool buffer ([`Backing::Buf`]): dropping one frees its buffer to the core's
//! cache, transmitting one hands the buffer to the device. Some designs lend the core memory that is not a
//! pool buffer ([`Backing::Lent`]): a stretch of an Ensō pipe, or (as the packet's second segment, its
//! [`Packet::tail`]) a nicmem payload buffer. Dropping such a packet gives its token back to the core
//! ([`CoreCtx::take_returned`]), where the design that lent it collects it, e.g. to advance a pipe head.

#![allow(unsafe_code)]

use crate::arena::{BufId, Owner};
use crate::core::CoreCtx;
use std::fmt;
use std::ops::{Deref, DerefMut};
use std::ptr::NonNull;

/// Where a packet's bytes live.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backing {
    /// A pool buffer this core holds as [`Owner::Core`].
    Buf(BufId),
    /// Memory a design lent, identified by a token the design chose.
    Lent(u64),
}

/// A second segment: bytes of a lent region that follow the first segment on the wire (nicmem's
/// header/data split puts the payload here; nmKVS a hot value other packets may share).
#[derive(Debug)]
struct Tail {
    ptr: NonNull<u8>,
    len: u32,
    token: u64,
    /// Read-only: other packets and the device may read the same bytes.
    shared: bool,
}

/// A received (or freshly allocated) packet: the unique holder of its bytes; not `Send` (it belongs to
/// the core that holds it).
pub struct Packet<'c> {
    ptr: NonNull<u8>,
    len: u32,
    cap: u32,
    backing: Backing,
    tail: Option<Tail>,
    core: &'c CoreCtx,
}

/// What a transmit path takes over from a packet it consumes: the backing, the first segment's length,
/// and the tail's token and length if there is one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Parts {
    /// Where the first segment lives.
    pub backing: Backing,
    /// Its length.
    pub len: u32,
    /// Address of its first byte.
    pub addr: usize,
    /// The second segment: token, address and length.
    pub tail: Option<(u64, usize, u32)>,
}

impl<'c> Packet<'c> {
    /// Wrap a buffer that `core` holds as [`Owner::Core`], with `len` valid bytes.
    #[inline]
    pub(crate) fn from_owned(core: &'c CoreCtx, id: BufId, len: u32) -> Packet<'c> {
        debug_assert_eq!(core.arena().owner(id), Owner::Core);
        let arena = core.arena();
        let cap = arena.layout().data_room() as u32;
        let ptr = NonNull::new(arena.data_addr(id) as *mut u8).expect("arena memory is not null");
        Packet { ptr, len: len.min(cap), cap, backing: Backing::Buf(id), tail: None, core }
    }

    /// Reclaim a buffer the device filled (`Posted -> Core`): the driver side's way to make a packet once
    /// it has read (with acquire) the completion that names the buffer.
    #[inline]
    pub fn reclaim(core: &'c CoreCtx, id: BufId, len: u32) -> Packet<'c> {
        core.arena().transfer(id, Owner::Posted, Owner::Core);
        Packet::from_owned(core, id, len)
    }

    /// A packet over `len` bytes of lent memory at `ptr` (room for `cap`), returned as `token` when the
    /// packet is dropped.
    ///
    /// # Safety
    /// `[ptr, ptr + cap)` must be valid for reads and writes, and no one else (the device included) may
    /// access it until `token` comes back through [`CoreCtx::take_returned`] or the design's transmit
    /// path consumes the packet.
    pub unsafe fn lent(core: &'c CoreCtx, ptr: NonNull<u8>, len: u32, cap: u32, token: u64) -> Packet<'c> {
        Packet { ptr, len: len.min(cap), cap, backing: Backing::Lent(token), tail: None, core }
    }

    /// Attach a second segment of `len` bytes at `ptr`, returned as `token` when the packet is dropped.
    ///
    /// # Safety
    /// As [`Packet::lent`], for `[ptr, ptr + len)`.
    pub unsafe fn attach_tail(&mut self, ptr: NonNull<u8>, len: u32, token: u64) {
        self.set_tail(Tail { ptr, len, token, shared: false });
    }

    /// Attach a read-only second segment of `len` bytes at `ptr` that other packets and the device may
    /// read at the same time (nmKVS's zero-copy values, nicmem §4.2.2); `token` comes back when the
    /// packet is dropped. [`Packet::tail_mut`] gives no access to it.
    ///
    /// # Safety
    /// `[ptr, ptr + len)` must be valid for reads, and no one may write it until `token` comes back
    /// through [`CoreCtx::take_returned`] or the design's transmit path completes the packet.
    pub unsafe fn attach_shared_tail(&mut self, ptr: NonNull<u8>, len: u32, token: u64) {
        self.set_tail(Tail { ptr, len, token, shared: true });
    }

    fn set_tail(&mut self, tail: Tail) {
        if let Some(old) = self.tail.replace(tail) {
            self.core.give_back(old.token);
        }
    }

    /// Where the first segment lives.
    pub fn backing(&self) -> Backing {
        self.backing
    }

    /// Address of the first byte (for probe reports).
    #[inline]
    pub fn addr(&self) -> usize {
        self.ptr.as_ptr() as usize
    }

    /// Address of the buffer's metadata line (DPDK's mbuf header); for lent memory, of the first byte.
    #[inline]
    pub fn meta_addr(&self) -> usize {
        match self.backing {
            Backing::Buf(id) => self.core.arena().meta_addr(id),
            Backing::Lent(_) => self.addr(),
        }
    }

    /// Address of the buffer's private area (DPDK's mbuf private data, [`crate::BufLayout::priv_len`]
    /// bytes, where an app runtime keeps per-packet state), or `None` for lent memory, which has none.
    #[inline]
    pub fn priv_addr(&self) -> Option<usize> {
        match self.backing {
            Backing::Buf(id) => Some(self.core.arena().priv_addr(id)),
            Backing::Lent(_) => None,
        }
    }

    /// Bytes the first segment can hold.
    pub fn capacity(&self) -> usize {
        self.cap as usize
    }

    /// Change the first segment's length (to build or trim a packet); clamped to the capacity.
    pub fn set_len(&mut self, len: usize) {
        self.len = len.min(self.capacity()) as u32;
    }

    /// The second segment, if the design split the packet (nicmem's payload) or the app attached one.
    pub fn tail(&self) -> Option<&[u8]> {
        // SAFETY: `attach_tail`'s contract gives this packet exclusive access to the tail's bytes, and
        // `attach_shared_tail`'s guarantees no one writes them.
        self.tail.as_ref().map(|t| unsafe { std::slice::from_raw_parts(t.ptr.as_ptr(), t.len as usize) })
    }

    /// The second segment, writable; `None` if there is none or it is shared.
    pub fn tail_mut(&mut self) -> Option<&mut [u8]> {
        // SAFETY: as in `tail`, and `&mut self` excludes any other slice of it; shared tails are excluded.
        self.tail
            .as_mut()
            .filter(|t| !t.shared)
            .map(|t| unsafe { std::slice::from_raw_parts_mut(t.ptr.as_ptr(), t.len as usize) })
    }

    /// Address of the second segment, if any.
    pub fn tail_addr(&self) -> Option<usize> {
        self.tail.as_ref().map(|t| t.ptr.as_ptr() as usize)
    }

    /// Bytes on the wire: both segments.
    pub fn wire_len(&self) -> usize {
        self.len as usize + self.tail.as_ref().map_or(0, |t| t.len as usize)
    }

    /// The core holding this packet.
    pub fn core(&self) -> &'c CoreCtx {
        self.core
    }

    /// Give up the packet without releasing anything: the caller (a transmit path) takes over its memory.
    pub fn into_parts(self) -> Parts {
        let parts = Parts {
            backing: self.backing,
            len: self.len,
            addr: self.addr(),
            tail: self.tail.as_ref().map(|t| (t.token, t.ptr.as_ptr() as usize, t.len)),
        };
        std::mem::forget(self);
        parts
    }
}

impl Deref for Packet<'_> {
    type Target = [u8];
    #[inline]
    fn deref(&self) -> &[u8] {
        // SAFETY: this packet is the unique holder of its bytes: a pool buffer it holds as Owner::Core (not
        // Clone), or lent memory under `lent`'s contract; the only mutable slice needs `&mut self`.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len as usize) }
    }
}

impl DerefMut for Packet<'_> {
    #[inline]
    fn deref_mut(&mut self) -> &mut [u8] {
        // SAFETY: as in `deref`, and `&mut self` excludes any other slice of these bytes.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len as usize) }
    }
}

/// Append the packet `make` builds to `out`, built in place: a moved `Packet` (64 bytes) goes through a
/// stack copy whose wide loads cannot be forwarded from the narrow stores that built it, a stall of
/// about 15 % of a receive burst's time (measured with `perf` on privRing's driver side).
#[inline(always)]
pub fn push_in_place<'c>(out: &mut Vec<Packet<'c>>, make: impl FnOnce() -> Packet<'c>) {
    out.reserve(1);
    out.spare_capacity_mut()[0].write(make());
    // SAFETY: `reserve` made room for one more, and that slot has just been written.
    unsafe { out.set_len(out.len() + 1) };
}

impl Drop for Packet<'_> {
    fn drop(&mut self) {
        match self.backing {
            Backing::Buf(id) => self.core.free_unprobed(id),
            Backing::Lent(token) => self.core.give_back(token),
        }
        if let Some(t) = self.tail.take() {
            self.core.give_back(t.token);
        }
    }
}

impl fmt::Debug for Packet<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Packet({:?}, {} B, core {})", self.backing, self.wire_len(), self.core.id())
    }
}
