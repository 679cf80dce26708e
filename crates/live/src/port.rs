//! One emulated NIC port (`--nic-threads`): the device side of a design with its own buffer pool, its
//! share of the traffic and of the workers, RSS over its own queues, its run control and the receive end
//! of what it transmits, as one of a server's physical NICs would be. Its NIC thread and its workers run
//! as a port of one; a run of N ports checks the invariants of DESIGN.md port by port.

use crate::control::Control;
use crate::nic::NicStats;
use crate::run::LiveError;
use crate::sink::Sink;
use crate::source::Prebuilt;
use crate::worker::WorkerStats;
use ifaces::invariants::{RunCounts, check_buffers};
use ifaces::{Arena, Design, DeviceSide, IfaceConfig, SharedPool};
use measure::{FlowOrderReport, LatencySummary, ReorderReport};
use std::sync::Arc;
use wire::IndirectionTable;

/// A port built and ready to run.
pub struct Port<D: Design> {
    /// The port's host buffers.
    pub pool: Arc<SharedPool>,
    /// Its device side, run by its NIC thread.
    pub device: D::Device,
    /// One driver per worker of this port.
    pub drivers: Vec<D::Driver>,
    /// Its traffic share.
    pub src: Prebuilt,
    /// RSS over its queues.
    pub reta: IndirectionTable,
    /// The receive end of what it transmits.
    pub sink: Sink,
    /// Run control of its NIC thread and workers.
    pub ctl: Control,
}

impl<D: Design> Port<D> {
    /// Build design `D` as `iface` says (its `cores` are this port's workers) over a pool of its own,
    /// sending `src`; `window` is the measured send-time window, ns.
    pub fn build(iface: &IfaceConfig, src: Prebuilt, window: (u64, u64)) -> Result<Port<D>, LiveError> {
        let arena = Arena::new("host", iface.pool_size::<D>(), iface.layout)
            .map_err(|e| LiveError::Option { option: "ring", message: e.to_string() })?;
        let pool = SharedPool::new(Arc::new(arena));
        let (device, drivers) = D::build(iface, &pool)?;
        let reta = IndirectionTable::round_robin(iface.cores)
            .map_err(|m| LiveError::Option { option: "cores", message: m })?;
        let flow_of: Vec<u32> = src.frames.iter().map(|f| f.flow).collect();
        let sink = Sink::new(flow_of, src.flows, window, src.payload_at);
        Ok(Port { pool, device, drivers, src, reta, sink, ctl: Control::new(iface.cores) })
    }

    /// The end-of-run invariants of DESIGN.md over this port, once its threads have finished and its
    /// drivers have been dropped; each failure names the invariant and the numbers.
    pub fn check_invariants(&self, nic: &NicStats, workers: &[WorkerStats]) -> Result<Vec<String>, LiveError> {
        let fail = |m: String| Err(LiveError::Invariant(m));
        if self.sink.too_late > 0 {
            return fail(format!(
                "no-duplicate: {} packets were delivered after more than 2^{} newer ones, too late to check \
                 (e.g. {})",
                self.sink.too_late,
                measure::seen::SEEN_WINDOW.ilog2(),
                self.sink.examples.join("; ")
            ));
        }
        let counts = RunCounts {
            offered: nic.offered,
            delivered: workers.iter().map(|w| w.rx).sum(),
            dropped: nic.drops.total(),
            queued: self.device.occupancy().used,
            duplicates: self.sink.duplicates,
            out_of_order: self.sink.flow_order.reordered(),
            ordered: D::PER_FLOW_ORDER,
            examples: self.sink.examples.clone(),
        };
        let mut held = counts.check().map_err(|v| LiveError::Invariant(v.to_string()))?;
        let transmitted: u64 = workers.iter().map(|w| w.tx).sum();
        if self.sink.received != transmitted {
            return fail(format!(
                "conservation: {transmitted} packets queued for transmission, {} left the NIC",
                self.sink.received
            ));
        }
        check_buffers(self.pool.arena(), Some(self.pool.available()), self.device.nicmem().map(|m| &**m))
            .map_err(|v| LiveError::Invariant(v.to_string()))?;
        held.push("no-leak");
        Ok(held.into_iter().map(String::from).collect())
    }
}

/// The ports' receive ends together, as one load generator receiving from every port measures them.
#[derive(Debug)]
pub struct Received {
    /// Latency of packets sent inside the window, every port's samples.
    pub latency: LatencySummary,
    /// The same samples' distribution ([`measure::LatencyHistogram::cdf`]).
    pub latency_cdf: Vec<measure::CdfPoint>,
    /// RFC 4737 reordering, each port's sequence numbers a stream of its own.
    pub reordering: ReorderReport,
    /// Reordering within each flow.
    pub flow_reordering: FlowOrderReport,
    /// Packets sent inside the window and received.
    pub window_packets: u64,
    /// Their bytes (FCS excluded).
    pub window_bytes: u64,
}

impl Received {
    /// What the receive ends of `ports` (at least one) measured.
    pub fn of<D: Design>(ports: &[Port<D>]) -> Received {
        let (first, rest) = ports.split_first().expect("at least one port");
        let mut latency = first.sink.latency.clone();
        let (mut reordering, mut flow_reordering) = (first.sink.reorder.report(), first.sink.flow_order.report());
        let (mut window_packets, mut window_bytes) = (first.sink.window_packets, first.sink.window_bytes);
        for p in rest {
            latency.merge(&p.sink.latency);
            reordering.merge(&p.sink.reorder.report());
            flow_reordering.merge(&p.sink.flow_order.report());
            (window_packets, window_bytes) =
                (window_packets + p.sink.window_packets, window_bytes + p.sink.window_bytes);
        }
        Received {
            latency: latency.summary(),
            latency_cdf: latency.cdf(),
            reordering,
            flow_reordering,
            window_packets,
            window_bytes,
        }
    }
}
