//! `rxlab report DIR`: figures (SVG, PNG and PDF) and one self-contained `report.html` for a sweep's
//! results directory, or for a directory of them (what `rxlab reproduce` writes).

pub mod axis;
pub mod draw;
pub mod figures;
pub mod font;
mod html;
pub mod metrics;
pub mod pdf;
pub mod style;

use crate::claim::Verdict;
use crate::experiment::Experiment;
use crate::results::{self, EXPERIMENT_FILE, Row};
use anyhow::{Context, Result, bail};
use clap::Args;
use figures::FigureSpec;
use plotters::prelude::{BitMapBackend, IntoDrawingArea, SVGBackend};
use std::path::{Path, PathBuf};

/// Arguments of `rxlab report`.
#[derive(Args, Debug)]
pub struct ReportArgs {
    /// A results directory (from `rxlab sweep`, `merge` or `reproduce`).
    dir: PathBuf,
}

/// One drawn figure.
pub struct Figure {
    /// Anchor in the page (`EXPERIMENT-fig-N`).
    pub id: String,
    /// Caption.
    pub title: String,
    /// The SVG, inlined into the page.
    pub svg: String,
    /// The PNG's path relative to the page (the PDF's is the same with `.pdf`).
    pub png: String,
    /// The spec it was drawn from.
    pub spec: FigureSpec,
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
    let (published, paper) = exp.claim.as_ref().map_or((&[][..], ""), |c| (&c.published[..], c.paper.as_str()));
    let figures = specs
        .iter()
        .enumerate()
        .map(|(i, spec)| {
            let name = format!("{}-{}", exp.name, i + 1);
            let stem = fig_dir.join(&name);
            let plot = spec.plot(&rows, published, paper).map_err(|e| anyhow::anyhow!("{}: {e:#}", path.display()))?;
            let svg = write_figure(&plot, &stem)?;
            let png = stem.with_extension("png");
            let rel = png.strip_prefix(page_dir).unwrap_or(&png).display().to_string();
            Ok(Figure { id: format!("{name}-fig"), title: plot.title, svg, png: rel, spec: spec.clone() })
        })
        .collect::<Result<Vec<_>>>()?;
    Ok(Section { exp, rows, verdicts, figures })
}

/// Draw `plot` as `stem.svg`, `stem.png` and `stem.pdf`; returns the SVG text.
pub fn write_figure(plot: &figures::Plot, stem: &Path) -> Result<String> {
    font::load()?;
    let size = draw::size(plot);
    let mut svg = String::new();
    draw::draw(SVGBackend::with_string(&mut svg, size).into_drawing_area(), plot)?;
    let write = |ext: &str, bytes: &[u8]| {
        let p = stem.with_extension(ext);
        std::fs::write(&p, bytes).with_context(|| format!("cannot write {}", p.display()))
    };
    write("svg", svg.as_bytes())?;
    write("pdf", &pdf::from_svg(&svg, &plot.title)?)?;
    draw::draw(BitMapBackend::new(&stem.with_extension("png"), size).into_drawing_area(), plot)?;
    Ok(svg)
}

/// Render `dir`'s report; returns the page's path.
pub fn render(dir: &Path) -> Result<PathBuf> {
    let sections = result_dirs(dir)?.iter().map(|d| section(d, dir)).collect::<Result<Vec<_>>>()?;
    let page = dir.join("report.html");
    std::fs::write(&page, html::page(&sections)).with_context(|| format!("cannot write {}", page.display()))?;
    Ok(page)
}

/// Run `rxlab report`.
pub fn run(a: ReportArgs) -> Result<()> {
    let page = render(&a.dir)?;
    println!("wrote {} (figures as SVG, PNG and PDF under figures/)", page.display());
    Ok(())
}
