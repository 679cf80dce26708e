//! Calibrations that live in experiment files still hold: an NF parameter a paper does not state, set
//! once so that the configuration whose I/O working set fits the DDIO ways costs what the paper says, is
//! checked here against that statement (the FastClick graphs' own calibrations are checked in
//! `crates/sim/tests/calibration.rs`).

use std::process::Command;

/// The `[run]` table's `app_params` of an experiment file.
fn app_params(file: &str) -> String {
    let path = format!("{}/../../experiments/{file}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let doc: toml::Table = text.parse().unwrap_or_else(|e| panic!("{path}: {e}"));
    doc["run"]["app_params"].as_str().unwrap_or_else(|| panic!("{path}: no [run] app_params")).to_string()
}

/// shRing Fig. 2's WorkPackage: shRing/8 costs 2021 cycles per packet, within 2 % (the calibration in
/// experiments/shring-fig2.toml).
#[test]
fn shring_fig2_workpackage_costs_what_shring_states_at_shring_8() {
    let params = app_params("shring-fig2.toml");
    let out = Command::new(env!("CARGO_BIN_EXE_rxlab"))
        .args(["run", "--engine", "sim", "--runtime", "fastclick", "--app", "workpackage", "--app-params", &params])
        .args(["--iface", "shring", "--share", "8", "--cores", "16", "--size", "1518", "--rate", "200G"])
        .args(["--duration", "5ms", "--warmup", "10ms", "--json"])
        .output()
        .expect("run rxlab");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let r: serde_json::Value = serde_json::from_slice(&out.stdout).expect("a JSON report");
    let cycles = r["cycles"]["total"].as_f64().expect("cycles.total");
    assert!(
        (cycles - 2021.0).abs() / 2021.0 < 0.02,
        "shRing/8 costs {cycles:.0} cycles per packet with {params}; shRing §2.3 puts it at 2021 \
         (recalibrate `work` in experiments/shring-fig2.toml: each random number costs 5 cycles)"
    );
}

/// Every experiment that runs WorkPackage with a `work=` uses shRing Fig. 2's calibrated value: the
/// calibration is made once, in experiments/shring-fig2.toml, and the others repeat it.
#[test]
fn every_experiment_uses_shring_fig2s_calibrated_work() {
    let work = |params: &str| params.split(',').find_map(|kv| kv.trim().strip_prefix("work=")).map(str::to_string);
    let calibrated = work(&app_params("shring-fig2.toml")).expect("shring-fig2.toml sets work=");
    let dir = format!("{}/../../experiments", env!("CARGO_MANIFEST_DIR"));
    let mut users = 0;
    for entry in std::fs::read_dir(&dir).expect("experiments/") {
        let path = entry.expect("a directory entry").path();
        if path.extension().is_none_or(|e| e != "toml") {
            continue;
        }
        let doc: toml::Table = std::fs::read_to_string(&path).unwrap().parse().unwrap();
        let cases = doc.get("case").and_then(|c| c.as_array()).cloned().unwrap_or_default();
        let tables = std::iter::once(doc.get("run").cloned()).chain(cases.into_iter().map(Some)).flatten();
        for t in tables {
            if let Some(w) = t.get("app_params").and_then(|v| v.as_str()).and_then(work) {
                assert_eq!(w, calibrated, "{}: work={w}, shring-fig2.toml calibrates {calibrated}", path.display());
                users += 1;
            }
        }
    }
    assert!(users >= 4, "shring-fig2, shring-fig6, imbalance and the default experiment use it ({users} found)");
}
