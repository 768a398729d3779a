//! `vmscale report RUN... --html FILE`: one self-contained HTML page.

use std::path::Path;

use super::{Error, Result};
use crate::cli::ReportArgs;
use crate::store::Store;

pub fn report(db: &Path, a: &ReportArgs) -> Result<()> {
    let store = Store::open_existing(db)?;
    let mut runs = Vec::new();
    for spec in &a.runs {
        let id = store.resolve(spec)?;
        runs.push(store.load(id)?);
    }
    if let Some(f) = &a.figure {
        for r in &runs {
            crate::report::series::find_figure(r, Some(f))?;
        }
    }
    let flames = super::probes_out::html(&store, &runs)?;
    let page = crate::report::html::page_with(&runs, a.figure.as_deref(), &flames);
    std::fs::write(&a.html, page)
        .map_err(|e| Error::Input(format!("cannot write {}: {e}", a.html.display())))?;
    super::output::text(&format!(
        "wrote {} ({} runs)\n",
        a.html.display(),
        runs.len()
    ))
}
