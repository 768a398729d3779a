//! `report --html`: one self-contained page (inline SVG, inline CSS, no
//! JavaScript, nothing fetched). One module per plot kind; `plots_for`
//! draws the kind a workload's `Spec::plots` names.

pub mod blocks;
pub mod colour;
pub mod compare;
pub mod flame;
pub mod heatmap;
pub mod history;
pub mod latency;
pub mod ratio;
pub mod scaling;
pub mod svg;
pub mod tables;

use crate::model::Run;
use crate::report::export::Block;
use crate::workload::Plots;
use svg::escape;

pub(super) const STYLE: &str = "
body { font-family: sans-serif; margin: 1em 2em; color: #222; }
figure svg { width: 100%; height: auto; display: block; }
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

/// The plots a run's workload draws, as its `Spec::plots` says. Workloads
/// whose figures are per task count (and runs of unregistered workloads)
/// get the generic scaling plots; a new kind of plot adds an arm here.
pub fn plots_for(run: &Run, figure: Option<&str>) -> Vec<Plot> {
    let plots = crate::workload::find(&run.meta.workload).map(|s| s.plots);
    match plots {
        Some(Plots::Heatmap) => heatmap::plots(run),
        Some(Plots::Latency) => latency::plots(run),
        Some(Plots::Colour) => colour::plots(run),
        Some(Plots::Scaling) | None => scaling::plots(run, figure),
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

/// When the run was measured: its start for runs vmscale took; for
/// imported runs the date the source gave, else that it is unknown (the
/// stored start is only the import's time).
fn when(run: &Run) -> String {
    let m = &run.meta;
    if m.origin == "measured" {
        return format!("started {}", m.started_at);
    }
    let given = ["date", "measured_at", "started_at"]
        .iter()
        .find_map(|k| m.config.get(*k).and_then(|v| v.as_str()))
        .filter(|d| !d.is_empty());
    match given {
        Some(d) => format!("measured {d} (imported {})", m.started_at),
        None => format!("measured at an unknown date (imported {})", m.started_at),
    }
}

fn run_section(run: &Run, figure: Option<&str>) -> String {
    let m = &run.meta;
    let mut out = format!("<section>\n<h2>{}</h2>\n", escape(&run_title(run)));
    out.push_str(&format!(
        "<p class=\"meta\">{} · {} · origin: {}<br><code>{}</code></p>\n",
        escape(m.status.as_str()),
        escape(&when(run)),
        escape(&m.origin),
        escape(&m.command_line)
    ));
    // The report `show` prints, its identity line aside (the heading above).
    let blocks = crate::report::blocks(run, false);
    let skip = usize::from(matches!(blocks.first(), Some(Block::Title(_))));
    out.push_str("<h3>Tables</h3>\n");
    out.push_str(&self::blocks::render(&blocks[skip..]));
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
    page_with(runs, figure, "")
}

/// As `page`, with `extra` (whole `<section>`s, e.g. flame graphs) last.
pub fn page_with(runs: &[Run], figure: Option<&str>, extra: &str) -> String {
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
        if let Some(p) = ratio::panel(runs, figure) {
            out.push_str(&figure_html(&p));
        }
        out.push_str("<h3>These runs differ in</h3>\n");
        out.push_str(&ratio::differences_html(runs));
        out.push_str("</section>\n");
    }
    for r in runs {
        out.push_str(&run_section(r, figure));
    }
    out.push_str(extra);
    out.push_str("</body>\n</html>\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::RunMeta;

    fn run(origin: &str, config: serde_json::Value) -> Run {
        Run {
            meta: RunMeta {
                origin: origin.into(),
                started_at: "2026-11-23T09:00:00Z".into(),
                ..RunMeta::bare(1, "pft", config)
            },
            cases: Vec::new(),
        }
    }

    #[test]
    fn an_imported_run_never_passes_its_import_time_as_its_start() {
        let measured = when(&run("measured", serde_json::json!({})));
        assert_eq!(measured, "started 2026-11-23T09:00:00Z");
        let unknown = when(&run("imported pft table", serde_json::json!({})));
        assert!(
            unknown.starts_with("measured at an unknown date"),
            "{unknown}"
        );
        assert!(
            unknown.contains("imported 2026-11-23T09:00:00Z"),
            "{unknown}"
        );
        let dated = when(&run("imported", serde_json::json!({"date": "2005-03-01"})));
        assert!(dated.starts_with("measured 2005-03-01"), "{dated}");
    }
}
