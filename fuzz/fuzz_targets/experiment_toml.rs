//! Arbitrary text as an experiment file: parsing returns an experiment or a one-line error, never panics,
//! and every point of a parsed experiment either builds an engine configuration or fails with an error.
#![no_main]

use lab::experiment::Experiment;
use lab::params::Params;
use libfuzzer_sys::fuzz_target;

/// Points built per input at most; a sweep's points are the product of its axes, which text can make
/// astronomically many (a legitimate experiment, too slow to expand here).
const MAX_POINTS: usize = 256;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let Ok(exp) = Experiment::parse("fuzz", text) else { return };
    let points = exp.axes.iter().fold(exp.cases.len(), |n, a| n.saturating_mul(a.values.len()));
    if points > MAX_POINTS {
        return;
    }
    for p in exp.points(&Params::default()) {
        let _ = lab::point::build(&p.params);
    }
});
