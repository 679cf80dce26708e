//! Link-layer normalisation: every trace packet rxlab hands on is an Ethernet II frame (without FCS).
//!
//! Captures made with `tcpdump -i any` or on tunnels carry other link-layer headers. They are rewritten
//! to Ethernet by replacing the capture's link header with a synthetic 14-byte Ethernet header: both
//! MAC addresses zero (the SLL source address is kept as the source MAC when it is 6 bytes long) and
//! the EtherType taken from the capture (SLL/SLL2 protocol field) or from the IP version nibble (raw IP).
//! A packet too short for its link header keeps its bytes behind an EtherType of 0, so it counts as
//! non-IP instead of failing the whole trace.

use std::fmt;

/// Length of the Ethernet II header rxlab puts in front of normalised packets.
pub const ETH_HEADER_LEN: usize = 14;
const ETHERTYPE_IPV4: u16 = 0x0800;
const ETHERTYPE_IPV6: u16 = 0x86dd;
const SLL_HEADER_LEN: usize = 16;
const SLL2_HEADER_LEN: usize = 20;

/// The link types rxlab reads, by their LINKTYPE_ number (tcpdump.org/linktypes.html).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LinkType {
    /// LINKTYPE_ETHERNET (1): frames are used as they are.
    Ethernet,
    /// LINKTYPE_RAW (101): a bare IPv4 or IPv6 packet, told apart by its version nibble.
    RawIp,
    /// LINKTYPE_IPV4 (228).
    Ipv4,
    /// LINKTYPE_IPV6 (229).
    Ipv6,
    /// LINKTYPE_LINUX_SLL (113), Linux "cooked" capture v1 (`tcpdump -i any` before libpcap 1.10).
    LinuxSll,
    /// LINKTYPE_LINUX_SLL2 (276), Linux "cooked" capture v2 (`tcpdump -i any` since libpcap 1.10).
    LinuxSll2,
}

/// What a reader says about a link type it does not support.
pub const SUPPORTED: &str = "Ethernet (1), raw IP (101, 228, 229) and Linux cooked capture SLL/SLL2 (113, 276)";

impl LinkType {
    /// The link type for a LINKTYPE_ number, if rxlab reads it.
    pub fn from_number(n: u32) -> Option<LinkType> {
        Some(match n {
            1 => LinkType::Ethernet,
            101 => LinkType::RawIp,
            228 => LinkType::Ipv4,
            229 => LinkType::Ipv6,
            113 => LinkType::LinuxSll,
            276 => LinkType::LinuxSll2,
            _ => return None,
        })
    }

    /// The LINKTYPE_ number.
    pub fn number(self) -> u32 {
        match self {
            LinkType::Ethernet => 1,
            LinkType::RawIp => 101,
            LinkType::Ipv4 => 228,
            LinkType::Ipv6 => 229,
            LinkType::LinuxSll => 113,
            LinkType::LinuxSll2 => 276,
        }
    }

    /// Rewrite a captured packet of this link type as an Ethernet frame. `orig_len` is the packet's
    /// length on the link before capture truncation; the adjusted length is returned alongside.
    pub fn to_ethernet(self, data: &[u8], orig_len: u32) -> (Vec<u8>, u32) {
        let header = match self {
            LinkType::Ethernet => return (data.to_vec(), orig_len),
            LinkType::Ipv4 => Some(([0; 6], ETHERTYPE_IPV4, 0)),
            LinkType::Ipv6 => Some(([0; 6], ETHERTYPE_IPV6, 0)),
            LinkType::RawIp => match data.first().map(|b| b >> 4) {
                Some(4) => Some(([0; 6], ETHERTYPE_IPV4, 0)),
                Some(6) => Some(([0; 6], ETHERTYPE_IPV6, 0)),
                _ => None,
            },
            LinkType::LinuxSll => sll(data),
            LinkType::LinuxSll2 => sll2(data),
        };
        let (src_mac, ethertype, header_len) = header.unwrap_or(([0; 6], 0, 0));
        let body = &data[header_len..];
        let mut frame = Vec::with_capacity(ETH_HEADER_LEN + body.len());
        frame.extend_from_slice(&[0; 6]);
        frame.extend_from_slice(&src_mac);
        frame.extend_from_slice(&ethertype.to_be_bytes());
        frame.extend_from_slice(body);
        let orig = (orig_len as usize + ETH_HEADER_LEN).saturating_sub(header_len);
        (frame, u32::try_from(orig).unwrap_or(u32::MAX))
    }
}

