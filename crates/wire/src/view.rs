//! A checked view over an Ethernet frame, in the style of smoltcp's `Packet::new_checked`: parsing is
//! done once (with `etherparse`), after which the accessors only index at known-good offsets and never
//! panic. The view keeps the buffer, so the same offsets serve reads and in-place rewrites.

use crate::tuple::FiveTuple;
use etherparse::{LaxNetSlice, LaxSlicedPacket, NetSlice, SlicedPacket, TransportSlice};
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
    at: Offsets,
}

fn offset_in(outer: &[u8], inner: &[u8]) -> usize {
    inner.as_ptr() as usize - outer.as_ptr() as usize
}

/// Where a parsed frame's headers and payload are, and its flow.
#[derive(Debug, Clone)]
struct Offsets {
    l3: L3,
    l3_off: usize,
    l4_off: usize,
    payload_off: usize,
    payload_end: usize,
    tuple: FiveTuple,
}

impl Offsets {
    fn with_buf<B>(self, buf: B) -> PacketView<B> {
        PacketView { buf, at: self }
    }
}

impl PacketView<()> {
    /// The offsets of a frame `data` from its parsed IP header (bytes, source, destination), IP payload
    /// (protocol, bytes) and transport header.
    fn from_slices(
        data: &[u8],
        l3: L3,
        (ip_header, src, dst): (&[u8], IpAddr, IpAddr),
        (proto, ip_payload): (u8, &[u8]),
        transport: Option<&TransportSlice<'_>>,
    ) -> Offsets {
        let (src_port, dst_port, l4_off, payload) = match transport {
            Some(TransportSlice::Udp(u)) => {
                (u.source_port(), u.destination_port(), offset_in(data, u.header_slice()), u.payload())
            }
            Some(TransportSlice::Tcp(t)) => {
                (t.source_port(), t.destination_port(), offset_in(data, t.header_slice()), t.payload())
            }
            _ => (0, 0, offset_in(data, ip_payload), ip_payload),
        };
        let payload_off = offset_in(data, payload);
        Offsets {
            l3,
            l3_off: offset_in(data, ip_header),
            l4_off,
            payload_off,
            payload_end: payload_off + payload.len(),
            tuple: FiveTuple { src, dst, src_port, dst_port, proto },
        }
    }
}

impl<B: AsRef<[u8]>> PacketView<B> {
    /// Parse `buf` as an Ethernet II frame (VLAN tags allowed) carrying IPv4 or IPv6.
    /// Without a UDP or TCP header (ICMP, a non-first fragment) the ports are 0 and the payload is the
    /// IP payload.
    pub fn new_checked(buf: B) -> Result<PacketView<B>, WireError> {
        let data = buf.as_ref();
        let sliced = SlicedPacket::from_ethernet(data)?;
        let (l3, ip) = match &sliced.net {
            Some(NetSlice::Ipv4(ip)) => {
                let h = ip.header();
                (L3::V4, (h.slice(), IpAddr::V4(h.source_addr()), IpAddr::V4(h.destination_addr())))
            }
            Some(NetSlice::Ipv6(ip)) => {
                let h = ip.header();
                (L3::V6, (h.slice(), IpAddr::V6(h.source_addr()), IpAddr::V6(h.destination_addr())))
            }
            _ => return Err(WireError::NotIp),
        };
        let payload = sliced.net.as_ref().and_then(|n| n.ip_payload_ref()).ok_or(WireError::NotIp)?;
        let offsets =
            PacketView::from_slices(data, l3, ip, (payload.ip_number.0, payload.payload), sliced.transport.as_ref());
        drop(sliced);
        Ok(offsets.with_buf(buf))
    }

