//! nmKVS (nicmem §4.2.2): hot items live in NIC memory and are sent zero-copy. Each hot item has a stable
//! buffer in nicmem (a valid bit, and a reference count of transmit descriptors in flight, decremented by
//! transmit completions: [`NicMem::hold`]/[`NicMem::release`]) and a pending buffer in host memory for
//! updates:
//!
//! - set: overwrite the pending buffer, then clear the stable buffer's valid bit (never write in place:
//!   the NIC may be reading the stable buffer for a queued response);
//! - get: if the stable buffer is valid, take a reference and send it zero-copy; otherwise, if no
//!   descriptor references it, copy the pending buffer into it, mark it valid and send it zero-copy;
//!   otherwise send a copy of the pending buffer.
//!
//! Hot items are chosen by Space-Saving (the paper's reference \[87\]) over the request stream
//! ([`SpaceSaving`]). As in MICA, one core serves a key (gets and sets); the NIC reads stable buffers
//! concurrently and completes transmissions, which is the race the reference count closes.
//!
//! A zero-copy response is a header packet with the stable buffer attached as a shared second segment
//! ([`ZeroCopy::attach`]); the nicmem designs' transmit path gathers it and releases the reference on
//! completion, or when the packet is dropped before it is sent.

#![allow(unsafe_code)]

use super::region::{NicMem, NicMemError};
use super::split::HELD;
use crate::arena::BufId;
use crate::packet::Packet;
use crate::probe::{Access, Probe};
use crate::sync::Arc;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::ptr::NonNull;
use wire::checksum;

/// A hasher for keys that are already 64-bit hashes (a KVS key's hash): one multiply to spread them.
#[derive(Debug, Default, Clone, Copy)]
pub struct KeyHashHasher(u64);

impl Hasher for KeyHashHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        self.0 = bytes.iter().fold(self.0, |h, &b| (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3));
    }
    fn write_u64(&mut self, x: u64) {
        self.0 = x.wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }
}

/// A map keyed by 64-bit key hashes.
pub type KeyMap<V> = HashMap<u64, V, BuildHasherDefault<KeyHashHasher>>;

/// Space-Saving (Metwally, Agrawal, El Abbadi, ICDT'05; nicmem's reference \[87\]): `k` counters; an
/// unmonitored key replaces the key with the smallest count and inherits that count as its
/// overestimate, so any key with frequency above `N/k` is monitored. The counters form a binary min-heap
/// (the smallest count at the root), so each request costs O(log k).
#[derive(Debug, Clone)]
pub struct SpaceSaving {
    k: usize,
    /// `(count, key)`, a min-heap on count.
    heap: Vec<(u64, u64)>,
    /// Where each monitored key sits in `heap`.
    at: KeyMap<usize>,
}

impl SpaceSaving {
    /// `k` counters (at least one).
    pub fn new(k: usize) -> SpaceSaving {
        let k = k.max(1);
        SpaceSaving { k, heap: Vec::with_capacity(k), at: KeyMap::with_capacity_and_hasher(k, Default::default()) }
    }

    /// Count one request for `key`; reports the counter it updates.
    pub fn offer<P: Probe>(&mut self, p: &mut P, key: u64) {
        let i = match self.at.get(&key) {
            Some(&i) => {
                self.heap[i].0 += 1;
                i
            }
            None if self.heap.len() < self.k => {
                self.heap.push((1, key));
                self.at.insert(key, self.heap.len() - 1);
                self.sift_up(self.heap.len() - 1);
                return p.touch(self.heap.as_ptr() as usize, 16, Access::Write);
            }
            None => {
                let (min, victim) = self.heap[0];
                self.at.remove(&victim);
                self.heap[0] = (min + 1, key);
                self.at.insert(key, 0);
                0
            }
        };
        p.touch(self.heap[i..].as_ptr() as usize, 16, Access::Write);
        self.sift_down(i);
    }

    fn swap(&mut self, a: usize, b: usize) {
        self.heap.swap(a, b);
        self.at.insert(self.heap[a].1, a);
        self.at.insert(self.heap[b].1, b);
    }

    fn sift_up(&mut self, mut i: usize) {
        while i > 0 && self.heap[(i - 1) / 2].0 > self.heap[i].0 {
            self.swap(i, (i - 1) / 2);
            i = (i - 1) / 2;
        }
    }

