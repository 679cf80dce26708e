//! `rxlab bench` through the real binary: every path is timed and the ratios are the medians' ratios
//! (no timing is asserted), and bad input is one line with exit 2.

use std::process::{Command, Output};

fn rxlab(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_rxlab")).args(args).output().expect("run rxlab")
}

#[test]
fn times_the_floors_and_the_designs_and_divides_by_the_floors() {
    let out = rxlab(&["bench", "--iface", "privring,enso", "--packets", "20000", "--rounds", "3", "--json"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let paths = v["paths"].as_array().unwrap();
    let names: Vec<&str> = paths.iter().map(|p| p["path"].as_str().unwrap()).collect();
    assert_eq!(names, ["spsc pointer ring", "spsc frame ring", "privring", "enso"]);
    let (pointer, frame) = (paths[0]["ns_per_packet"].as_f64().unwrap(), paths[1]["ns_per_packet"].as_f64().unwrap());
    for p in paths {
        let (ns, min) = (p["ns_per_packet"].as_f64().unwrap(), p["min_ns_per_packet"].as_f64().unwrap());
        assert!(ns > 0.0 && min > 0.0 && min <= ns, "{p}");
        assert!((p["x_pointer_ring"].as_f64().unwrap() - ns / pointer).abs() < 1e-9, "{p}");
        assert!((p["x_frame_ring"].as_f64().unwrap() - ns / frame).abs() < 1e-9, "{p}");
    }
    assert_eq!((v["rounds"].as_u64(), v["frame_len"].as_u64()), (Some(3), Some(64)));
    let alone: Vec<&serde_json::Value> = paths.iter().map(|p| &p["one_thread_ns_per_packet"]).collect();
    assert!(alone[..2].iter().all(|t| t.is_null()), "the floors have no one-thread time: {alone:?}");
    for t in &alone[2..] {
        let (device, driver) = (t["device"].as_f64().unwrap(), t["driver"].as_f64().unwrap());
        assert!(device > 0.0 && driver > 0.0, "every design has both sides timed: {t}");
    }
}

#[test]
fn echo_times_every_design_receive_and_transmit() {
    let out = rxlab(&["bench", "--packets", "20000", "--rounds", "1", "--echo", "--json"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["echo"], true);
    let designs = &v["paths"].as_array().unwrap()[2..];
    assert_eq!(designs.len(), ifaces::DESIGN_NAMES.len());
    for d in designs {
        assert!(d["one_thread_ns_per_packet"]["driver"].as_f64().unwrap() > 0.0, "{d}");
    }
}

#[test]
fn bad_input_is_one_line_and_exit_2() {
    for (args, needle) in [
        (&["bench", "--iface", "ring9"][..], "--iface"),
        (&["bench", "--ring", "1000"][..], "--ring"),
        (&["bench", "--packets", "0"][..], "--packets"),
        (&["bench", "--rounds", "0"][..], "--rounds"),
    ] {
        let out = rxlab(args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: {err}");
        assert!(err.contains(needle), "{args:?}: {err}");
    }
}

#[test]
fn sim_speed_times_the_reference_points_and_splits_their_cpu_time() {
    let out = rxlab(&["bench", "--sim", "--iface", "enso", "--rounds", "1", "--divide", "10", "--json"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let rows = v.as_array().unwrap();
    assert_eq!(rows.len(), 1, "--iface picks the reference points by design: {v}");
    let r = &rows[0];
    assert_eq!((r["point"].as_str(), r["iface"].as_str()), (Some("Enso echo 64 B, 1 core"), Some("enso")));
    assert!((r["virtual_ms"].as_f64().unwrap() - 0.12).abs() < 1e-9, "a tenth of 1 ms + 200 us: {r}");
    let (packets, cpu) = (r["packets"].as_f64().unwrap(), r["cpu_s"].as_f64().unwrap());
    assert!(packets > 10_000.0 && cpu > 0.0, "{r}");
    assert!((r["packets_per_cpu_s"].as_f64().unwrap() - packets / cpu).abs() < 1e-6 * packets / cpu, "{r}");
    let parts: f64 =
        ["setup_s", "warmup_s", "measurement_s", "drain_s"].iter().map(|k| r["spent"][k].as_f64().unwrap()).sum();
    assert!((parts - cpu).abs() < 1e-9, "the parts add up to the run's CPU time: {r}");
    assert!(r["spent"]["measurement_s"].as_f64().unwrap() > 0.0, "{r}");
}

#[test]
fn sim_speed_rejects_what_it_cannot_time() {
    for (args, needle) in [
        (&["bench", "--sim", "--iface", "corec"][..], "no reference point runs corec"),
        (&["bench", "--sim", "--divide", "0"][..], "--divide"),
        (&["bench", "--divide", "2"][..], "--sim"),
    ] {
        let out = rxlab(args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(needle) && err.lines().count() <= 3, "{args:?}: {err}");
    }
}
