//! The software a network function runs in. The papers' NFs do not run bare over DPDK: they
//! are FastClick element graphs (shRing §5.1-5.2, rxBisect §6, nicmem §6.1), and the framework's
//! per-packet work, annotations and blocking transmit are part of what the papers measured. A
//! [`Runtime`] names that layer; [`Hosted`] runs an app inside it.

use crate::fastclick::Graph;
use crate::{AnyApp, App, AppError, AppParams};
use ifaces::nicmem::NicMem;
use ifaces::sync::Arc;
use ifaces::{CoreCtx, IfaceConfig, Metrics, Packet, Probe, TxFull};
use std::ops::Range;
use wire::FiveTuple;

/// The software layer between the receive interface and the NF's own code.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Runtime {
    /// The app's code straight over the burst API, as DPDK's sample applications run (l3fwd, testpmd):
    /// packets a full Tx ring refuses are dropped.
    #[default]
    Native,
    /// FastClick (Barbette et al., ANCS'15) as the papers ran it ([`crate::fastclick`]): the NF's element
    /// graph with its per-packet work, Click annotations in the mbuf private area, and a blocking
    /// `ToDPDKDevice`.
    FastClick,
}

impl Runtime {
    /// Names accepted by [`Runtime::parse`].
    pub const NAMES: &'static [&'static str] = &["native", "fastclick"];

    /// The runtime called `name`.
    pub fn parse(name: &str) -> Result<Runtime, String> {
        match name {
            "native" => Ok(Runtime::Native),
            "fastclick" => Ok(Runtime::FastClick),
            other => Err(format!("unknown runtime '{other}' (known: {})", Runtime::NAMES.join(", "))),
        }
    }

    /// Its name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Runtime::Native => "native",
            Runtime::FastClick => "fastclick",
        }
    }

    /// Set what the runtime decides about the receive interface: the mbuf private area it keeps its
    /// per-packet state in, what a full Tx ring does, whether it asks for fast frees of sent mbufs, and
    /// how many buffers its mempool holds.
    pub fn configure(self, iface: &mut IfaceConfig) {
        match self {
            Runtime::Native => {
                iface.tx_full = TxFull::Drop;
                // DPDK 21.11's l3fwd (examples/l3fwd/main.c) asks whenever the port offers it.
                iface.tx_fast_free = true;
                iface.mempool = 0;
            }
            Runtime::FastClick => {
                iface.layout.priv_len = crate::fastclick::PRIV_LEN;
                iface.tx_full = TxFull::Wait;
                // lib/dpdkdevice.cc leaves `DEV_TX_OFFLOAD_MBUF_FAST_FREE` a commented-out TODO.
                iface.tx_fast_free = false;
                iface.mempool = crate::fastclick::NB_MBUF;
            }
        }
    }
}

/// An app inside its runtime: the runtime's work around the app's own.
#[derive(Debug)]
pub struct Hosted<A> {
    app: A,
    /// The FastClick graph the app runs in, if the runtime is FastClick.
    graph: Option<&'static Graph>,
}

impl Hosted<AnyApp> {
    /// App `name` with `params` on each of `cores` cores, in `runtime` (see [`AnyApp::for_cores`]).
    pub fn for_cores(
        name: &str,
        params: &AppParams,
        cores: usize,
        runtime: Runtime,
    ) -> Result<Vec<Hosted<AnyApp>>, AppError> {
        let graph = match runtime {
            Runtime::Native => None,
            Runtime::FastClick => Some(Graph::of(name)?),
        };
        let params =
            graph.map_or_else(|| params.clone(), |g| g.sets.iter().fold(params.clone(), |p, (k, v)| p.with(k, v)));
        Ok(AnyApp::for_cores(name, &params, cores)?.into_iter().map(|app| Hosted { app, graph }).collect())
    }
}

