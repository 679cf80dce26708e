//! `rxlab report DIR`: figures (SVG and PNG) and one self-contained `report.html` for a sweep's results
//! directory, or for a directory of them (what `rxlab reproduce` writes).

pub mod figures;
mod html;

use crate::cancel;
use crate::claim::Verdict;
use crate::experiment::Experiment;
use crate::results::{self, EXPERIMENT_FILE, Row};
use anyhow::{Context, Result, bail};
use clap::Args;
use figures::FigureSpec;
use std::path::{Path, PathBuf};
use traffic::atomic;

/// Arguments of `rxlab report`.
#[derive(Args, Debug)]
pub struct ReportArgs {
    /// A results directory (from `rxlab sweep`, `merge` or `reproduce`).
    dir: PathBuf,
}

/// One drawn figure.
pub struct Figure {
    /// Caption.
    pub title: String,
    /// The SVG, inlined into the page.
    pub svg: String,
    /// The PNG's path relative to the page.
    pub png: String,
}

/// One experiment's part of the report.
pub struct Section {
    /// The experiment.
    pub exp: Experiment,
    /// Its results.
    pub rows: Vec<Row>,
    /// Its claim's verdicts.
    pub verdicts: Vec<Verdict>,
    /// Its figures.
    pub figures: Vec<Figure>,
}

/// The results directories under `dir`: itself if it holds results, else its subdirectories that do.
fn result_dirs(dir: &Path) -> Result<Vec<PathBuf>> {
    if dir.join("results.json").is_file() {
        return Ok(vec![dir.to_path_buf()]);
    }
    let entries = std::fs::read_dir(dir).with_context(|| format!("cannot read {}: check the path", dir.display()))?;
    let mut dirs: Vec<PathBuf> =
        entries.filter_map(|e| e.ok().map(|e| e.path())).filter(|p| p.join("results.json").is_file()).collect();
    dirs.sort();
    if dirs.is_empty() {
        bail!(
            "{} holds no results.json: give a directory written by `rxlab sweep`, `merge` or `reproduce`",
            dir.display()
        );
    }
    Ok(dirs)
}

/// A section from one results directory, drawing its figures into `dir/figures/`; `page_dir` is where
/// the page will be (PNG links are relative to it).
pub fn section(dir: &Path, page_dir: &Path) -> Result<Section> {
    let path = dir.join(EXPERIMENT_FILE);
    let text = std::fs::read_to_string(&path).with_context(|| format!("cannot read {}", path.display()))?;
    let name = dir.file_name().and_then(|n| n.to_str()).unwrap_or("results");
    let exp = Experiment::parse(name, &text).map_err(|e| anyhow::anyhow!("{}:{e:#}", path.display()))?;
    let rows = results::load_results(dir)?;
    let verdicts = exp.claim.as_ref().map(|c| c.check.iter().map(|k| k.verdict(&rows)).collect()).unwrap_or_default();
    let specs = if rows.is_empty() {
        vec![]
    } else if exp.figures.is_empty() {
        FigureSpec::defaults(exp.axes.first().map(|a| a.key.as_str()))
    } else {
        exp.figures.clone()
    };
    let fig_dir = dir.join("figures");
    std::fs::create_dir_all(&fig_dir)?;
    let figures = specs
        .iter()
        .enumerate()
        .map(|(i, spec)| {
            let stem = fig_dir.join(format!("{}-{}", exp.name, i + 1));
            let svg = figures::render(spec, &rows, &stem)?;
            let png = stem.with_extension("png");
            let rel = png.strip_prefix(page_dir).unwrap_or(&png).display().to_string();
            Ok(Figure { title: spec.title(), svg, png: rel })
        })
        .collect::<Result<Vec<_>>>()?;
    Ok(Section { exp, rows, verdicts, figures })
}

/// Render `dir`'s report; returns the page's path.
pub fn render(dir: &Path) -> Result<PathBuf> {
    let sections = result_dirs(dir)?.iter().map(|d| section(d, dir)).collect::<Result<Vec<_>>>()?;
    let page = dir.join("report.html");
    atomic::write(&page, html::page(&sections)).with_context(|| format!("cannot write {}", page.display()))?;
    Ok(page)
}

/// Run `rxlab report`.
pub fn run(a: ReportArgs) -> Result<()> {
    let dir = a.dir.clone();
    cancel::keeps(move || format!("the figures finished so far under {} (report.html not written)", dir.display()));
    let page = render(&a.dir)?;
    println!("wrote {} (figures as SVG and PNG under figures/)", page.display());
    Ok(())
}
