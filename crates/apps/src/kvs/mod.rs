//! `kvs`: a MICA-like key-value server (Lim et al., NSDI'14) as the papers run it (shRing §5.2, rxBisect
//! §6.1, nicmem §6.6, Ensō §7.3.3): GET/PUT requests in UDP packets ([`traffic::kvs::proto`]), keys
//! partitioned to cores by hash, each core serving its partition from a lossy index and circular log
//! ([`store`]) with nothing shared, and each response built as a new packet. A burst's requests go
//! through mica2's pipeline: parsed and hashed with the bucket prefetched, then the items prefetched,
//! then served, each stage [`STAGE_GAP`] requests behind the one before. [`traffic::kvs::client`]
//! generates the matching requests.
//!
//! A request may end with the traffic generator's [`Stamp`] as a trailer (the last 16 bytes of its
//! payload, after the request): the server echoes it at the start of the response's payload, as the
//! harness's client tag (MICA echoes an opaque field; Ensō's KVS benchmark echoes a timestamp, Ensō
//! §7.3.3), so that the engines measure latency and order of responses.
//!
//! With `hot=N` the server is nmKVS (nicmem §4.2.2): up to N of the hottest items live in NIC memory
//! ([`hot`]) and a GET of one is answered with a header packet whose value is the item's stable buffer,
//! sent zero-copy; the UDP checksum adds the value's sum kept with the item, so the CPU never reads NIC
//! memory. It needs a design with NIC memory (`nicmem-host`, `nicmem-split`, `nmnfv-`, `nmnfv`).
//!
//! Parameters: `log=SIZE` circular log per core (default 64MiB), `buckets=N` index buckets per core
//! (64 B each, default 256K), `preload=N` store the client's keys 0..N-1 of this core's partition before
//! the run (MICA's load phase; keys of `key_len` and values of `value_len` bytes as
//! [`traffic::kvs::client::Client`] makes them, defaults 8 and 8; `rxlab` sets both from its `--kvs-*`
//! options), `hot=N` hot items over all cores (default 0: plain MICA), `epoch=N` requests between
//! re-rankings of the hot items (default 4096).

pub mod hot;
pub mod store;

use crate::params::Reader;
use crate::{App, AppError, flow};
use hot::HotItems;
use ifaces::nicmem::NicMem;
use ifaces::nicmem::kvs::Payload;
use ifaces::probe::Access;
use ifaces::sync::Arc;
use ifaces::{CoreCtx, Metrics, NoProbe, Packet, Probe};
use std::net::IpAddr;
use store::{KeyHash, Partition};
use traffic::kvs::client::{Client, ClientConfig};
use traffic::kvs::proto::{HEADER_LEN, Op, Request, Status, write_response_header};
use wire::stamp::STAMP_LEN;
use wire::{PacketView, Stamp, checksum};

/// Ethernet, IPv4 (no options) and UDP header bytes of a response.
const RESPONSE_HEADERS: usize = 14 + 20 + 8;
/// Shortest frame on the wire without FCS (Ethernet's 64 B minimum).
const MIN_FRAME: usize = 60;
/// Cycles to fill the response headers: about 20 stores and the IPv4 header checksum.
const HEADER_WORK: u32 = 30;
/// Cycles per request of mica2's own software beyond what this model reports (its datagram server's
/// request and response batches, the pipeline's bookkeeping, the table's version checks), calibrated once:
/// MICA on one core of Ensō serves Ensō §7.3.3's 7.65 Mops with 8 B keys and values and 50 % GETs
/// (experiments/enso-fig16.toml); `crates/sim/tests/calibration.rs` checks that it still does.
pub const MICA_WORK: u32 = 244;
/// Requests between the stages of the pipeline: mica2's default `stage_gap`
/// (`src/mica/processor/partitions_impl/init.h`).
pub const STAGE_GAP: usize = 2;

/// The key-value server of one core.
#[derive(Debug)]
pub struct Kvs {
    part: Partition,
    core: usize,
    cores: usize,
    /// Hot items wanted over all cores, and requests between re-rankings (`hot`, `epoch`).
    hot_wanted: usize,
    epoch: u64,
    hot: Option<HotItems>,
    /// Each request of the burst in hand, as the pipeline's first stage found it.
    prepared: Vec<Option<Prepared>>,
    stats: Stats,
}

