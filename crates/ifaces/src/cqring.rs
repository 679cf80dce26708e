//! Completion rings (shRing §2.1, rxBisect §2): the NIC writes entries, software reads them, and a
//! sense-reverse "done" bit tells software which entries are new: the producer writes the bit of its
//! pass through the ring, which flips on every wrap, and the consumer compares it with the bit it
//! expects for its own pass.
//!
//! Entries are written as the profiled NIC writes them ([`CqFormat`]):
//! - ConnectX: a 64-byte CQE per completion, and CQE compression (mlx5 `rxq_cqe_comp_en`, DPDK's
//!   default): "mini (compressed) CQEs are returned by the NIC when PCI back pressure is detected"
//!   (DPDK commit "net/mlx5: handle Rx CQE compression"). Completions that would wait for the link are
//!   held and merged into a mini-CQE array, one 64-byte slot holding the byte count and RSS hash of up
//!   to [`MINIS`] completions (`struct mlx5_mini_cqe8`); the slots it covers after the first are left
//!   unwritten, and software invalidates them once consumed, as DPDK's mlx5 driver does. A hold ends
//!   when the array is full, when the NIC writes a full CQE on that ring, or when the time the
//!   completion would have waited for the link has passed ([`Probe::dma_wait_ns`]). Only completions
//!   whose descriptor is implicit (consumed in ring order) can be minis: "CQE compression doesn't
//!   tolerate any other differences except the packet size and the Checksum/Hash" (mlx5 PMD, DPDK dev
//!   list); the others are always full CQEs.
//! - Intel (XL710, E810): 32-byte descriptor write-back (XL710 datasheet §8.3.2.2, the 32-byte
//!   receive descriptor's write-back format), never compressed, written back a line of them at a time
//!   as the profile's NIC packs them ([`crate::wbpack`]).
//!
//! The producer and consumer halves are separate types, so a device cannot consume and a core cannot
//! produce. The consumer reports its progress through a [`Doorbell`] (the CR doorbell of shRing
//! Listing 1, lines 27-28), which is how the producer knows the ring is not full.

use crate::doorbell::Doorbell;
use crate::probe::{Access, Probe};
use crate::ringsize::RingSize;
use crate::sync::{Arc, AtomicU32, AtomicU64, Ordering};
use crate::wbpack::{WbHold, WbPacking, WbWrite};

/// Payload words of one full completion; each design gives them meaning (descriptor index, length,
/// RSS hash, Ax ring and index, ...).
pub type CqPayload = [u64; 3];

/// Mini-CQEs in one array slot. mlx5 packs eight (`MLX5_MINI_CQE_ARRAY_SIZE`), its ownership byte sharing
/// the last; here a slot keeps a word of its own for the done bit and the count, so seven.
pub const MINIS: usize = 7;

/// How the NIC writes completion entries: the profile's NIC, and whether compression is enabled.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub enum CqFormat {
    /// ConnectX 64-byte CQEs; `compress`: mlx5 CQE compression enabled (it engages only under PCIe back
    /// pressure).
    Cqe64 {
        /// CQE compression enabled.
        compress: bool,
    },
    /// Intel 32-byte descriptor write-back, packed as `packing` says.
    Wb32 {
        /// How the NIC packs write-backs into lines.
        packing: WbPacking,
    },
}

impl CqFormat {
    /// Bytes one entry slot occupies and the NIC writes.
    pub const fn entry_bytes(self) -> usize {
        match self {
            CqFormat::Cqe64 { .. } => 64,
            CqFormat::Wb32 { .. } => 32,
        }
    }

    const fn words(self) -> usize {
        self.entry_bytes() / 8
    }

    /// Whether compression may engage.
    pub const fn compresses(self) -> bool {
        matches!(self, CqFormat::Cqe64 { compress: true })
    }

    /// How full entries are packed into write-backs (ConnectX writes each CQE on its own).
    pub const fn packing(self) -> WbPacking {
        match self {
            CqFormat::Cqe64 { .. } => WbPacking::NONE,
            CqFormat::Wb32 { packing } => packing,
        }
    }

    /// Whether the NIC may hold completions back (mini-CQE arrays or partial write-back lines).
    const fn holds(self) -> bool {
        self.compresses() || self.packing().per_write > 1
    }
}

