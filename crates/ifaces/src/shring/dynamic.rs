//! Dynamic shRing (000 §4.5-4.6): both ring sets are built up front — privRing's private rings and
//! RxArr's shared rings, each behind its own steering (the paper's two pre-programmed RSS table sets) —
//! and a [`Controller`] fed with periodic [`Sample`]s decides which set the NIC steers to.
//!
//! A switch is an epoch: the NIC records how many packets it has delivered to each core's completion
//! ring of the old set, then publishes the new epoch. A core that sees the new epoch first drains its
//! old ring up to that count, then acknowledges the epoch and moves to the new set ("before we begin
//! polling the new rings for packets, we drain remaining packets from the previous ring set"). So no
//! packet is lost or delivered twice, and each core still receives in arrival order. The NIC switches
//! again only once every core has acknowledged the previous switch.
//!
//! Both sets keep their buffers posted all the time; transmission always uses the private set's Tx
//! rings.

use super::ShDevice;
use super::ShDriver;
use super::arr::{ArrNic, ArrRepost, RxArr};
use crate::core::CoreCtx;
use crate::design::{ConfigError, Design, DeviceSide, DriverSide, DropReason, IfaceConfig, Metrics, Occupancy, Sample};
use crate::packet::Packet;
use crate::pool::SharedPool;
use crate::privring::{PrivRing, PrivRingDevice, PrivRingDriver};
use crate::probe::Probe;
use crate::sync::{Arc, AtomicU32, Ordering};
use std::collections::VecDeque;
use wire::QueueId;

/// The dynamic shRing design (`--iface dshring`).
#[derive(Debug)]
pub struct Dynamic;

/// The switching thresholds of the default controller (000 §4.6).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Thresholds {
    /// Receive throughput above which shRing may pay off, Gbit/s (170).
    pub gbps: f64,
    /// Memory bandwidth above which shRing may pay off, GiB/s (25).
    pub mem_gib_per_s: f64,
    /// A core is overloaded when its time between rx calls exceeds this many times the median (32, the
    /// largest burst).
    pub overload_ratio: f64,
    /// Samples in the sliding window (16).
    pub window: usize,
}

impl Default for Thresholds {
    /// The paper's values (§4.5-4.6).
    fn default() -> Self {
        Thresholds { gbps: 170.0, mem_gib_per_s: 25.0, overload_ratio: 32.0, window: 16 }
    }
}

/// Which ring set the NIC steers to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RingSet {
    /// privRing: one ring per core.
    Private = 0,
    /// RxArr shRing: one ring per group of cores.
    Shared = 1,
}

impl RingSet {
    fn of_epoch(epoch: u32) -> RingSet {
        if epoch.is_multiple_of(2) { RingSet::Private } else { RingSet::Shared }
    }
}

/// Decides, from each sample, which ring set should be used.
pub trait Controller: Send {
    /// The set wanted after `sample`, given the set in use now.
    fn decide(&mut self, sample: &Sample, now: RingSet) -> RingSet;
}

/// The paper's heuristic (§4.5): a sliding window of samples; switch to shared rings when more than half
/// of the samples exceed the throughput and memory-bandwidth thresholds with no core overloaded, and back
/// to private rings when 7/8 of them do not. Without a memory-bandwidth measurement (the live engine),
/// throughput alone decides.
#[derive(Debug)]
pub struct Heuristic {
    t: Thresholds,
    window: VecDeque<bool>,
}

impl Heuristic {
    /// A controller with thresholds `t` and an empty window.
    pub fn new(t: Thresholds) -> Heuristic {
        Heuristic { t, window: VecDeque::with_capacity(t.window + 1) }
    }

    /// Whether some core calls rx far less often than the median core (pathological overload).
    pub fn overloaded(&self, gaps: &[f64]) -> bool {
        let mut g: Vec<f64> = gaps.iter().copied().filter(|x| x.is_finite()).collect();
        if g.len() < 2 {
            return false;
        }
        g.sort_by(f64::total_cmp);
        let median = g[g.len() / 2];
        g[g.len() - 1] > self.t.overload_ratio * median
    }

