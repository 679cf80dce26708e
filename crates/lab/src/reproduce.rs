//! `rxlab reproduce`: run every experiment in `experiments/` that records a paper's claim and print the
//! verdict table (claim, paper, rxlab, within tolerance or not), then render the report.

use crate::claim::Verdict;
use crate::experiment::{Experiment, Point};
use crate::params::{Params, shorter};
use crate::results::Row;
use crate::sweep::Known;
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
    /// Compare every check with a reference run's Markdown verdict table (`docs/reproducing.md` holds the
    /// reference run's; any run's `verdicts.md` serves): print each value that left the reference's seed
    /// spread (a one-seed value: 1 %) or whose verdict turned, and fail if any did.
    #[arg(long, value_name = "FILE")]
    against: Option<PathBuf>,
    /// Also write the verdict table as Markdown to this file (always written to `verdicts.md` in --out);
    /// in a page with the lines `<!-- verdicts: rxlab reproduce --markdown -->` and `<!-- /verdicts -->`
    /// only the table between them is replaced, e.g. `--markdown docs/reproducing.md`.
    #[arg(long)]
    markdown: Option<PathBuf>,
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

/// Judge `exp`'s claim, running the points it needs that neither its directory nor `known` holds; its
/// finished rows join `known`.
fn reproduce_one(exp: &Experiment, a: &ReproduceArgs, known: &mut Known) -> ClaimResult {
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
        sweep::sweep(exp, &pts, &a.out.join(&exp.name), a.jobs, known).map_err(|e| format!("{e:#}"))
    };
    if let Ok(rows) = &outcome {
        known.extend(rows.iter().filter(|r| r.build == crate::build::id()).map(|r| (r.id.clone(), r.clone())));
    }
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

/// The cells of the verdict table, one row per check (or per claim not run): experiment, what is
/// compared, the paper's value, rxlab's and the verdict.
fn rows(results: &[ClaimResult]) -> Vec<[String; 5]> {
    let mut rows = vec![];
    for r in results {
        if let Some(why) = &r.not_run {
            rows.push([r.name.clone(), r.claim.clone(), String::new(), String::new(), format!("not run: {why}")]);
        }
        for v in &r.verdicts {
            let rx = v.rxlab.map_or_else(|| "-".into(), crate::claim::number);
            let verdict = if v.within { "within" } else { "MISS" };
            let paper = format!("{}{}", crate::claim::bound_sign(v.bound), crate::claim::number(v.paper));
            let seeds = v.seeds.map_or_else(String::new, |s| format!("; {s}"));
            let tail = format!("{verdict} ({}){seeds}", v.tolerance_text());
            rows.push([r.name.clone(), v.what.clone(), paper, rx, tail]);
        }
    }
    rows
}

/// The verdict table as text, its columns as wide as their longest entries.
pub fn table(results: &[ClaimResult]) -> String {
    let rows = rows(results);
    let width = |i: usize| rows.iter().map(|r| r[i].chars().count()).fold(5, usize::max);
    let (name_w, what_w) = (width(0), width(1));
    let row = |[name, what, paper, rx, tail]: &[String; 5]| {
        format!("{name:<name_w$} {what:<what_w$} {paper:>9} {rx:>9}  {tail}")
    };
    let header = ["claim", "ratio", "paper", "rxlab", "verdict"].map(String::from);
    std::iter::once(&header).chain(&rows).map(row).collect::<Vec<_>>().join("\n")
}

/// The header of the verdict table in Markdown, its first two lines.
pub const MARKDOWN_HEADER: &str = "| claim | check | paper | rxlab | verdict |\n|---|---|---:|---:|---|";

/// The lines around the verdict table in a Markdown page that `--markdown` updates in place.
pub const MARKERS: (&str, &str) = ("<!-- verdicts: rxlab reproduce --markdown -->", "<!-- /verdicts -->");

/// The verdict table as Markdown (`--markdown`, `verdicts.md`): which rxlab wrote it and how, one row per
/// check, then the summary line.
pub fn markdown(results: &[ClaimResult], how: &str) -> String {
    let cell = |s: &str| s.replace('|', "\\|");
    let mut out = format!("<!-- rxlab {}, {how} -->\n{MARKDOWN_HEADER}", crate::build::VERSION);
    for r in rows(results) {
        out += &format!("\n| {} |", r.iter().map(|c| cell(c)).collect::<Vec<_>>().join(" | "));
    }
    out + "\n\n" + &summary(results) + "\n"
}

/// `page` with the lines between its [`MARKERS`] (each a line of its own) replaced by `table`; `table`
/// alone when `page` is empty or an earlier table alone, and an error when a page has no markers.
pub fn splice(page: &str, table: &str) -> Result<String> {
    let (begin, end) = MARKERS;
    // Byte offset of the first line equal to `marker` at or after `from`.
    let line = |marker: &str, from: usize| {
        let mut at = 0;
        page.split_inclusive('\n').find_map(|l| {
            let start = at;
            at += l.len();
            (start >= from && l.trim_end() == marker).then_some(start)
        })
    };
    if page.trim().is_empty() || page.starts_with("<!-- rxlab ") {
        return Ok(table.to_string());
    }
    let b = line(begin, 0);
    match (b, b.and_then(|b| line(end, b))) {
        (Some(b), Some(e)) => Ok(format!("{}{begin}\n{table}{}", &page[..b], &page[e..])),
        _ => anyhow::bail!("it has no lines '{begin}' and '{end}' around the table to replace; add them"),
    }
}

