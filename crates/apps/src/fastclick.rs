//! FastClick (Barbette, Soldani, Mathy, ANCS'15), the framework every NF of papers 000-002 runs in, as a
//! cost model around rxlab's NF code. The papers' configurations come from the nicmem artifact
//! (BorisPis/nicmem-asplos22-artifact: `fig8/nat.x.1.npf`, `fig8/lb.x.1.npf`, `fig7/fastclick.x.1.npf`),
//! built with `--enable-dpdk-packet` (`scripts/make-server.sh`), so a Click packet is the DPDK mbuf itself.
//!
//! What the model does per packet, mechanism by mechanism:
//! - **Annotations in the mbuf.** With DPDK packets, Click keeps each packet's annotations (`AllAnno`: the
//!   48-byte annotation area, the MAC/network/transport header pointers, the packet type and the batch's
//!   next/prev links, 96 B) in the mbuf's private area right after `struct rte_mbuf`
//!   (`include/click/packet.hh`, `ANNO_OFFSET`). `FromDPDKDevice` writes them for every packet (packet
//!   type, MAC header, the batch link: `elements/userlevel/fromdpdkdevice.cc`, `_run_task`), and the
//!   elements update them (Paint, the network header, the destination address, the flow's control
//!   block). These are real lines of every buffer, so with large rings they are as cold as the buffers.
//! - **The elements' own work**, per packet: Click's push calls and the checks and bookkeeping of each
//!   element beyond what rxlab's NF code reports (header parsing, the flow table and the rewrite are the
//!   NF's own and are charged there). No publication gives these cycles for the papers' graphs, so each
//!   graph's [`Graph::work`] is calibrated once, from one number a paper states, at the configuration the
//!   statement is about ([`Calibration`]); every other configuration is a prediction. The
//!   number, its source and the configuration sit next to each constant, and
//!   `crates/sim/tests/calibration.rs` checks that the simulator still reproduces it (and says which
//!   value would, after a model change).
//! - **Flow state in control blocks.** `FlowIPManagerIMP` keeps each flow's NF state in a flow control block
//!   of an array indexed by the flow's position in `rte_hash` (`elements/research/flowipmanager.cc`), read
//!   and written by every packet of the flow: the graphs of NAT and LB set their flow table's layout to
//!   [`crate::cuckoo::Layout::ControlBlock`].
//! - **FastClick's mempool** ([`NB_MBUF`]): a pool far larger than the rings need, where DPDK's sample
//!   apps size theirs to the rings.
//! - **A blocking `ToDPDKDevice`** (`BLOCKING true` in every configuration of the artifact): a full Tx ring
//!   makes the core spin until the NIC has sent packets, instead of dropping them
//!   ([`crate::Runtime::configure`] sets [`ifaces::TxFull::Wait`]; the engines retry). There is no
//!   software queue in front of the ring: the artifact configures FastClick with
//!   `--disable-dpdk-softqueue` (`scripts/make-server.sh`), so `ToDPDKDevice::push_batch` hands each
//!   batch to `rte_eth_tx_burst` and retries what the ring refused (the `!HAVE_IQUEUE` path of
//!   `elements/userlevel/todpdkdevice.cc`).

use crate::{App, AppError};
use ifaces::probe::Access;
use ifaces::{CoreCtx, Packet, Probe};

/// Bytes of Click's `AllAnno` in the mbuf private area: the 48-byte annotation area, three header
/// pointers, the packet type and two batch links (`include/click/packet.hh`).
pub const ANNO_LEN: usize = 96;
/// Bytes of its 48-byte annotation area (`Packet::anno_size`), which the elements update.
const CB_LEN: usize = 48;
/// The mbuf private area FastClick asks for: `DPDK_ANNO_SIZE`, `sizeof(AllAnno)`.
pub const PRIV_LEN: usize = ANNO_LEN;
/// Buffers in FastClick's packet mempool: `DPDKDevice::DEFAULT_NB_MBUF` when built with
/// `--enable-dpdk-pool`, as the nicmem artifact builds it (`scripts/make-server.sh`; `lib/dpdkdevice.cc`
/// of BorisPis/asplos22-nicmem-fastclick: `32*4096*2 - 1`), and its configurations set no `NB_MBUF`.
/// Far more than the rings hold, so when the NIC's transmit falls behind, the Tx rings fill from the
/// spare buffers while the receive rings stay posted.
pub const NB_MBUF: u32 = 32 * 4096 * 2 - 1;

