//! `kvs`: a MICA-like key-value server (Lim et al., NSDI'14) as the papers run it (shRing §5.2, rxBisect
//! §6.1, nicmem §6.6, Ensō §7.3.3): GET/PUT requests in UDP packets ([`traffic::kvs::proto`]), keys
//! partitioned to cores by hash, each core serving its partition from a lossy index and circular log
//! ([`store`]) with nothing shared, and each response built as a new packet. [`traffic::kvs::client`]
//! generates the matching requests.
//!
//! A request may end with the traffic generator's [`Stamp`] as a trailer (the last 16 bytes of its
//! payload, after the request): the server copies it to the end of the response, as the harness's client
//! tag (MICA echoes an opaque field; Ensō's KVS benchmark echoes a timestamp, Ensō §7.3.3), so that the
//! engines measure latency and order of responses.
//!
//! Parameters: `log=SIZE` circular log per core (default 64MiB), `buckets=N` index buckets per core
//! (64 B each, default 256K).

pub mod store;

use crate::params::Reader;
use crate::{App, AppError, flow};
use ifaces::probe::Access;
use ifaces::{CoreCtx, Metrics, Packet, Probe};
use std::net::IpAddr;
use store::{KeyHash, Partition};
use traffic::kvs::proto::{HEADER_LEN, Op, Request, Status, write_response_header};
use wire::stamp::STAMP_LEN;
use wire::{PacketView, Stamp, checksum};

/// Ethernet, IPv4 (no options) and UDP header bytes of a response.
const RESPONSE_HEADERS: usize = 14 + 20 + 8;
/// Cycles to fill the response headers: about 20 stores and the IPv4 header checksum.
const HEADER_WORK: u32 = 30;

/// The key-value server of one core.
#[derive(Debug)]
pub struct Kvs {
    part: Partition,
    core: usize,
    cores: usize,
    stats: Stats,
}

#[derive(Debug, Default)]
struct Stats {
    gets: u64,
    hits: u64,
    puts: u64,
    misrouted: u64,
    malformed: u64,
    no_buffer: u64,
    oversize: u64,
}

impl Kvs {
    /// Build the server of core `core` of `cores` (see the module documentation for parameters).
    pub fn new(mut r: Reader<'_>, core: usize, cores: usize) -> Result<Kvs, AppError> {
        let log = r.bytes("log", 64 << 20, 4 << 10..=(1 << 40))? as usize;
        let buckets = r.count("buckets", 256 << 10, 1..=(1 << 32))? as usize;
        r.finish()?;
        Ok(Kvs { part: Partition::new(buckets, log), core, cores: cores.max(1), stats: Stats::default() })
    }

    /// Serve one request; the response's status and value.
    fn serve<'s, P: Probe>(&'s mut self, p: &mut P, req: &Request<'_>) -> (Status, &'s [u8]) {
        let h = KeyHash::of(p, req.key);
        if h.partition(self.cores) != self.core {
            // The client steers by partition (MICA §4.1); count requests that arrive elsewhere (e.g. when
            // RSS spreads a partition's flow to another core) and serve them from this core's partition.
            self.stats.misrouted += 1;
        }
        match req.op {
            Op::Get => {
                self.stats.gets += 1;
                match self.part.get(p, req.key, h) {
                    Some(v) => {
                        self.stats.hits += 1;
                        (Status::Hit, v)
                    }
                    None => (Status::Miss, &[]),
                }
            }
            Op::Put => {
                self.stats.puts += 1;
                if self.part.put(p, req.key, req.value, h) { (Status::Stored, &[]) } else { (Status::TooLarge, &[]) }
            }
        }
    }
}

/// The addresses of a request, to answer it: MACs, IPv4 addresses, UDP ports.
#[derive(Debug, Clone, Copy)]
struct Reply {
    mac: [u8; 12],
    src: [u8; 4],
    dst: [u8; 4],
    sport: u16,
    dport: u16,
}

/// Bytes a response's UDP payload takes: header, value and the echoed stamp if any.
fn response_payload_len(value: &[u8], stamp: Option<Stamp>) -> usize {
    HEADER_LEN + value.len() + stamp.map_or(0, |_| STAMP_LEN)
}

