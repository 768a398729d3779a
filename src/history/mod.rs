//! One figure across like runs and where it moved: the series (each run's
//! median with its interval, ordered by time or kernel version), its
//! change points by E-divisive means (`stats::changepoint`), and each step
//! confirmed by the runs either side with the comparison statistics
//! (Welch's test and the log-t ratio interval of `stats::significance`).
//!
//! The run is the unit of the confirmation, not the sample: runs on other
//! days differ by more than the samples within one run do, so samples
//! pooled across runs would give intervals too narrow to keep their
//! promise. The samples' own test is reported beside it.

pub mod select;
#[cfg(test)]
mod tests;
pub mod trend;

use crate::model::Figure;
use crate::stats::changepoint::{self, Split};
use crate::stats::robust::median_ci;
use crate::stats::significance::{Moments, figure_p, log_t_ratio_ci_of, welch_p_of};
use crate::stats::summary::median;
use serde::Serialize;

/// A run as a history names it: its id, label, and the kernel and host it
/// was measured on (a step names the runs either side of it so).
#[derive(Debug, Clone, Default, Serialize)]
pub struct RunRef {
    #[serde(rename = "run")]
    pub id: i64,
    pub label: Option<String>,
    pub kernel: Option<String>,
    pub host: Option<String>,
}

/// One run of a series with the samples of its figure.
#[derive(Debug, Clone)]
pub struct Point {
    pub run: RunRef,
    pub started_at: String,
    pub values: Vec<f64>,
}

/// One run as the history prints it.
#[derive(Debug, Clone, Serialize)]
pub struct Entry {
    #[serde(flatten)]
    pub run: RunRef,
    pub started_at: String,
    pub n: usize,
    pub median: f64,
    /// The median's 95 % interval by order statistics (5 samples or more).
    pub ci: Option<[f64; 2]>,
    /// Which segment between steps it belongs to (0 first).
    pub segment: usize,
    /// That segment's centre: the geometric mean of its runs' medians
    /// (arithmetic where a median is not positive).
    pub segment_centre: f64,
}

/// A step: where, how large, how sure.
#[derive(Debug, Clone, Serialize)]
pub struct ChangePoint {
    /// The id of the last run before the step.
    pub before_run: i64,
    /// The id of the first run after it.
    pub after_run: i64,
    /// Its position: the index in the series of the first run after it.
    pub index: usize,
    /// The segment after over the segment before (centres as above).
    pub change: f64,
    /// 95 % interval of `change` (Welch t on the logs of the runs' medians).
    pub ci: Option<[f64; 2]>,
    /// The permutation p-value of the split (E-divisive).
    pub p: f64,
    /// Welch's test on the runs' medians of the two segments.
    pub p_runs: Option<f64>,
    /// Welch's test on all the samples of the two segments (on logs).
    pub p_samples: Option<f64>,
    /// Runs in the segments before and after.
    pub runs_before: usize,
    pub runs_after: usize,
    pub before: RunRef,
    pub after: RunRef,
    /// Whether the change is an improvement in the figure's direction.
    pub better: bool,
}

/// How a history looks for steps: the change-point search, and the
/// smallest step it reports. A figure as steady as a fault count makes a
/// step of a few faults significant when anything on the machine moves it
/// between runs; `min_step` keeps such a step out (as git-perf's minimum
/// magnitude does).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Options {
    pub search: changepoint::Options,
    /// The smallest change of a step, as a fraction of the centre before
    /// it (0: every confirmed step).
    pub min_step: f64,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            search: changepoint::Options::default(),
            min_step: 0.0,
        }
    }
}

/// The analysis of one series.
#[derive(Debug, Clone)]
pub struct Analysis {
    pub entries: Vec<Entry>,
    pub change_points: Vec<ChangePoint>,
    /// Spread of the runs' medians around their segment centres: the
    /// standard deviation of the log residuals (a fraction).
    pub run_noise: Option<f64>,
}

