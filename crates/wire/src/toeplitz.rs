//! The Toeplitz hash that NICs use for receive-side scaling (Microsoft RSS specification,
//! "RSS hashing functions" and "Verifying the RSS hash calculation").
//!
//! For every set bit of the input (most significant bit of the first byte first), the hash is XORed
//! with the 32 key bits starting at that bit position. [`Toeplitz`] precomputes, for each input byte
//! position and byte value, the XOR of the windows its set bits select, so a hash costs one table
//! lookup per input byte (36 for IPv6 with ports), as fast software RSS implementations do.

use crate::tuple::FiveTuple;
use std::net::IpAddr;

/// Length of an RSS secret key.
pub const KEY_LEN: usize = 40;
/// Longest hash input: IPv6 source and destination addresses plus two ports.
pub const MAX_INPUT: usize = 36;

/// A 40-byte RSS secret key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RssKey(pub [u8; KEY_LEN]);

impl RssKey {
    /// The key from the Microsoft RSS verification suite, the default of most NIC drivers.
    pub const MICROSOFT: RssKey = RssKey([
        0x6d, 0x5a, 0x56, 0xda, 0x25, 0x5b, 0x0e, 0xc2, 0x41, 0x67, 0x25, 0x3d, 0x43, 0xa3, 0x8f, 0xb0, 0xd0, 0xca,
        0x2b, 0xcb, 0xae, 0x7b, 0x30, 0xb4, 0x77, 0xcb, 0x2d, 0xa3, 0x80, 0x30, 0xf2, 0x0c, 0x6a, 0x42, 0xb7, 0x3b,
        0xbe, 0xac, 0x01, 0xfa,
    ]);

    /// A symmetric key (0x6d5a repeated; Woo and Park, "Scalable TCP session monitoring with symmetric
    /// receive-side scaling", 2012): both directions of a flow hash alike, so they reach the same queue.
    pub const SYMMETRIC: RssKey = RssKey([
        0x6d, 0x5a, 0x6d, 0x5a, 0x6d, 0x5a, 0x6d, 0x5a, 0x6d, 0x5a, 0x6d, 0x5a, 0x6d, 0x5a, 0x6d, 0x5a, 0x6d, 0x5a,
        0x6d, 0x5a, 0x6d, 0x5a, 0x6d, 0x5a, 0x6d, 0x5a, 0x6d, 0x5a, 0x6d, 0x5a, 0x6d, 0x5a, 0x6d, 0x5a, 0x6d, 0x5a,
        0x6d, 0x5a, 0x6d, 0x5a,
    ]);

    /// Parse a key written as 80 hex digits, optionally separated by ':' or spaces.
    pub fn from_hex(s: &str) -> Result<RssKey, String> {
        let digits: String = s.chars().filter(|c| !matches!(c, ':' | ' ' | '-')).collect();
        if digits.len() != 2 * KEY_LEN {
            return Err(format!(
                "an RSS key is {KEY_LEN} bytes ({} hex digits), got {} digits",
                2 * KEY_LEN,
                digits.len()
            ));
        }
        let mut key = [0u8; KEY_LEN];
        for (i, byte) in key.iter_mut().enumerate() {
            *byte = u8::from_str_radix(&digits[2 * i..2 * i + 2], 16)
                .map_err(|_| format!("'{}' is not a hex byte", &digits[2 * i..2 * i + 2]))?;
        }
        Ok(RssKey(key))
    }

    /// The 32-bit key window starting at bit `bit` (bit 0 = most significant bit of byte 0).
    fn window(&self, bit: usize) -> u32 {
        let byte = bit / 8;
        let mut w: u64 = 0;
        for i in 0..5 {
            w = (w << 8) | u64::from(*self.0.get(byte + i).unwrap_or(&0));
        }
        ((w << (bit % 8)) >> 8) as u32
    }
}

impl Default for RssKey {
    fn default() -> Self {
        RssKey::MICROSOFT
    }
}

