//! On-NIC memory (nicmem §4.1): a region of buffers the NIC reaches without crossing PCIe and the CPU
//! reaches only over PCIe (reads uncached, writes write-combined). In rxlab it is an [`Arena`] of its own,
//! so its address range tells an engine which accesses are to NIC memory: the simulator charges CPU
//! accesses in [`NicMem::range`] as uncached reads and write-combined writes; the live engine keeps it in
//! host RAM, and code that touches it on purpose goes through [`NicMem::cpu_read`]/[`NicMem::cpu_write`],
//! which count every access.
//!
//! Allocation mirrors the paper's `alloc_nicmem(device, len)` (§5, Listing 1) with a capacity limit:
//! 256 KiB, as the paper's ConnectX-5 firmware exposes, or more for a "future device" (§6.6, C2), or as
//! many buffers as nmNFV's rings use when it is emulated as the paper's evaluation emulates it
//! ([`super::NicMemCapacity::Emulated`]).
//!
//! A buffer may also be *held* by transmit descriptors while its core keeps it (nmKVS's stable buffers,
//! §4.2.2): [`NicMem::hold`] counts one more descriptor in flight, the transmit completion
//! [`NicMem::release`]s it (the DPDK completion callback the paper adds, §5), and [`NicMem::held`] tells
//! the core when no descriptor references the buffer any more. The device reads a held buffer with
//! [`NicMem::dma_read_held`].

#![allow(unsafe_code)]

use crate::arena::{Arena, BufId, BufLayout, Owner};
use crate::probe::{Access, Probe};
use crate::sync::{Arc, AtomicU32, AtomicU64, Mutex, Ordering};
use std::ops::Range;

/// Bytes of nicmem the paper's NIC exposes (§5, "Hardware limitations").
pub const PAPER_CAPACITY: usize = 256 << 10;

/// A nicmem request that cannot be met.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NicMemError {
    /// The request is larger than what is left.
    #[error(
        "alloc_nicmem: {asked} B ({bufs} buffers of {stride} B) exceeds the {left} B left of {capacity} B of NIC memory; use a larger nicmem capacity (a \"future device\") or fewer nicmem buffers"
    )]
    Capacity {
        /// Bytes asked for.
        asked: usize,
        /// Buffers that makes.
        bufs: usize,
        /// Buffer stride.
        stride: usize,
        /// Bytes left.
        left: usize,
        /// Capacity.
        capacity: usize,
    },
    /// The capacity holds no buffer.
    #[error("nicmem capacity {capacity} B holds no {stride} B buffer")]
    Empty {
        /// Capacity.
        capacity: usize,
        /// Buffer stride.
        stride: usize,
    },
}

/// The NIC's memory: buffers, what is allocated, and the CPU's accesses to it.
#[derive(Debug)]
pub struct NicMem {
    arena: Arc<Arena>,
    free: Mutex<Vec<BufId>>,
    /// Transmit descriptors in flight per buffer (see [`NicMem::hold`]).
    tx_refs: Box<[AtomicU32]>,
    cpu_reads: AtomicU64,
    cpu_writes: AtomicU64,
}

impl NicMem {
    /// `capacity` bytes of NIC memory in buffers of `layout`.
    pub fn new(capacity: usize, layout: BufLayout) -> Result<Arc<NicMem>, NicMemError> {
        let stride = layout.stride();
        let count = capacity / stride;
        if count == 0 {
            return Err(NicMemError::Empty { capacity, stride });
        }
        let arena = Arena::new("nicmem", count as u32, layout).map_err(|_| NicMemError::Empty { capacity, stride })?;
        Ok(Arc::new(NicMem {
            arena: Arc::new(arena),
            free: Mutex::new((0..count as u32).rev().map(BufId).collect()),
            tx_refs: (0..count).map(|_| AtomicU32::new(0)).collect(),
            cpu_reads: AtomicU64::new(0),
            cpu_writes: AtomicU64::new(0),
        }))
    }

    /// The buffers.
    pub fn arena(&self) -> &Arc<Arena> {
        &self.arena
    }

    /// Addresses of NIC memory: CPU accesses here are uncached reads and write-combined writes.
    pub fn range(&self) -> Range<usize> {
        self.arena.base_addr()..self.arena.base_addr() + self.arena.size()
    }

    /// Whether `addr` is NIC memory.
    pub fn contains(&self, addr: usize) -> bool {
        self.range().contains(&addr)
    }

    /// `alloc_nicmem`: buffers holding `len` bytes, held by `core` ([`Owner::Core`]), or an error naming
    /// the capacity.
    pub fn alloc_nicmem(&self, len: usize, core: u16) -> Result<Vec<BufId>, NicMemError> {
        let layout = self.arena.layout();
        let bufs = len.div_ceil(layout.data_room()).max(1);
        let mut free = self.free.lock().unwrap();
        if bufs > free.len() {
            return Err(NicMemError::Capacity {
                asked: len,
                bufs,
                stride: layout.stride(),
                left: free.len() * layout.stride(),
                capacity: self.arena.size(),
            });
        }
        let at = free.len() - bufs;
        let got: Vec<BufId> = free.drain(at..).collect();
        got.iter().for_each(|&id| self.arena.take_free(id, core));
        Ok(got)
    }

