//! nmKVS (nicmem §4.2.2): hot items live in NIC memory and are sent zero-copy. Each hot item has a stable
//! buffer in nicmem (a valid bit, and a reference count of transmit descriptors in flight, decremented by
//! transmit completions) and a pending buffer in host memory for updates:
//!
//! - set: overwrite the pending buffer, then clear the stable buffer's valid bit (never write in place:
//!   the NIC may be reading the stable buffer for a queued response);
//! - get: if the stable buffer is valid, take a reference and send it zero-copy; otherwise, if no
//!   descriptor references it, copy the pending buffer into it, mark it valid and send it zero-copy;
//!   otherwise send a copy of the pending buffer.
//!
//! Hot items are chosen by Space-Saving (the paper's reference [87]) over the request stream. As in MICA,
//! one core serves a key (gets and sets); the NIC reads stable buffers concurrently and completes
//! transmissions, which is the race the reference count closes.

#![allow(unsafe_code)]

use super::region::{NicMem, NicMemError};
use crate::arena::BufId;
use crate::probe::Probe;
use crate::sync::{Arc, AtomicBool, AtomicU32, Ordering};
use std::collections::HashMap;

/// Space-Saving (Metwally, Agrawal, El Abbadi): `k` counters; an unmonitored key replaces the key with
/// the smallest count and inherits that count as its overestimate. Any key with frequency above `N/k`
/// is monitored.
#[derive(Debug, Clone)]
pub struct SpaceSaving {
    k: usize,
    counts: HashMap<u64, u64>,
}

impl SpaceSaving {
    /// `k` counters.
    pub fn new(k: usize) -> SpaceSaving {
        SpaceSaving { k: k.max(1), counts: HashMap::with_capacity(k) }
    }

    /// Count one request for `key`.
    pub fn offer(&mut self, key: u64) {
        if let Some(c) = self.counts.get_mut(&key) {
            *c += 1;
        } else if self.counts.len() < self.k {
            self.counts.insert(key, 1);
        } else {
            let (&victim, &min) = self.counts.iter().min_by_key(|(_, c)| **c).expect("k > 0 counters");
            self.counts.remove(&victim);
            self.counts.insert(key, min + 1);
        }
    }

    /// The `n` keys with the largest counts, largest first.
    pub fn top(&self, n: usize) -> Vec<u64> {
        let mut v: Vec<(u64, u64)> = self.counts.iter().map(|(&k, &c)| (c, k)).collect();
        v.sort_unstable_by(|a, b| b.cmp(a));
        v.into_iter().take(n).map(|(_, k)| k).collect()
    }
}

/// A hot item's stable buffer in NIC memory, shared with the NIC's transmit path.
#[derive(Debug)]
pub struct Stable {
    nicmem: Arc<NicMem>,
    buf: BufId,
    len: AtomicU32,
    valid: AtomicBool,
    refs: AtomicU32,
}

impl Stable {
    /// The NIC reads the value for a transmit descriptor that holds a reference (DMA from its own memory).
    pub fn nic_read<R>(&self, f: impl FnOnce(&[u8]) -> R) -> R {
        debug_assert!(self.refs.load(Ordering::Relaxed) > 0, "NIC read without a descriptor reference");
        let a = self.nicmem.arena();
        // Relaxed: the core wrote `len` before the reference this descriptor holds was taken, and the
        // descriptor reached the NIC through a release/acquire hand-off (the transmit doorbell).
        let len = self.len.load(Ordering::Relaxed) as usize;
        // SAFETY: the caller's descriptor holds a reference, so `refs > 0` and the core does not write
        // the buffer (it writes only after an Acquire load of `refs` reads 0); the buffer is in range.
        f(unsafe { std::slice::from_raw_parts(a.data_addr(self.buf) as *const u8, len) })
    }

    /// The transmit completion of a descriptor that referenced this buffer.
    pub fn complete(&self) {
        // Release: the NIC's read of the value happens before a core that sees the count reach 0
        // overwrites it.
        self.refs.fetch_sub(1, Ordering::Release);
    }
}

