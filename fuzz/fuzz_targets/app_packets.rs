//! Arbitrary frames through every app's burst API: the first byte picks the app, the rest is cut into
//! frames, each after its length (two bytes, little-endian). A malformed frame must be counted and dropped, never panic; every buffer
//! must come back to the pool (a leak would exhaust the harness pool and fail the next burst).
#![no_main]

use apps::harness::TestCore;
use apps::{APP_NAMES, AnyApp, AppParams};
use libfuzzer_sys::fuzz_target;
use std::cell::RefCell;

thread_local! {
    /// One instance of every app (small tables), built once: building some takes milliseconds.
    static APPS: RefCell<Vec<AnyApp>> = RefCell::new({
        let small = AppParams::parse("flows=100").unwrap();
        APP_NAMES
            .iter()
            .map(|name| {
                let params = if ["nat", "lb", "maglev"].contains(name) { &small } else { &AppParams::new() };
                AnyApp::new(name, params, 0, 1).unwrap()
            })
            .collect()
    });
    static CORE: TestCore = TestCore::new();
}

fuzz_target!(|data: &[u8]| {
    let Some((&pick, mut rest)) = data.split_first() else { return };
    let mut frames = Vec::new();
    while let [lo, hi, tail @ ..] = rest {
        let len = usize::from(u16::from_le_bytes([*lo, *hi])).min(tail.len());
        frames.push(tail[..len].to_vec());
        rest = &tail[len..];
        if frames.len() == 32 {
            break;
        }
    }
    APPS.with_borrow_mut(|apps| {
        let n = apps.len();
        let app = &mut apps[pick as usize % n];
        CORE.with(|core| {
            core.run(app, &frames);
        });
    });
});
