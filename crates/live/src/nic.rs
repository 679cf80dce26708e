//! The software NIC thread (rxBisect §5): source, rate control, RSS with an indirection table, the
//! design's device side, and the receive end of transmitted packets. On a 2-core machine the generator
//! and the NIC share this one thread, so one core is left for a worker.

use crate::control::{Control, Phase};
use crate::sink::Sink;
use crate::source::Prebuilt;
use ifaces::design::Sample;
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

/// When and how fast the NIC thread offers packets, in ns from the start of the run.
#[derive(Debug, Clone, Copy)]
pub struct Schedule {
    /// Offered rate.
    pub pace: Pace,
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
    /// With a paced source, the most packets it was behind its schedule: after the thread was off its
    /// CPU, or while it could not keep up, it offers the backlog as fast as it can, so the design sees a
    /// burst rather than the paced rate.
    pub max_backlog: u64,
}

const RX_BATCH: usize = 32;
const TX_BUDGET: usize = 64;
/// Occupancy is sampled every this many loop iterations.
const SAMPLE_EVERY: u32 = 256;
/// The device's controller (dynamic shRing) gets a [`Sample`] this often: shRing §4.6's 10 ms.
const SAMPLE_PERIOD_NS: u64 = 10_000_000;

/// Builds the periodic [`Sample`]s of shRing §4.5 from the NIC's byte counter and the workers' rx calls.
#[derive(Debug, Default)]
struct Sampler {
    at_ns: u64,
    rx_bytes: u64,
    polls: Vec<u64>,
}

impl Sampler {
    /// A sample for the period ending at `now`, if one is due.
    fn due(&mut self, now: u64, rx_bytes: u64, ctl: &Control) -> Option<Sample> {
        if now < self.at_ns + SAMPLE_PERIOD_NS {
            return None;
        }
        let period = now - self.at_ns;
        let polls: Vec<u64> = ctl.polls().collect();
        self.polls.resize(polls.len(), 0);
        let rx_gap_ns = polls
            .iter()
            .zip(&self.polls)
            .map(|(&n, &before)| period as f64 / n.saturating_sub(before).max(1) as f64)
            .collect();
        let s = Sample {
            period_ns: period,
            rx_bits_per_s: (rx_bytes - self.rx_bytes) as f64 * 8.0 * 1e9 / period as f64,
            mem_bytes_per_s: None,
            rx_gap_ns,
        };
        (self.at_ns, self.rx_bytes, self.polls) = (now, rx_bytes, polls);
        Some(s)
    }
}

/// Run the NIC thread to the end of the run; returns its counters (the sink is filled in place).
pub fn nic_loop<D: DeviceSide>(
    device: &mut D,
    src: &mut Prebuilt,
    reta: &IndirectionTable,
    timing: Schedule,
    ctl: &Control,
    sink: &mut Sink,
    mut p: NoProbe,
) -> NicStats {
    let mut st = NicStats::default();
    let (mut samples, mut occ_sum, mut iter) = (0u64, 0.0f64, 0u32);
    let (mut sampler, mut rx_bytes) = (Sampler::default(), 0u64);
    loop {
        let now = p.now_ns();
        if now >= timing.end_ns || ctl.aborted() {
            break;
        }
        let due = match timing.pace {
            Pace::Max => RX_BATCH,
            Pace::Pps(pps) => {
                let backlog = ((now as f64 * pps / 1e9) as u64).saturating_sub(st.offered);
                st.max_backlog = st.max_backlog.max(backlog);
                backlog.min(RX_BATCH as u64) as usize
            }
        };
        let in_window = now >= timing.warmup_ns;
        let mut dp = p;
        src.offer(&mut p, due, |f, bytes| {
            if let Some(at) = f.stamp_at {
                Stamp { seq: st.offered, tx_ns: now }.write(&mut bytes[at..]);
            }
            match device.rx(&mut dp, reta.queue(f.hash), f.hash, bytes) {
                Ok(()) => rx_bytes += (bytes.len() + wire::frame::FCS_LEN) as u64,
                Err(reason) => st.drops.add(reason),
            }
            st.offered += 1;
            if in_window {
                st.window_offered += 1;
                st.window_offered_bytes += bytes.len() as u64;
            }
        });
        let offered = st.offered;
        device.tx(&mut p, &mut |frame: &[u8]| sink.on_frame(frame, now, offered), TX_BUDGET);
        iter = iter.wrapping_add(1);
        if iter.is_multiple_of(SAMPLE_EVERY) {
            if in_window {
                let o = device.occupancy();
                occ_sum += o.used as f64 / o.capacity.max(1) as f64;
                samples += 1;
            }
            if let Some(s) = sampler.due(now, rx_bytes, ctl) {
                device.sample(&s);
            }
        }
    }
    st.occupancy = occ_sum / samples.max(1) as f64;
    let drain_start = p.now_ns();
    st.stuck = drain(device, ctl, sink, &mut p, timing.drain_limit, st.offered);
    st.drain_ns = p.now_ns() - drain_start;
    st
}

/// Keep transmitting until every ring is empty and every worker has confirmed it holds nothing, then
/// until every transmitted packet has left; then tell the workers to tear down.
fn drain<D: DeviceSide>(
    device: &mut D,
    ctl: &Control,
    sink: &mut Sink,
    p: &mut NoProbe,
    limit: Duration,
    offered: u64,
) -> Option<String> {
    let deadline = p.now_ns() + limit.as_nanos() as u64;
    let workers_done = |ctl: &Control, want: usize| ctl.quiesced() >= want;
    let tx = |device: &mut D, sink: &mut Sink, p: &mut NoProbe| {
        let now = p.now_ns();
        device.tx(p, &mut |frame: &[u8]| sink.on_frame(frame, now, offered), TX_BUDGET)
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
