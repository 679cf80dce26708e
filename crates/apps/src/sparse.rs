//! Arrays that the simulator sees whole, at the addresses of 64-byte-aligned elements, while the host
//! holds only what is ever read.
//!
//! The simulator takes a table's host addresses as simulated ones ([`crate::App::tables`]), so an array
//! needs its full address range, but not host memory behind every element. [`Lines`] reserves the
//! address range of an array of cache lines (never read or written, so no page of it is committed); an
//! array whose contents the host keeps elsewhere, or needs not keep at all (FastClick's flow control
//! blocks, whose values the table's entries already hold), is that range alone. A [`SparseArray`] adds
//! the elements ever written, in a hash map: a hash table's buckets, which lookups land on at random,
//! would otherwise commit a page for every few elements written.

use rustc_hash::FxHashMap;
use std::ops::Range;

/// Bytes of a cache line: the stride and alignment of the addresses of [`Lines`].
pub const LINE: usize = 64;

/// A cache line's worth of bytes, aligned as one.
#[derive(Debug)]
#[repr(C, align(64))]
struct Line([u8; LINE]);

/// The addresses of `len` consecutive 64-byte-aligned lines, reserved and never touched.
#[derive(Debug)]
pub struct Lines {
    lines: Vec<Line>,
    len: usize,
}

impl Lines {
    /// The addresses of `len` (at most 2^32) lines.
    pub fn new(len: usize) -> Lines {
        assert!(len <= 1 << 32, "an array of {len} lines");
        Lines { lines: Vec::with_capacity(len), len }
    }

    /// The host address of line `i`.
    #[inline]
    pub fn addr(&self, i: usize) -> usize {
        debug_assert!(i < self.len);
        self.lines.as_ptr() as usize + i * LINE
    }

    /// The host memory of all the lines.
    pub fn span(&self) -> Range<usize> {
        crate::span(self.lines.as_ptr(), self.len)
    }
}

/// An array of `len` elements, each alone in a 64-byte line, holding in host memory only the elements
/// written.
#[derive(Debug)]
pub struct SparseArray<T> {
    at: Lines,
    written: FxHashMap<u32, T>,
}

impl<T: Copy + Default> SparseArray<T> {
    /// An element fits a line.
    const FITS: () = assert!(std::mem::size_of::<T>() <= LINE);

    /// An array of `len` (at most 2^32) default elements, none held.
    pub fn new(len: usize) -> SparseArray<T> {
        let () = Self::FITS;
        SparseArray { at: Lines::new(len), written: FxHashMap::default() }
    }

    /// Element `i` (`T::default()` if never written).
    #[inline]
    pub fn get(&self, i: usize) -> T {
        debug_assert!(i < self.at.len);
        self.written.get(&(i as u32)).copied().unwrap_or_default()
    }

    /// Element `i`, to write (held from now on).
    #[inline]
    pub fn get_mut(&mut self, i: usize) -> &mut T {
        debug_assert!(i < self.at.len);
        self.written.entry(i as u32).or_default()
    }

    /// The host address of element `i`.
    #[inline]
    pub fn addr(&self, i: usize) -> usize {
        self.at.addr(i)
    }

    /// The host memory of the whole array.
    pub fn span(&self) -> Range<usize> {
        self.at.span()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn elements_read_as_written_or_default_at_cache_aligned_addresses() {
        let mut a = SparseArray::<[u32; 3]>::new(1 << 20);
        assert_eq!(a.span().len(), 64 << 20);
        assert_eq!(a.span().start % 64, 0);
        assert_eq!(a.addr(5), a.span().start + 5 * 64);
        assert_eq!(a.get(7), [0; 3]);
        a.get_mut(7)[1] = 9;
        a.get_mut(1 << 19)[0] = 4;
        assert_eq!((a.get(7), a.get(1 << 19), a.get(8)), ([0, 9, 0], [4, 0, 0], [0; 3]));
        assert_eq!(a.written.len(), 2, "reads hold nothing");
    }

    #[test]
    fn lines_are_addresses_alone() {
        let l = Lines::new(1000);
        assert_eq!((l.span().len(), l.span().start % 64), (64_000, 0));
        assert_eq!(l.addr(999), l.span().start + 999 * 64);
        assert_eq!(l.lines.len(), 0, "nothing is held");
    }
}
