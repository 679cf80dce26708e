//! The 5-tuple that identifies a flow.

use std::fmt;
use std::net::IpAddr;

/// Source and destination address and port plus IP protocol number: the key RSS hashes and flow tables use.
/// Ports are 0 for protocols without them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct FiveTuple {
    /// Source address.
    pub src: IpAddr,
    /// Destination address.
    pub dst: IpAddr,
    /// Source port (0 if the protocol has none).
    pub src_port: u16,
    /// Destination port (0 if the protocol has none).
    pub dst_port: u16,
    /// IP protocol number (6 TCP, 17 UDP).
    pub proto: u8,
}

impl FiveTuple {
    /// The tuple of the reply direction: addresses and ports swapped.
    pub fn reversed(&self) -> FiveTuple {
        FiveTuple { src: self.dst, dst: self.src, src_port: self.dst_port, dst_port: self.src_port, proto: self.proto }
    }
}

impl fmt::Display for FiveTuple {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let proto = match self.proto {
            6 => "tcp".to_string(),
            17 => "udp".to_string(),
            p => format!("ip{p}"),
        };
        let addr = |a: &IpAddr, p: u16| match a {
            IpAddr::V4(a) => format!("{a}:{p}"),
            IpAddr::V6(a) => format!("[{a}]:{p}"),
        };
        write!(f, "{proto} {} -> {}", addr(&self.src, self.src_port), addr(&self.dst, self.dst_port))
    }
}
