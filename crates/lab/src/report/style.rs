//! How series look: the Okabe–Ito colour-blind-safe palette, a distinct marker per series, and the
//! paper's points drawn as larger hollow outlines beside rxlab's filled markers.

use plotters::element::{ComposedElement, EmptyElement, PathElement, Polygon};
use plotters::prelude::*;

/// Okabe & Ito (2008), black and yellow last (yellow reads poorly on white).
const PALETTE: [RGBColor; 8] = [
    RGBColor(0, 114, 178),   // blue
    RGBColor(213, 94, 0),    // vermillion
    RGBColor(0, 158, 115),   // bluish green
    RGBColor(230, 159, 0),   // orange
    RGBColor(204, 121, 167), // reddish purple
    RGBColor(86, 180, 233),  // sky blue
    RGBColor(0, 0, 0),       // black
    RGBColor(240, 228, 66),  // yellow
];

/// Marker outlines, as (sides, rotation in turns): circle, square, triangle, diamond, inverted
/// triangle, pentagon, hexagon, star-less octagon.
const SHAPES: [(usize, f64); 8] =
    [(16, 0.0), (4, 0.125), (3, 0.25), (4, 0.0), (3, 0.75), (5, 0.25), (6, 0.0), (8, 0.0625)];

/// A marker: its filling and its outline, in pixels around a point.
pub type Marker<C, DB> = ComposedElement<C, DB, Polygon<(i32, i32)>, PathElement<(i32, i32)>>;

/// Colour of series number `i`.
pub fn color(i: usize) -> RGBColor {
    PALETTE[i % PALETTE.len()]
}

/// The outline of marker `i` of radius `r` pixels around the origin.
fn outline(i: usize, r: f64) -> Vec<(i32, i32)> {
    let (n, turn) = SHAPES[i % SHAPES.len()];
    let r = if n == 3 { r * 1.25 } else { r };
    (0..n)
        .map(|k| {
            let a = std::f64::consts::TAU * (turn + k as f64 / n as f64);
            ((r * a.cos()).round() as i32, (-r * a.sin()).round() as i32)
        })
        .collect()
}

/// Marker `i` at `at`: filled for rxlab; for the paper a larger outline only, so that where rxlab agrees
/// its filled marker shows inside the paper's ring.
pub fn marker<DB: DrawingBackend, C>(at: C, i: usize, hollow: bool) -> Marker<C, DB> {
    let pts = outline(i, if hollow { 8.0 } else { 5.0 });
    let mut closed = pts.clone();
    closed.push(pts[0]);
    let c = color(i);
    let fill = if hollow { TRANSPARENT.filled() } else { c.filled() };
    EmptyElement::at(at) + Polygon::new(pts, fill) + PathElement::new(closed, c.stroke_width(2))
}
