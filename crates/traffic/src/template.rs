//! Per-flow frame templates: the fast path of the generator.
//!
//! Headers are built once per IP version and protocol (with `wire::build_frame`, [`Templates`]); a
//! flow's template is that base with the flow's addresses and ports written in, and a packet is then
//! the template copied into the caller's buffer, a zeroed payload, the [`Stamp`], and patched length
//! fields and checksums. Checksums are computed incrementally from partial sums (RFC 1071
//! one's-complement sums, which add word by word), so a packet costs a copy and a handful of additions,
//! not a header build, and a million flows need no million headers.

use wire::build::build_frame;
use wire::frame::{FCS_LEN, MIN_FRAME};
use wire::stamp::STAMP_LEN;
use wire::{FiveTuple, FrameSpec, L4Proto, Stamp};

const ETH: usize = 14;
/// Longest header a template holds: Ethernet, IPv6, TCP.
const MAX_HEADER: usize = ETH + 40 + 20;

/// The headers of one flow plus what is needed to patch them for any frame length.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Template {
    header: [u8; MAX_HEADER],
    header_len: usize,
    l4_off: usize,
    v4: bool,
    udp: bool,
    /// Sum of the IPv4 header words with total length and checksum zeroed.
    ip_sum: u32,
    /// Sum of the pseudo-header addresses and protocol and the L4 header words, with the L4 length
    /// and checksum fields zeroed.
    l4_sum: u32,
}

/// Smallest frame (FCS included) that carries a flow's headers and a stamp.
pub fn min_frame_len(tuple: &FiveTuple) -> usize {
    FrameSpec { tuple: *tuple, frame_len: 0 }.header_len() + STAMP_LEN + FCS_LEN
}

/// The length (FCS included) of a frame with `header_len` bytes of headers carrying a body of `body_len`
/// bytes and the stamp as trailer: at least the Ethernet minimum.
pub fn body_frame_len(header_len: usize, body_len: usize) -> usize {
    (header_len + body_len + STAMP_LEN + FCS_LEN).max(MIN_FRAME)
}

impl Template {
    /// The template of a UDP or TCP flow.
    pub fn new(tuple: &FiveTuple) -> Result<Template, String> {
        let spec = FrameSpec { tuple: *tuple, frame_len: min_frame_len(tuple).max(wire::frame::MIN_FRAME) };
        let frame = build_frame(&spec, &[])?;
        let header_len = spec.header_len();
        let v4 = tuple.src.is_ipv4();
        let udp = tuple.proto == L4Proto::Udp.number();
        let l4_off = if v4 { ETH + 20 } else { ETH + 40 };
        let mut header = [0u8; MAX_HEADER];
        header[..header_len].copy_from_slice(&frame[..header_len]);
        let zero = |h: &mut [u8; MAX_HEADER], at: usize| h[at..at + 2].fill(0);
        if v4 {
            zero(&mut header, ETH + 2);
            zero(&mut header, ETH + 10);
        } else {
            zero(&mut header, ETH + 4);
        }
        if udp {
            zero(&mut header, l4_off + 4);
            zero(&mut header, l4_off + 6);
        } else {
            zero(&mut header, l4_off + 16);
        }
        let ip_sum = if v4 { sum(&header[ETH..l4_off]) } else { 0 };
        let l4_sum = sum(&header[addresses(v4)]) + u32::from(tuple.proto) + sum(&header[l4_off..header_len]);
        Ok(Template { header, header_len, l4_off, v4, udp, ip_sum, l4_sum })
    }

    /// Write a frame of `frame_len` bytes (FCS included, so `frame_len - 4` bytes are written) carrying
    /// `stamp` at the start of a zeroed payload into `buf`; returns the bytes written. `frame_len` must fit
    /// headers and stamp ([`min_frame_len`]) and `buf` must hold `frame_len - 4` bytes.
    #[inline]
    pub fn write(&self, frame_len: usize, stamp: Stamp, buf: &mut [u8]) -> usize {
        self.write_over(frame_len, stamp, buf, usize::MAX)
    }

    /// [`Template::write`] into a buffer whose bytes from `zero_from` on are known to be zero, so only
    /// the payload bytes before `zero_from` are cleared; the `frame_len - 4` bytes written are the same.
    #[inline]
    pub fn write_over(&self, frame_len: usize, stamp: Stamp, buf: &mut [u8], zero_from: usize) -> usize {
        let len = frame_len - FCS_LEN;
        let payload = self.head(&mut buf[..len]);
        let mut s = [0u8; STAMP_LEN];
        let _ = stamp.write(&mut s);
        payload[..STAMP_LEN].copy_from_slice(&s);
        let dirty_end = zero_from.saturating_sub(self.header_len).min(payload.len());
        if let Some(rest) = payload.get_mut(STAMP_LEN..dirty_end) {
            rest.fill(0);
        }
        self.patch(&mut buf[..len], sum(&s))
    }

    /// Bytes of headers before the payload.
    pub fn header_len(&self) -> usize {
        self.header_len
    }