    fn sift_down(&mut self, mut i: usize) {
        loop {
            let smallest = [2 * i + 1, 2 * i + 2]
                .into_iter()
                .filter(|&c| c < self.heap.len())
                .fold(i, |s, c| if self.heap[c].0 < self.heap[s].0 { c } else { s });
            if smallest == i {
                return;
            }
            self.swap(i, smallest);
            i = smallest;
        }
    }

    /// The `n` keys with the largest counts, largest first; reports the scan of the counters.
    pub fn top<P: Probe>(&self, p: &mut P, n: usize) -> Vec<u64> {
        p.touch(self.heap.as_ptr() as usize, self.heap.len() * 16, Access::Read);
        let mut v = self.heap.clone();
        let n = n.min(v.len());
        if n < v.len() {
            v.select_nth_unstable_by(n, |a, b| b.cmp(a));
            v.truncate(n);
        }
        v.sort_unstable_by(|a, b| b.cmp(a));
        v.into_iter().map(|(_, k)| k).collect()
    }

    /// Counters in use.
    pub fn len(&self) -> usize {
        self.heap.len()
    }

    /// Whether no key was offered yet.
    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }
}

/// One hot item: its stable buffer (NIC memory) and pending buffer (host memory), both this core's.
#[derive(Debug)]
struct Hot {
    /// The stable buffer.
    buf: BufId,
    /// Bytes of the value in the stable buffer.
    len: u32,
    /// Whether the stable buffer holds the latest value.
    valid: bool,
    /// Written since it became hot (the host copy of the item is stale).
    dirty: bool,
    /// The latest value.
    pending: Vec<u8>,
    /// The ones'-complement sum of the stable buffer's bytes (RFC 1071), so that a zero-copy response's
    /// UDP checksum needs no CPU read of NIC memory.
    sum: u32,
}

/// A get's answer.
#[derive(Debug)]
pub enum Payload<'h> {
    /// Zero-copy from the stable buffer: attach it to the response ([`ZeroCopy::attach`]).
    ZeroCopy(ZeroCopy<'h>),
    /// The pending buffer, to copy into the response (a descriptor still references the stale stable
    /// buffer).
    Copy(&'h [u8]),
}

/// A reference to a stable buffer, taken for one transmit descriptor. It must reach a transmit path
/// ([`ZeroCopy::attach`], or [`ZeroCopy::into_held`] for a device that is driven by hand); dropped
/// unused, it releases the reference.
#[derive(Debug)]
pub struct ZeroCopy<'h> {
    nicmem: &'h NicMem,
    buf: BufId,
    len: u32,
    sum: u32,
}

/// A stable buffer as a transmit descriptor carries it: the device reads it with
/// [`NicMem::dma_read_held`] and then [`NicMem::release`]s it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Held {
    /// The stable buffer.
    pub buf: BufId,
    /// Bytes to send.
    pub len: u32,
}

impl ZeroCopy<'_> {
    /// Bytes of the value.
    pub fn len(&self) -> usize {
        self.len as usize
    }

    /// Whether the value is empty.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The value's ones'-complement sum (RFC 1071), for a checksum over a packet that carries it at an
    /// even offset.
    pub fn sum(&self) -> u32 {
        self.sum
    }

    /// Make the value `pkt`'s second segment; the transmit path releases the reference when the NIC has
    /// sent it, and the design does when `pkt` is dropped instead.
    pub fn attach(self, pkt: &mut Packet<'_>) {
        let ptr = NonNull::new(self.nicmem.arena().data_addr(self.buf) as *mut u8).expect("arena memory");
        let (len, token) = (self.len, HELD << 32 | u64::from(self.buf.0));
        std::mem::forget(self);
        // SAFETY: in range; the reference taken in `HotSet::get` keeps the core from writing the stable
        // buffer until the design releases it, which it does only once the token is back or the
        // transmission completed.
        unsafe { pkt.attach_shared_tail(ptr, len, token) };
    }

    /// The reference as a transmit descriptor carries it.
    pub fn into_held(self) -> Held {
        let h = Held { buf: self.buf, len: self.len };
        std::mem::forget(self);
        h
    }
}

