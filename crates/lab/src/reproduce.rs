//! `rxlab reproduce`: run every experiment in `experiments/` that records a paper's claim and print the
//! verdict table (claim, paper, rxlab, within tolerance or not), then render the report.

use crate::claim::Verdict;
use crate::experiment::{Experiment, Point};
use crate::params::{Params, shorter};
use crate::results::Row;
use crate::{cancel, point, report, results, sweep};
use anyhow::{Context, Result};
use clap::Args;
use serde::Serialize;
use std::collections::{BTreeSet, HashSet};
use std::path::{Path, PathBuf};
use std::time::Instant;
use traffic::atomic;

/// Arguments of `rxlab reproduce`.
#[derive(Args, Debug)]
pub struct ReproduceArgs {
    /// Run each claim at a tenth of its duration and warm-up (for CI).
    #[arg(long)]
    quick: bool,
    /// Directory of experiment files.
    #[arg(long, default_value = "experiments")]
    dir: PathBuf,
    /// Only the experiments whose file name contains one of these (comma-separated, e.g.
    /// `--only shring-fig3,rxbisect-fig2`).
    #[arg(long, value_delimiter = ',')]
    only: Vec<String>,
    /// Results directory (one subdirectory per claim, and report.html).
    #[arg(short, long, default_value = "results/reproduce")]
    out: PathBuf,
    /// Parallel runs: the points, and each point's trials [default: the machine's cores].
    #[arg(long)]
    jobs: Option<usize>,
    /// Run nothing: judge the points already in --out, whichever rxlab build ran them (after a claim's
    /// checks or the verdict table changed); a claim missing any of its points is not run.
    #[arg(long)]
    judge: bool,
    /// Compare every check with a reference run's verdict table (e.g.
    /// `experiments/reference/verdicts.txt`): print each value that left the reference's seed spread (a
    /// one-seed value: 1 %) or whose verdict turned, and fail if any did.
    #[arg(long, value_name = "FILE")]
    against: Option<PathBuf>,
    /// Parameters that override every point's (e.g. `--duration 50us` for a smoke test).
    #[command(flatten)]
    flags: Params,
}

/// What happened to one claim.
#[derive(Debug, Clone, Serialize)]
pub struct ClaimResult {
    /// Experiment name.
    pub name: String,
    /// Paper and figure.
    pub claim: String,
    /// Verdicts of its checks (empty when it did not run).
    pub verdicts: Vec<Verdict>,
    /// Why it did not run (a design missing, a failed point).
    pub not_run: Option<String>,
    /// Wall-clock seconds.
    pub wall_s: f64,
}

/// The points of `exp`, a tenth as long in quick mode.
fn points(exp: &Experiment, flags: &Params, quick: bool) -> Vec<Point> {
    let mut pts = exp.points(flags);
    if quick {
        for p in &mut pts {
            p.params.duration = shorter(&p.params.duration, 10);
            p.params.warmup = shorter(&p.params.warmup, 10);
            p.id = point::id(&p.params);
        }
    }
    pts
}

fn reproduce_one(exp: &Experiment, a: &ReproduceArgs) -> ClaimResult {
    let start = Instant::now();
    let claim = exp.claim.as_ref().expect("only experiments with a claim");
    let pts = points(exp, &a.flags, a.quick);
    let missing: Vec<String> = pts
        .iter()
        .filter_map(|p| p.params.iface.clone())
        .filter(|d| !ifaces::DESIGN_NAMES.contains(&d.as_str()))
        .collect();
    let outcome = if let Some(d) = missing.first() {
        Err(format!("design missing ({d})"))
    } else if a.judge {
        judged(&pts, &a.out.join(&exp.name))
    } else {
        sweep::sweep(exp, &pts, &a.out.join(&exp.name), a.jobs).map_err(|e| format!("{e:#}"))
    };
    let (verdicts, not_run) = match outcome {
        Ok(rows) => (claim.check.iter().map(|c| c.verdict(&rows)).collect(), None),
        Err(e) => (vec![], Some(e)),
    };
    ClaimResult {
        name: exp.name.clone(),
        claim: format!("{} {}", claim.paper, claim.figure),
        verdicts,
        not_run,
        wall_s: start.elapsed().as_secs_f64(),
    }
}

