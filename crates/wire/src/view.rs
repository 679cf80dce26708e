//! A checked view over an Ethernet frame, in the style of smoltcp's `Packet::new_checked`: parsing is
//! done once (with `etherparse`), after which the accessors only index at known-good offsets and never
//! panic. The view keeps the buffer, so the same offsets serve reads and in-place rewrites.

use crate::tuple::FiveTuple;
use etherparse::{NetSlice, SlicedPacket, TransportSlice};
use std::net::IpAddr;

/// Why a frame could not be parsed. Never a panic: every malformed or truncated input maps to one of these.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WireError {
    /// The frame ends before a header it announces does.
    #[error("truncated {layer}: needs {needed} bytes at offset {offset}, frame has {len}")]
    Truncated {
        /// The header that does not fit.
        layer: String,
        /// Bytes the header needs from its start.
        needed: usize,
        /// Bytes available from its start.
        len: usize,
        /// Offset of the header in the frame.
        offset: usize,
    },
    /// A header is present but invalid (bad version, bad length field, ...).
    #[error("malformed header: {0}")]
    Malformed(String),
    /// The frame carries no IPv4 or IPv6 packet (e.g. ARP).
    #[error("not an IP packet")]
    NotIp,
}

impl From<etherparse::err::packet::SliceError> for WireError {
    fn from(e: etherparse::err::packet::SliceError) -> Self {
        match e {
            etherparse::err::packet::SliceError::Len(l) => WireError::Truncated {
                layer: l.layer.to_string(),
                needed: l.required_len,
                len: l.len,
                offset: l.layer_start_offset,
            },
            other => WireError::Malformed(other.to_string()),
        }
    }
}

/// Network-layer protocol of a parsed frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum L3 {
    /// IPv4.
    V4,
    /// IPv6.
    V6,
}

/// A parsed Ethernet frame: the buffer plus the offsets of its IP header, L4 header and L4 payload.
#[derive(Debug, Clone)]
pub struct PacketView<B> {
    buf: B,
    l3: L3,
    l3_off: usize,
    l4_off: usize,
    payload_off: usize,
    payload_end: usize,
    tuple: FiveTuple,
}

fn offset_in(outer: &[u8], inner: &[u8]) -> usize {
    inner.as_ptr() as usize - outer.as_ptr() as usize
}

impl<B: AsRef<[u8]>> PacketView<B> {
    /// Parse `buf` as an Ethernet II frame (VLAN tags allowed) carrying IPv4 or IPv6.
    /// Without a UDP or TCP header (ICMP, a non-first fragment) the ports are 0 and the payload is the
    /// IP payload.
    pub fn new_checked(buf: B) -> Result<PacketView<B>, WireError> {
        let data = buf.as_ref();
        let sliced = SlicedPacket::from_ethernet(data)?;
        let (l3, l3_off, src, dst, proto, ip_payload) = match &sliced.net {
            Some(NetSlice::Ipv4(ip)) => {
                let h = ip.header();
                let payload = ip.payload();
                (
                    L3::V4,
                    offset_in(data, h.slice()),
                    IpAddr::V4(h.source_addr()),
                    IpAddr::V4(h.destination_addr()),
                    payload.ip_number.0,
                    payload.payload,
                )
            }
            Some(NetSlice::Ipv6(ip)) => {
                let h = ip.header();
                let payload = ip.payload();
                (
                    L3::V6,
                    offset_in(data, h.slice()),
                    IpAddr::V6(h.source_addr()),
                    IpAddr::V6(h.destination_addr()),
                    payload.ip_number.0,
                    payload.payload,
                )
            }
            _ => return Err(WireError::NotIp),
        };
        let (src_port, dst_port, l4_off, payload) = match &sliced.transport {
            Some(TransportSlice::Udp(u)) => {
                (u.source_port(), u.destination_port(), offset_in(data, u.header_slice()), u.payload())
            }
            Some(TransportSlice::Tcp(t)) => {
                (t.source_port(), t.destination_port(), offset_in(data, t.header_slice()), t.payload())
            }
            _ => (0, 0, offset_in(data, ip_payload), ip_payload),
        };
        let payload_off = offset_in(data, payload);
        let payload_end = payload_off + payload.len();
        let tuple = FiveTuple { src, dst, src_port, dst_port, proto };
        drop(sliced);
        Ok(PacketView { l3, l3_off, l4_off, payload_off, payload_end, tuple, buf })
    }