/// The transmit completion of a packet segment attached by [`ZeroCopy::attach`], given its token as
/// [`crate::CoreCtx::take_returned`] hands it back: releases the reference. False (and nothing done) for
/// a token of another kind of segment. For transmit paths outside the nicmem designs (test harnesses).
pub fn complete_attached(nicmem: &NicMem, token: u64) -> bool {
    let held = token >> 32 == HELD;
    if held {
        nicmem.release(BufId(token as u32));
    }
    held
}

impl Drop for ZeroCopy<'_> {
    fn drop(&mut self) {
        self.nicmem.release(self.buf);
    }
}

/// A hot item made cold again: whether its host copy must be updated.
#[derive(Debug, PartialEq, Eq)]
pub enum Evicted {
    /// Not written while hot.
    Clean,
    /// Written while hot: the latest value, to store back in host memory.
    Dirty(Vec<u8>),
}

/// The hot items of one core (MICA's EREW partition), keyed by 64-bit key hash.
#[derive(Debug)]
pub struct HotSet {
    nicmem: Arc<NicMem>,
    core: u16,
    /// Values shorter than this are answered by copy (a frame ending in them would need padding after
    /// the value, which a zero-copy segment cannot carry).
    min_zero_copy: usize,
    items: KeyMap<Hot>,
    /// Pending buffers of items made cold, emptied, for the next items made hot.
    spares: Vec<Vec<u8>>,
}

impl HotSet {
    /// An empty set over `nicmem`, for `core`, sending values of at least `min_zero_copy` bytes
    /// zero-copy.
    pub fn new(nicmem: Arc<NicMem>, core: u16, min_zero_copy: usize) -> HotSet {
        HotSet { nicmem, core, min_zero_copy, items: KeyMap::default(), spares: Vec::new() }
    }

    /// The NIC memory.
    pub fn nicmem(&self) -> &Arc<NicMem> {
        &self.nicmem
    }

    /// Make `key` hot with `value`: allocate its stable buffer in NIC memory and fill it (an error when
    /// NIC memory is exhausted or the value does not fit a buffer).
    pub fn insert<P: Probe>(&mut self, p: &mut P, key: u64, value: &[u8]) -> Result<(), NicMemError> {
        let room = self.nicmem.arena().layout().data_room();
        let bufs = self.nicmem.alloc_nicmem(value.len().max(1), self.core)?;
        let [buf] = bufs[..] else {
            self.nicmem.dealloc_nicmem(bufs);
            let layout = self.nicmem.arena().layout();
            return Err(NicMemError::Capacity {
                asked: value.len(),
                bufs: value.len().div_ceil(room),
                stride: layout.stride(),
                left: 0,
                capacity: room,
            });
        };
        // A pending buffer of an item made cold before, or a new one with room for any value a buffer
        // holds: never freed or grown while the run lasts, so which host addresses the simulator sees
        // touched does not depend on what the allocator hands back (nor on other runs in the process).
        let mut pending = self.spares.pop().unwrap_or_else(|| Vec::with_capacity(room));
        pending.extend_from_slice(value);
        let mut h = Hot { buf, len: 0, valid: false, dirty: false, pending, sum: 0 };
        refresh(p, &self.nicmem, &mut h);
        self.items.insert(key, h);
        Ok(())
    }

    /// Whether `key` is hot.
    pub fn contains(&self, key: u64) -> bool {
        self.items.contains_key(&key)
    }

    /// Number of hot items.
    pub fn len(&self) -> usize {
        self.items.len()
    }

