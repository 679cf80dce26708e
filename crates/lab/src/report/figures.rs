//! Figures: a metric against a parameter (or another metric), one line per series, drawn with plotters
//! to SVG and PNG.
//!
//! ```toml
//! [[figure]]
//! title = "Throughput vs ring size"   # default: "Y vs X"
//! x = "ring"                          # a parameter or metric column
//! y = "throughput.gbps_wire"          # a metric column
//! series = "label,cores"              # one line per value of these columns (default: label)
//! log_x = true                        # log2 x axis
//! ```
//!
//! A figure may instead draw an array every row reports, one line per row: `along = "timeline"` with
//! `x = "t_us"` and `y = "occupancy"` plots each run's ring occupancy over virtual time (the simulator's
//! `timeline`, warm-up included), so a reader sees whether each run settled before its window.
//!
//! Text x values (design names, `imix`) are placed evenly in order of first appearance.

use crate::results::Row;
use anyhow::{Context, Result, anyhow, bail};
use plotters::prelude::*;
use serde::Deserialize;
use std::path::{Path, PathBuf};
use traffic::atomic::{self, AtomicFile};

/// One figure of an experiment.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FigureSpec {
    /// Title.
    pub title: Option<String>,
    /// x column.
    pub x: String,
    /// y column.
    pub y: String,
    /// Columns (comma-separated) whose values name the lines.
    #[serde(default = "default_series")]
    pub series: String,
    /// Log2 x axis.
    #[serde(default)]
    pub log_x: bool,
    /// An array metric (such as `timeline`) to draw along, one line per row, with `x` and `y` naming
    /// fields of its elements.
    pub along: Option<String>,
}

fn default_series() -> String {
    "label".into()
}

impl FigureSpec {
    /// The figures drawn when an experiment names none: throughput and p99 latency against the first
    /// sweep axis, or against the point when there is none.
    pub fn defaults(first_axis: Option<&str>) -> Vec<FigureSpec> {
        let x = first_axis.unwrap_or("label").to_string();
        let series = if first_axis.is_some() { "label" } else { "engine" }.to_string();
        ["throughput.gbps_wire", "latency.p99"]
            .into_iter()
            .map(|y| FigureSpec {
                title: None,
                x: x.clone(),
                y: y.into(),
                series: series.clone(),
                log_x: false,
                along: None,
            })
            .collect()
    }

    /// The title shown.
    pub fn title(&self) -> String {
        let along = self.along.as_ref().map_or(String::new(), |a| format!("{a}."));
        self.title.clone().unwrap_or_else(|| format!("{along}{} vs {along}{}", self.y, self.x))
    }
}

/// The points of a figure: per series, (x position, y), plus the x tick names of text x values.
struct Data {
    series: Vec<(String, Vec<(f64, f64)>)>,
    ticks: Option<Vec<String>>,
}

/// The name of `row`'s line: the values of the spec's series columns.
fn series_name(spec: &FigureSpec, row: &Row) -> String {
    spec.series.split(',').map(|c| row.text(c.trim())).collect::<Vec<_>>().join(" ")
}

fn data(spec: &FigureSpec, rows: &[Row]) -> Result<Data> {
    match &spec.along {
        Some(array) => data_along(spec, array, rows),
        None => data_across(spec, rows),
    }
}

/// One line per row: the elements of its array metric `array`.
fn data_along(spec: &FigureSpec, array: &str, rows: &[Row]) -> Result<Data> {
    let series: Vec<(String, Vec<(f64, f64)>)> = rows
        .iter()
        .map(|r| {
            let point = |i: usize| {
                Some((r.metric(&format!("{array}.{i}.{}", spec.x))?, r.metric(&format!("{array}.{i}.{}", spec.y))?))
            };
            let pts: Vec<(f64, f64)> = (0..).map_while(point).collect();
            (series_name(spec, r), pts)
        })
        .filter(|(_, pts)| !pts.is_empty())
        .collect();
    if series.is_empty() {
        bail!("figure '{}': no row reports `{array}` with fields `{}` and `{}`", spec.title(), spec.x, spec.y);
    }
    Ok(Data { series, ticks: None })
}

/// One point per row, lines by series.
fn data_across(spec: &FigureSpec, rows: &[Row]) -> Result<Data> {
    let xs: Vec<String> = rows.iter().map(|r| r.text(&spec.x)).collect();
    let numeric = xs.iter().all(|x| x.parse::<f64>().is_ok());
    let mut names: Vec<String> = vec![];
    for x in &xs {
        if !names.contains(x) {
            names.push(x.clone());
        }
    }
    let mut series: Vec<(String, Vec<(f64, f64)>)> = vec![];
    for (r, x) in rows.iter().zip(&xs) {
        let Some(y) = r.metric(&spec.y) else { continue };
        let xv = if numeric { x.parse::<f64>()? } else { names.iter().position(|n| n == x).unwrap_or(0) as f64 };
        let xv = if spec.log_x { xv.max(f64::MIN_POSITIVE).log2() } else { xv };
        let name = series_name(spec, r);
        match series.iter_mut().find(|(n, _)| *n == name) {
            Some((_, pts)) => pts.push((xv, y)),
            None => series.push((name, vec![(xv, y)])),
        }
    }
    if series.is_empty() {
        bail!("figure '{}': no row has a numeric `{}`; check the column names in results.csv", spec.title(), spec.y);
    }
    for (_, pts) in &mut series {
        pts.sort_by(|a, b| a.0.total_cmp(&b.0));
    }
    Ok(Data { series, ticks: (!numeric).then_some(names) })
}

