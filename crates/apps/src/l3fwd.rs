//! `l3fwd`: IPv4 longest-prefix-match forwarding as DPDK's l3fwd (COREC §4): look the destination up in a
//! [`Dir24_8`] table, rewrite the MAC addresses for the next hop, decrement the TTL with an incremental
//! checksum update (RFC 1624), and send the packet out.
//!
//! Parameters: `routes=FILE` (lines `a.b.c.d/len hop`) or a generated table of `prefixes=N` (default 1024)
//! random prefixes plus a default route; `hops=N` next hops (default 16).

use crate::dir24_8::{Dir24_8, MAX_HOP, generate_routes, parse_routes};
use crate::params::Reader;
use crate::{App, AppError, Shared, flow, span};
use ifaces::probe::Access;
use ifaces::{CoreCtx, Metrics, Packet, Probe};
use std::ops::Range;
use std::sync::Arc;
use wire::PacketView;
use wire::rewrite::{self, RewriteError};

/// MAC address of this router's port (locally administered).
pub const PORT_MAC: [u8; 6] = [0x02, 0, 0, 0, 0xFF, 0x01];
/// Cycles for the forwarding decision besides the table reads: checks, the MAC copy and the TTL and
/// checksum arithmetic (a dozen ALU operations and two 6-byte stores).
const ROUTE_WORK: u32 = 12;

/// Cycles per packet of DPDK's l3fwd and its driver beyond what rxlab's l3fwd and receive path charge
/// (their memory touches and the route's operations): the loop's and the driver's own instructions,
/// which no publication breaks down. Calibrated once, from COREC (003) §4.1, Table 2: DPDK l3fwd on one
/// 2.1 GHz core of the Silver 4110 forwards 16.43 Mpps of 64 B packets from an XL710, 128 cycles a
/// packet, where rxlab's l3fwd over privRing costs about 70 there with none. With 58 the anchor costs
/// 127.2 cycles (126.1 with 57, 131.3 with 59), with the XL710's descriptor write-backs packed four to a
/// line ([`ifaces::wbpack`]) and sent mbufs freed without reading them, as DPDK 21.11's l3fwd asks
/// (`nic.tx_fast_free`). Every other l3fwd run,
/// COREC's on 1-4 cores included, is a prediction; `crates/sim/tests/calibration.rs` checks the anchor.
pub const DPDK_WORK: u32 = 58;

/// A next hop: the MAC address packets to it are sent to.
#[derive(Debug, Clone, Copy)]
#[repr(C, align(8))]
pub struct NextHop {
    mac: [u8; 6],
}

/// Why a packet is not forwarded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RouteError {
    /// Not an IPv4 packet (the table is IPv4 only).
    NotIpv4,
    /// No route covers the destination.
    NoRoute,
    /// TTL 0 or 1 (RFC 1812 §5.3.1).
    TtlExpired,
}

/// Drop counters of [`Router::route`].
#[derive(Debug, Clone, Default)]
pub struct RouteDrops {
    not_ipv4: u64,
    no_route: u64,
    ttl_expired: u64,
}

impl RouteDrops {
    /// Count one drop.
    pub fn count(&mut self, e: RouteError) {
        match e {
            RouteError::NotIpv4 => self.not_ipv4 += 1,
            RouteError::NoRoute => self.no_route += 1,
            RouteError::TtlExpired => self.ttl_expired += 1,
        }
    }

    /// Add the counters to `m`.
    pub fn report(&self, m: &mut Metrics) {
        m.insert("drop_not_ipv4".into(), self.not_ipv4 as f64);
        m.insert("drop_no_route".into(), self.no_route as f64);
        m.insert("drop_ttl_expired".into(), self.ttl_expired as f64);
    }
}

/// The forwarding core of `l3fwd` and `workpackage`: the LPM table and the next hops, built once and read
/// by every core, as DPDK's l3fwd shares one LPM table among the lcores of a socket.
#[derive(Debug, Clone)]
pub struct Router {
    lpm: Dir24_8,
    hops: Vec<NextHop>,
}

impl Router {
    /// A router with next hops `0..hops` over `routes`.
    pub fn new(routes: &[crate::dir24_8::Route], hops: u16) -> Result<Router, String> {
        if let Some(r) = routes.iter().find(|r| r.hop >= hops) {
            return Err(format!("route {}/{} uses hop {} but there are only {hops} hops", r.prefix, r.len, r.hop));
        }
        let hops = (0..hops).map(|h| NextHop { mac: [0x02, 0, 0, 0x01, (h >> 8) as u8, h as u8] }).collect();
        Ok(Router { lpm: Dir24_8::build(routes)?, hops })
    }

    /// Read `routes`, `prefixes` and `hops` from an app's parameters; the router is built the first time
    /// and shared through `shared` after that.
    pub fn from_params(r: &mut Reader<'_>, shared: &mut Shared) -> Result<Arc<Router>, AppError> {
        let hops = r.count("hops", 16, 1..=u64::from(MAX_HOP) + 1)? as u16;
        let prefixes = r.count("prefixes", 1024, 0..=10_000_000)? as usize;
        let path = r.path("routes");
        shared.get_or_build("router", || {
            let routes = match &path {
                Some(path) => {
                    let text = std::fs::read_to_string(path)
                        .map_err(|e| r.error("routes", format!("cannot read {}: {e}", path.display())))?;
                    parse_routes(&text).map_err(|e| r.error("routes", format!("{}: {e}", path.display())))?
                }
                None => generate_routes(prefixes, hops, 0x13f0d),
            };
            Router::new(&routes, hops).map_err(|e| r.error("routes", e))
        })
    }