impl<A: App> App for Hosted<A> {
    #[inline]
    fn process<'c, P: Probe>(
        &mut self,
        p: &mut P,
        core: &'c CoreCtx,
        rx: &mut Vec<Packet<'c>>,
        tx: &mut Vec<Packet<'c>>,
    ) {
        match self.graph {
            None => self.app.process(p, core, rx, tx),
            Some(g) => g.run(p, core, rx, tx, &mut self.app),
        }
    }

    fn metrics(&self) -> Metrics {
        self.app.metrics()
    }

    fn sends(&self) -> bool {
        self.app.sends()
    }

    fn bind_nicmem(&mut self, nicmem: Option<&Arc<NicMem>>) -> Result<(), AppError> {
        self.app.bind_nicmem(nicmem)
    }

    fn warm(&mut self, flows: &mut dyn Iterator<Item = FiveTuple>) {
        self.app.warm(flows)
    }

    fn tables(&self) -> Vec<Range<usize>> {
        self.app.tables()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_unknown_ones_list_the_known() {
        for n in Runtime::NAMES {
            assert_eq!(Runtime::parse(n).unwrap().name(), *n);
        }
        let e = Runtime::parse("vpp").unwrap_err();
        assert!(e.contains("native, fastclick"), "{e}");
    }

    #[test]
    fn fastclick_blocks_reads_what_it_frees_keeps_annotations_in_the_mbuf_and_has_its_own_pool() {
        use ifaces::{Design, PrivRing};
        let mut iface = IfaceConfig { cores: 16, ..IfaceConfig::default() };
        Runtime::FastClick.configure(&mut iface);
        assert_eq!(iface.tx_full, TxFull::Wait);
        assert!(!iface.tx_fast_free, "FastClick reads every mbuf it frees");
        assert!(iface.layout.priv_len >= 96 && iface.layout.data_room() >= 1518);
        assert_eq!(iface.pool_size::<PrivRing>(), crate::fastclick::NB_MBUF);
        Runtime::Native.configure(&mut iface);
        assert_eq!(iface.tx_full, TxFull::Drop);
        assert!(iface.tx_fast_free, "DPDK's sample apps ask for fast frees");
        assert_eq!(iface.pool_size::<PrivRing>(), PrivRing::buffers_needed(&iface), "sized to the rings");
    }

    /// FastClick's FromDPDKDevice and DPDK's l3fwd prefetch each packet's data; the driver does not,
    /// and neither does an NF run bare that does not do it itself.
    #[test]
    fn fastclick_and_l3fwd_prefetch_each_packet_and_bare_nfs_do_not() {
        let core = crate::harness::TestCore::new();
        let frames: Vec<Vec<u8>> =
            (0..4).map(|i| crate::harness::frame("10.0.0.1", 1000 + i, "10.1.0.1", 80, 17, 64)).collect();
        let prefetched = |nf: &str, runtime: Runtime| {
            let params = if nf == "l3fwd" { AppParams::new() } else { AppParams::parse("flows=100").unwrap() };
            let mut app = Hosted::for_cores(nf, &params, 1, runtime).unwrap().pop().unwrap();
            let p = &mut ifaces::probe::CountingProbe::default();
            core.run_with(&mut app, p, &frames);
            p.prefetched
        };
        assert_eq!(prefetched("lb", Runtime::FastClick), 4);
        assert_eq!(prefetched("lb", Runtime::Native), 0);
        assert_eq!(prefetched("maglev", Runtime::Native), 0);
        assert_eq!(prefetched("l3fwd", Runtime::Native), 4);
    }

    #[test]
    fn fastclick_hosts_the_papers_nfs_only() {
        let small = AppParams::parse("flows=100").unwrap();
        for nf in ["nat", "lb", "workpackage", "synthetic"] {
            let params = if ["workpackage", "synthetic"].contains(&nf) { &AppParams::new() } else { &small };
            assert_eq!(Hosted::for_cores(nf, params, 2, Runtime::FastClick).unwrap().len(), 2);
        }
        let e = Hosted::for_cores("echo", &AppParams::new(), 1, Runtime::FastClick).unwrap_err().to_string();
        assert!(e.contains("--runtime native") && e.contains("nat"), "{e}");
    }
}
