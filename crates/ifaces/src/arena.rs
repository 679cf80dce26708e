//! Buffer arenas: the memory packets live in, and the ownership word that makes sharing it sound.
//!
//! An arena is one contiguous allocation of `count` buffers laid out as [`BufLayout`] says (by default
//! as DPDK's packet mempool lays out its objects, [`crate::mbuf`]): each has a metadata line (the mbuf
//! header's first line), the app runtime's private area if it asked for one (where FastClick keeps its
//! packet annotations), and the packet data. Addresses are real, so the simulator's cache model sees the
//! true layout.
//!
//! Buffers are shared between the NIC thread and worker threads, so every hand-off goes through the
//! buffer's [`Owner`] word. The owner words are rxlab's checking, not part of any design (the probe never
//! reports them), so they live apart from the buffers: one per cache line, the lines contiguous, so that
//! two cores' buffers never share one. (In the metadata lines, 2 KiB apart, all of them fell into 2 of
//! the host L1's 64 sets; moving them out made privRing's driver side 3-7 % faster, and the model
//! checker now runs the same code as production.) A hand-off that finds the wrong owner is a protocol
//! bug (a buffer freed twice, a completion reclaimed twice) and panics with the buffer and both states,
//! instead of letting two agents touch the same bytes. The device reaches bytes here
//! ([`Arena::dma_write`], [`Arena::dma_read`]) only while it holds the buffer; a core reaches them only
//! through the unique [`crate::Packet`] that holds it.
//!
//! A received buffer stays [`Owner::Posted`] from the core's post to its reclaim (`Posted -> Core`), and a
//! transmitted one [`Owner::Tx`] until the driver sees its transmit completion (`Tx -> Core`): the device
//! reads and writes bytes without touching the owner word, as a NIC never writes an mbuf header. That keeps the
//! word on the core's side (on real hardware, and in the live engine, where a NIC-side CAS moved the
//! word's line between the two threads twice per packet and cost a third of privRing's receive path);
//! the completion's release store, which the core's acquire load reads, orders the bytes
//! (DESIGN.md, "Concurrency"). Debug builds, the test suite's, still check that the device writes only
//! posted buffers and reads only queued ones.

#![allow(unsafe_code)]

use crate::sync::{AtomicU32, Ordering};
use std::fmt;
use std::ptr::NonNull;

pub use crate::mbuf::BufLayout;

/// Index of a buffer in its arena. A name only: who may touch the buffer is recorded in its [`Owner`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct BufId(pub u32);

/// Who holds a buffer. Transitions (each checked by [`Arena::transfer`], all made by cores):
/// `Free -> Core` (allocation), `Core -> Free` (free), `Core -> Posted` (given to the device in a
/// descriptor), `Posted -> Core` (the driver reclaimed it with the completion of the packet the device
/// wrote into it), `Core -> Tx` (queued for transmission), `Tx -> Core` (the driver saw the transmit
/// completion), `Posted -> Free` (teardown of a ring that still holds it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum Owner {
    /// In a pool (shared or a core's cache).
    Free = 0,
    /// Held by a core: a packet, or a driver's spare.
    Core = 1,
    /// Posted to the device in a receive descriptor; written by it, perhaps, and not yet reclaimed.
    Posted = 2,
    /// Queued for transmission; the device may read it.
    Tx = 3,
}

impl Owner {
    fn from_word(w: u32) -> Owner {
        match w & 0xff {
            0 => Owner::Free,
            1 => Owner::Core,
            2 => Owner::Posted,
            _ => Owner::Tx,
        }
    }
}

/// Why an arena cannot be built.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ArenaError {
    /// The layout leaves no data room or is not in whole lines.
    #[error("buffer layout: {0}")]
    Layout(String),
    /// The arena would need more memory than can be allocated.
    #[error("cannot allocate {count} buffers of {stride} B")]
    Alloc {
        /// Buffers asked for.
        count: usize,
        /// Their stride.
        stride: usize,
    },
}

