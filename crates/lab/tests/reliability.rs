//! Interruption, size and a full disk through the real binary: SIGINT and SIGTERM stop a
//! command with one line saying what it kept and exit 130/143, leaving no temporary; a trace that cannot
//! fit is refused before anything is written; a disk that fills during a write gives one line and no
//! partial file.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::Duration;

fn rxlab(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_rxlab")).args(args).output().expect("run rxlab")
}

fn spawn(args: &[&str]) -> Child {
    Command::new(env!("CARGO_BIN_EXE_rxlab"))
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run rxlab")
}

/// A scratch directory on the build's disk (traces here are large).
fn scratch() -> tempfile::TempDir {
    tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap()
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

fn entries(dir: &Path) -> Vec<PathBuf> {
    let mut e: Vec<PathBuf> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).collect();
    e.sort();
    e
}

fn temporaries(dir: &Path) -> Vec<PathBuf> {
    entries(dir).into_iter().filter(|p| p.file_name().unwrap().to_string_lossy().starts_with(".rxlab-")).collect()
}

/// Poll until `ready` holds, failing after a generous minute (a hang, not a timing assertion).
fn wait_for(what: &str, mut ready: impl FnMut() -> bool) {
    for _ in 0..6000 {
        if ready() {
            return;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    panic!("gave up waiting for {what}");
}

/// Whether the child catches SIGINT and SIGTERM yet (`SigCgt` in /proc: bits 1 and 14).
fn handles_signals(child: &Child) -> bool {
    let status = std::fs::read_to_string(format!("/proc/{}/status", child.id())).unwrap_or_default();
    let mask = status.lines().find_map(|l| l.strip_prefix("SigCgt:")).map(str::trim).unwrap_or("0");
    u64::from_str_radix(mask, 16).unwrap_or(0) & 0x4002 == 0x4002
}

/// Send `signal` and return the exit code and stderr.
fn interrupt(mut child: Child, signal: rustix::process::Signal) -> (Option<i32>, String) {
    let pid = rustix::process::Pid::from_raw(child.id() as i32).unwrap();
    rustix::process::kill_process(pid, signal).unwrap();
    let status = child.wait().unwrap();
    let mut err = String::new();
    child.stderr.take().unwrap().read_to_string(&mut err).unwrap();
    (status.code(), err)
}

#[test]
fn an_interrupted_trace_gen_leaves_nothing_and_says_so() {
    let d = scratch();
    let out = d.path().join("big.pcap");
    let child = spawn(&["trace", "gen", "--count", "50000000", "--size", "64", "-o", s(&out)]);
    wait_for("the trace's temporary", || !temporaries(d.path()).is_empty());
    let (code, err) = interrupt(child, rustix::process::Signal::TERM);
    assert_eq!(code, Some(143), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(err.contains("interrupted by SIGTERM; kept nothing") && err.contains("removed the unfinished"), "{err}");
    assert!(entries(d.path()).is_empty(), "{:?}", entries(d.path()));
}

#[test]
fn an_interrupted_run_exits_130_with_one_line() {
    let child = spawn(&["run", "--engine", "sim", "--app", "echo", "--cores", "2", "--duration", "100s"]);
    wait_for("the signal handler", || handles_signals(&child));
    let (code, err) = interrupt(child, rustix::process::Signal::INT);
    assert_eq!(code, Some(130), "{err}");
    assert_eq!(err.trim_end(), "rxlab: interrupted by SIGINT; kept nothing");
}

const SWEEP: &str = r#"[run]
engine = "sim"
app = "echo"
cores = 2
size = 1500
rate = "20G"
duration = "10ms"
warmup = "10us"

[[case]]
iface = "privring"

[[case]]
iface = "shring"

[sweep]
ring = [64, 128, 256]
"#;

/// The finished lines of `path`: a line still being appended (no newline yet) is not one, as a reader
/// racing the writer's `write` may see part of it.
fn lines(path: &Path) -> Vec<serde_json::Value> {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    text.split_inclusive('\n')
        .filter(|l| l.ends_with('\n'))
        .map(|l| serde_json::from_str(l).expect("whole lines only"))
        .collect()
}

#[test]
fn an_interrupted_sweep_keeps_its_finished_points_and_resumes() {
    let d = scratch();
    let exp = d.path().join("sweep.toml");
    std::fs::write(&exp, SWEEP).unwrap();
    let out = d.path().join("out");
    let points = out.join("points.jsonl");
    let child = spawn(&["sweep", s(&exp), "-o", s(&out), "--jobs", "1"]);
    wait_for("a finished point", || !lines(&points).is_empty());
    let (code, err) = interrupt(child, rustix::process::Signal::INT);
    assert_eq!(code, Some(130), "{err}");
    let kept = lines(&points).len();
    assert!(kept < 6, "the sweep ended before the signal");
    let line = err.lines().last().unwrap();
    assert!(line.contains(&format!("interrupted by SIGINT; kept {kept} finished points in")), "{err}");
    assert!(temporaries(&out).is_empty(), "{:?}", entries(&out));
    let rerun = rxlab(&["sweep", s(&exp), "-o", s(&out), "--jobs", "1"]);
    assert!(rerun.status.success(), "{}", String::from_utf8_lossy(&rerun.stderr));
    assert_eq!(lines(&points).len(), 6, "the finished points are not run again");
}

#[test]
fn a_trace_that_cannot_fit_is_refused_before_writing() {
    let d = scratch();
    let out = d.path().join("big.pcap");
    let o = rxlab(&["trace", "gen", "--count", "100000000000", "--size", "1500", "-o", s(&out)]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(err.contains("needs about 151.2 TB but") && err.contains("free; write fewer packets"), "{err}");
    assert!(entries(d.path()).is_empty());
}

/// A small tmpfs, unmounted on drop; `None` where mounting is not permitted (not root, no capability).
struct Tmpfs(tempfile::TempDir);

impl Tmpfs {
    fn mount(size: &str) -> Option<Tmpfs> {
        let dir = tempfile::tempdir().unwrap();
        let ok = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs", s(dir.path())])
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        ok.then_some(Tmpfs(dir))
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(self.0.path()).status();
    }
}

const TINY: &str = r#"[run]
engine = "sim"
app = "echo"
cores = 2
size = 1500
rate = "20G"
duration = "20us"
warmup = "5us"

[[case]]
iface = "privring"

[sweep]
ring = [64, 256]

[[figure]]
x = "ring"
y = "throughput.gbps_wire"
"#;

#[test]
fn a_disk_that_fills_during_a_write_gives_one_line_and_no_partial_file() {
    let Some(fs) = Tmpfs::mount("48k") else {
        eprintln!("skipped: cannot mount a tmpfs here");
        return;
    };
    // Results that fit, then a report whose figures do not (a PNG is tens of kB): the write fails
    // part-way, which no size estimate foresaw.
    let d = scratch();
    let exp = d.path().join("tiny.toml");
    std::fs::write(&exp, TINY).unwrap();
    let o = rxlab(&["sweep", s(&exp), "-o", s(&d.path().join("out"))]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let dir = fs.0.path();
    for f in ["experiment.toml", "results.json"] {
        std::fs::copy(d.path().join("out").join(f), dir.join(f)).unwrap();
    }
    let o = rxlab(&["report", s(dir)]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(err.contains("No space left on device"), "{err}");
    assert!(temporaries(dir).is_empty() && temporaries(&dir.join("figures")).is_empty());
    assert!(!dir.join("report.html").exists());
}
