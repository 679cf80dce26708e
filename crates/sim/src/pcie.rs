//! PCIe between the NIC and the host: per-direction serialization with the TLP and DLLP overheads of
//! pcie-model (reference/hardware.md, "PCIe"), DMA read latency, and a bounded number of outstanding
//! DMA read requests. Directions are named from the host: `to_host` carries DMA writes and read
//! requests, `to_device` carries read completions and MMIO writes (doorbells).
//!
//! A DMA read is split into requests of at most the MRRS. A read of packet data (the transmit engine's
//! gather) takes one of the NIC's read slots ([`crate::profile::PcieParams::max_reads`]) per request from
//! its issue until its completion has arrived, so when DRAM serves them slowly the NIC runs out of slots
//! and waits (shRing §2.3). Descriptor fetches are issued by the NIC's descriptor prefetchers ahead of
//! need and are not held back by the data engines' slots. The read latency reported is per request,
//! from issue to completion, as a PCIe analyser (NVIDIA's Neo-Host in shRing §5.1) measures it; the time
//! a request waited for a slot is not part of it.

use crate::link::Link;
use crate::profile::PcieParams;
use serde::Serialize;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// Wire bytes of a memory write or read request TLP beyond its payload: DLLP framing 8 + TLP header 4
/// + 12 for a 64-bit address (\[HW\]).
pub const MWR_OVERHEAD: u64 = 24;
/// Wire bytes of a read request TLP.
pub const MRD_BYTES: u64 = 24;
/// Wire bytes of a completion-with-data TLP beyond its payload: 8 + 4 + 8 (\[HW\]).
pub const CPLD_OVERHEAD: u64 = 20;
/// Bytes of SKIP ordered set and its interval ([HW]: "SKIP 4 B every 1538 B").
const SKIP: (f64, f64) = (4.0, 1538.0);
/// Bytes of an ACK or flow-control DLLP.
const DLLP: f64 = 8.0;

/// TLP-level bandwidth of one link in Gb/s: raw rate minus ACK, flow-control and SKIP overheads, as
/// pcie-model computes it (`TLP_bw`).
pub fn tlp_gbps(p: &PcieParams) -> f64 {
    let raw = p.gts * f64::from(p.lanes) * p.encoding;
    raw * (1.0 - DLLP / p.ack_limit - DLLP / p.fc_limit - SKIP.0 / SKIP.1)
}

/// Traffic counters of one direction.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct DirStats {
    /// Bytes on the wire (payload and TLP overheads).
    pub wire_bytes: u64,
    /// Payload bytes (data, descriptors, completions, doorbell values).
    pub payload_bytes: u64,
    /// Payload bytes that are packet data (the rest is metadata; Ensō §7.2.4, Figure 10).
    pub data_bytes: u64,
}

/// One direction of the link group: a [`Link`] and its counters.
#[derive(Debug, Clone, Default)]
struct Dir {
    link: Link,
    stats: DirStats,
}

impl Dir {
    /// Send `wire` bytes (carrying `payload`) ready at `now`; returns when the last byte is sent.
    #[inline]
    fn send(&mut self, now: u64, wire: u64, payload: u64, ps_per_byte: f64) -> u64 {
        self.stats.wire_bytes += wire;
        self.stats.payload_bytes += payload;
        self.link.send(now, (wire as f64 * ps_per_byte) as u64)
    }
}

/// The NIC's PCIe links, modelled as one group with their summed capacity and read slots.
#[derive(Debug, Clone)]
pub struct Pcie {
    /// Time one link of the group takes to carry a full 64 B line as a posted write, ps.
    posted_line_ps: u64,
    mps: u64,
    mrrs: u64,
    ps_per_byte: f64,
    read_base_ps: f64,
    read_per_byte_ps: f64,
    /// One-way latency of a posted write: half the zero-byte read round trip.
    write_latency_ps: u64,
    to_host: Dir,
    to_device: Dir,
    /// Completion times of outstanding read requests (a min-heap), at most `max_reads`.
    reads: BinaryHeap<Reverse<u64>>,
    max_reads: usize,
    /// Read requests issued and the sum of their latencies (issue to completion), for the mean.
    read_count: u64,
    read_latency_ps: u64,
}

