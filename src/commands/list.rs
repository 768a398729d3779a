//! `vmscale list`: the stored runs, one line each, in any output format
//! (laid out by report/list.rs).

use super::{Error, Result};
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

/// The filter `f` with its dates (`--since`, `--until`) checked.
pub fn filter(f: &ListFilter) -> Result<ListFilter> {
    for (flag, d) in [("--since", &f.since), ("--until", &f.until)] {
        if let Some(d) = d {
            date(flag, d)?;
        }
    }
    Ok(f.clone())
}

/// A `YYYY-MM-DD` date (optionally with a `THH:MM[:SS]` time), checked
/// so that a typo is not silently compared as text.
fn date(flag: &str, text: &str) -> Result<()> {
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
    Ok(())
}