/// `76 of 105 checks within tolerance, 0 claims not run`.
pub fn summary(results: &[ClaimResult]) -> String {
    let checks: Vec<&Verdict> = results.iter().flat_map(|r| &r.verdicts).collect();
    format!(
        "{} of {} checks within tolerance, {} claims not run",
        checks.iter().filter(|v| v.within).count(),
        checks.len(),
        results.iter().filter(|r| r.not_run.is_some()).count()
    )
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
    // A point two experiments share (the same parameters under two labels) runs once.
    let mut known = Known::new();
    let results: Vec<ClaimResult> = exps
        .iter()
        .map(|e| {
            let r = reproduce_one(e, &a, &mut known);
            eprintln!("{}: {:.1} s", r.name, r.wall_s);
            r
        })
        .collect();
    std::fs::create_dir_all(&a.out)?;
    let verdicts = a.out.join("verdicts.json");
    atomic::write(&verdicts, serde_json::to_string_pretty(&results)? + "\n")
        .with_context(|| format!("cannot write {}", verdicts.display()))?;
    let how = if a.judge {
        "judged"
    } else if a.quick {
        "quick"
    } else {
        "run"
    };
    let table_md = markdown(&results, how);
    let written = a.out.join("verdicts.md");
    atomic::write(&written, &table_md).with_context(|| format!("cannot write {}", written.display()))?;
    if let Some(path) = &a.markdown {
        let page = std::fs::read_to_string(path).unwrap_or_default();
        let text = splice(&page, &table_md).with_context(|| format!("cannot update {}", path.display()))?;
        atomic::write(path, text).with_context(|| format!("cannot write {}", path.display()))?;
    }
    println!("{}", table(&results));
    println!(
        "{}; {:.0} s{}",
        summary(&results),
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::claim::{Bound, Seeds};

    fn results() -> Vec<ClaimResult> {
        let v = |what: &str, rxlab, within, seeds| Verdict {
            what: what.into(),
            paper: 0.8,
            rxlab,
            tolerance: 0.1,
            bound: Bound::About,
            within,
            seeds,
        };
        let seeds = Seeds { n: 10, within: 7, min: 0.728, max: 1.002 };
        vec![
            ClaimResult {
                name: "rxbisect-fig2".into(),
                claim: "rxBisect Fig. 2".into(),
                verdicts: vec![
                    v("throughput ring 4096 / ring 64", Some(0.805), true, Some(seeds)),
                    v("a | b", None, false, None),
                ],
                not_run: None,
                wall_s: 1.0,
            },
            ClaimResult {
                name: "enso-fig8".into(),
                claim: "Enso Fig. 8".into(),
                verdicts: vec![],
                not_run: Some("design missing (x)".into()),
                wall_s: 0.0,
            },
        ]
    }

    #[test]
    fn markdown_has_a_row_per_check_and_the_summary() {
        let md = markdown(&results(), "run");
        let lines: Vec<&str> = md.lines().collect();
        assert_eq!(lines[0], format!("<!-- rxlab {}, run -->", crate::build::VERSION));
        assert_eq!(lines[1..3].join("\n"), MARKDOWN_HEADER);
        assert_eq!(
            lines[3],
            "| rxbisect-fig2 | throughput ring 4096 / ring 64 | 0.800 | 0.805 | within (±10 %); 7 of 10 seeds within, 0.728-1.002 |"
        );
        assert_eq!(lines[4], "| rxbisect-fig2 | a \\| b | 0.800 | - | MISS (±10 %) |");
        assert_eq!(lines[5], "| enso-fig8 | Enso Fig. 8 |  |  | not run: design missing (x) |");
        assert_eq!(lines[7], "1 of 2 checks within tolerance, 1 claims not run");
        assert_eq!(table(&results()).lines().count(), 4);
    }

    #[test]
    fn splice_replaces_only_the_table() {
        let (b, e) = MARKERS;
        let page = format!("# Title, between `{e}` and `{b}`\n\n{b}\nold\n{e}\n\nprose\n");
        let spliced = format!("# Title, between `{e}` and `{b}`\n\n{b}\nnew\n{e}\n\nprose\n");
        assert_eq!(splice(&page, "new\n").unwrap(), spliced);
        assert_eq!(splice("", "new\n").unwrap(), "new\n");
        assert_eq!(splice(&markdown(&results(), "run"), "new\n").unwrap(), "new\n");
        assert!(splice("# a page\n", "new\n").unwrap_err().to_string().contains(b));
    }
}
