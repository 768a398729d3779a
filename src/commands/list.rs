//! `vmscale list`: the stored runs, one line each.

use super::{Error, Result};
use crate::store::Store;
use std::path::Path;

pub fn list(db: &Path, json: bool) -> Result<()> {
    let store = Store::open_existing(db).map_err(Error::Input)?;
    let runs = store.list().map_err(Error::Failed)?;
    if json {
        return super::print_json(&runs);
    }
    println!(
        "{:>5}  {:<24}  {:<8}  {:<10}  {:>7}  label",
        "id", "started (UTC)", "workload", "status", "samples"
    );
    for r in runs {
        println!(
            "{:>5}  {:<24}  {:<8}  {:<10}  {:>7}  {}",
            r.id,
            r.started_at,
            r.workload,
            r.status,
            r.samples,
            r.label.unwrap_or_default()
        );
    }
    Ok(())
}
