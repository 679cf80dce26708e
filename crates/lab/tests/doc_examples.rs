//! Every shell example of the README and of `docs/` runs, so that the manual cannot rot.
//!
//! Each fenced block whose info string starts with `sh` is run by bash (`set -e`) in a scratch directory
//! that holds a link to `experiments/`, with `rxlab` on the PATH being the built binary at a quick scale
//! (the shim below): `run` and `sweep` get `--duration 5us --warmup 0us --trials 1 --flows 1024` (and a
//! `--stall` of 2us) in place of their own values; `reproduce` also `--quick` and `--only corec-fig7`; `bench` `--packets 20k
//! --rounds 1`; `jitter` `--duration 50ms`. Lines that start with `cargo` are not run (they are the
//! README's build and test commands). Words after `sh` in the info string are environment settings for
//! the block's run, e.g. `sh SLURM_ARRAY_TASK_ID=1`. Blocks of other languages (`text`, `toml`) are not
//! run. A page's verdict table is checked against the experiment files in `tests/verdict_table.rs`.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The shim that stands for `rxlab` in the examples: the real binary at a quick scale.
const SHIM: &str = r#"#!/usr/bin/env bash
set -e
sub="$1"
replace=()
extra=()
case "$sub" in
  run|sweep) replace=(--duration --warmup --trials --flows --jobs --stall)
             extra=(--duration 5us --warmup 0us --trials 1 --flows 1024 --jobs 1) ;;
  reproduce) replace=(--duration --warmup --trials --flows --jobs --only)
             extra=(--quick --duration 5us --warmup 0us --trials 1 --flows 1024 --jobs 1 --only corec-fig7) ;;
  bench)     replace=(--packets --rounds); extra=(--packets 20k --rounds 1) ;;
  jitter)    replace=(--duration); extra=(--duration 50ms) ;;
esac
args=()
skip=0
for a in "$@"; do
  if [ "$skip" = 1 ]; then skip=0; continue; fi
  for r in "${replace[@]}"; do
    if [ "$a" = "$r" ]; then skip=1; continue 2; fi
    case "$a" in "$r="*) continue 2 ;; esac
  done
  args+=("$a")
done
if [ "$sub" = run ] && [ "${#args[@]}" = 1 ]; then args+=(experiments/default.toml); fi
for a in "$@"; do case "$a" in --stall|--stall=*) extra+=(--stall 2us) ;; esac; done
exec "$RXLAB_REAL" "${args[@]}" "${extra[@]}"
"#;

/// One fenced `sh` block: where it is, its environment settings and its text.
struct Example {
    place: String,
    env: Vec<(String, String)>,
    text: String,
}

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The Markdown files whose examples run: README.md and every page under docs/.
fn pages() -> Vec<PathBuf> {
    let mut pages = vec![root().join("README.md")];
    let mut docs: Vec<PathBuf> = std::fs::read_dir(root().join("docs"))
        .expect("docs/")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .collect();
    docs.sort();
    pages.extend(docs);
    pages
}

/// The `sh` blocks of a Markdown text.
fn examples(name: &str, text: &str) -> Vec<Example> {
    let mut out = vec![];
    let mut open: Option<Example> = None;
    for (i, line) in text.lines().enumerate() {
        let fence = line.trim_start().strip_prefix("```");
        match (fence, open.take()) {
            (Some(_), Some(done)) => out.push(done),
            (Some(info), None) => {
                let mut words = info.split_whitespace();
                if words.next() == Some("sh") {
                    let env = words
                        .map(|w| w.split_once('=').expect("sh KEY=VALUE"))
                        .map(|(k, v)| (k.to_string(), v.to_string()))
                        .collect();
                    open = Some(Example { place: format!("{name}:{}", i + 1), env, text: String::new() });
                } else {
                    // A block of another language: skip to its closing fence.
                    open = Some(Example { place: String::new(), env: vec![], text: "\u{0}".into() });
                }
            }
            (None, Some(mut ex)) => {
                if !line.trim_start().starts_with("cargo ") {
                    ex.text.push_str(line);
                    ex.text.push('\n');
                }
                open = Some(ex);
            }
            (None, None) => {}
        }
    }
    assert!(open.is_none(), "{name}: a fenced block is not closed");
    out.into_iter().filter(|e| !e.text.starts_with('\u{0}')).collect()
}

/// Run one example in its own directory under `scratch`; the failure's text if it fails.
fn run(ex: &Example, scratch: &Path, path: &str) -> Result<(), String> {
    let dir = tempfile::tempdir_in(scratch).unwrap();
    std::os::unix::fs::symlink(root().join("experiments"), dir.path().join("experiments")).unwrap();
    let out = Command::new("bash")
        .arg("-c")
        .arg(format!("set -eo pipefail\n{}", ex.text))
        .current_dir(dir.path())
        .env("PATH", path)
        .env("RXLAB_REAL", env!("CARGO_BIN_EXE_rxlab"))
        .envs(ex.env.iter().map(|(k, v)| (k, v)))
        .output()
        .unwrap();
    if out.status.success() {
        return Ok(());
    }
    Err(format!(
        "{}: the example failed:\n{}\nstdout:\n{}\nstderr:\n{}",
        ex.place,
        ex.text,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    ))
}

#[test]
fn every_shell_example_runs() {
    let scratch = tempfile::tempdir().unwrap();
    let bin = scratch.path().join("bin");
    std::fs::create_dir(&bin).unwrap();
    let shim = bin.join("rxlab");
    std::fs::write(&shim, SHIM).unwrap();
    std::fs::set_permissions(&shim, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap_or_default());
    let mut all = vec![];
    for page in pages() {
        let text = std::fs::read_to_string(&page).unwrap();
        let name = page.strip_prefix(root()).unwrap_or(&page).display().to_string();
        all.extend(examples(&name, &text).into_iter().filter(|e| !e.text.trim().is_empty()));
    }
    assert!(all.len() >= 5, "only {} examples: are the pages' blocks marked `sh`?", all.len());
    // Two at a time: most of an example's time is one process's set-up.
    let next = std::sync::atomic::AtomicUsize::new(0);
    let failures = std::sync::Mutex::new(vec![]);
    std::thread::scope(|s| {
        for _ in 0..2 {
            s.spawn(|| {
                while let Some(ex) = all.get(next.fetch_add(1, std::sync::atomic::Ordering::Relaxed)) {
                    if let Err(e) = run(ex, scratch.path(), &path) {
                        failures.lock().unwrap().push(e);
                    }
                }
            });
        }
    });
    let failures = failures.into_inner().unwrap();
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn blocks_are_found_and_cargo_lines_skipped() {
    let md = "text\n```sh A=1\ncargo test\nrxlab profile list\n```\n```toml\n[run]\n```\n```sh\nrxlab --version\n```\n";
    let ex = examples("x.md", md);
    assert_eq!(ex.len(), 2);
    assert_eq!(ex[0].place, "x.md:2");
    assert_eq!(ex[0].env, vec![("A".to_string(), "1".to_string())]);
    assert_eq!(ex[0].text, "rxlab profile list\n");
    assert_eq!(ex[1].text, "rxlab --version\n");
}
