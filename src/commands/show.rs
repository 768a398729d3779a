//! `vmscale show RUN`: reprints a stored run exactly as `run` printed it.

use super::{Error, Result};
use crate::store::Store;
use std::path::Path;

pub fn show(db: &Path, spec: &str, json: bool) -> Result<()> {
    let store = Store::open_existing(db).map_err(Error::Input)?;
    let id = store.resolve(spec).map_err(Error::Input)?;
    let run = store.load(id).map_err(Error::Failed)?;
    if json {
        super::print_json(&run)
    } else {
        print!("{}", crate::report::text(&run));
        Ok(())
    }
}

/// `show` in any output format, through the exporters (text is the same
/// bytes as [`show`] prints).
pub fn show_as(db: &Path, spec: &str, format: crate::report::export::Format) -> Result<()> {
    let store = Store::open_existing(db).map_err(Error::Input)?;
    let id = store.resolve(spec).map_err(Error::Input)?;
    let run = store.load(id).map_err(Error::Failed)?;
    let report = crate::report::show::report(&run);
    let out = crate::report::export::exporter(format)
        .export(&report)
        .map_err(Error::Failed)?;
    print!("{out}");
    Ok(())
}