    /// The memory of the LPM table and the next hops ([`App::tables`]).
    pub fn tables(&self) -> Vec<Range<usize>> {
        let mut t = self.lpm.tables();
        t.push(span(self.hops.as_ptr(), self.hops.len()));
        t
    }

    /// Route the parsed packet at `addr` in place: look up, rewrite MACs, decrement TTL. Returns the hop.
    #[inline]
    pub fn route<P: Probe>(&self, p: &mut P, addr: usize, v: &mut PacketView<&mut [u8]>) -> Result<u16, RouteError> {
        let std::net::IpAddr::V4(dst) = v.five_tuple().dst else { return Err(RouteError::NotIpv4) };
        let hop = self.lpm.lookup(p, u32::from(dst)).ok_or(RouteError::NoRoute)?;
        let next = &self.hops[usize::from(hop)];
        p.read(next);
        p.work(ROUTE_WORK);
        match rewrite::decrement_ttl(v) {
            Ok(_) => {}
            Err(RewriteError::TtlExpired) => return Err(RouteError::TtlExpired),
            Err(_) => return Err(RouteError::NotIpv4),
        }
        rewrite::set_macs(v.frame_mut(), PORT_MAC, next.mac);
        p.touch(addr, 12, Access::Write);
        // TTL, protocol and header checksum: bytes 8..12 of the IPv4 header.
        p.touch(addr + v.l3_offset() + 8, 4, Access::Write);
        Ok(hop)
    }
}

/// The l3fwd app.
#[derive(Debug)]
pub struct L3fwd {
    router: Arc<Router>,
    forwarded: u64,
    malformed: u64,
    drops: RouteDrops,
}

impl L3fwd {
    /// Build from parameters (see the module documentation).
    pub fn new(mut r: Reader<'_>, shared: &mut Shared) -> Result<L3fwd, AppError> {
        let router = Router::from_params(&mut r, shared)?;
        r.finish()?;
        Ok(L3fwd { router, forwarded: 0, malformed: 0, drops: RouteDrops::default() })
    }
}

impl App for L3fwd {
    fn process<'c, P: Probe>(&mut self, p: &mut P, _: &'c CoreCtx, rx: &mut Vec<Packet<'c>>, tx: &mut Vec<Packet<'c>>) {
        // DPDK's l3fwd prefetches every packet's data a few packets ahead of its lookup
        // (`rte_prefetch0(rte_pktmbuf_mtod(pkts_burst[j], void *))`, examples/l3fwd/l3fwd_lpm.h).
        for pkt in rx.iter() {
            p.prefetch(pkt.addr(), 1);
        }
        for mut pkt in rx.drain(..) {
            p.work(DPDK_WORK);
            let addr = pkt.addr();
            let verdict = match flow::parse(p, &mut pkt) {
                Ok(mut v) => self.router.route(p, addr, &mut v).map(|_| ()),
                Err(_) => {
                    self.malformed += 1;
                    continue;
                }
            };
            match verdict {
                Ok(()) => {
                    self.forwarded += 1;
                    tx.push(pkt);
                }
                Err(e) => self.drops.count(e),
            }
        }
    }

    fn metrics(&self) -> Metrics {
        let mut m = Metrics::new();
        m.insert("forwarded".into(), self.forwarded as f64);
        m.insert("drop_malformed".into(), self.malformed as f64);
        self.drops.report(&mut m);
        m
    }

    fn tables(&self) -> Vec<Range<usize>> {
        self.router.tables()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::harness::{TestCore, frame};
    use crate::params::AppParams;

    #[test]
    fn forwards_with_valid_checksums_and_drops_the_rest() {
        let dir = std::env::temp_dir().join(format!("rxlab-l3fwd-{}.routes", std::process::id()));
        std::fs::write(&dir, "10.0.0.0/8 1\n10.1.2.0/24 2\n").unwrap();
        let params = AppParams::new().with("routes", dir.display()).with("hops", 4);
        let mut app = L3fwd::new(params.reader("l3fwd"), &mut Shared::new()).unwrap();
        std::fs::remove_file(&dir).unwrap();
        let core = TestCore::new();
        let mut frames = vec![frame("1.1.1.1", 5, "10.1.2.3", 80, 17, 64), frame("1.1.1.1", 5, "10.9.2.3", 80, 6, 128)];
        frames.push(frame("1.1.1.1", 5, "11.0.0.1", 80, 17, 64)); // no route
        frames.push(vec![0u8; 20]); // malformed
        let mut ttl1 = frame("1.1.1.1", 5, "10.1.2.3", 80, 17, 64);
        ttl1[14 + 8] = 1;
        wire::rewrite::fill_ipv4_checksum(&mut ttl1, 14);
        frames.push(ttl1);
        let out = core.run(&mut app, &frames);
        assert_eq!(out.len(), 2);
        for (o, hop) in out.iter().zip([2u8, 1]) {
            let v = PacketView::new_checked(&o[..]).unwrap();
            assert!(wire::rewrite::checksums_valid(&v));
            assert_eq!(o[14 + 8], 63);
            assert_eq!(&o[..6], &[0x02, 0, 0, 0x01, 0, hop]);
            assert_eq!(&o[6..12], &PORT_MAC);
        }
        let m = app.metrics();
        assert_eq!(
            (m["forwarded"], m["drop_no_route"], m["drop_malformed"], m["drop_ttl_expired"]),
            (2.0, 1.0, 1.0, 1.0)
        );
        let missing = AppParams::new().with("routes", "/nonexistent");
        assert!(L3fwd::new(missing.reader("l3fwd"), &mut Shared::new()).is_err());
    }
}
