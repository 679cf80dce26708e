//! Network functions and servers (DESIGN.md, "apps" layer), written once over the burst API and run
//! unchanged on every design in both engines.
//!
//! The burst API, identical for every design (DPDK's run-to-completion model): a core receives up to a
//! burst of packets, the app processes them, moving each to the transmit vector or dropping it (which
//! frees its buffer), and the core transmits. Apps report the memory they touch (packet bytes, tables)
//! and their plain work through the [`Probe`], so the simulator charges them.

pub mod cuckoo;
pub mod dir24_8;
pub mod echo;
pub mod fastclick;
pub mod flow;
pub mod flowcache;
pub mod fwd;
pub mod harness;
pub mod ipsec;
pub mod kvs;
pub mod l3fwd;
pub mod lb;
pub mod logmon;
pub mod maglev;
pub mod nat;
pub mod params;
pub mod pingpong;
pub mod runtime;
pub mod service;
pub mod shared;
pub mod sparse;
pub mod telemetry;
pub mod workpackage;

pub use params::AppParams;
pub use runtime::{Hosted, Runtime};
pub use shared::Shared;

use ifaces::nicmem::NicMem;
use ifaces::sync::Arc;
use ifaces::{CoreCtx, Metrics, Packet, Probe};
use std::ops::Range;
use wire::FiveTuple;

/// A network function over bursts of packets.
pub trait App: Send {
    /// Process the received packets in `rx` (draining it): push each to `tx` to send it, or drop it.
    fn process<'c, P: Probe>(
        &mut self,
        p: &mut P,
        core: &'c CoreCtx,
        rx: &mut Vec<Packet<'c>>,
        tx: &mut Vec<Packet<'c>>,
    );

    /// App-specific counters (drops of malformed packets, table hits, ...).
    fn metrics(&self) -> Metrics {
        Metrics::new()
    }

    /// Whether the app sends what it processes back out (forwarders, servers), or consumes it (a log
    /// monitor, Ensō Table 1's receive-only program): the engines count a consumer's packets as taken,
    /// not as drops, so that a no-drop search can judge it (RFC 2544 loss is what the device did not take).
    fn sends(&self) -> bool {
        true
    }

    /// Called once before the run with the NIC memory the design exposes, if any (nicmem §4.1). Apps
    /// that serve data from NIC memory (the `kvs` app's nmKVS mode, nicmem §4.2.2) take it here, and fail
    /// with a message naming the option when they need it and the design has none.
    fn bind_nicmem(&mut self, _nicmem: Option<&Arc<NicMem>>) -> Result<(), AppError> {
        Ok(())
    }

    /// Show the app, before the run, the flows its core will receive, as the papers' warm-up traffic
    /// does (the nicmem artifact loads the NF with 10 s of T-Rex at full rate before it measures,
    /// `fig9/run_test.sh`): apps with per-flow state create each flow's here, so that the run starts in
    /// the papers' steady state, where every packet belongs to a known flow. Nothing is reported to a
    /// probe, and the app's counters start from zero afterwards.
    fn warm(&mut self, _flows: &mut dyn Iterator<Item = FiveTuple>) {}

    /// The host memory of the tables the app indexes by packet contents (routing tables, flow tables,
    /// arrays, logs). The simulator keeps their layout, as it keeps the packet arena's, so lookups spread
    /// over a table's lines as they do on a real machine; other memory is laid out in first-touch order
    /// (`sim::addr`), which would pack a big table's scattered entries into a few lines.
    fn tables(&self) -> Vec<Range<usize>> {
        Vec::new()
    }
}

/// The host memory of `len` elements from `start`: a table's `as_ptr()` and its length, or its capacity
/// for a `Vec` reserved up front and filled in place.
pub fn span<T>(start: *const T, len: usize) -> Range<usize> {
    start as usize..start as usize + len * std::mem::size_of::<T>()
}

/// Why an app cannot be built from its name and parameters.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AppError {
    /// No app of that name.
    #[error("unknown app '{0}' (known: {known})", known = APP_NAMES.join(", "))]
    Unknown(String),
    /// A parameter is invalid.
    #[error("app {app}: {message}")]
    Param {
        /// The app.
        app: &'static str,
        /// What is wrong and how to fix it.
        message: String,
    },
}

