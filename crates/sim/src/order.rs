//! The delivery invariants (DESIGN.md, "Invariants") checked as the cores receive: nothing is delivered
//! twice, nothing dropped is delivered, and per-flow order is kept where the design promises it.
//!
//! The simulator's sequence numbers are dense (the generator numbers every packet from 0), so this is
//! cheaper than `measure::DeliveryChecker`'s hashing: one bit per packet says it is resolved (delivered
//! or dropped) and one `u32` per packet names its flow, both kept only from the oldest unresolved packet
//! on (whole 64-packet words are released as they resolve), plus the last delivered sequence number per
//! flow.

use std::collections::VecDeque;

/// `last` of a flow that has delivered nothing yet.
const NONE: u64 = u64::MAX;
/// Offending deliveries kept for the error message.
const EXAMPLES: usize = 5;

/// Duplicate and per-flow order checks over dense sequence numbers.
#[derive(Debug, Clone)]
pub struct DeliveryCheck {
    ordered: bool,
    /// Sequence number of bit 0 of `resolved[0]` and of `flows[0]`; a multiple of 64.
    base: u64,
    resolved: VecDeque<u64>,
    flows: VecDeque<u32>,
    last: Vec<u64>,
    /// Deliveries of a packet already delivered or dropped (or never offered).
    pub duplicates: u64,
    /// Deliveries behind a later packet of the same flow (counted only when order is promised).
    pub out_of_order: u64,
    /// The first offences, for the error message.
    pub examples: Vec<String>,
}

impl DeliveryCheck {
    /// A checker for `flows` flows; `ordered` says whether the design promises per-flow order.
    pub fn new(flows: usize, ordered: bool) -> DeliveryCheck {
        DeliveryCheck {
            ordered,
            base: 0,
            resolved: VecDeque::new(),
            flows: VecDeque::new(),
            last: vec![NONE; flows.max(1)],
            duplicates: 0,
            out_of_order: 0,
            examples: Vec::new(),
        }
    }

    /// Packet `seq` of `flow` arrived at the NIC (sequence numbers come in order, from 0).
    #[inline]
    pub fn offered(&mut self, seq: u64, flow: u32) {
        debug_assert_eq!(seq, self.base + self.flows.len() as u64, "dense sequence numbers");
        if self.flows.len().is_multiple_of(64) {
            self.resolved.push_back(0);
        }
        self.flows.push_back(flow);
    }

    /// Packet `seq` was dropped.
    #[inline]
    pub fn dropped(&mut self, seq: u64) {
        if self.resolve(seq).is_none() {
            self.offence(format!("seq {seq} dropped after it was resolved"));
        }
    }

    /// Packet `seq` was handed to software.
    #[inline]
    pub fn delivered(&mut self, seq: u64) {
        let Some(flow) = self.resolve(seq) else {
            self.duplicates += 1;
            self.offence(format!("seq {seq} delivered twice, or after it was dropped"));
            return;
        };
        if !self.ordered {
            return;
        }
        let n = self.last.len();
        let last = &mut self.last[flow as usize % n];
        if *last != NONE && seq < *last {
            let before = *last;
            self.out_of_order += 1;
            self.offence(format!("flow {flow}: seq {seq} delivered after {before}"));
        } else {
            *last = seq;
        }
    }

    /// Mark `seq` resolved; its flow, or `None` if it was already resolved or never offered.
    #[inline]
    fn resolve(&mut self, seq: u64) -> Option<u32> {
        let i = usize::try_from(seq.checked_sub(self.base)?).ok()?;
        let flow = *self.flows.get(i)?;
        let (word, bit) = (i / 64, 1u64 << (i % 64));
        let w = &mut self.resolved[word];
        if *w & bit != 0 {
            return None;
        }
        *w |= bit;
        while self.resolved.front() == Some(&u64::MAX) {
            self.resolved.pop_front();
            self.flows.drain(..64);
            self.base += 64;
        }
        Some(flow)
    }

    fn offence(&mut self, s: String) {
        if self.examples.len() < EXAMPLES {
            self.examples.push(s);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn duplicates_order_and_release_of_resolved_words() {
        let mut c = DeliveryCheck::new(2, true);
        for s in 0..200 {
            c.offered(s, (s % 2) as u32);
        }
        for s in 0..130 {
            c.delivered(s);
        }
        assert_eq!((c.base, c.flows.len()), (128, 72));
        c.delivered(5);
        c.dropped(131);
        c.delivered(131);
        assert_eq!(c.duplicates, 2);
        // Flow 0 delivers 134 then 132: out of order.
        c.delivered(134);
        c.delivered(132);
        assert_eq!(c.out_of_order, 1);
        assert_eq!(c.examples.len(), 3);
        let mut u = DeliveryCheck::new(2, false);
        (0..4).for_each(|s| u.offered(s, 0));
        u.delivered(2);
        u.delivered(0);
        assert_eq!((u.out_of_order, u.duplicates), (0, 0));
    }
}
