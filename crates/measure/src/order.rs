//! The delivery invariants every run checks at its end (DESIGN.md, "Invariants"): nothing is delivered
//! twice, and per-flow order is kept wherever the design promises it.
//!
//! Feed [`DeliveryChecker::deliver`] the (flow id, sequence number) of every packet handed to the app, in
//! delivery order; [`DeliveryChecker::check`] then fails with a [`Violation`] naming the broken invariant,
//! the counts, and the first few offending deliveries.
//!
//! Memory: one sequence number per flow, plus the last `window` deliveries (default
//! [`DEFAULT_WINDOW`]) for duplicate detection. A duplicate is always caught when its flow is ordered
//! and the copy follows the original directly; otherwise it is caught if the original is among the last
//! `window` deliveries. In an ordered flow, an older copy still fails the run, as an order violation.
//! Keys are hashed with FxHash (fast, not attack-resistant: flow ids and sequence numbers are ours).

use std::collections::VecDeque;
use std::fmt;

use rustc_hash::{FxHashMap, FxHashSet};
use serde::{Deserialize, Serialize};

/// Deliveries remembered for duplicate detection by default.
pub const DEFAULT_WINDOW: usize = 1 << 16;
/// Offending deliveries kept, per invariant, for the error message.
pub const MAX_EXAMPLES: usize = 5;

/// Checks delivered (flow, seq) pairs for duplicates and per-flow order, in bounded memory.
#[derive(Debug, Clone)]
pub struct DeliveryChecker {
    ordered: bool,
    window: usize,
    /// Last sequence number delivered, per flow.
    last: FxHashMap<u64, u64>,
    /// The last `window` deliveries, oldest first, and the same as a set.
    recent: VecDeque<(u64, u64)>,
    recent_set: FxHashSet<(u64, u64)>,
    delivered: u64,
    duplicates: u64,
    out_of_order: u64,
    duplicate_examples: Vec<Offence>,
    order_examples: Vec<Offence>,
}

/// One offending delivery.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Offence {
    /// Position of the delivery in the run, from 0.
    pub delivery: u64,
    /// Flow the packet belongs to.
    pub flow: u64,
    /// Its sequence number.
    pub seq: u64,
    /// The sequence number the flow delivered just before it.
    pub previous: u64,
}

/// A broken delivery invariant: what broke, how often, and the first few offending deliveries.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Violation {
    /// Packets delivered in the run (duplicates included).
    pub delivered: u64,
    /// Deliveries of a (flow, seq) already delivered.
    pub duplicates: u64,
    /// Deliveries with a sequence number below the one their flow delivered just before (duplicates
    /// excluded); a violation only when `order_promised`.
    pub out_of_order: u64,
    /// Whether the design promised per-flow order.
    pub order_promised: bool,
    /// The first duplicate deliveries, at most [`MAX_EXAMPLES`].
    pub duplicate_examples: Vec<Offence>,
    /// The first out-of-order deliveries, at most [`MAX_EXAMPLES`].
    pub order_examples: Vec<Offence>,
}

impl Default for DeliveryChecker {
    fn default() -> Self {
        Self::new(true)
    }
}

impl DeliveryChecker {
    /// A checker; `ordered` says whether the design promises per-flow order (COREC does not).
    pub fn new(ordered: bool) -> Self {
        Self::with_window(ordered, DEFAULT_WINDOW)
    }

    /// A checker remembering the last `window` deliveries (at least 1) for duplicate detection.
    pub fn with_window(ordered: bool, window: usize) -> Self {
        let window = window.max(1);
        DeliveryChecker {
            ordered,
            window,
            last: FxHashMap::default(),
            recent: VecDeque::new(),
            recent_set: FxHashSet::default(),
            delivered: 0,
            duplicates: 0,
            out_of_order: 0,
            duplicate_examples: Vec::new(),
            order_examples: Vec::new(),
        }
    }

    /// Record the delivery of packet `seq` of flow `flow`.
    pub fn deliver(&mut self, flow: u64, seq: u64) {
        let delivery = self.delivered;
        self.delivered += 1;
        let previous = self.last.insert(flow, seq);
        let offence = |previous| Offence { delivery, flow, seq, previous };
        if previous == Some(seq) || self.recent_set.contains(&(flow, seq)) {
            self.duplicates += 1;
            push_example(&mut self.duplicate_examples, offence(previous.unwrap_or(seq)));
            return;
        }
        if let Some(prev) = previous.filter(|&prev| seq < prev) {
            self.out_of_order += 1;
            push_example(&mut self.order_examples, offence(prev));
        }
        let evicted = if self.recent.len() == self.window { self.recent.pop_front() } else { None };
        if let Some(old) = evicted {
            self.recent_set.remove(&old);
        }
        self.recent.push_back((flow, seq));
        self.recent_set.insert((flow, seq));
    }

    /// Packets delivered so far (duplicates included).
    pub fn delivered(&self) -> u64 {
        self.delivered
    }

    /// Duplicate deliveries so far.
    pub fn duplicates(&self) -> u64 {
        self.duplicates
    }

    /// Deliveries below their flow's previous sequence number so far.
    pub fn out_of_order(&self) -> u64 {
        self.out_of_order
    }

