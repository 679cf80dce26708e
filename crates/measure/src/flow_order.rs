//! Reordering within flows: RFC 4737's reordered-packet test (§3.3: a packet is reordered if its
//! sequence number is below NextExp, the highest received so far + 1) applied to each flow's own
//! stream, which is the order TCP and the applications above it see.
//!
//! The whole-stream metric of [`crate::reorder`] also counts packets of different flows that overtake
//! each other, say on two cores' queues; with RSS spreading flows over cores that is most packets and
//! harmless. A design that lets several cores serve one queue (COREC, paper 003 §4.3) can also reorder
//! packets of one flow, which this counts and the whole-stream metric cannot single out.
//!
//! Sequence numbers may be global (shared by all flows): the test only compares numbers of one flow, so
//! any numbering that increases within each flow in sending order gives the same result as per-flow
//! numbering. The caller filters duplicates. One `u64` per flow; each packet is an array lookup.

use serde::{Deserialize, Serialize};

/// The highest sequence number of a flow that has delivered nothing yet.
const NONE: u64 = u64::MAX;

/// Per-flow RFC 4737 reordered-packet counts over dense flow numbers.
#[derive(Debug, Clone)]
pub struct FlowOrder {
    /// Per flow, the highest sequence number received (NextExp - 1), or [`NONE`].
    highest: Vec<u64>,
    received: u64,
    reordered: u64,
}

/// The per-flow reordering of one run.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct FlowOrderReport {
    /// Packets received.
    pub received: u64,
    /// Packets received behind a later packet of their own flow (§3.3 within the flow).
    pub reordered: u64,
    /// `reordered / received` (§4.1 within flows); 0 when nothing was received.
    pub ratio: f64,
}

impl FlowOrderReport {
    /// The counts of two independent sets of flows (e.g. two NIC ports') taken together.
    pub fn merge(&mut self, o: &FlowOrderReport) {
        self.received += o.received;
        self.reordered += o.reordered;
        self.ratio = if self.received > 0 { self.reordered as f64 / self.received as f64 } else { 0.0 };
    }
}

impl FlowOrder {
    /// A tracker for flows numbered `0..flows` (more are added as they appear).
    pub fn new(flows: usize) -> FlowOrder {
        FlowOrder { highest: vec![NONE; flows], received: 0, reordered: 0 }
    }

    /// Packet `seq` of `flow` arrived. If it is reordered, returns the later sequence number of its flow
    /// that arrived before it.
    #[inline]
    pub fn record(&mut self, flow: u32, seq: u64) -> Option<u64> {
        let f = flow as usize;
        if f >= self.highest.len() {
            self.highest.resize(f + 1, NONE);
        }
        self.received += 1;
        let highest = &mut self.highest[f];
        if *highest != NONE && seq < *highest {
            self.reordered += 1;
            return Some(*highest);
        }
        *highest = seq;
        None
    }

    /// Packets counted as reordered so far.
    pub fn reordered(&self) -> u64 {
        self.reordered
    }

    /// The counts so far.
    pub fn report(&self) -> FlowOrderReport {
        let ratio = if self.received > 0 { self.reordered as f64 / self.received as f64 } else { 0.0 };
        FlowOrderReport { received: self.received, reordered: self.reordered, ratio }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn flows_overtaking_each_other_are_not_reordering() {
        let mut o = FlowOrder::new(2);
        for (flow, seq) in [(1, 1), (0, 0), (1, 3), (0, 2)] {
            assert_eq!(o.record(flow, seq), None);
        }
        assert_eq!(o.report(), FlowOrderReport { received: 4, reordered: 0, ratio: 0.0 });
    }

    #[test]
    fn a_packet_behind_a_later_one_of_its_flow_is_reordered_once() {
        let mut o = FlowOrder::new(1);
        assert_eq!(o.record(0, 5), None);
        assert_eq!(o.record(0, 3), Some(5));
        assert_eq!(o.record(0, 4), Some(5), "NextExp stays 6: 4 is still late");
        assert_eq!(o.record(0, 6), None);
        assert_eq!(o.record(3, 0), None, "a flow beyond the first ones is added");
        assert_eq!(o.report(), FlowOrderReport { received: 5, reordered: 2, ratio: 0.4 });
    }

    proptest! {
        /// Per flow, the count equals the whole-stream RFC 4737 count of that flow's own subsequence,
        /// numbered 0, 1, 2, ... in sending order.
        #[test]
        fn equals_rfc4737_on_each_flows_own_stream(
            flows in proptest::collection::vec(0u32..4, 1..200),
            swaps in proptest::collection::vec((0usize..200, 0usize..200), 0..60),
        ) {
            // Sending order: packet i of flow flows[i], global sequence number i.
            let mut arrivals: Vec<(u32, u64)> = flows.iter().enumerate().map(|(i, &f)| (f, i as u64)).collect();
            let n = arrivals.len();
            for (a, b) in swaps {
                arrivals.swap(a % n, b % n);
            }
            let mut o = FlowOrder::new(0);
            for &(f, s) in &arrivals {
                o.record(f, s);
            }
            let mut expected = 0;
            for f in 0..4 {
                let own: Vec<u64> = flows.iter().enumerate().filter(|&(_, &g)| g == f).map(|(i, _)| i as u64).collect();
                let mut t = crate::ReorderTracker::default();
                for &(g, s) in &arrivals {
                    if g == f {
                        t.record(own.binary_search(&s).unwrap() as u64);
                    }
                }
                expected += t.report().reordered;
            }
            prop_assert_eq!(o.report().reordered, expected);
            prop_assert_eq!(o.report().received, n as u64);
        }
    }
}
