//! `vmscale merge FILE...`: gathers the runs of other stores (a fleet's
//! per-node SQLite files) into the current store, SQLite or PostgreSQL.

use std::path::PathBuf;

use super::{Error, Result};
use crate::store::Store;
use crate::store::merge::Merged;

pub fn merge(db: &std::path::Path, files: &[PathBuf], json: bool) -> Result<()> {
    if files.is_empty() {
        return Err(Error::Input(
            "name the stores to merge: `vmscale merge node1.db node2.db`".into(),
        ));
    }
    // Every source is checked before anything is copied.
    let sources = files
        .iter()
        .map(|f| Store::open_existing(f))
        .collect::<crate::store::Result<Vec<_>>>()?;
    let mut store = Store::open(db)?;
    let mut report = Vec::new();
    for (file, src) in files.iter().zip(&sources) {
        let merged = store.merge_from(src)?;
        let name = crate::store::display(file);
        report.push(serde_json::json!({ "file": name, "runs": merged }));
        if json {
            continue;
        }
        let count = |f: fn(&Merged) -> bool| merged.iter().filter(|m| f(m)).count();
        let running = count(|m| matches!(m, Merged::Running { .. }));
        println!(
            "{name}: {} copied, {} already here{}",
            count(|m| matches!(m, Merged::Copied { .. })),
            count(|m| matches!(m, Merged::Present { .. })),
            if running > 0 {
                format!(", {running} still running (merge again later)")
            } else {
                String::new()
            }
        );
        for m in &merged {
            if let Merged::Copied { from, to } = m {
                println!("  run {from} -> run {to}");
            }
        }
    }
    if json {
        super::print_json(&report)?;
    }
    Ok(())
}