/// Where a buffer's parts start, from its first byte.
#[derive(Debug, Clone, Copy)]
struct Offsets {
    meta: usize,
    private: usize,
    data: usize,
}

/// A region of packet buffers.
pub struct Arena {
    base: NonNull<u8>,
    count: u32,
    layout: BufLayout,
    /// Distance between buffers, bytes.
    stride: usize,
    /// Offsets of the metadata line, the private area and the data within a buffer.
    offsets: Offsets,
    /// `log2(stride)` when the stride is a power of two: [`Arena::id_of`] then shifts instead of
    /// dividing, on the device's per-packet path.
    stride_shift: Option<u32>,
    name: &'static str,
    /// Each buffer's owner word, alone in its cache line.
    owners: Box<[OwnerWord]>,
}

/// An owner word in a cache line of its own.
#[derive(Debug)]
#[repr(align(64))]
struct OwnerWord(AtomicU32);

// SAFETY: the arena owns its allocation. Bytes are reached only through `bytes`/`bytes_mut` by the
// agent whose ownership the owner word records (checked with atomics on every hand-off), and through
// `dma_write`/`dma_read`, which the device calls only for buffers it holds (a posted descriptor's or a
// queued transmit's, checked in debug builds). Owner words are atomics.
unsafe impl Send for Arena {}
// SAFETY: as above: shared access is mediated by the atomic owner words.
unsafe impl Sync for Arena {}

impl fmt::Debug for Arena {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Arena({}, {} x {} B at {:#x})", self.name, self.count, self.stride, self.base_addr())
    }
}

impl Arena {
    /// Allocate `count` zeroed buffers, all [`Owner::Free`], page-aligned.
    pub fn new(name: &'static str, count: u32, layout: BufLayout) -> Result<Arena, ArenaError> {
        layout.check().map_err(ArenaError::Layout)?;
        let stride = layout.stride();
        let alloc_err = ArenaError::Alloc { count: count as usize, stride };
        let size = (count.max(1) as usize).checked_mul(stride).ok_or(alloc_err.clone())?;
        let base = map_zeroed(size).ok_or(alloc_err)?;
        Ok(Arena {
            base,
            count,
            layout,
            stride,
            offsets: Offsets { meta: layout.meta_offset(), private: layout.priv_offset(), data: layout.data_offset() },
            stride_shift: stride.is_power_of_two().then(|| stride.trailing_zeros()),
            name,
            // Zero is `Owner::Free`.
            owners: (0..count).map(|_| OwnerWord(AtomicU32::new(0))).collect(),
        })
    }

    /// Number of buffers.
    pub fn count(&self) -> u32 {
        self.count
    }

    /// Buffer layout.
    pub fn layout(&self) -> BufLayout {
        self.layout
    }

    /// Address of the first byte of the arena.
    pub fn base_addr(&self) -> usize {
        self.base.as_ptr() as usize
    }

    /// Size of the arena in bytes.
    pub fn size(&self) -> usize {
        self.count as usize * self.stride
    }

    /// Panic unless `id` names a buffer of this arena: one compare inline, the message out of line.
    #[inline(always)]
    fn check(&self, id: BufId) {
        if id.0 >= self.count {
            self.out_of_range(id);
        }
    }

    #[cold]
    #[inline(never)]
    fn out_of_range(&self, id: BufId) -> ! {
        panic!("{}: buffer {} out of range ({} buffers)", self.name, id.0, self.count);
    }

    /// Address of the first byte of buffer `id`.
    #[inline]
    fn start(&self, id: BufId) -> usize {
        self.check(id);
        self.base_addr() + id.0 as usize * self.stride
    }

    /// Address of the metadata line of buffer `id` (the mbuf header's first line).
    #[inline]
    pub fn meta_addr(&self, id: BufId) -> usize {
        self.start(id) + self.offsets.meta
    }

