//! `--ndr`: a point's no-drop rate (RFC 2544 §26.1), found by [`measure::ndr`]'s binary search with
//! one engine run per tried rate, each the point's own configuration with only `--rate` changed (so a
//! simulated search is as deterministic as a simulated run).
//!
//! The point's report is the engine report of the trial at the NDR (or, when no rate passed, of the
//! lowest rate tried) with an `ndr` object added ([`summary::NdrSummary`]); its text ends with the
//! search's trials.

pub mod options;
pub mod summary;
pub mod trial;

pub use options::NdrOptions;

use crate::params::Params;
use crate::point::{self, Outcome, Report};
use anyhow::{Context, Result, anyhow};
use summary::NdrSummary;

/// Run the NDR search `opts` over the point of resolved parameters `p`.
pub fn run(p: &Params, opts: &NdrOptions) -> Result<Outcome> {
    let mut runs: Vec<(f64, Report)> = Vec::new();
    let result = measure::ndr::try_search(&opts.config, |rate| -> Result<_> {
        let at = Params { rate: Some(opts.unit.quantity(rate)), ..p.clone() };
        let report = point::build(&at)
            .and_then(|c| point::report(&c))
            .with_context(|| format!("NDR trial at {rate} {}", opts.unit))?;
        let counts = trial::counts(&report);
        runs.push((rate, report));
        Ok(counts)
    })?;
    let shown = match result.rate {
        Some(ndr) => runs.iter().find(|(rate, _)| *rate == ndr),
        None => runs.iter().min_by(|a, b| a.0.total_cmp(&b.0)),
    };
    let (_, report) = shown.ok_or_else(|| anyhow!("the NDR search ran no trial"))?;
    let summary = NdrSummary::new(opts, &result, report.wire_kbit_per_packet());
    let mut outcome = report.outcome()?;
    let object = outcome.json.as_object_mut().ok_or_else(|| anyhow!("an engine report is not a JSON object"))?;
    object.insert("ndr".into(), serde_json::to_value(&summary)?);
    outcome.text = format!("{}\n{}", outcome.text.trim_end(), summary.to_string().trim_end());
    Ok(outcome)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A tiny simulated search: 64 B into one 64-entry ring of two cores, up to 100 Gbps.
    fn search(sim_seed: u64) -> Outcome {
        let p: Params = toml::from_str(&format!(
            "engine = \"sim\"\napp = \"echo\"\ncores = 2\nring = 64\nsize = 64\nrate = \"100G\"\nduration = \"20us\"\n\
             warmup = \"5us\"\ntarget_queue = 0\ntarget_percent = 100.0\narrivals = \"poisson\"\nsim_seed = {sim_seed}\nndr = true"
        ))
        .unwrap();
        let p = p.resolved();
        run(&p, &NdrOptions::from_params(&p).unwrap().unwrap()).unwrap()
    }

    #[test]
    fn a_sim_search_is_deterministic_and_shows_the_trial_at_the_ndr() {
        let a = search(7);
        assert_eq!(a.json, search(7).json);
        let ndr = &a.json["ndr"];
        let trials = ndr["trials"].as_array().unwrap();
        assert!(trials.len() > 1 && !trials[0]["passed"].as_bool().unwrap(), "{ndr}");
        let at = trials.iter().find(|t| t["rate"] == ndr["gbps"]).unwrap();
        assert!(at["passed"].as_bool().unwrap());
        assert_eq!(at["offered"], a.json["accounting"]["offered"]);
        assert!(a.text.contains("no-drop rate (RFC 2544)"), "{}", a.text);
    }
}
