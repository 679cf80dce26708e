//! The double mapping of an Ensō Pipe (Ensō §5.1): one shared-memory object mapped twice, back to back, so
//! that any window of up to the pipe's size starting anywhere in the first copy is contiguous in virtual
//! memory, across the wrap-around. Real virtual-memory mirroring: a write through one copy is visible
//! through the other because both are the same physical pages.
//!
//! The mirror makes two addresses alias one byte without the compiler knowing (DESIGN.md, "Concurrency"):
//! a write through one copy and a read through the other in the same function could be folded. So bytes
//! are reached only through raw pointers handed out here, never through two live references, and every
//! hand-off between agents goes through an atomic release/acquire (the pipe's tail word, the Head_SW
//! register, a TX notification), which also stops the compiler from reusing a load across it.

#![allow(unsafe_code)]

use std::ptr::NonNull;

/// Why a pipe's memory cannot be mapped.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MirrorError {
    /// The size is zero or not a multiple of the page size.
    #[error("pipe size {size} B is not a non-zero multiple of the page size {page} B")]
    Size {
        /// Size asked for.
        size: usize,
        /// The system page size.
        page: usize,
    },
    /// A system call failed.
    #[error("cannot map a pipe of {size} B: {call} failed: {err}")]
    Os {
        /// Size asked for.
        size: usize,
        /// The failing call.
        call: &'static str,
        /// The OS error.
        err: String,
    },
}

/// The system page size.
pub fn page_size() -> usize {
    // SAFETY: sysconf has no preconditions.
    let n = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    usize::try_from(n).unwrap_or(4096)
}

/// `size` bytes of shared memory mapped twice, contiguously, at `base` and `base + size`.
#[derive(Debug)]
pub struct Mirror {
    base: NonNull<u8>,
    size: usize,
}

// SAFETY: the mapping is plain memory owned by this value; who may touch which bytes is decided by the
// pipe protocol (pipe.rs) through atomics, not by the thread that holds the `Mirror`.
unsafe impl Send for Mirror {}
// SAFETY: as above.
unsafe impl Sync for Mirror {}

impl Mirror {
    /// Both mappings' addresses, `[base, base + 2 * size)`.
    pub fn range(&self) -> std::ops::Range<usize> {
        let base = self.base.as_ptr() as usize;
        base..base + 2 * self.size
    }

    /// Map `size` zeroed bytes twice: reserve `2 * size` of address space, then map one memfd object over
    /// each half with `MAP_FIXED | MAP_SHARED`.
    pub fn new(size: usize) -> Result<Mirror, MirrorError> {
        let page = page_size();
        if size == 0 || !size.is_multiple_of(page) || size > isize::MAX as usize / 2 {
            return Err(MirrorError::Size { size, page });
        }
        let os = |call| MirrorError::Os { size, call, err: std::io::Error::last_os_error().to_string() };
        // SAFETY: a NUL-terminated name and valid flags.
        let fd = unsafe { libc::memfd_create(c"rxlab-enso-pipe".as_ptr(), libc::MFD_CLOEXEC) };
        if fd < 0 {
            return Err(os("memfd_create"));
        }
        let mapped = (|| {
            // SAFETY: `fd` is the memfd we just created.
            if unsafe { libc::ftruncate(fd, size as libc::off_t) } != 0 {
                return Err(os("ftruncate"));
            }
            // SAFETY: an anonymous PROT_NONE reservation at an address of the kernel's choosing.
            let base = unsafe {
                libc::mmap(
                    std::ptr::null_mut(),
                    2 * size,
                    libc::PROT_NONE,
                    libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                    -1,
                    0,
                )
            };
            if base == libc::MAP_FAILED {
                return Err(os("mmap (reserve)"));
            }
            for half in 0..2 {
                // SAFETY: MAP_FIXED over our own reservation `[base, base + 2 * size)`, which nothing else
                // uses: it replaces that half of the reservation with the shared object.
                let at = unsafe {
                    libc::mmap(
                        base.cast::<u8>().add(half * size).cast(),
                        size,
                        libc::PROT_READ | libc::PROT_WRITE,
                        libc::MAP_SHARED | libc::MAP_FIXED,
                        fd,
                        0,
                    )
                };
                if at == libc::MAP_FAILED {
                    // SAFETY: unmapping our own reservation.
                    unsafe { libc::munmap(base, 2 * size) };
                    return Err(os("mmap (mirror)"));
                }
            }
            Ok(base)
        })();
        // SAFETY: the mappings keep the object alive; the descriptor is no longer needed.
        unsafe { libc::close(fd) };
        let base = NonNull::new(mapped?.cast::<u8>()).expect("mmap does not return null on success");
        Ok(Mirror { base, size })
    }

