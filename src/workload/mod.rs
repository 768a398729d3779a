//! Workloads: one module each, registered in one table. A workload turns a
//! case (task count, variant) into one measured sample.

pub mod atomic;
pub mod c2c;
pub mod c2c_pairs;
pub mod churn;
pub mod cmd;
mod cmd_child;
pub mod colour;
pub mod colour_args;
mod colour_data;
pub mod cost;
pub mod fault_map;
pub mod fork;
pub mod latency;
pub mod lockfan;
pub mod mmap_lock;
pub mod numa;
pub mod numa_args;
mod ops;
pub mod options;
pub mod pft;
pub mod pft_args;
pub mod placement;
pub mod pte;
pub mod region;
pub mod spec;
pub mod stored;
pub mod stressng;
mod stressng_output;
pub mod thp;
pub mod thp_fragment;
pub mod timed;
mod values;
pub mod vms;
pub mod wis;

pub use crate::model::{Better, Case, Figure, SampleData};

use crate::error::{Error, Result};
pub use spec::{Env, Plots, Report, Spec};
use std::collections::BTreeMap;

/// What a workload's file implements: its cases and how one is measured.
/// The runner sees it as a [`Workload`], which adds its configuration and
/// what its `Spec` declares (`spec::Env::made`).
pub trait Measure {
    /// Cases in the order they are run and printed.
    fn cases(&self) -> Vec<Case>;
    /// The figures a run reports, given those its `Spec` declares: a run
    /// may add more (c2c adds one per CPU pair).
    fn run_figures(&self, declared: Vec<Figure>) -> Vec<Figure> {
        declared
    }
    /// Peak memory one sample needs, in bytes, for the safety check.
    fn memory_need(&self) -> u64;
    /// Runs one sample of `case`; a failure is `Error::Failed`.
    fn sample(&self, case: &Case) -> Result<SampleData>;
    /// Expected seconds of one sample of `case`, for the plan printed
    /// before a run and by `--dry-run` (runner/estimate.rs): a model from
    /// the round costs in `cost`, never a measurement.
    fn sample_s(&self, case: &Case) -> f64 {
        cost::default_s(self.memory_need(), case.tasks)
    }
    /// What the plan holds besides its cases (c2c: the pairs it measures
    /// of how many), merged into `--dry-run --json` and said in the text.
    fn plan_detail(&self) -> serde_json::Map<String, serde_json::Value> {
        serde_json::Map::new()
    }
    /// The same for the plan's text, one line each.
    fn plan_notes(&self) -> Vec<String> {
        Vec::new()
    }
    /// The run is refused when its estimate exceeds `--max-time` (c2c's
    /// `--pairs all`: a bigger `--max-time` is how the user asks for it).
    fn bounded_by_max_time(&self) -> bool {
        false
    }
    /// The tasks must run without address-space randomisation: vmscale
    /// runs itself again so before the run (`exec::layout`; wis's
    /// `--aslr off`, as will-it-scale's runner).
    fn fixed_layout(&self) -> bool {
        false
    }
    /// After a failed run of a workload that runs the user's command (cmd):
    /// the code vmscale exits with, the command's own (docs/cmd.md).
    fn exit_code(&self) -> Option<i32> {
        None
    }
}

/// A workload ready to run: what it measures, and its name, figures and
/// configuration.
pub trait Workload: Measure {
    fn name(&self) -> &'static str;
    /// Figures reported; the first is the headline used for stopping rules.
    fn figures(&self) -> Vec<Figure>;
    /// The validated configuration, stored with the run.
    fn config(&self) -> serde_json::Value;
}

/// The `run` subcommand that runs the short suite (beside the registry's
/// workloads; the guest also reads plans for it).
pub const QUICK: &str = "quick";

/// The registry: every workload, in the order `run --help` and the quick
/// suite list them. Adding a workload is a file with its `SPEC` and one
/// line here (see CONTRIBUTING.md).
pub static REGISTRY: &[&Spec] = &[
    &pft_args::SPEC,
    &numa_args::SPEC_NUMA01,
    &numa_args::SPEC_NUMA01_THREADLOCAL,
    &numa_args::SPEC_NUMA02,
    &numa_args::SPEC_NUMA02_SMT,
    &fork::SPEC,
    &churn::SPEC,
    &cmd::SPEC,
    &colour_args::SPEC,
    &c2c::SPEC,
    &atomic::SPEC,
    &lockfan::SPEC,
    &latency::SPEC,
    &wis::SPEC,
    &mmap_lock::SPEC,
    &thp::SPEC,
    &pte::SPEC,
    &vms::SPEC,
    &stressng::SPEC,
];

/// The registered workload of this name (a stored run's `workload`).
pub fn find(name: &str) -> Option<&'static Spec> {
    REGISTRY.iter().copied().find(|s| s.name == name)
}

/// One task's row of a sample (`SampleData::tasks`): its named values.
pub fn task_row<const N: usize>(cells: [(&str, f64); N]) -> BTreeMap<String, f64> {
    cells.into_iter().map(|(k, v)| (k.to_string(), v)).collect()
}

/// Every task's row of a sample: its CPU, and the values `cells` names
/// for its report and its index among `reports`.
pub fn task_rows<'a, const N: usize>(
    reports: &[crate::exec::TaskReport],
    cells: impl Fn(usize, &crate::exec::TaskReport) -> [(&'a str, f64); N],
) -> Vec<BTreeMap<String, f64>> {
    let row = |(i, r): (usize, &crate::exec::TaskReport)| {
        let mut row = task_row(cells(i, r));
        row.insert("cpu".into(), r.cpu as f64);
        row
    };
    reports.iter().enumerate().map(row).collect()
}

/// Refuses an empty task list or a task count of 0.
pub fn check_tasks(tasks: &[usize]) -> Result<()> {
    if tasks.is_empty() || tasks.contains(&0) {
        return Err(Error::Input(
            "--tasks must name at least one task count of 1 or more".into(),
        ));
    }
    if let Some(t) = tasks.iter().find(|&&t| t > crate::limits::MAX_TASKS) {
        return Err(Error::Input(format!(
            "--tasks {t} is out of range: use 1 to {}",
            crate::limits::MAX_TASKS
        )));
    }
    Ok(())
}

/// Refuses a timed sample outside `min`..3600 s, a reading interval under
/// 10 ms, and a per-loop size under one page (`flag` names the option).
pub fn check_timed(
    secs: f64,
    min: f64,
    every: Option<f64>,
    flag: &str,
    bytes: u64,
    page_size: u64,
) -> Result<()> {
    if bytes < page_size {
        return Err(Error::Input(format!(
            "{flag} must be at least one page ({page_size} bytes)"
        )));
    }
    if !(secs >= min && secs <= 3600.0) {
        return Err(Error::Input(format!(
            "--time {secs} is out of range: use {min} to 3600 seconds"
        )));
    }
    if every.is_some_and(|e| e.is_nan() || e < 0.01) {
        return Err(Error::Input("--every must be at least 0.01 seconds".into()));
    }
    Ok(())
}

/// Fails on a bad pin list now, not in the middle of a run: plans the
/// largest task count.
pub fn check_pin(
    pin: &crate::exec::pin::Pin,
    tasks: &[usize],
    machine: &crate::machine::Snapshot,
) -> Result<()> {
    let most = tasks.iter().copied().max().unwrap_or(1);
    crate::exec::pin::plan(pin, most, machine)?;
    Ok(())
}