    /// Write a frame whose L4 payload is `body`, zeros up to the Ethernet minimum, and `stamp` as its
    /// trailer (the last [`STAMP_LEN`] bytes of the L4 payload) into `buf`; returns the bytes written.
    /// `buf` must hold [`Template::body_frame_len`] - 4 bytes.
    pub fn write_body(&self, body: &[u8], stamp: Stamp, buf: &mut [u8]) -> usize {
        let len = self.body_frame_len(body.len()) - FCS_LEN;
        let payload = self.head(&mut buf[..len]);
        let (body_out, rest) = payload.split_at_mut(body.len());
        body_out.copy_from_slice(body);
        let (zeros, trailer) = rest.split_at_mut(rest.len() - STAMP_LEN);
        zeros.fill(0);
        let _ = stamp.write(trailer);
        let payload_sum = sum(&buf[self.header_len..len]);
        self.patch(&mut buf[..len], payload_sum)
    }

    /// The length (FCS included) of the frame [`Template::write_body`] writes for a body of `body_len`
    /// bytes ([`body_frame_len`]).
    pub fn body_frame_len(&self, body_len: usize) -> usize {
        body_frame_len(self.header_len, body_len)
    }

    /// Copy the headers into `frame` (the frame without FCS); returns its payload.
    #[inline]
    fn head<'b>(&self, frame: &'b mut [u8]) -> &'b mut [u8] {
        let (head, payload) = frame.split_at_mut(self.header_len);
        head.copy_from_slice(&self.header[..self.header_len]);
        payload
    }

    /// Patch the length fields and checksums of `buf` (the frame without FCS) whose payload words sum to
    /// `payload_sum`; returns its length.
    #[inline]
    fn patch(&self, buf: &mut [u8], payload_sum: u32) -> usize {
        let len = buf.len();
        let l4_len = (len - self.l4_off) as u16;
        if self.v4 {
            let total = (len - ETH) as u16;
            put(buf, ETH + 2, total);
            put(buf, ETH + 10, !fold(self.ip_sum + u32::from(total)));
        } else {
            put(buf, ETH + 4, l4_len);
        }
        let mut l4 = self.l4_sum + u32::from(l4_len) + payload_sum;
        if self.udp {
            put(buf, self.l4_off + 4, l4_len);
            l4 += u32::from(l4_len);
            let c = !fold(l4);
            // RFC 768: a computed checksum of zero is sent as all ones.
            put(buf, self.l4_off + 6, if c == 0 { 0xffff } else { c });
        } else {
            put(buf, self.l4_off + 16, !fold(l4));
        }
        len
    }
}

/// The template of any UDP or TCP flow, from one base per IP version and protocol built with
/// zero addresses and ports: [`Templates::of`] writes a flow's into its base and adds their words to the
/// base's sums, which gives what [`Template::new`] builds for the flow.
#[derive(Debug, Clone)]
pub struct Templates {
    /// Indexed by [`Templates::kind`]: IPv4 UDP, IPv4 TCP, IPv6 UDP, IPv6 TCP.
    bases: [Template; 4],
}

impl Default for Templates {
    fn default() -> Self {
        Self::new()
    }
}

impl Templates {
    /// The four bases.
    pub fn new() -> Templates {
        let v4 = std::net::IpAddr::from([0u8; 4]);
        let v6 = std::net::IpAddr::from([0u8; 16]);
        let base = |ip, proto: L4Proto| {
            let t = FiveTuple { src: ip, dst: ip, src_port: 0, dst_port: 0, proto: proto.number() };
            Template::new(&t).expect("a UDP or TCP flow of one address family")
        };
        Templates {
            bases: [base(v4, L4Proto::Udp), base(v4, L4Proto::Tcp), base(v6, L4Proto::Udp), base(v6, L4Proto::Tcp)],
        }
    }

    fn kind(tuple: &FiveTuple) -> usize {
        usize::from(!tuple.src.is_ipv4()) * 2 + usize::from(tuple.proto == L4Proto::Tcp.number())
    }

    /// Whether [`Templates::of`] takes `tuple`: UDP or TCP, both addresses of one family.
    pub fn takes(tuple: &FiveTuple) -> bool {
        L4Proto::from_number(tuple.proto).is_some() && tuple.src.is_ipv4() == tuple.dst.is_ipv4()
    }