/// Fill `out` with the response frame to `to` carrying `status`, `id`, `value` and the request's `stamp`
/// as trailer; returns its length. `out` must hold [`RESPONSE_HEADERS`] + [`response_payload_len`] bytes
/// (and 60 for padding).
fn write_response(out: &mut [u8], to: &Reply, status: Status, id: u64, value: &[u8], stamp: Option<Stamp>) -> usize {
    let udp_len = 8 + response_payload_len(value, stamp);
    let ip_len = 20 + udp_len;
    // Ethernet: back to the sender.
    out[..6].copy_from_slice(&to.mac[6..]);
    out[6..12].copy_from_slice(&to.mac[..6]);
    out[12..14].copy_from_slice(&0x0800u16.to_be_bytes());
    let ip = &mut out[14..34];
    ip.copy_from_slice(&[0x45, 0, 0, 0, 0, 0, 0x40, 0, 64, 17, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
    ip[2..4].copy_from_slice(&(ip_len as u16).to_be_bytes());
    ip[12..16].copy_from_slice(&to.src);
    ip[16..20].copy_from_slice(&to.dst);
    let c = checksum::checksum(ip);
    ip[10..12].copy_from_slice(&c.to_be_bytes());
    let udp = &mut out[34..34 + udp_len];
    udp[..2].copy_from_slice(&to.sport.to_be_bytes());
    udp[2..4].copy_from_slice(&to.dport.to_be_bytes());
    udp[4..6].copy_from_slice(&(udp_len as u16).to_be_bytes());
    udp[6..8].fill(0);
    write_response_header(&mut udp[8..8 + HEADER_LEN], status, id, value.len() as u16);
    let (val, trailer) = udp[8 + HEADER_LEN..].split_at_mut(value.len());
    val.copy_from_slice(value);
    if let Some(s) = stamp {
        let _ = s.write(trailer);
    }
    let sum = checksum::sum(udp, checksum::ipv4_pseudo_sum(to.src, to.dst, 17, udp_len as u16));
    let c = match !checksum::fold(sum) {
        0 => 0xFFFF,
        c => c,
    };
    udp[6..8].copy_from_slice(&c.to_be_bytes());
    let len = 14 + ip_len;
    // Pad to the Ethernet minimum (60 B without FCS).
    out[len..len.max(60)].fill(0);
    len.max(60)
}

/// The request in a parsed frame, the addresses to answer it from and to, and its trailing stamp if any;
/// `None` unless it is a well-formed request over UDP/IPv4.
fn request_of<'v>(v: &'v PacketView<&mut [u8]>) -> Option<(Reply, Request<'v>, Option<Stamp>)> {
    let t = v.five_tuple();
    let (IpAddr::V4(src), IpAddr::V4(dst), 17) = (t.src, t.dst, t.proto) else { return None };
    let mut mac = [0u8; 12];
    mac.copy_from_slice(&v.frame()[..12]);
    // Answer from the address the request was sent to, to its sender.
    let reply = Reply { mac, src: dst.octets(), dst: src.octets(), sport: t.dst_port, dport: t.src_port };
    let payload = v.payload();
    let req = Request::parse(payload)?;
    let trailer = payload.len().checked_sub(STAMP_LEN).filter(|&at| at >= HEADER_LEN + req.key.len() + req.value.len());
    Some((reply, req, trailer.and_then(|at| Stamp::read(&payload[at..]))))
}

impl App for Kvs {
    fn process<'c, P: Probe>(
        &mut self,
        p: &mut P,
        core: &'c CoreCtx,
        rx: &mut Vec<Packet<'c>>,
        tx: &mut Vec<Packet<'c>>,
    ) {
        for mut pkt in rx.drain(..) {
            let v = flow::parse(p, &mut pkt);
            let Some((reply, req, stamp)) = v.as_ref().ok().and_then(request_of) else {
                self.stats.malformed += 1;
                continue;
            };
            p.touch(req.key.as_ptr() as usize - HEADER_LEN, HEADER_LEN + req.key.len() + req.value.len(), Access::Read);
            let Some(mut resp) = core.alloc_packet(p) else {
                self.stats.no_buffer += 1;
                continue;
            };
            let (status, v) = self.serve(p, &req);
            let need = (RESPONSE_HEADERS + response_payload_len(v, stamp)).max(60);
            if need > resp.capacity() {
                self.stats.oversize += 1;
                continue;
            }
            resp.set_len(need);
            let len = write_response(&mut resp, &reply, status, req.id, v, stamp);
            resp.set_len(len);
            p.work(HEADER_WORK + len as u32 / 8);
            p.touch(resp.addr(), len, Access::Write);
            tx.push(resp);
        }
    }

    fn metrics(&self) -> Metrics {
        let s = &self.stats;
        Metrics::from([
            ("gets".into(), s.gets as f64),
            ("get_hits".into(), s.hits as f64),
            ("puts".into(), s.puts as f64),
            ("misrouted".into(), s.misrouted as f64),
            ("drop_malformed".into(), s.malformed as f64),
            ("drop_no_buffer".into(), s.no_buffer as f64),
            ("drop_oversize".into(), s.oversize as f64),
        ])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::harness::TestCore;
    use crate::params::AppParams;
    use traffic::kvs::client::{Client, ClientConfig};
    use traffic::kvs::proto;

    fn server(core: usize, cores: usize) -> Kvs {
        Kvs::new(AppParams::parse("log=1MiB,buckets=4K").unwrap().reader("kvs"), core, cores).unwrap()
    }

    fn response(frame: &[u8]) -> (Status, u64, Vec<u8>) {
        let v = PacketView::new_checked(frame).unwrap();
        assert!(wire::rewrite::checksums_valid(&v), "response checksums");
        let (s, id, val) = proto::parse_response(v.payload()).unwrap();
        (s, id, val.to_vec())
    }

    #[test]
    fn echoes_the_trailing_stamp() {
        let client = Client::new(ClientConfig::default(), 1).unwrap();
        let stamp = Stamp { seq: 11, tx_ns: 12 };
        let (mut body, _) = client.request(Op::Put, 3, 4);
        body.resize(body.len() + STAMP_LEN, 0);
        let at = body.len() - STAMP_LEN;
        stamp.write(&mut body[at..]).unwrap();
        let plain = client.frame(Op::Put, 3, 4);
        let tuple = *PacketView::new_checked(&plain[..]).unwrap().five_tuple();
        let frame = wire::build_frame(&wire::FrameSpec { tuple, frame_len: 42 + body.len() + 4 }, &body).unwrap();
        let out = TestCore::new().run(&mut server(0, 1), &[frame, plain]);
        let payload = |f: &[u8]| PacketView::new_checked(f).unwrap().payload().to_vec();
        assert_eq!(response(&out[0]).0, Status::Stored);
        assert_eq!(Stamp::find(&payload(&out[0])), Some(stamp));
        assert_eq!(Stamp::find(&payload(&out[1])), None);
        assert!(wire::rewrite::checksums_valid(&PacketView::new_checked(&out[0][..]).unwrap()));
    }

    #[test]
    fn returns_what_was_put() {
        for (klen, vlen) in [(8, 8), (128, 1024)] {
            let cfg = ClientConfig { keys: 50, key_len: klen, value_len: vlen, ..ClientConfig::default() };
            let client = Client::new(cfg, 1).unwrap();
            let core = TestCore::new();
            let mut kvs = server(0, 1);
            let gets: Vec<Vec<u8>> = (0..50).map(|k| client.frame(Op::Get, k, 100 + k)).collect();
            assert!(core.run(&mut kvs, &gets).iter().all(|f| response(f).0 == Status::Miss));
            let puts: Vec<Vec<u8>> = (0..50).map(|k| client.frame(Op::Put, k, k)).collect();
            assert!(core.run(&mut kvs, &puts).iter().all(|f| response(f).0 == Status::Stored));
            for (k, f) in core.run(&mut kvs, &gets).iter().enumerate() {
                let (status, id, value) = response(f);
                assert_eq!((status, id), (Status::Hit, 100 + k as u64));
                assert_eq!(value, client.value(k as u64, k as u64));
            }
            let req = PacketView::new_checked(&gets[0][..]).unwrap();
            let resp = core.run(&mut kvs, &gets[..1]);
            let resp = PacketView::new_checked(&resp[0][..]).unwrap();
            assert_eq!(*resp.five_tuple(), req.five_tuple().reversed());
        }
    }

    #[test]
    fn malformed_requests_are_dropped_and_misrouted_counted() {
        let core = TestCore::new();
        let mut kvs = server(0, 4);
        let client = Client::new(ClientConfig { partitions: 4, ..ClientConfig::default() }, 2).unwrap();
        let mut junk = client.frame(Op::Get, 1, 1);
        let n = junk.len();
        junk[42] = 99; // unknown op
        let frames: Vec<Vec<u8>> = (0..40).map(|k| client.frame(Op::Get, k, k)).chain([junk, vec![0; 8]]).collect();
        assert_eq!(core.run(&mut kvs, &frames).len(), 40);
        let m = kvs.metrics();
        assert_eq!(m["drop_malformed"], 2.0);
        assert!(m["misrouted"] > 10.0 && m["misrouted"] < 40.0, "{m:?}");
        assert!(n >= 60);
    }
}
