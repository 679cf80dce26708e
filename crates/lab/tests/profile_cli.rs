//! Profile files through the real binary: `rxlab profile`, `--profile FILE.toml`, profile sweep axes, and
//! every bad input naming the file, the line and the field with exit code 2.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn rxlab(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_rxlab")).args(args).output().expect("run rxlab")
}

fn ok(args: &[&str]) -> String {
    let out = rxlab(args);
    assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).to_string()
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

fn write(dir: &Path, name: &str, text: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path.display().to_string()
}

/// A short simulation of one point on `profile`, as JSON.
fn short_run(profile: &str) -> String {
    ok(&[
        "run",
        "--engine",
        "sim",
        "--profile",
        profile,
        "--iface",
        "shring",
        "--share",
        "2",
        "--cores",
        "4",
        "--app",
        "l3fwd",
        "--size",
        "1500",
        "--rate",
        "20G",
        "--duration",
        "100us",
        "--warmup",
        "0us",
        "--json",
    ])
}

#[test]
fn shown_built_in_profiles_load_back_and_simulate_byte_for_byte_alike() {
    let dir = tempfile::tempdir().unwrap();
    let names = ok(&["profile", "list"]);
    for name in ["r640-silver4216", "i9-9960x-enso", "silver4110-xl710"] {
        assert!(names.contains(name), "{names}");
        let file = write(dir.path(), &format!("{name}.toml"), &ok(&["profile", "show", name]));
        assert!(ok(&["profile", "check", &file]).contains("DDIO: 2 of"));
        assert_eq!(short_run(name), short_run(&file), "{name}");
    }
}

/// The Xeon Scalable profiles whose LLC has a number of slices that is not a power of two check with
/// their hash and slice count, and simulate.
#[test]
fn profiles_with_18_20_and_28_llc_slices_check_and_run() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../experiments/profiles");
    for (name, slices) in [("r640-gold6140", 18), ("r640-gold6148", 20), ("r640-platinum8180", 28)] {
        let file = dir.join(format!("{name}.toml")).display().to_string();
        let facts = ok(&["profile", "check", &file]);
        let hash = format!("in {slices} slices (skx-{slices} hash)");
        assert!(facts.starts_with(name) && facts.contains(&hash), "{facts}");
        assert!(facts.contains(&format!("({} sets of 64 B lines)", slices * 2048)), "{facts}");
        assert!(short_run(&file).contains(name));
    }
}

#[test]
fn a_copied_and_edited_profile_runs() {
    let dir = tempfile::tempdir().unwrap();
    let shown = ok(&["profile", "show", "r640-silver4216"]);
    let edited = shown.replace("ddio_ways = 2", "ddio_ways = 4").replace("name = \"r640-silver4216\"\n", "");
    let file = write(dir.path(), "four-ways.toml", &edited);
    let facts = ok(&["profile", "check", &file]);
    assert!(facts.starts_with("four-ways:") && facts.contains("DDIO: 4 of 11 ways = 8.00 MiB"), "{facts}");
    assert!(short_run(&file).contains("four-ways"));
    let based = write(dir.path(), "based.toml", "base = \"r640-silver4216\"\nddio_ways = 4\n");
    assert!(ok(&["profile", "check", &based]).contains("DDIO: 4 of 11 ways"));
    let advice = ok(&["advise", "--profile", &based, "--cores", "16"]);
    assert!(advice.contains("In plain words") && advice.contains("DDIO 4 ways = 8.00 MiB"), "{advice}");
}

#[test]
fn profile_fields_are_sweep_axes_and_flags() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "p.toml", "base = \"r640-silver4216\"\n[nic]\nports = 1\n");
    let exp = write(
        dir.path(),
        "e.toml",
        "[run]\nengine = \"sim\"\nprofile = \"p.toml\"\ncores = 2\nsize = 1500\nrate = \"10G\"\nduration = \"20us\"\n\
         warmup = \"5us\"\n[sweep]\nprofile.ddio_ways = [2, 4]\n\
         profile_set = [\"llc.ways = 11\", \"llc.ways = 16; llc.size = 33554432\"]\n",
    );
    let json = ok(&["run", &exp, "--json"]);
    assert!(json.contains("ddio_ways = 4; llc.ways = 16; llc.size = 33554432"), "{json}");
    let broken = exp.replace("e.toml", "broken.toml");
    std::fs::write(&broken, std::fs::read_to_string(&exp).unwrap().replace("; llc.size = 33554432", "")).unwrap();
    fails(&["run", &broken], &["field `cpu.llc.size`", "has 22528 sets", "16 slices of the skx-16 hash"]);
    fails(&["run", &exp, "--profile-set", "ddio_ways = 12"], &["ddio_ways", "exceed the LLC's 11 ways"]);
    let bad = write(dir.path(), "bad.toml", "[run]\nengine = \"sim\"\n[sweep]\nprofile.nic.speed = [1]\n");
    fails(&["run", &bad], &["bad.toml", ":4:", "profile.nic.speed", "no such profile field"]);
}

