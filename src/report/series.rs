//! A figure against task count, taken from a stored run: every measured
//! sample per N, for one variant. Plots and the USL fit read runs this way,
//! whatever the workload, as long as its figures are per task count.

use crate::error::{Error, Result};
use crate::model::{Figure, Run};
use crate::stats::summary::{Summary, summarise};

/// One task count's samples of a figure.
#[derive(Debug, Clone)]
pub struct Point {
    pub tasks: usize,
    pub values: Vec<f64>,
    pub summary: Summary,
}

/// A figure of one variant of a run, by ascending task count.
#[derive(Debug, Clone)]
pub struct Series {
    pub figure: Figure,
    pub variant: String,
    pub points: Vec<Point>,
}

impl Point {
    /// The mean the tables show (harmonic for rates) and its 95 % CI
    /// half-width (0 when n = 1), for plots.
    pub fn mean_ci(&self) -> (f64, f64) {
        let ci = if self.summary.ci95.is_finite() {
            self.summary.ci95
        } else {
            0.0
        };
        (self.summary.mean, ci)
    }
}

impl Series {
    /// Every sample as an (N, X) pair, for the USL fit.
    pub fn pairs(&self) -> Vec<(f64, f64)> {
        self.points
            .iter()
            .flat_map(|p| p.values.iter().map(move |&v| (p.tasks as f64, v)))
            .collect()
    }
}

/// Variants in run order.
pub fn variants(run: &Run) -> Vec<String> {
    let mut v: Vec<String> = Vec::new();
    for c in &run.cases {
        if !v.contains(&c.case.variant) {
            v.push(c.case.variant.clone());
        }
    }
    v
}

/// The series of `figure` in `variant`; cases with knobs are kept apart by
/// the caller (they are skipped here when several knob sets share a variant).
/// Every task count of the series' points, ascending, once each.
pub fn task_counts<'a>(series: impl IntoIterator<Item = &'a Series>) -> Vec<usize> {
    let mut tasks: Vec<usize> = series
        .into_iter()
        .flat_map(|s| s.points.iter().map(|p| p.tasks))
        .collect();
    tasks.sort_unstable();
    tasks.dedup();
    tasks
}

pub fn series(run: &Run, figure: &Figure, variant: &str) -> Series {
    let mut points: Vec<Point> = Vec::new();
    for c in run.cases.iter().filter(|c| c.case.variant == variant) {
        let values: Vec<f64> = c.values(&figure.name).filter(|v| v.is_finite()).collect();
        if points.iter().any(|p| p.tasks == c.case.tasks) {
            continue;
        }
        if let Some(summary) = summarise(&values, figure.rate) {
            points.push(Point {
                tasks: c.case.tasks,
                values,
                summary,
            });
        }
    }
    points.sort_by_key(|p| p.tasks);
    Series {
        figure: figure.clone(),
        variant: variant.to_string(),
        points,
    }
}

/// Finds a declared figure by name, or says which ones there are.
pub fn find_figure<'a>(run: &'a Run, name: Option<&str>) -> Result<&'a Figure> {
    let names = || {
        run.meta
            .figures
            .iter()
            .map(|f| f.name.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    };
    match name {
        None => run
            .meta
            .figures
            .first()
            .ok_or_else(|| Error::Input(format!("run {} declares no figures", run.meta.id))),
        Some(n) => run
            .meta
            .figures
            .iter()
            .find(|f| f.name == n)
            .ok_or_else(|| {
                Error::Input(format!(
                    "run {} has no figure '{n}': use one of {}",
                    run.meta.id,
                    names()
                ))
            }),
    }
}

/// The figure several runs are plotted by: `figure`, else the first
/// run's headline; None when a run lacks it.
pub fn shared_figure<'a>(runs: &'a [Run], figure: Option<&str>) -> Option<&'a Figure> {
    let fig = find_figure(runs.first()?, figure).ok()?;
    runs.iter()
        .all(|r| r.meta.figures.iter().any(|f| f.name == fig.name))
        .then_some(fig)
}
