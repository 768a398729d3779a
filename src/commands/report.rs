//! `vmscale report RUN... --html FILE`: one self-contained HTML page.

use std::path::Path;

use super::{Error, Result};
use crate::cli::{HistorySelect, ReportArgs};
use crate::store::Store;
use crate::store::manage::ListFilter;

pub fn report(db: &Path, a: &ReportArgs) -> Result<()> {
    if a.history {
        return history(db, a);
    }
    if selects_history(&a.select) {
        return Err(Error::Input(
            "the options that select a history (--workload, --case, --by, ...) need \
             --history"
                .into(),
        ));
    }
    let store = Store::open_existing(db)?;
    let mut runs = Vec::new();
    for spec in &a.runs {
        let id = store.resolve(spec)?;
        runs.push(store.load(id)?);
    }
    if let Some(f) = &a.figure {
        for r in &runs {
            crate::report::series::find_figure(r, Some(f))?;
        }
    }
    let flames = super::probes_out::html(&store, &runs)?;
    let page = crate::report::html::page_with(&runs, a.figure.as_deref(), &flames);
    std::fs::write(&a.html, page)
        .map_err(|e| Error::Input(format!("cannot write {}: {e}", a.html.display())))?;
    super::output::text(&format!(
        "wrote {} ({} runs)\n",
        a.html.display(),
        runs.len()
    ))
}

fn selects_history(s: &HistorySelect) -> bool {
    let HistorySelect {
        filter:
            ListFilter {
                workload,
                label,
                kernel,
                since,
                until,
            },
        case,
        host,
        by,
        alpha,
        min_segment,
        permutations,
        seed,
        min_step,
    } = s;
    workload.is_some()
        || kernel.is_some()
        || case.is_some()
        || host.is_some()
        || label.is_some()
        || since.is_some()
        || until.is_some()
        || by.is_some()
        || alpha.is_some()
        || min_segment.is_some()
        || permutations.is_some()
        || seed.is_some()
        || min_step.is_some()
}

/// `report --html FILE --history ...`: the history page.
fn history(db: &Path, a: &ReportArgs) -> Result<()> {
    if a.runs != ["last"] {
        return Err(Error::Input(format!(
            "--history selects its runs with --workload, --label, --host, --since and \
             --until, not by name: leave out {}",
            a.runs.join(" ")
        )));
    }
    let (request, options) = super::history::request(&a.select, a.figure.clone())?;
    let (series, analysis) = super::history::load(db, &request, &options)?;
    for n in &series.notes {
        super::output::warn(n);
    }
    let report = crate::report::history::build(&series, &analysis, &options)?;
    let title = match report.blocks.first() {
        Some(crate::report::export::Block::Title(t)) => t.clone(),
        _ => String::new(),
    };
    let page =
        crate::report::html::history::page(&title, &report.blocks[1..], &analysis, &series.figure);
    std::fs::write(&a.html, page)
        .map_err(|e| Error::Input(format!("cannot write {}: {e}", a.html.display())))?;
    super::output::text(&format!(
        "wrote {} (history of {} runs, {} step{})\n",
        a.html.display(),
        analysis.entries.len(),
        analysis.change_points.len(),
        if analysis.change_points.len() == 1 {
            ""
        } else {
            "s"
        }
    ))
}
