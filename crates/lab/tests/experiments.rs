//! Experiments, sweeps, merge, report and reproduce end to end through the real binary, on tiny
//! simulated durations.

use std::path::Path;
use std::process::{Command, Output};

fn rxlab(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_rxlab")).args(args).output().expect("run rxlab")
}

fn ok(args: &[&str]) -> String {
    let out = rxlab(args);
    assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).to_string()
}

/// `rxlab run --engine sim ARGS --json`'s device metric `name`.
fn sim_device_metric(args: &[&str], name: &str) -> f64 {
    let out = ok(&[&["run", "--engine", "sim"], args, &["--json"]].concat());
    let r: serde_json::Value = serde_json::from_str(&out).unwrap();
    r["device_metrics"][name].as_f64().unwrap_or_else(|| panic!("no device metric {name}: {r}"))
}

/// A command that must fail with exit 2 and one line naming every needle.
fn fails(args: &[&str], needles: &[&str]) -> String {
    let out = rxlab(args);
    let err = String::from_utf8_lossy(&out.stderr).to_string();
    assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: not one line: {err}");
    for n in needles {
        assert!(err.contains(n), "{args:?}: '{n}' missing from: {err}");
    }
    err
}

/// Two designs over two ring sizes, a few simulated microseconds each.
const TINY: &str = r#"[experiment]
title = "tiny"

[run]
engine = "sim"
app = "echo"
cores = 2
size = 1500
rate = "20G"
duration = "20us"
warmup = "5us"

[[case]]
label = "privRing"
iface = "privring"

[[case]]
label = "shRing/2"
iface = "shring"
share = 2

[sweep]
ring = [64, 256]

[[figure]]
x = "ring"
y = "throughput.gbps_wire"
log_x = true

[claim]
paper = "test"
figure = "none"
text = "two designs deliver the same offered load"

[[claim.check]]
what = "privRing / shRing throughput"
metric = "throughput.gbps_wire"
a = "privRing"
b = "shRing/2"
paper = 1.0
"#;