/// An NF's FastClick configuration: its element graph and the work the elements do per packet beyond
/// what rxlab's NF code reports.
#[derive(Debug)]
pub struct Graph {
    /// The rxlab app it hosts.
    pub nf: &'static str,
    /// The elements a packet passes, in order, as the artifact's configuration writes them.
    pub elements: &'static [&'static str],
    /// Cycles per packet of the elements' own work (see the module documentation).
    pub work: u32,
    /// Where [`Graph::work`] comes from.
    pub source: Source,
    /// Parameters the graph sets on the NF it hosts: a flow manager (`FlowIPManagerIMP`) keeps each
    /// flow's state in a flow control block (`state=fcb`, [`crate::cuckoo::Layout::ControlBlock`]).
    pub sets: &'static [(&'static str, &'static str)],
}

/// Where a graph's work comes from.
#[derive(Debug)]
pub enum Source {
    /// Calibrated once from a number a paper states.
    Calibrated(Calibration),
    /// Not calibrated: the reason nothing is added.
    None(&'static str),
}

/// One calibration: the configuration, the cycles per packet it must cost there, and the statement that
/// number comes from. The configuration is `design` on `cores` cores of `r640-silver4216` (the papers'
/// R640) with `ring`-entry rings, receiving 1500 B packets (1518 B frames) at 200 Gbps from a million
/// flows in the order `flows` gives, measured in steady state (5 ms after 10 ms of warm-up, flow tables
/// warmed).
#[derive(Debug)]
pub struct Calibration {
    /// The receive interface of the statement's configuration (an `ifaces::DESIGN_NAMES` name).
    pub design: &'static str,
    /// Worker cores.
    pub cores: usize,
    /// Receive ring entries per core.
    pub ring: u32,
    /// Whether the anchor's testbed ran with ConnectX CQE compression (a DPDK mlx5 option).
    pub cqe_compress: bool,
    /// The order of the anchor's flows (its generator's; [`traffic::Popularity::Stepped`] for T-Rex's
    /// `op = "inc"`).
    pub flows: traffic::Popularity,
    /// Cycles per packet the configuration costs on the papers' testbed.
    pub cycles: f64,
    /// The statement, with its section.
    pub statement: &'static str,
}

/// The IP router chain of the artifact's `FNT` element class, which NAT and LB run before their flow
/// elements (ARP and ICMP error branches never see the papers' UDP traffic).
macro_rules! router_chain {
    ($($nf:literal),*) => {
        &[
            "FromDPDKDevice", "Classifier", "Paint", "Strip", "CheckIPHeader", "LookupIPRouteMP",
            "IPOutputCombo", $($nf,)* "EtherEncap", "ToDPDKDevice",
        ]
    };
}

/// The papers' graphs.
const GRAPHS: &[Graph] = &[
    Graph {
        nf: "nat",
        elements: router_chain!("FlowIPManagerIMP", "FlowIPNAT", "FlowCounter"),
        sets: &[("state", "fcb")],
        work: 1227,
        source: Source::Calibrated(Calibration {
            // Host memory never reaches line rate in Fig. 8; nmNFV, whose payloads stay on the NIC, does
            // (with NIC memory emulated as the paper's evaluation does, §5: every primary ring full-size).
            design: "nmnfv",
            cores: 14,
            // nicmem §6.1: "1024 Rx and Tx ring descriptors (default)".
            ring: 1024,
            // nicmem's artifact starts DPDK with rxq_cqe_comp_en=0.
            cqe_compress: false,
            // nicmem's artifact's T-Rex steps both addresses with every packet (fig8/trex/imix_lat.py).
            flows: traffic::Popularity::Stepped,
            cycles: 1679.0,
            statement: "nicmem §6.3 and Fig. 8: nmNFV NAT achieves line rate (200 Gbps of 1500 B packets, 16.26 \
                        Mpps at 2.1 GHz) at 14 cores and not at 12, so it costs between the 12- and 14-core \
                        budgets, 1550 and 1808 cycles per packet: the middle, 1679",
        }),
    },
    Graph {
        nf: "lb",
        elements: router_chain!("FlowIPManagerIMP", "FlowIPLoadBalancer"),
        sets: &[("state", "fcb")],
        work: 984,
        source: Source::Calibrated(Calibration {
            design: "nmnfv",
            cores: 12,
            ring: 1024,
            cqe_compress: false,
            flows: traffic::Popularity::Stepped,
            cycles: 1420.0,
            statement: "nicmem §6.3 and Fig. 8: nmNFV LB achieves line rate at 12 cores and not at 10, so it \
                        costs between the 10- and 12-core budgets, 1291 and 1550 cycles per packet: the middle, \
                        1420",
        }),
    },
    Graph {
        nf: "workpackage",
        elements: WORKPACKAGE,
        sets: &[],
        work: 0,
        source: Source::None(
            "nicmem fig7/fastclick.x.1.npf: the WorkPackage element's work (its random draws and reads) is \
             rxlab's WorkPackage code, and no paper isolates what the two I/O elements cost beyond the memory \
             traffic modelled here",
        ),
    },
    Graph {
        nf: "synthetic",
        elements: WORKPACKAGE,
        sets: &[],
        work: 0,
        source: Source::None(
            "shRing §2.3's synthetic NF is the WorkPackage graph; what is calibrated is the element's own work, \
             its random draws (apps::workpackage::SHRING_SYNTHETIC_DRAWS, checked by \
             crates/lab/tests/calibration.rs)",
        ),
    },
];

/// The graph of FastClick's synthetic NF (nicmem `fig7/fastclick.x.1.npf`; shRing §2.3 [8]).
const WORKPACKAGE: &[&str] = &["FromDPDKDevice", "WorkPackage", "ToDPDKDevice"];

impl Graph {
    /// The graph hosting app `nf`, or an error naming the apps FastClick hosts.
    pub fn of(nf: &str) -> Result<&'static Graph, AppError> {
        GRAPHS.iter().find(|g| g.nf == nf).ok_or_else(|| AppError::Param {
            app: "runtime",
            message: format!(
                "FastClick runs the papers' NFs ({}); run '{nf}' with --runtime native",
                GRAPHS.iter().map(|g| g.nf).collect::<Vec<_>>().join(", ")
            ),
        })
    }