    /// Address of the mbuf field that freeing buffer `id` reads outside its metadata line
    /// ([`BufLayout::free_read_offset`]), if its layout has one.
    #[inline]
    pub fn free_read_addr(&self, id: BufId) -> Option<usize> {
        Some(self.start(id) + self.layout.free_read_offset()?)
    }

    /// Address of the private area of buffer `id` ([`BufLayout::priv_len`] bytes).
    #[inline]
    pub fn priv_addr(&self, id: BufId) -> usize {
        self.start(id) + self.offsets.private
    }

    /// Address of the first data byte of buffer `id` (what a descriptor carries).
    #[inline]
    pub fn data_addr(&self, id: BufId) -> usize {
        self.start(id) + self.offsets.data
    }

    /// The buffer whose data starts at `addr`, if `addr` is one (descriptor validation).
    pub fn id_of(&self, addr: usize) -> Option<BufId> {
        let off = addr.checked_sub(self.base_addr() + self.offsets.data)?;
        let (index, aligned) = match self.stride_shift {
            Some(s) => (off >> s, off & (self.stride - 1) == 0),
            None => (off / self.stride, off % self.stride == 0),
        };
        (aligned && index < self.count as usize).then_some(BufId(index as u32))
    }

    #[inline]
    fn owner_word(&self, id: BufId) -> &AtomicU32 {
        self.check(id);
        &self.owners[id.0 as usize].0
    }

    /// Current owner of `id` (for invariant checks; racy by nature while a run is live).
    pub fn owner(&self, id: BufId) -> Owner {
        Owner::from_word(self.owner_word(id).load(Ordering::Acquire))
    }

    /// Core that allocated `id` last (recorded at `Free -> Core`).
    pub fn home(&self, id: BufId) -> u16 {
        (self.owner_word(id).load(Ordering::Relaxed) >> 16) as u16
    }

    /// Hand `id` from `from` to `to`. Panics if `from` does not hold it: that is a protocol bug that would
    /// otherwise let two agents touch the same bytes. An acquire load and a release store, so bytes
    /// written before a hand-off are visible after it. Not a compare-and-swap: only the holder moves a
    /// buffer, and the rings that pass buffers between agents order those moves, so a locked instruction
    /// (which on x86 waits for every earlier store, descriptor writes included) would buy nothing but a
    /// check for two holders racing, which the hand-off protocols already rule out.
    #[inline]
    pub fn transfer(&self, id: BufId, from: Owner, to: Owner) {
        let w = self.owner_word(id);
        let cur = w.load(Ordering::Acquire);
        if cur & 0xff != from as u32 {
            self.violated(id, format_args!("moved {from:?} -> {to:?}"), cur);
        }
        w.store((cur & !0xff) | to as u32, Ordering::Release);
    }

    #[cold]
    #[inline(never)]
    fn violated(&self, id: BufId, what: std::fmt::Arguments<'_>, word: u32) -> ! {
        panic!("buffer ownership violated: {} buffer {} {what} but is {:?}", self.name, id.0, Owner::from_word(word));
    }

    /// `Free -> Core` for an allocation by core `core`, recording it as the buffer's home.
    #[inline]
    pub fn take_free(&self, id: BufId, core: u16) {
        let w = self.owner_word(id);
        let cur = w.load(Ordering::Acquire);
        if cur & 0xff != Owner::Free as u32 {
            self.violated(id, format_args!("allocated"), cur);
        }
        w.store((u32::from(core) << 16) | Owner::Core as u32, Ordering::Release);
    }

