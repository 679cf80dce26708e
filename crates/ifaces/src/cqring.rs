//! Completion rings (shRing §2.1, rxBisect §2): the NIC writes entries, software only reads them, and a
//! sense-reverse "done" bit tells software which entries are new without software ever writing the
//! ring: the producer writes the bit of its pass through the ring, which flips on every wrap, and the
//! consumer compares it with the bit it expects for its own pass.
//!
//! Two entry formats ([`CqEntry`]): the 64-byte entry of a ConnectX CQE ([`Cqe`], three payload words),
//! and the 8-byte mini-CQE of NVIDIA's CQE compression ([`MiniCqe`]: byte count and RSS hash, eight to a
//! cache line; the descriptor index is implicit, consecutive; rxBisect §4.3 cites this "completion
//! compression" [32, 33], and Linux's mlx5 `struct mlx5_mini_cqe8` has this layout).
//!
//! The producer and consumer halves are separate types, so a device cannot consume and a core cannot
//! produce. The consumer reports its progress through a [`Doorbell`] (the CR doorbell of shRing
//! Listing 1, lines 27-28), which is how the producer knows the ring is not full.

use crate::doorbell::Doorbell;
use crate::probe::{Access, Probe};
use crate::ringsize::RingSize;
use crate::sync::{Arc, AtomicU64, Ordering};

/// Payload words of one 64-byte completion entry; each design gives them meaning (descriptor index,
/// length, RSS hash, Ax ring and index, ...).
pub type CqPayload = [u64; 3];

/// An entry format: what it carries and how the device publishes it.
pub trait CqEntry: Default + Send + Sync + std::fmt::Debug + 'static {
    /// What one entry carries.
    type Payload: Copy;
    /// Bytes the device writes per entry (what a DMA of it costs).
    const BYTES: usize;
    /// Write `payload` and then the done bit `done` (release).
    fn publish(&self, payload: Self::Payload, done: u64);
    /// The payload, if the entry carries done bit `done` (acquire).
    fn take(&self, done: u64) -> Option<Self::Payload>;
    /// Whether the entry carries done bit `done` (acquire).
    fn is_done(&self, done: u64) -> bool;
}

/// One 64-byte completion entry (the size of a ConnectX CQE).
#[derive(Debug, Default)]
#[repr(C, align(64))]
pub struct Cqe {
    words: [AtomicU64; 3],
    /// Bit 0: the done bit, equal to the pass parity of the producer that wrote the entry.
    done: AtomicU64,
}

impl CqEntry for Cqe {
    type Payload = CqPayload;
    const BYTES: usize = 64;

    #[inline]
    fn publish(&self, payload: CqPayload, done: u64) {
        for (w, v) in self.words.iter().zip(payload) {
            w.store(v, Ordering::Relaxed);
        }
        self.done.store(done, Ordering::Release);
    }

    #[inline]
    fn take(&self, done: u64) -> Option<CqPayload> {
        self.is_done(done).then(|| [0, 1, 2].map(|i| self.words[i].load(Ordering::Relaxed)))
    }

    #[inline]
    fn is_done(&self, done: u64) -> bool {
        self.done.load(Ordering::Acquire) == done
    }
}

/// One 8-byte mini-CQE of a compressed completion ring: byte count and RSS hash (as `mlx5_mini_cqe8`),
/// with the done bit in bit 0. One atomic word, so it is published whole.
#[derive(Debug, Default)]
#[repr(transparent)]
pub struct MiniCqe(AtomicU64);

/// A mini-CQE's payload: the packet's length and RSS hash.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Mini {
    /// Bytes written (up to 2^31 - 1).
    pub len: u32,
    /// RSS hash.
    pub hash: u32,
}

impl CqEntry for MiniCqe {
    type Payload = Mini;
    const BYTES: usize = 8;

    #[inline]
    fn publish(&self, m: Mini, done: u64) {
        debug_assert!(m.len < 1 << 31, "a mini-CQE carries 31 bits of length");
        self.0.store(u64::from(m.hash) << 32 | u64::from(m.len) << 1 | done, Ordering::Release);
    }

    #[inline]
    fn take(&self, done: u64) -> Option<Mini> {
        let w = self.0.load(Ordering::Acquire);
        (w & 1 == done).then_some(Mini { len: (w as u32) >> 1, hash: (w >> 32) as u32 })
    }

    #[inline]
    fn is_done(&self, done: u64) -> bool {
        self.0.load(Ordering::Acquire) & 1 == done
    }
}

