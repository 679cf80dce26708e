//! In-place header rewrites on a parsed frame, keeping every checksum valid by incremental update
//! (RFC 1624): IPv4 addresses (IPv4 header and UDP/TCP pseudo-header), ports, TTL, MAC addresses.
//!
//! The rewrites keep header lengths, so the view's offsets stay valid; its cached [`PacketView::five_tuple`]
//! does not follow them (parse again to see the new tuple).

use crate::checksum::{self, update16, update32};
use crate::view::{L3, PacketView};
use std::net::{IpAddr, Ipv4Addr};

/// Which end of a flow a rewrite applies to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    /// The source address or port.
    Src,
    /// The destination address or port.
    Dst,
}

/// Why a rewrite cannot be applied (the frame is left unchanged).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum RewriteError {
    /// The frame is not IPv4.
    #[error("not an IPv4 packet")]
    NotIpv4,
    /// The frame has no complete UDP or TCP header (another protocol, or a non-first fragment).
    #[error("no UDP or TCP header")]
    NoTransport,
    /// The TTL is already 0 or 1: the packet must not be forwarded (RFC 1812 §5.3.1).
    #[error("TTL expired")]
    TtlExpired,
}

/// Offset of the IPv4 header checksum within the header.
const IPV4_CSUM: usize = 10;

/// Offset of the L4 checksum within the UDP or TCP header, if the view has a complete one.
pub fn l4_checksum_offset<B: AsRef<[u8]>>(v: &PacketView<B>) -> Option<usize> {
    let hdr = v.payload_offset() - v.l4_offset();
    match v.five_tuple().proto {
        17 if hdr >= 8 => Some(6),
        6 if hdr >= 20 => Some(16),
        _ => None,
    }
}

fn read16(f: &[u8], at: usize) -> u16 {
    u16::from_be_bytes([f[at], f[at + 1]])
}

fn write16(f: &mut [u8], at: usize, v: u16) {
    f[at..at + 2].copy_from_slice(&v.to_be_bytes());
}

/// Apply a checksum update to the L4 checksum at `at` (`proto` 17 keeps a zero "no checksum" as zero and
/// never writes zero, RFC 768).
fn update_l4(f: &mut [u8], at: usize, proto: u8, update: impl FnOnce(u16) -> u16) {
    let old = read16(f, at);
    if proto == 17 && old == 0 {
        return;
    }
    let new = update(old);
    write16(f, at, if proto == 17 && new == 0 { 0xFFFF } else { new });
}

/// Set the IPv4 source or destination address, updating the IPv4 header checksum and, when the frame has a
/// UDP or TCP header, its checksum (the address is part of the pseudo-header).
pub fn set_ipv4_addr<B: AsRef<[u8]> + AsMut<[u8]>>(
    v: &mut PacketView<B>,
    side: Side,
    addr: Ipv4Addr,
) -> Result<(), RewriteError> {
    if v.l3() != L3::V4 {
        return Err(RewriteError::NotIpv4);
    }
    let l3 = v.l3_offset();
    let l4 = l4_checksum_offset(v).map(|o| v.l4_offset() + o);
    let proto = v.five_tuple().proto;
    let at = l3 + if side == Side::Src { 12 } else { 16 };
    let f = v.frame_mut();
    let old = u32::from_be_bytes([f[at], f[at + 1], f[at + 2], f[at + 3]]);
    let new = u32::from(addr);
    f[at..at + 4].copy_from_slice(&addr.octets());
    let ip_csum = update32(read16(f, l3 + IPV4_CSUM), old, new);
    write16(f, l3 + IPV4_CSUM, ip_csum);
    if let Some(c) = l4 {
        update_l4(f, c, proto, |s| update32(s, old, new));
    }
    Ok(())
}

/// Set the UDP or TCP source or destination port, updating the L4 checksum.
pub fn set_port<B: AsRef<[u8]> + AsMut<[u8]>>(
    v: &mut PacketView<B>,
    side: Side,
    port: u16,
) -> Result<(), RewriteError> {
    let csum = l4_checksum_offset(v).ok_or(RewriteError::NoTransport)?;
    let l4 = v.l4_offset();
    let proto = v.five_tuple().proto;
    let at = l4 + if side == Side::Src { 0 } else { 2 };
    let f = v.frame_mut();
    let old = read16(f, at);
    write16(f, at, port);
    update_l4(f, l4 + csum, proto, |s| update16(s, old, port));
    Ok(())
}