    /// Whether no item is hot.
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// The hot keys, in no order.
    pub fn keys(&self) -> impl Iterator<Item = u64> + '_ {
        self.items.keys().copied()
    }

    /// Set: write the pending buffer, then invalidate the stable buffer. False if `key` is not hot.
    pub fn set<P: Probe>(&mut self, p: &mut P, key: u64, value: &[u8]) -> bool {
        let Some(h) = self.items.get_mut(&key) else { return false };
        h.pending.clear();
        h.pending.extend_from_slice(value);
        p.touch(h.pending.as_ptr() as usize, value.len(), Access::Write);
        h.valid = false;
        h.dirty = true;
        true
    }

    /// Get: the response payload for `key` (§4.2.2), or `None` if it is not hot.
    pub fn get<P: Probe>(&mut self, p: &mut P, key: u64) -> Option<Payload<'_>> {
        let h = self.items.get_mut(&key)?;
        // A value too short to end a frame, or a stale stable buffer that a descriptor still holds:
        // answer with the pending value.
        if h.pending.len() < self.min_zero_copy || (!h.valid && self.nicmem.held(h.buf) != 0) {
            p.touch(h.pending.as_ptr() as usize, h.pending.len(), Access::Read);
            return Some(Payload::Copy(&h.pending));
        }
        if !h.valid {
            refresh(p, &self.nicmem, h);
        }
        self.nicmem.hold(h.buf);
        Some(Payload::ZeroCopy(ZeroCopy { nicmem: &self.nicmem, buf: h.buf, len: h.len, sum: h.sum }))
    }

    /// Make `key` cold again: its stable buffer goes back to NIC memory once no descriptor references it.
    /// `None` (and it stays hot) while references remain, or if it is not hot.
    pub fn evict(&mut self, key: u64) -> Option<Evicted> {
        let h = self.items.get(&key)?;
        if self.nicmem.held(h.buf) != 0 {
            return None;
        }
        let h = self.items.remove(&key)?;
        self.nicmem.dealloc_nicmem([h.buf]);
        if h.dirty {
            return Some(Evicted::Dirty(h.pending));
        }
        self.recycle(h.pending);
        Some(Evicted::Clean)
    }

    /// Take back the pending buffer an [`Evicted::Dirty`] handed out, once its value is stored.
    pub fn recycle(&mut self, mut pending: Vec<u8>) {
        pending.clear();
        self.spares.push(pending);
    }
}

impl Drop for HotSet {
    /// Stable buffers go back to NIC memory once no descriptor references them (after a run that
    /// drained). A run that failed with packets still queued leaves the referenced ones to the region:
    /// its error says what went wrong, and the end-of-run checks of a drained run catch any leak.
    fn drop(&mut self) {
        let nicmem = &self.nicmem;
        nicmem.dealloc_nicmem(self.items.drain().map(|(_, h)| h.buf).filter(|&b| nicmem.held(b) == 0));
    }
}