/// Which header fields feed the hash (the NIC's RSS hash types).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RssFields {
    /// Source and destination addresses only (RSS "IPv4"/"IPv6" hash types).
    Ip,
    /// Addresses and, for TCP and UDP, ports (RSS "TCP/UDP over IPv4/IPv6"); the default of NIC drivers.
    #[default]
    IpPorts,
}

/// A Toeplitz hasher for one key, table-driven.
#[derive(Clone)]
pub struct Toeplitz {
    key: RssKey,
    /// `table[i][v]`: the hash contribution of byte value `v` at input position `i`.
    table: Box<[[u32; 256]; MAX_INPUT]>,
}

impl std::fmt::Debug for Toeplitz {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Toeplitz").field("key", &self.key).finish_non_exhaustive()
    }
}

impl Toeplitz {
    /// Precompute the tables for `key`.
    pub fn new(key: RssKey) -> Toeplitz {
        let mut table = Box::new([[0u32; 256]; MAX_INPUT]);
        for (pos, row) in table.iter_mut().enumerate() {
            let windows: [u32; 8] = std::array::from_fn(|b| key.window(pos * 8 + b));
            for (v, slot) in row.iter_mut().enumerate() {
                *slot = (0..8).filter(|b| v & (0x80 >> b) != 0).fold(0, |h, b| h ^ windows[b]);
            }
        }
        Toeplitz { key, table }
    }

    /// The key this hasher uses.
    pub fn key(&self) -> &RssKey {
        &self.key
    }

    /// Hash raw input bytes (at most [`MAX_INPUT`]; longer input is a caller bug and is cut).
    pub fn hash(&self, input: &[u8]) -> u32 {
        input.iter().zip(self.table.iter()).fold(0, |h, (&v, row)| h ^ row[usize::from(v)])
    }

    /// Hash a flow as the NIC does: source address, destination address, then (for [`RssFields::IpPorts`]
    /// and TCP/UDP) source and destination port, all in network byte order.
    pub fn hash_tuple(&self, t: &FiveTuple, fields: RssFields) -> u32 {
        let mut buf = [0u8; MAX_INPUT];
        let len = hash_input(t, fields, &mut buf);
        self.hash(&buf[..len])
    }
}

/// Serialise the hash input of `t` into `buf`, returning its length. Mixed address families hash the
/// IPv4 address as its IPv4-mapped IPv6 form.
pub fn hash_input(t: &FiveTuple, fields: RssFields, buf: &mut [u8; MAX_INPUT]) -> usize {
    let mut len = match (t.src, t.dst) {
        (IpAddr::V4(s), IpAddr::V4(d)) => {
            buf[..4].copy_from_slice(&s.octets());
            buf[4..8].copy_from_slice(&d.octets());
            8
        }
        (s, d) => {
            buf[..16].copy_from_slice(&to_v6(s));
            buf[16..32].copy_from_slice(&to_v6(d));
            32
        }
    };
    if fields == RssFields::IpPorts && matches!(t.proto, 6 | 17) {
        buf[len..len + 2].copy_from_slice(&t.src_port.to_be_bytes());
        buf[len + 2..len + 4].copy_from_slice(&t.dst_port.to_be_bytes());
        len += 4;
    }
    len
}