/// A mini-CQE's payload: the packet's length and RSS hash (`mlx5_mini_cqe8`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Mini {
    /// Bytes written.
    pub len: u32,
    /// RSS hash.
    pub hash: u32,
}

impl Mini {
    fn word(self) -> u64 {
        u64::from(self.hash) << 32 | u64::from(self.len)
    }

    fn of(w: u64) -> Mini {
        Mini { len: w as u32, hash: (w >> 32) as u32 }
    }
}

/// One completion as the consumer reads it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Completion {
    /// A full entry.
    Full(CqPayload),
    /// A mini-CQE: its descriptor is the ring position it was consumed at.
    Mini(Mini),
}

/// One cache line of entry words.
#[derive(Debug, Default)]
#[repr(C, align(64))]
struct Line([AtomicU64; 8]);

/// The memory of one completion ring, shared by its two halves. A slot is `format.words()` words; its
/// last word is its head: bit 0 the done bit, bits 1-3 the count of mini-CQEs (0 for a full entry).
#[derive(Debug)]
pub struct CqShared {
    size: RingSize,
    format: CqFormat,
    lines: Box<[Line]>,
    /// Consumer index, written by software.
    doorbell: Doorbell,
    /// Completions software has taken, as of its last burst: the doorbell's value except while a
    /// mini-CQE array is half consumed (the doorbell then keeps the array's slot). Bookkeeping for
    /// [`CqProducer::queued`], not something the NIC sees.
    taken: AtomicU32,
}

impl CqShared {
    /// Word `w` of the slot of free-running index `i`.
    #[inline(always)]
    fn word(&self, i: u32, w: usize) -> &AtomicU64 {
        let at = self.size.slot(i) * self.format.words() + w;
        &self.lines[at / 8].0[at % 8]
    }

    #[inline(always)]
    fn head(&self, i: u32) -> &AtomicU64 {
        self.word(i, self.format.words() - 1)
    }

    #[inline(always)]
    fn addr(&self, i: u32) -> usize {
        self.word(i, 0) as *const AtomicU64 as usize
    }
}

/// Expected done bit for free-running index `i`: 1 on the first pass (entries start zeroed), then
/// alternating.
#[inline(always)]
fn done_bit(size: RingSize, i: u32) -> u64 {
    u64::from(!size.generation(i))
}

/// Create a completion ring of `size` entries written in `format`; returns the device (producer) and
/// core (consumer) halves.
pub fn completion_ring(size: RingSize, format: CqFormat) -> (CqProducer, CqConsumer) {
    let words = size.len() * format.words();
    let shared = Arc::new(CqShared {
        size,
        format,
        lines: (0..words.div_ceil(8)).map(|_| Line::default()).collect(),
        doorbell: Doorbell::new(0),
        taken: AtomicU32::new(0),
    });
    let prod = CqProducer {
        shared: shared.clone(),
        prod: 0,
        held: None,
        line: WbHold::new(format.packing()),
        minis: 0,
        arrays: 0,
    };
    (prod, CqConsumer { shared, cons: 0, rung: 0, array: None })
}

/// Completions held for a mini-CQE array not yet written.
#[derive(Debug)]
struct Held {
    /// Free-running index of the array's slot (its first completion).
    base: u32,
    minis: [u64; MINIS],
    n: usize,
    /// When the hold ends (the NIC's clock, ns).
    until_ns: u64,
}

/// The device's half: appends entries.
#[derive(Debug)]
pub struct CqProducer {
    shared: Arc<CqShared>,
    prod: u32,
    held: Option<Held>,
    /// Full entries written but not yet published: their write-back line is not full.
    line: WbHold,
    minis: u64,
    arrays: u64,
}

impl CqProducer {
    /// Append a completion: `full` as a full entry, or, when the format compresses, the link is backed
    /// up ([`Probe::dma_wait_ns`]) and the design can express it as one (`mini`), held for a mini-CQE
    /// array. Returns false if the ring is full.
    #[inline]
    pub fn push<P: Probe>(&mut self, p: &mut P, full: CqPayload, mini: Option<Mini>) -> bool {
        self.expire(p);
        if self.is_full() {
            // Nothing more can join a held array: write it, so that software can make room.
            self.close(p);
            return false;
        }
        let wait = if self.shared.format.compresses() { p.dma_wait_ns() } else { 0 };
        match mini {
            Some(m) if wait > 0 => self.hold(p, m, wait),
            _ => {
                self.close_array(p);
                let i = self.prod;
                for (w, v) in full.into_iter().enumerate() {
                    self.shared.word(i, w).store(v, Ordering::Relaxed);
                }
                if let Some(w) = self.line.complete(i, self.shared.size.get(), || p.now_ns()) {
                    self.publish(p, w);
                }
            }
        }
        self.prod = self.prod.wrapping_add(1);
        true
    }

