//! `vmscale compare`: runs side by side (the first is the baseline), the
//! knob variants of one run, or plain sample files, in any output format.

use std::path::{Path, PathBuf};

use super::{Error, Result};
use crate::cli::CompareArgs;
use crate::import::samplefile;
use crate::model::{Better, Figure, Run, RunMeta};
use crate::report::compare_layout;
use crate::report::export::{self, Format};
use crate::stats::comparison::{self, Options, RatioOf};
use crate::stats::files;
use crate::stats::side::Side;
use crate::stats::work;
use crate::store::Store;

fn options(r: &CompareArgs) -> Result<Options> {
    if !(r.alpha > 0.0 && r.alpha < 1.0) {
        return Err(Error::Input(format!(
            "--alpha {} is not a significance level: use a value between 0 and 1, such as 0.05",
            r.alpha
        )));
    }
    Ok(Options {
        alpha: r.alpha,
        seed: r.seed,
        figures: r.figures.clone(),
        ratio_of: r.ratio_of,
    })
}

pub fn compare(db: &Path, r: &CompareArgs) -> Result<()> {
    let opts = options(r)?;
    let format = r.output.format();
    // Positional names that are all existing files are sample files.
    let as_files = !r.files.is_empty()
        || (!r.runs.is_empty() && r.runs.iter().all(|p| Path::new(p).is_file()));
    if as_files {
        let mut paths = r.files.clone();
        if r.files.is_empty() {
            paths.extend(r.runs.iter().map(PathBuf::from));
        } else if !r.runs.is_empty() {
            return Err(Error::Input(
                "give either runs or --files, not both: runs are compared with runs, files with files".into(),
            ));
        }
        return sample_files(&paths, r, &opts, format);
    }
    if r.column.is_some() || r.better.is_some() || r.rate {
        return Err(Error::Input(
            "--column, --better and --rate apply to sample files only: stored runs carry \
             each figure's direction and kind; drop them, or compare files with --files"
                .into(),
        ));
    }
    if r.runs.is_empty() {
        return Err(Error::Input(
            "name the runs to compare (ids, labels, last, last~N), or sample files with --files"
                .into(),
        ));
    }
    let store = Store::open_existing(db)?;
    let mut loaded = Vec::new();
    let mut ids = Vec::new();
    for spec in &r.runs {
        let id = store.resolve(spec)?;
        loaded.push(store.load_figures(id)?);
        ids.push(id);
    }
    check_workloads(&loaded, r.cross_workload)?;
    check_figures(&loaded[0].meta, &opts)?;
    check_accelerators(&loaded)?;
    let (sides, kind) = if loaded.len() == 1 {
        let v = Side::variants(&loaded[0]);
        if v.is_empty() {
            return Err(Error::Input(format!(
                "run {} has no knob variants to compare: name two or more runs, e.g. `vmscale compare {} last`",
                loaded[0].meta.id, loaded[0].meta.id
            )));
        }
        (v, "variants")
    } else {
        (loaded.iter().map(Side::run).collect(), "runs")
    };
    emit(&comparison::compare(&sides, kind, &opts), format)?;
    if format == Format::Text {
        super::probes_out::emit(&super::probes_out::compare_text(&store, &ids)?)?;
    }
    Ok(())
}

/// Runs measured under different accelerators (a guest under KVM, one
/// under TCG, the host itself) are not comparable for speed: a warning.
/// A run whose clock was the instruction count (icount) measured time in
/// other units than the rest: a refusal.
fn check_accelerators(runs: &[Run]) -> Result<()> {
    let Some(which) = crate::stats::run_diff::mixed_accelerators(runs.iter().map(|r| &r.meta))
    else {
        return Ok(());
    };
    if runs.iter().any(|r| r.meta.under_icount()) {
        return Err(Error::Input(format!(
            "these runs were measured under different clocks ({which}): under icount a \
             second is a count of guest instructions, elsewhere it is time; compare icount \
             runs with icount runs (vmscale guest --accel icount)"
        )));
    }
    super::output::warn(&format!(
        "these runs were measured under different accelerators ({which}): TCG \
         emulates the CPU and KVM runs it, so their figures differ by far more than \
         the kernels do; compare runs of one accelerator"
    ));
    Ok(())
}