    /// The device writes `data` at `offset` into the data room of `id`, which must be [`Owner::Posted`]
    /// (checked in debug builds). The design publishes the packet afterwards with a release store (its
    /// completion), which orders these bytes for the core that reclaims the buffer. Returns false,
    /// writing nothing, if the data does not fit.
    #[inline]
    pub fn dma_write(&self, id: BufId, offset: usize, data: &[u8]) -> bool {
        if offset + data.len() > self.layout.data_room() {
            return false;
        }
        debug_assert_eq!(
            self.owner(id),
            Owner::Posted,
            "{}: device wrote buffer {} that is not posted",
            self.name,
            id.0
        );
        // SAFETY: in range (`data_addr` checks the id, the test above the length); the buffer is Posted, so
        // no core holds a reference to its bytes (cores reach bytes only as Core, and the driver reclaims a
        // buffer only after the completion the device publishes once this write is done), and the single
        // device agent is the only writer.
        unsafe {
            std::ptr::copy_nonoverlapping(data.as_ptr(), (self.data_addr(id) + offset) as *mut u8, data.len());
        }
        true
    }

    /// The device reads `len` bytes of `id`, which must be [`Owner::Tx`] (checked in debug builds). The
    /// buffer stays Tx: the driver takes it back when the design's transmit completion, released after
    /// this read, tells it the packet is sent.
    #[inline]
    pub fn dma_read<R>(&self, id: BufId, len: usize, f: impl FnOnce(&[u8]) -> R) -> R {
        let len = len.min(self.layout.data_room());
        debug_assert_eq!(
            self.owner(id),
            Owner::Tx,
            "{}: device read buffer {} that is not queued for Tx",
            self.name,
            id.0
        );
        // SAFETY: in range (`data_addr` checks the id, `len` is clamped to the room); the buffer is Tx, so
        // no core holds a reference to its bytes until the driver reads the transmit completion that the
        // device publishes after this read.
        f(unsafe { std::slice::from_raw_parts(self.data_addr(id) as *const u8, len) })
    }

    /// The buffer whose data room holds `addr`, and the offset of `addr` in it: where a packet that is a
    /// slice of a larger buffer lies (an MPRQ stride, [`crate::mprq`]).
    pub fn locate(&self, addr: usize) -> Option<(BufId, usize)> {
        let off = addr.checked_sub(self.base_addr() + self.offsets.data)?;
        let (index, within) = (off / self.stride, off % self.stride);
        (index < self.count as usize && within < self.layout.data_room()).then_some((BufId(index as u32), within))
    }

    /// Read `len` bytes at `offset` in the data room of `id`, a buffer that is not free, for an agent the
    /// design's protocol lets read them: a core reading a stride whose completion it has acquired, or the
    /// device sending a slice a core queued for transmission. Nothing may write those bytes meanwhile:
    /// the device writes only strides it has not completed, and a stride is not written again before the
    /// buffer has been released by every packet in it and reposted ([`crate::mprq`]).
    #[inline]
    pub fn read_at<R>(&self, id: BufId, offset: usize, len: usize, f: impl FnOnce(&[u8]) -> R) -> R {
        let len = len.min(self.layout.data_room().saturating_sub(offset));
        debug_assert_ne!(self.owner(id), Owner::Free, "{}: read of free buffer {}", self.name, id.0);
        // SAFETY: in range (`data_addr` checks the id, `len` is clamped to the room after `offset`); by the
        // protocol above no agent writes these bytes while they are read, and no `&mut` to them exists
        // (cores reach them only through read-only slices or packets lent over other strides).
        f(unsafe { std::slice::from_raw_parts((self.data_addr(id) + offset) as *const u8, len) })
    }