    /// Hold a mini-CQE for the open array, opening one (at this completion's slot) if none is.
    fn hold<P: Probe>(&mut self, p: &mut P, m: Mini, wait: u64) {
        let until_ns = p.now_ns() + wait;
        let h = self.held.get_or_insert(Held { base: self.prod, minis: [0; MINIS], n: 0, until_ns });
        h.minis[h.n] = m.word();
        h.n += 1;
        if h.n == MINIS {
            self.close_array(p);
        }
    }

    /// Write back full entries whose payload is in place: one DMA write, each published by its head.
    fn publish<P: Probe>(&mut self, p: &mut P, w: WbWrite) {
        let s = &self.shared;
        p.touch(s.addr(w.first), w.n as usize * s.format.entry_bytes(), Access::Write);
        for i in (0..w.n).map(|k| w.first.wrapping_add(k)) {
            // Release: publishes the payload words with the done bit.
            s.head(i).store(done_bit(s.size, i), Ordering::Release);
        }
    }

    /// Write what the NIC holds: the open mini-CQE array, if any (one entry-sized DMA write, published
    /// by its head), and full entries waiting for their line.
    pub fn close<P: Probe>(&mut self, p: &mut P) {
        if let Some(w) = self.line.flush() {
            self.publish(p, w);
        }
        self.close_array(p);
    }

    /// Write the open mini-CQE array, if any.
    fn close_array<P: Probe>(&mut self, p: &mut P) {
        let Some(h) = self.held.take() else { return };
        let s = &self.shared;
        p.touch(s.addr(h.base), s.format.entry_bytes(), Access::Write);
        for (w, v) in h.minis[..h.n].iter().enumerate() {
            s.word(h.base, w).store(*v, Ordering::Relaxed);
        }
        // Release: publishes the minis with the done bit and their count.
        s.head(h.base).store(done_bit(s.size, h.base) | (h.n as u64) << 1, Ordering::Release);
        self.minis += h.n as u64;
        self.arrays += 1;
    }

    /// Write the open array, or the partial write-back line, if its hold has ended by the NIC's clock.
    #[inline]
    pub fn expire<P: Probe>(&mut self, p: &mut P) {
        if let Some(w) = self.line.expire(|| p.now_ns()) {
            self.publish(p, w);
        }
        if self.held.as_ref().is_some_and(|h| p.now_ns() >= h.until_ns) {
            self.close_array(p);
        }
    }

    /// Entry slots written or held and not yet released by the consumer's doorbell: the NIC's view.
    #[inline]
    fn occupancy(&self) -> u32 {
        self.prod.wrapping_sub(self.shared.doorbell.read())
    }

    /// Completions written or held that software has not taken yet (ring occupancy as a count of
    /// completions; a half-consumed mini-CQE array counts only its untaken minis).
    #[inline]
    pub fn queued(&self) -> u32 {
        self.prod.wrapping_sub(self.shared.taken.load(Ordering::Relaxed))
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

    /// Entries produced so far (held ones included).
    pub fn produced(&self) -> u32 {
        self.prod
    }
}

/// End the expired holds (mini-CQE arrays, partial write-back lines) of every ring of a NIC (it checks
/// their timers as it works: each packet it handles, on any ring). Nothing to do where the rings hold
/// nothing back.
#[inline]
pub fn expire_all<'a, P: Probe>(p: &mut P, rings: impl IntoIterator<Item = &'a mut CqProducer>) {
    let mut rings = rings.into_iter().peekable();
    if rings.peek().is_some_and(|q| q.shared.format.holds()) {
        rings.for_each(|q| q.expire(p));
    }
}

/// Write what every ring holds back (the NIC has nothing else to do).
pub fn close_all<'a, P: Probe>(p: &mut P, rings: impl IntoIterator<Item = &'a mut CqProducer>) {
    rings.into_iter().for_each(|q| q.close(p));
}