#[test]
fn detect_writes_a_profile_that_loads() {
    let dir = tempfile::tempdir().unwrap();
    let file: PathBuf = dir.path().join("host.toml");
    let out = rxlab(&["profile", "detect", "-o", file.to_str().unwrap()]);
    if out.status.success() {
        let text = std::fs::read_to_string(&file).unwrap();
        assert!(text.contains("# detected: /sys/devices/system/cpu/online") && text.contains("not detected"), "{text}");
        assert!(ok(&["profile", "check", file.to_str().unwrap()]).starts_with("host:"));
    } else {
        // A host without /sys cache information: one line, exit 2.
        assert_eq!(out.status.code(), Some(2));
    }
    fails(&["run", "--engine", "sim", "--profile", "this-machine"], &["unknown profile 'this-machine'", "PATH.toml"]);
}

#[test]
fn bad_profile_files_name_the_file_the_line_and_the_field() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let base = "base = \"r640-silver4216\"\n";
    let missing = d.join("missing.toml").display().to_string();
    fails(&["profile", "check", &missing], &["missing.toml", "cannot read"]);
    fails(&["run", "--engine", "sim", "--profile", &missing], &["missing.toml", "cannot read"]);
    let cases: [(&str, String, &[&str]); 8] = [
        ("syntax.toml", format!("{base}[cpu\ncores = 4\n"), &[":2"]),
        ("unknown.toml", format!("{base}\n[nic]\nspeed = 100\n"), &[":4:", "unknown field `speed`"]),
        ("type.toml", format!("{base}[cpu]\ncores = \"many\"\n"), &[":3:", "field `cpu.cores`"]),
        ("ddio.toml", format!("{base}ddio_ways = 12\n"), &[":2:", "field `ddio_ways`", "exceed the LLC's 11 ways"]),
        ("ddio-by-llc.toml", format!("{base}[cpu.llc]\nways = 1\nsize = 2097152\n"), &[":3:", "field `cpu.llc.ways`"]),
        ("cores.toml", format!("{base}\n\n[cpu]\ncores = 0\n"), &[":5:", "field `cpu.cores`", "0 cores"]),
        (
            "curve.toml",
            format!("{base}[dram]\ncurve = [[0.1, 90.0], [0.5, 80.0]]\n"),
            &[":3:", "field `dram.curve`", "latency never fall"],
        ),
        (
            "sets.toml",
            format!("{base}[cpu.llc]\nsize = 23068000\n"),
            &[":3:", "field `cpu.llc.size`", "not a whole number of sets"],
        ),
    ];
    for (name, text, needles) in cases {
        let file = write(d, name, &text);
        let mut all = vec![name];
        all.extend(needles);
        fails(&["profile", "check", &file], &all);
        fails(&["run", "--engine", "sim", "--profile", &file, "--duration", "10us", "--warmup", "0us"], &all);
    }
    let unknown_base = write(d, "base.toml", "base = \"r650\"\n");
    fails(&["profile", "check", &unknown_base], &["base.toml:1:", "field `base`", "unknown profile 'r650'"]);
    fails(&["profile", "show", "r650"], &["unknown profile 'r650'"]);
}

/// The receive refill is the profile NIC's (`nic.rx_refill`, shown with the profile) and `--rx-refill`
/// overrides it; a name it does not know and a ring too small for the policy are refused.
#[test]
fn the_receive_refill_is_a_profile_field_and_a_flag() {
    assert!(ok(&["profile", "show", "r640-silver4216"]).contains("rx_refill = \"slot\""));
    let run = |extra: &[&str]| {
        let mut args = vec![
            "run",
            "--engine",
            "sim",
            "--cores",
            "1",
            "--app",
            "l3fwd",
            "--size",
            "1500",
            "--rate",
            "10G",
            "--duration",
            "50us",
            "--warmup",
            "0us",
            "--burst",
            "8",
        ];
        args.extend_from_slice(extra);
        args.iter().map(|a| a.to_string()).collect::<Vec<_>>()
    };
    let args = run(&["--rx-refill", "bulk", "--ring", "16"]);
    fails(&args.iter().map(String::as_str).collect::<Vec<_>>(), &["invalid --rx-refill", "slot, mlx5, i40e, ice"]);
    let args = run(&["--profile-set", "nic.rx_refill = \"mlx5\"", "--ring", "16"]);
    fails(&args.iter().map(String::as_str).collect::<Vec<_>>(), &["rx-refill", "at least 32 entries"]);
    let args = run(&["--rx-refill", "i40e", "--ring", "64"]);
    ok(&args.iter().map(String::as_str).collect::<Vec<_>>());
}
