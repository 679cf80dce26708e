//! What several apps share about packets: parsing with the probe told, the IPv4 flow key, and the hash.

use ifaces::probe::Access;
use ifaces::{Packet, Probe};
use std::net::{IpAddr, Ipv4Addr};
pub use traffic::hash::{hash_bytes, mix};
use wire::{FiveTuple, PacketView, WireError};

/// Cycles to parse Ethernet, IP and L4 headers: etherparse's slicing is about 30 bounds checks and
/// branches on already-loaded header bytes.
const PARSE_WORK: u32 = 30;

/// Parse `pkt`, reporting the read of its headers (up to the L4 payload) to the probe. A malformed frame
/// is reported as a read of its first line, as the parser gives up somewhere within it. A packet whose
/// payload continues in a second segment (nicmem's header/data split, §4.1) is parsed from its first: the
/// view's payload is the part there.
pub fn parse<'a, P: Probe>(p: &mut P, pkt: &'a mut Packet<'_>) -> Result<PacketView<&'a mut [u8]>, WireError> {
    let addr = pkt.addr();
    let (len, wire_len) = (pkt.len(), pkt.wire_len());
    p.work(PARSE_WORK);
    let v = if wire_len > len {
        PacketView::new_checked_head(&mut pkt[..], wire_len)
    } else {
        PacketView::new_checked(&mut pkt[..])
    };
    let read = v.as_ref().map_or(len.min(64), |v| v.payload_offset());
    p.touch(addr, read, Access::Read);
    v
}

/// An IPv4 UDP/TCP flow: the key of the NAT, LB and Maglev flow tables (16 bytes with padding).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[repr(C)]
pub struct FlowKey {
    /// Source address.
    pub src: u32,
    /// Destination address.
    pub dst: u32,
    /// Source port.
    pub src_port: u16,
    /// Destination port.
    pub dst_port: u16,
    /// IP protocol number.
    pub proto: u8,
}

impl FlowKey {
    /// The key of an IPv4 UDP or TCP flow; `None` for IPv6 or other protocols.
    pub fn from_tuple(t: &FiveTuple) -> Option<FlowKey> {
        match (t.src, t.dst, t.proto) {
            (IpAddr::V4(s), IpAddr::V4(d), 6 | 17) => Some(FlowKey {
                src: u32::from(s),
                dst: u32::from(d),
                src_port: t.src_port,
                dst_port: t.dst_port,
                proto: t.proto,
            }),
            _ => None,
        }
    }

    /// The key of a parsed frame that has a complete UDP or TCP header over IPv4.
    pub fn from_view<B: AsRef<[u8]>>(v: &PacketView<B>) -> Option<FlowKey> {
        wire::rewrite::l4_checksum_offset(v).and_then(|_| FlowKey::from_tuple(v.five_tuple()))
    }

    /// The key of the reply direction.
    pub fn reversed(&self) -> FlowKey {
        FlowKey { src: self.dst, dst: self.src, src_port: self.dst_port, dst_port: self.src_port, proto: self.proto }
    }

    /// Source address.
    pub fn src_addr(&self) -> Ipv4Addr {
        Ipv4Addr::from(self.src)
    }

    /// A 64-bit hash of the key.
    #[inline]
    pub fn hash(&self) -> u64 {
        let a = (u64::from(self.src) << 32) | u64::from(self.dst);
        let b = (u64::from(self.src_port) << 48) | (u64::from(self.dst_port) << 32) | u64::from(self.proto);
        mix(a, b)
    }
}

/// Cycles to hash a flow key: two 64-bit multiplies and a few shifts and XORs ([`mix`]).
pub const HASH_WORK: u32 = 8;

/// Hash any 5-tuple (IPv4 or IPv6).
pub fn tuple_hash(t: &FiveTuple) -> u64 {
    let octets = |a: IpAddr| match a {
        IpAddr::V4(a) => a.to_ipv6_mapped().octets(),
        IpAddr::V6(a) => a.octets(),
    };
    let mut buf = [0u8; 37];
    buf[..16].copy_from_slice(&octets(t.src));
    buf[16..32].copy_from_slice(&octets(t.dst));
    buf[32..34].copy_from_slice(&t.src_port.to_be_bytes());
    buf[34..36].copy_from_slice(&t.dst_port.to_be_bytes());
    buf[36] = t.proto;
    hash_bytes(&buf, 0)
}

/// Cycles to hash `len` bytes with [`hash_bytes`]: one [`mix`] (about 8 cycles) per 8 bytes, plus two.
pub fn hash_bytes_work(len: usize) -> u32 {
    8 * (len as u32 / 8 + 2)
}

/// Report the write of a NAT/LB header rewrite: from the IPv4 checksum through the L4 checksum (the
/// addresses, the ports and both checksums; one or two cache lines).
pub fn touch_rewrite<P: Probe, B: AsRef<[u8]>>(p: &mut P, addr: usize, v: &PacketView<B>) {
    let start = v.l3_offset() + 10;
    let end = wire::rewrite::l4_checksum_offset(v).map_or(v.l4_offset(), |c| v.l4_offset() + c + 2);
    p.touch(addr + start, end.saturating_sub(start), Access::Write);
}
