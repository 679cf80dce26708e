//! What a caller sees of a run besides its report: the virtual time it has reached, for a progress bar,
//! and where its thread's CPU time went (setup, warm-up, measurement, drain), for the speed report
//! (`rxlab bench --sim`). Nothing here enters the model: the report is the same whoever watches.

use std::sync::atomic::{AtomicU8, AtomicU64, Ordering::Relaxed};

/// The parts of a run, in the order it goes through them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Part {
    /// Building the machine, the traffic's flows and the apps' tables, and warming those tables.
    Setup,
    /// Simulating up to the measurement window.
    Warmup,
    /// Simulating the measurement window.
    Measurement,
    /// Simulating what the offered traffic left queued, and writing the report.
    Drain,
}

/// No part entered yet.
const NONE: u8 = u8::MAX;

/// A run's progress: shared with whoever watches it (another thread), written by the run's own thread.
#[derive(Debug)]
pub struct Progress {
    reached_ps: AtomicU64,
    part: AtomicU8,
    /// Thread CPU time when the current part began, ns.
    since_ns: AtomicU64,
    /// CPU time spent in each [`Part`], ns.
    spent_ns: [AtomicU64; 4],
}

impl Default for Progress {
    fn default() -> Progress {
        Progress {
            reached_ps: AtomicU64::new(0),
            part: AtomicU8::new(NONE),
            since_ns: AtomicU64::new(0),
            spent_ns: Default::default(),
        }
    }
}

/// CPU seconds a run's thread spent in each part.
#[derive(Debug, Clone, Copy, Default, PartialEq, serde::Serialize)]
pub struct Spent {
    /// [`Part::Setup`].
    pub setup_s: f64,
    /// [`Part::Warmup`].
    pub warmup_s: f64,
    /// [`Part::Measurement`].
    pub measurement_s: f64,
    /// [`Part::Drain`].
    pub drain_s: f64,
}

impl Spent {
    /// All parts together.
    pub fn total_s(&self) -> f64 {
        self.setup_s + self.warmup_s + self.measurement_s + self.drain_s
    }
}

impl Progress {
    /// Virtual time the run has reached, ps (stored every sampling period).
    pub fn reached_ps(&self) -> u64 {
        self.reached_ps.load(Relaxed)
    }

    pub(crate) fn reach(&self, ps: u64) {
        self.reached_ps.store(ps, Relaxed);
    }

    /// End the current part (if any) on the calling thread's CPU clock and begin `part`.
    pub(crate) fn enter(&self, part: Part) {
        self.close();
        self.part.store(part as u8, Relaxed);
    }

    /// End the current part, if any.
    pub(crate) fn close(&self) {
        let now = thread_cpu_ns();
        let part = self.part.swap(NONE, Relaxed);
        if let Some(spent) = self.spent_ns.get(usize::from(part)) {
            spent.fetch_add(now.saturating_sub(self.since_ns.load(Relaxed)), Relaxed);
        }
        self.since_ns.store(now, Relaxed);
    }

    /// CPU time spent so far in each part.
    pub fn spent(&self) -> Spent {
        let s = |p: Part| self.spent_ns[p as usize].load(Relaxed) as f64 / 1e9;
        Spent {
            setup_s: s(Part::Setup),
            warmup_s: s(Part::Warmup),
            measurement_s: s(Part::Measurement),
            drain_s: s(Part::Drain),
        }
    }
}

/// CPU time the calling thread has used, ns.
fn thread_cpu_ns() -> u64 {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::ThreadCPUTime);
    t.tv_sec as u64 * 1_000_000_000 + t.tv_nsec as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_part_gets_the_cpu_time_spent_in_it() {
        let p = Progress::default();
        let spin = |ms: u64| {
            let start = thread_cpu_ns();
            while thread_cpu_ns() - start < ms * 1_000_000 {
                std::hint::black_box(0);
            }
        };
        p.enter(Part::Setup);
        spin(5);
        p.enter(Part::Measurement);
        spin(10);
        p.close();
        spin(5);
        let s = p.spent();
        assert!(s.setup_s >= 0.005 && s.measurement_s >= 0.010, "{s:?}");
        assert_eq!((s.warmup_s, s.drain_s), (0.0, 0.0));
        assert!(s.total_s() < 0.020 + 0.005, "time after close is nobody's: {s:?}");
    }
}
