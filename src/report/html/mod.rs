//! `report --html`: one self-contained page (inline SVG, inline CSS, no
//! JavaScript, nothing fetched). One module per plot kind; `plots_for` is
//! where a workload's own plots are chosen.

pub mod colour;
pub mod compare;
pub mod heatmap;
pub mod latency;
pub mod scaling;
pub mod svg;
pub mod tables;

use crate::model::Run;
use svg::escape;

const STYLE: &str = "
body { font-family: sans-serif; margin: 2em auto; max-width: 1100px; color: #222; }
h1 { font-size: 1.5em; } h2 { font-size: 1.25em; border-bottom: 1px solid #ccc; }
h3 { font-size: 1.05em; } figure { margin: 1em 0; } figcaption { font-size: 0.9em; color: #555; }
pre { background: #f6f6f6; padding: 0.6em; overflow-x: auto; font-size: 0.85em; }
table.num { border-collapse: collapse; font-size: 0.85em; }
table.num td, table.num th { border: 1px solid #ddd; padding: 2px 6px; }
table.num td { text-align: right; font-family: monospace; } table.num th { text-align: left; }
.note { color: #777; font-style: italic; } .meta { font-size: 0.85em; color: #444; }
";

/// A plot: its caption and its inline SVG.
pub type Plot = (String, String);

/// The extension point: the plots a run's workload draws. Workloads whose
/// figures are per task count get the generic scaling plots; others add an
/// arm here.
pub fn plots_for(run: &Run, figure: Option<&str>) -> Vec<Plot> {
    match run.meta.workload.as_str() {
        "c2c" => heatmap::plots(run),
        "latency" => latency::plots(run),
        "colour" => colour::plots(run),
        _ => scaling::plots(run, figure),
    }
}

fn figure_html((caption, svg): &Plot) -> String {
    format!(
        "<figure>\n{svg}\n<figcaption>{}</figcaption>\n</figure>\n",
        escape(caption)
    )
}

fn run_title(run: &Run) -> String {
    let m = &run.meta;
    format!(
        "run {}{}: {}",
        m.id,
        m.label
            .as_deref()
            .map(|l| format!(" [{l}]"))
            .unwrap_or_default(),
        m.workload
    )
}

fn run_section(run: &Run, figure: Option<&str>) -> String {
    let m = &run.meta;
    let mut out = format!("<section>\n<h2>{}</h2>\n", escape(&run_title(run)));
    out.push_str(&format!(
        "<p class=\"meta\">{} · started {} · origin: {}<br><code>{}</code></p>\n",
        escape(m.status.as_str()),
        escape(&m.started_at),
        escape(&m.origin),
        escape(&m.command_line)
    ));
    out.push_str(&format!(
        "<h3>Table</h3>\n<pre>{}</pre>\n",
        escape(&crate::report::text(run))
    ));
    let plots = plots_for(run, figure);
    if plots.is_empty() {
        out.push_str("<p class=\"note\">nothing to plot for this run</p>\n");
    }
    for p in &plots {
        out.push_str(&figure_html(p));
    }
    out.push_str("<h3>/proc/vmstat deltas</h3>\n");
    out.push_str(&tables::vmstat(run));
    out.push_str("<h3>Machine</h3>\n");
    out.push_str(&tables::machine(run));
    out.push_str("</section>\n");
    out
}

/// The whole page for `runs`; `figure` overrides each run's headline figure.
pub fn page(runs: &[Run], figure: Option<&str>) -> String {
    let title = runs.iter().map(run_title).collect::<Vec<_>>().join(", ");
    let mut out = format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <title>vmscale report: {}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n\
         <h1>vmscale report</h1>\n<p class=\"meta\">{} · vmscale {}</p>\n",
        escape(&title),
        escape(&title),
        env!("CARGO_PKG_VERSION")
    );
    if runs.len() > 1 {
        out.push_str("<section>\n<h2>Comparison</h2>\n");
        match compare::bars(runs, figure) {
            Some(p) => out.push_str(&figure_html(&p)),
            None => out.push_str("<p class=\"note\">these runs share no figure to compare</p>\n"),
        }
        out.push_str("</section>\n");
    }
    for r in runs {
        out.push_str(&run_section(r, figure));
    }
    out.push_str("</body>\n</html>\n");
    out
}