    /// Count buffers by owner: `[free, core, posted, tx]`. Used by the end-of-run invariant.
    pub fn census(&self) -> [u32; 4] {
        let mut c = [0u32; 4];
        for i in 0..self.count {
            c[self.owner(BufId(i)) as usize] += 1;
        }
        c
    }
}

impl Drop for Arena {
    fn drop(&mut self) {
        let size = (self.count.max(1) as usize) * self.stride;
        // SAFETY: `base` and `size` are exactly what `map_zeroed` mapped, and nothing borrows the arena
        // any more (this is its drop).
        unsafe { libc::munmap(self.base.as_ptr().cast(), size) };
    }
}

/// Anonymous private memory of `size` bytes: page-aligned and zero-filled by the kernel on first touch,
/// so a large arena costs nothing until used (an aligned heap allocation would be memset in full).
/// Transparent huge pages are asked for, as DPDK backs its mempools with huge pages.
fn map_zeroed(size: usize) -> Option<NonNull<u8>> {
    // SAFETY: an anonymous private mapping with no address hint has no preconditions; failure is checked.
    let p = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            size,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
            -1,
            0,
        )
    };
    if p == libc::MAP_FAILED {
        return None;
    }
    // SAFETY: `p` is the mapping just made, of `size` bytes; the advice is only a hint and may fail.
    unsafe { libc::madvise(p, size, libc::MADV_HUGEPAGE) };
    NonNull::new(p.cast())
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn layout_and_lookup() {
        let a = Arena::new("t", 4, BufLayout::PACKED_2K).unwrap();
        assert_eq!(a.data_addr(BufId(1)) - a.data_addr(BufId(0)), 2048);
        assert_eq!(a.id_of(a.data_addr(BufId(3))), Some(BufId(3)));
        assert_eq!(a.id_of(a.data_addr(BufId(3)) + 1), None);
        assert_eq!(a.id_of(a.base_addr() + 4 * 2048 + 64), None);
        assert_eq!(a.census(), [4, 0, 0, 0]);
        let packed = |stride, priv_len| BufLayout { kind: crate::mbuf::BufKind::Packed { stride }, priv_len };
        assert!(matches!(Arena::new("t", 1, packed(100, 0)), Err(ArenaError::Layout(_))));
        // A stride that is not a power of two (DPDK's mempool objects) divides instead of shifting, to
        // the same answers; the private area sits between the metadata line and the data.
        let l = BufLayout { priv_len: 96, ..BufLayout::default() };
        let m = Arena::new("t", 4, l).unwrap();
        assert_eq!(m.data_addr(BufId(3)) - m.data_addr(BufId(2)), l.stride());
        assert_eq!(m.id_of(m.data_addr(BufId(3))), Some(BufId(3)));
        assert_eq!(m.id_of(m.data_addr(BufId(3)) + 64), None);
        assert!(m.meta_addr(BufId(2)) < m.priv_addr(BufId(2)) && m.priv_addr(BufId(2)) + 96 <= m.data_addr(BufId(2)));
        assert_eq!(m.meta_addr(BufId(2)) % 64, 0);
    }

    #[test]
    fn hand_offs_follow_the_protocol() {
        let a = Arena::new("t", 2, BufLayout::default()).unwrap();
        let b = BufId(1);
        a.take_free(b, 7);
        assert_eq!(a.home(b), 7);
        a.transfer(b, Owner::Core, Owner::Posted);
        assert!(a.dma_write(b, 0, &[1, 2, 3]));
        assert_eq!(a.owner(b), Owner::Posted, "the device leaves the owner word alone");
        a.transfer(b, Owner::Posted, Owner::Core);
        a.transfer(b, Owner::Core, Owner::Tx);
        a.dma_read(b, 3, |d| assert_eq!(d, &[1, 2, 3]));
        assert_eq!(a.owner(b), Owner::Tx, "until the driver sees the completion");
        a.transfer(b, Owner::Tx, Owner::Core);
        assert_eq!(a.home(b), 7);
    }

    #[test]
    #[cfg(debug_assertions)]
    #[should_panic(expected = "not posted")]
    fn the_device_writes_only_posted_buffers() {
        let a = Arena::new("t", 1, BufLayout::default()).unwrap();
        a.take_free(BufId(0), 0);
        a.dma_write(BufId(0), 0, &[1]);
    }

    #[test]
    #[should_panic(expected = "buffer ownership violated")]
    fn double_free_panics() {
        let a = Arena::new("t", 1, BufLayout::default()).unwrap();
        a.take_free(BufId(0), 0);
        a.transfer(BufId(0), Owner::Core, Owner::Free);
        a.transfer(BufId(0), Owner::Core, Owner::Free);
    }
}