    /// `dealloc_nicmem`: give buffers back (held as [`Owner::Core`], and by no transmit descriptor).
    pub fn dealloc_nicmem(&self, bufs: impl IntoIterator<Item = BufId>) {
        let mut free = self.free.lock().unwrap();
        for id in bufs {
            assert_eq!(self.held(id), 0, "nicmem buffer {} freed while transmit descriptors reference it", id.0);
            self.arena.transfer(id, Owner::Core, Owner::Free);
            free.push(id);
        }
    }

    /// One more transmit descriptor references `id`, which this core holds (nmKVS §4.2.2: "the KVS
    /// increments its reference count and uses the stable buffer as the response packet's payload").
    #[inline]
    pub fn hold(&self, id: BufId) {
        debug_assert_eq!(self.arena.owner(id), Owner::Core);
        // Relaxed: the descriptor carrying this reference reaches the device through a release/acquire
        // hand-off (the transmit queue), which orders the buffer's contents before the device's read.
        self.tx_refs[id.0 as usize].fetch_add(1, Ordering::Relaxed);
    }

    /// The transmit completion of a descriptor that held `id` (the completion callback of §5).
    #[inline]
    pub fn release(&self, id: BufId) {
        // Release: the device's read of the buffer happens before a core that sees the count reach 0
        // overwrites it.
        let before = self.tx_refs[id.0 as usize].fetch_sub(1, Ordering::Release);
        assert!(before > 0, "nicmem buffer {} released more often than held", id.0);
    }

    /// Transmit descriptors referencing `id` now; once 0 (with Acquire ordering), the device's reads of
    /// it are over and the core may overwrite it.
    #[inline]
    pub fn held(&self, id: BufId) -> u32 {
        self.tx_refs[id.0 as usize].load(Ordering::Acquire)
    }

    /// Transmit descriptor references outstanding over all buffers (0 once every held buffer's
    /// transmissions completed or were dropped: the end-of-run check that no reference leaked).
    pub fn references(&self) -> u64 {
        self.tx_refs.iter().map(|r| u64::from(r.load(Ordering::Acquire))).sum()
    }

    /// The device reads `len` bytes of a buffer a transmit descriptor holds (DMA within the NIC: no
    /// PCIe crossing). The buffer stays with its core.
    pub fn dma_read_held<R>(&self, id: BufId, len: usize, f: impl FnOnce(&[u8]) -> R) -> R {
        assert!(
            self.tx_refs[id.0 as usize].load(Ordering::Relaxed) > 0,
            "device read of unheld nicmem buffer {}",
            id.0
        );
        let len = len.min(self.arena.layout().data_room());
        // SAFETY: in range; a descriptor holds the buffer, and its core writes it only after an Acquire
        // load of the count reads 0, which cannot happen before this read's descriptor is released.
        f(unsafe { std::slice::from_raw_parts(self.arena.data_addr(id) as *const u8, len) })
    }

    /// Buffers not allocated.
    pub fn available(&self) -> usize {
        self.free.lock().unwrap().len()
    }

    /// The CPU reads `len` bytes of NIC memory at `addr` (an uncached read over PCIe): reported and counted.
    #[inline]
    pub fn cpu_read<P: Probe>(&self, p: &mut P, addr: usize, len: usize) {
        debug_assert!(self.contains(addr));
        p.touch(addr, len, Access::Read);
        self.cpu_reads.fetch_add(1, Ordering::Relaxed);
    }

    /// The CPU writes `len` bytes of NIC memory at `addr` (write-combined): reported and counted.
    #[inline]
    pub fn cpu_write<P: Probe>(&self, p: &mut P, addr: usize, len: usize) {
        debug_assert!(self.contains(addr));
        p.touch(addr, len, Access::Write);
        self.cpu_writes.fetch_add(1, Ordering::Relaxed);
    }

    /// CPU accesses counted so far: `(reads, writes)`.
    pub fn cpu_accesses(&self) -> (u64, u64) {
        (self.cpu_reads.load(Ordering::Relaxed), self.cpu_writes.load(Ordering::Relaxed))
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use crate::probe::CountingProbe;

    #[test]
    fn allocation_is_limited_to_the_capacity() {
        let m = NicMem::new(PAPER_CAPACITY, BufLayout::PACKED_2K).unwrap();
        assert_eq!(m.available(), 128);
        let a = m.alloc_nicmem(100 * 1984, 0).unwrap();
        assert_eq!(a.len(), 100);
        let e = m.alloc_nicmem(64 << 10, 0).unwrap_err();
        assert!(e.to_string().contains("exceeds the 57344 B left of 262144 B"), "{e}");
        m.dealloc_nicmem(a);
        assert_eq!(m.available(), 128);
        assert!(m.contains(m.range().start) && !m.contains(m.range().end));
        let p = &mut CountingProbe::default();
        m.cpu_write(p, m.range().start, 8);
        m.cpu_read(p, m.range().start, 8);
        assert_eq!(m.cpu_accesses(), (1, 1));
        assert!(matches!(NicMem::new(1000, BufLayout::PACKED_2K), Err(NicMemError::Empty { .. })));
    }
}
