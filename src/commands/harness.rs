//! The options every run shares (`Harness`) turned into the runner's
//! plan (fixed or adaptive repetitions) and options (noise, knobs,
//! probes), each checked.

use super::{Error, Result};
use crate::cli::Harness;
use crate::parse;
use crate::runner::{self, Plan, Reps};

pub(crate) fn plan(h: &Harness) -> Result<Plan> {
    plan_with(h, DEFAULT_MAX_REPS)
}

/// No count by default: a case short of --precision samples until the
/// time budget is spent.
const DEFAULT_MAX_REPS: usize = usize::MAX;
/// `run quick` stops adaptive sampling sooner, to stay quick.
pub(crate) const QUICK_MAX_REPS: usize = 5;

/// The plan from the harness options: `--reps N` fixed, else adaptive.
pub(crate) fn plan_with(h: &Harness, default_max_reps: usize) -> Result<Plan> {
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
    let precision = parse::percent(&h.precision).map_err(|e| e.context("--precision"))?;
    let max_time = parse::duration(&h.max_time).map_err(|e| e.context("--max-time"))?;
    let reps = match h.reps {
        Some(n) => Reps::Fixed(n),
        None => Reps::Adaptive(crate::stats::stopping::Rule {
            precision,
            min_reps: MIN_REPS,
            max_reps: h.max_reps.unwrap_or(default_max_reps),
            max_time,
        }),
    };
    Ok(Plan {
        warmup: h.warmup,
        reps,
    })
}

/// Adaptive stopping never trusts a CI of fewer samples than this.
const MIN_REPS: usize = 3;

/// Noise and knob options from the harness, validated.
pub(crate) fn options(h: &Harness, knobs: &crate::knobs::Plan) -> Result<runner::Options> {
    let threshold =
        parse::percent(&h.noise_threshold).map_err(|e| e.context("--noise-threshold"))?;
    Ok(runner::Options {
        noise_threshold: threshold,
        wait_quiet: h.wait_quiet.then(|| std::time::Duration::from_secs(30)),
        combos: knobs.combos(),
        probes: probes(h),
        invocations: h.invocations.into(),
    })
}

/// What `--profile` and `--lock-stats` ask to record.
fn probes(h: &Harness) -> crate::probes::Request {
    crate::probes::Request {
        hz: h.profile,
        locks: h.lock_stats,
    }
}