/// The `cqe_minis` and `cqe_arrays` metrics of a NIC's completion rings: completions written as
/// mini-CQEs, and the arrays that carried them.
pub fn compression_metrics<'a>(rings: impl IntoIterator<Item = &'a CqProducer>) -> [(String, f64); 2] {
    let (minis, arrays) = rings.into_iter().fold((0, 0), |(m, a), q| (m + q.minis, a + q.arrays));
    [("cqe_minis".into(), minis as f64), ("cqe_arrays".into(), arrays as f64)]
}

/// A mini-CQE array being consumed.
#[derive(Debug, Clone, Copy)]
struct Array {
    base: u32,
    n: u32,
}

/// The core's half: polls for new entries.
#[derive(Debug)]
pub struct CqConsumer {
    shared: Arc<CqShared>,
    cons: u32,
    rung: u32,
    array: Option<Array>,
}

impl CqConsumer {
    /// Read the next completion if the device has written it (acquire on the done bit), advancing the
    /// consumer index. The doorbell is not rung; call [`CqConsumer::ring_doorbell`] once per burst.
    #[inline]
    pub fn poll<P: Probe>(&mut self, p: &mut P) -> Option<Completion> {
        let s = &*self.shared;
        let a = match self.array {
            Some(a) => a,
            None => {
                let i = self.cons;
                p.touch(s.addr(i), s.format.entry_bytes(), Access::Read);
                let head = s.head(i).load(Ordering::Acquire);
                if head & 1 != done_bit(s.size, i) {
                    return None;
                }
                let n = (head >> 1) as u32 & 7;
                if n == 0 {
                    self.cons = i.wrapping_add(1);
                    return Some(Completion::Full([0, 1, 2].map(|w| s.word(i, w).load(Ordering::Relaxed))));
                }
                Array { base: i, n }
            }
        };
        // A mini of the array read above (its line is in this core's cache).
        let k = self.cons.wrapping_sub(a.base);
        let m = Mini::of(s.word(a.base, k as usize).load(Ordering::Relaxed));
        p.touch(s.word(a.base, k as usize) as *const AtomicU64 as usize, 8, Access::Read);
        self.cons = self.cons.wrapping_add(1);
        self.array = (k + 1 < a.n).then_some(a);
        if k + 1 == a.n {
            // The slots the array covered were not written this pass: mark them consumed, so that a
            // stale head from an earlier pass cannot pass for a new entry (mlx5 drivers do the same).
            for j in 1..a.n {
                let i = a.base.wrapping_add(j);
                p.touch(s.head(i) as *const AtomicU64 as usize, 8, Access::Write);
                s.head(i).store(done_bit(s.size, i), Ordering::Relaxed);
            }
        }
        Some(Completion::Mini(m))
    }

    /// [`CqConsumer::poll`] for rings whose producer never writes mini-CQEs (it passes no `mini`).
    #[inline]
    pub fn poll_full<P: Probe>(&mut self, p: &mut P) -> Option<CqPayload> {
        match self.poll(p)? {
            Completion::Full(w) => Some(w),
            Completion::Mini(_) => unreachable!("a ring whose producer writes only full entries"),
        }
    }

    /// Whether a completion is ready, without consuming it.
    #[inline]
    pub fn ready(&self) -> bool {
        self.array.is_some()
            || self.shared.head(self.cons).load(Ordering::Acquire) & 1 == done_bit(self.shared.size, self.cons)
    }

    /// Tell the device how far this core has consumed (shRing Listing 1, lines 27-28), if it moved. An
    /// array being consumed keeps its slot, and those it covers, until its last mini is taken.
    #[inline]
    pub fn ring_doorbell<P: Probe>(&mut self, p: &mut P) {
        if let Some(done) = self.advance() {
            self.shared.doorbell.ring(p, done);
        }
    }

    /// Record how far this core has consumed without a register write: an Intel write-back ring has no
    /// consumer register (the NIC writes a slot back only once software has posted its descriptor again,
    /// through the RX tail), so the driver of one only keeps the count the device model reads.
    #[inline]
    pub fn release(&mut self) {
        if let Some(done) = self.advance() {
            self.shared.doorbell.set(done);
        }
    }

