//! What `--profile` and `--lock-stats` stored, as `show`, `run`, `compare` and
//! `report --html` print it: loaded from the store, laid out by
//! report::probes.

use super::Result;
use crate::model::Run;
use crate::report::export::{self, Report};
use crate::report::probes;
use crate::store::Store;

/// The profile and lock tables of a run ("" when it recorded neither).
pub fn text(store: &Store, run_id: i64) -> Result<String> {
    let profiles = store.load_profiles(run_id)?;
    let locks = store.load_locks(run_id)?;
    Ok(export::text::blocks(&probes::blocks(&profiles, &locks)))
}

/// Adds what `--profile` and `--lock-stats` stored to a run's report, for
/// the formats that do not print the text: Markdown gets the tables as
/// blocks, CSV one record per kernel function and lock figure, JSON
/// `profiles` (top kernel functions and the folded stacks) and `locks`.
/// Nothing is added for a run that recorded neither.
pub fn attach(store: &Store, run_id: i64, report: &mut Report) -> Result<()> {
    let profiles = store.load_profiles(run_id)?;
    let locks = store.load_locks(run_id)?;
    probes::add(run_id, &profiles, &locks, report);
    Ok(())
}

/// Prints the tables of a run after its text report.
pub fn print(db: &std::path::Path, run_id: i64) -> Result<()> {
    let store = Store::open_existing(db)?;
    emit(&text(&store, run_id)?)
}

/// Text through the command output (stdout or `-o`), if any.
pub fn emit(out: &str) -> Result<()> {
    if out.is_empty() {
        return Ok(());
    }
    super::output::text(out)
}

/// The profile shifts between stored runs (or the variants of one run).
pub fn compare_text(store: &Store, ids: &[i64]) -> Result<String> {
    let mut runs = Vec::new();
    for id in ids {
        runs.push((*id, store.load_profiles(*id)?));
    }
    Ok(probes::diff_text(&runs))
}

/// HTML sections: a flame graph per profiled case, and a differential one
/// per compared pair when several runs are on the page.
pub fn html(store: &Store, runs: &[Run]) -> Result<String> {
    let mut loaded = Vec::new();
    for r in runs {
        loaded.push((r.meta.id, store.load_profiles(r.meta.id)?));
    }
    Ok(probes::html(&loaded))
}
