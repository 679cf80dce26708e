//! The NIC's own timing: the receive pipeline with its on-NIC buffer, the transmit engine's schedule,
//! and the Ethernet ports. What the NIC does to memory is the design's device side, run through the
//! probe; this module decides when it runs.
//!
//! Receive: packets wait in the on-NIC buffer in arrival order; the pipeline takes one every
//! 1/rate and starts its DMA, and it cannot start the next before the link has taken the previous
//! packet's writes. A packet arriving to a full buffer is dropped (`nic_buffer_full`). Its DMA lands (and
//! the design's `rx` runs, making it visible to software) one write serialization and one posted-write
//! latency after the DMA starts.
//!
//! Transmit: a doorbell wakes the engine when it reaches the NIC; each run sends up to one descriptor
//! fetch's worth of packets and reschedules itself while software has more queued. A packet leaves on
//! the wire once its data read completed and the ports are free (the ports are modelled as one link of
//! their summed speed).

use crate::profile::Profile;
use std::collections::VecDeque;
use wire::frame::wire_bits;

/// Descriptor streams the prefetcher follows at once: more than the rings of a 16-core run of any
/// design (an Rx and a Tx ring per core, rxBisect's Ax rings).
const STREAMS: usize = 64;

/// The NIC's contiguous descriptor prefetcher, as far as timing goes: a fetch that starts where an
/// earlier fetch ended continues a stream (the next descriptors of a ring) that the NIC read ahead of
/// need. Fully associative over host addresses with first-in-first-out replacement, so its behaviour
/// depends only on the order of fetches, never on where the host put the rings.
#[derive(Debug, Clone)]
pub struct Streams {
    ends: [usize; STREAMS],
    next: usize,
}

impl Default for Streams {
    fn default() -> Self {
        Streams { ends: [usize::MAX; STREAMS], next: 0 }
    }
}

impl Streams {
    /// A fetch of host bytes `[start, end)`: whether it continues a stream. Its end becomes that
    /// stream's end, or a new stream's.
    #[inline]
    pub fn continues(&mut self, start: usize, end: usize) -> bool {
        if let Some(e) = self.ends.iter_mut().find(|e| **e == start) {
            *e = end;
            return true;
        }
        self.ends[self.next] = end;
        self.next = (self.next + 1) % STREAMS;
        false
    }
}

/// NIC timing state.
#[derive(Debug, Clone)]
pub struct Nic {
    /// Pipeline time per packet, ps.
    pub pkt_ps: u64,
    buffer: usize,
    backlog: VecDeque<(u64, u32)>,
    backlog_bytes: usize,
    /// When the receive pipeline can start the next packet.
    pub rx_free: u64,
    /// When the transmit engine can run again.
    pub tx_free: u64,
    /// Time of the scheduled transmit run, if any (a run scheduled earlier replaces it).
    pub tx_wake: Option<u64>,
    /// Packets one transmit run may send.
    pub tx_batch: usize,
    wire_free: u64,
    wire_ps_per_bit: f64,
}

impl Nic {
    /// The NIC of `p`.
    pub fn new(p: &Profile) -> Nic {
        Nic {
            pkt_ps: (1e6 / p.nic.mpps) as u64,
            buffer: p.nic.rx_buffer,
            backlog: VecDeque::new(),
            backlog_bytes: 0,
            rx_free: 0,
            tx_free: 0,
            tx_wake: None,
            tx_batch: p.nic.prefetch.max(1) as usize,
            wire_free: 0,
            wire_ps_per_bit: 1000.0 / (p.nic.port_gbps * f64::from(p.nic.ports)),
        }
    }

    /// A packet of `len` bytes arrives at `arrival`: `Some(start)` of its DMA-ready time in the
    /// pipeline, or `None` if the on-NIC buffer is full.
    #[inline]
    pub fn admit(&mut self, arrival: u64, len: usize) -> Option<u64> {
        while let Some(&(start, l)) = self.backlog.front() {
            if start > arrival {
                break;
            }
            self.backlog.pop_front();
            self.backlog_bytes -= l as usize;
        }
        if self.backlog_bytes + len > self.buffer {
            return None;
        }
        let start = arrival.max(self.rx_free) + self.pkt_ps;
        self.backlog.push_back((start, len as u32));
        self.backlog_bytes += len;
        // Until the DMA of this packet has run, the pipeline is busy at least until `start`.
        self.rx_free = start;
        Some(start)
    }

    /// The receive DMA that started at `start` finished issuing its writes at `end`.
    #[inline]
    pub fn finish_rx(&mut self, end: u64) {
        self.rx_free = self.rx_free.max(end);
    }

    /// A frame of `frame_len` bytes (FCS included) whose data is at the NIC at `ready` goes out;
    /// returns when its last bit leaves.
    #[inline]
    pub fn wire_out(&mut self, ready: u64, frame_len: usize) -> u64 {
        let start = ready.max(self.wire_free);
        self.wire_free = start + (wire_bits(frame_len) as f64 * self.wire_ps_per_bit) as u64;
        self.wire_free
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buffer_overflow_drops_and_the_pipeline_paces() {
        let mut p = Profile::r640_silver4216();
        p.nic.rx_buffer = 3000;
        p.nic.mpps = 1.0;
        let mut n = Nic::new(&p);
        assert_eq!(n.admit(0, 1500), Some(1_000_000));
        assert_eq!(n.admit(0, 1500), Some(2_000_000));
        assert_eq!(n.admit(0, 1500), None);
        // The first packet has left the buffer by 1 µs.
        assert_eq!(n.admit(1_000_000, 1500), Some(3_000_000));
        n.finish_rx(5_000_000);
        assert_eq!(n.admit(5_000_000, 64), Some(6_000_000));
    }

    #[test]
    fn contiguous_reads_continue_a_stream_and_jumps_do_not() {
        let mut s = Streams::default();
        assert!(!s.continues(1600, 1728));
        assert!(s.continues(1728, 1856));
        assert!(!s.continues(0, 128));
        assert!(s.continues(1856, 1872));
        assert!(s.continues(128, 256));
    }

    #[test]
    fn wire_serializes_at_port_speed() {
        let p = Profile::r640_silver4216();
        let mut n = Nic::new(&p);
        // 1518 B frames on 2 x 100 Gbps: 1538 * 8 bits / 200 Gbps = 61.52 ns each.
        assert_eq!(n.wire_out(0, 1518), 61_520);
        assert_eq!(n.wire_out(0, 1518), 123_040);
    }
}
