//! `report --html --history`: the series of one figure across runs (each
//! run's median with its 95 % interval), the centre of each segment
//! between steps, and the steps themselves, above the tables of
//! `vmscale history`.

use plotters::prelude::*;

use super::svg::{self, LABELS, axis, colour, e, escape};
use crate::history::Analysis;
use crate::model::Figure;
use crate::report::export::Block;

/// The whole page: `title` over the plot, then `blocks` (the command's
/// tables).
pub fn page(title: &str, blocks: &[Block], a: &Analysis, figure: &Figure) -> String {
    let mut out = format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <title>vmscale history: {}</title>\n<style>{}</style>\n</head>\n<body>\n\
         <h1>vmscale history</h1>\n<p class=\"meta\">{} · vmscale {}</p>\n",
        escape(title),
        super::STYLE,
        escape(title),
        env!("CARGO_PKG_VERSION")
    );
    out.push_str(&format!(
        "<figure>\n{}\n<figcaption>{}</figcaption>\n</figure>\n",
        plot(a, figure),
        escape(&format!(
            "{} of each run in series order: median with its 95 % interval (dots and bars), \
             the centre of each segment (lines), the steps (dashed)",
            figure.name
        ))
    ));
    out.push_str(&super::blocks::render(blocks));
    out.push_str("</body>\n</html>\n");
    out
}

fn plot(a: &Analysis, figure: &Figure) -> String {
    let lo = a
        .entries
        .iter()
        .map(|e| e.ci.map_or(e.median, |c| c[0]))
        .fold(f64::INFINITY, f64::min);
    let hi = a
        .entries
        .iter()
        .map(|e| e.ci.map_or(e.median, |c| c[1]))
        .fold(f64::NEG_INFINITY, f64::max);
    let pad = ((hi - lo).abs() * 0.08).max(hi.abs() * 1e-3).max(1e-12);
    let n = a.entries.len() as f64;
    let caption = format!("{} ({})", figure.name, figure.unit);
    let (xr, yr) = (0.0..n + 1.0, (lo - pad)..(hi + pad));
    let (xt, yt) = (axis(&xr, LABELS), axis(&yr, LABELS));
    svg::render(|root| {
        let mut chart = svg::chart(root, &caption, 70, xr.clone(), yr.clone())?;
        chart
            .configure_mesh()
            .x_desc("run, in series order")
            .x_labels(LABELS)
            .x_label_formatter(&|v| xt.label(*v))
            .y_desc(figure.unit.as_str())
            .y_labels(LABELS)
            .y_label_formatter(&|v| yt.label(*v))
            .draw()
            .map_err(e)?;
        let points = colour(0);
        // Bars only where they can be told apart.
        if a.entries.len() <= 500 {
            chart
                .draw_series(a.entries.iter().enumerate().filter_map(|(i, e)| {
                    let [l, h] = e.ci?;
                    Some(ErrorBar::new_vertical(
                        i as f64 + 1.0,
                        l,
                        e.median,
                        h,
                        points,
                        4,
                    ))
                }))
                .map_err(e)?;
        }
        chart
            .draw_series(
                a.entries
                    .iter()
                    .enumerate()
                    .map(|(i, e)| Circle::new((i as f64 + 1.0, e.median), 2, points.filled())),
            )
            .map_err(e)?;
        let segments = colour(1);
        let mut start = 0;
        for i in 1..=a.entries.len() {
            if i == a.entries.len() || a.entries[i].segment != a.entries[start].segment {
                let c = a.entries[start].segment_centre;
                chart
                    .draw_series(LineSeries::new(
                        [(start as f64 + 0.5, c), (i as f64 + 0.5, c)],
                        segments.stroke_width(2),
                    ))
                    .map_err(e)?;
                start = i;
            }
        }
        for c in &a.change_points {
            let x = c.index as f64 + 0.5;
            chart
                .draw_series(DashedLineSeries::new(
                    [(x, lo - pad), (x, hi + pad)],
                    6,
                    4,
                    BLACK.stroke_width(1),
                ))
                .map_err(e)?;
        }
        Ok(())
    })
}
