//! Arbitrary text as `--app-params`: the list parses or fails with one line, and the app the first byte
//! picks either takes the parameters or rejects them with an error, never panics. Builds stay small:
//! inputs naming sizes beyond a few thousand entries are only parsed, as their tables take real memory
//! and time to fill.
#![no_main]

use apps::{APP_NAMES, AnyApp, AppParams};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&pick, rest)) = data.split_first() else { return };
    let Ok(text) = std::str::from_utf8(rest) else { return };
    let Ok(params) = AppParams::parse(text) else { return };
    let small = |v: &str| ifaces::ringsize::parse_count(v).map_or(true, |n| n <= 4096);
    if !text.split([',', ' ', '\t', '\n']).filter_map(|i| i.split_once('=')).all(|(_, v)| small(v)) {
        return;
    }
    let _ = AnyApp::new(APP_NAMES[pick as usize % APP_NAMES.len()], &params, 0, 2);
});