/// Decrement the IPv4 TTL, updating the header checksum; returns the new TTL. A TTL of 0 or 1 is an error
/// and the frame is left unchanged (RFC 1812 §5.3.1).
pub fn decrement_ttl<B: AsRef<[u8]> + AsMut<[u8]>>(v: &mut PacketView<B>) -> Result<u8, RewriteError> {
    if v.l3() != L3::V4 {
        return Err(RewriteError::NotIpv4);
    }
    let l3 = v.l3_offset();
    let f = v.frame_mut();
    let ttl = f[l3 + 8];
    if ttl <= 1 {
        return Err(RewriteError::TtlExpired);
    }
    // TTL and protocol form one 16-bit word of the header.
    let old = read16(f, l3 + 8);
    f[l3 + 8] = ttl - 1;
    let new = read16(f, l3 + 8);
    let c = update16(read16(f, l3 + IPV4_CSUM), old, new);
    write16(f, l3 + IPV4_CSUM, c);
    Ok(ttl - 1)
}

/// Set the Ethernet source and destination MAC addresses (no checksum covers them).
pub fn set_macs(frame: &mut [u8], src: [u8; 6], dst: [u8; 6]) {
    if let Some(h) = frame.get_mut(..12) {
        h[..6].copy_from_slice(&dst);
        h[6..].copy_from_slice(&src);
    }
}

/// Recompute the IPv4 header checksum from scratch (after building or resizing a header).
pub fn fill_ipv4_checksum(frame: &mut [u8], l3: usize) {
    let Some(&vihl) = frame.get(l3) else { return };
    let end = l3 + usize::from(vihl & 0x0F) * 4;
    if frame.len() < end || end < l3 + 20 {
        return;
    }
    write16(frame, l3 + IPV4_CSUM, 0);
    let c = checksum::checksum(&frame[l3..end]);
    write16(frame, l3 + IPV4_CSUM, c);
}

/// Pseudo-header sum of the view's L4 segment (IPv4 or IPv6).
fn pseudo_sum<B: AsRef<[u8]>>(v: &PacketView<B>, l4_len: usize) -> u32 {
    let t = v.five_tuple();
    match (t.src, t.dst) {
        (IpAddr::V4(s), IpAddr::V4(d)) => checksum::ipv4_pseudo_sum(s.octets(), d.octets(), t.proto, l4_len as u16),
        (s, d) => {
            let v6 = |a: IpAddr| match a {
                IpAddr::V6(a) => a.octets(),
                IpAddr::V4(a) => a.to_ipv6_mapped().octets(),
            };
            let acc = checksum::sum(&v6(d), checksum::sum(&v6(s), 0));
            acc + (l4_len as u32 >> 16) + (l4_len as u32 & 0xFFFF) + u32::from(t.proto)
        }
    }
}

/// Recompute the UDP or TCP checksum of the view from scratch (after building a segment). Does nothing
/// without a complete UDP or TCP header.
pub fn fill_l4_checksum<B: AsRef<[u8]> + AsMut<[u8]>>(v: &mut PacketView<B>) {
    let Some(c) = l4_checksum_offset(v) else { return };
    let (l4, end) = (v.l4_offset(), v.payload_offset() + v.payload().len());
    let init = pseudo_sum(v, end - l4);
    let f = v.frame_mut();
    write16(f, l4 + c, 0);
    let mut csum = !checksum::fold(checksum::sum(&f[l4..end], init));
    if v.five_tuple().proto == 17 && csum == 0 {
        csum = 0xFFFF;
    }
    write16(v.frame_mut(), l4 + c, csum);
}

