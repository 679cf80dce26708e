//! An array that the simulator sees whole while the host holds only the elements ever written.
//!
//! The simulator takes a table's host addresses as simulated ones ([`crate::App::tables`]), so an array
//! needs its full address range, but not host memory behind every element: a hash table whose lookups
//! land on random elements writes a page for every few elements, and a table sized for millions of flows
//! that holds thousands would commit all of it. A [`SparseArray`] reserves the address range (never read
//! or written, so no page of it is committed) and keeps the contents of the written elements in a hash
//! map; an element never written reads as `T::default()`.

use rustc_hash::FxHashMap;
use std::ops::Range;

/// An element alone in 64-byte-aligned cache lines: the stride and alignment of a [`SparseArray`]'s
/// addresses, as of an array of cache-aligned elements.
#[derive(Debug)]
#[repr(C, align(64))]
struct Line<T>(T);

/// An array of `len` elements at the addresses of an array of 64-byte-aligned `T`s, holding in host
/// memory only the elements written.
#[derive(Debug)]
pub struct SparseArray<T> {
    /// Reserved for `len` elements and never touched: only its addresses are used.
    lines: Vec<Line<T>>,
    len: usize,
    written: FxHashMap<u32, T>,
}

impl<T: Copy + Default> SparseArray<T> {
    /// Bytes from one element's address to the next's.
    pub const STRIDE: usize = std::mem::size_of::<Line<T>>();

    /// An array of `len` (at most 2^32) default elements, none held.
    pub fn new(len: usize) -> SparseArray<T> {
        assert!(len <= 1 << 32, "a sparse array of {len} elements");
        SparseArray { lines: Vec::with_capacity(len), len, written: FxHashMap::default() }
    }

    /// Element `i` (`T::default()` if never written).
    #[inline]
    pub fn get(&self, i: usize) -> T {
        debug_assert!(i < self.len);
        self.written.get(&(i as u32)).copied().unwrap_or_default()
    }

    /// Element `i`, to write (held from now on).
    #[inline]
    pub fn get_mut(&mut self, i: usize) -> &mut T {
        debug_assert!(i < self.len);
        self.written.entry(i as u32).or_default()
    }

    /// The host address of element `i`.
    #[inline]
    pub fn addr(&self, i: usize) -> usize {
        debug_assert!(i < self.len);
        self.lines.as_ptr() as usize + i * Self::STRIDE
    }

    /// The host memory of the whole array.
    pub fn span(&self) -> Range<usize> {
        crate::span(self.lines.as_ptr(), self.len)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn elements_read_as_written_or_default_at_cache_aligned_addresses() {
        let mut a = SparseArray::<[u32; 3]>::new(1 << 20);
        assert_eq!(SparseArray::<[u32; 3]>::STRIDE, 64);
        assert_eq!(a.span().len(), 64 << 20);
        assert_eq!(a.span().start % 64, 0);
        assert_eq!(a.addr(5), a.span().start + 5 * 64);
        assert_eq!(a.get(7), [0; 3]);
        a.get_mut(7)[1] = 9;
        a.get_mut(1 << 19)[0] = 4;
        assert_eq!((a.get(7), a.get(1 << 19), a.get(8)), ([0, 9, 0], [4, 0, 0], [0; 3]));
        assert_eq!(a.written.len(), 2, "reads hold nothing");
    }
}