/// Copy the pending value into the stable buffer and mark it valid. The caller saw no reference (or the
/// item is new): no descriptor references the buffer, so the NIC does not read it.
fn refresh<P: Probe>(p: &mut P, nicmem: &NicMem, h: &mut Hot) {
    let a = nicmem.arena();
    let len = h.pending.len().min(a.layout().data_room());
    p.touch(h.pending.as_ptr() as usize, len, Access::Read);
    nicmem.cpu_write(p, a.data_addr(h.buf), len);
    // SAFETY: no descriptor references the buffer and only this core creates references; in range
    // (clamped to the data room).
    unsafe { std::ptr::copy_nonoverlapping(h.pending.as_ptr(), a.data_addr(h.buf) as *mut u8, len) };
    h.sum = checksum::sum(&h.pending[..len], 0);
    h.len = len as u32;
    h.valid = true;
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use crate::arena::BufLayout;
    use crate::probe::NoProbe;

    #[test]
    fn space_saving_finds_the_heavy_hitters() {
        let p = &mut NoProbe::default();
        let mut s = SpaceSaving::new(16);
        for i in 0..10_000u64 {
            s.offer(p, if i % 2 == 0 { i % 5 } else { 1000 + i });
        }
        let mut top = s.top(p, 5);
        top.sort_unstable();
        assert_eq!(top, vec![0, 1, 2, 3, 4]);
        assert_eq!(s.len(), 16);
        // The counts are a min-heap whose entries are indexed.
        assert!((1..s.heap.len()).all(|i| s.heap[(i - 1) / 2].0 <= s.heap[i].0));
        assert!(s.heap.iter().enumerate().all(|(i, (_, k))| s.at[k] == i));
    }

    /// A run that failed with a response still queued drops its hot set while a descriptor references a
    /// stable buffer: that buffer stays with the region, the others go back, and nothing panics.
    #[test]
    fn a_hot_set_dropped_while_a_descriptor_holds_a_buffer_keeps_that_one() {
        let nm = NicMem::new(2 * 2048, BufLayout::PACKED_2K).unwrap();
        let mut hot = HotSet::new(nm.clone(), 0, 0);
        let p = &mut NoProbe::default();
        hot.insert(p, 1, b"a").unwrap();
        hot.insert(p, 2, b"b").unwrap();
        assert!(nm.alloc_nicmem(1, 0).is_err(), "both buffers hold hot items");
        let Some(Payload::ZeroCopy(a)) = hot.get(p, 1) else { panic!("valid stable: zero-copy") };
        let a = a.into_held();
        drop(hot);
        assert_eq!(nm.held(a.buf), 1);
        let back = nm.alloc_nicmem(1, 0).expect("the unreferenced buffer went back");
        assert!(!back.contains(&a.buf) && nm.alloc_nicmem(1, 0).is_err(), "the referenced one did not");
    }

    #[test]
    fn gets_and_sets_follow_4_2_2() {
        let nm = NicMem::new(4 * 2048, BufLayout::PACKED_2K).unwrap();
        let mut hot = HotSet::new(nm.clone(), 0, 0);
        let p = &mut NoProbe::default();
        hot.insert(p, 7, b"v1").unwrap();
        let Some(Payload::ZeroCopy(a)) = hot.get(p, 7) else { panic!("valid stable: zero-copy") };
        assert_eq!(a.sum(), checksum::sum(b"v1", 0));
        let a = a.into_held();
        assert!(hot.set(p, 7, b"v2"));
        // A descriptor still references the stable buffer: a copy of the pending value.
        assert!(matches!(hot.get(p, 7), Some(Payload::Copy(v)) if v == b"v2"));
        nm.dma_read_held(a.buf, a.len as usize, |v| assert_eq!(v, b"v1"));
        nm.release(a.buf);
        // No reference left: the stable buffer takes the pending value and is sent zero-copy.
        let Some(Payload::ZeroCopy(b)) = hot.get(p, 7) else { panic!("refreshed stable: zero-copy") };
        let b = b.into_held();
        nm.dma_read_held(b.buf, b.len as usize, |v| assert_eq!(v, b"v2"));
        assert_eq!(hot.evict(7), None);
        nm.release(b.buf);
        // A reference dropped unused is released too.
        drop(hot.get(p, 7));
        assert_eq!(hot.evict(7), Some(Evicted::Dirty(b"v2".to_vec())));
        assert_eq!(nm.available(), 4);
        for k in 0..4 {
            hot.insert(p, k, b"x").unwrap();
        }
        assert!(matches!(hot.insert(p, 9, b"x"), Err(NicMemError::Capacity { .. })));
        assert_eq!(hot.evict(0), Some(Evicted::Clean));
        assert!(hot.insert(p, 9, &[0; 3000]).is_err());
        // Values too short to end a frame are answered by copy.
        let mut short = HotSet::new(nm.clone(), 0, 6);
        short.insert(p, 1, b"abc").unwrap();
        assert!(matches!(short.get(p, 1), Some(Payload::Copy(b"abc"))));
        drop(short);
        drop(hot);
        assert_eq!(nm.available(), 4);
    }
}

#[cfg(all(test, loom))]
mod loom_tests {
    use super::*;
    use crate::arena::BufLayout;
    use crate::probe::NoProbe;

    /// The NIC reads and completes a zero-copy response while the core sets a new value and gets it: the
    /// NIC sees the old value whole, and the get answers the new value, zero-copy only once the reference
    /// is released.
    #[test]
    fn loom_nmkvs_stable_and_pending() {
        loom::model(|| {
            let nm = NicMem::new(2 * 2048, BufLayout::PACKED_2K).unwrap();
            let mut hot = HotSet::new(nm.clone(), 0, 0);
            let p = &mut NoProbe::default();
            hot.insert(p, 1, &[1; 16]).unwrap();
            let Some(Payload::ZeroCopy(old)) = hot.get(p, 1) else { panic!("valid stable buffer") };
            let old = old.into_held();
            let nic_mem = nm.clone();
            let nic = loom::thread::spawn(move || {
                nic_mem.dma_read_held(old.buf, old.len as usize, |v| assert_eq!(v, &[1; 16]));
                nic_mem.release(old.buf);
            });
            hot.set(p, 1, &[2; 16]);
            match hot.get(p, 1).unwrap() {
                Payload::Copy(v) => assert_eq!(v, &[2; 16]),
                Payload::ZeroCopy(s) => {
                    let s = s.into_held();
                    nm.dma_read_held(s.buf, s.len as usize, |v| assert_eq!(v, &[2; 16]));
                    nm.release(s.buf);
                }
            }
            nic.join().unwrap();
            assert!(hot.evict(1).is_some());
        });
    }
}
