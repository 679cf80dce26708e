//! The delivery invariants (DESIGN.md, "Invariants") checked as the cores receive: nothing is delivered
//! twice, nothing dropped is delivered, and per-flow order is kept where the design promises it.
//!
//! The simulator's sequence numbers are dense (the generator numbers every packet from 0), so this is
//! cheaper than hashing (flow, sequence) pairs: one bit per packet says it is resolved (delivered
//! or dropped) and one `u32` per packet names its flow, both kept only from the oldest unresolved packet
//! on (whole 64-packet words are released as they resolve), in rings that double when they must, plus
//! the last delivered sequence number per flow ([`measure::FlowOrder`]).
//!
//! [`WireOrder`] checks per-flow order again where the papers' receivers do (COREC §4.3): on the wire,
//! after the app. It is a measurement, not an invariant: a design whose cores share a queue may reorder
//! a flow between delivery and transmission.

use measure::{FlowOrder, FlowOrderReport};

/// Offending deliveries kept for the error message.
const EXAMPLES: usize = 5;
/// Packets the rings hold at first (they double when more are unresolved at once).
const FIRST_CAPACITY: usize = 1 << 12;

/// Duplicate and per-flow order checks over dense sequence numbers.
#[derive(Debug, Clone)]
pub struct DeliveryCheck {
    ordered: bool,
    /// Sequence number of the oldest packet kept; a multiple of 64.
    base: u64,
    /// Packets kept: sequence numbers `base..base + len` (offered, the oldest unresolved among the
    /// first 64).
    len: u64,
    /// Ring of resolved bits, 64 packets a word: packet `s`'s bit is bit `s % 64` of word
    /// `(s / 64) % resolved.len()`. Words of released packets are zero.
    resolved: Vec<u64>,
    /// Ring of the kept packets' flows: packet `s`'s at `s % flows.len()` (`64 * resolved.len()`, a
    /// power of two).
    flows: Vec<u32>,
    /// Per-flow order of deliveries (kept only when the design promises it).
    order: FlowOrder,
    /// Deliveries of a packet already delivered or dropped (or never offered).
    pub duplicates: u64,
    /// The first offences, for the error message.
    pub examples: Vec<String>,
}

impl DeliveryCheck {
    /// A checker for `flows` flows; `ordered` says whether the design promises per-flow order.
    pub fn new(flows: usize, ordered: bool) -> DeliveryCheck {
        DeliveryCheck {
            ordered,
            base: 0,
            len: 0,
            resolved: vec![0; FIRST_CAPACITY / 64],
            flows: vec![0; FIRST_CAPACITY],
            order: FlowOrder::new(flows),
            duplicates: 0,
            examples: Vec::new(),
        }
    }

    /// Packet `seq` of `flow` arrived at the NIC (sequence numbers come in order, from 0).
    #[inline]
    pub fn offered(&mut self, seq: u64, flow: u32) {
        debug_assert_eq!(seq, self.base + self.len, "dense sequence numbers");
        if self.len == self.flows.len() as u64 {
            self.grow();
        }
        let mask = self.flows.len() - 1;
        self.flows[seq as usize & mask] = flow;
        self.len += 1;
    }

    /// Double the rings, moving every kept packet to its place in the larger ones.
    #[cold]
    fn grow(&mut self) {
        let (flows, words) = (self.flows.len() * 2, self.resolved.len() * 2);
        let mut f = vec![0; flows];
        let mut r = vec![0; words];
        for s in self.base..self.base + self.len {
            f[s as usize & (flows - 1)] = self.flows[s as usize & (self.flows.len() - 1)];
        }
        for w in self.base / 64..(self.base + self.len).div_ceil(64) {
            r[w as usize & (words - 1)] = self.resolved[w as usize & (self.resolved.len() - 1)];
        }
        self.flows = f;
        self.resolved = r;
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
        if let Some(before) = self.order.record(flow, seq) {
            self.offence(format!("flow {flow}: seq {seq} delivered after {before}"));
        }
    }

    /// Deliveries behind a later packet of the same flow (counted only when order is promised).
    pub fn out_of_order(&self) -> u64 {
        self.order.reordered()
    }

    /// Mark `seq` resolved; its flow, or `None` if it was already resolved or never offered.
    #[inline]
    fn resolve(&mut self, seq: u64) -> Option<u32> {
        if seq.checked_sub(self.base)? >= self.len {
            return None;
        }
        let flow = self.flows[seq as usize & (self.flows.len() - 1)];
        let wmask = self.resolved.len() - 1;
        let (word, bit) = ((seq / 64) as usize & wmask, 1u64 << (seq % 64));
        let w = &mut self.resolved[word];
        if *w & bit != 0 {
            return None;
        }
        *w |= bit;
        // Release whole words of resolved packets from the front (a full word's 64 were all offered).
        loop {
            let front = &mut self.resolved[(self.base / 64) as usize & wmask];
            if *front != u64::MAX {
                break;
            }
            *front = 0;
            self.base += 64;
            self.len -= 64;
        }
        Some(flow)
    }