    /// Whether one sample argues for shared rings.
    pub fn favours_shared(&self, s: &Sample) -> bool {
        s.rx_bits_per_s > self.t.gbps * 1e9
            && s.mem_bytes_per_s.is_none_or(|m| m > self.t.mem_gib_per_s * f64::from(1u32 << 30))
            && !self.overloaded(&s.rx_gap_ns)
    }
}

impl Controller for Heuristic {
    fn decide(&mut self, s: &Sample, now: RingSet) -> RingSet {
        self.window.push_back(self.favours_shared(s));
        if self.window.len() > self.t.window {
            self.window.pop_front();
        }
        if self.window.len() < self.t.window {
            return now;
        }
        let yes = self.window.iter().filter(|&&b| b).count();
        let no = self.window.len() - yes;
        let next = match now {
            RingSet::Private if 2 * yes > self.t.window => RingSet::Shared,
            RingSet::Shared if 8 * no >= 7 * self.t.window => RingSet::Private,
            _ => now,
        };
        if next != now {
            self.window.clear();
        }
        next
    }
}

/// What the NIC and the cores share about switches.
#[derive(Debug)]
struct Switch {
    /// Switches so far; even: private set, odd: shared set. Written by the NIC.
    epoch: AtomicU32,
    /// Per set and core, the packets the NIC had delivered to that core's ring of the set when it last
    /// switched away from the set.
    delivered: [Box<[AtomicU32]>; 2],
    /// Per core, the last epoch it acknowledged (after draining the old set).
    acked: Box<[AtomicU32]>,
}

/// Dynamic shRing's NIC side.
pub struct DynamicDevice {
    private: PrivRingDevice,
    shared: ShDevice<ArrNic>,
    switch: Arc<Switch>,
    epoch: u32,
    /// Per set and core, packets delivered so far.
    delivered: [Vec<u32>; 2],
    controller: Box<dyn Controller>,
}

impl std::fmt::Debug for DynamicDevice {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "DynamicDevice(epoch {})", self.epoch)
    }
}

/// Dynamic shRing's driver side for one core.
#[derive(Debug)]
pub struct DynamicDriver {
    core: usize,
    private: PrivRingDriver,
    shared: ShDriver<ArrRepost>,
    switch: Arc<Switch>,
    /// The epoch whose set this core polls.
    epoch: u32,
    /// Per set, packets received from it so far.
    received: [u32; 2],
}

impl Design for Dynamic {
    const NAME: &'static str = "dshring";
    type Device = DynamicDevice;
    type Driver = DynamicDriver;

    fn buffers_needed(cfg: &IfaceConfig) -> u32 {
        PrivRing::buffers_needed(cfg) + RxArr::buffers_needed(cfg)
    }

    fn build(cfg: &IfaceConfig, pool: &Arc<SharedPool>) -> Result<(DynamicDevice, Vec<DynamicDriver>), ConfigError> {
        if cfg.dynamic.window == 0 || cfg.dynamic.overload_ratio.is_nan() || cfg.dynamic.overload_ratio < 1.0 {
            return Err(ConfigError::new("dynamic", "the window must be at least 1 and the overload ratio at least 1"));
        }
        let (private, privs) = PrivRing::build(cfg, pool)?;
        let (shared, shareds) = RxArr::build(cfg, pool)?;
        let atomics = || (0..cfg.cores).map(|_| AtomicU32::new(0)).collect::<Box<[_]>>();
        let switch = Arc::new(Switch { epoch: AtomicU32::new(0), delivered: [atomics(), atomics()], acked: atomics() });
        let drivers = privs
            .into_iter()
            .zip(shareds)
            .enumerate()
            .map(|(core, (private, shared))| DynamicDriver {
                core,
                private,
                shared,
                switch: switch.clone(),
                epoch: 0,
                received: [0; 2],
            })
            .collect();
        let device = DynamicDevice {
            private,
            shared,
            switch,
            epoch: 0,
            delivered: [vec![0; cfg.cores], vec![0; cfg.cores]],
            controller: Box::new(Heuristic::new(cfg.dynamic)),
        };
        Ok((device, drivers))
    }
}

