//! Pacing: send timestamps for an offered rate, optionally in on/off bursts.

use crate::units::Rate;
use serde::Deserialize;
use wire::frame::MAX_FRAME;

/// On/off bursts: during `on_ns` frames go out at the configured rate, then nothing for `off_ns`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Burst {
    /// Length of a sending period, nanoseconds (> 0).
    pub on_ns: u64,
    /// Length of a silent period, nanoseconds.
    pub off_ns: u64,
}

/// Turns frame lengths into send times. Time advances in picoseconds, so each gap is rounded by at
/// most 0.5 ps (10 ppm at 64 B and 100 Gbps).
#[derive(Debug, Clone)]
pub struct Pacer {
    /// Gap after a frame, indexed by its length (FCS included).
    gap_ps: Vec<u64>,
    /// Time spent sending so far, off periods excluded.
    active_ps: u64,
    /// On and off period lengths in picoseconds.
    burst: Option<(u64, u64)>,
}

impl Pacer {
    /// A pacer for a valid (positive) rate and, if given, a burst with `on_ns > 0`.
    pub fn new(rate: Rate, burst: Option<Burst>) -> Pacer {
        let gap_ps = (0..=MAX_FRAME).map(|len| rate.gap_ps(len).round() as u64).collect();
        Pacer { gap_ps, active_ps: 0, burst: burst.map(|b| (b.on_ns * 1000, b.off_ns * 1000)) }
    }

    /// Send time in ns of the next frame, `frame_len` bytes long (at most 1518).
    #[inline]
    pub fn next(&mut self, frame_len: usize) -> u64 {
        let a = self.active_ps;
        self.active_ps += self.gap_ps[frame_len];
        let t = match self.burst {
            Some((on, off)) => a + (a / on) * off,
            None => a,
        };
        t / 1000
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bursts_leave_gaps() {
        // 1 Mpps: one frame per us; 3 us on, 2 us off.
        let mut p = Pacer::new(Rate::Mpps(1.0), Some(Burst { on_ns: 3000, off_ns: 2000 }));
        let ts: Vec<u64> = (0..7).map(|_| p.next(64)).collect();
        assert_eq!(ts, [0, 1000, 2000, 5000, 6000, 7000, 10_000]);
    }
}
