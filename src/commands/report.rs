//! `vmscale report RUN... --html FILE`: one self-contained HTML page.

use std::path::Path;

use super::{Error, Result};
use crate::cli::ReportArgs;
use crate::store::Store;

pub fn report(db: &Path, a: &ReportArgs) -> Result<()> {
    let store = Store::open_existing(db).map_err(Error::Input)?;
    let mut runs = Vec::new();
    for spec in &a.runs {
        let id = store.resolve(spec).map_err(Error::Input)?;
        runs.push(store.load(id).map_err(Error::Failed)?);
    }
    if let Some(f) = &a.figure {
        for r in &runs {
            crate::report::series::find_figure(r, Some(f)).map_err(Error::Input)?;
        }
    }
    let page = crate::report::html::page(&runs, a.figure.as_deref());
    std::fs::write(&a.html, page)
        .map_err(|e| Error::Input(format!("cannot write {}: {e}", a.html.display())))?;
    println!("wrote {} ({} runs)", a.html.display(), runs.len());
    Ok(())
}