/// Names accepted by [`AnyApp::new`].
pub const APP_NAMES: &[&str] = &[
    "echo",
    "fwd",
    "l3fwd",
    "nat",
    "lb",
    "maglev",
    "workpackage",
    "synthetic",
    "kvs",
    "telemetry",
    "logmon",
    "ipsec",
    "pingpong",
    "service",
];

/// Any app, chosen at run time by name; dispatches to the concrete app (one `match`, no virtual calls).
#[derive(Debug)]
pub enum AnyApp {
    /// [`echo::Echo`].
    Echo(echo::Echo),
    /// [`fwd::Fwd`].
    Fwd(fwd::Fwd),
    /// [`l3fwd::L3fwd`].
    L3fwd(l3fwd::L3fwd),
    /// [`nat::Nat`].
    Nat(nat::Nat),
    /// [`lb::Lb`].
    Lb(lb::Lb),
    /// [`maglev::Maglev`].
    Maglev(maglev::Maglev),
    /// [`workpackage::WorkPackage`], as `workpackage` and as shRing's `synthetic` NF.
    WorkPackage(workpackage::WorkPackage),
    /// [`kvs::Kvs`] (boxed: its per-core hot items make it the largest app by far).
    Kvs(Box<kvs::Kvs>),
    /// [`telemetry::Telemetry`].
    Telemetry(telemetry::Telemetry),
    /// [`logmon::LogMon`].
    LogMon(logmon::LogMon),
    /// [`ipsec::Ipsec`].
    Ipsec(ipsec::Ipsec),
    /// [`pingpong::PingPong`].
    PingPong(pingpong::PingPong),
    /// [`service::Service`].
    Service(service::Service),
}

impl AnyApp {
    /// The app called `name` with `params` on each of `cores` cores; the instances share the app's
    /// read-only state ([`Shared`]), as the threads of one DPDK or FastClick process do.
    pub fn for_cores(name: &str, params: &AppParams, cores: usize) -> Result<Vec<AnyApp>, AppError> {
        let mut shared = Shared::new();
        (0..cores).map(|core| AnyApp::build(name, params, core, cores, &mut shared)).collect()
    }

    /// The app called `name` with `params` for core `core` of `cores`, alone (nothing shared with other
    /// cores' instances).
    pub fn new(name: &str, params: &AppParams, core: usize, cores: usize) -> Result<AnyApp, AppError> {
        AnyApp::build(name, params, core, cores, &mut Shared::new())
    }

    /// Build core `core`'s instance of `cores` (apps that partition state or address space across cores
    /// use both), taking shared state from `shared`.
    fn build(
        name: &str,
        params: &AppParams,
        core: usize,
        cores: usize,
        shared: &mut Shared,
    ) -> Result<AnyApp, AppError> {
        Ok(match name {
            "echo" => AnyApp::Echo(echo::Echo::new(params.reader("echo"))?),
            "fwd" => AnyApp::Fwd(fwd::Fwd::new(params.reader("fwd"))?),
            "l3fwd" => AnyApp::L3fwd(l3fwd::L3fwd::new(params.reader("l3fwd"), shared)?),
            "nat" => AnyApp::Nat(nat::Nat::new(params.reader("nat"), core, cores)?),
            "lb" => AnyApp::Lb(lb::Lb::new(params.reader("lb"))?),
            "maglev" => AnyApp::Maglev(maglev::new(params.reader("maglev"))?),
            "workpackage" => {
                AnyApp::WorkPackage(workpackage::WorkPackage::new(params.reader("workpackage"), core, shared)?)
            }
            "synthetic" => {
                AnyApp::WorkPackage(workpackage::WorkPackage::synthetic(params.reader("synthetic"), core, shared)?)
            }
            "kvs" => AnyApp::Kvs(Box::new(kvs::Kvs::new(params.reader("kvs"), core, cores)?)),
            "telemetry" => AnyApp::Telemetry(telemetry::Telemetry::new(params.reader("telemetry"), core)?),
            "logmon" => AnyApp::LogMon(logmon::LogMon::new(params.reader("logmon"))?),
            "ipsec" => AnyApp::Ipsec(ipsec::Ipsec::new(params.reader("ipsec"))?),
            "pingpong" => AnyApp::PingPong(pingpong::PingPong::new(params.reader("pingpong"))?),
            "service" => AnyApp::Service(service::Service::new(params.reader("service"), core)?),
            other => return Err(AppError::Unknown(other.to_string())),
        })
    }
}

