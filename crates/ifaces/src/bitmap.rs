//! The bitmap of reusable descriptors, one bit per ring slot: shRing RxArr's bitmap (000 §4.3, Listing 1)
//! and COREC's READ_DONE bits (003 §3.4.3, practice 2) are the same structure.
//!
//! Cores set the bits of descriptors they have reposted with an atomic OR, batching the bits that fall in
//! one 64-bit word into one OR (Listing 1 lines 16-26). One agent at a time, holding the ring's lock,
//! clears the maximal contiguous run of set bits that starts at the ring's head, word by word with a
//! find-first-set, and advances the head past it (lines 29-35).

use crate::probe::{Phase, Probe, in_phase};
use crate::ringsize::RingSize;
use crate::sync::{AtomicU64, Ordering};

/// One bit per slot of a ring of `size` slots.
#[derive(Debug)]
pub struct ReuseBitmap {
    size: RingSize,
    words: Box<[AtomicU64]>,
}

/// Bits a core has collected for one word and not yet published (Listing 1's `lidx`/`lbits`).
#[derive(Debug, Default, Clone, Copy)]
pub struct MarkBatch {
    word: Option<usize>,
    bits: u64,
}

impl ReuseBitmap {
    /// All bits clear.
    pub fn new(size: RingSize) -> ReuseBitmap {
        ReuseBitmap { size, words: (0..size.len().div_ceil(64)).map(|_| AtomicU64::new(0)).collect() }
    }

    #[inline]
    fn place(&self, idx: u32) -> (usize, u32) {
        let slot = self.size.slot(idx);
        (slot / 64, (slot % 64) as u32)
    }

    /// Collect the bit of free-running index `idx` into `batch`, publishing the batch first if `idx`
    /// falls in another word (Listing 1 lines 16-22).
    #[inline]
    pub fn mark<P: Probe>(&self, p: &mut P, batch: &mut MarkBatch, idx: u32) {
        let (w, b) = self.place(idx);
        if batch.word != Some(w) {
            self.flush(p, batch);
            batch.word = Some(w);
        }
        batch.bits |= 1 << b;
    }

    /// Publish the collected bits with one atomic OR (Listing 1 lines 25-26), charged to [`Phase::Sync`].
    #[inline]
    pub fn flush<P: Probe>(&self, p: &mut P, batch: &mut MarkBatch) {
        if let (Some(w), bits) = (batch.word, batch.bits)
            && bits != 0
        {
            in_phase(p, Phase::Sync, |p| {
                p.atomic(&self.words[w]);
                // Release: the descriptor the core reposted before marking it is visible to the lock
                // holder that reads this word with acquire and then hands the descriptor to the device.
                self.words[w].fetch_or(bits, Ordering::Release);
            });
        }
        *batch = MarkBatch::default();
    }

    /// Whether the bit of `idx` is set (acquire, as in [`ReuseBitmap::take_run`]).
    #[inline]
    pub fn is_set(&self, idx: u32) -> bool {
        let (w, b) = self.place(idx);
        self.words[w].load(Ordering::Acquire) & (1 << b) != 0
    }

    /// Clear the maximal run of set bits starting at free-running index `from`, calling `visit` on each
    /// index of the run in order, and return its length (Listing 1 lines 30-35). The caller must hold the
    /// ring's lock: only one agent may take runs at a time.
    #[inline]
    pub fn take_run<P: Probe>(&self, p: &mut P, from: u32, mut visit: impl FnMut(u32)) -> u32 {
        let mut n = 0u32;
        while n < self.size.get() {
            let at = from.wrapping_add(n);
            let (w, b) = self.place(at);
            p.read(&self.words[w]);
            // Acquire: pairs with the markers' release, so their reposted descriptors are visible here
            // and, through the doorbell's release, to the device.
            let word = self.words[w].load(Ordering::Acquire);
            // Find-first-set on the complement: the number of consecutive ones from bit `b` up.
            let run = (!(word >> b)).trailing_zeros().min(64 - b);
            if run == 0 {
                break;
            }
            let mask = if run == 64 { u64::MAX } else { ((1u64 << run) - 1) << b };
            p.atomic(&self.words[w]);
            // Relaxed: only the lock holder clears, and a bit is set again only after the device refills
            // its descriptor, which happens after the doorbell release that follows this clear.
            self.words[w].fetch_and(!mask, Ordering::Relaxed);
            (0..run).for_each(|i| visit(at.wrapping_add(i)));
            n += run;
        }
        n
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use crate::probe::NoProbe;

    #[test]
    fn runs_stop_at_gaps_cross_words_and_wrap() {
        let p = &mut NoProbe::default();
        let bm = ReuseBitmap::new(RingSize::new(128).unwrap());
        let mut b = MarkBatch::default();
        for i in (60..70).chain(71..72) {
            bm.mark(p, &mut b, i);
        }
        bm.flush(p, &mut b);
        assert_eq!(bm.take_run(p, 59, |_| ()), 0);
        let mut seen = vec![];
        assert_eq!(bm.take_run(p, 60, |i| seen.push(i)), 10);
        assert_eq!(seen, (60..70).collect::<Vec<_>>());
        assert!(!bm.is_set(69) && bm.is_set(71));
        // Wrap: indices 126, 127, 128 (= slot 0).
        for i in [126, 127, 128, 129] {
            bm.mark(p, &mut b, i);
        }
        bm.flush(p, &mut b);
        assert_eq!(bm.take_run(p, 126, |_| ()), 4);
        // A small ring uses part of one word.
        let bm = ReuseBitmap::new(RingSize::new(4).unwrap());
        for i in 0..4 {
            bm.mark(p, &mut b, i + 2);
        }
        bm.flush(p, &mut b);
        assert_eq!(bm.take_run(p, 2, |_| ()), 4);
    }
}
