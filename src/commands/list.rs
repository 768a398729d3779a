//! `vmscale list`: the stored runs, one line each, in any output format
//! (laid out by report/list.rs).

use super::{Error, Result};
use crate::cli::RunFilter;
use crate::report::export;
use crate::store::Store;
use crate::store::manage::ListFilter;
use std::path::Path;

pub fn list(db: &Path, a: &crate::cli::ListArgs) -> Result<()> {
    let format = a.output.format();
    let filter = filter(&a.filter)?;
    let store = Store::open_existing(db)?;
    let (runs, damaged) = store.list_filtered(&filter)?;
    for d in &damaged {
        eprintln!("vmscale: {d}; listing the others");
    }
    let trends = if a.trend {
        Some(crate::history::trend::trends(&store, &runs)?)
    } else {
        None
    };
    let report = crate::report::list::report(&runs, trends.as_ref())?;
    let out = export::exporter(format).export(&report)?;
    super::output::emit(format, &out)
}

/// The store's filter for `--workload`, `--label`, `--kernel`, `--since`
/// and `--until`, the dates checked.
pub fn filter(f: &RunFilter) -> Result<ListFilter> {
    let date = |flag: &str, d: &Option<String>| d.as_deref().map(|d| date(flag, d)).transpose();
    Ok(ListFilter {
        workload: f.workload.clone(),
        label: f.label.clone(),
        kernel: f.kernel.clone(),
        since: date("--since", &f.since)?,
        until: date("--until", &f.until)?,
    })
}

/// A `YYYY-MM-DD` date (optionally with a `THH:MM[:SS]` time), checked
/// so that a typo is not silently compared as text.
pub fn date(flag: &str, text: &str) -> Result<String> {
    let b = text.as_bytes();
    let digits =
        |r: std::ops::Range<usize>| r.clone().all(|i| b.get(i).is_some_and(u8::is_ascii_digit));
    let ok = b.len() >= 10
        && digits(0..4)
        && b[4] == b'-'
        && digits(5..7)
        && b[7] == b'-'
        && digits(8..10)
        && (b.len() == 10 || b[10] == b'T');
    if !ok {
        return Err(Error::Input(format!(
            "{flag} '{text}' is not a date: use YYYY-MM-DD (UTC), like 2026-11-23"
        )));
    }
    Ok(text.to_string())
}
