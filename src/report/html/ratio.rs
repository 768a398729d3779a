//! The comparison's two reviewer aids: legend names that say what differs
//! between the runs (their configuration, knobs, kernel), and the ratio
//! panel — per case, each run's ratio to the baseline with its 95 %
//! interval (the method compare used: paired rounds, Welch on logs,
//! bootstrap or normal), significant ones (Benjamini-Hochberg) filled and
//! starred.

use plotters::prelude::*;

use super::svg::{self, colour, e};
use crate::model::{Better, Run};
use crate::stats::comparison::{self, Options, RatioOf};
use crate::stats::run_diff;
use crate::stats::side::Side;

/// Differences worth a legend: what the user chose (configuration, knobs,
/// workload, kernel), before the rest of the machine snapshot.
fn rank(what: &str) -> u8 {
    if what.starts_with("config.") || what.starts_with("knob") || what == "workload" {
        0
    } else if what.starts_with("kernel") || what.starts_with("thp_") || what == "vmscale version" {
        1
    } else {
        2
    }
}

/// One name per run for legends: `run 2 [label]: thp=always`, naming up
/// to two of the settings in which the runs differ.
pub fn side_labels(runs: &[Run]) -> Vec<String> {
    let sides: Vec<Side> = runs.iter().map(Side::run).collect();
    let mut diffs = run_diff::differences(&sides);
    diffs.sort_by_key(|d| rank(&d.what));
    let shown: Vec<_> = diffs.iter().filter(|d| rank(&d.what) < 2).take(2).collect();
    runs.iter()
        .enumerate()
        .map(|(i, r)| {
            let mut name = match &r.meta.label {
                Some(l) => format!("run {} [{l}]", r.meta.id),
                None => format!("run {}", r.meta.id),
            };
            let what: Vec<String> = shown
                .iter()
                .map(|d| {
                    let key = d.what.strip_prefix("config.").unwrap_or(&d.what);
                    format!(
                        "{key}={}",
                        d.values.get(i).map(String::as_str).unwrap_or("?")
                    )
                })
                .collect();
            if !what.is_empty() {
                name.push_str(": ");
                name.push_str(&what.join(", "));
            }
            name
        })
        .collect()
}