/// A request parsed and hashed, its bucket prefetched: what the pipeline's later stages need of it.
#[derive(Debug)]
struct Prepared {
    reply: Reply,
    stamp: Option<Stamp>,
    h: KeyHash,
    /// The request's bytes.
    bytes: Bytes,
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

/// A request's answer: a status with a value to copy into the response, or a hot value sent zero-copy.
enum Answer<'a> {
    Inline(Status, &'a [u8]),
    ZeroCopy(ifaces::nicmem::kvs::ZeroCopy<'a>),
}

impl Kvs {
    /// Build the server of core `core` of `cores` (see the module documentation for parameters).
    pub fn new(mut r: Reader<'_>, core: usize, cores: usize) -> Result<Kvs, AppError> {
        let log = r.bytes("log", 64 << 20, 4 << 10..=(1 << 40))? as usize;
        let buckets = r.count("buckets", 256 << 10, 1..=(1 << 32))? as usize;
        let preload = r.count("preload", 0, 0..=(1 << 32))?;
        let d = ClientConfig::default();
        let key_len = r.count("key_len", d.key_len as u64, 8..=255)? as usize;
        let value_len = r.count("value_len", d.value_len as u64, 0..=(1 << 16))? as usize;
        let hot_wanted = r.count("hot", 0, 0..=(1 << 24))? as usize;
        let epoch = r.count("epoch", 4096, 1..=(1 << 32))?;
        let mut kvs = Kvs {
            part: Partition::new(buckets, log),
            core,
            cores: cores.max(1),
            hot_wanted,
            epoch,
            hot: None,
            prepared: Vec::new(),
            stats: Stats::default(),
        };
        if preload > 0 {
            let cfg = ClientConfig { keys: preload, key_len, value_len, ..d };
            let client = Client::new(cfg, 0).map_err(|e| r.error("preload", e))?;
            kvs.preload(&client, preload);
        }
        r.finish()?;
        Ok(kvs)
    }

    /// Store the values of keys `0..n` that this core's partition owns (before the run: not probed).
    fn preload(&mut self, client: &Client, n: u64) {
        let p = &mut NoProbe::new();
        for k in 0..n {
            let key = client.key(k);
            let h = KeyHash::of(p, &key);
            if h.partition(self.cores) == self.core {
                self.part.put(p, &key, &client.value(k, 0), h);
            }
        }
    }

    /// The pipeline's first stage: parse the request in `pkt`, hash its key and prefetch its bucket; `None`
    /// if it is no well-formed request.
    fn prepare<P: Probe>(&self, p: &mut P, pkt: &mut Packet<'_>) -> Option<Prepared> {
        let v = flow::parse(p, pkt).ok()?;
        let reply = reply_to(&v)?;
        let range = v.payload_offset()..v.payload_offset() + v.payload().len();
        let bytes = match (pkt.tail_addr(), pkt.tail()) {
            (Some(addr), Some(tail)) => {
                p.touch(pkt.addr() + range.start, range.len(), Access::Read);
                p.touch(addr, tail.len(), Access::Read);
                Bytes::Joined([&pkt[range], tail].concat())
            }
            _ => Bytes::InPacket(range),
        };
        let (req, stamp) = request_in(bytes.of(pkt))?;
        if let Bytes::InPacket(_) = bytes {
            let at = req.key.as_ptr() as usize - HEADER_LEN;
            p.touch(at, HEADER_LEN + req.key.len() + req.value.len(), Access::Read);
        }
        let h = KeyHash::of(p, req.key);
        self.part.prefetch_bucket(p, h);
        Some(Prepared { reply, stamp, h, bytes })
    }

    /// The pipeline's last stage: serve the request `prep` found in `pkt` and queue the response.
    fn respond<'c, P: Probe>(
        &mut self,
        p: &mut P,
        core: &'c CoreCtx,
        pkt: &Packet<'_>,
        prep: &Prepared,
        tx: &mut Vec<Packet<'c>>,
    ) {
        let Prepared { reply, stamp, h, ref bytes } = *prep;
        p.work(MICA_WORK);
        let req = Request::parse(bytes.of(pkt)).expect("the request parsed in the first stage");
        let Some(mut resp) = core.alloc_packet(p) else {
            self.stats.no_buffer += 1;
            return;
        };
        let head = response_head_len(stamp);
        let len = match self.serve(p, &req, h) {
            // The value is the packet's second segment (values too short to end a frame are answered by
            // copy, see `bind_nicmem`).
            Answer::ZeroCopy(z) => {
                resp.set_len(head);
                let len = write_response_head(&mut resp, &reply, Status::Hit, req.id, z.len(), z.sum(), stamp);
                z.attach(&mut resp);
                Some(len)
            }
            Answer::Inline(status, v) => {
                let need = (head + v.len()).max(MIN_FRAME);
                (need <= resp.capacity()).then(|| {
                    resp.set_len(need);
                    write_response(&mut resp, &reply, status, req.id, v, stamp)
                })
            }
        };
        let Some(len) = len else {
            self.stats.oversize += 1;
            return;
        };
        resp.set_len(len);
        p.work(HEADER_WORK + len as u32 / 8);
        p.touch(resp.addr(), len, Access::Write);
        tx.push(resp);
    }

    /// Serve one request for key hash `h`.
    fn serve<'s, P: Probe>(&'s mut self, p: &mut P, req: &Request<'_>, h: KeyHash) -> Answer<'s> {
        if h.partition(self.cores) != self.core {
            // The client steers by partition (MICA §4.1); count requests that arrive elsewhere (e.g. when
            // RSS spreads a partition's flow to another core) and serve them from this core's partition.
            self.stats.misrouted += 1;
        }
        if let Some(hot) = &mut self.hot {
            hot.observe(p, h, &mut self.part);
        }
        match req.op {
            Op::Get => {
                self.stats.gets += 1;
                if let Some(a) = self.hot.as_mut().and_then(|hot| hot.get(p, h)) {
                    self.stats.hits += 1;
                    return match a {
                        Payload::ZeroCopy(z) => Answer::ZeroCopy(z),
                        Payload::Copy(v) => Answer::Inline(Status::Hit, v),
                    };
                }
                match self.part.get(p, req.key, h) {
                    Some(v) => {
                        self.stats.hits += 1;
                        Answer::Inline(Status::Hit, v)
                    }
                    None => Answer::Inline(Status::Miss, &[]),
                }
            }
            Op::Put => {
                self.stats.puts += 1;
                let stored = self.hot.as_mut().is_some_and(|hot| hot.set(p, h, req.value))
                    || self.part.put(p, req.key, req.value, h);
                Answer::Inline(if stored { Status::Stored } else { Status::TooLarge }, &[])
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

/// Bytes of a response before its value: headers, the echoed stamp if any, the response header. Even,
/// so the value's checksum sum adds in place.
fn response_head_len(stamp: Option<Stamp>) -> usize {
    RESPONSE_HEADERS + stamp.map_or(0, |_| STAMP_LEN) + HEADER_LEN
}

/// Fill `out` with the response to `to` up to its value: Ethernet, IPv4 and UDP headers, the request's
/// `stamp`, and the response header for `status`, `id` and a value of `value_len` bytes whose
/// ones'-complement sum is `value_sum` (the UDP checksum covers it). Returns the bytes written
/// ([`response_head_len`]); the value follows them, in `out` or in a second segment.
fn write_response_head(
    out: &mut [u8],
    to: &Reply,
    status: Status,
    id: u64,
    value_len: usize,
    value_sum: u32,
    stamp: Option<Stamp>,
) -> usize {
    let head = response_head_len(stamp);
    let udp_len = head - RESPONSE_HEADERS + 8 + value_len;
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
    let udp = &mut out[34..head];
    udp[..2].copy_from_slice(&to.sport.to_be_bytes());
    udp[2..4].copy_from_slice(&to.dport.to_be_bytes());
    udp[4..6].copy_from_slice(&(udp_len as u16).to_be_bytes());
    udp[6..8].fill(0);
    let mut at = 8;
    if let Some(s) = stamp {
        let _ = s.write(&mut udp[at..]);
        at += STAMP_LEN;
    }
    write_response_header(&mut udp[at..], status, id, value_len as u16);
    let pseudo = checksum::ipv4_pseudo_sum(to.src, to.dst, 17, udp_len as u16);
    let c = match !checksum::fold(checksum::sum(udp, pseudo) + value_sum) {
        0 => 0xFFFF,
        c => c,
    };
    udp[6..8].copy_from_slice(&c.to_be_bytes());
    head
}

/// Build the whole response in `out` with `value` copied after the head, padded to the Ethernet minimum;
/// returns its length. `out` must hold the head, the value and the padding.
fn write_response(out: &mut [u8], to: &Reply, status: Status, id: u64, value: &[u8], stamp: Option<Stamp>) -> usize {
    let head = write_response_head(out, to, status, id, value.len(), checksum::sum(value, 0), stamp);
    let len = head + value.len();
    out[head..len].copy_from_slice(value);
    out[len..len.max(MIN_FRAME)].fill(0);
    len.max(MIN_FRAME)
}

/// The addresses to answer a parsed frame from and to; `None` unless it is UDP/IPv4.
fn reply_to(v: &PacketView<&mut [u8]>) -> Option<Reply> {
    let t = v.five_tuple();
    let (IpAddr::V4(src), IpAddr::V4(dst), 17) = (t.src, t.dst, t.proto) else { return None };
    let mut mac = [0u8; 12];
    mac.copy_from_slice(&v.frame()[..12]);
    // Answer from the address the request was sent to, to its sender.
    Some(Reply { mac, src: dst.octets(), dst: src.octets(), sport: t.dst_port, dport: t.src_port })
}

/// The request in a UDP payload and its trailing stamp if any; `None` unless it is a well-formed request.
fn request_in(payload: &[u8]) -> Option<(Request<'_>, Option<Stamp>)> {
    let req = Request::parse(payload)?;
    let trailer = payload.len().checked_sub(STAMP_LEN).filter(|&at| at >= HEADER_LEN + req.key.len() + req.value.len());
    Some((req, trailer.and_then(|at| Stamp::read(&payload[at..]))))
}

/// Where a prepared request's bytes are.
#[derive(Debug)]
enum Bytes {
    /// The UDP payload, in the packet's first segment.
    InPacket(std::ops::Range<usize>),
    /// The first segment's payload and the second segment joined: a split design left the rest of the
    /// request in NIC memory.
    Joined(Vec<u8>),
}

impl Bytes {
    fn of<'a>(&'a self, pkt: &'a Packet<'_>) -> &'a [u8] {
        match self {
            Bytes::InPacket(r) => &pkt[r.clone()],
            Bytes::Joined(v) => v,
        }
    }
}

impl App for Kvs {
    fn process<'c, P: Probe>(
        &mut self,
        p: &mut P,
        core: &'c CoreCtx,
        rx: &mut Vec<Packet<'c>>,
        tx: &mut Vec<Packet<'c>>,
    ) {
        // mica2's pipeline (`src/mica/processor/partitions_impl/process.h`): a request is parsed and
        // hashed and its bucket prefetched; `STAGE_GAP` requests later the items its tag points to are
        // prefetched; as many again later it is served. The index's and the log's misses of several
        // requests are in flight together.
        let mut prepared = std::mem::take(&mut self.prepared);
        prepared.clear();
        let n = rx.len();
        for i in 0..n + 2 * STAGE_GAP {
            if let Some(pkt) = rx.get_mut(i) {
                let prep = self.prepare(p, pkt);
                prepared.push(prep);
            }
            if let Some(Some(prep)) = i.checked_sub(STAGE_GAP).and_then(|j| prepared.get(j)) {
                self.part.prefetch_items(p, prep.h);
            }
            if let Some(j) = i.checked_sub(2 * STAGE_GAP).filter(|&j| j < n) {
                match &prepared[j] {
                    Some(prep) => self.respond(p, core, &rx[j], prep, tx),
                    None => self.stats.malformed += 1,
                }
            }
        }
        rx.clear();
        self.prepared = prepared;
    }

    fn bind_nicmem(&mut self, nicmem: Option<&Arc<NicMem>>) -> Result<(), AppError> {
        if self.hot_wanted == 0 {
            return Ok(());
        }
        let Some(nicmem) = nicmem else {
            return Err(AppError::Param {
                app: "kvs",
                message: "hot=N serves hot items from NIC memory (nmKVS, nicmem §4.2.2): run it on a design with NIC memory (--iface nicmem-host, nicmem-split, nmnfv- or nmnfv)".into(),
            });
        };
        let budget = self.hot_wanted.div_ceil(self.cores);
        let min_zero_copy = MIN_FRAME - response_head_len(None);
        self.hot = Some(HotItems::new(nicmem.clone(), self.core as u16, budget, self.epoch, min_zero_copy));
        Ok(())
    }

    fn tables(&self) -> Vec<std::ops::Range<usize>> {
        self.part.tables()
    }

    fn metrics(&self) -> Metrics {
        let s = &self.stats;
        let mut m = Metrics::from([
            ("gets".into(), s.gets as f64),
            ("get_hits".into(), s.hits as f64),
            ("puts".into(), s.puts as f64),
            ("misrouted".into(), s.misrouted as f64),
            ("drop_malformed".into(), s.malformed as f64),
            ("drop_no_buffer".into(), s.no_buffer as f64),
            ("drop_oversize".into(), s.oversize as f64),
        ]);
        if let Some(hot) = &self.hot {
            let h = hot.stats();
            m.extend([
                ("hot_items".into(), hot.len() as f64),
                ("hot_zero_copy".into(), h.zero_copy as f64),
                ("hot_copies".into(), h.copies as f64),
                ("hot_sets".into(), h.sets as f64),
                ("hot_promoted".into(), h.promoted as f64),
                ("hot_evicted".into(), h.evicted as f64),
                ("hot_nicmem_full".into(), h.nicmem_full as f64),
            ]);
        }
        m
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

    /// mica2's pipeline: every request's bucket is prefetched, and every stored item its tag points to
    /// (two lines each), before any request is served.
    #[test]
    fn prefetches_each_requests_bucket_then_its_items() {
        let cfg = ClientConfig { keys: 8, key_len: 8, value_len: 8, ..ClientConfig::default() };
        let client = Client::new(cfg, 1).unwrap();
        let core = TestCore::new();
        let mut kvs = server(0, 1);
        let gets: Vec<Vec<u8>> = (0..8).map(|k| client.frame(Op::Get, k, k)).collect();
        let prefetched = |kvs: &mut Kvs| {
            let p = &mut ifaces::probe::CountingProbe::default();
            core.run_with(kvs, p, &gets);
            p.prefetched
        };
        assert_eq!(prefetched(&mut kvs), 8, "an empty store: the buckets alone");
        let puts: Vec<Vec<u8>> = (0..8).map(|k| client.frame(Op::Put, k, k)).collect();
        core.run(&mut kvs, &puts);
        // Eight buckets, and two lines for each item (the line it starts in and the next).
        assert_eq!(prefetched(&mut kvs), 8 + 2 * 8);
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

    /// nmKVS: the hottest keys move to NIC memory and GETs of them are answered zero-copy, with the same
    /// bytes (value, echoed stamp, valid checksums) as from the log; a PUT of a hot key is seen by the
    /// next GET; and without NIC memory `hot=N` is refused.
    #[test]
    fn hot_items_are_served_zero_copy() {
        let cfg = ClientConfig { keys: 50, value_len: 1024, ..ClientConfig::default() };
        let client = Client::new(cfg, 1).unwrap();
        let params = AppParams::parse("log=1MiB,buckets=4K,preload=50,value_len=1024,hot=4,epoch=64").unwrap();
        let mut kvs = Kvs::new(params.reader("kvs"), 0, 1).unwrap();
        let e = Kvs::new(params.reader("kvs"), 0, 1).unwrap().bind_nicmem(None).unwrap_err();
        assert!(e.to_string().contains("nicmem-host"), "{e}");
        let core = TestCore::with_nicmem(16 * 2048);
        kvs.bind_nicmem(core.nicmem()).unwrap();
        let stamped = |k: u64, id: u64| {
            let (mut body, _) = client.request(Op::Get, k, id);
            let at = body.len();
            body.resize(at + STAMP_LEN, 0);
            Stamp { seq: id, tx_ns: 5 }.write(&mut body[at..]).unwrap();
            let tuple = *PacketView::new_checked(&client.frame(Op::Get, k, id)[..]).unwrap().five_tuple();
            wire::build_frame(&wire::FrameSpec { tuple, frame_len: 42 + body.len() + 4 }, &body).unwrap()
        };
        let check = |out: &[Vec<u8>], keys: &[u64]| {
            for (f, &k) in out.iter().zip(keys) {
                assert_eq!(response(f).0, Status::Hit);
                assert_eq!(response(f).2, client.value(k, 0), "key {k}");
                let payload = PacketView::new_checked(&f[..]).unwrap().payload().to_vec();
                assert!(Stamp::find(&payload).is_some(), "the stamp is echoed");
            }
        };
        for round in 0..4u64 {
            // Keys 0..4 take three requests in four.
            let keys: Vec<u64> = (0..64).map(|i| if i % 4 == 3 { 4 + (i + round) % 46 } else { i % 4 }).collect();
            let frames: Vec<Vec<u8>> = keys.iter().map(|&k| stamped(k, round * 64 + k)).collect();
            check(&core.run(&mut kvs, &frames), &keys);
        }
        let m = kvs.metrics();
        assert_eq!(m["hot_items"], 4.0, "{m:?}");
        assert!(m["hot_zero_copy"] >= 100.0, "{m:?}");
        // A PUT of a hot key, then GETs of it: the new value, zero-copy again.
        let put = core.run(&mut kvs, &[client.frame(Op::Put, 2, 77)]);
        assert_eq!(response(&put[0]).0, Status::Stored);
        let out = core.run(&mut kvs, &[client.frame(Op::Get, 2, 78)]);
        assert_eq!(response(&out[0]).2, client.value(2, 77));
        assert_eq!(kvs.metrics()["hot_sets"], 1.0);
    }
}
