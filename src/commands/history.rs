//! `vmscale history`: one figure across like runs, its change points and
//! the size of each step, in any output format (the rendering is
//! report/history.rs).

use super::{Error, Result};
use crate::cli::HistorySelect;
use crate::history::select::{self, By, Request, Series};
use crate::history::{self, Analysis, Options};
use crate::report::export::{self, Format};
use crate::stats::changepoint;
use crate::store::Store;
use std::path::Path;

/// Everything the command needs besides the store.
pub struct Args {
    pub request: Request,
    pub options: Options,
    pub format: Format,
}

impl Args {
    pub fn from_cli(a: &crate::cli::HistoryArgs) -> Result<Args> {
        let (request, options) = request(&a.select, a.figure.clone())?;
        Ok(Args {
            request,
            options,
            format: a.output.format(),
        })
    }
}

/// The selection and options of a history, checked.
pub fn request(a: &HistorySelect, figure: Option<String>) -> Result<(Request, Options)> {
    let d = changepoint::Options::default();
    let search = changepoint::Options {
        alpha: a.alpha.unwrap_or(d.alpha),
        min_segment: a.min_segment.unwrap_or(d.min_segment),
        permutations: a.permutations.unwrap_or(d.permutations),
        seed: a.seed.unwrap_or(d.seed),
    };
    if !(search.alpha > 0.0 && search.alpha < 1.0) {
        return Err(Error::Input(format!(
            "--alpha {} is not a significance level: give one between 0 and 1, like 0.01",
            search.alpha
        )));
    }
    if search.min_segment < 2 {
        return Err(Error::Input(format!(
            "--min-segment {} is too small: a segment needs 2 runs or more to have a spread",
            search.min_segment
        )));
    }
    if !(1..=100_000).contains(&search.permutations) {
        return Err(Error::Input(format!(
            "--permutations {} is out of range: give 1 to 100000 (default 199)",
            search.permutations
        )));
    }
    super::list::check_dates(&a.filter)?;
    let options = Options {
        search,
        min_step: a.min_step.unwrap_or(0.0),
    };
    let request = Request {
        filter: a.filter.clone(),
        host: a.host.clone(),
        case: a.case.clone(),
        figure,
        by: a.by.unwrap_or(By::Time),
    };
    Ok((request, options))
}

/// The series and its analysis, for other commands (`report --history`).
pub fn load(db: &Path, request: &Request, options: &Options) -> Result<(Series, Analysis)> {
    let store = Store::open_existing(db)?;
    let series = select::series(&store, request)?;
    let analysis = history::analyse(&series.points, &series.figure, options);
    Ok((series, analysis))
}

pub fn history(db: &Path, a: &crate::cli::HistoryArgs) -> Result<()> {
    let args = Args::from_cli(a)?;
    let (series, analysis) = load(db, &args.request, &args.options)?;
    for n in &series.notes {
        super::output::warn(n);
    }
    let report = crate::report::history::build(&series, &analysis, &args.options)?;
    let out = export::exporter(args.format).export(&report)?;
    super::output::emit(args.format, &out)
}