/// The finished rows of `pts` that `dir` holds, whichever build ran them (`--judge`); an error when any
/// is missing. Says which builds the rows come from.
fn judged(pts: &[Point], dir: &Path) -> Result<Vec<Row>, String> {
    let wanted: HashSet<&str> = pts.iter().map(|p| p.id.as_str()).collect();
    let rows: Vec<Row> = results::finished(results::load_points(dir).map_err(|e| format!("{e:#}"))?)
        .into_iter()
        .filter(|r| wanted.contains(r.id.as_str()))
        .collect();
    if rows.len() < wanted.len() {
        return Err(format!(
            "{} of {} points are not in {} (--judge runs nothing)",
            wanted.len() - rows.len(),
            wanted.len(),
            dir.display()
        ));
    }
    let builds: BTreeSet<&str> = rows.iter().map(|r| r.build.as_str()).collect();
    let builds = builds.into_iter().collect::<Vec<_>>().join(", ");
    eprintln!("{}: judging {} points run by build {builds}", dir.display(), rows.len());
    Ok(rows)
}

/// The experiments with a claim in `dir`, by file name; only those whose name contains one of `only`
/// unless it is empty.
pub fn claims(dir: &Path, only: &[String]) -> Result<Vec<Experiment>> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .with_context(|| format!("cannot read {}: give --dir the experiments directory", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .filter(|p| {
            let name = p.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
            only.is_empty() || only.iter().any(|o| name.contains(o.as_str()))
        })
        .collect();
    files.sort();
    let exps = files.iter().map(|f| Experiment::load(f)).collect::<Result<Vec<_>>>()?;
    Ok(exps.into_iter().filter(|e| e.claim.is_some()).collect())
}

/// The verdict table as text, its columns as wide as their longest entries.
pub fn table(results: &[ClaimResult]) -> String {
    let name_w = results.iter().map(|r| r.name.len()).fold(5, usize::max);
    let what_w = results
        .iter()
        .flat_map(|r| {
            r.verdicts.iter().map(|v| v.what.chars().count()).chain(r.not_run.as_ref().map(|_| r.claim.len()))
        })
        .fold(5, usize::max);
    let row = |name: &str, what: &str, paper: &str, rx: &str, tail: &str| {
        format!("{name:<name_w$} {what:<what_w$} {paper:>9} {rx:>9}  {tail}")
    };
    let mut lines = vec![row("claim", "ratio", "paper", "rxlab", "verdict")];
    for r in results {
        if let Some(why) = &r.not_run {
            lines.push(row(&r.name, &r.claim, "", "", &format!("not run: {why}")));
        }
        for v in &r.verdicts {
            let rx = v.rxlab.map_or_else(|| "-".into(), |x| format!("{x:.3}"));
            let verdict = if v.within { "within" } else { "MISS" };
            let paper = format!("{}{:.3}", crate::claim::bound_sign(v.bound), v.paper);
            let seeds = v.seeds.map_or_else(String::new, |s| format!("; {s}"));
            let tail = format!("{verdict} ({}){seeds}", v.tolerance_text());
            lines.push(row(&r.name, &v.what, &paper, &rx, &tail));
        }
    }
    lines.join("\n")
}

/// Run `rxlab reproduce`.
pub fn run(a: ReproduceArgs) -> Result<()> {
    let start = Instant::now();
    let exps = claims(&a.dir, &a.only)?;
    if exps.is_empty() {
        anyhow::bail!("no experiment with a [claim] in {}; check --dir and --only", a.dir.display());
    }
    let dirs: Vec<PathBuf> = exps.iter().map(|e| a.out.join(&e.name)).collect();
    let out = a.out.clone();
    cancel::keeps(move || results::kept_points(&dirs, &out));
    let results: Vec<ClaimResult> = exps
        .iter()
        .map(|e| {
            let r = reproduce_one(e, &a);
            eprintln!("{}: {:.1} s", r.name, r.wall_s);
            r
        })
        .collect();
    std::fs::create_dir_all(&a.out)?;
    let verdicts = a.out.join("verdicts.json");
    atomic::write(&verdicts, serde_json::to_string_pretty(&results)? + "\n")
        .with_context(|| format!("cannot write {}", verdicts.display()))?;
    println!("{}", table(&results));
    let checks: Vec<&Verdict> = results.iter().flat_map(|r| &r.verdicts).collect();
    println!(
        "{} of {} checks within tolerance, {} claims not run; {:.0} s{}",
        checks.iter().filter(|v| v.within).count(),
        checks.len(),
        results.iter().filter(|r| r.not_run.is_some()).count(),
        start.elapsed().as_secs_f64(),
        if a.judge {
            " (judged; nothing run)"
        } else if a.quick {
            " (quick)"
        } else {
            ""
        }
    );
    if results.iter().any(|r| r.not_run.is_none()) {
        println!("report: {}", report::render(&a.out)?.display());
    }
    match &a.against {
        Some(path) => crate::reference::against(path, &results),
        None => Ok(()),
    }
}