/// Whether the IPv4 header checksum (if IPv4) and the UDP/TCP checksum (if present and, for UDP, not 0)
/// verify. For tests and for apps that check what they receive.
pub fn checksums_valid<B: AsRef<[u8]>>(v: &PacketView<B>) -> bool {
    let f = v.frame();
    let l3 = v.l3_offset();
    if v.l3() == L3::V4 {
        let ihl = usize::from(f[l3] & 0x0F) * 4;
        if checksum::fold(checksum::sum(&f[l3..l3 + ihl], 0)) != 0xFFFF {
            return false;
        }
    }
    let Some(c) = l4_checksum_offset(v) else { return true };
    let (l4, end) = (v.l4_offset(), v.payload_offset() + v.payload().len());
    if v.five_tuple().proto == 17 && read16(f, l4 + c) == 0 {
        return true;
    }
    checksum::fold(checksum::sum(&f[l4..end], pseudo_sum(v, end - l4))) == 0xFFFF
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::build::{FrameSpec, build_frame};
    use crate::tuple::FiveTuple;
    use proptest::prelude::*;

    fn frame(proto: u8, len: usize) -> Vec<u8> {
        let tuple = FiveTuple {
            src: "10.0.0.1".parse().unwrap(),
            dst: "10.0.0.2".parse().unwrap(),
            src_port: 1000,
            dst_port: 2000,
            proto,
        };
        build_frame(&FrameSpec { tuple, frame_len: len }, b"hello, checksum").unwrap()
    }

    #[test]
    fn built_frames_verify_and_corruption_is_seen() {
        for proto in [6, 17] {
            let mut f = frame(proto, 128);
            assert!(checksums_valid(&PacketView::new_checked(&f[..]).unwrap()));
            let n = f.len();
            f[n - 1] ^= 0x55;
            assert!(!checksums_valid(&PacketView::new_checked(&f[..]).unwrap()));
        }
    }

    #[test]
    fn ttl_expiry_leaves_frame_unchanged() {
        let mut f = frame(17, 64);
        f[14 + 8] = 1;
        fill_ipv4_checksum(&mut f, 14);
        let before = f.clone();
        let mut v = PacketView::new_checked(&mut f[..]).unwrap();
        assert_eq!(decrement_ttl(&mut v), Err(RewriteError::TtlExpired));
        assert_eq!(f, before);
    }

    #[test]
    fn fill_restores_zeroed_checksums() {
        for proto in [6, 17] {
            let mut f = frame(proto, 200);
            let good = f.clone();
            f[14 + 10..14 + 12].fill(0);
            fill_ipv4_checksum(&mut f, 14);
            let mut v = PacketView::new_checked(&mut f[..]).unwrap();
            fill_l4_checksum(&mut v);
            assert_eq!(f, good);
        }
    }

    proptest! {
        #[test]
        fn rewrites_keep_checksums_valid(tcp in any::<bool>(), len in 80usize..300, src in any::<u32>(),
                                         dst in any::<u32>(), sp in any::<u16>(), dp in any::<u16>(),
                                         ttl in 2u8..=255) {
            let mut f = frame(if tcp { 6 } else { 17 }, len);
            f[14 + 8] = ttl;
            fill_ipv4_checksum(&mut f, 14);
            let mut v = PacketView::new_checked(&mut f[..]).unwrap();
            set_ipv4_addr(&mut v, Side::Src, Ipv4Addr::from(src)).unwrap();
            set_ipv4_addr(&mut v, Side::Dst, Ipv4Addr::from(dst)).unwrap();
            set_port(&mut v, Side::Src, sp).unwrap();
            set_port(&mut v, Side::Dst, dp).unwrap();
            prop_assert_eq!(decrement_ttl(&mut v), Ok(ttl - 1));
            let v = PacketView::new_checked(&f[..]).unwrap();
            prop_assert!(checksums_valid(&v));
            let t = v.five_tuple();
            prop_assert_eq!((t.src, t.dst, t.src_port, t.dst_port),
                            (IpAddr::from(Ipv4Addr::from(src)), IpAddr::from(Ipv4Addr::from(dst)), sp, dp));
            // The incremental result equals a full recomputation, bit for bit.
            let mut again = f.clone();
            fill_ipv4_checksum(&mut again, 14);
            let mut w = PacketView::new_checked(&mut again[..]).unwrap();
            fill_l4_checksum(&mut w);
            prop_assert_eq!(&again[..], &f[..]);
        }
    }
}
