//! `lb`: a flow-consistent load balancer over 32 destination servers (shRing §5.2, rxBisect §6,
//! nicmem §6.3): a per-core cuckoo flow table (one entry per flow) remembers each flow's server; a new flow
//! gets the next server round-robin (FastClick's LB policy in the papers); the destination address is
//! rewritten to the server's with incremental checksum updates.
//!
//! Parameters: `flows=N` flow-table capacity per core (default 1M), `backends=N` servers (default 32),
//! `state=inline|fcb` where each flow's backend lives ([`crate::cuckoo::Layout`]).

use crate::cuckoo::{CuckooTable, Layout};
use crate::flow::{self, FlowKey};
use crate::params::Reader;
use crate::{App, AppError};
use ifaces::{CoreCtx, Metrics, NoProbe, Packet, Probe};
use std::net::Ipv4Addr;
use wire::FiveTuple;
use wire::rewrite::{self, Side};

/// First backend address; backend `i` is this plus `i`.
const BACKEND_BASE: Ipv4Addr = Ipv4Addr::new(10, 200, 0, 1);
/// Cycles of the incremental checksum updates and the address store.
const REWRITE_WORK: u32 = 6;
/// Cycles of the round-robin choice of a new flow's backend.
const PICK_WORK: u32 = 2;

/// A backend server.
#[derive(Debug, Clone, Copy)]
#[repr(C)]
pub struct Backend {
    /// Its address, written as the packet's destination.
    pub addr: Ipv4Addr,
}

/// The load balancer on one core.
#[derive(Debug)]
pub struct Lb {
    table: CuckooTable<u16>,
    /// The backend the next new flow gets.
    next: u16,
    backends: Vec<Backend>,
    stats: Stats,
}

/// A load balancer's counters (`lb` and `maglev`).
#[derive(Debug, Default)]
pub(crate) struct Stats {
    pub(crate) forwarded: u64,
    pub(crate) hits: u64,
    pub(crate) new_flows: u64,
    pub(crate) table_full: u64,
    pub(crate) malformed: u64,
    pub(crate) not_flow: u64,
}

impl Stats {
    /// The counters as [`App::metrics`] gives them, with the `flows` the balancer remembers.
    pub(crate) fn metrics(&self, flows: usize) -> Metrics {
        Metrics::from([
            ("forwarded".into(), self.forwarded as f64),
            ("flow_hits".into(), self.hits as f64),
            ("new_flows".into(), self.new_flows as f64),
            ("flows".into(), flows as f64),
            ("table_full".into(), self.table_full as f64),
            ("drop_malformed".into(), self.malformed as f64),
            ("drop_not_flow".into(), self.not_flow as f64),
        ])
    }
}

/// Read `backends` (1 to 65535) and `flows` (the flow table's entries, `default_flows` if unset).
pub fn read_common(r: &mut Reader<'_>, default_flows: u64) -> Result<(Vec<Backend>, usize), AppError> {
    let n = r.count("backends", 32, 1..=65535)? as u32;
    let flows = r.count("flows", default_flows, 1..=100_000_000)? as usize;
    let backends = (0..n).map(|i| Backend { addr: Ipv4Addr::from(u32::from(BACKEND_BASE) + i) }).collect();
    Ok((backends, flows))
}

impl Lb {
    /// Build from parameters (see the module documentation).
    pub fn new(mut r: Reader<'_>) -> Result<Lb, AppError> {
        let (backends, flows) = read_common(&mut r, 1_000_000)?;
        let layout = Layout::read(&mut r)?;
        r.finish()?;
        Ok(Lb { table: CuckooTable::with_capacity(flows, layout), next: 0, backends, stats: Stats::default() })
    }

    /// The backend of `key`: the remembered one, or the next round-robin, then remembered (if the table
    /// has room).
    fn backend<P: Probe>(&mut self, p: &mut P, key: &FlowKey) -> u16 {
        let hash = key.hash();
        if let Some(b) = self.table.get(p, key, hash) {
            self.stats.hits += 1;
            return b;
        }
        p.work(PICK_WORK);
        let b = self.next;
        self.next = (self.next + 1) % self.backends.len() as u16;
        self.stats.new_flows += 1;
        if self.table.insert(p, *key, hash, b).is_err() {
            self.stats.table_full += 1;
        }
        b
    }
}

