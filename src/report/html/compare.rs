//! Comparison bars for several runs: one group per task count, one bar per
//! run (mean with 95 % CI whiskers), for the figure the runs share.

use plotters::prelude::*;

use super::svg::{self, LABELS, axis, colour, e, span};
use crate::model::Run;
use crate::report::series;

/// (caption, svg), or None when the runs share no figure.
pub fn bars(runs: &[Run], figure: Option<&str>) -> Option<(String, String)> {
    let fig = series::shared_figure(runs, figure)?;
    // Each run's first variant, the one its table leads with.
    let per_run: Vec<series::Series> = runs
        .iter()
        .map(|r| {
            let v = series::variants(r).into_iter().next().unwrap_or_default();
            series::series(r, fig, &v)
        })
        .collect();
    let tasks = series::task_counts(&per_run);
    if tasks.is_empty() {
        return None;
    }
    let top = per_run
        .iter()
        .flat_map(|s| {
            s.points.iter().map(|p| {
                let (m, ci) = p.mean_ci();
                m + ci
            })
        })
        .fold(0.0, f64::max);
    let k = runs.len() as f64;
    let width = 0.8 / k;
    let labels = super::ratio::side_labels(runs);
    let yr = span(0.0, top * 1.15);
    let yt = axis(&yr, LABELS);
    let svg = svg::render(|root| {
        let caption = format!("{} ({})", fig.name, fig.unit);
        let x = -0.5..tasks.len() as f64 - 0.5;
        let mut chart = svg::chart(root, &caption, 70, x, yr.clone())?;
        let names = tasks.clone();
        chart
            .configure_mesh()
            .disable_x_mesh()
            .x_labels(tasks.len() * 2 + 1)
            .x_label_formatter(&|x: &f64| {
                let i = x.round();
                if (x - i).abs() < 1e-6 && i >= 0.0 {
                    names
                        .get(i as usize)
                        .map(|t| t.to_string())
                        .unwrap_or_default()
                } else {
                    String::new()
                }
            })
            .x_desc("tasks")
            .y_desc(fig.unit.as_str())
            .y_labels(LABELS)
            .y_label_formatter(&|v| yt.label(*v))
            .draw()
            .map_err(e)?;
        for (r, s) in per_run.iter().enumerate() {
            let c = colour(r);
            let bars: Vec<(f64, f64, f64)> = s
                .points
                .iter()
                .filter_map(|p| {
                    let g = tasks.iter().position(|&t| t == p.tasks)? as f64;
                    let x0 = g - 0.4 + width * r as f64;
                    let (m, ci) = p.mean_ci();
                    Some((x0, m, ci))
                })
                .collect();
            chart
                .draw_series(bars.iter().map(|&(x0, m, _)| {
                    Rectangle::new([(x0, 0.0), (x0 + width * 0.92, m)], c.filled())
                }))
                .map_err(e)?
                .label(labels[r].as_str())
                .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 12, y + 5)], c.filled()));
            chart
                .draw_series(bars.iter().map(|&(x0, m, ci)| {
                    ErrorBar::new_vertical(x0 + width * 0.46, m - ci, m, m + ci, BLACK, 6)
                }))
                .map_err(e)?;
        }
        svg::legend(&mut chart, SeriesLabelPosition::UpperLeft)?;
        Ok(())
    });
    Some((
        format!(
            "{} by task count for {} runs: mean ± 95 % CI (each run's first variant)",
            fig.name,
            runs.len()
        ),
        svg,
    ))
}