    /// How far this core has consumed, if it moved since the last report.
    #[inline]
    fn advance(&mut self) -> Option<u32> {
        self.shared.taken.store(self.cons, Ordering::Relaxed);
        let done = self.array.map_or(self.cons, |a| a.base);
        (self.rung != done).then(|| {
            self.rung = done;
            done
        })
    }

    /// Completions consumed so far: the ring position of the next one.
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
    use crate::probe::CountingProbe;
    use proptest::prelude::*;

    const FORMATS: [CqFormat; 4] = [
        CqFormat::Cqe64 { compress: false },
        CqFormat::Cqe64 { compress: true },
        CqFormat::Wb32 { packing: WbPacking::NONE },
        CqFormat::Wb32 { packing: WbPacking { per_write: 4, timer_ns: 200 } },
    ];

    proptest! {
        /// Any interleaving of pushes (full or mini, with and without back pressure), holds ending,
        /// polls and doorbells, in every format, matches a VecDeque oracle across many wraps: every
        /// completion is seen once, in order, with its payload, and a mini at the ring position its
        /// descriptor had.
        #[test]
        fn matches_a_queue(steps in proptest::collection::vec(0u8..6, 0..500), f in 0usize..4, size in 2u32..5) {
            let size = RingSize::new(1 << size).unwrap();
            let (mut tx, mut rx) = completion_ring(size, FORMATS[f]);
            let mut oracle = std::collections::VecDeque::new();
            let (mut rung, mut polled, mut next) = (0u32, 0u32, 0u32);
            let p = &mut CountingProbe::default();
            for s in steps {
                match s {
                    0 | 1 => {
                        p.dma_wait_ns = u64::from(s) * 100;
                        let fits = next - rung < size.get();
                        let m = Mini { len: next.wrapping_mul(2_654_435_761), hash: !next };
                        let full = [u64::from(next), u64::from(!next), u64::from(next) * 3];
                        prop_assert_eq!(tx.push(p, full, (next % 3 != 0).then_some(m)), fits);
                        if fits {
                            let mini = next % 3 != 0 && s == 1 && FORMATS[f].compresses();
                            oracle.push_back((next, mini.then_some(m)));
                            next += 1;
                        }
                    }
                    2 => { p.now += 150; tx.expire(p); }
                    3 => tx.close(p),
                    4 => {
                        let at = rx.consumed();
                        match rx.poll(p) {
                            Some(c) => {
                                let (id, mini) = oracle.pop_front().expect("nothing extra");
                                prop_assert_eq!(at, id);
                                match (c, mini) {
                                    (Completion::Full(w), None) => prop_assert_eq!(w, [u64::from(id), u64::from(!id), u64::from(id) * 3]),
                                    (Completion::Mini(got), Some(m)) => prop_assert_eq!(got, m),
                                    (c, m) => prop_assert!(false, "got {:?}, wanted {:?}", c, m),
                                }
                                polled += 1;
                            }
                            // Nothing written yet: the oracle's head is held in an open array or a
                            // partial write-back line.
                            None => prop_assert!(oracle.front().is_none_or(|&(id, m)| tx.line.holds()
                                || (m.is_some() && tx.held.as_ref().is_some_and(|h| h.base <= id)))),
                        }
                    }
                    _ => { rx.ring_doorbell(p); rung = rx.rung; }
                }
            }
            prop_assert!(rung <= polled);
        }
    }

    #[test]
    fn an_array_is_one_write_for_seven_completions() {
        let (mut tx, mut rx) = completion_ring(RingSize::new(16).unwrap(), CqFormat::Cqe64 { compress: true });
        let p = &mut CountingProbe { dma_wait_ns: 1000, ..CountingProbe::default() };
        for i in 0..7 {
            assert!(tx.push(p, [0; 3], Some(Mini { len: 60 + i, hash: i })));
        }
        assert_eq!((p.touches[1], p.bytes), (1, 64), "one 64-byte write");
        assert_eq!((tx.minis, tx.arrays), (7, 1));
        let got: Vec<_> = std::iter::from_fn(|| rx.poll(p)).collect();
        assert_eq!(got, (0..7).map(|i| Completion::Mini(Mini { len: 60 + i, hash: i })).collect::<Vec<_>>());
    }