    /// Size of the pipe (one copy).
    pub fn size(&self) -> usize {
        self.size
    }

    /// Address of the byte at free-running position `pos` in the first copy (for probe reports).
    #[inline]
    pub fn addr(&self, pos: u64) -> usize {
        self.base.as_ptr() as usize + (pos % self.size as u64) as usize
    }

    /// Pointer to `len` contiguous bytes starting at position `pos` (they run into the second copy when
    /// they cross the wrap-around). Panics if `len` exceeds the pipe size.
    #[inline]
    pub fn window(&self, pos: u64, len: usize) -> NonNull<u8> {
        assert!(len <= self.size, "a window of {len} B does not fit a {} B pipe", self.size);
        let off = (pos % self.size as u64) as usize;
        // SAFETY: `off + len <= 2 * size`, inside the double mapping.
        unsafe { NonNull::new_unchecked(self.base.as_ptr().add(off)) }
    }

    /// Copy `data` to position `pos`.
    ///
    /// # Safety
    /// No other agent may access `[pos, pos + data.len())` (modulo the size) until a release/acquire
    /// hand-off after this write, and no reference into those bytes may be live.
    #[inline]
    pub unsafe fn write(&self, pos: u64, data: &[u8]) {
        let dst = self.window(pos, data.len());
        // SAFETY: the window is inside the mapping and the caller guarantees exclusive access.
        unsafe { std::ptr::copy_nonoverlapping(data.as_ptr(), dst.as_ptr(), data.len()) }
    }

    /// The `len` bytes at position `pos`, for the duration of `f`.
    ///
    /// # Safety
    /// No agent may write `[pos, pos + len)` (modulo the size) while `f` runs, and the bytes must have
    /// been handed to the caller by a release/acquire after their last write.
    #[inline]
    pub unsafe fn read<R>(&self, pos: u64, len: usize, f: impl FnOnce(&[u8]) -> R) -> R {
        let src = self.window(pos, len);
        // SAFETY: inside the mapping; the caller guarantees no concurrent writer, and the slice does not
        // outlive `f`.
        f(unsafe { std::slice::from_raw_parts(src.as_ptr(), len) })
    }
}

impl Drop for Mirror {
    fn drop(&mut self) {
        // SAFETY: both halves were mapped by `new` and no pointer into them outlives the mirror (pipes
        // hold it in an `Arc` that lent packets' drivers keep alive).
        unsafe { libc::munmap(self.base.as_ptr().cast(), 2 * self.size) };
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn the_second_copy_mirrors_the_first() {
        let page = page_size();
        let m = Mirror::new(2 * page).unwrap();
        let data: Vec<u8> = (0..100u8).collect();
        // SAFETY: single-threaded test; no references into the mirror are live.
        unsafe { m.write(2 * page as u64 - 40, &data) };
        // The 60 bytes past the end landed at the start of the pipe, seen through the first copy.
        // SAFETY: as above.
        unsafe { m.read(0, 60, |b| assert_eq!(b, &data[40..])) };
        // SAFETY: as above.
        unsafe { m.read(2 * page as u64 - 40, 100, |b| assert_eq!(b, &data[..])) };
        assert_eq!(m.window(5, 1).as_ptr() as usize, m.window(5 + 2 * page as u64, 1).as_ptr() as usize);
    }

    #[test]
    fn sizes_must_be_whole_pages() {
        let page = page_size();
        assert!(matches!(Mirror::new(page + 64), Err(MirrorError::Size { .. })));
        assert!(matches!(Mirror::new(0), Err(MirrorError::Size { .. })));
    }
}
