//! `vmscale fit`: the Universal Scalability Law fitted to every measured
//! sample of a run's figure, or to a plain file of `N X` pairs.

use std::path::Path;

use super::{Error, Result};
use crate::cli::FitArgs;
use crate::report::export;
use crate::report::fit::{self as render, FitReport};
use crate::report::series;
use crate::stats::usl;
use crate::store::Store;

/// Parses `--extrapolate 16,64,512`.
fn extrapolate_list(text: &str) -> Result<Vec<f64>> {
    text.split(',')
        .map(|s| {
            s.trim()
                .parse::<f64>()
                .ok()
                .filter(|v| v.is_finite() && (1.0..=1e9).contains(v))
                .ok_or_else(|| {
                    Error::Input(format!(
                        "--extrapolate '{s}' is not a task count: give numbers 1 to 1e9 like \
                         16,64,512"
                    ))
                })
        })
        .collect()
}

/// 2x, 4x, 8x and 16x the largest N measured.
fn default_targets(max_n: f64) -> Vec<f64> {
    [2.0, 4.0, 8.0, 16.0].iter().map(|k| k * max_n).collect()
}

pub fn fit(db: &Path, a: &FitArgs) -> Result<()> {
    let targets = a.extrapolate.as_deref().map(extrapolate_list).transpose()?;
    // A positional name that is an existing file is a file of pairs, as
    // `compare FILE` does; then no store is needed.
    let (file, run) = match (&a.file, &a.run) {
        (None, Some(p)) if Path::new(p).is_file() => (Some(Path::new(p).to_path_buf()), None),
        (f, r) => (f.clone(), r.clone()),
    };
    let (pairs, source, figure, unit, variant) = match (&file, &run) {
        (Some(_), Some(_)) => {
            return Err(Error::Input("give a run or --file, not both".into()));
        }
        (Some(file), None) => {
            if a.figure.is_some() || a.variant.is_some() {
                return Err(Error::Input(
                    "--figure and --variant apply to runs, not to --file pairs".into(),
                ));
            }
            let text = std::fs::read_to_string(file)
                .map_err(|e| Error::Input(format!("cannot read {}: {e}", file.display())))?;
            let pairs = usl::parse_pairs(&text).map_err(|e| e.context(file.display()))?;
            (
                pairs,
                file.display().to_string(),
                "X".to_string(),
                "".to_string(),
                None,
            )
        }
        (None, spec) => {
            let store = Store::open_existing(db)?;
            let id = store.resolve(spec.as_deref().unwrap_or("last"))?;
            let run = store.load(id)?;
            let fig = series::find_figure(&run, a.figure.as_deref())?;
            let variants = series::variants(&run);
            let variant = match &a.variant {
                Some(v) if variants.contains(v) => v.clone(),
                Some(v) => {
                    return Err(Error::Input(format!(
                        "run {id} has no variant '{v}': use one of {}",
                        variants.join(", ")
                    )));
                }
                None => variants.first().cloned().unwrap_or_default(),
            };
            let s = series::series(&run, fig, &variant);
            (
                s.pairs(),
                format!("run {id} ({})", run.meta.workload),
                fig.name.clone(),
                fig.unit.clone(),
                Some(variant),
            )
        }
    };
    let fit = usl::fit(&pairs).map_err(|e| e.context(&source))?;
    let targets = targets.unwrap_or_else(|| default_targets(fit.max_n));
    let (extrapolation, more) = fit.extrapolate(&targets);
    let mut warnings = fit.warnings.clone();
    warnings.extend(more);
    let report = FitReport {
        source,
        figure,
        unit,
        variant,
        fit,
        extrapolation,
        warnings,
    };
    let format = a.output.format();
    let out = export::exporter(format).export(&render::report(&report))?;
    super::output::emit(format, &out)
}
