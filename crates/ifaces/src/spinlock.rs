//! A spinlock on one atomic word, for the short critical sections of shared rings: shRing's head advance
//! and list append (000 Listing 1 lines 29-37, Listing 2 lines 18-24), and COREC's non-blocking tail
//! try-lock (003 §3.4.1, Listing 2 lines 35-42). Every attempt is reported as an atomic access, every
//! acquisition through [`Probe::lock`]/[`Probe::unlock`], and the whole section is charged to
//! [`Phase::Sync`], shRing's "sync" bar (000 Figure 2a).

use crate::probe::{Phase, Probe, in_phase};
use crate::sync::{AtomicBool, AtomicU64, Ordering};

/// A test-and-test-and-set spinlock in its own cache line.
#[derive(Debug, Default)]
#[repr(align(64))]
pub struct SpinLock {
    held: AtomicBool,
    contended: AtomicU64,
}

/// Wait a little before the next attempt: pause first; after a while yield the CPU, so that runs with more
/// worker threads than CPUs let a descheduled holder run (under loom, every wait yields).
#[inline]
fn backoff(spins: &mut u32) {
    *spins += 1;
    #[cfg(not(loom))]
    if *spins > 64 {
        std::thread::yield_now();
        return;
    }
    crate::sync::spin();
}

impl SpinLock {
    /// An unlocked lock.
    pub fn new() -> SpinLock {
        SpinLock::default()
    }

    /// One attempt to take the lock. Acquire on success: the section sees everything the previous holder
    /// wrote before its release.
    #[inline]
    fn attempt<P: Probe>(&self, p: &mut P) -> bool {
        p.atomic(&self.held);
        self.held.compare_exchange(false, true, Ordering::Acquire, Ordering::Relaxed).is_ok()
    }

    #[inline]
    fn section<P: Probe, R>(&self, p: &mut P, f: impl FnOnce(&mut P) -> R) -> R {
        let addr = self as *const SpinLock as usize;
        p.lock(addr);
        let r = f(p);
        p.unlock(addr);
        p.write(&self.held);
        // Release: publishes the section's writes to the next holder's acquire.
        self.held.store(false, Ordering::Release);
        r
    }

    /// Run `f` holding the lock, spinning until it is free.
    #[inline]
    pub fn with<P: Probe, R>(&self, p: &mut P, f: impl FnOnce(&mut P) -> R) -> R {
        in_phase(p, Phase::Sync, |p| {
            if !self.attempt(p) {
                // Relaxed: a statistic.
                self.contended.fetch_add(1, Ordering::Relaxed);
                let mut spins = 0;
                loop {
                    // Relaxed: only a hint that the lock may be free; the attempt's CAS decides.
                    while self.held.load(Ordering::Relaxed) {
                        backoff(&mut spins);
                    }
                    if self.attempt(p) {
                        break;
                    }
                }
            }
            self.section(p, f)
        })
    }

    /// Run `f` holding the lock if it is free now; `None`, without waiting, if another agent holds it
    /// (in the sim: if a holder's section lasts beyond this agent's time, [`Probe::lock_free`]).
    #[inline]
    pub fn try_with<P: Probe, R>(&self, p: &mut P, f: impl FnOnce(&mut P) -> R) -> Option<R> {
        in_phase(p, Phase::Sync, |p| {
            if self.attempt(p) {
                if p.lock_free(self as *const SpinLock as usize) {
                    return Some(self.section(p, f));
                }
                // Release: undo the take, which in the agent's time failed; nothing was written under it.
                self.held.store(false, Ordering::Release);
            }
            // Relaxed: a statistic.
            self.contended.fetch_add(1, Ordering::Relaxed);
            None
        })
    }

    /// Acquisitions that found the lock held (waited, or gave up for [`SpinLock::try_with`]).
    pub fn contended(&self) -> u64 {
        self.contended.load(Ordering::Relaxed)
    }
}
