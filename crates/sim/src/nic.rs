//! The NIC's own timing: the receive pipeline with its on-NIC buffer, the transmit engine's schedule,
//! and the Ethernet ports. What the NIC does to memory is the design's device side, run through the
//! probe; this module decides when it runs.
//!
//! Receive: packets wait in the on-NIC buffer, in arrival order per descriptor ring. Two stages follow,
//! overlapped as in any pipelined NIC: the packet pipeline takes one packet every 1/rate (the profile's
//! Mpps, a datasheet's per-direction packet rate), and the DMA stage starts a packet's writes once the
//! pipeline is done with it, the link has taken the previous packet's writes, and its ring's previous
//! packet is done. A descriptor fetch the prefetcher did not issue ahead holds back its ring only:
//! "a descriptor cache miss on some ring does not stall incoming traffic destined to other rings, but
//! with shRing there are fewer rings and so more traffic is stalled" (shRing §4.3). A packet arriving
//! to a full buffer is dropped (`nic_buffer_full`). Its DMA lands (and the design's `rx` runs, making it
//! visible to software) one write serialization and one posted-write latency after the DMA starts; the
//! engine places the step's writes on the link from a posted-write latency after the start, where they
//! left the NIC, so that packets of different lengths keep the order of their DMA starts on the link.
//!
//! Transmit: a doorbell wakes the engine when it reaches the NIC; each run sends up to one descriptor
//! fetch's worth of packets and reschedules itself while software has more queued. A packet leaves on
//! the wire once its data read completed and the ports are free (the ports are modelled as one link of
//! their summed speed).

use crate::link::Link;
use crate::profile::Profile;
use std::collections::VecDeque;
use wire::frame::wire_bits;

/// A packet in the on-NIC buffer, between its arrival and its DMA.
#[derive(Debug)]
pub struct Held {
    /// When the packet pipeline is done with it, ps.
    pipe: u64,
    /// Its Toeplitz hash.
    pub hash: u32,
    /// Its sequence number (the stamp's).
    pub seq: u64,
    /// Its frame's length, FCS excluded.
    pub len: usize,
    /// Its frame's first bytes, after which the frame holds only zeros (a generated frame is headers,
    /// a stamp and a zeroed payload, [`traffic::FrameBuf::head`]): the buffer keeps what it must, and
    /// the frame is put together again when its DMA lands ([`traffic::FrameBuf::put`]).
    pub head: Vec<u8>,
}

/// A packet whose DMA lands now.
#[derive(Debug)]
pub struct Landed {
    /// Its descriptor ring ([`ifaces::DeviceSide::ring_of`]).
    pub ring: usize,
    /// When its DMA started, ps.
    pub start: u64,
    /// How long it waited for the DMA stage after the pipeline, ps: the stage was still busy with
    /// earlier packets' PCIe traffic, so a write the NIC queues now waits about as long.
    pub dma_wait: u64,
    /// The packet.
    pub held: Held,
}

/// What the DMA stage reads of a descriptor ring to choose the next packet, kept apart from the packets
/// themselves so that choosing among the rings reads one small array.
#[derive(Debug, Clone, Copy)]
struct RingHead {
    /// When the pipeline is done with the ring's oldest packet, ps; [`RingHead::NONE`] when it holds none
    /// (read through [`RingHead::pipe`]).
    pipe: u64,
    /// When the ring's previous packet was done, its descriptor fetches included, ps.
    free: u64,
}

impl RingHead {
    /// No packet: a time no pipeline reaches, so that choosing compares plain integers.
    const NONE: u64 = u64::MAX;
    const EMPTY: RingHead = RingHead { pipe: RingHead::NONE, free: 0 };

    /// When the pipeline is done with the ring's oldest packet, if it holds any.
    fn pipe(&self) -> Option<u64> {
        (self.pipe != RingHead::NONE).then_some(self.pipe)
    }
}

/// The packet the DMA stage takes next: its ring, DMA start, wait for the stage and landing time.
#[derive(Debug, Clone, Copy)]
struct Next {
    ring: usize,
    start: u64,
    dma_wait: u64,
    landing: u64,
}

/// How long after its DMA starts a packet of `len` bytes lands in host memory, ps.
pub trait Landing: Fn(usize) -> u64 {}
impl<F: Fn(usize) -> u64> Landing for F {}