    /// Parse the headers of a `wire_len`-byte frame of which `buf` holds only the first bytes, the rest
    /// being in a second segment: nicmem's header/data split (§4.1) leaves the headers in host memory and
    /// the payload in NIC memory. Every header must be in `buf`, and the frame the IP header announces
    /// must fit `wire_len`; the view's payload is the part of the L4 payload that `buf` holds.
    pub fn new_checked_head(buf: B, wire_len: usize) -> Result<PacketView<B>, WireError> {
        let data = buf.as_ref();
        if wire_len < data.len() {
            return Err(WireError::Malformed(format!(
                "a {wire_len}-byte frame cannot start with {} bytes",
                data.len()
            )));
        }
        let sliced = LaxSlicedPacket::from_ethernet(data).map_err(|e| WireError::Truncated {
            layer: e.layer.to_string(),
            needed: e.required_len,
            len: e.len,
            offset: e.layer_start_offset,
        })?;
        if let Some((e, _)) = sliced.stop_err {
            return Err(e.into());
        }
        let (l3, ip, end) = match &sliced.net {
            Some(LaxNetSlice::Ipv4(ip)) => {
                let h = ip.header();
                let ends = h.slice().as_ptr() as usize - data.as_ptr() as usize + usize::from(h.total_len());
                (L3::V4, (h.slice(), IpAddr::V4(h.source_addr()), IpAddr::V4(h.destination_addr())), ends)
            }
            Some(LaxNetSlice::Ipv6(ip)) => {
                let h = ip.header();
                let ends = h.slice().as_ptr() as usize - data.as_ptr() as usize + 40 + usize::from(h.payload_length());
                (L3::V6, (h.slice(), IpAddr::V6(h.source_addr()), IpAddr::V6(h.destination_addr())), ends)
            }
            _ => return Err(WireError::NotIp),
        };
        if end > wire_len {
            return Err(WireError::Malformed(format!(
                "the IP packet ends at byte {end}, past the {wire_len}-byte frame"
            )));
        }
        let payload = sliced.net.as_ref().and_then(|n| n.ip_payload_ref()).ok_or(WireError::NotIp)?;
        let proto = payload.ip_number.0;
        if matches!(proto, 6 | 17) && sliced.transport.is_none() && !payload.fragmented {
            let offset = payload.payload.as_ptr() as usize - data.as_ptr() as usize;
            let needed = if proto == 6 { 20 } else { 8 };
            let layer = if proto == 6 { "TCP header" } else { "UDP header" };
            return Err(WireError::Truncated { layer: layer.into(), needed, len: data.len() - offset, offset });
        }
        let offsets = PacketView::from_slices(data, l3, ip, (proto, payload.payload), sliced.transport.as_ref());
        drop(sliced);
        Ok(offsets.with_buf(buf))
    }

    /// The flow this frame belongs to.
    pub fn five_tuple(&self) -> &FiveTuple {
        &self.at.tuple
    }

    /// IPv4 or IPv6.
    pub fn l3(&self) -> L3 {
        self.at.l3
    }

    /// Offset of the IP header in the frame.
    pub fn l3_offset(&self) -> usize {
        self.at.l3_off
    }

    /// Offset of the L4 (UDP/TCP) header, or of the IP payload when there is none.
    pub fn l4_offset(&self) -> usize {
        self.at.l4_off
    }

    /// Offset of the L4 payload.
    pub fn payload_offset(&self) -> usize {
        self.at.payload_off
    }

    /// The L4 payload (Ethernet padding excluded: the IP and UDP length fields bound it).
    pub fn payload(&self) -> &[u8] {
        &self.buf.as_ref()[self.at.payload_off..self.at.payload_end]
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
        &mut self.buf.as_mut()[self.at.payload_off..self.at.payload_end]
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

    #[test]
    fn a_head_without_every_header_or_longer_than_its_frame_is_an_error() {
        let frame = build_frame(&spec(L4Proto::Tcp, false), &[]).unwrap();
        match PacketView::new_checked_head(&frame[..40], frame.len()) {
            Err(WireError::Truncated { offset: 34, needed: 20, .. }) => {}
            other => panic!("expected a truncated TCP header, got {other:?}"),
        }
        assert!(matches!(PacketView::new_checked_head(&frame[..64], 63), Err(WireError::Malformed(_))));
        // The IP header announces more than the two segments hold.
        assert!(matches!(PacketView::new_checked_head(&frame[..64], 100), Err(WireError::Malformed(_))));
        let whole = PacketView::new_checked_head(&frame[..], frame.len()).unwrap();
        assert_eq!(whole.payload(), PacketView::new_checked(&frame[..]).unwrap().payload());
    }

    proptest! {
        #[test]
        fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..200), extra in 0usize..2000) {
            let _ = PacketView::new_checked(&bytes[..]);
            let _ = PacketView::new_checked_head(&bytes[..], bytes.len() + extra);
        }

        /// A frame split anywhere after its headers parses as the whole frame does, its payload cut short.
        #[test]
        fn a_split_frame_parses_like_the_whole(udp in any::<bool>(), v6 in any::<bool>(), len in 0usize..1400, cut in 0usize..1500) {
            let proto = if udp { L4Proto::Udp } else { L4Proto::Tcp };
            let s = FrameSpec { frame_len: 128 + len, ..spec(proto, v6) };
            let frame = build_frame(&s, &[9u8; 32]).unwrap();
            let whole = PacketView::new_checked(&frame[..]).unwrap();
            let cut = whole.payload_offset() + cut % (frame.len() - whole.payload_offset() + 1);
            let head = PacketView::new_checked_head(&frame[..cut], frame.len()).unwrap();
            prop_assert_eq!(head.five_tuple(), whole.five_tuple());
            prop_assert_eq!((head.l3(), head.l3_offset(), head.l4_offset()), (whole.l3(), whole.l3_offset(), whole.l4_offset()));
            prop_assert_eq!(head.payload_offset(), whole.payload_offset());
            let n = head.payload().len();
            prop_assert_eq!(head.payload(), &whole.payload()[..n]);
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