impl DynamicDevice {
    /// Replace the controller (the default is [`Heuristic`] with the configured thresholds).
    pub fn set_controller(&mut self, c: Box<dyn Controller>) {
        self.controller = c;
    }

    /// The set the NIC steers to now.
    pub fn ring_set(&self) -> RingSet {
        RingSet::of_epoch(self.epoch)
    }

    /// Steer to `to`. Returns false, changing nothing, while some core has not yet drained the previous
    /// switch (the caller may retry at its next sample).
    pub fn switch_to(&mut self, to: RingSet) -> bool {
        if to == self.ring_set() {
            return true;
        }
        let s = &self.switch;
        // Acquire: the cores' drains are complete before their acknowledgement.
        if s.acked.iter().any(|a| a.load(Ordering::Acquire) != self.epoch) {
            return false;
        }
        let old = self.ring_set() as usize;
        for (d, &n) in s.delivered[old].iter().zip(&self.delivered[old]) {
            // Relaxed: published by the epoch's release store below.
            d.store(n, Ordering::Relaxed);
        }
        self.epoch = self.epoch.wrapping_add(1);
        // Release: a core that reads the new epoch sees the final counts, and every completion the NIC
        // wrote to the old set before.
        s.epoch.store(self.epoch, Ordering::Release);
        true
    }
}

impl DeviceSide for DynamicDevice {
    #[inline]
    fn rx<P: Probe>(&mut self, p: &mut P, queue: QueueId, hash: u32, frame: &[u8]) -> Result<(), DropReason> {
        let set = self.ring_set();
        match set {
            RingSet::Private => self.private.rx(p, queue, hash, frame),
            RingSet::Shared => {
                // Completions the private rings held before the switch are written now.
                self.private.idle(p);
                self.shared.rx(p, queue, hash, frame)
            }
        }?;
        let n = &mut self.delivered[set as usize][usize::from(queue)];
        *n = n.wrapping_add(1);
        Ok(())
    }

    /// The ring of the set the NIC steers to now.
    fn ring_of(&self, queue: QueueId) -> usize {
        match self.ring_set() {
            RingSet::Private => self.private.ring_of(queue),
            RingSet::Shared => self.shared.ring_of(queue),
        }
    }

    fn tx<P: Probe, W: FnMut(&[u8])>(&mut self, p: &mut P, wire: &mut W, budget: usize) -> usize {
        self.private.tx(p, wire, budget)
    }

    fn occupancy(&self) -> Occupancy {
        let (a, b) = (self.private.occupancy(), self.shared.occupancy());
        Occupancy { used: a.used + b.used, capacity: a.capacity + b.capacity }
    }

    fn tx_pending(&self) -> u64 {
        self.private.tx_pending()
    }

    fn metrics(&self) -> Metrics {
        let mut m = Metrics::from([
            ("switches".into(), f64::from(self.epoch)),
            ("ring_set_shared".into(), f64::from(self.ring_set() as u8)),
        ]);
        m.extend(self.private.metrics().into_iter().map(|(k, v)| (format!("private.{k}"), v)));
        m.extend(self.shared.metrics().into_iter().map(|(k, v)| (format!("shared.{k}"), v)));
        m
    }

    fn sample(&mut self, s: &Sample) {
        let want = self.controller.decide(s, self.ring_set());
        self.switch_to(want);
    }

    fn idle<P: Probe>(&mut self, p: &mut P) {
        self.private.idle(p);
        self.shared.idle(p);
    }
}

