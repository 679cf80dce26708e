//! `nat`: source NAT (NAPT, RFC 3022) over a per-core cuckoo flow table with two entries per flow, one for
//! each direction (shRing §5.2, rxBisect §6, nicmem §6.3): an outbound packet of a new flow gets a public
//! address and port, its source is rewritten, and the reverse entry maps replies back to the inside host.
//! Every rewrite keeps the IPv4 and UDP/TCP checksums valid by incremental update (RFC 1624).
//!
//! Parameters: `flows=N` flows per core (default 1M; the papers use up to 10M), `public=A.B.C.D` first
//! public address (default 198.18.0.1; public endpoints are striped over cores and span as many
//! consecutive addresses as the flows need, 64512 ports each), `state=inline|fcb` where each flow's
//! translation lives ([`crate::cuckoo::Layout`]).

use crate::cuckoo::{CuckooTable, Layout};
use crate::flow::{self, FlowKey};
use crate::params::Reader;
use crate::{App, AppError};
use ifaces::{CoreCtx, Metrics, NoProbe, Packet, Probe};
use std::net::Ipv4Addr;
use wire::FiveTuple;
use wire::rewrite::{self, Side};

/// Ports per public address (1024 and above).
const PORTS: u64 = 65536 - 1024;
/// Cycles of the two incremental checksum updates and the field stores.
const REWRITE_WORK: u32 = 10;

/// A table entry: the endpoint to write and which end of the packet it replaces.
#[derive(Debug, Clone, Copy)]
struct Translation {
    addr: u32,
    port: u16,
    /// Whether this is the entry of the reply direction (rewrites the destination).
    inbound: bool,
}

/// The NAT.
#[derive(Debug)]
pub struct Nat {
    table: CuckooTable<Translation>,
    public: u32,
    /// Public addresses in use by all cores: `public..public + addrs`.
    addrs: u32,
    core: u64,
    cores: u64,
    allocated: u64,
    stats: Stats,
}

#[derive(Debug, Default)]
struct Stats {
    outbound: u64,
    inbound: u64,
    new_flows: u64,
    malformed: u64,
    not_flow: u64,
    no_mapping: u64,
    table_full: u64,
}

impl Nat {
    /// Build the NAT of core `core` out of `cores` (see the module documentation for parameters).
    pub fn new(mut r: Reader<'_>, core: usize, cores: usize) -> Result<Nat, AppError> {
        let flows = r.count("flows", 1_000_000, 1..=100_000_000)?;
        let public = r.parsed("public", |s| s.parse::<Ipv4Addr>().map_err(|e| format!("'{s}': {e}")))?;
        let layout = Layout::read(&mut r)?;
        r.finish()?;
        let public = u32::from(public.unwrap_or(Ipv4Addr::new(198, 18, 0, 1)));
        let addrs = (flows * cores as u64).div_ceil(PORTS) as u32;
        if public.checked_add(addrs).is_none() {
            return Err(AppError::Param { app: "nat", message: format!("public: {addrs} addresses do not fit") });
        }
        Ok(Nat {
            table: CuckooTable::with_capacity(2 * flows as usize, layout),
            public,
            addrs,
            core: core as u64,
            cores: cores.max(1) as u64,
            allocated: 0,
            stats: Stats::default(),
        })
    }

    /// The public endpoint of this core's `n`-th flow: endpoints are striped over cores so they never
    /// collide, and the per-core table never needs another core's state.
    fn endpoint(&self, n: u64) -> (u32, u16) {
        let i = n * self.cores + self.core;
        (self.public + (i / PORTS) as u32, (1024 + i % PORTS) as u16)
    }

    fn is_public(&self, addr: u32) -> bool {
        addr.wrapping_sub(self.public) < self.addrs
    }

    /// The translation for `key`, creating both entries of a new outbound flow.
    fn translate<P: Probe>(&mut self, p: &mut P, key: &FlowKey) -> Option<Translation> {
        let hash = key.hash();
        if let Some(t) = self.table.get(p, key, hash) {
            return Some(t);
        }
        if self.is_public(key.dst) {
            self.stats.no_mapping += 1;
            return None;
        }
        let (addr, port) = self.endpoint(self.allocated);
        let out = Translation { addr, port, inbound: false };
        let reply = FlowKey { src: key.dst, dst: addr, src_port: key.dst_port, dst_port: port, proto: key.proto };
        let back = Translation { addr: key.src, port: key.src_port, inbound: true };
        if self.table.len() + 2 > self.table.capacity() || self.table.insert(p, *key, hash, out).is_err() {
            self.stats.table_full += 1;
            return None;
        }
        if self.table.insert(p, reply, reply.hash(), back).is_err() {
            // The outbound entry stays: its replies are dropped as unmapped, as when a NAT's table fills.
            self.stats.table_full += 1;
        }
        self.allocated += 1;
        self.stats.new_flows += 1;
        Some(out)
    }
}

