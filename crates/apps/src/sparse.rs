//! Arrays that the simulator sees whole, at the addresses of 64-byte-aligned elements, while the host
//! holds only what they contain.
//!
//! The simulator takes a table's host addresses as simulated ones ([`crate::App::tables`]), so an array
//! needs its full address range, but not host memory behind every element, nor a whole line for each.
//! Both arrays here reserve the address range of `len` cache-aligned elements ([`Reserved`], never read
//! or written, so no page of it is committed) and keep the contents elsewhere:
//!
//! - a [`SparseArray`] holds the elements ever written in a hash map (a hash table's buckets, which
//!   lookups land on at random: a page would be committed for every few elements written);
//! - a [`LineVec`] holds its elements densely, in the order pushed (a table's per-entry records, each
//!   alone in its line on the machine modelled: a few bytes a record instead of 64).

use rustc_hash::FxHashMap;
use std::ops::Range;

/// An element alone in 64-byte-aligned cache lines: the stride and alignment of the addresses, as of
/// an array of cache-aligned elements.
#[derive(Debug)]
#[repr(C, align(64))]
struct Line<T>(T);

/// The address range of `len` 64-byte-aligned `T`s, reserved and never touched.
#[derive(Debug)]
struct Reserved<T> {
    lines: Vec<Line<T>>,
    len: usize,
}

impl<T> Reserved<T> {
    const STRIDE: usize = std::mem::size_of::<Line<T>>();

    fn new(len: usize) -> Reserved<T> {
        assert!(len <= 1 << 32, "an array of {len} elements");
        Reserved { lines: Vec::with_capacity(len), len }
    }

    #[inline]
    fn addr(&self, i: usize) -> usize {
        debug_assert!(i < self.len);
        self.lines.as_ptr() as usize + i * Self::STRIDE
    }

    fn span(&self) -> Range<usize> {
        crate::span(self.lines.as_ptr(), self.len)
    }
}

/// An array of `len` elements at the addresses of an array of 64-byte-aligned `T`s, holding in host
/// memory only the elements written.
#[derive(Debug)]
pub struct SparseArray<T> {
    at: Reserved<T>,
    written: FxHashMap<u32, T>,
}

impl<T: Copy + Default> SparseArray<T> {
    /// Bytes from one element's address to the next's.
    pub const STRIDE: usize = Reserved::<T>::STRIDE;

    /// An array of `len` (at most 2^32) default elements, none held.
    pub fn new(len: usize) -> SparseArray<T> {
        SparseArray { at: Reserved::new(len), written: FxHashMap::default() }
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

/// A growable array of at most `capacity` elements at the addresses of an array of 64-byte-aligned
/// `T`s, holding its elements densely in host memory.
#[derive(Debug)]
pub struct LineVec<T> {
    at: Reserved<T>,
    items: Vec<T>,
}

impl<T> LineVec<T> {
    /// Bytes from one element's address to the next's.
    pub const STRIDE: usize = Reserved::<T>::STRIDE;

    /// An empty array with room for `capacity` (at most 2^32) elements.
    pub fn with_capacity(capacity: usize) -> LineVec<T> {
        LineVec { at: Reserved::new(capacity), items: Vec::new() }
    }

    /// Append `v`; returns its index. Panics beyond the capacity.
    #[inline]
    pub fn push(&mut self, v: T) -> usize {
        assert!(self.items.len() < self.at.len, "a line array of {} elements is full", self.at.len);
        self.items.push(v);
        self.items.len() - 1
    }

    /// Element `i`, to write.
    #[inline]
    pub fn get_mut(&mut self, i: usize) -> &mut T {
        &mut self.items[i]
    }

    /// The host address of element `i` (an element pushed or still to come).
    #[inline]
    pub fn addr(&self, i: usize) -> usize {
        self.at.addr(i)
    }

    /// The host memory of the whole capacity.
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

    #[test]
    fn a_line_vec_holds_its_elements_densely_at_line_addresses() {
        let mut v = LineVec::<u64>::with_capacity(1000);
        assert_eq!((v.span().len(), v.span().start % 64), (64_000, 0));
        assert_eq!(v.push(5), 0);
        assert_eq!(v.push(6), 1);
        *v.get_mut(0) += 1;
        assert_eq!(v.items, [6, 6]);
        assert_eq!(v.addr(999), v.span().start + 999 * 64);
        assert!(
            std::panic::catch_unwind(move || {
                let mut full = LineVec::<u8>::with_capacity(1);
                full.push(1);
                full.push(2);
            })
            .is_err()
        );
    }
}
