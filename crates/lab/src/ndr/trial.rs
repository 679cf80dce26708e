//! What one NDR trial lost, read from its engine's report.
//!
//! A trial's loss is every packet the traffic offered that never went back out on the wire, whatever the
//! reason: dropped at the NIC (each design's reasons, e.g. no Rx descriptor, and the NIC buffer), dropped
//! by the app, or dropped when a Tx ring was full. Both engines drain before they report and check
//! conservation (offered = delivered + dropped + queued, with nothing queued after the drain), so
//! `offered - sent` is exactly that count.
//!
//! The simulator also counts as lost what went out later than RFC 2544's residual allowance after the
//! offered traffic ended (`sim::report::Accounting::sent_late`): a short run's buffers can absorb an
//! overload that a 60 s trial's could not, and would otherwise hand it back as delivered.
//!
//! An app that sends nothing back (`apps::App::sends`: Ensō's log monitor, its Table 1 program) receives
//! what its cores took: such a run loses what the NIC dropped and what the cores took after the residual
//! allowance (`Accounting::consumed_late`).
//!
//! The counts cover the whole run, warm-up included, not the measurement window: the simulator counts
//! a packet in its window's throughput by the time it goes out, so the packets in flight at the
//! window's two edges would read as loss (or gain) on a run that dropped nothing. RFC 2544 counts
//! every frame of the trial's stream too.

use crate::point::Report;
use measure::Trial;

/// Packets `report`'s run offered and sent back out (see the module doc).
pub fn counts(report: &Report) -> Trial {
    match report {
        Report::Sim(r) => {
            let a = &r.accounting;
            Trial { offered: a.offered, received: a.sent - a.sent_late + a.consumed - a.consumed_late }
        }
        Report::Live(r) => {
            // The live report has no offered total: delivered plus NIC drops (nothing is queued after
            // the drain) is the offered count its conservation check compares.
            let delivered: u64 = r.per_core.iter().map(|c| c.rx).sum();
            let sent: u64 = r.per_core.iter().map(|c| c.tx + c.consumed).sum();
            Trial { offered: delivered + r.drops.values().sum::<u64>(), received: sent }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::params::Params;
    use crate::point;

    /// A tiny sim run at `rate`.
    fn sim(extra: &str, rate: &str) -> Report {
        let p: Params = toml::from_str(&format!(
            "engine = \"sim\"\napp = \"echo\"\ncores = 2\nsize = 64\nduration = \"20us\"\nwarmup = \"5us\"\nrate = \"{rate}\"\n{extra}"
        ))
        .unwrap();
        point::report(&point::build(&p.resolved()).unwrap()).unwrap()
    }

    #[test]
    fn sim_loss_is_every_drop() {
        // 64 B at 100 Gbps into a 64-entry ring on one of two cores overflows it.
        let r = sim("iface = \"privring\"\nring = 64\ntarget_queue = 0\ntarget_percent = 100.0", "100G");
        let Report::Sim(s) = &r else { unreachable!() };
        let t = counts(&r);
        let a = &s.accounting;
        let dropped: u64 = a.dropped.values().sum();
        assert!(dropped > 0, "{a:?}");
        assert_eq!(t.offered, a.offered);
        assert_eq!(t.offered - t.received, dropped + a.app_dropped);
    }

    #[test]
    fn a_sink_loses_what_its_cores_did_not_take() {
        // echo without replies at 100 Gbps of 64 B on one core overflows its ring; below that it keeps up.
        let r = sim("iface = \"privring\"\napp_params = \"reply=no\"", "100G");
        let Report::Sim(s) = &r else { unreachable!() };
        let a = &s.accounting;
        assert_eq!(a.sent, 0);
        let t = counts(&r);
        assert_eq!((a.app_dropped, a.consumed), (0, a.delivered));
        assert_eq!(t.offered - t.received, a.dropped.values().sum::<u64>() + a.consumed_late);
        assert!(t.loss() > 0.0);
        assert_eq!(counts(&sim("iface = \"privring\"\napp_params = \"reply=no\"", "1G")).loss(), 0.0);
    }

    #[test]
    fn sim_without_drops_loses_nothing() {
        let t = counts(&sim("iface = \"privring\"", "1G"));
        assert!(t.offered > 0);
        assert_eq!(t.loss(), 0.0);
    }
}
