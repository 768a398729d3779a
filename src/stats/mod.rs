//! Statistics over samples: summaries and the robust centre, the stopping
//! rule, mixtures and drifts, variance between invocations, the comparison
//! tests and intervals (Welch, Benjamini-Hochberg, ratio intervals, paired
//! A/B ratios), the sequential verdict of paired rounds (`decide`), the
//! comparison of runs built on them (`comparison`, and `run_diff` for what
//! else differs between the runs) and the USL fit; `work` counts the steps
//! they take.
//! Pure numbers, apart from `case_groups`, `comparison` and `run_diff`,
//! which read stored runs.

pub mod case_data;
pub mod case_groups;
pub mod changepoint;
pub mod colour;
pub mod comparison;
pub mod decide;
pub mod files;
pub mod levels;
pub mod mixture;
pub mod paired;
pub mod projection;
pub mod rerun;
pub mod rng;
pub mod robust;
pub mod run_diff;
pub mod side;
pub mod significance;
pub mod stopping;
pub mod summary;
pub mod usl;
pub mod vmstat_spread;
pub mod work;
