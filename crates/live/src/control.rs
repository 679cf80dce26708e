//! How the NIC thread and the workers agree on the phases of a run: run, quiesce (the source has stopped
//! and every ring is empty: workers confirm they hold nothing), teardown (every transmitted packet has
//! left: workers release their rings' buffers and exit). An abort flag ends everything early if a thread
//! panics, so nobody waits forever.

use std::sync::atomic::{AtomicBool, AtomicU8, AtomicU64, AtomicUsize, Ordering};

/// A counter alone in its cache line, written by one worker and read by the NIC thread.
#[derive(Debug, Default)]
#[repr(align(64))]
struct Padded(AtomicU64);

/// Phase of a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum Phase {
    /// Packets flow.
    Run = 0,
    /// The source stopped and the rings are empty: workers report idle.
    Quiesce = 1,
    /// Everything sent: workers tear down and exit.
    Teardown = 2,
}

/// Shared run control.
#[derive(Debug, Default)]
pub struct Control {
    workers: usize,
    polls: Box<[Padded]>,
    phase: AtomicU8,
    quiesced: AtomicUsize,
    stopped: AtomicUsize,
    abort: AtomicBool,
}

impl Control {
    /// Control for a run with `workers` worker threads.
    pub fn new(workers: usize) -> Control {
        Control { workers, polls: (0..workers).map(|_| Padded::default()).collect(), ..Control::default() }
    }

    /// Worker `core` has made `n` rx calls so far (a relaxed store: the NIC only samples the count).
    #[inline]
    pub fn publish_polls(&self, core: usize, n: u64) {
        self.polls[core].0.store(n, Ordering::Relaxed);
    }

    /// Rx calls each worker has made so far.
    pub fn polls(&self) -> impl Iterator<Item = u64> + '_ {
        self.polls.iter().map(|p| p.0.load(Ordering::Relaxed))
    }

    /// Number of worker threads.
    pub fn workers(&self) -> usize {
        self.workers
    }

    /// Current phase (acquire: pairs with [`Control::set`]).
    #[inline]
    pub fn phase(&self) -> Phase {
        match self.phase.load(Ordering::Acquire) {
            0 => Phase::Run,
            1 => Phase::Quiesce,
            _ => Phase::Teardown,
        }
    }

    /// Move to `phase` (release: everything the NIC did before is visible to workers that see it).
    pub fn set(&self, phase: Phase) {
        self.phase.store(phase as u8, Ordering::Release);
    }

    /// A worker confirms it is idle in the quiesce phase.
    pub fn confirm_quiesced(&self) {
        self.quiesced.fetch_add(1, Ordering::AcqRel);
    }

    /// Workers that confirmed.
    pub fn quiesced(&self) -> usize {
        self.quiesced.load(Ordering::Acquire)
    }

    /// A worker has stopped receiving; wait until every worker has (or the run aborts). Shared rings
    /// are torn down by one member of their group, so none may still be polling them then.
    pub fn stop_and_wait(&self) {
        self.stopped.fetch_add(1, Ordering::AcqRel);
        while self.stopped.load(Ordering::Acquire) < self.workers && !self.aborted() {
            std::thread::yield_now();
        }
    }

    /// Ask every thread to stop now.
    pub fn abort(&self) {
        self.abort.store(true, Ordering::Release);
    }

    /// Whether a thread asked to stop.
    #[inline]
    pub fn aborted(&self) -> bool {
        self.abort.load(Ordering::Acquire)
    }
}

/// Sets the abort flag if the thread holding it unwinds from a panic.
pub struct AbortOnPanic<'a>(pub &'a Control);

impl Drop for AbortOnPanic<'_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.0.abort();
        }
    }
}