/// The memory of one completion ring, shared by its two halves.
#[derive(Debug)]
pub struct CqShared<E> {
    size: RingSize,
    entries: Box<[E]>,
    /// Consumer index, written by software.
    doorbell: Doorbell,
}

/// Expected done bit for free-running index `i`: 1 on the first pass (entries start zeroed), then
/// alternating.
#[inline(always)]
fn done_bit(size: RingSize, i: u32) -> u64 {
    u64::from(!size.generation(i))
}

/// Create a completion ring of `size` entries of format `E`; returns the device (producer) and core
/// (consumer) halves.
pub fn completion_ring<E: CqEntry>(size: RingSize) -> (CqProducer<E>, CqConsumer<E>) {
    let shared = Arc::new(CqShared {
        size,
        entries: (0..size.len()).map(|_| E::default()).collect(),
        doorbell: Doorbell::new(0),
    });
    (CqProducer { shared: shared.clone(), prod: 0 }, CqConsumer { shared, cons: 0, rung: 0 })
}

/// The device's half: appends entries.
#[derive(Debug)]
pub struct CqProducer<E = Cqe> {
    shared: Arc<CqShared<E>>,
    prod: u32,
}

impl<E: CqEntry> CqProducer<E> {
    /// Entries written and not yet released by the consumer's doorbell.
    #[inline]
    pub fn occupancy(&self) -> u32 {
        self.prod.wrapping_sub(self.shared.doorbell.read())
    }

    /// True if no entry can be written now.
    #[inline]
    pub fn is_full(&self) -> bool {
        self.occupancy() >= self.shared.size.get()
    }

    /// Ring size.
    pub fn size(&self) -> RingSize {
        self.shared.size
    }

    /// Entries produced so far.
    pub fn produced(&self) -> u32 {
        self.prod
    }

    /// Write one entry (a DMA write of [`CqEntry::BYTES`]) and publish it with the done bit (release).
    /// Returns false if the ring is full.
    #[inline]
    pub fn push<P: Probe>(&mut self, p: &mut P, payload: E::Payload) -> bool {
        if self.is_full() {
            return false;
        }
        let e = &self.shared.entries[self.shared.size.slot(self.prod)];
        p.touch(e as *const E as usize, E::BYTES, Access::Write);
        e.publish(payload, done_bit(self.shared.size, self.prod));
        self.prod = self.prod.wrapping_add(1);
        true
    }
}

/// The core's half: polls for new entries.
#[derive(Debug)]
pub struct CqConsumer<E = Cqe> {
    shared: Arc<CqShared<E>>,
    cons: u32,
    rung: u32,
}

impl<E: CqEntry> CqConsumer<E> {
    /// Read the next entry if the device has written it (acquire on the done bit), advancing the consumer
    /// index. The doorbell is not rung; call [`CqConsumer::ring_doorbell`] once per burst.
    #[inline]
    pub fn poll<P: Probe>(&mut self, p: &mut P) -> Option<E::Payload> {
        let e = &self.shared.entries[self.shared.size.slot(self.cons)];
        p.touch(e as *const E as usize, E::BYTES, Access::Read);
        let payload = e.take(done_bit(self.shared.size, self.cons))?;
        self.cons = self.cons.wrapping_add(1);
        Some(payload)
    }

    /// Whether an entry is ready, without consuming it.
    #[inline]
    pub fn ready(&self) -> bool {
        self.shared.entries[self.shared.size.slot(self.cons)].is_done(done_bit(self.shared.size, self.cons))
    }

    /// Tell the device how far this core has consumed (shRing Listing 1, lines 27-28), if it moved.
    #[inline]
    pub fn ring_doorbell<P: Probe>(&mut self, p: &mut P) {
        if self.rung != self.cons {
            self.shared.doorbell.ring(p, self.cons);
            self.rung = self.cons;
        }
    }

    /// Entries consumed so far.
    pub fn consumed(&self) -> u32 {
        self.cons
    }