/// The series of `points` (at least one value each) with its steps.
pub fn analyse(points: &[Point], figure: &Figure, opts: &Options) -> Analysis {
    let medians: Vec<f64> = points.iter().map(|p| median(&p.values)).collect();
    let logs = medians.iter().all(|&m| m > 0.0 && m.is_finite());
    let y: Vec<f64> = if logs {
        medians.iter().map(|m| m.ln()).collect()
    } else {
        medians.clone()
    };
    let mut at: Vec<Split> = changepoint::e_divisive(&y, &opts.search);
    let centre = |r: std::ops::Range<usize>| -> f64 {
        let m = y[r.clone()].iter().sum::<f64>() / r.len() as f64;
        if logs { m.exp() } else { m }
    };
    let too_small = |b: &Sides| {
        let (before, after) = (centre(b.before()), centre(b.after()));
        before != 0.0 && ((after / before) - 1.0).abs() < opts.min_step
    };
    // Confirm: a split whose segments' runs do not differ by Welch's test,
    // or differ by less than the smallest step, is dropped (the weakest
    // first), and its neighbours re-tested.
    loop {
        let weakest = (0..at.len())
            .map(|k| {
                let b = bounds(&at, k, y.len());
                let p = runs_p(&y, &b).filter(|_| !too_small(&b));
                (k, p)
            })
            .filter(|(_, p)| p.is_none_or(|p| p > opts.search.alpha))
            .max_by(|a, b| a.1.unwrap_or(1.0).total_cmp(&b.1.unwrap_or(1.0)));
        match weakest {
            Some((k, _)) => {
                at.remove(k);
            }
            None => break,
        }
    }
    let mut entries = Vec::with_capacity(points.len());
    let mut residuals = Vec::with_capacity(points.len());
    let edges: Vec<usize> = std::iter::once(0)
        .chain(at.iter().map(|a| a.at))
        .chain(std::iter::once(points.len()))
        .collect();
    for (segment, w) in edges.windows(2).enumerate() {
        let c = centre(w[0]..w[1]);
        let cy = y[w[0]..w[1]].iter().sum::<f64>() / (w[1] - w[0]) as f64;
        for i in w[0]..w[1] {
            let p = &points[i];
            residuals.push(y[i] - cy);
            entries.push(Entry {
                run: p.run.clone(),
                started_at: p.started_at.clone(),
                n: p.values.len(),
                median: medians[i],
                ci: median_ci(&p.values).map(|c| [c.lo, c.hi]),
                segment,
                segment_centre: c,
            });
        }
    }
    let segments = edges.len() - 1;
    let run_noise = (logs && points.len() > segments + 1).then(|| {
        let ss: f64 = residuals.iter().map(|r| r * r).sum();
        (ss / (points.len() - segments) as f64).sqrt()
    });
    let change_points = (0..at.len())
        .map(|k| {
            let b = bounds(&at, k, y.len());
            step(points, &y, logs, &b, at[k].p, figure, &centre)
        })
        .collect();
    Analysis {
        entries,
        change_points,
        run_noise,
    }
}

/// The segments either side of a split: runs `start..at` and `at..end`.
struct Sides {
    start: usize,
    at: usize,
    end: usize,
}

impl Sides {
    fn before(&self) -> std::ops::Range<usize> {
        self.start..self.at
    }
    fn after(&self) -> std::ops::Range<usize> {
        self.at..self.end
    }
}

/// The segments either side of split `k` of `n` points.
fn bounds(at: &[Split], k: usize, n: usize) -> Sides {
    Sides {
        start: if k == 0 { 0 } else { at[k - 1].at },
        at: at[k].at,
        end: at.get(k + 1).map_or(n, |a| a.at),
    }
}

fn runs_p(y: &[f64], b: &Sides) -> Option<f64> {
    welch_p_of(&Moments::of(&y[b.before()]), &Moments::of(&y[b.after()]))
}

fn step(
    points: &[Point],
    y: &[f64],
    logs: bool,
    b: &Sides,
    p: f64,
    figure: &Figure,
    centre: &dyn Fn(std::ops::Range<usize>) -> f64,
) -> ChangePoint {
    let (before, after) = (&y[b.before()], &y[b.after()]);
    let change = centre(b.after()) / centre(b.before());
    let ci = logs
        .then(|| log_t_ratio_ci_of(&Moments::of(before), &Moments::of(after), change))
        .flatten()
        .map(|(lo, hi)| [lo, hi]);
    let pooled = |r: std::ops::Range<usize>| -> Vec<f64> {
        points[r]
            .iter()
            .flat_map(|p| p.values.iter().copied())
            .collect()
    };
    let better = match figure.better {
        crate::model::Better::Higher => change > 1.0,
        crate::model::Better::Lower => change < 1.0,
    };
    ChangePoint {
        before_run: points[b.at - 1].run.id,
        after_run: points[b.at].run.id,
        index: b.at,
        change,
        ci,
        p,
        p_runs: runs_p(y, b),
        p_samples: figure_p(&pooled(b.before()), &pooled(b.after()), true),
        runs_before: b.before().len(),
        runs_after: b.after().len(),
        before: points[b.at - 1].run.clone(),
        after: points[b.at].run.clone(),
        better,
    }
}
