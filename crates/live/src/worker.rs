//! A worker thread: one core running an app in a run-to-completion poll loop over the burst API
//! (shRing §2.1: "T continuously polls its Rx ring, ... processes the packet, ... places it in its Tx ring,
//! and resumes its Rx polling").

use crate::control::{Control, Phase};
use apps::App;
use ifaces::pool::CacheStats;
use ifaces::{CoreCtx, DriverSide, Metrics, NoProbe, Probe, SharedPool};
use std::sync::Arc;

/// What one worker counted.
#[derive(Debug, Default, Clone)]
pub struct WorkerStats {
    /// Core index.
    pub core: usize,
    /// Packets received.
    pub rx: u64,
    /// Packets queued for transmission.
    pub tx: u64,
    /// Packets an app that sends nothing back took (`apps::App::sends`).
    pub consumed: u64,
    /// rx_burst calls.
    pub polls: u64,
    /// rx_burst calls that returned nothing.
    pub empty_polls: u64,
    /// Time spent in bursts that received packets (rx, app, tx), ns.
    pub busy_ns: u64,
    /// Empty polls that took longer than [`STALL_NS`].
    pub stalls: Stalls,
    /// Allocator counters.
    pub cache: CacheStats,
    /// The driver's and the app's counters.
    pub metrics: Metrics,
}

/// An empty poll takes well under a microsecond; one that takes this long was interrupted.
pub const STALL_NS: u64 = 20_000;

/// Empty polls that took longer than [`STALL_NS`]: the thread was off its CPU (the hypervisor or the
/// kernel ran something else). A lower bound of the time a worker lost: a stall during a burst cannot be
/// told from work.
#[derive(Debug, Default, Clone, Copy)]
pub struct Stalls {
    /// How many.
    pub count: u64,
    /// Their total length, ns.
    pub total_ns: u64,
    /// The longest, ns.
    pub max_ns: u64,
}

impl Stalls {
    /// Count a stall of `ns`.
    pub fn add(&mut self, ns: u64) {
        *self = Stalls { count: self.count + 1, total_ns: self.total_ns + ns, max_ns: self.max_ns.max(ns) };
    }

    /// Several workers' stalls together.
    pub fn sum(all: impl IntoIterator<Item = Stalls>) -> Stalls {
        all.into_iter().fold(Stalls::default(), |a, s| Stalls {
            count: a.count + s.count,
            total_ns: a.total_ns + s.total_ns,
            max_ns: a.max_ns.max(s.max_ns),
        })
    }
}

/// Run one worker until the NIC thread says teardown (or abort); then release the driver's buffers.
#[allow(clippy::too_many_arguments)]
pub fn worker_loop<D: DriverSide, A: App>(
    core_id: usize,
    driver: &mut D,
    app: &mut A,
    pool: &Arc<SharedPool>,
    cache: usize,
    burst: usize,
    ctl: &Control,
    yield_when_idle: bool,
    mut p: NoProbe,
) -> WorkerStats {
    let core = CoreCtx::new(core_id as u16, cache, pool);
    let mut st = WorkerStats { core: core_id, ..WorkerStats::default() };
    let mut rx = Vec::with_capacity(burst);
    let mut tx = Vec::with_capacity(burst);
    let mut confirmed = false;
    let mut started = p.now_ns();
    loop {
        let n = driver.rx_burst(&mut p, &core, &mut rx, burst);
        st.polls += 1;
        ctl.publish_polls(core_id, st.polls);
        if n > 0 {
            st.rx += n as u64;
            app.process(&mut p, &core, &mut rx, &mut tx);
            if !app.sends() {
                st.consumed += n.saturating_sub(tx.len()) as u64;
            }
            st.tx += driver.tx_burst(&mut p, &core, &mut tx) as u64;
            // A blocking transmit (the runtime's `TxFull::Wait`) spins until the NIC thread makes room.
            while !tx.is_empty() && !ctl.aborted() {
                std::hint::spin_loop();
                st.tx += driver.tx_burst(&mut p, &core, &mut tx) as u64;
            }
            let now = p.now_ns();
            st.busy_ns += now - started;
            started = now;
            continue;
        }
        st.empty_polls += 1;
        if ctl.aborted() {
            return st;
        }
        match ctl.phase() {
            Phase::Run => {}
            Phase::Quiesce => {
                if !confirmed {
                    // Flush what a design may hold back between calls (e.g. batched doorbells).
                    st.tx += driver.tx_burst(&mut p, &core, &mut tx) as u64;
                    ctl.confirm_quiesced();
                    confirmed = true;
                }
            }
            Phase::Teardown => break,
        }
        if yield_when_idle {
            std::thread::yield_now();
        }
        let now = p.now_ns();
        let took = now - started;
        if took > STALL_NS {
            st.stalls.add(took);
        }
        started = now;
    }
    ctl.stop_and_wait();
    if ctl.aborted() {
        return st;
    }
    driver.teardown(&core);
    st.cache = core.cache_stats();
    st.metrics = driver.metrics();
    st.metrics.extend(app.metrics());
    st
}