    /// Doorbell writes so far.
    pub fn doorbell_writes(&self) -> u64 {
        self.shared.doorbell.writes()
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use crate::probe::NoProbe;
    use proptest::prelude::*;

    proptest! {
        /// Any interleaving of pushes, polls and doorbells matches a VecDeque oracle, across many wraps.
        #[test]
        fn matches_a_queue(steps in proptest::collection::vec(0u8..3, 0..400)) {
            let size = RingSize::new(4).unwrap();
            let (mut tx, mut rx) = completion_ring::<Cqe>(size);
            let mut oracle = std::collections::VecDeque::new();
            let mut rung = 0usize; // entries released by the doorbell
            let mut polled = 0usize;
            let mut next = 0u64;
            let p = &mut NoProbe::default();
            for s in steps {
                match s {
                    0 => {
                        let fits = oracle.len() + polled - rung < 4;
                        prop_assert_eq!(tx.push(p, [next, !next, next * 3]), fits);
                        if fits { oracle.push_back(next); next += 1; }
                    }
                    1 => match rx.poll(p) {
                        Some([a, b, c]) => {
                            prop_assert_eq!(Some(a), oracle.pop_front());
                            prop_assert_eq!((b, c), (!a, a * 3));
                            polled += 1;
                        }
                        None => prop_assert!(oracle.is_empty()),
                    },
                    _ => { rx.ring_doorbell(p); rung = polled; }
                }
            }
        }

        /// Mini-CQEs keep the same protocol, with the payload packed into the word that holds the bit.
        #[test]
        fn mini_entries_match_a_queue(steps in proptest::collection::vec(0u8..3, 0..400)) {
            let (mut tx, mut rx) = completion_ring::<MiniCqe>(RingSize::new(8).unwrap());
            let mut oracle = std::collections::VecDeque::new();
            let (mut rung, mut polled, mut next) = (0usize, 0usize, 0u32);
            let p = &mut NoProbe::default();
            for s in steps {
                match s {
                    0 => {
                        let m = Mini { len: next.wrapping_mul(2_654_435_761) >> 1, hash: !next };
                        let fits = oracle.len() + polled - rung < 8;
                        prop_assert_eq!(tx.push(p, m), fits);
                        if fits { oracle.push_back(m); next += 1; }
                    }
                    1 => {
                        let got = rx.poll(p);
                        prop_assert_eq!(got, oracle.pop_front());
                        polled += usize::from(got.is_some());
                    }
                    _ => { rx.ring_doorbell(p); rung = polled; }
                }
            }
        }
    }

    #[test]
    fn eight_mini_cqes_share_a_line() {
        assert_eq!(std::mem::size_of::<MiniCqe>() * 8, 64);
        assert_eq!(std::mem::size_of::<Cqe>(), 64);
    }
}

#[cfg(all(test, loom))]
mod loom_tests {
    use super::*;
    use crate::probe::CountingProbe;

    /// The device publishes entries across a wrap while the core polls and rings the doorbell: every
    /// entry is seen once, in order, with its payload (the done bit's release/acquire orders the words).
    #[test]
    fn publication_with_the_done_bit() {
        loom::model(|| {
            let (mut tx, mut rx) = completion_ring::<Cqe>(RingSize::new(2).unwrap());
            let producer = loom::thread::spawn(move || {
                let p = &mut CountingProbe::default();
                let mut next = 0u64;
                while next < 3 {
                    if tx.push(p, [next, next + 10, next + 20]) {
                        next += 1;
                    } else {
                        loom::thread::yield_now();
                    }
                }
            });
            let p = &mut CountingProbe::default();
            let mut want = 0u64;
            while want < 3 {
                match rx.poll(p) {
                    Some(w) => {
                        assert_eq!(w, [want, want + 10, want + 20]);
                        want += 1;
                        rx.ring_doorbell(p);
                    }
                    None => loom::thread::yield_now(),
                }
            }
            producer.join().unwrap();
        });
    }

    /// The same for mini-CQEs, whose payload and done bit are one word.
    #[test]
    fn mini_publication_with_the_done_bit() {
        loom::model(|| {
            let (mut tx, mut rx) = completion_ring::<MiniCqe>(RingSize::new(2).unwrap());
            let producer = loom::thread::spawn(move || {
                let p = &mut CountingProbe::default();
                let mut next = 0u32;
                while next < 3 {
                    if tx.push(p, Mini { len: next + 60, hash: next + 7 }) {
                        next += 1;
                    } else {
                        loom::thread::yield_now();
                    }
                }
            });
            let p = &mut CountingProbe::default();
            let mut want = 0u32;
            while want < 3 {
                match rx.poll(p) {
                    Some(m) => {
                        assert_eq!(m, Mini { len: want + 60, hash: want + 7 });
                        want += 1;
                        rx.ring_doorbell(p);
                    }
                    None => loom::thread::yield_now(),
                }
            }
            producer.join().unwrap();
        });
    }
}
