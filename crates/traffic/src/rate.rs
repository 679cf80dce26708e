//! Pacing: send timestamps for an offered rate, optionally in on/off bursts and in trains.

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

/// Trains: the sender hands its NIC `frames` packets at a time (DPDK senders call `rte_eth_tx_burst`
/// with a burst, 32 in pktgen-dpdk and testpmd), which the NIC puts on the wire back to back at the
/// port's `line` rate; trains start so that the mean rate is the configured one.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Train {
    /// Frames per train (> 0; 1 is perfect pacing).
    pub frames: u32,
    /// The sender's port speed, at which a train's frames follow each other (at least the rate).
    pub line: Rate,
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
    /// Frames per train and the gap after a frame at line rate, by length.
    train: Option<(u32, Vec<u64>)>,
    /// Frames sent so far, and where the current train stands: its paced start and the line-rate time
    /// into it.
    sent: u64,
    in_train: (u64, u64),
}

impl Pacer {
    /// A pacer for a valid (positive) rate and, if given, a burst with `on_ns > 0` and a train whose
    /// line rate is at least `rate` (checked by `GenConfig::validate`).
    pub fn new(rate: Rate, burst: Option<Burst>, train: Option<Train>) -> Pacer {
        let gaps = |r: Rate| (0..=MAX_FRAME).map(|len| r.gap_ps(len).round() as u64).collect::<Vec<u64>>();
        Pacer {
            gap_ps: gaps(rate),
            active_ps: 0,
            burst: burst.map(|b| (b.on_ns * 1000, b.off_ns * 1000)),
            train: train.filter(|t| t.frames > 1).map(|t| (t.frames, gaps(t.line))),
            sent: 0,
            in_train: (0, 0),
        }
    }

    /// Send time in ns of the next frame, `frame_len` bytes long (at most 1518).
    #[inline]
    pub fn next(&mut self, frame_len: usize) -> u64 {
        let mut a = self.active_ps;
        self.active_ps += self.gap_ps[frame_len];
        if let Some((frames, line)) = &self.train {
            if self.sent.is_multiple_of(u64::from(*frames)) {
                self.in_train = (a, 0);
            }
            a = self.in_train.0 + self.in_train.1;
            self.in_train.1 += line[frame_len];
        }
        self.sent += 1;
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
        let mut p = Pacer::new(Rate::Mpps(1.0), Some(Burst { on_ns: 3000, off_ns: 2000 }), None);
        let ts: Vec<u64> = (0..7).map(|_| p.next(64)).collect();
        assert_eq!(ts, [0, 1000, 2000, 5000, 6000, 7000, 10_000]);
    }

    #[test]
    fn trains_go_back_to_back_at_line_rate_and_keep_the_mean() {
        // 1 Mpps in trains of 4 at 10 Mpps: 0, 0.1, 0.2, 0.3 us, then the next train at 4 us.
        let mut p = Pacer::new(Rate::Mpps(1.0), None, Some(Train { frames: 4, line: Rate::Mpps(10.0) }));
        let ts: Vec<u64> = (0..9).map(|_| p.next(64)).collect();
        assert_eq!(ts, [0, 100, 200, 300, 4000, 4100, 4200, 4300, 8000]);
        let mut one = Pacer::new(Rate::Mpps(1.0), None, Some(Train { frames: 1, line: Rate::Mpps(10.0) }));
        assert_eq!((0..3).map(|_| one.next(64)).collect::<Vec<_>>(), [0, 1000, 2000], "a train of 1 is pacing");
    }
}