impl DynamicDriver {
    fn rx_from<'c, P: Probe>(
        &mut self,
        set: RingSet,
        p: &mut P,
        core: &'c CoreCtx,
        out: &mut Vec<Packet<'c>>,
        max: usize,
    ) -> usize {
        let n = match set {
            RingSet::Private => self.private.rx_burst(p, core, out, max),
            RingSet::Shared => self.shared.rx_burst(p, core, out, max),
        };
        let r = &mut self.received[set as usize];
        *r = r.wrapping_add(n as u32);
        n
    }
}

impl DriverSide for DynamicDriver {
    #[inline]
    fn rx_burst<'c, P: Probe>(&mut self, p: &mut P, core: &'c CoreCtx, out: &mut Vec<Packet<'c>>, max: usize) -> usize {
        let s = &self.switch;
        // Acquire: pairs with the NIC's release of the epoch (final counts, old completions).
        let epoch = s.epoch.load(Ordering::Acquire);
        let mut n = 0;
        if epoch != self.epoch {
            let old = RingSet::of_epoch(self.epoch);
            n = self.rx_from(old, p, core, out, max);
            let last = self.switch.delivered[old as usize][self.core].load(Ordering::Relaxed);
            if self.received[old as usize] != last {
                return n;
            }
            self.epoch = epoch;
            // Release: the drain is complete before the NIC, acquiring this, switches again.
            self.switch.acked[self.core].store(epoch, Ordering::Release);
        }
        n + self.rx_from(RingSet::of_epoch(self.epoch), p, core, out, max - n)
    }

    #[inline]
    fn tx_burst<'c, P: Probe>(&mut self, p: &mut P, core: &'c CoreCtx, pkts: &mut Vec<Packet<'c>>) -> usize {
        self.private.tx_burst(p, core, pkts)
    }

    fn teardown(&mut self, core: &CoreCtx) {
        self.private.teardown(core);
        self.shared.teardown(core);
    }

    fn metrics(&self) -> Metrics {
        let mut m: Metrics = self.private.metrics().into_iter().map(|(k, v)| (format!("private.{k}"), v)).collect();
        m.extend(self.shared.metrics().into_iter().map(|(k, v)| (format!("shared.{k}"), v)));
        m
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    fn sample(gbps: f64, gaps: &[f64]) -> Sample {
        Sample { period_ns: 10_000_000, rx_bits_per_s: gbps * 1e9, mem_bytes_per_s: None, rx_gap_ns: gaps.to_vec() }
    }

    #[test]
    fn heuristic_needs_a_majority_to_share_and_seven_eighths_to_go_back() {
        let mut h = Heuristic::new(Thresholds::default());
        let (hot, cold) = (sample(190.0, &[100.0, 120.0, 90.0]), sample(100.0, &[100.0; 3]));
        let mut set = RingSet::Private;
        for i in 0..16 {
            set = h.decide(if i < 9 { &hot } else { &cold }, set);
        }
        assert_eq!(set, RingSet::Shared, "9 of 16 above the thresholds");
        for _ in 0..3 {
            set = h.decide(&hot, set);
        }
        for _ in 0..13 {
            set = h.decide(&cold, set);
        }
        assert_eq!(set, RingSet::Shared, "13 of 16 below is not 7/8");
        set = h.decide(&cold, set);
        assert_eq!(set, RingSet::Private, "14 of 16 below");
        // An overloaded core (a gap over 32x the median) vetoes sharing, as does low memory bandwidth.
        let overloaded = sample(190.0, &[100.0, 100.0, 3300.0]);
        assert!(!h.favours_shared(&overloaded));
        assert!(h.favours_shared(&sample(190.0, &[100.0, 100.0, 3100.0])));
        let low_mem = Sample { mem_bytes_per_s: Some(1e9), ..hot.clone() };
        assert!(!h.favours_shared(&low_mem));
    }
}
