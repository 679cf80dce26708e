//! `rxlab trace` end to end through the real binary: gen → inspect, and every bad input: one line on
//! stderr naming the input and the fix, exit code 2, no panic, no partial file.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn rxlab(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_rxlab")).args(args).output().expect("run rxlab")
}

/// Run a command that must fail; check the exit code and the one-line message, and return the message.
fn fails(args: &[&str], needles: &[&str]) -> String {
    let out = rxlab(args);
    let err = String::from_utf8_lossy(&out.stderr).to_string();
    assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: not one line: {err}");
    assert!(err.starts_with("rxlab: "), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    for n in needles {
        assert!(err.contains(n), "{args:?}: '{n}' missing from: {err}");
    }
    err
}

fn dir() -> tempfile::TempDir {
    tempfile::tempdir().unwrap()
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

fn only_entry(dir: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).collect()
}

fn gen_pcap(dir: &Path, name: &str, extra: &[&str]) -> PathBuf {
    let path = dir.join(name);
    let mut args = vec!["trace", "gen", "-o", s(&path)];
    args.extend_from_slice(extra);
    let out = rxlab(&args);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    path
}

fn inspect_json(path: &Path, extra: &[&str]) -> serde_json::Value {
    let mut args = vec!["trace", "inspect", s(path), "--json"];
    args.extend_from_slice(extra);
    let out = rxlab(&args);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn gen_then_inspect_reports_what_was_generated() {
    let d = dir();
    let p = gen_pcap(
        d.path(),
        "even.pcap",
        &["--flows", "32", "--rss-even", "--queues", "8", "--count", "4000", "--nanos"],
    );
    let j = inspect_json(&p, &["--queues", "8", "--window", "100us"]);
    assert_eq!(j["packets"], 4000);
    assert_eq!(j["bytes"], 4000 * 64);
    assert_eq!(j["flows"], 32);
    assert_eq!(j["non_ip"], 0);
    let gbps = j["mean_gbps"].as_f64().unwrap();
    assert!((gbps - 10.0).abs() < 0.01, "{gbps}");
    let shares: Vec<f64> = j["rss"]["share"].as_array().unwrap().iter().map(|v| v.as_f64().unwrap()).collect();
    assert_eq!(shares.len(), 8);
    assert!(shares.iter().all(|s| (s - 0.125).abs() < 0.03), "{shares:?}");
    assert!(j["rss"]["mean_min_over_max"].as_f64().unwrap() > 0.3);

    let table = rxlab(&["trace", "inspect", s(&p), "--queues", "8"]);
    let text = String::from_utf8(table.stdout).unwrap();
    for needle in ["packets    4000", "mean rate", "top flows", "RSS over 8 queues", "min/max"] {
        assert!(text.contains(needle), "{needle} missing:\n{text}");
    }
}

#[test]
fn target_queue_share_shows_in_inspect() {
    let d = dir();
    let p = gen_pcap(
        d.path(),
        "target.pcapng",
        &["--flows", "20", "--target-queue", "2", "--target-percent", "25", "--queues", "4", "--count", "8000"],
    );
    assert_eq!(&std::fs::read(&p).unwrap()[..4], &[0x0a, 0x0d, 0x0d, 0x0a], "a .pcapng name writes pcapng");
    let j = inspect_json(&p, &["--queues", "4"]);
    let share = j["rss"]["share"][2].as_f64().unwrap();
    assert!((share - 0.25).abs() < 0.02, "{share}");
}

#[test]
fn gen_is_deterministic_and_flags_change_the_output() {
    let d = dir();
    let args = ["--size", "dc", "--flows", "10", "--zipf", "1.1", "--rate", "5Mpps", "--burst", "10:5", "--tcp"];
    let a = std::fs::read(gen_pcap(d.path(), "a.pcap", &args)).unwrap();
    let b = std::fs::read(gen_pcap(d.path(), "b.pcap", &args)).unwrap();
    let mut other = args.to_vec();
    other.extend(["--seed", "9"]);
    let c = std::fs::read(gen_pcap(d.path(), "c.pcap", &other)).unwrap();
    assert_eq!(a, b);
    assert_ne!(a, c);
}

#[test]
fn tcpdump_capture_is_read() {
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("../traffic/tests/data/loopback.pcap");
    // `tcpdump -i lo -s 128` of a TCP echo, IPv4 and IPv6 UDP: frames cut at 128 B still count as IP.
    let j = inspect_json(&data, &["--queues", "4"]);
    assert_eq!(j["packets"], 53);
    assert_eq!(j["non_ip"], 0);
    assert_eq!(j["flows"], 6);
}

#[test]
fn missing_file() {
    let err = fails(&["trace", "inspect", "/nonexistent/x.pcap"], &["/nonexistent/x.pcap", "No such file"]);
    assert_eq!(err.matches("No such file").count(), 1, "the reason is said once: {err}");
}

#[test]
fn not_a_pcap() {
    let d = dir();
    let p = d.path().join("notes.txt");
    std::fs::write(&p, "hello, this is text").unwrap();
    fails(&["trace", "inspect", s(&p)], &["notes.txt", "not a pcap or pcapng file", "tcpdump"]);
    let empty = d.path().join("empty.pcap");
    std::fs::write(&empty, "").unwrap();
    fails(&["trace", "inspect", s(&empty)], &["empty.pcap", "empty"]);
}

#[test]
fn truncated_pcap_header_and_record() {
    let d = dir();
    let whole = std::fs::read(gen_pcap(d.path(), "whole.pcap", &["--count", "3"])).unwrap();
    let head = d.path().join("head.pcap");
    std::fs::write(&head, &whole[..10]).unwrap();
    fails(&["trace", "inspect", s(&head)], &["head.pcap", "truncated pcap file header at byte 0"]);
    // 24 B file header, then records of 16 B + 60 B: cut inside the third record.
    let mid = d.path().join("mid.pcap");
    std::fs::write(&mid, &whole[..24 + 2 * 76 + 30]).unwrap();
    fails(&["trace", "inspect", s(&mid)], &["mid.pcap", "truncated packet record at byte 176"]);
    let ng = std::fs::read(gen_pcap(d.path(), "whole.pcapng", &["--count", "3"])).unwrap();
    let ngcut = d.path().join("cut.pcapng");
    std::fs::write(&ngcut, &ng[..ng.len() - 5]).unwrap();
    fails(&["trace", "inspect", s(&ngcut)], &["cut.pcapng", "truncated pcapng block at byte"]);
}

#[test]
fn unknown_link_type() {
    let d = dir();
    let mut bytes = std::fs::read(gen_pcap(d.path(), "eth.pcap", &["--count", "1"])).unwrap();
    bytes[20..24].copy_from_slice(&105u32.to_le_bytes()); // IEEE 802.11
    let p = d.path().join("wifi.pcap");
    std::fs::write(&p, &bytes).unwrap();
    fails(&["trace", "inspect", s(&p)], &["wifi.pcap", "link type", "(105)", "Ethernet (1)"]);
}

#[test]
fn bad_rates_leave_no_output() {
    let d = dir();
    let out = d.path().join("out.pcap");
    for rate in ["0G", "-5G", "-1Mpps", "fast"] {
        fails(&["trace", "gen", "--rate", rate, "-o", s(&out)], &["--rate", rate]);
    }
    assert!(only_entry(d.path()).is_empty());
}

#[test]
fn target_queue_out_of_range() {
    let d = dir();
    let out = d.path().join("out.pcap");
    let args = ["trace", "gen", "--flows", "8", "--target-queue", "4", "--target-percent", "10", "--queues", "4"];
    let mut v = args.to_vec();
    v.extend(["-o", s(&out)]);
    fails(&v, &["target queue 4", "4 queues", "0..=3"]);
    assert!(only_entry(d.path()).is_empty());
}

#[test]
fn bad_size_specs() {
    let d = dir();
    let out = d.path().join("out.pcap");
    fails(&["trace", "gen", "--size", "jumbo", "-o", s(&out)], &["--size", "jumbo", "imix"]);
    fails(&["trace", "gen", "--size", "9000", "-o", s(&out)], &["9000", "64..=1518"]);
    fails(&["trace", "gen", "--size", "64", "--tcp", "-o", s(&out)], &["64 B", "at least 74 B"]);
    fails(&["trace", "gen", "--size", "pcap:/nonexistent.pcap", "-o", s(&out)], &["/nonexistent.pcap"]);
    assert!(only_entry(d.path()).is_empty());
}

#[test]
fn zipf_draws_cannot_be_stepped() {
    let d = dir();
    let out = d.path().join("out.pcap");
    let args = ["trace", "gen", "--flows", "8", "--zipf", "1.1", "--flow-order", "stepped", "-o", s(&out)];
    fails(&args, &["--zipf", "--flow-order random"]);
    assert!(only_entry(d.path()).is_empty());
}

#[test]
fn unwritable_output_names_the_file() {
    fails(&["trace", "gen", "-o", "/nonexistent-dir/out.pcap"], &["/nonexistent-dir/out.pcap"]);
}

/// `--log-lines` writes `logmon`'s traffic: whole syslog lines in every frame, then the stamp; a share
/// outside 0..=1 or frames too small for a line are refused.
#[test]
fn gen_writes_log_lines() {
    let d = dir();
    let p = gen_pcap(d.path(), "logs.pcap", &["--log-lines", "0.2", "--size", "1518", "--count", "50"]);
    let j = inspect_json(&p, &[]);
    assert_eq!(j["packets"], 50);
    let mut frames = 0;
    for f in traffic::TraceReader::open(&p).unwrap() {
        let f = f.unwrap();
        let v = wire::PacketView::new_checked(&f.data[..]).unwrap();
        let text = std::str::from_utf8(&v.payload()[..v.payload().len() - 16]).unwrap();
        assert!(text.ends_with('\n') && text.lines().count() > 5, "{text}");
        frames += 1;
    }
    assert_eq!(frames, 50);
    fails(&["trace", "gen", "--log-lines", "2", "-o", s(&d.path().join("a.pcap"))], &["--log-lines", "0..=1"]);
    fails(&["trace", "gen", "--log-lines", "0.1", "--size", "64", "-o", s(&d.path().join("b.pcap"))], &["log line"]);
}
