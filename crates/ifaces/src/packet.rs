//! Packets as apps see them: a view over the bytes of a buffer this core holds, as ixy.rs's `Packet`.
//! Dropping a packet frees its buffer to the core's cache; transmitting it hands the buffer to the device.

#![allow(unsafe_code)]

use crate::arena::{BufId, Owner};
use crate::core::CoreCtx;
use std::fmt;
use std::ops::{Deref, DerefMut};

/// A received (or freshly allocated) packet. Unique owner of its buffer; not `Send` (it belongs to the
/// core that holds it).
pub struct Packet<'c> {
    id: BufId,
    len: u32,
    core: &'c CoreCtx,
}

impl<'c> Packet<'c> {
    /// Wrap a buffer that `core` holds as [`Owner::Core`], with `len` valid bytes.
    pub(crate) fn from_owned(core: &'c CoreCtx, id: BufId, len: u32) -> Packet<'c> {
        debug_assert_eq!(core.arena().owner(id), Owner::Core);
        Packet { id, len, core }
    }

    /// Reclaim a buffer the device filled (`Filled -> Core`): the driver side's way to make a packet once
    /// it has read the completion that names the buffer.
    pub fn reclaim(core: &'c CoreCtx, id: BufId, len: u32) -> Packet<'c> {
        core.arena().transfer(id, Owner::Filled, Owner::Core);
        Packet { id, len: len.min(core.arena().layout().data_room() as u32), core }
    }

    /// The buffer holding the packet.
    pub fn buf(&self) -> BufId {
        self.id
    }

    /// Address of the first byte (for probe reports).
    #[inline]
    pub fn addr(&self) -> usize {
        self.core.arena().data_addr(self.id)
    }

    /// Address of the buffer's metadata line (DPDK's mbuf header).
    #[inline]
    pub fn meta_addr(&self) -> usize {
        self.core.arena().meta_addr(self.id)
    }

    /// Bytes the buffer can hold.
    pub fn capacity(&self) -> usize {
        self.core.arena().layout().data_room()
    }

    /// Change the packet length (to build or trim a packet); `len` is clamped to the capacity.
    pub fn set_len(&mut self, len: usize) {
        self.len = len.min(self.capacity()) as u32;
    }

    /// The core holding this packet.
    pub fn core(&self) -> &'c CoreCtx {
        self.core
    }

    /// Give up the packet without freeing it: the caller takes over the buffer (still [`Owner::Core`]).
    pub(crate) fn into_raw(self) -> (BufId, u32) {
        let r = (self.id, self.len);
        std::mem::forget(self);
        r
    }
}

impl Deref for Packet<'_> {
    type Target = [u8];
    #[inline]
    fn deref(&self) -> &[u8] {
        // SAFETY: this packet is the unique holder of the buffer (Owner::Core, not Clone); the only
        // mutable slice is handed out through `&mut self`.
        unsafe { &self.core.arena().bytes(self.id)[..self.len as usize] }
    }
}

impl DerefMut for Packet<'_> {
    #[inline]
    fn deref_mut(&mut self) -> &mut [u8] {
        // SAFETY: as in `deref`, and `&mut self` excludes any other slice of this buffer.
        unsafe { &mut self.core.arena().bytes_mut(self.id)[..self.len as usize] }
    }
}

impl Drop for Packet<'_> {
    fn drop(&mut self) {
        self.core.free_unprobed(self.id);
    }
}

impl fmt::Debug for Packet<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Packet(buf {}, {} B, core {})", self.id.0, self.len, self.core.id())
    }
}
