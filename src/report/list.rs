//! `list`'s report: one line per stored run in 80 columns as text, one
//! table in Markdown, one record per run in CSV, the listings as JSON; a
//! trend column when asked for.

use std::collections::HashMap;

use crate::error::{Error, Result};
use crate::history::trend::Trend;
use crate::report::export::{Align, Block, Records, Report, Table};
use crate::store::RunListing;

/// The report of `runs`, with each run's trend when `trends` is given.
pub fn report(runs: &[RunListing], trends: Option<&HashMap<i64, Trend>>) -> Result<Report> {
    let trend = |id: i64| trends.map(|t| t.get(&id).cloned().unwrap_or_default());
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
    let mut data = serde_json::to_value(runs).map_err(|e| Error::Failed(format!("json: {e}")))?;
    if trends.is_some() {
        columns.push("trend");
        record_columns.push("trend");
        align.push(Align::Right);
        if let Some(list) = data.as_array_mut() {
            for (v, r) in list.iter_mut().zip(runs) {
                v["trend"] = serde_json::to_value(trend(r.id)).unwrap_or_default();
            }
        }
    }
    Ok(Report {
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
    })
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