impl App for Lb {
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
            let b = self.backend(p, &key);
            let backend = &self.backends[usize::from(b)];
            p.read(backend);
            // Cannot fail: the key exists only for IPv4 frames.
            if rewrite::set_ipv4_addr(&mut v, Side::Dst, backend.addr).is_err() {
                self.stats.not_flow += 1;
                continue;
            }
            p.work(REWRITE_WORK);
            flow::touch_rewrite(p, addr, &v);
            self.stats.forwarded += 1;
            tx.push(pkt);
        }
    }

    fn warm(&mut self, flows: &mut dyn Iterator<Item = FiveTuple>) {
        for key in flows.filter_map(|t| FlowKey::from_tuple(&t)) {
            self.backend(&mut NoProbe::default(), &key);
        }
        self.stats = Stats::default();
    }

    fn tables(&self) -> Vec<std::ops::Range<usize>> {
        self.table.tables()
    }

    fn metrics(&self) -> Metrics {
        self.stats.metrics(self.table.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::harness::{TestCore, frame};
    use crate::params::AppParams;
    use std::collections::HashMap;
    use wire::PacketView;

    #[test]
    fn flows_stay_on_their_backend_and_new_flows_round_robin() {
        let core = TestCore::new();
        let mut lb = Lb::new(AppParams::new().with("flows", 1000).with("backends", 4).reader("lb")).unwrap();
        let frames: Vec<Vec<u8>> = (0..8).map(|i| frame("10.0.0.1", 1000 + i, "192.0.2.80", 80, 17, 64)).collect();
        let first = core.run(&mut lb, &frames);
        let again = core.run(&mut lb, &frames);
        assert_eq!(first, again, "every flow keeps its backend");
        let mut per_backend = HashMap::new();
        for f in &first {
            let v = PacketView::new_checked(&f[..]).unwrap();
            assert!(rewrite::checksums_valid(&v));
            *per_backend.entry(v.five_tuple().dst).or_insert(0) += 1;
        }
        assert_eq!(per_backend.len(), 4);
        assert!(per_backend.values().all(|&n| n == 2), "{per_backend:?}");
        let m = lb.metrics();
        assert_eq!((m["new_flows"], m["flow_hits"]), (8.0, 8.0));
    }

    #[test]
    fn warmed_flows_hit_and_keep_the_backend_their_first_packet_would_get() {
        let core = TestCore::new();
        let lb = || Lb::new(AppParams::new().with("flows", 1000).with("backends", 4).reader("lb")).unwrap();
        let frames: Vec<Vec<u8>> = (0..8).map(|i| frame("10.0.0.1", 1000 + i, "192.0.2.80", 80, 17, 64)).collect();
        let tuples: Vec<_> = frames.iter().map(|f| *PacketView::new_checked(&f[..]).unwrap().five_tuple()).collect();
        let mut warmed = lb();
        warmed.warm(&mut tuples.into_iter());
        assert_eq!(warmed.metrics()["flows"], 8.0);
        assert_eq!(warmed.metrics()["new_flows"], 0.0, "warming is not counted");
        let mut cold = lb();
        assert_eq!(core.run(&mut warmed, &frames), core.run(&mut cold, &frames));
        let (w, c) = (warmed.metrics(), cold.metrics());
        assert_eq!((w["new_flows"], w["flow_hits"], c["new_flows"]), (0.0, 8.0, 8.0));
    }

    #[test]
    fn a_full_table_still_balances_and_malformed_is_dropped() {
        let core = TestCore::new();
        let mut lb = Lb::new(AppParams::new().with("flows", 2).reader("lb")).unwrap();
        let frames: Vec<Vec<u8>> = (0..5).map(|i| frame("10.0.0.1", 1000 + i, "192.0.2.80", 80, 6, 80)).collect();
        assert_eq!(core.run(&mut lb, &frames).len(), 5);
        assert_eq!(lb.metrics()["table_full"], 3.0);
        assert!(core.run(&mut lb, &[vec![0xFF; 70]]).is_empty());
        assert_eq!(lb.metrics()["drop_malformed"], 1.0);
        assert!(Lb::new(AppParams::new().with("backends", 0).reader("lb")).is_err());
    }
}