    fn offence(&mut self, s: String) {
        if self.examples.len() < EXAMPLES {
            self.examples.push(s);
        }
    }
}

/// log2 of the packets in flight whose flow [`WireOrder`] remembers: about 8 times what the papers' largest
/// setups hold at once (16 cores x 4 Ki-entry rings and Tx rings, plus the NIC's buffer). A packet sent
/// more than 2^20 arrivals after its own is not checked (the report shows it as sent but not checked).
const IN_FLIGHT_BITS: u32 = 20;

/// RFC 4737 reordering within each flow of the packets sent back out ([`measure::flow_order`]).
///
/// Apps may rewrite headers (NAT), so the flow of a transmitted packet is looked up by its sequence
/// number, in a ring that remembers the flow of the last 2^20 packets offered.
#[derive(Debug, Clone)]
pub struct WireOrder {
    /// Packet `s`'s entry at `s % len`: `(s >> IN_FLIGHT_BITS) + 1` in the high half, its flow in the low
    /// half; 0 for none.
    flows: Vec<u64>,
    order: FlowOrder,
}

impl WireOrder {
    /// A checker for `flows` flows.
    pub fn new(flows: usize) -> WireOrder {
        WireOrder { flows: vec![0; 1 << IN_FLIGHT_BITS], order: FlowOrder::new(flows) }
    }

    #[inline(always)]
    fn tag(seq: u64) -> u64 {
        ((seq >> IN_FLIGHT_BITS) + 1) << 32
    }

    /// Packet `seq` of `flow` arrived at the NIC.
    #[inline]
    pub fn offered(&mut self, seq: u64, flow: u32) {
        let mask = self.flows.len() - 1;
        self.flows[seq as usize & mask] = Self::tag(seq) | u64::from(flow);
    }

    /// Packet `seq` left on the wire; checked if its flow is still known.
    #[inline]
    pub fn sent(&mut self, seq: u64) {
        let e = self.flows[seq as usize & (self.flows.len() - 1)];
        if e >> 32 == Self::tag(seq) >> 32 {
            self.order.record(e as u32, seq);
        }
    }

    /// The counts so far (`received` counts the packets checked).
    pub fn report(&self) -> FlowOrderReport {
        self.order.report()
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
        assert_eq!((c.base, c.len), (128, 72));
        c.delivered(5);
        c.dropped(131);
        c.delivered(131);
        assert_eq!(c.duplicates, 2);
        // Flow 0 delivers 134 then 132: out of order.
        c.delivered(134);
        c.delivered(132);
        assert_eq!(c.out_of_order(), 1);
        assert_eq!(c.examples.len(), 3);
        let mut u = DeliveryCheck::new(2, false);
        (0..4).for_each(|s| u.offered(s, 0));
        u.delivered(2);
        u.delivered(0);
        assert_eq!((u.out_of_order(), u.duplicates), (0, 0));
    }

    #[test]
    fn wire_order_counts_within_flows_and_skips_packets_it_forgot() {
        let mut w = WireOrder::new(2);
        let far = 1 << IN_FLIGHT_BITS;
        (0..4).for_each(|s| w.offered(s, (s % 2) as u32));
        // Flow 1's 3 overtakes its 1; flow 0's packets overtake flow 1's, which is not counted.
        [0, 3, 2, 1].into_iter().for_each(|s| w.sent(s));
        w.offered(far + 1, 1);
        w.sent(far + 1);
        let r = w.report();
        assert_eq!((r.received, r.reordered), (5, 1));
        w.sent(far);
        w.sent(1);
        assert_eq!(w.report().received, 5, "far was never offered; 1's entry was reused: neither is checked");
    }

    /// Packets left unresolved for long make the rings grow; what is kept is still exact.
    #[test]
    fn rings_grow_past_a_long_unresolved_packet() {
        let mut c = DeliveryCheck::new(3, true);
        let n = 5 * FIRST_CAPACITY as u64 + 17;
        for s in 0..n {
            c.offered(s, (s % 3) as u32);
            // Packet 70 stays unresolved until the end; the rest resolve a few packets late.
            if s >= 4 && s - 4 != 70 {
                if (s - 4) % 5 == 0 { c.dropped(s - 4) } else { c.delivered(s - 4) }
            }
        }
        assert_eq!((c.base, c.flows.len()), (64, 8 * FIRST_CAPACITY));
        c.dropped(70);
        (n - 4..n).for_each(|s| c.delivered(s));
        assert_eq!((c.duplicates, c.out_of_order(), c.len), (0, 0, n % 64));
        c.delivered(70);
        c.delivered(n - 1);
        c.delivered(n);
        assert_eq!(c.duplicates, 3);
        assert_eq!(c.examples.len(), 3);
    }
}
