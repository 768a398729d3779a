//! `vmscale list`: the stored runs, one line each, in any output format
//! (laid out by report/list.rs).

use super::{Error, Result};
use crate::report::export;
use crate::store::Store;
use crate::store::manage::ListFilter;
use std::path::Path;

pub fn list(db: &Path, a: &crate::cli::ListArgs) -> Result<()> {
    let format = a.output.format();
    check_dates(&a.filter)?;
    let store = Store::open_existing(db)?;
    let (runs, damaged) = store.list_filtered(&a.filter)?;
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

/// Checks the filter's dates (`--since`, `--until`).
pub fn check_dates(f: &ListFilter) -> Result<()> {
    for (flag, d) in [("--since", &f.since), ("--until", &f.until)] {
        if let Some(d) = d {
            date(flag, d)?;
        }
    }
    Ok(())
}

/// A `YYYY-MM-DD` date (optionally with a `THH:MM[:SS]` time) that is on
/// the calendar, checked so that a typo is not silently compared as text
/// with the stored times.
fn date(flag: &str, text: &str) -> Result<()> {
    let ok = match text.as_bytes().get(10) {
        None => text.len() == 10 && text.parse::<jiff::civil::Date>().is_ok(),
        Some(b'T') => text.parse::<jiff::civil::DateTime>().is_ok(),
        Some(_) => false,
    };
    if !ok {
        return Err(Error::Input(format!(
            "{flag} '{text}' is not a date: use YYYY-MM-DD (UTC), like 2026-11-23"
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::date;
    use crate::error::Error;

    #[test]
    fn dates_are_checked_against_the_calendar_and_the_stored_form() {
        for good in [
            "2026-11-23",
            "2024-02-29",
            "2026-11-23T10:00",
            "2026-11-23T10:00:59",
        ] {
            assert!(date("--since", good).is_ok(), "{good}");
        }
        for bad in [
            "2026-02-30",
            "2026-13-01",
            "2025-02-29",
            "2026-11-23 10:00",
            "2026-11-23T25:00",
            "2026-11-2",
            "yesterday",
            "",
        ] {
            let e = date("--until", bad).unwrap_err();
            assert!(
                matches!(&e, Error::Input(m) if m.contains("--until") && m.contains(bad)),
                "{bad}: {e}"
            );
        }
    }
}