impl Pcie {
    /// Links with the given parameters.
    pub fn new(p: &PcieParams) -> Pcie {
        let bytes_per_ps = tlp_gbps(p) * f64::from(p.links) / 8.0 / 1000.0;
        let mut pcie = Pcie {
            posted_line_ps: 0,
            mps: p.mps as u64,
            mrrs: p.mrrs as u64,
            ps_per_byte: 1.0 / bytes_per_ps,
            read_base_ps: p.read_base_ns * 1000.0,
            read_per_byte_ps: p.read_per_byte_ns * 1000.0,
            write_latency_ps: (p.read_base_ns * 500.0) as u64,
            to_host: Dir::default(),
            to_device: Dir::default(),
            reads: BinaryHeap::with_capacity(p.max_reads * p.links as usize),
            max_reads: p.max_reads * p.links as usize,
            read_count: 0,
            read_latency_ps: 0,
        };
        pcie.posted_line_ps = (pcie.write_wire(64) as f64 * pcie.ps_per_byte * f64::from(p.links.max(1))) as u64;
        pcie
    }

    /// Put the host's memory across the links between the sockets, `hop_ps` there and back: reads take
    /// the round trip longer, posted writes (DMA writes, doorbells) half of it.
    pub fn cross_sockets(&mut self, hop_ps: u64) {
        self.read_base_ps += hop_ps as f64;
        self.write_latency_ps += hop_ps / 2;
    }

    /// Wire bytes of a DMA write of `len` bytes: ceil(len / MPS) TLPs of 24 B overhead each.
    #[inline]
    pub fn write_wire(&self, len: u64) -> u64 {
        len + MWR_OVERHEAD * len.div_ceil(self.mps).max(1)
    }

    /// Wire bytes of the read requests for `len` bytes (one per MRRS).
    #[inline]
    pub fn request_wire(&self, len: u64) -> u64 {
        MRD_BYTES * len.div_ceil(self.mrrs).max(1)
    }

    /// Wire bytes of the completions returning `len` bytes (one per MPS).
    #[inline]
    pub fn completion_wire(&self, len: u64) -> u64 {
        len + CPLD_OVERHEAD * len.div_ceil(self.mps).max(1)
    }

    /// Serialization time of `wire` bytes, ps.
    #[inline]
    pub fn wire_ps(&self, wire: u64) -> u64 {
        (wire as f64 * self.ps_per_byte) as u64
    }

    /// Time one link of the group takes to carry a full 64 B line as a posted write ([`crate::wc`]), ps.
    pub fn posted_line_ps(&self) -> u64 {
        self.posted_line_ps
    }

    /// One-way latency of a posted write (DMA write landing in the host, or a doorbell reaching the NIC).
    pub fn write_latency_ps(&self) -> u64 {
        self.write_latency_ps
    }

    /// The NIC writes `len` bytes to the host at `now`; returns when the last TLP has left the link.
    #[inline]
    pub fn dma_write(&mut self, now: u64, len: u64) -> u64 {
        let wire = self.write_wire(len);
        self.to_host.send(now, wire, len, self.ps_per_byte)
    }

    /// The NIC reads `len` bytes at `now`, `extra_ps` slower than a warm read (host memory misses), as
    /// requests of at most the MRRS; a read of packet data (`slotted`) issues each request once a read
    /// slot is free. Returns when the last request was issued and when all the data is at the NIC.
    #[inline]
    pub fn dma_read(&mut self, now: u64, len: u64, extra_ps: u64, slotted: bool) -> (u64, u64) {
        let (mut issue, mut done) = (now, now);
        let mut left = len.max(1);
        while left > 0 {
            let req = left.min(self.mrrs);
            left -= req;
            if slotted {
                issue = self.take_slot(issue);
            }
            let sent = self.to_host.send(issue, MRD_BYTES, 0, self.ps_per_byte);
            let wire = self.completion_wire(req);
            let ser = self.wire_ps(wire);
            let ready = sent.max(issue + (self.read_base_ps + self.read_per_byte_ps * req as f64) as u64 + extra_ps);
            let arrived = self.to_device.send(ready.saturating_sub(ser), wire, req, self.ps_per_byte).max(ready);
            if slotted {
                self.reads.push(Reverse(arrived));
            }
            self.read_count += 1;
            self.read_latency_ps += arrived - issue;
            done = done.max(arrived);
        }
        (issue, done)
    }