    /// The template of `tuple`, which [`Templates::takes`].
    #[inline]
    pub fn of(&self, tuple: &FiveTuple) -> Template {
        use std::net::IpAddr::{V4, V6};
        debug_assert!(Self::takes(tuple), "no template for {tuple}");
        let mut t = self.bases[Self::kind(tuple)].clone();
        let at = addresses(t.v4);
        let (src, dst) = t.header[at.clone()].split_at_mut(at.len() / 2);
        match (tuple.src, tuple.dst) {
            (V4(s), V4(d)) => {
                src.copy_from_slice(&s.octets());
                dst.copy_from_slice(&d.octets());
            }
            (V6(s), V6(d)) => {
                src.copy_from_slice(&s.octets());
                dst.copy_from_slice(&d.octets());
            }
            _ => unreachable!("flow {tuple} mixes IPv4 and IPv6 addresses"),
        }
        put(&mut t.header, t.l4_off, tuple.src_port);
        put(&mut t.header, t.l4_off + 2, tuple.dst_port);
        let addrs = sum(&t.header[at]);
        if t.v4 {
            t.ip_sum += addrs;
        }
        t.l4_sum += addrs + u32::from(tuple.src_port) + u32::from(tuple.dst_port);
        t
    }
}

/// Where a header holds the source and destination addresses (both in the L4 checksum's pseudo-header).
fn addresses(v4: bool) -> std::ops::Range<usize> {
    if v4 { ETH + 12..ETH + 20 } else { ETH + 8..ETH + 40 }
}

/// One's-complement sum of big-endian 16-bit words (an odd last byte is padded with zero).
#[inline]
fn sum(bytes: &[u8]) -> u32 {
    let words = bytes.chunks_exact(2);
    let odd = words.remainder().first().map_or(0, |&b| u32::from(b) << 8);
    words.map(|c| u32::from(u16::from_be_bytes([c[0], c[1]]))).sum::<u32>() + odd
}

fn fold(mut s: u32) -> u16 {
    while s > 0xffff {
        s = (s & 0xffff) + (s >> 16);
    }
    s as u16
}

#[inline]
fn put(buf: &mut [u8], at: usize, v: u16) {
    buf[at..at + 2].copy_from_slice(&v.to_be_bytes());
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::net::IpAddr;

    fn tuple(v6: bool, tcp: bool, a: u32, sp: u16) -> FiveTuple {
        let (src, dst): (IpAddr, IpAddr) = if v6 {
            (IpAddr::V6((0x2001_0db8u128 << 96 | u128::from(a)).into()), "2001:db8:ffff::1".parse().unwrap())
        } else {
            (IpAddr::V4(a.into()), "10.255.0.1".parse().unwrap())
        };
        FiveTuple { src, dst, src_port: sp, dst_port: 5001, proto: if tcp { 6 } else { 17 } }
    }

    proptest! {
        /// A flow's template made from its base is the one built for it.
        #[test]
        fn a_base_with_the_flow_written_in_is_the_flows_template(v6: bool, tcp: bool, s: u128, d: u128, sp: u16, dp: u16) {
            let (src, dst): (IpAddr, IpAddr) =
                if v6 { (IpAddr::V6(s.into()), IpAddr::V6(d.into())) } else { (IpAddr::V4((s as u32).into()), IpAddr::V4((d as u32).into())) };
            let t = FiveTuple { src, dst, src_port: sp, dst_port: dp, proto: if tcp { 6 } else { 17 } };
            prop_assert!(Templates::takes(&t));
            prop_assert_eq!(Templates::new().of(&t), Template::new(&t).unwrap());
        }

        /// The fast path writes exactly what the reference builder (etherparse, full checksums) writes.
        #[test]
        fn matches_the_reference_builder(v6: bool, tcp: bool, a: u32, sp: u16, seq: u64, tx: u64, extra in 0usize..1500) {
            let t = tuple(v6, tcp, a, sp);
            let frame_len = (min_frame_len(&t).max(64) + extra).min(1518);
            let stamp = Stamp { seq, tx_ns: tx };
            let mut s = [0u8; STAMP_LEN];
            stamp.write(&mut s).unwrap();
            let want = build_frame(&FrameSpec { tuple: t, frame_len }, &s).unwrap();
            let mut buf = [0xaau8; 1514];
            let n = Template::new(&t).unwrap().write(frame_len, stamp, &mut buf);
            prop_assert_eq!(&buf[..n], &want[..]);
        }

        /// A body with a stamp trailer: the same bytes as the reference builder given body and stamp.
        #[test]
        fn body_matches_the_reference_builder(v6: bool, tcp: bool, a: u32, body in proptest::collection::vec(any::<u8>(), 0..1400)) {
            let t = tuple(v6, tcp, a, 7);
            let stamp = Stamp { seq: 3, tx_ns: 9 };
            let tpl = Template::new(&t).unwrap();
            let frame_len = tpl.body_frame_len(body.len());
            let mut payload = body.clone();
            payload.resize(frame_len - FCS_LEN - FrameSpec { tuple: t, frame_len }.header_len(), 0);
            let at = payload.len() - STAMP_LEN;
            stamp.write(&mut payload[at..]).unwrap();
            let want = build_frame(&FrameSpec { tuple: t, frame_len }, &payload).unwrap();
            let mut buf = [0xaau8; 1600];
            let n = tpl.write_body(&body, stamp, &mut buf);
            prop_assert_eq!(&buf[..n], &want[..]);
            prop_assert_eq!(Stamp::read(&buf[n - STAMP_LEN..n]), Some(stamp));
        }
    }
}