fn write(dir: &Path, name: &str, text: &str) -> String {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p.to_str().unwrap().to_string()
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

#[test]
fn unknown_keys_and_wrong_types_name_key_and_line() {
    let d = tempfile::tempdir().unwrap();
    let f = write(d.path(), "a.toml", "[run]\nengine = \"sim\"\nrign = 64\n");
    fails(&["run", &f], &["a.toml:3:", "rign"]);
    let f = write(d.path(), "b.toml", "[run]\nengine = \"sim\"\n\ncores = \"many\"\n");
    fails(&["run", &f], &["b.toml:4:", "cores"]);
    let f = write(d.path(), "c.toml", "[run]\n[sweep]\nrings = [1, 2]\n");
    fails(&["sweep", &f], &["c.toml:3:", "rings"]);
    let f = write(d.path(), "d.toml", "[runn]\ncores = 1\n");
    fails(&["run", &f], &["d.toml:1:", "runn"]);
    fails(&["run", "/nonexistent.toml"], &["/nonexistent.toml"]);
    for engine in ["sim", "live"] {
        let err = fails(&["run", "--engine", engine, "--size", "20"], &["packet size 20 B"]);
        assert_eq!(err.matches("out of range").count(), 1, "the reason is said once: {err}");
    }
    fails(&["sweep", &f, "--shard", "3/2"], &["--shard"]);
    let switch =
        ["run", "--target-queue", "0", "--target-percent", "50", "--switch-at", "1ms", "--switch-percent", "90"];
    fails(&[&switch[..], &["--engine", "live"]].concat(), &["--switch-at", "load switch"]);
    fails(&[&switch[..5], &["--engine", "sim", "--switch-at", "1ms"]].concat(), &["--switch-percent"]);
    fails(
        &["run", "--engine", "sim", "--copy-loop", "sideways", "--copy-bytes", "8KiB"],
        &["--copy-loop", "to-nicmem"],
    );
}

#[test]
fn flags_override_the_file_and_pick_a_point() {
    let d = tempfile::tempdir().unwrap();
    let f = write(d.path(), "t.toml", TINY);
    let json = ok(&["run", &f, "--ring", "128", "--jobs", "2", "--json"]);
    let rows: serde_json::Value = serde_json::from_str(&json).unwrap();
    let rows = rows.as_array().unwrap();
    assert_eq!(rows.len(), 2, "--ring collapses the ring axis");
    assert!(rows.iter().all(|r| r["params"]["ring"] == "128"));
    let id = rows[1]["id"].as_str().unwrap();
    let one = ok(&["run", &f, "--ring", "128", "--point", id, "--json"]);
    let report: serde_json::Value = serde_json::from_str(&one).unwrap();
    assert_eq!(
        report["throughput"]["gbps_wire"], rows[1]["metrics"]["throughput.gbps_wire"],
        "same point, same numbers"
    );
}

#[test]
fn sweep_resumes_and_shards_and_any_jobs_give_the_same_bytes() {
    let d = tempfile::tempdir().unwrap();
    let f = write(d.path(), "t.toml", TINY);
    let full = d.path().join("full");
    ok(&["sweep", &f, "-o", s(&full), "--jobs", "2"]);
    let log = || std::fs::read_to_string(full.join("points.jsonl")).unwrap().lines().count();
    assert_eq!(log(), 4);
    ok(&["sweep", &f, "-o", s(&full)]);
    assert_eq!(log(), 4, "a rerun runs nothing");
    let (a, b, m) = (d.path().join("a"), d.path().join("b"), d.path().join("m"));
    ok(&["sweep", &f, "-o", s(&a), "--shard", "1/2"]);
    ok(&["sweep", &f, "-o", s(&b), "--shard", "2/2"]);
    ok(&["merge", s(&a), s(&b), "-o", s(&m)]);
    let one = d.path().join("one");
    ok(&["sweep", &f, "-o", s(&one), "--jobs", "1"]);
    for file in ["results.csv", "results.json"] {
        let bytes = std::fs::read(full.join(file)).unwrap();
        assert_eq!(bytes, std::fs::read(m.join(file)).unwrap(), "{file}: shards merged");
        assert_eq!(bytes, std::fs::read(one.join(file)).unwrap(), "{file}: one job");
    }
    let csv = std::fs::read_to_string(full.join("results.csv")).unwrap();
    assert!(csv.lines().next().unwrap().contains("throughput.gbps_wire"));
    let other = write(d.path(), "o.toml", &TINY.replace("tiny", "other"));
    ok(&["sweep", &other, "-o", s(&b)]);
    fails(&["merge", s(&a), s(&b), "-o", s(&m)], &["different experiments"]);

    ok(&["report", s(&full)]);
    let html = std::fs::read_to_string(full.join("report.html")).unwrap();
    assert!(html.contains("<svg") && html.contains("privRing / shRing throughput"), "figures and claims inlined");
    assert!(full.join("figures/full-1.png").is_file());
    let empty = d.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    fails(&["report", s(&empty)], &["results.json"]);
}

#[test]
fn reproduce_quick_runs_a_claim_and_reports_missing_designs() {
    let d = tempfile::tempdir().unwrap();
    write(d.path(), "tiny.toml", TINY);
    write(d.path(), "ghost.toml", &TINY.replace("iface = \"shring\"", "iface = \"ghostring\""));
    let out = d.path().join("out");
    let text =
        ok(&["reproduce", "--quick", "--dir", s(d.path()), "-o", s(&out), "--duration", "40us", "--warmup", "10us"]);
    assert!(text.contains("privRing / shRing throughput"), "{text}");
    assert!(text.contains("not run: design missing (ghostring)"), "{text}");
    assert!(out.join("report.html").is_file());
    // `--only` takes several names; each one selects the files whose name contains it.
    let only = |names: &str| {
        let args = ["reproduce", "--quick", "--dir", s(d.path()), "-o", s(&out), "--only", names];
        rxlab(&[&args[..], &["--duration", "40us", "--warmup", "10us"]].concat())
    };
    let text = String::from_utf8_lossy(&only("tin,nothing").stdout).into_owned();
    assert!(text.contains("privRing / shRing throughput") && !text.contains("ghostring"), "{text}");
    let text = String::from_utf8_lossy(&only("ghost,tiny").stdout).into_owned();
    assert!(text.contains("privRing / shRing throughput") && text.contains("ghostring"), "{text}");
    let none = only("nothing");
    assert!(!none.status.success() && String::from_utf8_lossy(&none.stderr).contains("check --dir and --only"));
}

/// A point two experiments share (the same parameters under other labels) runs once in a reproduce:
/// the second experiment takes the first's rows, with its own labels, and judges them the same.
#[test]
fn reproduce_runs_a_point_two_experiments_share_once() {
    let d = tempfile::tempdir().unwrap();
    write(d.path(), "tiny.toml", TINY);
    let twin = TINY.replace("\"privRing\"", "\"private\"").replace("label = \"shRing/2\"", "label = \"shared\"");
    write(
        d.path(),
        "twin.toml",
        &twin.replace("a = \"shared\"", "a = \"private\"").replace("b = \"shRing/2\"", "b = \"shared\""),
    );
    let out = d.path().join("out");
    let run = rxlab(&["reproduce", "--quick", "--dir", s(d.path()), "-o", s(&out)]);
    let (stdout, stderr) = (String::from_utf8_lossy(&run.stdout), String::from_utf8_lossy(&run.stderr));
    assert!(run.status.success(), "{stderr}");
    assert!(stderr.contains("twin: 4 points taken from other experiments' runs of this build"), "{stderr}");
    let rows = |name: &str| -> Vec<serde_json::Value> {
        serde_json::from_str(&std::fs::read_to_string(out.join(name).join("results.json")).unwrap()).unwrap()
    };
    let (tiny, twin) = (rows("tiny"), rows("twin"));
    assert_eq!(tiny.len(), 4);
    for (a, b) in tiny.iter().zip(&twin) {
        assert_eq!((&a["id"], &a["metrics"]), (&b["id"], &b["metrics"]));
        assert!(a["metrics"]["throughput.gbps_wire"].as_f64().unwrap() > 1.0, "{a}");
        assert_ne!(a["params"]["label"], b["params"]["label"]);
    }
    assert_eq!(stdout.matches("privRing / shRing throughput").count(), 2, "{stdout}");
}

#[test]
fn reproduce_with_trials_shows_the_seeds_and_judge_reruns_nothing() {
    let d = tempfile::tempdir().unwrap();
    write(d.path(), "tiny.toml", TINY);
    let out = d.path().join("out");
    let args = ["reproduce", "--quick", "--dir", s(d.path()), "-o", s(&out), "--trials", "3"];
    let text = ok(&[&args[..], &["--duration", "40us", "--warmup", "10us"]].concat());
    assert!(text.contains("of 3 seeds within"), "{text}");
    // Results of another build are judged as they are, not run again.
    let points = out.join("tiny/points.jsonl");
    let other = std::fs::read_to_string(&points).unwrap().replace("\"build\":\"", "\"build\":\"0other");
    std::fs::write(&points, other).unwrap();
    let judge = rxlab(&[&args[..], &["--duration", "40us", "--warmup", "10us", "--judge"]].concat());
    let (stdout, stderr) = (String::from_utf8_lossy(&judge.stdout), String::from_utf8_lossy(&judge.stderr));
    assert!(stdout.contains("(judged; nothing run)") && stdout.contains("of 3 seeds within"), "{stdout}");
    assert!(stderr.contains("judging 4 points run by build 0other"), "{stderr}");
    let md = std::fs::read_to_string(out.join("verdicts.md")).unwrap();
    // Points that are not there are not run either: the claim says so.
    let text = ok(&[&args[..], &["--duration", "50us", "--warmup", "10us", "--judge"]].concat());
    assert!(text.contains("not run: 4 of 4 points are not in"), "{text}");

    // The run's own Markdown table is a reference it holds against; a reference whose value lies outside
    // the seeds' spread, or whose verdict differs, makes the comparison fail and name the check.
    let judged = [&args[..], &["--duration", "40us", "--warmup", "10us", "--judge", "--against"]].concat();
    let table = write(d.path(), "ref.md", &md);
    let text = ok(&[&judged[..], &[table.as_str()]].concat());
    assert!(text.contains("1 checks held, 0 moved, 0 not in it"), "{text}");
    let row = md.lines().find(|l| l.contains("privRing / shRing throughput")).unwrap();
    let (_, spread) = row.trim_end_matches(" |").rsplit_once(", ").unwrap();
    let moved = write(d.path(), "moved.md", &md.replace(spread, "7.000-8.000"));
    let out = rxlab(&[&judged[..], &[moved.as_str()]].concat());
    let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(!out.status.success() && stderr.contains("1 checks moved against the reference"), "{stderr}");
    assert!(stdout.contains("moved: tiny privRing / shRing throughput") && stdout.contains("7.000-8.000"), "{stdout}");
}

#[test]
fn a_rare_noise_tail_carries_more_of_the_horizons_long_interruptions() {
    let noise = |tail: &[&str]| {
        let args = ["run", "--engine", "sim", "--app", "echo", "--cores", "2", "--rate", "20G", "--size", "1518"];
        let more = ["--duration", "2ms", "--warmup", "10us", "--noise-horizon", "60s", "--json"];
        let r: serde_json::Value = serde_json::from_str(&ok(&[&args[..], &more[..], tail].concat())).unwrap();
        r["noise"]["total_us"].as_f64().expect("noise.total_us")
    };
    let (longest, rare) = (noise(&["--noise-tail", "longest"]), noise(&["--noise-tail", "rare"]));
    // About six interruptions beyond p99.99 (38-47 us) per core in 60 s, where `longest` carries one.
    assert!(rare > longest + 100.0, "rare {rare} us against longest {longest} us of interruptions");
    assert_eq!(noise(&[]), rare, "the rare tail is the default");
    fails(&["run", "--engine", "sim", "--noise-tail", "most"], &["--noise-tail"]);
    // The live engine has this machine's noise: the simulator's options are refused, not ignored.
    fails(
        &["run", "--engine", "live", "--noise-horizon", "60s", "--ddio-ways", "0"],
        &["--ddio-ways, --noise-horizon"],
    );
    // A distribution without a far tail would bring a minute of ordinary interruptions into the run.
    let two_points = "noise.quantiles = [[0.0, 1000.0], [1.0, 50000.0]]";
    let args =
        ["run", "--engine", "sim", "--noise-horizon", "60s", "--noise-tail", "rare", "--profile-set", two_points];
    fails(&args, &["--noise-tail", "0.999"]);
}

#[test]
fn advise_sizes_ax_for_the_ddio_ways() {
    let text = ok(&["advise", "--profile", "r640-silver4216", "--cores", "16", "--nics", "2"]);
    assert!(text.contains("largest |Ax|"), "{text}");
    assert!(text.contains("WARNING"), "ring 4096 on 16 cores exceeds the DDIO ways: {text}");
    fails(&["advise", "--profile", "nope"], &["nope"]);
    fails(&["advise", "--cores", "3", "--nics", "2"], &["--nics"]);
}

#[test]
fn design_options_reach_the_design_and_bad_ones_name_the_flag() {
    let suppressed = |mode: &str| {
        let args = ["--iface", "enso", "--enso-notify", mode, "--enso-pipes", "4", "--cores", "2"];
        sim_device_metric(
            &[&args[..], &["--duration", "50us", "--warmup", "10us"]].concat(),
            "notifications_suppressed",
        )
    };
    // Reactive notifications (Ensō §4.2) suppress most; one per packet suppresses none.
    assert!(suppressed("reactive") > 0.0);
    assert_eq!(suppressed("per-packet"), 0.0);
    fails(&["run", "--iface", "enso", "--enso-notify", "bogus"], &["--enso-notify", "reactive"]);
    fails(&["run", "--iface", "enso", "--enso-visit", "bogus"], &["--enso-visit", "round-robin"]);
    fails(
        &["run", "--engine", "sim", "--iface", "enso", "--enso-pipe-size", "1000"],
        &["--enso-pipe-size", "page size"],
    );
    fails(&["run", "--engine", "sim", "--iface", "nmnfv", "--nicmem-split", "5000"], &["--nicmem-split"]);
    // nicmem's emulated NIC memory (§5) keeps every payload on the NIC; 8 KiB of real memory (a 2-entry
    // primary ring per core) spills payloads to the secondary ring whenever more than two are in flight.
    let spilled = |capacity: &str| {
        let args = ["--iface", "nmnfv", "--nicmem-capacity", capacity, "--cores", "2", "--size", "1518"];
        sim_device_metric(
            &[&args[..], &["--rate", "100G", "--duration", "100us", "--warmup", "50us"]].concat(),
            "secondary_ring_packets",
        )
    };
    assert_eq!(spilled("emulated"), 0.0);
    assert!(spilled("8Ki") > 0.0);
    fails(
        &["run", "--engine", "sim", "--iface", "nmnfv", "--nicmem-capacity", "lots"],
        &["--nicmem-capacity", "emulated"],
    );
    // MPRQ: 64 B strides make 1500 B packets take 24 of them, and the ones that do not fit a WQE's
    // remaining strides make fillers; DPDK's 2 KiB strides take one each.
    let fillers = |stride: &str| {
        let args = ["--iface", "mprq", "--mprq-stride-size", stride, "--mprq-strides", "64", "--ring", "4Ki"];
        sim_device_metric(
            &[&args[..], &["--cores", "2", "--size", "1518", "--duration", "50us", "--warmup", "10us"]].concat(),
            "mprq_fillers",
        )
    };
    assert!(fillers("64") > 0.0);
    assert_eq!(fillers("2Ki"), 0.0);
    fails(&["run", "--engine", "sim", "--iface", "mprq", "--mprq-strides", "2Ki"], &["--mprq-strides", "--ring"]);
    fails(&["run", "--engine", "sim", "--iface", "mprq", "--mprq-stride-size", "100"], &["--mprq-stride-size"]);
    fails(&["run", "--engine", "sim", "--iface", "mprq", "--mprq-memcpy", "4096"], &["--mprq-memcpy"]);
    // AF_XDP: the device reads FILL entries a line at a time, from a ring per queue or a shared one.
    for shared in ["false", "true"] {
        let args = ["--iface", "afxdp", "--afxdp-shared-fill", shared, "--afxdp-chunk", "2Ki", "--afxdp-fill", "256"];
        let reads = sim_device_metric(
            &[&args[..], &["--cores", "2", "--duration", "50us", "--warmup", "10us"]].concat(),
            "fill_line_reads",
        );
        assert!(reads > 0.0, "shared {shared}");
    }
    // Copy mode: the NIC writes completions for the kernel's pages, which only copy mode has.
    let copy = ["--iface", "afxdp", "--afxdp-copy", "--afxdp-fill", "256", "--cores", "2"];
    assert!(sim_device_metric(&[&copy[..], &["--duration", "50us", "--warmup", "10us"]].concat(), "cqe_minis") >= 0.0);
    fails(&["run", "--engine", "sim", "--iface", "afxdp", "--afxdp-chunk", "3000"], &["--afxdp-chunk"]);
    fails(&["run", "--engine", "sim", "--iface", "afxdp", "--afxdp-fill", "1000"], &["--afxdp-fill"]);
}

#[test]
fn kvs_requests_reach_the_kvs_app_and_responses_are_timed_in_both_engines() {
    let report = |args: &[&str]| -> serde_json::Value { serde_json::from_str(&ok(args)).unwrap() };
    let live =
        report(&["run", "--app", "kvs", "--kvs-keys", "1000", "--kvs-get", "0.9", "--duration", "200ms", "--json"]);
    let sim = report(&[
        "run",
        "--engine",
        "sim",
        "--app",
        "kvs",
        "--kvs-keys",
        "1000",
        "--cores",
        "2",
        "--duration",
        "100us",
        "--warmup",
        "20us",
        "--json",
    ]);
    // Both runs succeeded, so every invariant held; the responses carry the requests' stamps.
    for r in [&live, &sim] {
        assert!(r["throughput"]["mpps"].as_f64().unwrap() > 0.0, "{r}");
        assert!(r["latency"]["count"].as_u64().unwrap() > 0, "{r}");
    }
    assert_eq!(live["invariants"].as_array().unwrap().len(), 4, "{live}");
    assert!(sim["app_metrics"]["gets"].as_f64().unwrap() > 0.0, "{sim}");
    assert_eq!(sim["app_metrics"]["drop_malformed"].as_f64(), Some(0.0), "{sim}");
    // Requests are steered to their key's partition (MICA §4.1): none arrives at another core.
    assert_eq!(sim["app_metrics"]["misrouted"].as_f64(), Some(0.0), "{sim}");
    fails(&["run", "--app", "kvs", "--kvs-get", "2"], &["--kvs-get"]);
    fails(&["run", "--app", "kvs", "--kvs-key-len", "3"], &["--kvs-key-len"]);
}

#[test]
fn nmkvs_serves_hot_items_zero_copy_in_both_engines() {
    let report = |args: &[&str]| -> serde_json::Value { serde_json::from_str(&ok(args)).unwrap() };
    let common = [
        "run",
        "--iface",
        "nicmem-host",
        "--app",
        "kvs",
        "--app-params",
        "log=4MiB,preload=2000,hot=64,epoch=512",
        "--kvs-keys",
        "2000",
        "--kvs-value-len",
        "512",
        "--kvs-get",
        "0.9",
        "--kvs-hot-keys",
        "64",
        "--kvs-hot-share",
        "0.9",
        "--json",
    ];
    let live = report(&[&common[..], &["--duration", "200ms"]].concat());
    let sim =
        report(&[&common[..], &["--engine", "sim", "--cores", "2", "--duration", "1ms", "--warmup", "1ms"]].concat());
    // Both runs succeeded, so every invariant held, the leak of a NIC memory reference included.
    let zero_copy = |r: &serde_json::Value| match r["engine"].as_str() {
        Some("live") => r["per_core"][0]["metrics"]["hot_zero_copy"].as_f64(),
        _ => r["app_metrics"]["hot_zero_copy"].as_f64(),
    };
    for r in [&live, &sim] {
        assert!(zero_copy(r).unwrap() > 100.0, "{r}");
        assert!(r["latency"]["count"].as_u64().unwrap() > 0, "{r}");
    }
    fails(&["run", "--app", "kvs", "--app-params", "hot=8"], &["kvs", "hot=N", "nicmem-host"]);
    fails(&["run", "--app", "kvs", "--kvs-hot-keys", "8"], &["--kvs-hot-keys", "--kvs-hot-share"]);
}

#[test]
fn ndr_search_reports_its_rate_and_trials_and_bad_options_name_the_flag() {
    let search = |extra: &[&str]| -> serde_json::Value {
        let common = [
            "run",
            "--engine",
            "sim",
            "--cores",
            "2",
            "--ring",
            "64",
            "--size",
            "64",
            "--target-queue",
            "0",
            "--rate",
            "100G",
            "--duration",
            "30us",
            "--warmup",
            "10us",
            "--ndr",
            "--json",
        ];
        serde_json::from_str(&ok(&[&common[..], extra].concat())).unwrap()
    };
    let r = search(&[]);
    let ndr = &r["ndr"];
    let (gbps, mpps) = (ndr["gbps"].as_f64().unwrap(), ndr["mpps"].as_f64().unwrap());
    assert!(gbps > 0.0 && gbps < 100.0, "one core cannot forward 100 Gbps of 64 B: {ndr}");
    assert!((mpps - gbps * 1e3 / 672.0).abs() < 1e-6, "64 B frames are 672 bits on the wire: {ndr}");
    let trials = ndr["trials"].as_array().unwrap();
    assert_eq!(ndr["trial_count"].as_u64(), Some(trials.len() as u64));
    assert!(trials.iter().any(|t| t["rate"].as_f64() == Some(gbps) && t["passed"] == true), "{ndr}");
    assert_eq!(r, search(&[]), "same seed, same search");
    let tolerant = search(&["--ndr-loss", "0.5", "--ndr-low", "1G", "--ndr-resolution", "5G"]);
    assert!(tolerant["ndr"]["gbps"].as_f64().unwrap() >= gbps, "{}", tolerant["ndr"]);

    let d = tempfile::tempdir().unwrap();
    let f = write(
        d.path(),
        "n.toml",
        "[run]\nengine = \"sim\"\ncores = 2\nsize = 64\nrate = \"50G\"\nduration = \"30us\"\nwarmup = \"10us\"\n\
         ndr = true\nndr_resolution = \"10%\"\n[sweep]\nring = [64, 256]\n",
    );
    let out = d.path().join("n");
    let table = ok(&["sweep", &f, "-o", s(&out), "--jobs", "2"]);
    assert!(table.contains("NDR Gbps"), "{table}");
    let csv = std::fs::read_to_string(out.join("results.csv")).unwrap();
    let header = csv.lines().next().unwrap();
    assert!(["ndr", "ndr.gbps", "ndr.mpps", "ndr.trials.0.loss"].iter().all(|c| header.split(',').any(|h| h == *c)));

    fails(&["run", "--engine", "sim", "--rate", "10G", "--ndr", "--ndr-low", "10G"], &["--ndr-low"]);
    fails(&["run", "--engine", "sim", "--rate", "10G", "--ndr", "--ndr-loss", "1"], &["--ndr-loss"]);
    fails(&["run", "--engine", "sim", "--rate", "10G", "--ndr", "--ndr-resolution", "0%"], &["--ndr-resolution"]);
    fails(&["run", "--engine", "sim", "--ndr-loss", "0.1"], &["--ndr-loss", "--ndr"]);
    fails(&["run", "--rate", "max", "--ndr"], &["--rate", "--ndr", "max"]);
}

/// Host noise and trains reach the simulator from flags, and bad values name their flag.
#[test]
fn noise_and_trains_reach_the_run_and_bad_ones_name_the_flag() {
    let run = |duration: &str, extra: &[&str]| {
        let mut args = vec!["run", "--engine", "sim", "--duration", duration, "--warmup", "50us", "--json"];
        args.extend_from_slice(extra);
        let r: serde_json::Value = serde_json::from_str(&ok(&args)).unwrap();
        r["noise"]["interruptions"].as_u64().unwrap()
    };
    assert_eq!(run("200us", &["--noise", "false"]), 0);
    assert!(run("10ms", &["--noise-horizon", "60s", "--rate", "1G"]) > 0);
    assert_eq!(run("200us", &["--noise", "false", "--train", "32@100G", "--rate", "10G"]), 0);
    fails(&["run", "--engine", "sim", "--train", "32"], &["--train", "32@100G"]);
    fails(&["run", "--engine", "sim", "--train", "32@1G", "--rate", "10G"], &["line rate"]);
    fails(&["run", "--engine", "sim", "--noise-horizon", "1us"], &["--noise-horizon"]);
    fails(&["jitter", "--duration", "0s"], &["--duration"]);
}

/// `--nic-threads` reaches the live engine: two ports run and say so, and what cannot be split names the flag.
#[test]
fn nic_threads_reach_the_live_engine() {
    let out = ok(&["run", "--cores", "2", "--nic-threads", "2", "--duration", "100ms", "--warmup", "20ms", "--json"]);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["nic_threads"], 2);
    fails(&["run", "--iface", "corec", "--cores", "2", "--nic-threads", "2"], &["--nic-threads", "corec"]);
    fails(&["run", "--cores", "3", "--nic-threads", "2"], &["--nic-threads", "multiple of 2"]);
    fails(&["run", "--engine", "sim", "--nic-threads", "2"], &["--nic-threads", "simulator"]);
}
