//! Plotters' SVG backend rendered into a string, and the page's escaping.
//! Text is written as SVG <text> elements: the browser draws it, so no
//! font is read at run time.

use plotters::prelude::*;

pub const WIDTH: u32 = 720;
pub const HEIGHT: u32 = 420;

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

pub fn colour(i: usize) -> RGBColor {
    PALETTE[i % PALETTE.len()]
}

/// Draws with `f` on a WIDTH x HEIGHT SVG canvas and returns the SVG text,
/// or a short note when drawing failed.
pub fn render<F>(f: F) -> String
where
    F: FnOnce(&DrawingArea<SVGBackend, plotters::coord::Shift>) -> Result<(), String>,
{
    let mut out = String::new();
    let result = {
        let root = SVGBackend::with_string(&mut out, (WIDTH, HEIGHT)).into_drawing_area();
        root.fill(&WHITE)
            .map_err(|e| e.to_string())
            .and_then(|_| f(&root))
            .and_then(|_| root.present().map_err(|e| e.to_string()))
    };
    match result {
        Ok(()) => out,
        Err(e) => format!("<p class=\"note\">plot failed: {}</p>", escape(&e)),
    }
}

/// Maps any plotters error to a message.
pub fn e<E: std::fmt::Display>(err: E) -> String {
    err.to_string()
}

/// Draws the series legend the same way on every chart.
pub fn legend<'a, DB, CT>(
    chart: &mut ChartContext<'a, DB, CT>,
    position: SeriesLabelPosition,
) -> Result<(), String>
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

/// Compact tick labels: 1.2M, 350k, 0.25.
pub fn tick(v: &f64) -> String {
    let a = v.abs();
    if a >= 1e9 {
        format!("{:.1}G", v / 1e9)
    } else if a >= 1e6 {
        format!("{:.1}M", v / 1e6)
    } else if a >= 1e4 {
        format!("{:.0}k", v / 1e3)
    } else if a >= 100.0 || *v == v.round() {
        format!("{v:.0}")
    } else {
        format!("{v:.2}")
    }
}