    /// The flow this frame belongs to.
    pub fn five_tuple(&self) -> &FiveTuple {
        &self.tuple
    }

    /// IPv4 or IPv6.
    pub fn l3(&self) -> L3 {
        self.l3
    }

    /// Offset of the IP header in the frame.
    pub fn l3_offset(&self) -> usize {
        self.l3_off
    }

    /// Offset of the L4 (UDP/TCP) header, or of the IP payload when there is none.
    pub fn l4_offset(&self) -> usize {
        self.l4_off
    }

    /// Offset of the L4 payload.
    pub fn payload_offset(&self) -> usize {
        self.payload_off
    }

    /// The L4 payload (Ethernet padding excluded: the IP and UDP length fields bound it).
    pub fn payload(&self) -> &[u8] {
        &self.buf.as_ref()[self.payload_off..self.payload_end]
    }

    /// The whole frame.
    pub fn frame(&self) -> &[u8] {
        self.buf.as_ref()
    }

    /// Give the buffer back.
    pub fn into_inner(self) -> B {
        self.buf
    }
}

impl<B: AsRef<[u8]> + AsMut<[u8]>> PacketView<B> {
    /// The L4 payload, writable in place.
    pub fn payload_mut(&mut self) -> &mut [u8] {
        &mut self.buf.as_mut()[self.payload_off..self.payload_end]
    }

    /// The whole frame, writable in place. Header rewrites must keep the offsets valid (same lengths).
    pub fn frame_mut(&mut self) -> &mut [u8] {
        self.buf.as_mut()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::build::{FrameSpec, L4Proto, build_frame};
    use proptest::prelude::*;

    fn spec(proto: L4Proto, v6: bool) -> FrameSpec {
        let (src, dst): (IpAddr, IpAddr) = if v6 {
            ("2001:db8::1".parse().unwrap(), "2001:db8::2".parse().unwrap())
        } else {
            ("10.0.0.1".parse().unwrap(), "10.0.0.2".parse().unwrap())
        };
        FrameSpec { tuple: FiveTuple { src, dst, src_port: 1234, dst_port: 80, proto: proto.number() }, frame_len: 128 }
    }

    #[test]
    fn parses_what_build_writes() {
        for proto in [L4Proto::Udp, L4Proto::Tcp] {
            for v6 in [false, true] {
                let s = spec(proto, v6);
                let frame = build_frame(&s, &[7u8; 16]).unwrap();
                let v = PacketView::new_checked(&frame[..]).unwrap();
                assert_eq!(*v.five_tuple(), s.tuple);
                assert_eq!(&v.payload()[..16], &[7u8; 16]);
                assert_eq!(v.l3_offset(), 14);
                assert_eq!(v.l3(), if v6 { L3::V6 } else { L3::V4 });
            }
        }
    }

    #[test]
    fn truncated_and_not_ip_are_errors() {
        let frame = build_frame(&spec(L4Proto::Udp, false), &[]).unwrap();
        match PacketView::new_checked(&frame[..30]) {
            Err(WireError::Truncated { offset: 14, .. }) => {}
            other => panic!("expected a truncated IPv4 header, got {other:?}"),
        }
        let mut arp = frame.clone();
        arp[12..14].copy_from_slice(&0x0806u16.to_be_bytes());
        assert!(PacketView::new_checked(&arp[..]).is_err());
        assert!(PacketView::new_checked(&[][..]).is_err());
    }

    proptest! {
        #[test]
        fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..200)) {
            let _ = PacketView::new_checked(&bytes[..]);
        }

        #[test]
        fn mutated_frames_never_panic(pos in 0usize..128, val in any::<u8>(), cut in 0usize..=128) {
            let mut frame = build_frame(&spec(L4Proto::Tcp, false), &[1u8; 20]).unwrap();
            let n = frame.len();
            frame[pos % n] = val;
            frame.truncate(cut.min(frame.len()));
            if let Ok(v) = PacketView::new_checked(&frame[..]) {
                prop_assert!(v.payload_offset() <= frame.len());
                let _ = v.payload();
            }
        }
    }
}
