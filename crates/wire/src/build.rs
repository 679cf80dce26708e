//! Building Ethernet frames: UDP or TCP over IPv4 or IPv6, with valid checksums (via `etherparse`).

use crate::frame::{FCS_LEN, MIN_FRAME};
use crate::tuple::FiveTuple;
use etherparse::PacketBuilder;
use std::net::IpAddr;

/// Source MAC of generated frames (locally administered).
pub const SRC_MAC: [u8; 6] = [0x02, 0, 0, 0, 0, 0x01];
/// Destination MAC of generated frames (locally administered).
pub const DST_MAC: [u8; 6] = [0x02, 0, 0, 0, 0, 0x02];

/// Transport protocol of a generated frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum L4Proto {
    /// UDP (the papers' traffic).
    #[default]
    Udp,
    /// TCP (a bare ACK segment carrying the payload).
    Tcp,
}

impl L4Proto {
    /// IP protocol number.
    pub fn number(self) -> u8 {
        match self {
            L4Proto::Udp => 17,
            L4Proto::Tcp => 6,
        }
    }

    /// The protocol for an IP protocol number, if it is UDP or TCP.
    pub fn from_number(n: u8) -> Option<L4Proto> {
        match n {
            17 => Some(L4Proto::Udp),
            6 => Some(L4Proto::Tcp),
            _ => None,
        }
    }

    /// Length of this protocol's header (TCP without options).
    pub fn header_len(self) -> usize {
        match self {
            L4Proto::Udp => 8,
            L4Proto::Tcp => 20,
        }
    }
}

/// What to build: the flow and the Ethernet frame length (FCS included, see [`crate::frame`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FrameSpec {
    /// Addresses, ports and protocol (6 or 17); both addresses must be of one family.
    pub tuple: FiveTuple,
    /// Ethernet frame length including the FCS.
    pub frame_len: usize,
}

impl FrameSpec {
    /// Bytes of Ethernet, IP and L4 headers in this frame.
    pub fn header_len(&self) -> usize {
        let ip = if self.tuple.src.is_ipv4() { 20 } else { 40 };
        let l4 = L4Proto::from_number(self.tuple.proto).map_or(0, L4Proto::header_len);
        14 + ip + l4
    }

    /// L4 payload bytes that fit in the frame (0 if the headers alone exceed it).
    pub fn payload_len(&self) -> usize {
        self.frame_len.saturating_sub(FCS_LEN + self.header_len())
    }
}

/// Build the frame of `spec` (without FCS, as a NIC delivers it). The payload starts with `prefix` and is
/// zero-filled to the frame length; frames below 64 B are padded as Ethernet requires.
pub fn build_frame(spec: &FrameSpec, prefix: &[u8]) -> Result<Vec<u8>, String> {
    let t = &spec.tuple;
    let proto = L4Proto::from_number(t.proto)
        .ok_or_else(|| format!("can only build UDP (17) or TCP (6) frames, not IP protocol {}", t.proto))?;
    let payload_len = spec.payload_len();
    if payload_len < prefix.len() || spec.frame_len < spec.header_len() + FCS_LEN {
        return Err(format!(
            "a {} B frame cannot hold {} B of headers and a {} B payload prefix (FCS {FCS_LEN} B included)",
            spec.frame_len,
            spec.header_len(),
            prefix.len()
        ));
    }
    let mut payload = vec![0u8; payload_len];
    payload[..prefix.len()].copy_from_slice(prefix);
    let eth = PacketBuilder::ethernet2(SRC_MAC, DST_MAC);
    let ip = match (t.src, t.dst) {
        (IpAddr::V4(s), IpAddr::V4(d)) => eth.ipv4(s.octets(), d.octets(), 64),
        (IpAddr::V6(s), IpAddr::V6(d)) => eth.ipv6(s.octets(), d.octets(), 64),
        _ => return Err(format!("flow {t} mixes IPv4 and IPv6 addresses")),
    };
    let mut out = Vec::with_capacity(spec.frame_len);
    let written = match proto {
        L4Proto::Udp => ip.udp(t.src_port, t.dst_port).write(&mut out, &payload),
        L4Proto::Tcp => ip.tcp(t.src_port, t.dst_port, 0, u16::MAX).ack(0).write(&mut out, &payload),
    };
    written.map_err(|e| format!("cannot build frame for {t}: {e}"))?;
    out.resize(out.len().max(MIN_FRAME - FCS_LEN), 0);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_follow_frame_len() {
        let tuple = FiveTuple {
            src: "1.2.3.4".parse().unwrap(),
            dst: "5.6.7.8".parse().unwrap(),
            src_port: 1,
            dst_port: 2,
            proto: 17,
        };
        for len in [64, 128, 1518] {
            let f = build_frame(&FrameSpec { tuple, frame_len: len }, &[1; 16]).unwrap();
            assert_eq!(f.len(), len - FCS_LEN);
        }
        let tcp = FiveTuple { proto: 6, ..tuple };
        assert!(build_frame(&FrameSpec { tuple: tcp, frame_len: 64 }, &[1; 16]).is_err());
        assert!(build_frame(&FrameSpec { tuple: FiveTuple { proto: 1, ..tuple }, frame_len: 64 }, &[]).is_err());
    }
}
