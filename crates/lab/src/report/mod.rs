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

use crate::cancel;
use crate::claim::Verdict;
use crate::experiment::Experiment;
use crate::results::{self, EXPERIMENT_FILE, Row};
use anyhow::{Context, Result, bail};
use clap::Args;
use figures::FigureSpec;
use plotters::prelude::{BitMapBackend, IntoDrawingArea, SVGBackend};
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
            let mut plot =
                spec.plot(&rows, published, paper).map_err(|e| anyhow::anyhow!("{}: {e:#}", path.display()))?;
            for check in exp.claim.iter().flat_map(|c| &c.check) {
                // A paired check's threshold is on each pair's ratio, not on the metric's axis.
                if let Some(threshold) = check.above.filter(|_| check.pair.is_empty()) {
                    plot.rule(spec, &check.metric, threshold);
                }
            }
            let svg = write_figure(&plot, &stem)?;
            let png = stem.with_extension("png");
            let rel = png.strip_prefix(page_dir).unwrap_or(&png).display().to_string();
            Ok(Figure {
                id: format!("{}-fig-{}", exp.name, i + 1),
                title: plot.title,
                svg,
                png: rel,
                spec: spec.clone(),
            })
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
    let cannot = |ext: &str| format!("cannot write {}", stem.with_extension(ext).display());
    atomic::write(stem.with_extension("svg"), &svg).with_context(|| cannot("svg"))?;
    atomic::write(stem.with_extension("pdf"), pdf::from_svg(&svg, &plot.title)?).with_context(|| cannot("pdf"))?;
    // The PNG encoder writes by name: it writes the temporary, and the commit renames it.
    let png = atomic::AtomicFile::create(stem.with_extension("png")).with_context(|| cannot("png"))?;
    draw::draw(BitMapBackend::new(png.temp_path(), size).into_drawing_area(), plot)?;
    png.commit().with_context(|| cannot("png"))?;
    Ok(svg)
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
    println!("wrote {} (figures as SVG, PNG and PDF under figures/)", page.display());
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::figures::{FigureSpec, Kind};
    use super::*;
    use crate::claim::Published;
    use serde_json::Value;
    use std::collections::BTreeMap;

    /// A row of design `label` at ring `ring` with a few metrics, a timeline and a latency CDF.
    fn row(label: &str, ring: u32, latency_ns: f64) -> Row {
        let mut metrics: BTreeMap<String, Value> = BTreeMap::from([
            ("latency.mean".to_string(), latency_ns.into()),
            ("derived.cycles_processing".to_string(), 1800.0.into()),
            ("cycles.phases.sync".to_string(), 150.0.into()),
            ("cycles.total".to_string(), 1950.0.into()),
        ]);
        for i in 0..10 {
            metrics.insert(format!("timeline.{i}.t_us"), (i as f64 * 1000.0).into());
            metrics.insert(format!("timeline.{i}.occupancy"), (0.1 * i as f64).into());
            metrics.insert(format!("latency_cdf.{i}.ns"), (latency_ns * (1.0 + i as f64)).into());
            metrics.insert(format!("latency_cdf.{i}.q"), (i as f64 / 9.0).into());
        }
        let params = BTreeMap::from([("label".to_string(), label.into()), ("ring".to_string(), ring.into())]);
        Row { index: 0, id: String::new(), params, metrics, error: None, build: String::new() }
    }

    fn rows() -> Vec<Row> {
        [64, 1024, 4096]
            .into_iter()
            .flat_map(|r| [row("privRing", r, 25_000.0 * f64::from(r) / 64.0), row("rxBisect", r, 20_000.0)])
            .collect()
    }

    fn spec(text: &str) -> FigureSpec {
        toml::from_str(text).unwrap()
    }

    /// Draw `spec` into a temporary directory; returns the SVG and the PDF's bytes.
    fn render(spec: &FigureSpec, published: &[Published]) -> (String, Vec<u8>) {
        let d = tempfile::tempdir().unwrap();
        let plot = spec.plot(&rows(), published, "rxBisect (001)").unwrap();
        for s in &plot.series {
            for (x, y) in &s.pts {
                assert!(plot.x.range.0 <= *x && *x <= plot.x.range.1, "{}: x {x} outside {:?}", s.name, plot.x.range);
                assert!(plot.y.range.0 <= *y && *y <= plot.y.range.1, "{}: y {y} outside {:?}", s.name, plot.y.range);
            }
        }
        let stem = d.path().join("f");
        let svg = write_figure(&plot, &stem).unwrap();
        assert!(stem.with_extension("png").is_file());
        (svg, std::fs::read(stem.with_extension("pdf")).unwrap())
    }

    #[test]
    fn lines_have_named_unit_bearing_axes_and_the_papers_points() {
        let published: Published =
            toml::from_str("metric = 'latency.mean'\nx = 4096\nseries = 'privRing'\nvalue = 2.5e6\nsection = '§2'")
                .unwrap();
        let (svg, pdf) = render(&spec("x = 'ring'\ny = 'latency.mean'"), &[published]);
        for needle in ["Mean latency", "Ring size", "1 Ki", "4 Ki", "privRing: rxBisect (001) §2"] {
            assert!(svg.contains(needle), "SVG lacks {needle:?}");
        }
        assert!(svg.contains("(ms)") || svg.contains("(µs)"), "latency axis in SI units");
        assert!(!svg.contains("25000"), "raw nanoseconds on a tick");
        assert!(pdf.starts_with(b"%PDF"));
    }

    /// A figure of some rows (`only`) draws the paper's points of its own series and not the others'.
    #[test]
    fn a_figure_of_some_rows_draws_their_published_points_alone() {
        let point = |series: &str| -> Published {
            toml::from_str(&format!(
                "metric = 'latency.mean'\nx = 64\nseries = '{series}'\nvalue = 1e4\nsection = '§2'"
            ))
            .unwrap()
        };
        let published = [point("privRing"), point("rxBisect")];
        let spec = spec("x = 'ring'\ny = 'latency.mean'\nonly = { label = ['rxBisect'] }");
        let plot = spec.plot(&rows(), &published, "rxBisect (001)").unwrap();
        let names: Vec<&str> = plot.series.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["rxBisect", "rxBisect: rxBisect (001) §2"]);
    }

    #[test]
    fn stacked_cdf_and_timeline_kinds_render() {
        let stacked =
            spec("kind = 'stacked'\ny = 'cycles.total'\nstack = ['derived.cycles_processing', 'cycles.phases.sync']");
        assert_eq!(stacked.kind, Kind::Stacked);
        let (svg, pdf) = render(&stacked, &[]);
        assert!(svg.contains("Cycles per packet (processing + sync)") && svg.contains("\nsync\n"), "stacked: {svg}");
        assert!(svg.contains("<rect"), "bars");
        assert!(pdf.starts_with(b"%PDF"));
        let (svg, _) = render(&spec("kind = 'cdf'\nonly = { ring = 64 }"), &[]);
        assert!(
            svg.contains("Latency CDF") && svg.contains("Cumulative share of packets (%)") && svg.contains("(µs)"),
            "cdf"
        );
        let (svg, _) = render(&spec("kind = 'timeline'\nseries = 'label,ring'"), &[]);
        assert!(svg.contains("Ring occupancy (%)") && svg.contains("Time since start (ms)"), "timeline");
        assert!(svg.contains("privRing, ring 1 Ki"), "legend in words");
    }

    /// Curves are joined even where a CDF climbs at one latency; runs in a scatter and points over design
    /// names are never joined; a sweep is joined unless it holds several runs at one x.
    #[test]
    fn each_kind_joins_its_points_as_a_reader_expects() {
        use super::figures::Mark;
        let mut steep = rows();
        for r in &mut steep {
            r.metrics.insert("latency_cdf.1.ns".into(), r.metrics["latency_cdf.0.ns"].clone());
        }
        let mark = |text: &str, rows: &[Row]| spec(text).plot(rows, &[], "p").unwrap().mark;
        assert_eq!(mark("kind = 'cdf'", &steep), Mark::Lines);
        assert_eq!(mark("kind = 'scatter'\nx = 'cycles.total'\ny = 'latency.mean'", &rows()), Mark::Points);
        assert_eq!(mark("x = 'label'\ny = 'latency.mean'", &rows()), Mark::Points);
        assert_eq!(mark("x = 'ring'\ny = 'latency.mean'", &rows()), Mark::Auto);
        let (svg, _) = render(&spec("kind = 'scatter'\nx = 'cycles.total'\ny = 'latency.mean'"), &[]);
        assert!(svg.contains("Cycles per packet") && svg.contains("Mean latency"), "scatter axes: {svg}");
    }

    /// A claim's threshold is drawn where an axis shows its metric and it lies inside the axis, once.
    #[test]
    fn claim_thresholds_are_drawn_on_the_axis_of_their_metric() {
        let spec = spec("kind = 'scatter'\nx = 'cycles.total'\ny = 'latency.mean'");
        let mut plot = spec.plot(&rows(), &[], "p").unwrap();
        plot.rule(&spec, "latency.mean", 30_000.0);
        plot.rule(&spec, "latency.mean", 30_000.0);
        plot.rule(&spec, "latency.mean", 1e15);
        plot.rule(&spec, "derived.memory_gbs", 30.0);
        assert_eq!(plot.rules.len(), 1, "{:?}", plot.rules);
        assert!(!plot.rules[0].vertical && plot.rules[0].at == plot.y.at(30_000.0));
        let stem = tempfile::tempdir().unwrap();
        write_figure(&plot, &stem.path().join("f")).unwrap();
    }

    /// `relative_to` draws each row over its pair's reference row (shRing Fig. 7's "normalized to privRing").
    #[test]
    fn relative_figures_draw_each_row_over_its_reference() {
        let lines = spec("x = 'ring'\ny = 'latency.mean'\nrelative_to = { label = 'privRing' }\npair = ['ring']");
        let plot = lines.plot(&rows(), &[], "p").unwrap();
        assert_eq!(plot.series.len(), 1, "the reference rows are not drawn");
        let ys: Vec<f64> = plot.series[0].pts.iter().map(|p| p.1).collect();
        let want: Vec<f64> = [0.8, 0.05, 0.0125].iter().map(|v| plot.y.at(*v)).collect();
        assert_eq!(ys, want, "rxBisect's 20 us over privRing's 25 us x ring / 64 at rings 64, 1 Ki, 4 Ki");
        assert_eq!(plot.y.title, "Mean latency / privRing");
        let mut unmeasured = rows();
        unmeasured[0].metrics.insert("latency.mean".into(), 0.0.into());
        let plot = lines.plot(&unmeasured, &[], "p").unwrap();
        assert_eq!(plot.series[0].pts.len(), 2, "a row whose reference has no latency is left out");
        let scatter = spec(
            "kind = 'scatter'\nx = 'cycles.total'\ny = 'latency.mean'\nrelative_to = { label = 'privRing' }\npair = ['ring']",
        );
        let (svg, _) = render(&scatter, &[]);
        assert!(svg.contains("Mean latency / privRing") && svg.contains("Cycles per packet / privRing"), "{svg}");
        let e = spec("x = 'ring'\ny = 'latency.mean'\nrelative_to = { label = 'privRing' }").validate().unwrap_err();
        assert!(e.to_string().contains("`pair`"), "{e}");
        let e = spec("x = 'ring'\ny = 'latency.mean'\nrelative_to = { label = 'none' }\npair = ['ring']")
            .plot(&rows(), &[], "p")
            .unwrap_err();
        assert!(e.to_string().contains("no row has a `relative_to` row"), "{e}");
    }

    /// Over app parameter lists, a category names what varies.
    #[test]
    fn app_parameter_categories_name_what_varies() {
        let mut rows = rows();
        for r in &mut rows {
            let reads = r.text("ring");
            r.params.insert("app_params".into(), format!("buffer=40MiB,reads={reads}").into());
        }
        let plot = spec("x = 'app_params'\ny = 'latency.mean'").plot(&rows, &[], "p").unwrap();
        assert_eq!(plot.x.categories, ["reads=64", "reads=1024", "reads=4096"]);
    }

    #[test]
    fn a_figure_missing_what_its_kind_needs_names_the_field() {
        let e = spec("kind = 'stacked'").validate().unwrap_err().to_string();
        assert!(e.contains("`stack`"), "{e}");
        let e = spec("x = 'ring'").validate().unwrap_err().to_string();
        assert!(e.contains("`y`"), "{e}");
    }
}
