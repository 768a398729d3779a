//! Scaling curves (figure against tasks: mean with 95 % CI bars, the ideal
//! line from the smallest-N point, the USL fit) and efficiency per task.

use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;

use super::svg::{self, LABELS, axis, colour, e, span};
use crate::error::Result;
use crate::model::{Better, Run};
use crate::report::series::{self, Series};
use crate::report::ticks::Ticks;
use crate::stats::usl;

/// The plots for one figure of a run: one scaling curve with all variants,
/// then efficiency per task for figures where more is better.
pub fn plots(run: &Run, figure: Option<&str>) -> Vec<(String, String)> {
    let Ok(fig) = series::find_figure(run, figure) else {
        return Vec::new();
    };
    let all: Vec<Series> = series::variants(run)
        .iter()
        .map(|v| series::series(run, fig, v))
        .filter(|s| !s.points.is_empty())
        .collect();
    if all.is_empty() {
        return Vec::new();
    }
    let mut out = vec![(
        format!(
            "{} against tasks: mean ± 95 % CI, ideal linear scaling from the smallest N, USL fit",
            fig.name
        ),
        curve(&all),
    )];
    if fig.better == Better::Higher {
        out.push((
            format!(
                "efficiency per task: ({} / N) / ({} / N at the smallest N)",
                fig.name, fig.name
            ),
            efficiency(&all),
        ));
    }
    out
}

/// The x axis is log2 of the task count: 1, 2, 4 ... evenly spaced.
fn lx(n: f64) -> f64 {
    n.max(1.0).log2()
}

/// The x range: 1 .. the largest N, on the log2 axis, with a margin.
fn x_range(max_n: f64) -> std::ops::Range<f64> {
    let hi = lx(max_n).max(1.0);
    -0.15 * hi.max(1.0) / 4.0..hi * 1.04 + 0.05
}

/// The grid and labels of a plot against tasks on a log2 axis.
fn tasks_mesh(
    chart: &mut svg::Chart<RangedCoordf64, RangedCoordf64>,
    max_n: f64,
    y_desc: &str,
    yt: &Ticks,
) -> Result<()> {
    chart
        .configure_mesh()
        .x_desc("tasks (log2 axis)")
        .x_labels(x_labels(max_n))
        .x_label_formatter(&pow2_tick)
        .y_desc(y_desc)
        .y_labels(LABELS)
        .y_label_formatter(&|v| yt.label(*v))
        .draw()
        .map_err(e)
}

/// One tick per power of two (at most 12): labelled with the task count.
fn x_labels(max_n: f64) -> usize {
    let hi = lx(max_n).ceil() as usize;
    (hi + 1).clamp(2, 12)
}

/// Ticks sit at whole log2 values: print 2^x, blank the others.
fn pow2_tick(v: &f64) -> String {
    if (v - v.round()).abs() < 1e-9 && *v >= 0.0 {
        format!("{:.0}", 2f64.powf(v.round()))
    } else {
        String::new()
    }
}