/// Dispatch `$e` (an expression over `$a`) to the concrete app inside an [`AnyApp`].
macro_rules! dispatch {
    ($self:expr, $a:ident => $e:expr) => {
        match $self {
            AnyApp::Echo($a) => $e,
            AnyApp::Fwd($a) => $e,
            AnyApp::L3fwd($a) => $e,
            AnyApp::Nat($a) => $e,
            AnyApp::Lb($a) => $e,
            AnyApp::Maglev($a) => $e,
            AnyApp::WorkPackage($a) => $e,
            AnyApp::Kvs($a) => $e,
            AnyApp::Telemetry($a) => $e,
            AnyApp::LogMon($a) => $e,
            AnyApp::Ipsec($a) => $e,
            AnyApp::PingPong($a) => $e,
            AnyApp::Service($a) => $e,
        }
    };
}

impl App for AnyApp {
    #[inline]
    fn process<'c, P: Probe>(
        &mut self,
        p: &mut P,
        core: &'c CoreCtx,
        rx: &mut Vec<Packet<'c>>,
        tx: &mut Vec<Packet<'c>>,
    ) {
        dispatch!(self, a => a.process(p, core, rx, tx))
    }

    fn metrics(&self) -> Metrics {
        dispatch!(self, a => a.metrics())
    }

    fn sends(&self) -> bool {
        dispatch!(self, a => a.sends())
    }

    fn bind_nicmem(&mut self, nicmem: Option<&Arc<NicMem>>) -> Result<(), AppError> {
        dispatch!(self, a => a.bind_nicmem(nicmem))
    }

    fn warm(&mut self, flows: &mut dyn Iterator<Item = FiveTuple>) {
        dispatch!(self, a => a.warm(flows))
    }

    fn tables(&self) -> Vec<Range<usize>> {
        dispatch!(self, a => a.tables())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_name_builds_and_bad_input_is_one_line() {
        let small = AppParams::parse("flows=100").unwrap();
        for name in APP_NAMES {
            let params = if ["nat", "lb", "maglev"].contains(name) { &small } else { &AppParams::new() };
            AnyApp::new(name, params, 0, 2).unwrap_or_else(|e| panic!("{name}: {e}"));
        }
        let e = AnyApp::new("nope", &AppParams::new(), 0, 1).unwrap_err().to_string();
        assert!(e.starts_with("unknown app 'nope'") && e.contains("l3fwd"), "{e}");
        let e = AnyApp::new("fwd", &small, 0, 1).unwrap_err().to_string();
        assert_eq!(e, "app fwd: flows: unknown parameter (this app takes: mac)");
    }

    #[test]
    fn apps_with_lookup_tables_name_them() {
        let small = AppParams::parse("flows=100").unwrap();
        for name in ["l3fwd", "nat", "lb", "maglev", "workpackage", "kvs", "telemetry", "logmon"] {
            let params = if ["nat", "lb", "maglev"].contains(&name) { &small } else { &AppParams::new() };
            let app = AnyApp::new(name, params, 0, 1).unwrap();
            let tables = app.tables();
            assert!(!tables.is_empty() && tables.iter().all(|t| t.start <= t.end), "{name}: {tables:?}");
        }
        assert!(AnyApp::new("echo", &AppParams::new(), 0, 1).unwrap().tables().is_empty());
    }

    #[test]
    fn cores_share_read_only_tables_and_keep_their_own_state() {
        let tables = |name: &str| -> Vec<Vec<Range<usize>>> {
            let params = AppParams::parse("flows=100").unwrap();
            let params = if name == "nat" { &params } else { &AppParams::new() };
            AnyApp::for_cores(name, params, 3).unwrap().iter().map(App::tables).collect()
        };
        let l3fwd = tables("l3fwd");
        assert!(!l3fwd[0].is_empty() && l3fwd.iter().all(|t| *t == l3fwd[0]), "one LPM table, as DPDK's l3fwd");
        let wp = tables("workpackage");
        assert!(wp.iter().all(|t| *t == wp[0]), "one array, as FastClick's WorkPackage");
        let nat = tables("nat");
        assert!(nat[0] != nat[1] && nat[1] != nat[2], "per-core flow tables");
    }
}