    /// The earliest time from `now` at which a read slot is free; frees the slots of requests completed
    /// by then.
    #[inline]
    fn take_slot(&mut self, now: u64) -> u64 {
        let mut at = now;
        if self.reads.len() >= self.max_reads {
            let Reverse(free) = self.reads.pop().expect("a full read table");
            at = at.max(free);
        }
        while let Some(&Reverse(t)) = self.reads.peek() {
            if t > at {
                break;
            }
            self.reads.pop();
        }
        at
    }

    /// A core writes `len` bytes to a device register at `now` (posted); returns when the NIC sees it.
    /// Doorbells are counted on the link but not queued behind DMA: they are a few bytes, and a core's
    /// step may run ahead of the NIC's clock, where queueing would hold back the NIC's own traffic.
    #[inline]
    pub fn mmio_write(&mut self, now: u64, len: u64) -> u64 {
        let wire = self.write_wire(len);
        self.to_device.stats.wire_bytes += wire;
        self.to_device.stats.payload_bytes += len;
        now + self.wire_ps(wire) + self.write_latency_ps
    }

    /// A core reads `len` bytes of device memory at `now` (an uncached load, nicmem §2: "reads are
    /// uncached"): a read request towards the device and a completion back, one PCIe round trip.
    /// Counted on the link but, like doorbells, not queued behind DMA. Returns when the data is at the
    /// core.
    #[inline]
    pub fn mmio_read(&mut self, now: u64, len: u64) -> u64 {
        self.to_device.stats.wire_bytes += self.request_wire(len);
        self.to_host.stats.wire_bytes += self.completion_wire(len);
        self.to_host.stats.payload_bytes += len;
        now + (self.read_base_ps + self.read_per_byte_ps * len as f64) as u64
    }

    /// Count `len` bytes just moved by [`Pcie::dma_write`] (`to_host`) or [`Pcie::dma_read`] as packet
    /// data rather than metadata.
    #[inline]
    pub fn count_data(&mut self, to_host: bool, len: u64) {
        let d = if to_host { &mut self.to_host } else { &mut self.to_device };
        d.stats.data_bytes += len;
    }

    /// Counters towards the host and towards the device.
    pub fn stats(&self) -> (DirStats, DirStats) {
        (self.to_host.stats, self.to_device.stats)
    }

    /// Mean DMA read request latency so far (issue to completion), ns, and the number of requests.
    pub fn read_latency(&self) -> (f64, u64) {
        let mean = if self.read_count == 0 { 0.0 } else { self.read_latency_ps as f64 / self.read_count as f64 / 1e3 };
        (mean, self.read_count)
    }

    /// Capacity of one direction in bytes per second (all links).
    pub fn bytes_per_sec(&self) -> f64 {
        1e12 / self.ps_per_byte
    }

