//! A serial link (one direction of PCIe, the Ethernet ports) that sends transfers in the order their
//! data is ready, whatever the order in which agents place them. In the simulation agents' clocks run
//! apart: the NIC's transmit engine waits for read slots and places its traffic at times later than
//! what the receive engine places next; the completions of reads that DRAM serves slowly are ready later
//! than those placed after them. A plain FIFO (one "free from" time) would then hold the link idle until
//! the late transfer and stall every earlier one placed after it; here each transfer takes the link's
//! idle time from its ready time on, gap after gap, until its bytes are sent: PCIe interleaves TLPs of
//! different transfers, so a long write does not wait for a gap as long as itself.

use std::collections::VecDeque;

/// How far before the latest ready time the schedule is remembered, ps (50 µs): agents' clocks drift
/// apart by a few microseconds at most (the transmit engine waiting for read slots, slow completions);
/// older busy intervals are forgotten.
const DRIFT: u64 = 50_000_000;

/// The link's schedule: disjoint busy intervals [start, end) in ps, sorted, adjacent ones merged.
#[derive(Debug, Clone, Default)]
pub struct Link {
    busy: VecDeque<(u64, u64)>,
    /// The latest ready time of any transfer placed so far.
    latest: u64,
}

impl Link {
    /// Send a transfer of `ser` ps that is ready at `ready`; returns when its last byte has left.
    #[inline]
    pub fn send(&mut self, ready: u64, ser: u64) -> u64 {
        self.latest = self.latest.max(ready);
        // The usual case: ready after everything placed so far, or queued behind the last interval.
        if let Some(last) = self.busy.back_mut()
            && ready >= last.0
        {
            let start = ready.max(last.1);
            if start == last.1 {
                last.1 = start + ser;
            } else {
                self.busy.push_back((start, start + ser));
            }
            return self.trimmed(start + ser);
        }
        self.fill_gaps(ready, ser)
    }

    /// Send a transfer ready before the last busy interval starts through the idle gaps from `ready` on.
    #[cold]
    fn fill_gaps(&mut self, ready: u64, ser: u64) -> u64 {
        // `at`: the first interval that ends after `now`.
        let mut at = self.busy.partition_point(|&(_, end)| end <= ready);
        let mut now = ready;
        let mut left = ser;
        while left > 0 {
            let next = self.busy.get(at).copied();
            if let Some((start, end)) = next
                && start <= now
            {
                now = now.max(end);
                at += 1;
                continue;
            }
            // `now` is in the gap before `next`: take what of it the transfer needs, merging the taken
            // piece with the intervals it touches; `at` is then the interval that holds it.
            let gap_end = next.map_or(u64::MAX, |(start, _)| start);
            let take = left.min(gap_end - now);
            let joins_prev = at > 0 && self.busy[at - 1].1 == now;
            let joins_next = next.is_some() && now + take == gap_end;
            match (joins_prev, joins_next) {
                (true, true) => {
                    self.busy[at - 1].1 = self.busy[at].1;
                    self.busy.remove(at);
                    at -= 1;
                }
                (true, false) => {
                    self.busy[at - 1].1 = now + take;
                    at -= 1;
                }
                (false, true) => self.busy[at].0 = now,
                (false, false) => self.busy.insert(at, (now, now + take)),
            }
            now += take;
            left -= take;
        }
        self.trimmed(now)
    }

    /// Forget intervals that ended more than [`DRIFT`] before the latest ready time; passes `end`
    /// through.
    #[inline]
    fn trimmed(&mut self, end: u64) -> u64 {
        while self.busy.front().is_some_and(|&(_, e)| e + DRIFT < self.latest) {
            self.busy.pop_front();
        }
        end
    }

    /// When the link has sent everything placed so far.
    pub fn free_at(&self) -> u64 {
        self.busy.back().map_or(0, |&(_, end)| end)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn in_order_transfers_queue_back_to_back() {
        let mut l = Link::default();
        assert_eq!(l.send(0, 10), 10);
        assert_eq!(l.send(0, 10), 20);
        assert_eq!(l.send(5, 10), 30);
        assert_eq!(l.send(100, 10), 110);
        assert_eq!(l.free_at(), 110);
    }

    #[test]
    fn a_late_transfer_does_not_hold_earlier_ones() {
        let mut l = Link::default();
        // A transfer ready at 1000 is placed first (its agent ran ahead), then ones ready at 0 and 50.
        assert_eq!(l.send(1000, 10), 1010);
        assert_eq!(l.send(0, 10), 10);
        assert_eq!(l.send(50, 10), 60);
        // A transfer that does not fit the gap before 1000 takes what is left of it and goes on after.
        assert_eq!(l.send(995, 10), 1015);
        // Gaps fill exactly: [10, 50) holds four more of 10, the next one spills past the transfer at 50.
        for want in [20, 30, 40, 50] {
            assert_eq!(l.send(10, 10), want);
        }
        assert_eq!(l.send(10, 10), 70);
        // One long transfer takes every gap from its ready time on: 100 before the first, 150 after it.
        let mut m = Link::default();
        m.send(100, 10);
        m.send(300, 10);
        assert_eq!(m.send(0, 250), 260);
    }

    #[test]
    fn the_schedule_forgets_what_no_clock_can_reach_any_more() {
        let mut l = Link::default();
        for i in 0..100_000u64 {
            l.send(i * 1_000_000, 10);
        }
        // Intervals 1 µs apart, remembered for 50 µs.
        assert!(l.busy.len() <= (DRIFT / 1_000_000) as usize + 2, "{}", l.busy.len());
    }

    proptest::proptest! {
        /// Against the definition on a unit timeline: each transfer takes the free units from its ready
        /// time on until it has `ser` of them and ends after the last; the schedule stays sorted, with
        /// touching intervals merged.
        #[test]
        fn transfers_take_the_first_idle_time_from_their_ready_time(
            sends in proptest::collection::vec((0u64..300, 1u64..40), 1..60)
        ) {
            let mut link = Link::default();
            let mut taken = vec![false; 300 + 60 * 40];
            for (ready, ser) in sends {
                let (mut t, mut left) = (ready as usize, ser);
                while left > 0 {
                    if !taken[t] {
                        taken[t] = true;
                        left -= 1;
                    }
                    t += 1;
                }
                proptest::prop_assert_eq!(link.send(ready, ser), t as u64);
                let b: Vec<(u64, u64)> = link.busy.iter().copied().collect();
                proptest::prop_assert!(b.iter().all(|&(s, e)| s < e), "{:?}", b);
                proptest::prop_assert!(b.windows(2).all(|w| w[0].1 < w[1].0), "{:?}", b);
            }
        }
    }
}
