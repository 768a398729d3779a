//! `vmscale show RUN --plot`: a quick look at a run's curve in the terminal.

use std::path::Path;

use super::Result;
use crate::report::{series, termplot};
use crate::store::Store;

pub fn plot(db: &Path, spec: &str, figure: Option<&str>) -> Result<()> {
    let store = Store::open_existing(db)?;
    let id = store.resolve(spec)?;
    let run = store.load_figures(id)?;
    let fig = series::find_figure(&run, figure)?;
    let all: Vec<series::Series> = series::variants(&run)
        .iter()
        .map(|v| series::series(&run, fig, v))
        .collect();
    let title = format!(
        "run {id}{} ({}): {}",
        run.meta
            .label
            .as_deref()
            .map(|l| format!(" [{l}]"))
            .unwrap_or_default(),
        run.meta.workload,
        fig.name
    );
    super::output::text(&termplot::render(&title, &all))
}
