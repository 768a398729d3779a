//! `vmscale delete` and `vmscale rename`: housekeeping of stored runs.

use std::path::Path;

use super::{Error, Result, output};
use crate::store::Store;

/// Deletes the named runs; every name is resolved before anything is
/// deleted, so a typo deletes nothing.
pub fn delete(db: &Path, specs: &[String]) -> Result<()> {
    let mut store = Store::open_existing(db)?;
    let mut ids = Vec::new();
    for spec in specs {
        let id = store.resolve(spec)?;
        if !ids.contains(&id) {
            ids.push(id);
        }
    }
    let mut said = String::new();
    for id in ids {
        if store.delete_run(id)? {
            said.push_str(&format!("deleted run {id}\n"));
        }
    }
    output::text(&said)
}

/// Gives one run a new label; a label already on another run is refused,
/// since it would make that label ambiguous.
pub fn rename(db: &Path, spec: &str, label: &str) -> Result<()> {
    let mut store = Store::open_existing(db)?;
    let id = store.resolve(spec)?;
    check_label(label)?;
    let taken = store.runs_labelled(label)?;
    if let Some((other, _)) = taken.iter().find(|(other, _)| *other != id) {
        return Err(Error::Input(format!(
            "label '{label}' is already run {other}'s: choose another, or rename run {other} first"
        )));
    }
    store.set_label(id, label)?;
    output::text(&if label.is_empty() {
        format!("run {id}: label removed\n")
    } else {
        format!("run {id}: label {label}\n")
    })
}

/// A label must not read as a run id or as `last`/`last~N`.
pub fn check_label(label: &str) -> Result<()> {
    let reserved = label.parse::<i64>().is_ok()
        || label == "last"
        || label.starts_with("last~")
        || label.chars().any(char::is_control);
    if reserved {
        return Err(Error::Input(format!(
            "label '{label}' would read as a run id or `last`: use a name with a letter, like base"
        )));
    }
    Ok(())
}