    #[test]
    fn without_back_pressure_every_completion_is_a_full_entry() {
        let (mut tx, _rx) = completion_ring(RingSize::new(16).unwrap(), CqFormat::Cqe64 { compress: true });
        let p = &mut CountingProbe::default();
        for _ in 0..4 {
            assert!(tx.push(p, [0; 3], Some(Mini { len: 60, hash: 0 })));
        }
        assert_eq!((p.touches[1], (tx.minis, tx.arrays)), (4, (0, 0)));
    }

    #[test]
    fn intel_write_back_is_32_bytes_two_to_a_line() {
        let (mut tx, _rx) = completion_ring(RingSize::new(4).unwrap(), CqFormat::Wb32 { packing: WbPacking::NONE });
        let p = &mut CountingProbe { dma_wait_ns: 1000, ..CountingProbe::default() };
        assert!(tx.push(p, [1, 2, 3], Some(Mini { len: 60, hash: 0 })));
        assert!(tx.push(p, [1, 2, 3], None));
        assert_eq!((p.touches[1], p.bytes, (tx.minis, tx.arrays)), (2, 64, (0, 0)));
        assert_eq!(tx.shared.lines.len(), 2);
    }

    #[test]
    fn packed_write_backs_wait_for_their_line_or_its_timer() {
        let packing = WbPacking::new(4, 32_000).unwrap();
        let (mut tx, mut rx) = completion_ring(RingSize::new(16).unwrap(), CqFormat::Wb32 { packing });
        let p = &mut CountingProbe::default();
        for _ in 0..3 {
            assert!(tx.push(p, [1, 2, 3], None));
        }
        assert_eq!((p.touches[1], rx.poll(p)), (0, None), "three of a line's four: nothing written");
        let q = &mut CountingProbe::default();
        assert!(tx.push(q, [1, 2, 3], None));
        assert_eq!((q.touches[1], q.bytes), (1, 128), "the line's four in one 128-byte write");
        assert_eq!(std::iter::from_fn(|| rx.poll_full(p)).count(), 4);
        assert!(tx.push(p, [4, 5, 6], None));
        p.now = 31_999;
        tx.expire(p);
        assert_eq!(rx.poll(p), None);
        p.now = 32_000;
        tx.expire(p);
        assert_eq!(rx.poll_full(p), Some([4, 5, 6]), "a partial line written when the ITR expires");
    }
}

#[cfg(all(test, loom))]
mod loom_tests {
    use super::*;
    use crate::probe::CountingProbe;

    /// The device publishes entries across a wrap while the core polls and rings the doorbell, in each
    /// format (with back pressure, so that compression engages; packed write-backs publishing two heads
    /// after their words): every completion is seen once, in
    /// order, with its payload (the head's release/acquire orders the words), and a consumer's
    /// invalidation of covered slots never races the device's next pass.
    #[test]
    fn publication_with_the_done_bit() {
        for format in [
            CqFormat::Cqe64 { compress: false },
            CqFormat::Cqe64 { compress: true },
            CqFormat::Wb32 { packing: WbPacking::NONE },
            CqFormat::Wb32 { packing: WbPacking { per_write: 2, timer_ns: 1 } },
        ] {
            loom::model(move || {
                let (mut tx, mut rx) = completion_ring(RingSize::new(2).unwrap(), format);
                let producer = loom::thread::spawn(move || {
                    let p = &mut CountingProbe { dma_wait_ns: 1, ..CountingProbe::default() };
                    let mut next = 0u32;
                    while next < 4 {
                        let m = Mini { len: next + 60, hash: next };
                        if tx.push(p, [u64::from(next), 10, 20], Some(m)) {
                            next += 1;
                        } else {
                            tx.close(p);
                            loom::thread::yield_now();
                        }
                    }
                    tx.close(p);
                });
                let p = &mut CountingProbe::default();
                let mut want = 0u32;
                while want < 4 {
                    match rx.poll(p) {
                        Some(Completion::Full(w)) => {
                            assert_eq!(w, [u64::from(want), 10, 20]);
                            want += 1;
                        }
                        Some(Completion::Mini(m)) => {
                            assert_eq!(m, Mini { len: want + 60, hash: want });
                            want += 1;
                        }
                        None => loom::thread::yield_now(),
                    }
                    rx.ring_doorbell(p);
                }
                producer.join().unwrap();
            });
        }
    }
}
