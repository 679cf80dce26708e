//! The `--ndr*` parameters read into a search configuration; every bad value is an error naming its
//! option.

use crate::params::{Params, Quantity};
use anyhow::{Result, anyhow, bail};
use measure::{NdrConfig, Resolution};
use serde::Serialize;
use std::fmt;
use traffic::Rate;

/// The unit the search runs in: that of `--rate`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Unit {
    /// Gigabits per second on the wire, framing included (`10G`).
    Gbps,
    /// Million packets per second (`5Mpps`).
    Mpps,
}

impl fmt::Display for Unit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Unit::Gbps => "Gbps",
            Unit::Mpps => "Mpps",
        })
    }
}

impl Unit {
    /// `value` in this unit as `--rate` takes it.
    pub fn quantity(self, value: f64) -> Quantity {
        Quantity(match self {
            Unit::Gbps => format!("{value}G"),
            Unit::Mpps => format!("{value}Mpps"),
        })
    }
}

/// A rate split into its unit and value.
fn split(rate: Rate) -> (Unit, f64) {
    match rate {
        Rate::Gbps(v) => (Unit::Gbps, v),
        Rate::Mpps(v) => (Unit::Mpps, v),
    }
}

/// A validated NDR search: its unit and the search's bounds, tolerance and resolution.
#[derive(Debug, Clone, PartialEq)]
pub struct NdrOptions {
    /// Unit of the bounds and of every tried rate.
    pub unit: Unit,
    /// The search.
    pub config: NdrConfig,
}

/// Most bisection steps, whatever the resolution asks for (2^-40 of the bracket).
const MAX_STEPS: f64 = 40.0;

/// `value` of `--NAME` in `unit`: `0`, or a rate of the same unit as `--rate`.
fn rate_in(unit: Unit, name: &str, value: &Quantity) -> Result<f64> {
    let text = value.0.trim();
    if text.parse::<f64>() == Ok(0.0) {
        return Ok(0.0);
    }
    let (u, v) = split(text.parse::<Rate>().map_err(|e| anyhow!("invalid --{name}: {e}"))?);
    if u != unit {
        bail!("invalid --{name}: '{text}' is in {u} but --rate is in {unit}; give it in {unit}");
    }
    Ok(v)
}

