//! `vmscale import FILE`: stores each table of a pft or will-it-scale
//! result file as an imported run, with its provenance.

use std::path::Path;

use super::{Error, Result};
use crate::cli::ImportArgs;
use crate::import;
use crate::model::{Sample, Status};
use crate::store::{NewRun, Store};

pub fn import(db: &Path, a: &ImportArgs) -> Result<()> {
    let text = std::fs::read_to_string(&a.file)
        .map_err(|e| Error::Input(format!("cannot read {}: {e}", a.file.display())))?;
    let stem = a
        .file
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let opts = import::Options {
        skip_bad_rows: a.skip_bad_rows,
    };
    let mut skipped = Vec::new();
    let tables = import::parse(&text, &stem, &opts, &mut skipped)
        .map_err(|e| e.context(a.file.display()))?;
    for s in &skipped {
        eprintln!("vmscale: {}: left out {s}", a.file.display());
    }
    let file = std::fs::canonicalize(&a.file).unwrap_or_else(|_| a.file.clone());
    let mut store = Store::open(db)?;
    // A mail is dated by its Date header; anything else by the import.
    let dated = import::mail_date(&text);
    let now = dated.clone().unwrap_or_else(crate::timefmt::now);
    let mut runs = Vec::new();
    for (k, t) in tables.iter().enumerate() {
        let label = a.label.as_ref().map(|l| {
            if tables.len() > 1 {
                format!("{l}/{}", k + 1)
            } else {
                l.clone()
            }
        });
        let mut cases = Vec::new();
        for (c, _) in &t.rows {
            if !cases.contains(c) {
                cases.push(c.clone());
            }
        }
        let block = if tables.len() > 1 {
            format!(" table {} of {}", k + 1, tables.len())
        } else {
            String::new()
        };
        let origin = format!("imported: {} {}{block}", file.display(), t.format);
        let id = store.create_run(&NewRun {
            label: label.as_deref(),
            workload: t.workload,
            command_line: &std::env::args().collect::<Vec<_>>().join(" "),
            config: &t.config,
            figures: &t.figures,
            machine: &serde_json::json!({}),
            knobs: &serde_json::json!({}),
            cases: &cases,
            origin: &origin,
        })?;
        for (seq, (case, data)) in t.rows.iter().enumerate() {
            let sample = Sample {
                seq: seq as i64,
                warmup: false,
                taken_at: now.clone(),
                data: data.clone(),
                vmstat: Default::default(),
                noise: Default::default(),
                flagged: false,
            };
            store.add_sample(id, case, &sample)?;
        }
        store.finish_run(
            id,
            Status::Complete,
            Some(&format!("{} rows imported", t.rows.len())),
        )?;
        if let Some(at) = &dated {
            store.set_dates(id, at)?;
        }
        runs.push(store.load(id)?);
    }
    if a.json.json {
        return super::print_json(&runs);
    }
    for r in &runs {
        let caption = r
            .meta
            .config
            .get("caption")
            .and_then(|c| c.as_str())
            .filter(|c| !c.is_empty())
            .map(|c| format!(" after \"{c}\""))
            .unwrap_or_default();
        println!(
            "run {}: {} {} rows{caption}",
            r.meta.id,
            r.meta.workload,
            r.cases.iter().map(|c| c.samples.len()).sum::<usize>()
        );
    }
    Ok(())
}