impl App for Nat {
    fn process<'c, P: Probe>(&mut self, p: &mut P, _: &'c CoreCtx, rx: &mut Vec<Packet<'c>>, tx: &mut Vec<Packet<'c>>) {
        for mut pkt in rx.drain(..) {
            let addr = pkt.addr();
            let Ok(mut v) = flow::parse(p, &mut pkt) else {
                self.stats.malformed += 1;
                continue;
            };
            let Some(key) = FlowKey::from_view(&v) else {
                self.stats.not_flow += 1;
                continue;
            };
            let Some(t) = self.translate(p, &key) else { continue };
            let side = if t.inbound { Side::Dst } else { Side::Src };
            // Both rewrites succeed: the key exists only for IPv4 frames with a UDP or TCP header.
            let ok = rewrite::set_ipv4_addr(&mut v, side, Ipv4Addr::from(t.addr)).is_ok()
                && rewrite::set_port(&mut v, side, t.port).is_ok();
            p.work(REWRITE_WORK);
            flow::touch_rewrite(p, addr, &v);
            if !ok {
                self.stats.not_flow += 1;
                continue;
            }
            if t.inbound {
                self.stats.inbound += 1;
            } else {
                self.stats.outbound += 1;
            }
            tx.push(pkt);
        }
    }

    fn tables(&self) -> Vec<std::ops::Range<usize>> {
        self.table.tables()
    }

    fn warm(&mut self, flows: &mut dyn Iterator<Item = FiveTuple>) {
        for key in flows.filter_map(|t| FlowKey::from_tuple(&t)) {
            self.translate(&mut NoProbe::default(), &key);
        }
        self.stats = Stats::default();
    }

    fn metrics(&self) -> Metrics {
        let s = &self.stats;
        Metrics::from([
            ("translated_out".into(), s.outbound as f64),
            ("translated_in".into(), s.inbound as f64),
            ("new_flows".into(), s.new_flows as f64),
            ("flows".into(), (self.table.len() / 2) as f64),
            ("drop_malformed".into(), s.malformed as f64),
            ("drop_not_flow".into(), s.not_flow as f64),
            ("drop_no_mapping".into(), s.no_mapping as f64),
            ("drop_table_full".into(), s.table_full as f64),
        ])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::harness::{TestCore, frame};
    use crate::params::AppParams;
    use wire::PacketView;

    fn nat(flows: u64) -> Nat {
        Nat::new(AppParams::new().with("flows", flows).reader("nat"), 1, 4).unwrap()
    }

    fn tuple(f: &[u8]) -> wire::FiveTuple {
        let v = PacketView::new_checked(f).unwrap();
        assert!(rewrite::checksums_valid(&v), "bad checksum after rewrite");
        *v.five_tuple()
    }

    #[test]
    fn translation_is_consistent_and_reversible() {
        let core = TestCore::new();
        let mut app = nat(100);
        let out1 = frame("10.0.0.5", 4000, "93.184.216.34", 443, 6, 128);
        let out2 = frame("10.0.0.6", 4000, "93.184.216.34", 53, 17, 64);
        let sent = core.run(&mut app, &[out1.clone(), out2, out1.clone()]);
        assert_eq!(sent.len(), 3);
        let (t1, t2, t1b) = (tuple(&sent[0]), tuple(&sent[1]), tuple(&sent[2]));
        assert_eq!(t1, t1b, "a flow keeps its translation");
        assert_ne!((t1.src, t1.src_port), (t2.src, t2.src_port), "flows get distinct endpoints");
        assert_eq!(t1.dst.to_string(), "93.184.216.34");
        assert!(app.is_public(match t1.src {
            std::net::IpAddr::V4(a) => u32::from(a),
            _ => unreachable!(),
        }));
        // The reply to the translated packet goes back to the inside host, checksums intact.
        let reply = wire::build_frame(&wire::FrameSpec { tuple: t1.reversed(), frame_len: 128 }, b"reply").unwrap();
        let back = core.run(&mut app, &[reply]);
        let orig = *PacketView::new_checked(&out1[..]).unwrap().five_tuple();
        assert_eq!(tuple(&back[0]), orig.reversed());
        // A reply to an endpoint never handed out is dropped.
        let stray = frame("93.184.216.34", 443, &t1.src.to_string(), 9, 6, 128);
        assert!(core.run(&mut app, &[stray]).is_empty());
        let m = app.metrics();
        assert_eq!((m["new_flows"], m["translated_in"], m["drop_no_mapping"]), (2.0, 1.0, 1.0));
    }

    #[test]
    fn warmed_flows_are_translated_as_known_ones_and_counters_start_at_zero() {
        let core = TestCore::new();
        let out = frame("10.0.0.5", 4000, "93.184.216.34", 443, 6, 128);
        let mut warmed = nat(100);
        warmed.warm(&mut [tuple(&out)].into_iter());
        assert_eq!(warmed.metrics()["new_flows"], 0.0, "warming is not counted");
        let mut cold = nat(100);
        cold.warm(&mut std::iter::empty());
        let (w, c) = (core.run(&mut warmed, std::slice::from_ref(&out)), core.run(&mut cold, &[out]));
        assert_eq!(tuple(&w[0]), tuple(&c[0]), "the flow got the endpoint its first packet would have");
        assert_eq!((warmed.metrics()["new_flows"], cold.metrics()["new_flows"]), (0.0, 1.0));
        assert_eq!(warmed.metrics()["translated_out"], 1.0);
    }

    #[test]
    fn cores_use_disjoint_endpoints_and_malformed_is_counted() {
        let a = Nat::new(AppParams::new().with("flows", 10).reader("nat"), 0, 2).unwrap();
        let b = Nat::new(AppParams::new().with("flows", 10).reader("nat"), 1, 2).unwrap();
        let ea: Vec<_> = (0..10).map(|n| a.endpoint(n)).collect();
        assert!((0..10).all(|n| !ea.contains(&b.endpoint(n))));
        let core = TestCore::new();
        let mut app = nat(10);
        let mut v6 = frame("10.0.0.5", 1, "10.0.0.6", 2, 17, 64);
        v6[12] = 0x86; // EtherType IPv6 over an IPv4 header: malformed
        assert!(core.run(&mut app, &[v6, vec![1, 2, 3]]).is_empty());
        assert_eq!(app.metrics()["drop_malformed"], 2.0);
    }
}