/// A response's payload.
#[derive(Debug)]
pub enum Payload {
    /// Zero-copy from the stable buffer; the transmit descriptor holds one reference.
    ZeroCopy(Arc<Stable>),
    /// A copy of the pending buffer.
    Copy(Vec<u8>),
}

/// One hot item: its stable buffer and its pending buffer (host memory, this core's).
#[derive(Debug)]
struct Hot {
    stable: Arc<Stable>,
    pending: Vec<u8>,
}

/// The hot items of one core (MICA's EREW partition).
#[derive(Debug)]
pub struct HotSet {
    nicmem: Arc<NicMem>,
    core: u16,
    items: HashMap<u64, Hot>,
}

impl HotSet {
    /// An empty set over `nicmem`, for `core`.
    pub fn new(nicmem: Arc<NicMem>, core: u16) -> HotSet {
        HotSet { nicmem, core, items: HashMap::new() }
    }

    /// Make `key` hot with `value`: allocate its stable buffer in NIC memory (an error when NIC memory is
    /// exhausted or the value does not fit a buffer).
    pub fn insert<P: Probe>(&mut self, p: &mut P, key: u64, value: &[u8]) -> Result<(), NicMemError> {
        let room = self.nicmem.arena().layout().data_room();
        let bufs = self.nicmem.alloc_nicmem(value.len().max(room), self.core)?;
        let [buf] = bufs[..] else {
            self.nicmem.dealloc_nicmem(bufs);
            return Err(self.too_big(value.len()));
        };
        let stable = Arc::new(Stable {
            nicmem: self.nicmem.clone(),
            buf,
            len: AtomicU32::new(0),
            valid: AtomicBool::new(false),
            refs: AtomicU32::new(0),
        });
        let h = Hot { stable, pending: value.to_vec() };
        refresh(p, &self.nicmem, &h);
        self.items.insert(key, h);
        Ok(())
    }

    fn too_big(&self, len: usize) -> NicMemError {
        let layout = self.nicmem.arena().layout();
        NicMemError::Capacity {
            asked: len,
            bufs: len.div_ceil(layout.data_room()),
            stride: layout.stride,
            left: 0,
            capacity: layout.data_room(),
        }
    }

    /// Whether `key` is hot.
    pub fn contains(&self, key: u64) -> bool {
        self.items.contains_key(&key)
    }

    /// Set: write the pending buffer, then invalidate the stable buffer. False if `key` is not hot.
    pub fn set(&mut self, key: u64, value: &[u8]) -> bool {
        let Some(h) = self.items.get_mut(&key) else { return false };
        h.pending.clear();
        h.pending.extend_from_slice(value);
        // Relaxed: only this core reads the valid bit.
        h.stable.valid.store(false, Ordering::Relaxed);
        true
    }

    /// Get: the response payload for `key` (§4.2.2), or `None` if it is not hot.
    pub fn get<P: Probe>(&mut self, p: &mut P, key: u64) -> Option<Payload> {
        let h = self.items.get_mut(&key)?;
        let s = &h.stable;
        if !s.valid.load(Ordering::Relaxed) {
            // Acquire: pairs with the completions' Release; when no descriptor references the buffer, the
            // NIC's reads of it are over.
            if s.refs.load(Ordering::Acquire) != 0 {
                return Some(Payload::Copy(h.pending.clone()));
            }
            refresh(p, &self.nicmem, h);
        }
        // Relaxed: the descriptor carrying this reference reaches the NIC through a release/acquire.
        s.refs.fetch_add(1, Ordering::Relaxed);
        Some(Payload::ZeroCopy(s.clone()))
    }

    /// Make `key` cold again: its stable buffer goes back to NIC memory once no descriptor references it.
    /// Returns false (and keeps it hot) while references remain.
    pub fn evict(&mut self, key: u64) -> bool {
        let Some(h) = self.items.get(&key) else { return false };
        // Acquire: as in `get`.
        if h.stable.refs.load(Ordering::Acquire) != 0 {
            return false;
        }
        let h = self.items.remove(&key).expect("present");
        self.nicmem.dealloc_nicmem([h.stable.buf]);
        true
    }
}

