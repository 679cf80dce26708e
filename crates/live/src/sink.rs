//! The receive end of transmitted packets: what the load generator's receive port measures (latency from
//! the stamp, throughput, reordering) plus the delivery invariants (DESIGN.md).
//!
//! Runs on the NIC thread for every packet a design transmits, so it is built for speed: flows and
//! sequence numbers are dense (they index the pre-built frames), so duplicates are a bitmap lookup (over
//! the last 2^24 numbers, [`SeenWindow`]) and per-flow order a vector lookup, with no hashing.

use measure::{FlowOrder, LatencyHistogram, ReorderTracker, Seen, SeenWindow};
use wire::Stamp;

/// Received packets' measurements.
#[derive(Debug)]
pub struct Sink {
    window: (u64, u64),
    flow_of: Vec<u32>,
    /// Where the sent frames' L4 payload starts, when all of them agree ([`Stamp::in_frame`]).
    payload_at: Option<usize>,
    /// Latency of packets sent inside the measurement window, ns.
    pub latency: LatencyHistogram,
    /// RFC 4737 reordering over the whole run, by global sequence number.
    pub reorder: ReorderTracker,
    /// RFC 4737 reordering within each flow; a design that promises per-flow order must keep it at 0.
    pub flow_order: FlowOrder,
    seen: SeenWindow,
    /// Packets delivered after more than [`measure::seen::SEEN_WINDOW`] newer ones: too late to tell
    /// whether they were duplicates.
    pub too_late: u64,
    /// Packets received over the whole run.
    pub received: u64,
    /// Packets sent inside the window and received.
    pub window_packets: u64,
    /// Their bytes (FCS excluded).
    pub window_bytes: u64,
    /// Packets without a readable stamp (not timed, not order-checked).
    pub untimed: u64,
    /// Sequence numbers received twice.
    pub duplicates: u64,
    /// First duplicate or out-of-order sequence numbers, for the error message.
    pub examples: Vec<String>,
}

/// Sequence numbers the reordering tracker remembers for extents (RFC 4737 §4.2).
const REORDER_WINDOW: usize = 1 << 12;

impl Sink {
    /// A sink for packets whose sequence number `s` belongs to flow `flow_of[s % flow_of.len()]` and
    /// whose send times in `[window.0, window.1)` ns are measured.
    pub fn new(flow_of: Vec<u32>, flows: usize, window: (u64, u64), payload_at: Option<usize>) -> Sink {
        Sink {
            payload_at,
            window,
            flow_of,
            latency: LatencyHistogram::new(),
            reorder: ReorderTracker::new(REORDER_WINDOW),
            flow_order: FlowOrder::new(flows),
            seen: SeenWindow::new(),
            too_late: 0,
            received: 0,
            window_packets: 0,
            window_bytes: 0,
            untimed: 0,
            duplicates: 0,
            examples: Vec::new(),
        }
    }

    /// Account one transmitted frame seen at `now_ns`, when `offered` packets have been sent so far (a
    /// stamp with a later sequence number is not one of ours).
    #[inline]
    pub fn on_frame(&mut self, frame: &[u8], now_ns: u64, offered: u64) {
        self.received += 1;
        let stamp = Stamp::in_frame(frame, self.payload_at);
        let Some(stamp) = stamp.filter(|s| s.seq < offered) else {
            self.untimed += 1;
            return;
        };
        match self.seen.insert(stamp.seq) {
            Seen::New => {}
            Seen::Again => {
                self.duplicates += 1;
                return self.example(format!("seq {} delivered twice", stamp.seq));
            }
            Seen::TooLate => {
                self.too_late += 1;
                let window = measure::seen::SEEN_WINDOW.ilog2();
                return self.example(format!("seq {} delivered after 2^{window} newer packets", stamp.seq));
            }
        }
        let flow = self.flow_of.get((stamp.seq % self.flow_of.len().max(1) as u64) as usize).copied().unwrap_or(0);
        if let Some(later) = self.flow_order.record(flow, stamp.seq) {
            self.example(format!("flow {flow}: seq {} after {later}", stamp.seq));
        }
        self.reorder.record(stamp.seq);
        if (self.window.0..self.window.1).contains(&stamp.tx_ns) {
            self.window_packets += 1;
            self.window_bytes += frame.len() as u64;
            self.latency.record(now_ns.saturating_sub(stamp.tx_ns));
        }
    }

    fn example(&mut self, s: String) {
        if self.examples.len() < 5 {
            self.examples.push(s);
        }
    }
}
