//! The software NIC thread (rxBisect §5): source, rate control, RSS with an indirection table, the
//! design's device side, and the receive end of transmitted packets. On a 2-core machine the generator
//! and the NIC share this one thread, so one core is left for a worker.

use crate::control::{Control, Phase};
use crate::sink::Sink;
use crate::source::Prebuilt;
use ifaces::{DeviceSide, Drops, NoProbe, Probe};
use std::time::Duration;
use wire::{IndirectionTable, Stamp};

/// How fast the NIC thread offers packets.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Pace {
    /// As fast as the NIC thread can.
    Max,
    /// This many packets per second.
    Pps(f64),
}

/// Timing of a run, in ns from its start.
#[derive(Debug, Clone, Copy)]
pub struct Timing {
    /// Packets sent before this are warm-up and not measured.
    pub warmup_ns: u64,
    /// The source stops here.
    pub end_ns: u64,
    /// Longest the drain may take before the run fails.
    pub drain_limit: Duration,
}

/// What the NIC thread counted.
#[derive(Debug, Default)]
pub struct NicStats {
    /// Packets offered over the whole run.
    pub offered: u64,
    /// Packets offered inside the measurement window.
    pub window_offered: u64,
    /// Their bytes (FCS excluded).
    pub window_offered_bytes: u64,
    /// Drops by reason over the whole run.
    pub drops: Drops,
    /// Mean sampled ring occupancy, as a fraction of capacity.
    pub occupancy: f64,
    /// Nanoseconds the drain took.
    pub drain_ns: u64,
    /// Set if the drain did not finish in time: what was still in flight.
    pub stuck: Option<String>,
}

const RX_BATCH: usize = 32;
const TX_BUDGET: usize = 64;
/// Occupancy is sampled every this many loop iterations.
const SAMPLE_EVERY: u32 = 256;

/// Run the NIC thread to the end of the run; returns its counters (the sink is filled in place).
pub fn nic_loop<D: DeviceSide>(
    device: &mut D,
    src: &mut Prebuilt,
    reta: &IndirectionTable,
    pace: Pace,
    timing: Timing,
    ctl: &Control,
    sink: &mut Sink,
    mut p: NoProbe,
) -> NicStats {
    let mut st = NicStats::default();
    let (mut next, n) = (0usize, src.frames.len());
    let (mut samples, mut occ_sum, mut iter) = (0u64, 0.0f64, 0u32);
    loop {
        let now = p.now_ns();
        if now >= timing.end_ns || ctl.aborted() {
            break;
        }
        let due = match pace {
            Pace::Max => RX_BATCH,
            Pace::Pps(pps) => ((now as f64 * pps / 1e9) as u64).saturating_sub(st.offered).min(RX_BATCH as u64) as usize,
        };
        let in_window = now >= timing.warmup_ns;
        for _ in 0..due {
            let f = &mut src.frames[next];
            next = if next + 1 == n { 0 } else { next + 1 };
            if let Some(at) = f.stamp_at {
                Stamp { seq: st.offered, tx_ns: now }.write(&mut f.bytes[at..]);
            }
            if let Err(reason) = device.rx(&mut p, reta.queue(f.hash), f.hash, &f.bytes) {
                st.drops.add(reason);
            }
            st.offered += 1;
            if in_window {
                st.window_offered += 1;
                st.window_offered_bytes += f.bytes.len() as u64;
            }
        }
        device.tx(&mut p, &mut |frame: &[u8]| sink.on_frame(frame, now), TX_BUDGET);
        iter = iter.wrapping_add(1);
        if iter % SAMPLE_EVERY == 0 && in_window {
            let o = device.occupancy();
            occ_sum += o.used as f64 / o.capacity.max(1) as f64;
            samples += 1;
        }
    }
    st.occupancy = occ_sum / samples.max(1) as f64;
    let drain_start = p.now_ns();
    st.stuck = drain(device, ctl, sink, &mut p, timing.drain_limit);
    st.drain_ns = p.now_ns() - drain_start;
    st
}

/// Keep transmitting until every ring is empty and every worker has confirmed it holds nothing, then
/// until every transmitted packet has left; then tell the workers to tear down.
fn drain<D: DeviceSide>(device: &mut D, ctl: &Control, sink: &mut Sink, p: &mut NoProbe, limit: Duration) -> Option<String> {
    let deadline = p.now_ns() + limit.as_nanos() as u64;
    let workers_done = |ctl: &Control, want: usize| ctl.quiesced() >= want;
    let tx = |device: &mut D, sink: &mut Sink, p: &mut NoProbe| {
        let now = p.now_ns();
        device.tx(p, &mut |frame: &[u8]| sink.on_frame(frame, now), TX_BUDGET)
    };
    let mut phase = Phase::Run;
    let mut want = usize::MAX;
    loop {
        let sent = tx(device, sink, p);
        if ctl.aborted() {
            return Some("aborted".into());
        }
        match phase {
            Phase::Run if sent == 0 && device.occupancy().used == 0 && device.tx_pending() == 0 => {
                phase = Phase::Quiesce;
                ctl.set(Phase::Quiesce);
                want = ctl.workers();
            }
            Phase::Quiesce if workers_done(ctl, want) && device.tx_pending() == 0 => {
                ctl.set(Phase::Teardown);
                return None;
            }
            _ => {}
        }
        if p.now_ns() > deadline {
            ctl.abort();
            let o = device.occupancy();
            return Some(format!(
                "drain did not finish within {limit:?}: {} packets still in rings, {} waiting for transmission, {} of {} workers idle",
                o.used,
                device.tx_pending(),
                ctl.quiesced(),
                ctl.workers()
            ));
        }
        if sent == 0 {
            std::thread::yield_now();
        }
    }
}