fn to_v6(a: IpAddr) -> [u8; 16] {
    match a {
        IpAddr::V4(a) => a.to_ipv6_mapped().octets(),
        IpAddr::V6(a) => a.octets(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The bit-by-bit definition from the specification, as the oracle for the table-driven hash.
    fn reference(key: &RssKey, input: &[u8]) -> u32 {
        let mut h = 0;
        for (i, byte) in input.iter().enumerate() {
            for b in 0..8 {
                if byte & (0x80 >> b) != 0 {
                    h ^= key.window(i * 8 + b);
                }
            }
        }
        h
    }

    fn tuple(src: &str, sp: u16, dst: &str, dp: u16) -> FiveTuple {
        FiveTuple { src: src.parse().unwrap(), dst: dst.parse().unwrap(), src_port: sp, dst_port: dp, proto: 6 }
    }

    /// Microsoft RSS verification suite, IPv4: (destination, source, IPv4-only hash, with-TCP hash).
    const IPV4_SUITE: [(&str, u16, &str, u16, u32, u32); 5] = [
        ("161.142.100.80", 1766, "66.9.149.187", 2794, 0x323e8fc2, 0x51ccc178),
        ("65.69.140.83", 4739, "199.92.111.2", 14230, 0xd718262a, 0xc626b0ea),
        ("12.22.207.184", 38024, "24.19.198.95", 12898, 0xd2d0a5de, 0x5c2b394a),
        ("209.142.163.6", 2217, "38.27.205.30", 48228, 0x82989176, 0xafc7327f),
        ("202.188.127.2", 1303, "153.39.163.191", 44251, 0x5d1809c5, 0x10e828a2),
    ];

    /// Microsoft RSS verification suite, IPv6.
    const IPV6_SUITE: [(&str, u16, &str, u16, u32, u32); 3] = [
        ("3ffe:2501:200:3::1", 1766, "3ffe:2501:200:1fff::7", 2794, 0x2cc18cd5, 0x40207d3d),
        ("ff02::1", 4739, "3ffe:501:8::260:97ff:fe40:efab", 14230, 0x0f0c461c, 0xdde51bbf),
        ("fe80::200:f8ff:fe21:67cf", 38024, "3ffe:1900:4545:3:200:f8ff:fe21:67cf", 44251, 0x4b61e985, 0x02d1feef),
    ];

    #[test]
    fn microsoft_verification_suite() {
        let t = Toeplitz::new(RssKey::MICROSOFT);
        for (dst, dp, src, sp, ip_only, with_tcp) in IPV4_SUITE.iter().chain(IPV6_SUITE.iter()) {
            let ft = tuple(src, *sp, dst, *dp);
            assert_eq!(t.hash_tuple(&ft, RssFields::Ip), *ip_only, "{ft} IP only");
            assert_eq!(t.hash_tuple(&ft, RssFields::IpPorts), *with_tcp, "{ft} with ports");
        }
    }

    #[test]
    fn symmetric_key_hashes_both_directions_alike() {
        let t = Toeplitz::new(RssKey::SYMMETRIC);
        for (dst, dp, src, sp, ..) in IPV4_SUITE.iter().chain(IPV6_SUITE.iter()) {
            let ft = tuple(src, *sp, dst, *dp);
            assert_eq!(t.hash_tuple(&ft, RssFields::IpPorts), t.hash_tuple(&ft.reversed(), RssFields::IpPorts));
        }
    }

    #[test]
    fn key_from_hex() {
        let hex = "6d5a56da255b0ec24167253d43a38fb0d0ca2bcbae7b30b477cb2da38030f20c6a42b73bbeac01fa";
        assert_eq!(RssKey::from_hex(hex).unwrap(), RssKey::MICROSOFT);
        assert!(RssKey::from_hex("6d5a").unwrap_err().contains("40 bytes"));
        assert!(RssKey::from_hex(&"zz".repeat(40)).unwrap_err().contains("not a hex byte"));
    }

    proptest! {
        #[test]
        fn table_matches_definition(key in proptest::array::uniform32(any::<u8>()), tail in any::<[u8; 8]>(),
                                    input in proptest::collection::vec(any::<u8>(), 0..=MAX_INPUT)) {
            let mut k = [0u8; KEY_LEN];
            k[..32].copy_from_slice(&key);
            k[32..].copy_from_slice(&tail);
            let key = RssKey(k);
            prop_assert_eq!(Toeplitz::new(key).hash(&input), reference(&key, &input));
        }
    }
}
