//! The NIC's own timing: the receive pipeline with its on-NIC buffer, the transmit engine's schedule,
//! and the Ethernet ports. What the NIC does to memory is the design's device side, run through the
//! probe; this module decides when it runs.
//!
//! Receive: packets wait in the on-NIC buffer in arrival order. Two stages follow, overlapped as in any
//! pipelined NIC: the packet pipeline takes one packet every 1/rate (the profile's Mpps, a datasheet's
//! per-direction packet rate), and the DMA stage starts a packet's writes once the pipeline is done
//! with it and the link has taken the previous packet's writes. A packet arriving to a full buffer is
//! dropped (`nic_buffer_full`). Its DMA lands (and the design's `rx` runs, making it visible to
//! software) one write serialization and one posted-write latency after the DMA starts.
//!
//! Transmit: a doorbell wakes the engine when it reaches the NIC; each run sends up to one descriptor
//! fetch's worth of packets and reschedules itself while software has more queued. A packet leaves on
//! the wire once its data read completed and the ports are free (the ports are modelled as one link of
//! their summed speed).

use crate::link::Link;
use crate::profile::Profile;
use std::collections::VecDeque;
use wire::frame::wire_bits;

/// NIC timing state.
#[derive(Debug, Clone)]
pub struct Nic {
    /// Pipeline time per packet, ps.
    pub pkt_ps: u64,
    buffer: usize,
    backlog: VecDeque<(u64, u32)>,
    backlog_bytes: usize,
    /// When the receive pipeline can take the next packet.
    pipe_free: u64,
    /// When the receive DMA stage can start the next packet's writes.
    dma_free: u64,
    /// How long the packet admitted last waited for the DMA stage after the pipeline, ps.
    dma_wait: u64,
    /// When the transmit engine can run again.
    pub tx_free: u64,
    /// Time of the scheduled transmit run, if any (a run scheduled earlier replaces it).
    pub tx_wake: Option<u64>,
    /// Packets one transmit run may send.
    pub tx_batch: usize,
    wire: Link,
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
            pipe_free: 0,
            dma_free: 0,
            dma_wait: 0,
            tx_free: 0,
            tx_wake: None,
            tx_batch: p.nic.prefetch.max(1) as usize,
            wire: Link::default(),
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
        self.pipe_free = arrival.max(self.pipe_free) + self.pkt_ps;
        let start = self.pipe_free.max(self.dma_free);
        self.dma_wait = start - self.pipe_free;
        // The packet holds its buffer space until its DMA starts.
        self.backlog.push_back((start, len as u32));
        self.backlog_bytes += len;
        self.dma_free = start;
        Some(start)
    }

    /// How long the packet admitted last waited for the DMA stage, ps: the stage was still busy with
    /// earlier packets' PCIe traffic (the link taking their writes, or a descriptor fetch's round trip),
    /// so a write the NIC queues now waits about as long: PCIe back pressure.
    #[inline]
    pub fn dma_wait(&self) -> u64 {
        self.dma_wait
    }

    /// The receive DMA admitted last finished issuing its writes at `end`.
    #[inline]
    pub fn finish_rx(&mut self, end: u64) {
        self.dma_free = self.dma_free.max(end);
    }

    /// A frame of `frame_len` bytes (FCS included) whose data is at the NIC at `ready` goes out;
    /// returns when its last bit leaves. The ports send frames in the order their data arrived
    /// ([`Link`]): one whose reads waited does not hold back others of other queues.
    #[inline]
    pub fn wire_out(&mut self, ready: u64, frame_len: usize) -> u64 {
        self.wire.send(ready, (wire_bits(frame_len) as f64 * self.wire_ps_per_bit) as u64)
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
        // The pipeline works on the next packet while the link still takes this one's writes.
        n.finish_rx(8_000_000);
        assert_eq!(n.admit(6_000_000, 64), Some(8_000_000));
        n.finish_rx(8_500_000);
        assert_eq!(n.admit(6_000_000, 64), Some(8_500_000));
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
