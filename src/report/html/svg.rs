//! Plotters' SVG backend rendered into a string, and the page's escaping.
//! Text is written as SVG <text> elements: the browser draws it, so no
//! font is read at run time.

use plotters::chart::SeriesAnno;
use plotters::coord::ranged1d::AsRangedCoord;
use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;

use crate::error::{Error, Result};
use crate::report::ticks::Ticks;

/// The canvas; the page scales it to its full width (viewBox).
pub const WIDTH: u32 = 1000;
pub const HEIGHT: u32 = 440;

/// The series colours, in order (colour-blind safe: Okabe-Ito).
pub const PALETTE: [RGBColor; 7] = [
    RGBColor(0, 114, 178),
    RGBColor(213, 94, 0),
    RGBColor(0, 158, 115),
    RGBColor(204, 121, 167),
    RGBColor(230, 159, 0),
    RGBColor(86, 180, 233),
    RGBColor(0, 0, 0),
];

/// A chart on the page's SVG canvas with axes of coordinates `X` and `Y`.
pub type Chart<'a, 'b, X, Y> = ChartContext<'a, SVGBackend<'b>, Cartesian2d<X, Y>>;

/// A chart on `root` with the margins and caption every plot has; `y_area`
/// is the width of the y axis's labels.
pub fn chart<'a, 'b, X: AsRangedCoord, Y: AsRangedCoord>(
    root: &'a DrawingArea<SVGBackend<'b>, plotters::coord::Shift>,
    caption: &str,
    y_area: u32,
    x: X,
    y: Y,
) -> Result<Chart<'a, 'b, X::CoordDescType, Y::CoordDescType>> {
    ChartBuilder::on(root)
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(y_area)
        .caption(caption, ("sans-serif", 18))
        .build_cartesian_2d(x, y)
        .map_err(e)
}

pub fn colour(i: usize) -> RGBColor {
    PALETTE[i % PALETTE.len()]
}

/// Series `i`'s legend entry: its line (when `line`) with its marker.
pub fn legend_marker<'a, DB>(anno: &mut SeriesAnno<'a, DB>, i: usize, line: bool)
where
    DB: DrawingBackend + 'a,
{
    let c = colour(i);
    let (shape, style) = marker_style(i);
    let len = if line { 20 } else { 0 };
    let path = move |(x, y): (i32, i32)| {
        EmptyElement::at((x, y)) + PathElement::new(vec![(0, 0), (len, 0)], c.stroke_width(2))
    };
    let (s, m) = (4, (len / 2, 0));
    match shape {
        0 => anno.legend(move |p| path(p) + Circle::new(m, s, style)),
        3 => anno.legend(move |p| path(p) + Cross::new(m, s, style)),
        1 | 4 => anno.legend(move |p| path(p) + TriangleMarker::new(m, s + 1, style)),
        _ => anno.legend(move |p| path(p) + Rectangle::new([(m.0 - s, -s), (m.0 + s, s)], style)),
    };
}

/// Series `i`'s marker: a shape as well as a colour (filled circle,
/// triangle, square, then a cross and hollow shapes), so series stay apart
/// in grey print and for colour-blind readers.
fn marker_style(i: usize) -> (usize, ShapeStyle) {
    let c = colour(i);
    let shape = i % 6;
    let style = if shape < 3 {
        c.filled()
    } else {
        c.stroke_width(2)
    };
    (shape, style)
}

/// Draws series `i`'s markers (see [`marker`]) at data points `pts`.
pub fn draw_markers<'a, DB>(
    chart: &mut ChartContext<'a, DB, Cartesian2d<RangedCoordf64, RangedCoordf64>>,
    i: usize,
    pts: &[(f64, f64)],
    size: i32,
) -> Result<()>
where
    DB: DrawingBackend + 'a,
{
    let (shape, style) = marker_style(i);
    let s = size;
    let at = pts.iter().copied();
    match shape {
        0 => chart
            .draw_series(at.map(|p| EmptyElement::at(p) + Circle::new((0, 0), s, style)))
            .map(|_| ()),
        3 => chart
            .draw_series(at.map(|p| EmptyElement::at(p) + Cross::new((0, 0), s, style)))
            .map(|_| ()),
        1 | 4 => chart
            .draw_series(
                at.map(|p| EmptyElement::at(p) + TriangleMarker::new((0, 0), s + 1, style)),
            )
            .map(|_| ()),
        _ => chart
            .draw_series(
                at.map(|p| EmptyElement::at(p) + Rectangle::new([(-s, -s), (s, s)], style)),
            )
            .map(|_| ()),
    }
    .map_err(e)
}

/// Draws with `f` on a WIDTH x HEIGHT SVG canvas and returns the SVG text,
/// or a short note when drawing failed.
pub fn render<F>(f: F) -> String
where
    F: FnOnce(&DrawingArea<SVGBackend, plotters::coord::Shift>) -> Result<()>,
{
    render_sized(WIDTH, HEIGHT, f)
}

/// As [`render`], on a `width` x `height` canvas.
pub fn render_sized<F>(width: u32, height: u32, f: F) -> String
where
    F: FnOnce(&DrawingArea<SVGBackend, plotters::coord::Shift>) -> Result<()>,
{
    let mut out = String::new();
    let result = {
        let root = SVGBackend::with_string(&mut out, (width, height)).into_drawing_area();
        root.fill(&WHITE)
            .map_err(e)
            .and_then(|_| f(&root))
            .and_then(|_| root.present().map_err(e))
    };
    match result {
        Ok(()) => out,
        Err(err) => format!(
            "<p class=\"note\">plot failed: {}</p>",
            escape(&err.to_string())
        ),
    }
}

/// Any plotters error: a drawing that failed.
pub fn e<E: std::fmt::Display>(err: E) -> Error {
    Error::Failed(err.to_string())
}

/// Draws the series legend the same way on every chart.
pub fn legend<'a, DB, CT>(
    chart: &mut ChartContext<'a, DB, CT>,
    position: SeriesLabelPosition,
) -> Result<()>
where
    DB: DrawingBackend + 'a,
    CT: plotters::coord::CoordTranslate,
{
    chart
        .configure_series_labels()
        .position(position)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .draw()
        .map_err(e)
}

/// HTML text escaping.
pub fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// Axis range with a margin, never empty.
pub fn span(lo: f64, hi: f64) -> std::ops::Range<f64> {
    let (lo, hi) = if lo.is_finite() && hi.is_finite() {
        (lo, hi)
    } else {
        (0.0, 1.0)
    };
    let pad = ((hi - lo).abs() * 0.05).max(hi.abs() * 1e-3).max(1e-12);
    (lo - pad).min(0.0)..hi + pad
}

/// Ticks plotters' mesh labels on an axis at most (its default count).
pub const LABELS: usize = 11;

/// The labels of the ticks plotters' mesh puts on a value axis over
/// `range`, at most `n` of them (the mesh's own key points).
pub fn axis(range: &std::ops::Range<f64>, n: usize) -> Ticks {
    use plotters::coord::ranged1d::Ranged;
    let points = RangedCoordf64::from(range.clone()).key_points(n);
    Ticks::of(&points)
}
