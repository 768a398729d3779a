//! The options every run shares (`Harness`, as clap typed them) turned
//! once into what a run needs (`RunOptions`): the runner's plan (fixed or
//! adaptive repetitions), the knob plan, and the runner's options (noise,
//! knob variants, probes), each checked. Everything after takes these.

use std::time::Duration;

use super::{Error, Result};
use crate::cli::Harness;
use crate::runner::{self, Plan, Reps};

/// A run's options, built once from the harness options.
#[derive(Debug, Clone)]
pub(crate) struct RunOptions {
    /// Samples per case: fixed or adaptive.
    pub plan: Plan,
    /// `--max-time`: the budget of all samples of the run.
    pub max_time: Duration,
    /// `--knob`: the knobs the user varies and their values.
    pub knobs: crate::knobs::Plan,
    /// Noise, knob variants, probes, invocations.
    pub runner: runner::Options,
}

impl RunOptions {
    /// The options of a `vmscale run NAME`.
    pub(crate) fn of(h: &Harness) -> Result<RunOptions> {
        RunOptions::with(h, DEFAULT_MAX_REPS)
    }

    /// The options with `default_max_reps` where `--max-reps` is not
    /// given (`run quick` stops sooner).
    pub(crate) fn with(h: &Harness, default_max_reps: usize) -> Result<RunOptions> {
        let knobs = crate::knobs::Plan::parse(&h.knob)?;
        Ok(RunOptions {
            plan: plan_with(h, default_max_reps)?,
            max_time: h.max_time,
            runner: runner::Options {
                noise_threshold: h.noise_threshold,
                wait_quiet: h.wait_quiet.then(|| Duration::from_secs(30)),
                combos: knobs.combos(),
                probes: crate::probes::Request {
                    hz: h.profile,
                    locks: h.lock_stats,
                },
                invocations: h.invocations.into(),
                meminfo: h.meminfo.clone(),
            },
            knobs,
        })
    }
}

/// No count by default: a case short of --precision samples until the
/// time budget is spent.
const DEFAULT_MAX_REPS: usize = usize::MAX;
/// `run quick` stops adaptive sampling sooner, to stay quick.
pub(crate) const QUICK_MAX_REPS: usize = 5;

/// The plan from the harness options: `--reps N` fixed, else adaptive.
fn plan_with(h: &Harness, default_max_reps: usize) -> Result<Plan> {
    if h.reps == Some(0) {
        return Err(Error::Input(
            "--reps 0 takes no samples: use 1 or more".into(),
        ));
    }
    if h.max_reps == Some(0) {
        return Err(Error::Input(
            "--max-reps 0 takes no samples: use 1 or more".into(),
        ));
    }
    let reps = match h.reps {
        Some(n) => Reps::Fixed(n),
        None => Reps::Adaptive(crate::stats::stopping::Rule {
            precision: h.precision,
            min_reps: crate::runner::MIN_REPS,
            max_reps: h.max_reps.unwrap_or(default_max_reps),
            max_time: h.max_time,
        }),
    };
    Ok(Plan {
        warmup: h.warmup,
        reps,
    })
}
