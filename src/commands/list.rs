//! `vmscale list`: the stored runs, one line each, in any output format.

use super::{Error, Result};
use crate::report::export::{self, Align, Block, Format, Records, Report, Table};
use crate::store::Store;
use crate::store::manage::ListFilter;
use std::path::Path;

pub fn list(db: &Path, a: &crate::cli::ListArgs) -> Result<()> {
    let format = Format::from_flags(a.markdown, a.csv, a.json);
    let filter = ListFilter {
        workload: a.workload.clone(),
        label: a.label.clone(),
        kernel: a.kernel.clone(),
        since: a.since.as_deref().map(|d| date("--since", d)).transpose()?,
        until: a.until.as_deref().map(|d| date("--until", d)).transpose()?,
    };
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
    let trend = |id: i64| {
        trends
            .as_ref()
            .map(|t| t.get(&id).cloned().unwrap_or_default())
    };
    let rows: Vec<Vec<String>> = runs
        .iter()
        .map(|r| {
            let mut row = vec![
                r.id.to_string(),
                r.started_at.clone(),
                r.workload.clone(),
                r.status.to_string(),
                r.samples.to_string(),
                r.label.clone().unwrap_or_default(),
                r.host.clone().unwrap_or_else(|| "-".into()),
            ];
            row.extend(trend(r.id).map(|t| t.cell()));
            row
        })
        .collect();
    let mut columns = vec![
        "id",
        "started (UTC)",
        "workload",
        "status",
        "samples",
        "label",
        "host",
    ];
    let mut record_columns = vec![
        "id",
        "started_at",
        "workload",
        "status",
        "samples",
        "label",
        "host",
    ];
    let mut align = vec![
        Align::Right,
        Align::Left,
        Align::Left,
        Align::Left,
        Align::Right,
        Align::Left,
        Align::Left,
    ];
    let mut data = serde_json::to_value(&runs).map_err(|e| Error::Failed(format!("json: {e}")))?;
    if trends.is_some() {
        columns.push("trend");
        record_columns.push("trend");
        align.push(Align::Right);
        if let Some(list) = data.as_array_mut() {
            for (v, r) in list.iter_mut().zip(&runs) {
                v["trend"] = serde_json::to_value(trend(r.id)).unwrap_or_default();
            }
        }
    }
    let report = Report {
        text: Some(text(&rows)),
        blocks: vec![Block::Table(Table {
            title: String::new(),
            layout: None,
            header: vec![columns.iter().map(|c| c.to_string()).collect()],
            align,
            rows: rows.clone(),
        })],
        records: Records {
            columns: record_columns.iter().map(|c| c.to_string()).collect(),
            rows,
        },
        data,
    };
    let out = export::exporter(format).export(&report)?;
    super::output::emit(format, &out)
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

/// One line per run in 80 columns: the start to the minute, columns as
/// wide as their longest entry, single spaces between them.
fn text(rows: &[Vec<String>]) -> String {
    let width = |col: usize, least: usize| {
        rows.iter()
            .map(|r| r[col].chars().count())
            .max()
            .unwrap_or(0)
            .max(least)
    };
    let (wid, wwork, wstat, whost) = (width(0, 3), width(2, 8), width(3, 6), width(6, 4));
    // The trend column, when asked for, sits before the label.
    let has_trend = rows.first().is_some_and(|r| r.len() > 7);
    let wtrend = if has_trend { width(7, 5) } else { 0 };
    let trend = |cell: &str| {
        if has_trend {
            format!("{cell:>wtrend$} ")
        } else {
            String::new()
        }
    };
    let mut out = format!(
        "{:>wid$} {:<16} {:<wwork$} {:<wstat$} {:>7} {:<whost$} {}label\n",
        "id",
        "started (UTC)",
        "workload",
        "status",
        "samples",
        "host",
        trend("trend")
    );
    for r in rows {
        let started: String = r[1].replacen('T', " ", 1).chars().take(16).collect();
        let line = format!(
            "{:>wid$} {:<16} {:<wwork$} {:<wstat$} {:>7} {:<whost$} {}{}",
            r[0],
            started,
            r[2],
            r[3],
            r[4],
            r[6],
            trend(r.get(7).map_or("", |s| s.as_str())),
            r[5]
        );
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}
