//! Arbitrary text as `--app-params`: the list parses or fails with one line, and every app either takes
//! the parameters or rejects them with an error, never panics. Builds stay small: inputs naming sizes
//! beyond a few thousand entries are skipped, as their tables take real memory and time to fill.
#![no_main]

use apps::{APP_NAMES, AnyApp, AppParams};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let Ok(params) = AppParams::parse(text) else { return };
    let small = |v: &str| ifaces::ringsize::parse_count(v).map_or(true, |n| n <= 4096);
    if !text.split([',', ' ', '\t', '\n']).filter_map(|i| i.split_once('=')).all(|(_, v)| small(v)) {
        return;
    }
    for name in APP_NAMES {
        let _ = AnyApp::new(name, &params, 0, 2);
    }
});