/// NIC timing state.
#[derive(Debug)]
pub struct Nic {
    /// Pipeline time per packet, ps.
    pub pkt_ps: u64,
    buffer: usize,
    /// Bytes of the packets in the on-NIC buffer; the one in the DMA stage leaves at its start.
    held_bytes: usize,
    /// Each descriptor ring's packets in the on-NIC buffer, oldest first.
    rings: Vec<VecDeque<Held>>,
    /// Each ring's [`RingHead`].
    heads: Vec<RingHead>,
    next: Option<Next>,
    /// When the receive pipeline can take the next packet.
    pipe_free: u64,
    /// When the receive DMA stage can start the next packet's writes.
    dma_free: u64,
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
            held_bytes: 0,
            rings: Vec::new(),
            heads: Vec::new(),
            next: None,
            pipe_free: 0,
            dma_free: 0,
            tx_free: 0,
            tx_wake: None,
            tx_batch: p.nic.prefetch.max(1) as usize,
            wire: Link::default(),
            wire_ps_per_bit: 1000.0 / (p.nic.port_gbps * f64::from(p.nic.ports)),
        }
    }

    /// A packet (hash `hash`, sequence `seq`, a frame of `len` bytes that begins with `head` and holds
    /// only zeros after it) bound for descriptor ring `ring` arrives at `arrival`: it joins the on-NIC
    /// buffer, or `head` comes back (`Err`) when the buffer is full. It goes to
    /// the DMA stage ahead of the packet due there if it can start earlier (that one's ring waits for a
    /// descriptor).
    pub fn arrive(
        &mut self,
        arrival: u64,
        ring: usize,
        (hash, seq, len): (u32, u64, usize),
        head: Vec<u8>,
        land: impl Landing,
    ) -> Result<(), Vec<u8>> {
        let leaving = self.next.filter(|n| n.start <= arrival).map_or(0, |n| self.rings[n.ring][0].len);
        if self.held_bytes - leaving + len > self.buffer {
            return Err(head);
        }
        self.held_bytes += len;
        self.pipe_free = arrival.max(self.pipe_free) + self.pkt_ps;
        if ring >= self.rings.len() {
            self.rings.resize_with(ring + 1, VecDeque::new);
            self.heads.resize(ring + 1, RingHead::EMPTY);
        }
        let r = &mut self.rings[ring];
        r.push_back(Held { pipe: self.pipe_free, hash, seq, len, head });
        let first = r.len() == 1;
        if first {
            self.heads[ring].pipe = self.pipe_free;
        }
        match self.next {
            None => self.choose(land),
            Some(n) if first && n.start > arrival && self.start_of(ring).is_some_and(|(start, _)| start < n.start) => {
                self.choose(land)
            }
            Some(_) => {}
        }
        Ok(())
    }

    /// When ring `ring`'s first packet could start its DMA, and how long it would wait for the DMA
    /// stage after the pipeline: the pipeline is done with it, the stage is free and the ring's
    /// previous packet is done. `None` if the ring holds no packet.
    fn start_of(&self, ring: usize) -> Option<(u64, u64)> {
        let head = self.heads[ring];
        let (pipe, free) = (head.pipe()?, head.free);
        let stage = pipe.max(self.dma_free);
        Some((stage.max(free), stage - pipe))
    }

    /// Give the DMA stage to the ring whose first packet can start first (the earliest arrival among
    /// equals), if the buffer holds any.
    fn choose(&mut self, land: impl Landing) {
        let best = (0..self.heads.len())
            .filter_map(|i| Some((i, self.start_of(i)?)))
            .min_by_key(|&(i, (start, _))| (start, self.heads[i].pipe));
        self.next = best.map(|(ring, (start, dma_wait))| Next {
            ring,
            start,
            dma_wait,
            landing: start + land(self.rings[ring][0].len),
        });
    }

    /// When the next packet's DMA lands, if the buffer holds any.
    #[inline]
    pub fn next_landing(&self) -> Option<u64> {
        self.next.map(|n| n.landing)
    }

    /// The packet whose DMA lands by `now`, if any; the DMA stage takes no other until
    /// [`Nic::finish_rx`].
    pub fn land(&mut self, now: u64) -> Option<Landed> {
        let n = self.next.filter(|n| n.landing <= now)?;
        self.next = None;
        let r = &mut self.rings[n.ring];
        let held = r.pop_front().expect("the chosen ring holds its packet");
        self.heads[n.ring].pipe = r.front().map_or(RingHead::NONE, |h| h.pipe);
        self.held_bytes -= held.len;
        Some(Landed { ring: n.ring, start: n.start, dma_wait: n.dma_wait, held })
    }

    /// Ring `ring`'s packet whose DMA started at `start` took `step` ps on the NIC, `stall` of them
    /// waiting for descriptor fetches: the DMA stage is free again after the rest, the ring after all of
    /// it, and the stage takes its next packet.
    pub fn finish_rx(&mut self, ring: usize, start: u64, step: u64, stall: u64, land: impl Landing) {
        self.dma_free = self.dma_free.max(start + step - stall.min(step));
        self.heads[ring].free = start + step;
        self.choose(land);
    }

    /// Whether the on-NIC buffer holds no packet.
    pub fn rx_empty(&self) -> bool {
        self.held_bytes == 0
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

    const US: u64 = 1_000_000;

    /// A NIC of 1 Mpps with a 3000 B buffer.
    fn small() -> Nic {
        let mut p = Profile::r640_silver4216();
        p.nic.rx_buffer = 3000;
        p.nic.mpps = 1.0;
        Nic::new(&p)
    }

    /// DMAs land as they start.
    fn at_once(_: usize) -> u64 {
        0
    }

    fn arrive(n: &mut Nic, at: u64, ring: usize, len: usize) -> bool {
        n.arrive(at, ring, (0, 0, len), Vec::new(), at_once).is_ok()
    }

    /// The packet landing by `now`: (ring, DMA start, wait for the DMA stage).
    fn land(n: &mut Nic, now: u64) -> Option<(usize, u64, u64)> {
        n.land(now).map(|l| (l.ring, l.start, l.dma_wait))
    }

    #[test]
    fn buffer_overflow_drops_and_the_pipeline_paces() {
        let mut n = small();
        assert!(arrive(&mut n, 0, 0, 1500));
        assert!(arrive(&mut n, 0, 0, 1500));
        assert!(!arrive(&mut n, 0, 1, 1500), "the buffer holds two");
        // The first packet's DMA started at 1 us and left the buffer.
        assert!(arrive(&mut n, US, 1, 1500));
        assert_eq!(land(&mut n, US), Some((0, US, 0)));
        n.finish_rx(0, US, US, 0, at_once);
        // The pipeline took the second packet at 2 us, when the DMA stage was free again.
        assert_eq!(land(&mut n, 2 * US), Some((0, 2 * US, 0)));
        n.finish_rx(0, 2 * US, 3 * US, 0, at_once);
        // Ring 1's packet was due at 3 us, but the DMA stage is busy until 5 us: it moves there.
        assert_eq!(land(&mut n, 3 * US), None);
        assert_eq!(n.next_landing(), Some(5 * US));
        assert_eq!(land(&mut n, 5 * US), Some((1, 5 * US, 2 * US)));
        n.finish_rx(1, 5 * US, US, 0, at_once);
        assert!(n.rx_empty());
    }

    /// shRing §4.3: a descriptor fetch holds back its own ring's packets, not other rings'.
    #[test]
    fn a_descriptor_fetch_stalls_its_ring_only() {
        let mut n = small();
        n.buffer = 1 << 20;
        for ring in [0, 0, 1] {
            assert!(arrive(&mut n, 0, ring, 64));
        }
        assert_eq!(land(&mut n, US), Some((0, US, 0)));
        // Its step took 4 us, 3 of them waiting for a descriptor fetch: the stage is free at 2 us.
        n.finish_rx(0, US, 4 * US, 3 * US, at_once);
        assert_eq!(land(&mut n, 3 * US), Some((1, 3 * US, 0)), "ring 1 goes on at its pipeline time");
        n.finish_rx(1, 3 * US, US, 0, at_once);
        // Ring 0's next waits for the fetch until 5 us; of the 3 us since its pipeline time, only the 2
        // the stage was busy count as back pressure.
        assert_eq!(land(&mut n, 5 * US), Some((0, 5 * US, 2 * US)));
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
