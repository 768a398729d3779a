//! After a run: a note when its headline intervals miss those of the
//! previous run of the same workload and configuration on this machine,
//! since a within-run interval cannot show what changed between runs.

use std::path::Path;

use crate::cli::Harness;
use crate::model::Run;
use crate::report::export::Format;
use crate::stats::rerun::{Disagreement, disagreements};
use crate::stats::stopping::sig4;
use crate::store::Store;

/// How many earlier runs of the workload are read to find the same
/// configuration.
const LOOK_BACK: usize = 20;

/// The newest earlier complete, measured run of `run`'s workload and
/// configuration on the same host.
fn previous(store: &Store, run: &Run) -> Option<Run> {
    let host = run.meta.machine.get("hostname")?.as_str()?.to_string();
    let mut listed = store.list().ok()?;
    listed.retain(|l| {
        l.id < run.meta.id
            && l.workload == run.meta.workload
            && l.status == "complete"
            && l.origin == "measured"
            && l.host.as_deref() == Some(host.as_str())
    });
    listed.sort_by_key(|l| std::cmp::Reverse(l.id));
    listed
        .iter()
        .take(LOOK_BACK)
        .filter_map(|l| store.load_figures(l.id).ok())
        .find(|r| r.meta.config == run.meta.config)
}

fn line(d: &Disagreement) -> String {
    format!(
        "  {} {}: {} [{}, {}] now, {} [{}, {}] then\n",
        d.case,
        d.figure,
        sig4(d.now.median),
        sig4(d.now.lo),
        sig4(d.now.hi),
        sig4(d.before.median),
        sig4(d.before.lo),
        sig4(d.before.hi),
    )
}

/// Prints the note under a text report (nothing for other formats, `-q`,
/// or when no earlier run matches).
pub fn print(db: &Path, run: &Run, h: &Harness) -> super::Result<()> {
    if h.output.format() != Format::Text || super::output::quiet() {
        return Ok(());
    }
    let Ok(store) = Store::open_existing(db) else {
        return Ok(());
    };
    let Some(before) = previous(&store, run) else {
        return Ok(());
    };
    let found = disagreements(&before, run);
    if found.is_empty() {
        return Ok(());
    }
    let mut out = format!(
        "\nBetween runs: run {} (same workload and options on this machine, \
         started {}) read outside this run's interval:\n",
        before.meta.id, before.meta.started_at
    );
    for d in &found {
        out.push_str(&line(d));
    }
    out.push_str(
        "The machine's state changed between the runs by more than either \
         run's own interval shows (on a virtual machine, for example where \
         the host placed the vCPUs). Use --invocations K to measure that \
         level and widen the interval to it.\n",
    );
    super::output::text(&out)
}
