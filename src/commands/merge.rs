//! `vmscale merge FILE...`: gathers the runs of other stores (a fleet's
//! per-node SQLite files) into the current store, SQLite or PostgreSQL,
//! and finishes runs whose PostgreSQL server went away from their spools.

use std::path::{Path, PathBuf};

use super::{Error, Result};
use crate::store::merge::Merged;
use crate::store::{Store, spool};

/// A file to merge: another store, or a run's spool.
enum Source {
    Store(Store),
    Spool(spool::ReadSpool),
}

fn open(file: &Path) -> Result<Source> {
    if spool::looks_like(file) {
        return Ok(Source::Spool(spool::read(file)?));
    }
    Ok(Source::Store(Store::open_existing(file)?))
}

pub fn merge(db: &Path, files: &[PathBuf], json: bool) -> Result<()> {
    if files.is_empty() {
        return Err(Error::Input(
            "name the stores to merge: `vmscale merge node1.db node2.db`".into(),
        ));
    }
    // Every source is checked (and a spool locked) before anything is
    // copied.
    let sources = files.iter().map(|f| open(f)).collect::<Result<Vec<_>>>()?;
    let mut store = Store::open(db)?;
    let target = crate::store::display(db);
    let mut report = Vec::new();
    for (file, src) in files.iter().zip(sources) {
        let name = crate::store::display(file);
        let src = match src {
            Source::Store(s) => s,
            Source::Spool(sp) => {
                let m = store.merge_spool(&sp)?;
                // The spool is done with once its own store has it.
                let removed = sp.store.ends_with(&target);
                if removed {
                    sp.remove()?;
                }
                if !json {
                    println!(
                        "{name}: run {} {}, {} samples written, {} already here; {}{}",
                        m.run,
                        if m.created { "made here" } else { "found" },
                        m.written,
                        m.present,
                        m.status,
                        if removed { "; spool removed" } else { "" }
                    );
                }
                report.push(serde_json::json!({ "file": name, "spool": m, "removed": removed }));
                continue;
            }
        };
        let merged = store.merge_from(&src)?;
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