/// A link header's contribution to the Ethernet header: source MAC, EtherType, and its own length.
type LinkHeader = ([u8; 6], u16, usize);

/// Linux SLL: packet type (2), ARPHRD (2), address length (2), address (8), protocol (2).
fn sll(data: &[u8]) -> Option<LinkHeader> {
    let h = data.get(..SLL_HEADER_LEN)?;
    let alen = u16::from_be_bytes([h[4], h[5]]);
    Some((mac(alen == 6, &h[6..12]), u16::from_be_bytes([h[14], h[15]]), SLL_HEADER_LEN))
}

/// Linux SLL2: protocol (2), reserved (2), interface index (4), ARPHRD (2), packet type (1),
/// address length (1), address (8).
fn sll2(data: &[u8]) -> Option<LinkHeader> {
    let h = data.get(..SLL2_HEADER_LEN)?;
    Some((mac(h[11] == 6, &h[12..18]), u16::from_be_bytes([h[0], h[1]]), SLL2_HEADER_LEN))
}

fn mac(present: bool, bytes: &[u8]) -> [u8; 6] {
    let mut m = [0u8; 6];
    if present {
        m.copy_from_slice(bytes);
    }
    m
}

impl fmt::Display for LinkType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = match self {
            LinkType::Ethernet => "Ethernet",
            LinkType::RawIp => "raw IP",
            LinkType::Ipv4 => "raw IPv4",
            LinkType::Ipv6 => "raw IPv6",
            LinkType::LinuxSll => "Linux cooked (SLL)",
            LinkType::LinuxSll2 => "Linux cooked v2 (SLL2)",
        };
        write!(f, "{name} ({})", self.number())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn raw_ip_gets_an_ethernet_header() {
        let ip = [0x45u8, 0, 0, 20];
        let (f, orig) = LinkType::RawIp.to_ethernet(&ip, 20);
        assert_eq!(&f[12..14], &[0x08, 0x00]);
        assert_eq!(&f[14..], &ip);
        assert_eq!(orig, 34);
        let (f, _) = LinkType::Ipv6.to_ethernet(&[0x60], 1);
        assert_eq!(&f[12..14], &[0x86, 0xdd]);
    }

    #[test]
    fn sll_and_sll2_keep_protocol_and_source_mac() {
        let mut sll_pkt = vec![0, 0, 0, 1, 0, 6, 1, 2, 3, 4, 5, 6, 0, 0, 0x86, 0xdd];
        sll_pkt.push(0x60);
        let (f, orig) = LinkType::LinuxSll.to_ethernet(&sll_pkt, 17);
        assert_eq!(&f[6..14], &[1, 2, 3, 4, 5, 6, 0x86, 0xdd]);
        assert_eq!(&f[14..], &[0x60]);
        assert_eq!(orig, 15);
        let mut sll2_pkt = vec![0x08, 0x00, 0, 0, 0, 0, 0, 1, 0, 1, 0, 6, 9, 8, 7, 6, 5, 4, 0, 0];
        sll2_pkt.push(0x45);
        let (f, _) = LinkType::LinuxSll2.to_ethernet(&sll2_pkt, 21);
        assert_eq!(&f[6..14], &[9, 8, 7, 6, 5, 4, 0x08, 0x00]);
        assert_eq!(&f[14..], &[0x45]);
    }

    #[test]
    fn short_link_headers_become_non_ip_frames() {
        let (f, _) = LinkType::LinuxSll2.to_ethernet(&[1, 2, 3], 3);
        assert_eq!(&f[12..], &[0, 0, 1, 2, 3]);
        assert_eq!(LinkType::from_number(276), Some(LinkType::LinuxSll2));
        assert_eq!(LinkType::from_number(105), None);
    }
}