/// Copy the pending value into the stable buffer and mark it valid. The caller saw `refs == 0` (or the
/// item is new): no descriptor references the buffer.
fn refresh<P: Probe>(p: &mut P, nicmem: &NicMem, h: &Hot) {
    let (s, a) = (&h.stable, nicmem.arena());
    let len = h.pending.len().min(a.layout().data_room());
    nicmem.cpu_write(p, a.data_addr(s.buf), len);
    // SAFETY: no descriptor references the buffer and only this core creates references, so the NIC does
    // not read it while it is written; in range (clamped to the data room).
    unsafe { std::ptr::copy_nonoverlapping(h.pending.as_ptr(), a.data_addr(s.buf) as *mut u8, len) };
    // Relaxed: published to the NIC with the descriptor (see `Stable::nic_read`).
    s.len.store(len as u32, Ordering::Relaxed);
    s.valid.store(true, Ordering::Relaxed);
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use crate::arena::BufLayout;
    use crate::probe::NoProbe;

    #[test]
    fn space_saving_finds_the_heavy_hitters() {
        let mut s = SpaceSaving::new(16);
        for i in 0..10_000u64 {
            s.offer(if i % 2 == 0 { i % 5 } else { 1000 + i });
        }
        let mut top = s.top(5);
        top.sort_unstable();
        assert_eq!(top, vec![0, 1, 2, 3, 4]);
    }

    #[test]
    fn gets_and_sets_follow_4_2_2() {
        let nm = NicMem::new(4 * 2048, BufLayout::default()).unwrap();
        let mut hot = HotSet::new(nm.clone(), 0);
        let p = &mut NoProbe::default();
        hot.insert(p, 7, b"v1").unwrap();
        let Some(Payload::ZeroCopy(a)) = hot.get(p, 7) else { panic!("valid stable: zero-copy") };
        assert!(hot.set(7, b"v2"));
        // A descriptor still references the stable buffer: a copy of the pending value.
        assert!(matches!(hot.get(p, 7), Some(Payload::Copy(v)) if v == b"v2"));
        a.nic_read(|v| assert_eq!(v, b"v1"));
        a.complete();
        // No reference left: the stable buffer takes the pending value and is sent zero-copy.
        let Some(Payload::ZeroCopy(b)) = hot.get(p, 7) else { panic!("refreshed stable: zero-copy") };
        b.nic_read(|v| assert_eq!(v, b"v2"));
        assert!(!hot.evict(7));
        b.complete();
        assert!(hot.evict(7));
        assert_eq!(nm.available(), 4);
        for k in 0..4 {
            hot.insert(p, k, b"x").unwrap();
        }
        assert!(matches!(hot.insert(p, 9, b"x"), Err(NicMemError::Capacity { .. })));
        assert!(hot.insert(p, 9, &[0; 3000]).is_err());
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
            let nm = NicMem::new(2 * 2048, BufLayout::default()).unwrap();
            let mut hot = HotSet::new(nm, 0);
            let p = &mut NoProbe::default();
            hot.insert(p, 1, &[1; 16]).unwrap();
            let Some(Payload::ZeroCopy(old)) = hot.get(p, 1) else { panic!("valid stable buffer") };
            let nic = loom::thread::spawn(move || {
                old.nic_read(|v| assert_eq!(v, &[1; 16]));
                old.complete();
            });
            hot.set(1, &[2; 16]);
            match hot.get(p, 1).unwrap() {
                Payload::Copy(v) => assert_eq!(v, vec![2; 16]),
                Payload::ZeroCopy(s) => {
                    s.nic_read(|v| assert_eq!(v, &[2; 16]));
                    s.complete();
                }
            }
            nic.join().unwrap();
            assert!(hot.evict(1));
        });
    }
}