/// `vmscale guest`'s comparison of its kernels' runs (the first the
/// baseline), as `compare` prints stored runs.
pub fn compare_loaded(runs: &[Run]) -> Result<()> {
    check_accelerators(runs)?;
    let opts = Options {
        alpha: 0.05,
        seed: 1,
        figures: Vec::new(),
        ratio_of: RatioOf::B,
    };
    let sides: Vec<Side> = runs.iter().map(Side::run).collect();
    emit(&comparison::compare(&sides, "runs", &opts), Format::Text)
}

/// Runs of different workloads measure different things under the same
/// case names; that is refused unless asked for.
fn check_workloads(runs: &[Run], allowed: bool) -> Result<()> {
    let first = &runs[0].meta.workload;
    if allowed || runs.iter().all(|r| &r.meta.workload == first) {
        return Ok(());
    }
    let which: Vec<String> = runs
        .iter()
        .map(|r| format!("run {} is {}", r.meta.id, r.meta.workload))
        .collect();
    Err(Error::Input(format!(
        "these runs are of different workloads ({}): compare runs of one workload, \
         or add --cross-workload to set them side by side anyway",
        which.join(", ")
    )))
}

fn check_figures(meta: &RunMeta, opts: &Options) -> Result<()> {
    for f in &opts.figures {
        if !meta.figures.iter().any(|x| &x.name == f) {
            let known: Vec<&str> = meta.figures.iter().map(|x| x.name.as_str()).collect();
            return Err(Error::Input(format!(
                "--figure {f}: run {} reports {}",
                meta.id,
                known.join(", ")
            )));
        }
    }
    Ok(())
}

fn emit(c: &comparison::Comparison, format: Format) -> Result<()> {
    let report = compare_layout::report(c);
    let out = export::exporter(format).export(&report)?;
    super::output::emit(format, &out)
}

fn sample_files(paths: &[PathBuf], r: &CompareArgs, opts: &Options, format: Format) -> Result<()> {
    if paths.len() < 2 {
        return Err(Error::Input(
            "compare needs two or more sample files: the first is the baseline".into(),
        ));
    }
    // Large files are read and parsed side by side, one per CPU.
    let large = paths
        .iter()
        .any(|p| std::fs::metadata(p).is_ok_and(|m| m.len() > 1 << 20));
    let read = work::map(paths, large, |p| {
        let text = std::fs::read_to_string(p)
            .map_err(|e| Error::Input(format!("cannot read {}: {e}", p.display())))?;
        samplefile::parse(&p.display().to_string(), &text, r.column.as_deref())
    });
    let mut parsed = Vec::new();
    for (p, v) in paths.iter().zip(read) {
        let v = v?;
        if r.rate
            && let Some(bad) = v.values.iter().find(|x| **x <= 0.0)
        {
            return Err(Error::Input(format!(
                "{}: --rate needs values above 0 (rates are compared on their logarithms); \
                 it holds {bad}",
                p.display()
            )));
        }
        parsed.push(v);
    }
    let stem = paths[0]
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let better = r
        .better
        .or_else(|| samplefile::direction(&parsed[0].column))
        .or_else(|| samplefile::direction(&stem))
        .unwrap_or_else(|| {
            eprintln!(
                "vmscale: nothing says which direction of '{}' is better: taken as higher; \
                 say --better lower if smaller values are better",
                parsed[0].column
            );
            Better::Higher
        });
    let figure = Figure::new(&parsed[0].column, "", better, r.rate);
    let opts = Options {
        alpha: opts.alpha,
        seed: opts.seed,
        figures: Vec::new(),
        ratio_of: opts.ratio_of,
    };
    let values: Vec<&[f64]> = parsed.iter().map(|v| v.values.as_slice()).collect();
    emit(&files::compare(paths, &values, &figure, &opts), format)
}