    /// `Ok` when nothing was delivered twice and, if the design promises it, per-flow order was kept.
    pub fn check(&self) -> Result<(), Violation> {
        if self.duplicates == 0 && (!self.ordered || self.out_of_order == 0) {
            return Ok(());
        }
        Err(Violation {
            delivered: self.delivered,
            duplicates: self.duplicates,
            out_of_order: self.out_of_order,
            order_promised: self.ordered,
            duplicate_examples: self.duplicate_examples.clone(),
            order_examples: self.order_examples.clone(),
        })
    }
}

fn push_example(examples: &mut Vec<Offence>, offence: Offence) {
    if examples.len() < MAX_EXAMPLES {
        examples.push(offence);
    }
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut sep = "";
        if self.duplicates > 0 {
            write!(
                f,
                "invariant \"nothing is delivered twice\" broken: {} of {} deliveries were duplicates (first:",
                self.duplicates, self.delivered
            )?;
            for o in &self.duplicate_examples {
                write!(f, " flow {} seq {} again at delivery {};", o.flow, o.seq, o.delivery)?;
            }
            f.write_str(")")?;
            sep = "; ";
        }
        if self.order_promised && self.out_of_order > 0 {
            write!(
                f,
                "{sep}invariant \"per-flow order is kept\" broken: {} of {} deliveries came after a higher \
                 sequence number of their flow (first:",
                self.out_of_order, self.delivered
            )?;
            for o in &self.order_examples {
                write!(f, " flow {} seq {} after seq {} at delivery {};", o.flow, o.seq, o.previous, o.delivery)?;
            }
            f.write_str(")")?;
        }
        Ok(())
    }
}

impl std::error::Error for Violation {}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn checker(ordered: bool, window: usize, deliveries: &[(u64, u64)]) -> DeliveryChecker {
        let mut c = DeliveryChecker::with_window(ordered, window);
        deliveries.iter().for_each(|&(flow, seq)| c.deliver(flow, seq));
        c
    }

    #[test]
    fn interleaved_ordered_flows_pass() {
        let c = checker(true, 4, &[(1, 0), (2, 0), (1, 1), (2, 5), (1, 7), (2, 6)]);
        assert_eq!(c.check(), Ok(()));
        assert_eq!(c.delivered(), 6);
    }

    #[test]
    fn duplicate_is_reported_with_its_invariant() {
        let c = checker(true, 16, &[(1, 0), (1, 1), (2, 0), (1, 1)]);
        let v = c.check().unwrap_err();
        assert_eq!((v.duplicates, v.out_of_order), (1, 0));
        assert_eq!(v.duplicate_examples, vec![Offence { delivery: 3, flow: 1, seq: 1, previous: 1 }]);
        let msg = v.to_string();
        assert!(msg.contains("nothing is delivered twice") && msg.contains("flow 1 seq 1 again at delivery 3"));
        assert!(!msg.contains("per-flow order"), "{msg}");
    }

    #[test]
    fn order_violation_fails_only_when_order_is_promised() {
        let d = [(7, 1), (7, 3), (7, 2), (7, 4)];
        let v = checker(true, 16, &d).check().unwrap_err();
        assert_eq!((v.duplicates, v.out_of_order), (0, 1));
        assert_eq!(v.order_examples, vec![Offence { delivery: 2, flow: 7, seq: 2, previous: 3 }]);
        assert!(v.to_string().contains("invariant \"per-flow order is kept\" broken: 1 of 4"), "{v}");
        let unordered = checker(false, 16, &d);
        assert_eq!(unordered.check(), Ok(()));
        assert_eq!(unordered.out_of_order(), 1);
    }

    #[test]
    fn old_duplicate_in_an_ordered_flow_still_fails() {
        // Window of 1: the copy of seq 0 is no longer remembered, but it breaks order.
        let v = checker(true, 1, &[(1, 0), (1, 1), (1, 2), (1, 0)]).check().unwrap_err();
        assert_eq!((v.duplicates, v.out_of_order), (0, 1));
    }

    #[test]
    fn examples_are_capped() {
        let d: Vec<(u64, u64)> = (0..100).map(|_| (1, 0)).collect();
        let v = checker(true, 16, &d).check().unwrap_err();
        assert_eq!((v.duplicates, v.duplicate_examples.len()), (99, MAX_EXAMPLES));
    }

    proptest! {
        /// With a window covering the run, duplicates and order breaks equal a brute-force count.
        #[test]
        fn matches_brute_force(d in prop::collection::vec((0u64..4, 0u64..12), 0..64), ordered: bool) {
            let c = checker(ordered, 64, &d);
            let (mut dups, mut breaks) = (0, 0);
            for (i, &(flow, seq)) in d.iter().enumerate() {
                let before = &d[..i];
                if before.contains(&(flow, seq)) {
                    dups += 1;
                } else if before.iter().rev().find(|p| p.0 == flow).is_some_and(|p| seq < p.1) {
                    breaks += 1;
                }
            }
            prop_assert_eq!((c.duplicates(), c.out_of_order()), (dups, breaks));
            prop_assert_eq!(c.check().is_ok(), dups == 0 && (!ordered || breaks == 0));
        }
    }
}
