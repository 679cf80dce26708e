//! On-NIC memory (nicmem §4.1): a region of buffers the NIC reaches without crossing PCIe and the CPU
//! reaches only over PCIe (reads uncached, writes write-combined). In rxlab it is an [`Arena`] of its own,
//! so its address range tells an engine which accesses are to NIC memory: the simulator charges CPU
//! accesses in [`NicMem::range`] as uncached reads and write-combined writes; the live engine keeps it in
//! host RAM, and code that touches it on purpose goes through [`NicMem::cpu_read`]/[`NicMem::cpu_write`],
//! which count every access.
//!
//! Allocation mirrors the paper's `alloc_nicmem(device, len)` (§5, Listing 1) with a capacity limit:
//! 256 KiB, as the paper's ConnectX-5 firmware exposes, or more for a "future device" (§6.6, C2).

use crate::arena::{Arena, BufId, BufLayout, Owner};
use crate::probe::{Access, Probe};
use crate::sync::{Arc, AtomicU64, Mutex, Ordering};
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
    cpu_reads: AtomicU64,
    cpu_writes: AtomicU64,
}

impl NicMem {
    /// `capacity` bytes of NIC memory in buffers of `layout`.
    pub fn new(capacity: usize, layout: BufLayout) -> Result<Arc<NicMem>, NicMemError> {
        let count = capacity / layout.stride;
        if count == 0 {
            return Err(NicMemError::Empty { capacity, stride: layout.stride });
        }
        let arena = Arena::new("nicmem", count as u32, layout)
            .map_err(|_| NicMemError::Empty { capacity, stride: layout.stride })?;
        Ok(Arc::new(NicMem {
            arena: Arc::new(arena),
            free: Mutex::new((0..count as u32).rev().map(BufId).collect()),
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
                stride: layout.stride,
                left: free.len() * layout.stride,
                capacity: self.arena.size(),
            });
        }
        let at = free.len() - bufs;
        let got: Vec<BufId> = free.drain(at..).collect();
        got.iter().for_each(|&id| self.arena.take_free(id, core));
        Ok(got)
    }

    /// `dealloc_nicmem`: give buffers back (held as [`Owner::Core`]).
    pub fn dealloc_nicmem(&self, bufs: impl IntoIterator<Item = BufId>) {
        let mut free = self.free.lock().unwrap();
        for id in bufs {
            self.arena.transfer(id, Owner::Core, Owner::Free);
            free.push(id);
        }
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
        let m = NicMem::new(PAPER_CAPACITY, BufLayout::default()).unwrap();
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
        assert!(matches!(NicMem::new(1000, BufLayout::default()), Err(NicMemError::Empty { .. })));
    }
}
