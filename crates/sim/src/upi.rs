//! The links between the two sockets of a server (Intel UPI), as programs on the other socket that use
//! this socket's memory meet them ([`crate::profile::RemoteSocket`]): every line such a program reads
//! crosses towards it, every line it writes back crosses towards this socket, each way at the links'
//! bandwidth shared by every such program, and each access pays the crossing's round trip
//! ([`Upi::hop_ps`]). Where the NF runs on the socket away from the NIC, the NIC's DMA crosses them
//! instead ([`crate::machine::Machine::nic_across_sockets`]): its reads of the NF's memory the `Out` way,
//! its writes the `In` way.

use crate::link::Link;
use crate::profile::RemoteSocket;

/// Which way data crosses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Way {
    /// From this socket's memory to the other socket (reads).
    Out,
    /// From the other socket to this socket's memory (write-backs).
    In,
}

/// The links, one serial [`Link`] each way.
#[derive(Debug, Clone)]
pub struct Upi {
    ps_per_byte: f64,
    hop_ps: u64,
    ways: [Link; 2],
}

impl Upi {
    /// The links of `p`.
    pub fn new(p: &RemoteSocket) -> Upi {
        Upi { ps_per_byte: 1000.0 / p.link_gbs, hop_ps: (p.hop_ns * 1000.0).round() as u64, ways: Default::default() }
    }

    /// What crossing to the other socket and back adds to a memory access, ps.
    pub fn hop_ps(&self) -> u64 {
        self.hop_ps
    }

    /// Carry `bytes` the `way` given, ready at `now` (ps): when the last byte has crossed, after what the
    /// links already carry that way.
    pub fn carry(&mut self, way: Way, now: u64, bytes: u64) -> u64 {
        self.ways[way as usize].send(now, self.ser_ps(bytes))
    }

    /// Carry `bytes` as [`Upi::carry`] does; returns how long they wait behind what the links already
    /// carry that way, ps (0 on idle links: a DMA's bytes stream through as they cross PCIe).
    pub fn queue(&mut self, way: Way, now: u64, bytes: u64) -> u64 {
        self.carry(way, now, bytes).saturating_sub(now + self.ser_ps(bytes))
    }

    fn ser_ps(&self, bytes: u64) -> u64 {
        (bytes as f64 * self.ps_per_byte).round() as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Data crosses at the links' rate each way, one way's load leaving the other's alone; the links idle
    /// bank nothing.
    #[test]
    fn each_way_carries_at_the_links_rate() {
        let mut upi = Upi::new(&RemoteSocket { link_gbs: 38.4, hop_ns: 110.0 });
        assert_eq!(upi.hop_ps(), 110_000);
        // 38.4 GB/s: 3,840 B take 100 ns.
        assert_eq!(upi.carry(Way::Out, 0, 3840), 100_000);
        assert_eq!(upi.carry(Way::Out, 0, 3840), 200_000);
        assert_eq!(upi.carry(Way::In, 0, 3840), 100_000);
        assert_eq!(upi.carry(Way::Out, 1_000_000, 3840), 1_100_000);
        assert_eq!(upi.queue(Way::In, 1_000_000, 3840), 0, "idle links: no wait");
        assert_eq!(upi.queue(Way::In, 1_000_000, 3840), 100_000, "behind the bytes before");
    }
}