fn curve(all: &[Series]) -> String {
    let higher = all[0].figure.better == Better::Higher;
    let max_n = all
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.tasks))
        .max()
        .unwrap_or(1) as f64;
    let data_top = all
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.mean_ci().0 + p.mean_ci().1))
        .fold(0.0, f64::max);
    // The ideal line may run far above the data; show it up to 1.5x the data.
    let ideal_top = all
        .iter()
        .filter_map(|s| s.points.first())
        .filter(|_| higher)
        .map(|p| p.mean_ci().0 / p.tasks as f64 * max_n)
        .fold(0.0, f64::max);
    let top = data_top.max(ideal_top.min(1.5 * data_top));
    let fits: Vec<Option<usl::Params>> = all
        .iter()
        .map(|s| {
            // Three coefficients need at least three distinct N.
            (higher && s.points.len() >= 3)
                .then(|| usl::fit(&s.pairs()).ok().map(|f| f.params()))
                .flatten()
        })
        .collect();
    let unit = all[0].figure.unit.clone();
    let name = all[0].figure.name.clone();
    let yr = span(0.0, top * 1.05);
    let yt = axis(&yr, LABELS);
    svg::render(|root| {
        let caption = format!("{name} ({unit})");
        let mut chart = svg::chart(root, &caption, 70, x_range(max_n), yr.clone())?;
        tasks_mesh(&mut chart, max_n, &unit, &yt)?;
        for (i, s) in all.iter().enumerate() {
            let c = colour(i);
            let pts: Vec<(f64, f64, f64)> = s
                .points
                .iter()
                .map(|p| {
                    let (m, ci) = p.mean_ci();
                    (p.tasks as f64, m, ci)
                })
                .collect();
            let anno = chart
                .draw_series(LineSeries::new(
                    pts.iter().map(|&(n, m, _)| (lx(n), m)),
                    c.stroke_width(2),
                ))
                .map_err(e)?;
            anno.label(format!("{} (measured)", s.variant));
            svg::legend_marker(anno, i, true);
            chart
                .draw_series(
                    pts.iter()
                        .map(|&(n, m, ci)| ErrorBar::new_vertical(lx(n), m - ci, m, m + ci, c, 6)),
                )
                .map_err(e)?;
            let at: Vec<(f64, f64)> = pts.iter().map(|&(n, m, _)| (lx(n), m)).collect();
            svg::draw_markers(&mut chart, i, &at, 5)?;
            if !higher {
                continue;
            }
            if let Some(&(n0, m0, _)) = pts.first() {
                // Plotters clamps points outside the chart instead of clipping
                // the line, which would bend it; end it where it leaves the chart.
                let end_n = if m0 / n0 * max_n > top {
                    top * n0 / m0
                } else {
                    max_n
                };
                // Straight on linear axes, the ideal curves on the log2 one.
                let ideal = (0..=60).map(|k| {
                    let n = n0 * (end_n / n0).powf(k as f64 / 60.0);
                    (lx(n), m0 / n0 * n)
                });
                chart
                    .draw_series(DashedLineSeries::new(ideal, 6, 4, c.mix(0.6).into()))
                    .map_err(e)?
                    .label(format!("{} ideal", s.variant))
                    .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 16, y)], c.mix(0.6)));
            }
            if let Some(p) = fits[i] {
                // Evenly spaced on the log2 axis, so the curve is smooth
                // where the task counts are dense.
                let steps = 200;
                let line = (0..=steps).map(|k| {
                    let n = max_n.powf(k as f64 / steps as f64);
                    (lx(n), p.x(n))
                });
                chart
                    .draw_series(LineSeries::new(line, c.stroke_width(1)))
                    .map_err(e)?
                    .label(format!(
                        "{} USL σ={:.3} κ={:.2e}",
                        s.variant, p.sigma, p.kappa
                    ))
                    .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], c));
            }
        }
        svg::legend(&mut chart, SeriesLabelPosition::UpperLeft)?;
        Ok(())
    })
}

fn efficiency(all: &[Series]) -> String {
    let max_n = all
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.tasks))
        .max()
        .unwrap_or(1) as f64;
    let lines: Vec<(String, Vec<(f64, f64)>)> = all
        .iter()
        .map(|s| {
            let base = s.points.first().map(|p| p.summary.mean / p.tasks as f64);
            let pts = s
                .points
                .iter()
                .filter_map(|p| {
                    let b = base.filter(|b| *b > 0.0)?;
                    Some((p.tasks as f64, p.summary.mean / p.tasks as f64 / b))
                })
                .collect();
            (s.variant.clone(), pts)
        })
        .collect();
    let top = lines
        .iter()
        .flat_map(|(_, l)| l.iter().map(|p| p.1))
        .fold(1.0, f64::max);
    let yr = span(0.0, top * 1.1);
    let yt = axis(&yr, LABELS);
    svg::render(|root| {
        let mut chart = svg::chart(root, "efficiency per task", 60, x_range(max_n), yr.clone())?;
        tasks_mesh(&mut chart, max_n, "efficiency (1 = linear)", &yt)?;
        chart
            .draw_series(DashedLineSeries::new(
                [(0.0, 1.0), (lx(max_n), 1.0)],
                6,
                4,
                BLACK.mix(0.4).into(),
            ))
            .map_err(e)?;
        for (i, (variant, pts)) in lines.iter().enumerate() {
            let c = colour(i);
            let anno = chart
                .draw_series(LineSeries::new(
                    pts.iter().map(|&(n, v)| (lx(n), v)),
                    c.stroke_width(2),
                ))
                .map_err(e)?;
            anno.label(variant.as_str());
            svg::legend_marker(anno, i, true);
            let at: Vec<(f64, f64)> = pts.iter().map(|&(n, v)| (lx(n), v)).collect();
            svg::draw_markers(&mut chart, i, &at, 5)?;
        }
        svg::legend(&mut chart, SeriesLabelPosition::UpperRight)?;
        Ok(())
    })
}
