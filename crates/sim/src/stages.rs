//! Where a packet's latency goes: its time from the NIC's port to the wire, split at the four points where
//! the engine sees it pass. The papers explain their latencies by where packets wait (rxBisect §2: "each new
//! packet must wait for an entire ring's worth of packets to be processed"; §5: "each packet must wait
//! through two full Rx rings"; nicmem §3.3: PCIe "out operations are thus stalled and increase latency");
//! this shows rxlab's run the same way.
//!
//! - **NIC**: arrival at the port until its DMA lands in host memory (the port buffer's queue in front of
//!   a busy PCIe link, the descriptor fetch, the write itself);
//! - **Rx ring**: landed until a core's `rx_burst` takes it;
//! - **core**: taken until the app hands it to transmit (the batch's work before and after it, and any
//!   interruption of the core meanwhile);
//! - **Tx call**: handed until the doorbell of the transmit call that queued it (the call's own work and,
//!   with a blocking `ToDPDKDevice`, its spinning on a full ring);
//! - **Tx**: the doorbell until its last bit is on the wire (the ring's queue, the NIC's reads of
//!   descriptor and data, the port's queue and serialization).
//!
//! The marks live in a ring indexed by the generator's sequence number and tagged with it, so marking is
//! O(1) with no allocation per packet; a packet that outlives [`SLOTS`] later arrivals loses its marks to
//! a newer one and is left out (counted in [`LatencyStages::untracked`]).

use serde::Serialize;

/// Slots of the mark ring: more than the packets that arrive while one waits (2^19: 32 ms at 16 Mpps, beyond
/// two full sets of sixteen 4 Ki rings).
pub const SLOTS: usize = 1 << 19;

/// One packet's slot: its sequence number and the times (ps) it passed each [`Point`], each stored plus one
/// so that zero, the freshly allocated state, means "not yet" (the ring is allocated zeroed, and a short
/// run touches only the pages its packets use).
type Slot = [u64; 1 + Point::COUNT];

/// The points a packet passes between arrival and the wire.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Point {
    /// Its DMA landed in host memory.
    Landed = 0,
    /// A core's receive burst took it.
    Taken = 1,
    /// The app handed it to transmit.
    Handed = 2,
    /// The doorbell of the transmit call that queued it rang.
    Queued = 3,
}

impl Point {
    const COUNT: usize = 4;
}

/// Mean time per stage, ns, over the packets that arrived in the measurement window and left on the wire.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct LatencyStages {
    /// Arrival at the port to the DMA landing.
    pub nic_ns: f64,
    /// Landed to taken by a core.
    pub rx_ring_ns: f64,
    /// Taken to handed to transmit.
    pub core_ns: f64,
    /// Handed to the doorbell of the call that queued it (spinning on a full ring included).
    pub tx_call_ns: f64,
    /// Doorbell to the wire.
    pub tx_ns: f64,
    /// Packets these means cover.
    pub count: u64,
    /// Packets of the window that left without a full set of marks (they outlived the mark ring).
    pub untracked: u64,
}

/// The marks of packets in flight and the per-stage sums of those that left.
#[derive(Debug)]
pub struct StageClock {
    slots: Vec<Slot>,
    /// Sum of each stage's time, ps: NIC, Rx ring, core, Tx call, Tx.
    sums: [u128; Point::COUNT + 1],
    count: u64,
    untracked: u64,
}

impl Default for StageClock {
    fn default() -> Self {
        StageClock { slots: vec![[0; 1 + Point::COUNT]; SLOTS], sums: [0; Point::COUNT + 1], count: 0, untracked: 0 }
    }
}

impl StageClock {
    /// Packet `seq` passed `point` at `t_ps`. Landing claims the slot; a later point marks it only while
    /// the slot is still this packet's.
    #[inline]
    pub fn mark(&mut self, seq: u64, point: Point, t_ps: u64) {
        if seq == u64::MAX {
            return; // a frame without a stamp
        }
        let s = &mut self.slots[seq as usize & (SLOTS - 1)];
        if point == Point::Landed {
            *s = [0; 1 + Point::COUNT];
            s[0] = seq + 1;
        } else if s[0] != seq + 1 {
            return;
        }
        s[1 + point as usize] = t_ps + 1;
    }

    /// Packet `seq`, which arrived at `arrival_ps`, left on the wire at `wire_ps`: add its stages to the
    /// window's sums.
    #[inline]
    pub fn left(&mut self, seq: u64, arrival_ps: u64, wire_ps: u64) {
        let s = &self.slots[seq as usize & (SLOTS - 1)];
        if s[0] != seq.wrapping_add(1) || s[1..].contains(&0) {
            self.untracked += 1;
            return;
        }
        let mut from = arrival_ps;
        for (sum, to) in self.sums.iter_mut().zip(s[1..].iter().map(|t| t - 1).chain([wire_ps])) {
            *sum += u128::from(to.saturating_sub(from));
            from = from.max(to);
        }
        self.count += 1;
    }

    /// The window's mean per stage.
    pub fn report(&self) -> LatencyStages {
        let mean = |i: usize| if self.count == 0 { 0.0 } else { self.sums[i] as f64 / self.count as f64 / 1e3 };
        LatencyStages {
            nic_ns: mean(0),
            rx_ring_ns: mean(1),
            core_ns: mean(2),
            tx_call_ns: mean(3),
            tx_ns: mean(4),
            count: self.count,
            untracked: self.untracked,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stages_split_the_latency_and_sum_to_it() {
        let mut c = StageClock::default();
        c.mark(7, Point::Landed, 3_000);
        c.mark(7, Point::Taken, 10_000);
        c.mark(7, Point::Handed, 12_000);
        c.mark(7, Point::Queued, 12_000);
        c.left(7, 1_000, 20_000);
        let r = c.report();
        assert_eq!((r.nic_ns, r.rx_ring_ns, r.core_ns, r.tx_call_ns, r.tx_ns), (2.0, 7.0, 2.0, 0.0, 8.0));
        assert_eq!((r.count, r.untracked), (1, 0));
        let sum = r.nic_ns + r.rx_ring_ns + r.core_ns + r.tx_call_ns + r.tx_ns;
        assert_eq!(sum, 19.0, "the stages add up to arrival-to-wire");
    }

    #[test]
    fn a_packet_that_outlived_its_slot_or_skipped_a_point_is_left_out() {
        let mut c = StageClock::default();
        c.mark(1, Point::Landed, 0);
        c.mark(1 + SLOTS as u64, Point::Landed, 5);
        for p in [Point::Taken, Point::Handed, Point::Queued] {
            c.mark(1, p, 9);
        }
        c.left(1, 0, 10);
        c.mark(2, Point::Landed, 0);
        c.mark(2, Point::Taken, 1);
        c.left(2, 0, 10);
        let r = c.report();
        assert_eq!((r.count, r.untracked, r.nic_ns), (0, 2, 0.0));
    }
}