/// Everything that differs, for the text under the plots.
pub fn differences_html(runs: &[Run]) -> String {
    let sides: Vec<Side> = runs.iter().map(Side::run).collect();
    let diffs = run_diff::differences(&sides);
    if diffs.is_empty() {
        return "<p class=\"note\">the runs differ in nothing recorded but their samples</p>\n"
            .into();
    }
    let mut out = String::from("<table class=\"num\"><tr><th>differs in</th>");
    for r in runs {
        out.push_str(&format!("<th>run {}</th>", r.meta.id));
    }
    out.push_str("</tr>\n");
    for d in diffs {
        out.push_str(&format!("<tr><th>{}</th>", svg::escape(&d.what)));
        for v in &d.values {
            out.push_str(&format!("<td>{}</td>", svg::escape(v)));
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</table>\n");
    out
}

/// One point of the panel: a case of one non-baseline run.
struct Entry {
    case: String,
    side: usize,
    ratio: f64,
    ci: (f64, f64),
    significant: bool,
    method: String,
}

/// The interval methods the panel's entries used, in words, each once.
fn methods_said(entries: &[Entry]) -> String {
    let mut said: Vec<&str> = Vec::new();
    for x in entries {
        let words = match x.method.as_str() {
            "paired" => "paired by round: geometric mean of the rounds' ratios, t interval",
            "welch-log" => "ratio of means, Welch t on logs",
            "bootstrap" => "ratio of means, bootstrap",
            "normal" => "ratio of means, normal approximation",
            _ => "ratio of means",
        };
        if !said.contains(&words) {
            said.push(words);
        }
    }
    said.join("; ")
}

/// (caption, svg) of the ratio panel of `figure` (default: the first
/// run's headline), or None when the runs share no case of it.
pub fn panel(runs: &[Run], figure: Option<&str>) -> Option<(String, String)> {
    let fig = crate::report::series::shared_figure(runs, figure)?.clone();
    let sides: Vec<Side> = runs.iter().map(Side::run).collect();
    let opts = Options {
        alpha: 0.05,
        seed: 1,
        figures: vec![fig.name.clone()],
        ratio_of: RatioOf::B,
    };
    let c = comparison::compare(&sides, "runs", &opts);
    let mut entries = Vec::new();
    for g in c.groups.iter().filter(|g| g.figure.name == fig.name) {
        for row in &g.rows {
            for (side, cell) in row.cells.iter().enumerate().skip(1) {
                let Some(ratio) = cell.ratio.filter(|r| r.is_finite()) else {
                    continue;
                };
                entries.push(Entry {
                    case: format!("{} N={}", g.case, row.tasks),
                    side,
                    ratio,
                    ci: cell.ratio_ci.unwrap_or((ratio, ratio)),
                    significant: cell.significant,
                    method: cell.ratio_ci_method.clone(),
                });
            }
        }
    }
    if entries.is_empty() {
        return None;
    }
    let labels = side_labels(runs);
    let lo = entries
        .iter()
        .map(|x| x.ci.0.min(x.ratio))
        .fold(1.0, f64::min);
    let hi = entries
        .iter()
        .map(|x| x.ci.1.max(x.ratio))
        .fold(1.0, f64::max);
    let pad = ((hi - lo) * 0.08).max(0.02);
    let n = entries.len();
    let height = (120 + 26 * n as u32).clamp(220, 900);
    let names: Vec<String> = entries.iter().map(|x| x.case.clone()).collect();
    let xr = (lo - pad)..(hi + pad);
    let xt = svg::axis(&xr, svg::LABELS);
    let svg = svg::render_sized(svg::WIDTH, height, |root| {
        let caption = format!("{}: ratio to run {}", fig.name, runs[0].meta.id);
        let mut chart = svg::chart(root, &caption, 170, xr.clone(), -0.5..n as f64 - 0.5)?;
        chart
            .configure_mesh()
            .disable_y_mesh()
            .x_labels(svg::LABELS)
            .x_label_formatter(&|v| xt.label(*v))
            .y_labels(n * 2 + 1)
            .y_label_formatter(&|y: &f64| {
                let i = y.round();
                if (y - i).abs() < 1e-6 && i >= 0.0 {
                    // Top to bottom in case order.
                    names.get(n - 1 - i as usize).cloned().unwrap_or_default()
                } else {
                    String::new()
                }
            })
            .x_desc(match fig.better {
                Better::Higher => "ratio of means (> 1 is better)",
                Better::Lower => "ratio of means (< 1 is better)",
            })
            .draw()
            .map_err(e)?;
        chart
            .draw_series(DashedLineSeries::new(
                [(1.0, -0.5), (1.0, n as f64 - 0.5)],
                6,
                4,
                BLACK.mix(0.5).into(),
            ))
            .map_err(e)?;
        for (side, label) in labels.iter().enumerate().skip(1) {
            let mine: Vec<(usize, &Entry)> = entries
                .iter()
                .enumerate()
                .filter(|(_, x)| x.side == side)
                .collect();
            let y = |i: usize| (n - 1 - i) as f64;
            let c = colour(side);
            let anno = chart
                .draw_series(mine.iter().map(|&(i, x)| {
                    ErrorBar::new_horizontal(y(i), x.ci.0, x.ratio, x.ci.1, c.stroke_width(2), 8)
                }))
                .map_err(e)?;
            anno.label(label.clone());
            svg::legend_marker(anno, side, true);
            let at: Vec<(f64, f64)> = mine.iter().map(|&(i, x)| (x.ratio, y(i))).collect();
            svg::draw_markers(&mut chart, side, &at, 5)?;
            chart
                .draw_series(mine.iter().filter(|(_, x)| x.significant).map(|&(i, x)| {
                    Text::new("*", (x.ci.1, y(i) + 0.3), ("sans-serif", 20).into_font())
                }))
                .map_err(e)?;
        }
        svg::legend(&mut chart, SeriesLabelPosition::LowerRight)?;
        Ok(())
    });
    let caption = format!(
        "{} ratio to the baseline run {} per case with its 95 % interval ({}); \
         * significant at alpha 0.05 after Benjamini-Hochberg ({} tests)",
        fig.name,
        runs[0].meta.id,
        methods_said(&entries),
        c.tests
    );
    Some((caption, svg))
}
