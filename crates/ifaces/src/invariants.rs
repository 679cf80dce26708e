//! The end-of-run invariants of DESIGN.md ("Invariants"), checked the same way by both engines: each
//! engine collects its counts and hands them here, and a failure names the invariant and the numbers.

use crate::arena::Arena;
use crate::nicmem::NicMem;

/// What an engine counted over a run, once the traffic has drained.
#[derive(Debug, Clone, Default)]
pub struct RunCounts {
    /// Packets the source offered to the NIC.
    pub offered: u64,
    /// Packets the NIC delivered to software.
    pub delivered: u64,
    /// Packets dropped, for any reason.
    pub dropped: u64,
    /// Packets still in the design's rings.
    pub queued: u64,
    /// Packets delivered twice, or after they were dropped.
    pub duplicates: u64,
    /// Packets delivered behind a later packet of their flow.
    pub out_of_order: u64,
    /// Whether the design promises per-flow order (`Design::PER_FLOW_ORDER`; COREC does not).
    pub ordered: bool,
    /// A few offending packets, for the message.
    pub examples: Vec<String>,
}

/// A violated invariant: which one, and the counts that break it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invariant '{invariant}' failed: {detail}")]
pub struct Violation {
    /// Which invariant: conservation, no-duplicate, per-flow-order, no-leak.
    pub invariant: &'static str,
    /// The numbers.
    pub detail: String,
}

fn violation(invariant: &'static str, detail: String) -> Result<(), Violation> {
    Err(Violation { invariant, detail })
}

impl RunCounts {
    /// Conservation with drop reasons, no duplicate delivery, and per-flow order where promised.
    /// Returns the names of the invariants that held.
    pub fn check(&self) -> Result<Vec<&'static str>, Violation> {
        if self.offered != self.delivered + self.dropped + self.queued {
            violation(
                "conservation",
                format!(
                    "offered {} != delivered {} + dropped {} + queued {}",
                    self.offered, self.delivered, self.dropped, self.queued
                ),
            )?;
        }
        if self.duplicates > 0 {
            violation(
                "no-duplicate",
                format!(
                    "{} packets were delivered more than once or after a drop (first: {})",
                    self.duplicates,
                    self.examples.join("; ")
                ),
            )?;
        }
        if self.ordered && self.out_of_order > 0 {
            violation(
                "per-flow-order",
                format!(
                    "{} packets were delivered behind a later packet of their flow (first: {})",
                    self.out_of_order,
                    self.examples.join("; ")
                ),
            )?;
        }
        Ok(vec!["conservation", "no-duplicate", if self.ordered { "per-flow-order" } else { "reordering reported" }])
    }
}

/// No leaked or double-freed buffer: after teardown every buffer of `arena` is back in the pool (and,
/// if the engine still holds the pool, `free` of them are on its free lists), and no transmit reference
/// to a NIC memory buffer is left.
pub fn check_buffers(arena: &Arena, free: Option<usize>, nicmem: Option<&NicMem>) -> Result<(), Violation> {
    let census = arena.census();
    let count = arena.count();
    if census[0] != count || free.is_some_and(|f| f != count as usize) {
        violation(
            "no-leak",
            format!(
                "{} of {count} buffers are back in the pool after teardown{} (held by cores {}, posted {}, \
                 in Tx {})",
                census[0],
                free.map_or(String::new(), |f| format!(", {f} on its free lists")),
                census[1],
                census[2],
                census[3]
            ),
        )?;
    }
    if let Some(refs) = nicmem.map(NicMem::references).filter(|&r| r > 0) {
        violation("no-leak", format!("{refs} transmit references to NIC memory buffers were never released"))?;
    }
    Ok(())
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use crate::BufLayout;

    #[test]
    fn each_broken_count_names_its_invariant() {
        let ok = RunCounts { offered: 10, delivered: 7, dropped: 2, queued: 1, ordered: true, ..RunCounts::default() };
        assert_eq!(ok.check().unwrap(), ["conservation", "no-duplicate", "per-flow-order"]);
        let lost = RunCounts { dropped: 1, ..ok.clone() };
        assert_eq!(lost.check().unwrap_err().invariant, "conservation");
        let twice = RunCounts { duplicates: 1, examples: vec!["seq 3".into()], ..ok.clone() };
        let e = twice.check().unwrap_err();
        assert_eq!(e.invariant, "no-duplicate");
        assert!(e.detail.contains("seq 3"), "{e}");
        let reordered = RunCounts { out_of_order: 2, ..ok.clone() };
        assert_eq!(reordered.check().unwrap_err().invariant, "per-flow-order");
        let unordered = RunCounts { ordered: false, ..reordered };
        assert_eq!(unordered.check().unwrap()[2], "reordering reported");
    }

    #[test]
    fn a_buffer_not_back_in_the_pool_is_a_leak() {
        let arena = Arena::new("t", 4, BufLayout::default()).unwrap();
        assert_eq!(check_buffers(&arena, Some(4), None), Ok(()));
        assert_eq!(check_buffers(&arena, Some(3), None).unwrap_err().invariant, "no-leak");
    }
}