fn draw<DB: DrawingBackend>(root: DrawingArea<DB, plotters::coord::Shift>, spec: &FigureSpec, d: &Data) -> Result<()>
where
    DB::ErrorType: 'static,
{
    let err = |e: DrawingAreaErrorKind<DB::ErrorType>| anyhow!("drawing figure '{}': {e:?}", spec.title());
    root.fill(&WHITE).map_err(err)?;
    let all = d.series.iter().flat_map(|(_, p)| p.iter());
    let (mut x0, mut x1, mut y1) = (f64::MAX, f64::MIN, 0f64);
    for (x, y) in all {
        (x0, x1, y1) = (x0.min(*x), x1.max(*x), y1.max(*y));
    }
    let pad = ((x1 - x0) * 0.05).max(0.5);
    let mut chart = ChartBuilder::on(&root)
        .caption(spec.title(), ("sans-serif", 20))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(60)
        .build_cartesian_2d((x0 - pad)..(x1 + pad), 0f64..(y1 * 1.1).max(1e-9))
        .map_err(err)?;
    let ticks = d.ticks.clone();
    let log = spec.log_x;
    let x_fmt = move |x: &f64| match &ticks {
        Some(names) if (x - x.round()).abs() < 1e-6 => names.get(x.round() as usize).cloned().unwrap_or_default(),
        Some(_) => String::new(),
        None if log => format!("{:.0}", 2f64.powf(*x)),
        None => format!("{x}"),
    };
    chart
        .configure_mesh()
        .x_desc(spec.x.as_str())
        .y_desc(spec.y.as_str())
        .x_label_formatter(&x_fmt)
        .x_labels(d.ticks.as_ref().map_or(10, |t| t.len() * 2 + 1))
        .draw()
        .map_err(err)?;
    for (i, (name, pts)) in d.series.iter().enumerate() {
        let color = Palette99::pick(i).to_rgba();
        chart
            .draw_series(LineSeries::new(pts.iter().copied(), color.stroke_width(2)))
            .map_err(err)?
            .label(name.as_str())
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 16, y)], color.stroke_width(2)));
        chart.draw_series(pts.iter().map(|p| Circle::new(*p, 4, color.filled()))).map_err(err)?;
    }
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .position(SeriesLabelPosition::UpperRight)
        .draw()
        .map_err(err)?;
    root.present().map_err(err)
}

/// Register a TrueType font for figure text (plotters needs one for both backends): `$RXLAB_FONT`, else
/// the first of a few common system fonts. Idempotent.
pub fn load_font() -> Result<()> {
    static LOADED: std::sync::OnceLock<std::result::Result<(), String>> = std::sync::OnceLock::new();
    LOADED
        .get_or_init(|| {
            let candidates: Vec<PathBuf> = std::env::var_os("RXLAB_FONT")
                .map(PathBuf::from)
                .into_iter()
                .chain(
                    [
                        "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
                        "/usr/share/fonts/TTF/DejaVuSans.ttf",
                        "/usr/share/fonts/truetype/liberation/LiberationSans-Regular.ttf",
                        "/System/Library/Fonts/Supplemental/Arial.ttf",
                    ]
                    .map(PathBuf::from),
                )
                .collect();
            let path = candidates.iter().find(|p| p.is_file()).ok_or_else(|| {
                "no TrueType font for figure text: install fonts-dejavu-core or set RXLAB_FONT=/path/to/font.ttf"
                    .to_string()
            })?;
            let bytes: &'static [u8] = Box::leak(std::fs::read(path).map_err(|e| e.to_string())?.into_boxed_slice());
            plotters::style::register_font("sans-serif", FontStyle::Normal, bytes)
                .map_err(|_| format!("{} is not a TrueType font; set RXLAB_FONT to one", path.display()))
        })
        .clone()
        .map_err(anyhow::Error::msg)
}

/// Draw `spec` over `rows` as `stem.svg` and `stem.png`; returns the SVG text.
pub fn render(spec: &FigureSpec, rows: &[Row], stem: &Path) -> Result<String> {
    load_font()?;
    let d = data(spec, rows)?;
    let size = (800, 480);
    let mut svg = String::new();
    draw(SVGBackend::with_string(&mut svg, size).into_drawing_area(), spec, &d)?;
    let svg_path = stem.with_extension("svg");
    atomic::write(&svg_path, &svg).with_context(|| format!("cannot write {}", svg_path.display()))?;
    let png_path = stem.with_extension("png");
    let cannot = || format!("cannot write {}", png_path.display());
    // The encoder writes by name: it writes the temporary, and the commit renames it.
    let png = AtomicFile::create(&png_path).with_context(cannot)?;
    draw(BitMapBackend::new(png.temp_path(), size).into_drawing_area(), spec, &d)?;
    png.commit().with_context(cannot)?;
    Ok(svg)
}
