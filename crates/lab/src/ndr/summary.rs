//! The outcome of an NDR search as a point reports it: the `ndr` object of its JSON (and so the `ndr.*`
//! columns of `results.csv`) and the lines added to its text.

use super::options::{NdrOptions, Unit};
use measure::{NdrResult, Resolution};
use serde::Serialize;
use std::fmt;

/// One trial of the search.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TrialRow {
    /// Offered rate, in the search's unit.
    pub rate: f64,
    /// Packets offered over the run.
    pub offered: u64,
    /// Packets sent back out.
    pub received: u64,
    /// Fraction of the offered packets lost.
    pub loss: f64,
    /// Whether the loss was within the tolerance.
    pub passed: bool,
}

/// An NDR search's result. Rates are the offered rate while traffic is sent (`--rate`'s meaning: with
/// `--on-off` bursts, the rate during the on periods).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NdrSummary {
    /// Whether some tried rate passed.
    pub found: bool,
    /// The no-drop rate in Gbps on the wire (none when no rate passed).
    pub gbps: Option<f64>,
    /// The no-drop rate in Mpps (none when no rate passed).
    pub mpps: Option<f64>,
    /// Unit of the search: that of `--rate`.
    pub unit: Unit,
    /// Low bound.
    pub low: f64,
    /// High bound (`--rate`).
    pub high: f64,
    /// Largest loss fraction a passing trial may have.
    pub loss_tolerance: f64,
    /// The bracket width the search stops at, in its unit.
    pub resolution: f64,
    /// Whether the bracket closed to the resolution.
    pub converged: bool,
    /// Number of trials run.
    pub trial_count: usize,
    /// Every trial, in the order run.
    pub trials: Vec<TrialRow>,
}

impl NdrSummary {
    /// The summary of `result`; `kbit` (kilobits per packet on the wire, Gbps / Mpps) converts the NDR
    /// between Gbps and Mpps.
    pub fn new(opts: &NdrOptions, result: &NdrResult, kbit: Option<f64>) -> NdrSummary {
        let (gbps, mpps) = match (result.rate, opts.unit) {
            (Some(r), Unit::Gbps) => (Some(r), kbit.map(|k| r / k)),
            (Some(r), Unit::Mpps) => (kbit.map(|k| r * k), Some(r)),
            (None, _) => (None, None),
        };
        let c = &opts.config;
        NdrSummary {
            found: result.rate.is_some(),
            gbps,
            mpps,
            unit: opts.unit,
            low: c.low,
            high: c.high,
            loss_tolerance: c.tolerance,
            resolution: match c.resolution {
                Resolution::Absolute(x) => x,
                Resolution::FractionOfMax(f) => f * c.high,
            },
            converged: result.converged,
            trial_count: result.trials.len(),
            trials: result
                .trials
                .iter()
                .map(|t| TrialRow {
                    rate: t.rate,
                    offered: t.trial.offered,
                    received: t.trial.received,
                    loss: t.loss,
                    passed: t.passed,
                })
                .collect(),
        }
    }
}

impl fmt::Display for NdrSummary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let num = |x: Option<f64>| x.map_or_else(|| "-".into(), |x| format!("{x:.3}"));
        let (unit, n) = (self.unit, self.trial_count);
        match self.gbps.or(self.mpps) {
            Some(_) => writeln!(f, "no-drop rate (RFC 2544)  {} Gbps  {} Mpps", num(self.gbps), num(self.mpps))?,
            None => writeln!(f, "no-drop rate (RFC 2544)  none: every trial down to {} {unit} lost packets", self.low)?,
        }
        writeln!(
            f,
            "  ({n} trials from {} to {} {unit}, loss tolerance {} %, resolution {} {unit}{}; the report above is of {})",
            self.low,
            self.high,
            self.loss_tolerance * 100.0,
            self.resolution,
            if self.converged { "" } else { ", not converged" },
            if self.found { "the trial at the NDR" } else { "the lowest rate tried" },
        )?;
        writeln!(
            f,
            "  {:>5} {:>12} {:>12} {:>12} {:>10}  verdict",
            "trial",
            format!("rate {unit}"),
            "offered",
            "sent",
            "loss %"
        )?;
        for (i, t) in self.trials.iter().enumerate() {
            writeln!(
                f,
                "  {:>5} {:>12.4} {:>12} {:>12} {:>10.4}  {}",
                i + 1,
                t.rate,
                t.offered,
                t.received,
                t.loss * 100.0,
                if t.passed { "pass" } else { "fail" }
            )?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use measure::{NdrConfig, Trial, TrialRecord};

    fn options(unit: Unit) -> NdrOptions {
        NdrOptions { unit, config: NdrConfig::new(0.0, 10.0) }
    }

    fn result(rate: Option<f64>) -> NdrResult {
        let record = |rate, received| TrialRecord {
            rate,
            trial: Trial { offered: 100, received },
            loss: (100 - received) as f64 / 100.0,
            passed: received == 100,
        };
        NdrResult { rate, converged: true, trials: vec![record(10.0, 90), record(5.0, 100)] }
    }

    /// 64 B frames: 84 B on the wire, 0.672 kbit per packet.
    const SMALL: Option<f64> = Some(0.672);

    #[test]
    fn converts_the_ndr_through_bits_per_packet() {
        let s = NdrSummary::new(&options(Unit::Gbps), &result(Some(5.0)), SMALL);
        assert_eq!(s.gbps, Some(5.0));
        assert!((s.mpps.unwrap() - 5.0 / 0.672).abs() < 1e-9, "{s:?}");
        let s = NdrSummary::new(&options(Unit::Mpps), &result(Some(5.0)), SMALL);
        assert!((s.gbps.unwrap() - 5.0 * 0.672).abs() < 1e-9, "{s:?}");
        assert_eq!((s.mpps, s.trial_count, s.resolution), (Some(5.0), 2, 0.1));
    }

    #[test]
    fn no_passing_rate_has_no_ndr_and_says_so() {
        let s = NdrSummary::new(&options(Unit::Gbps), &result(None), SMALL);
        assert_eq!((s.found, s.gbps, s.mpps), (false, None, None));
        let text = s.to_string();
        assert!(text.contains("none") && text.contains("lowest rate tried"), "{text}");
        assert_eq!(text.lines().filter(|l| l.ends_with("pass") || l.ends_with("fail")).count(), 2);
    }
}
