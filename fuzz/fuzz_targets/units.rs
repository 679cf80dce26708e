//! Arbitrary text through every unit parser of the command line and experiment files: rates, durations,
//! frame-size specs, ring sizes and counts, buffer layouts, runtimes, Rx policies, shards and
//! quantities. Each returns a value or an error, never panics.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(s) = std::str::from_utf8(data) else { return };
    let _ = s.parse::<traffic::Rate>().map(|r| r.gap_ps(64));
    let _ = traffic::units::parse_duration_ns(s);
    let _ = s.parse::<traffic::sizes::SizeSpec>();
    let _ = s.parse::<ifaces::RingSize>();
    let _ = ifaces::ringsize::parse_count(s);
    let _ = ifaces::BufLayout::parse(s).map(|l| l.data_room());
    let _ = apps::Runtime::parse(s);
    let _ = s.parse::<ifaces::rxbisect::AxPolicy>();
    let _ = s.parse::<lab::sweep::Shard>().map(|sh| sh.holds(7));
    let _ = s.parse::<lab::params::Quantity>();
});
