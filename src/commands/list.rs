//! `vmscale list`: the stored runs, one line each, in any output format.

use super::{Error, Result};
use crate::report::export::{self, Align, Block, Format, Records, Report, Table};
use crate::store::Store;
use std::path::Path;

pub fn list(db: &Path, format: Format) -> Result<()> {
    let store = Store::open_existing(db).map_err(Error::Input)?;
    let runs = store.list().map_err(Error::Failed)?;
    let rows: Vec<Vec<String>> = runs
        .iter()
        .map(|r| {
            vec![
                r.id.to_string(),
                r.started_at.clone(),
                r.workload.clone(),
                r.status.to_string(),
                r.samples.to_string(),
                r.label.clone().unwrap_or_default(),
            ]
        })
        .collect();
    let columns = [
        "id",
        "started (UTC)",
        "workload",
        "status",
        "samples",
        "label",
    ];
    let report = Report {
        text: Some(text(&rows)),
        blocks: vec![Block::Table(Table {
            header: vec![columns.iter().map(|c| c.to_string()).collect()],
            align: vec![
                Align::Right,
                Align::Left,
                Align::Left,
                Align::Left,
                Align::Right,
                Align::Left,
            ],
            rows: rows.clone(),
        })],
        records: Records {
            columns: ["id", "started_at", "workload", "status", "samples", "label"]
                .iter()
                .map(|c| c.to_string())
                .collect(),
            rows,
        },
        data: serde_json::to_value(&runs).map_err(|e| Error::Failed(format!("json: {e}")))?,
    };
    let out = export::exporter(format)
        .export(&report)
        .map_err(Error::Failed)?;
    print!("{out}");
    Ok(())
}

/// The historical text layout, the workload column as wide as its longest name.
fn text(rows: &[Vec<String>]) -> String {
    let w = rows.iter().map(|r| r[2].len()).max().unwrap_or(0).max(8);
    let mut out = format!(
        "{:>5}  {:<24}  {:<w$}  {:<10}  {:>7}  label\n",
        "id", "started (UTC)", "workload", "status", "samples"
    );
    for r in rows {
        let line = format!(
            "{:>5}  {:<24}  {:<w$}  {:<10}  {:>7}  {}",
            r[0], r[1], r[2], r[3], r[4], r[5]
        );
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}
