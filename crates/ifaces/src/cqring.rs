//! Completion rings (shRing §2.1, rxBisect §2): the NIC writes 64-byte entries, software only reads them,
//! and a sense-reverse "done" bit tells software which entries are new without software ever writing the
//! ring: the producer writes the bit of its pass through the ring, which flips on every wrap, and the
//! consumer compares it with the bit it expects for its own pass.
//!
//! The producer and consumer halves are separate types, so a device cannot consume and a core cannot
//! produce. The consumer reports its progress through a [`Doorbell`] (the CR doorbell of shRing
//! Listing 1, lines 27-28), which is how the producer knows the ring is not full.

use crate::doorbell::Doorbell;
use crate::probe::{Access, Probe};
use crate::ringsize::RingSize;
use crate::sync::{Arc, AtomicU64, Ordering};

/// Payload words of one completion entry; each design gives them meaning (descriptor index, length,
/// RSS hash, Ax ring and index, ...).
pub type CqPayload = [u64; 3];

/// One 64-byte completion entry (the size of a ConnectX CQE).
#[derive(Debug, Default)]
#[repr(C, align(64))]
pub struct Cqe {
    words: [AtomicU64; 3],
    /// Bit 0: the done bit, equal to the pass parity of the producer that wrote the entry.
    done: AtomicU64,
}

/// The memory of one completion ring, shared by its two halves.
#[derive(Debug)]
pub struct CqShared {
    size: RingSize,
    entries: Box<[Cqe]>,
    /// Consumer index, written by software.
    doorbell: Doorbell,
}

/// Expected done bit for free-running index `i`: 1 on the first pass (entries start zeroed), then
/// alternating.
#[inline(always)]
fn done_bit(size: RingSize, i: u32) -> u64 {
    u64::from(!size.generation(i))
}

/// Create a completion ring of `size` entries; returns the device (producer) and core (consumer) halves.
pub fn completion_ring(size: RingSize) -> (CqProducer, CqConsumer) {
    let shared = Arc::new(CqShared {
        size,
        entries: (0..size.len()).map(|_| Cqe::default()).collect(),
        doorbell: Doorbell::new(0),
    });
    (CqProducer { shared: shared.clone(), prod: 0 }, CqConsumer { shared, cons: 0, rung: 0 })
}

/// The device's half: appends entries.
#[derive(Debug)]
pub struct CqProducer {
    shared: Arc<CqShared>,
    prod: u32,
}

impl CqProducer {
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

    /// Write one entry (a 64-byte DMA write) and publish it with the done bit (release). Returns false if
    /// the ring is full.
    #[inline]
    pub fn push<P: Probe>(&mut self, p: &mut P, payload: CqPayload) -> bool {
        if self.is_full() {
            return false;
        }
        let e = &self.shared.entries[self.shared.size.slot(self.prod)];
        p.touch(e as *const Cqe as usize, 64, Access::Write);
        for (w, v) in e.words.iter().zip(payload) {
            w.store(v, Ordering::Relaxed);
        }
        e.done.store(done_bit(self.shared.size, self.prod), Ordering::Release);
        self.prod = self.prod.wrapping_add(1);
        true
    }
}

/// The core's half: polls for new entries.
#[derive(Debug)]
pub struct CqConsumer {
    shared: Arc<CqShared>,
    cons: u32,
    rung: u32,
}

impl CqConsumer {
    /// Read the next entry if the device has written it (acquire on the done bit), advancing the consumer
    /// index. The doorbell is not rung; call [`CqConsumer::ring_doorbell`] once per burst.
    #[inline]
    pub fn poll<P: Probe>(&mut self, p: &mut P) -> Option<CqPayload> {
        let e = &self.shared.entries[self.shared.size.slot(self.cons)];
        p.touch(e as *const Cqe as usize, 64, Access::Read);
        if e.done.load(Ordering::Acquire) != done_bit(self.shared.size, self.cons) {
            return None;
        }
        let payload = [0, 1, 2].map(|i| e.words[i].load(Ordering::Relaxed));
        self.cons = self.cons.wrapping_add(1);
        Some(payload)
    }

    /// Whether an entry is ready, without consuming it.
    #[inline]
    pub fn ready(&self) -> bool {
        let e = &self.shared.entries[self.shared.size.slot(self.cons)];
        e.done.load(Ordering::Acquire) == done_bit(self.shared.size, self.cons)
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
            let (mut tx, mut rx) = completion_ring(size);
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
            let (mut tx, mut rx) = completion_ring(RingSize::new(2).unwrap());
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
}
