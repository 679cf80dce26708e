//! Drawing a [`Plot`] with plotters, on any backend (SVG, PNG): one path for every figure kind. The size
//! and fonts are chosen to read in one column of a two-column paper (a 600 px wide figure shrunk to
//! 3.3 in keeps its tick labels near 8 pt); the legend sits below the plot, so it never covers data.

use super::figures::{Mark, Plot};
use super::style::{color, marker};
use anyhow::{Result, anyhow};
use plotters::coord::Shift;
use plotters::prelude::*;

/// Width of a figure, pixels.
pub const WIDTH: u32 = 600;
/// Height of the plot, pixels (the legend adds rows below it).
const PLOT_HEIGHT: u32 = 400;
/// Height of one legend row, pixels.
const LEGEND_ROW: u32 = 22;
/// Font sizes: title, axis titles, tick labels and legend.
const TITLE_PT: u32 = 19;
const AXIS_PT: u32 = 17;
const TICK_PT: u32 = 15;

/// Legend entries per row: two columns when the names are short enough.
fn legend_columns(plot: &Plot) -> usize {
    if plot.series.iter().all(|s| s.name.chars().count() <= 30) { 2 } else { 1 }
}

/// The figure's size in pixels: the plot and its legend rows.
pub fn size(plot: &Plot) -> (u32, u32) {
    let rows = plot.series.len().div_ceil(legend_columns(plot)) as u32;
    let legend = if plot.series.len() > 1 { rows * LEGEND_ROW + 10 } else { 0 };
    (WIDTH, PLOT_HEIGHT + legend)
}

/// The style index (colour and marker) of each series: rxlab's in order, the paper's with the rxlab
/// series they belong beside.
fn style_indices(plot: &Plot) -> Vec<usize> {
    let own: Vec<&str> = plot.series.iter().filter(|s| !s.paper).map(|s| s.key.as_str()).collect();
    let mut extra = own.len();
    plot.series
        .iter()
        .map(|s| match own.iter().position(|k| *k == s.key) {
            Some(i) => i,
            None => {
                extra += 1;
                extra - 1
            }
        })
        .collect()
}

/// Draw `plot` on `root`.
pub fn draw<DB: DrawingBackend>(root: DrawingArea<DB, Shift>, plot: &Plot) -> Result<()>
where
    DB::ErrorType: 'static,
{
    let err = |e: DrawingAreaErrorKind<DB::ErrorType>| anyhow!("drawing figure '{}': {e:?}", plot.title);
    root.fill(&WHITE).map_err(err)?;
    let (upper, legend) = root.split_vertically(PLOT_HEIGHT);
    let (x, y) = (&plot.x, &plot.y);
    let mut chart = ChartBuilder::on(&upper)
        .caption(&plot.title, ("sans-serif", TITLE_PT))
        .margin(10)
        .margin_right(22)
        .x_label_area_size(52)
        .y_label_area_size(70)
        .build_cartesian_2d(x.coord(), y.coord())
        .map_err(err)?;
    let (xf, yf) = (|c: &f64| x.label(*c), |c: &f64| y.label(*c));
    chart
        .configure_mesh()
        .x_desc(x.title.as_str())
        .y_desc(y.title.as_str())
        .x_label_formatter(&xf)
        .y_label_formatter(&yf)
        .axis_desc_style(("sans-serif", AXIS_PT))
        .label_style(("sans-serif", TICK_PT))
        .bold_line_style(RGBColor(220, 220, 220))
        .draw()
        .map_err(err)?;
    let styles = style_indices(plot);
    if plot.mark == Mark::Bars {
        let n = plot.series.first().map_or(0, |s| s.pts.len());
        let mut base = vec![0.0; n];
        for (s, &i) in plot.series.iter().zip(&styles) {
            for (k, (cx, v)) in s.pts.iter().enumerate() {
                let (b, top) = (base[k], base[k] + v);
                let rect = [(cx - 0.3, b), (cx + 0.3, top)];
                chart.draw_series([Rectangle::new(rect, color(i).filled())]).map_err(err)?;
                chart.draw_series([Rectangle::new(rect, BLACK.stroke_width(1))]).map_err(err)?;
                base[k] = top;
            }
        }
    } else {
        for (s, &i) in plot.series.iter().zip(&styles) {
            let line = color(i).stroke_width(2);
            // Several points at one x (one per NF, per seed) are a scatter: no line through them.
            let scatter = match plot.mark {
                Mark::Auto => s.pts.windows(2).any(|w| w[0].0 == w[1].0),
                m => m == Mark::Points,
            };
            match (scatter, s.paper) {
                (true, _) => {}
                (false, true) => {
                    chart.draw_series(DashedLineSeries::new(s.pts.iter().copied(), 8, 5, line)).map_err(err)?;
                }
                (false, false) => {
                    chart.draw_series(LineSeries::new(s.pts.iter().copied(), line)).map_err(err)?;
                }
            }
            // Long lines (timelines, CDFs) carry about eight markers, staggered between series.
            let every = if scatter { 1 } else { s.pts.len().div_ceil(8).max(1) };
            let shown = s.pts.iter().enumerate().filter(|(k, _)| every == 1 || (k + i) % every == 0);
            chart.draw_series(shown.map(|(_, p)| marker(*p, i, s.paper))).map_err(err)?;
        }
    }
    for r in &plot.rules {
        let ends =
            if r.vertical { [(r.at, y.range.0), (r.at, y.range.1)] } else { [(x.range.0, r.at), (x.range.1, r.at)] };
        chart.draw_series(DashedLineSeries::new(ends, 6, 4, BLACK.mix(0.6).stroke_width(1))).map_err(err)?;
    }
    if plot.series.len() > 1 {
        draw_legend(&legend, plot, &styles).map_err(err)?;
    }
    root.present().map_err(err)
}

/// The legend below the plot: per series its line (dashed for the paper), marker or bar swatch, and name.
fn draw_legend<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    plot: &Plot,
    styles: &[usize],
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    let cols = legend_columns(plot);
    let col_w = (WIDTH as i32 - 80) / cols as i32;
    let font = ("sans-serif", TICK_PT).into_font();
    for (k, (s, &i)) in plot.series.iter().zip(styles).enumerate() {
        let x = 70 + (k % cols) as i32 * col_w;
        let y = 6 + (k / cols) as i32 * LEGEND_ROW as i32 + LEGEND_ROW as i32 / 2;
        if plot.mark == Mark::Bars {
            area.draw(&Rectangle::new([(x, y - 7), (x + 28, y + 7)], color(i).filled()))?;
            area.draw(&Rectangle::new([(x, y - 7), (x + 28, y + 7)], BLACK.stroke_width(1)))?;
        } else {
            let line = color(i).stroke_width(2);
            let segments: Vec<(i32, i32)> = match (plot.mark, s.paper) {
                (Mark::Points, _) => vec![],
                (_, true) => vec![(x, 0), (x + 8, 0), (x + 13, 0), (x + 21, 0)],
                (_, false) => vec![(x, 0), (x + 28, 0)],
            };
            for seg in segments.chunks(2) {
                area.draw(&PathElement::new(vec![(seg[0].0, y), (seg[1].0, y)], line))?;
            }
            area.draw(&marker((x + 14, y), i, s.paper))?;
        }
        area.draw(&Text::new(s.name.clone(), (x + 36, y - TICK_PT as i32 / 2 - 1), font.clone()))?;
    }
    Ok(())
}