impl NdrOptions {
    /// The search `p` asks for, or `None` without `--ndr`; any `--ndr-*` option without `--ndr` is an
    /// error, as are `--rate max`, a low bound not below `--rate`, a loss tolerance outside [0, 1) or above
    /// 0 with `--noise-horizon`, `--settle`, and a resolution that is not a positive rate or share.
    pub fn from_params(p: &Params) -> Result<Option<NdrOptions>> {
        if p.ndr != Some(true) {
            let given = [
                ("ndr-low", p.ndr_low.is_some()),
                ("ndr-resolution", p.ndr_resolution.is_some()),
                ("ndr-loss", p.ndr_loss.is_some()),
            ];
            if let Some((name, _)) = given.iter().find(|(_, set)| *set) {
                bail!("invalid --{name}: it sets the no-drop-rate search; add --ndr");
            }
            return Ok(None);
        }
        let rate = p.rate.as_ref().map_or("", |r| r.0.trim());
        if rate == "max" || rate.is_empty() {
            bail!("invalid --rate: --ndr searches below --rate, so it needs a rate, not `max`; give e.g. 10G");
        }
        let (unit, high) = split(rate.parse::<Rate>().map_err(|e| anyhow!("invalid --rate: {e}"))?);
        let low = p.ndr_low.as_ref().map(|l| rate_in(unit, "ndr-low", l)).transpose()?.unwrap_or(0.0);
        if low >= high {
            bail!("invalid --ndr-low: {low} {unit} is not below --rate {high} {unit}, the search's high bound");
        }
        let tolerance = p.ndr_loss.unwrap_or(0.0);
        if !(0.0..1.0).contains(&tolerance) {
            bail!("invalid --ndr-loss: {tolerance} is not a fraction in [0, 1); 0 allows no loss, 0.001 allows 0.1 %");
        }
        if tolerance > 0.0 && p.noise_horizon.is_some() {
            // The run packs the horizon's rarest interruption into milliseconds: the packets it drops are a
            // share of the run's, not of the horizon's trial (sim/src/noise.rs), so no share of them means
            // what it would in that trial. Any drop failing a trial (RFC 2544) means the same in both.
            bail!(
                "invalid --ndr-loss: with --noise-horizon a trial carries the horizon's longest interruption in a \
                 run of milliseconds, so a share of the run's packets is not the share a trial that long loses; \
                 search with --ndr-loss 0 (any drop fails, as in RFC 2544) or without --noise-horizon"
            );
        }
        if p.settle == Some(true) {
            // A trial counts every packet it offered, warm-up included: a run that ends its warm-up when
            // it settles would be a shorter, easier trial at one rate than at another.
            bail!(
                "invalid --settle: a no-drop trial counts every packet of its run, warm-up included, so every \
                 trial must be as long as the others; drop --settle"
            );
        }
        let resolution = match p.ndr_resolution.as_ref().map(|r| r.0.trim()) {
            None => Resolution::FractionOfMax(0.01),
            Some(r) => match r.strip_suffix('%') {
                Some(pct) => match pct.trim().parse::<f64>() {
                    Ok(x) if x > 0.0 && x <= 100.0 => Resolution::FractionOfMax(x / 100.0),
                    _ => bail!("invalid --ndr-resolution: '{r}' is not a share in (0 %, 100 %]; e.g. 1%"),
                },
                None => match rate_in(unit, "ndr-resolution", &Quantity(r.to_string()))? {
                    x if x > 0.0 => Resolution::Absolute(x),
                    _ => bail!("invalid --ndr-resolution: it must be above 0, e.g. 0.1G or 1%"),
                },
            },
        };
        let step = match resolution {
            Resolution::Absolute(x) => x,
            Resolution::FractionOfMax(f) => f * high,
        };
        let max_iterations = ((high - low) / step).log2().ceil().clamp(1.0, MAX_STEPS) as u32;
        Ok(Some(NdrOptions { unit, config: NdrConfig { low, high, tolerance, resolution, max_iterations } }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(rate: &str, extra: &str) -> Params {
        toml::from_str(&format!("ndr = true\nrate = \"{rate}\"\n{extra}")).unwrap()
    }

    fn options(rate: &str, extra: &str) -> Result<NdrOptions> {
        NdrOptions::from_params(&params(rate, extra)).map(|o| o.unwrap())
    }

    fn error(rate: &str, extra: &str) -> String {
        format!("{:#}", options(rate, extra).unwrap_err())
    }

    #[test]
    fn defaults_search_from_zero_to_the_rate_in_its_unit() {
        let o = options("10G", "").unwrap();
        assert_eq!(o.unit, Unit::Gbps);
        let c = o.config;
        assert_eq!((c.low, c.high, c.tolerance, c.resolution), (0.0, 10.0, 0.0, Resolution::FractionOfMax(0.01)));
        // 10 Gbps down to 0.1 Gbps: 7 halvings.
        assert_eq!(c.max_iterations, 7);
        assert_eq!(options("5Mpps", "ndr_low = \"1Mpps\"").unwrap().config.low, 1.0);
    }

    #[test]
    fn resolution_is_a_rate_or_a_share() {
        let o = options("10G", "ndr_resolution = \"0.5G\"\nndr_low = \"2G\"").unwrap();
        assert_eq!((o.config.resolution, o.config.max_iterations), (Resolution::Absolute(0.5), 4));
        let o = options("10G", "ndr_resolution = \"5%\"").unwrap();
        assert_eq!(o.config.resolution, Resolution::FractionOfMax(0.05));
    }

    #[test]
    fn without_ndr_there_is_no_search_and_no_ndr_option() {
        assert_eq!(NdrOptions::from_params(&Params::default()).unwrap(), None);
        let e = NdrOptions::from_params(&Params { ndr_loss: Some(0.1), ..Params::default() }).unwrap_err();
        assert!(e.to_string().contains("--ndr-loss") && e.to_string().contains("add --ndr"), "{e}");
    }

    #[test]
    fn bad_values_name_their_option() {
        assert!(error("max", "").contains("invalid --rate"));
        assert!(error("10G", "ndr_low = \"10G\"").contains("invalid --ndr-low"));
        assert!(error("10G", "ndr_low = \"1Mpps\"").contains("invalid --ndr-low: '1Mpps' is in Mpps"));
        assert!(error("10G", "ndr_loss = 1.0").contains("invalid --ndr-loss"));
        assert!(error("10G", "ndr_loss = 0.001\nnoise_horizon = \"60s\"").contains("--noise-horizon"));
        assert!(options("10G", "ndr_loss = 0.0\nnoise_horizon = \"60s\"").is_ok());
        assert!(error("10G", "settle = true").contains("invalid --settle"));
        assert!(error("10G", "ndr_loss = -0.1").contains("invalid --ndr-loss"));
        assert!(error("10G", "ndr_resolution = \"0%\"").contains("invalid --ndr-resolution"));
        assert!(error("10G", "ndr_resolution = \"0\"").contains("invalid --ndr-resolution"));
        assert!(error("10G", "ndr_resolution = \"fine\"").contains("invalid --ndr-resolution"));
    }

    #[test]
    fn tried_rates_read_back_as_rates() {
        let q = Unit::Gbps.quantity(7.34375);
        assert_eq!(q.0.parse::<Rate>().unwrap(), Rate::Gbps(7.34375));
        assert_eq!(Unit::Mpps.quantity(0.1).0.parse::<Rate>().unwrap(), Rate::Mpps(0.1));
    }
}