    /// Every graph, for documentation and the calibration check.
    pub fn all() -> &'static [Graph] {
        GRAPHS
    }

    /// Run one batch through the graph: `FromDPDKDevice` makes each mbuf a Click packet, the elements
    /// work and annotate, and `app`, the NF's own code, does the rest.
    #[inline]
    pub fn run<'c, P: Probe, A: App>(
        &self,
        p: &mut P,
        core: &'c CoreCtx,
        rx: &mut Vec<Packet<'c>>,
        tx: &mut Vec<Packet<'c>>,
        app: &mut A,
    ) {
        for pkt in rx.iter() {
            // FromDPDKDevice prefetches each packet's data right after `rte_eth_rx_burst`
            // (`rte_prefetch0(data)` in `elements/userlevel/fromdpdkdevice.cc`, `run_task`).
            p.prefetch(pkt.addr(), 1);
            if let Some(anno) = pkt.priv_addr() {
                p.touch(anno, ANNO_LEN, Access::Write);
                p.touch(anno, CB_LEN, Access::Write);
            }
        }
        p.work(self.work * rx.len() as u32);
        app.process(p, core, rx, tx);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn graphs_follow_the_artifact_and_cite_their_calibration() {
        let nat = Graph::of("nat").unwrap();
        assert_eq!(nat.elements.first(), Some(&"FromDPDKDevice"));
        assert_eq!(nat.elements.last(), Some(&"ToDPDKDevice"));
        assert!(nat.elements.contains(&"FlowIPNAT") && nat.elements.len() == 12);
        assert!(Graph::of("lb").unwrap().elements.contains(&"FlowIPLoadBalancer"));
        for g in Graph::all() {
            match &g.source {
                Source::Calibrated(c) => {
                    assert!(c.statement.contains('§') && ifaces::DESIGN_NAMES.contains(&c.design), "{}", g.nf)
                }
                Source::None(why) => assert!(g.work == 0 && !why.is_empty(), "{}", g.nf),
            }
        }
        assert_eq!(PRIV_LEN, ANNO_LEN);
    }
}