    /// Forget the counters at the start of a measurement.
    pub fn reset_counters(&mut self) {
        self.to_host.stats = DirStats::default();
        self.to_device.stats = DirStats::default();
        self.read_count = 0;
        self.read_latency_ps = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::profile::Profile;

    /// One link of the R640's NICs, with every PCIe tag usable: pcie-model's bandwidths assume that
    /// requests are never short of tags.
    fn link(gts: f64) -> Pcie {
        let mut p = Profile::r640_silver4216().pcie;
        p.gts = gts;
        p.links = 1;
        p.max_reads = 256;
        Pcie::new(&p)
    }

    /// Payload Gb/s achieved by `n` back-to-back operations of `len` bytes, measured on the busier
    /// direction's clock.
    fn measured(pcie: &mut Pcie, n: u64, len: u64, op: fn(&mut Pcie, u64)) -> f64 {
        for _ in 0..n {
            op(pcie, len);
        }
        let end = pcie.to_host.link.free_at().max(pcie.to_device.link.free_at());
        (n * len * 8) as f64 / end as f64 * 1e3
    }

    fn close(got: f64, want: f64) -> bool {
        (got - want).abs() / want < 0.02
    }

    #[test]
    fn tlp_bandwidth_matches_pcie_model() {
        let p = Profile::r640_silver4216().pcie;
        assert!((tlp_gbps(&p) - 113.7).abs() < 0.1, "{}", tlp_gbps(&p));
    }

    #[test]
    fn effective_bandwidth_matches_pcie_model_within_two_percent() {
        // [HW]: Gen3 x16 64 B writes 82.7, 64 B reads 86.6; Gen4 x16 165.4 and 173.3 Gb/s.
        for (gts, w, r) in [(8.0, 82.7, 86.6), (16.0, 165.4, 173.3)] {
            let got = measured(&mut link(gts), 100_000, 64, |p, len| {
                p.dma_write(0, len);
            });
            assert!(close(got, w), "Gen {gts} GT/s writes: {got:.1} vs {w}");
            let got = measured(&mut link(gts), 100_000, 64, |p, len| {
                p.dma_read(0, len, 0, true);
            });
            assert!(close(got, r), "Gen {gts} GT/s reads: {got:.1} vs {r}");
        }
    }

    /// What pcie-model's simple NIC moves towards the host per received packet with a poll-mode driver
    /// (no interrupt, no head-pointer read): the data, a 16 B descriptor write-back, and, which the
    /// model forgets, the descriptor read request. `frame` includes the FCS, which the NIC strips.
    fn receive(pcie: &mut Pcie, frame: u64, count_request: bool) {
        let data = frame - 4;
        pcie.dma_write(0, data);
        pcie.dma_write(0, 16);
        if count_request {
            pcie.dma_read(0, 16, 0, false);
        }
    }

    #[test]
    fn receive_bandwidth_matches_pcie_model_and_counts_the_descriptor_request() {
        // [HW]: 64 B-frame receive 55.0, 1518 B-frame receive 101.4 Gb/s (model without the request).
        for (frame, want) in [(64u64, 55.0), (1518, 101.4)] {
            let mut p = link(8.0);
            for _ in 0..50_000 {
                receive(&mut p, frame, false);
            }
            let got = (50_000 * (frame - 4) * 8) as f64 / p.to_host.link.free_at() as f64 * 1e3;
            assert!(close(got, want), "{frame} B receive: {got:.1} vs {want}");
            // With the 24 B descriptor read request counted, the data share drops accordingly.
            let mut p = link(8.0);
            for _ in 0..50_000 {
                receive(&mut p, frame, true);
            }
            let fixed = (50_000 * (frame - 4) * 8) as f64 / p.to_host.link.free_at() as f64 * 1e3;
            let w = (p.write_wire(frame - 4) + p.write_wire(16)) as f64;
            let expect = want * w / (w + MRD_BYTES as f64);
            assert!(close(fixed, expect), "{frame} B with request: {fixed:.1} vs {expect:.1}");
        }
    }

    #[test]
    fn reads_wait_for_a_slot_and_latency_grows_with_size() {
        let mut p = link(8.0);
        let d64 = p.dma_read(0, 64, 0, true).1;
        assert!((d64 as f64 - 558_560.0).abs() < 1000.0, "{d64}");
        let mut q = link(8.0);
        q.max_reads = 1;
        let a = q.dma_read(0, 64, 0, true).1;
        let b = q.dma_read(0, 64, 0, true).1;
        assert!(b >= 2 * a - 1000, "{a} {b}");
        // A 1514 B read is requests of at most the MRRS, each holding a slot: with a slot fewer than
        // requests the last waits for the first, and the latency reported is per request, without the wait.
        let mut r = link(8.0);
        let requests = 1514_u64.div_ceil(r.mrrs);
        assert!(requests >= 2, "MRRS {}", r.mrrs);
        r.max_reads = requests as usize - 1;
        let (issue, done) = r.dma_read(0, 1514, 0, true);
        assert_eq!(r.read_latency().1, requests);
        assert!(issue > 0 && done > issue, "{issue} {done}");
        let one = r.read_latency().0 * 1000.0;
        assert!(one < (done as f64) * 0.8, "per request {one} ps, whole read {done} ps");
    }
}
