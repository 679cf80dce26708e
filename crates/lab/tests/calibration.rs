//! Calibrations checked through the command line: shRing §2.3's synthetic NF (`synthetic`, whose random
//! draws per packet are calibrated once so that shRing/8, the configuration whose I/O working set fits
//! the DDIO ways, costs what the paper says; `apps::workpackage::SHRING_SYNTHETIC_DRAWS`), and that no
//! experiment file sets a calibrated value itself (the FastClick graphs' own calibrations are checked in
//! `crates/sim/tests/calibration.rs`).

use std::process::Command;

/// shRing Fig. 2's synthetic NF: shRing/8 costs 2021 cycles per packet, within 2 %.
#[test]
fn the_synthetic_nf_costs_what_shring_states_at_shring_8() {
    let out = Command::new(env!("CARGO_BIN_EXE_rxlab"))
        .args(["run", "--engine", "sim", "--runtime", "fastclick", "--app", "synthetic"])
        .args(["--iface", "shring", "--share", "8", "--cores", "16", "--size", "1518", "--rate", "200G"])
        .args(["--duration", "5ms", "--warmup", "10ms", "--json"])
        .output()
        .expect("run rxlab");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let r: serde_json::Value = serde_json::from_slice(&out.stdout).expect("a JSON report");
    let cycles = r["cycles"]["total"].as_f64().expect("cycles.total");
    let draws = apps::workpackage::SHRING_SYNTHETIC_DRAWS;
    assert!(
        (cycles - 2021.0).abs() / 2021.0 < 0.02,
        "shRing/8 costs {cycles:.0} cycles per packet with the synthetic NF's {draws} draws; shRing §2.3 puts it \
         at 2021 (recalibrate SHRING_SYNTHETIC_DRAWS in crates/apps/src/workpackage.rs: each draw costs 5 cycles)"
    );
}

/// No experiment sets the WorkPackage NF's draws (`work=`): the papers' synthetic NF is `synthetic`, whose
/// calibrated value lives in code with its source, and nothing else runs a calibrated W.
#[test]
fn no_experiment_file_carries_a_calibrated_work() {
    let dir = format!("{}/../../experiments", env!("CARGO_MANIFEST_DIR"));
    let mut synthetic = 0;
    for entry in std::fs::read_dir(&dir).expect("experiments/") {
        let path = entry.expect("a directory entry").path();
        if path.extension().is_none_or(|e| e != "toml") {
            continue;
        }
        let doc: toml::Table = std::fs::read_to_string(&path).unwrap().parse().unwrap();
        let cases = doc.get("case").and_then(|c| c.as_array()).cloned().unwrap_or_default();
        let tables = std::iter::once(doc.get("run").cloned()).chain(cases.into_iter().map(Some)).flatten();
        for t in tables {
            let params = t.get("app_params").and_then(|v| v.as_str()).unwrap_or("");
            assert!(
                !params.split(',').any(|kv| kv.trim().starts_with("work=")),
                "{}: app_params \"{params}\" sets work=; run the app `synthetic` instead",
                path.display()
            );
            synthetic += usize::from(t.get("app").and_then(|v| v.as_str()) == Some("synthetic"));
        }
    }
    assert!(
        synthetic >= 4,
        "shring-fig2, shring-fig6, imbalance and the default experiment run it ({synthetic} found)"
    );
}
