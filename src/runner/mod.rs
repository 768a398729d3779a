//! Running a workload: a run session (`session`: the store row, the knob
//! session, signals and restoring, around) the repetitions (`execute`:
//! warm-up, samples per case by a fixed count or adaptive stopping, knob
//! variants interleaved A B A B), vmstat deltas and noise accounting around
//! each sample (`sample`), every sample written to the store as soon as it
//! is taken, and the note that says how the run ended (`note`).

pub mod estimate;
mod execute;
mod note;
mod sample;
mod session;
#[cfg(test)]
mod tests;

use std::collections::BTreeMap;
use std::time::Duration;

use crate::model::{Case, Status};
use crate::stats::stopping::Rule;

pub use execute::execute;
pub use note::percent;
pub use session::{KnobSetup, Session, Setup};

pub use crate::stats::stopping::{DEFAULT_MAX_TIME, DEFAULT_WARMUP, MIN_REPS, default_max_time};

/// How many samples to take.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Reps {
    /// Exactly this many measured samples per case.
    Fixed(usize),
    /// Until the headline figure's mean is known to the rule's precision.
    Adaptive(Rule),
}

/// Per-sample accounting and knob variants.
#[derive(Debug, Clone, PartialEq)]
pub struct Options {
    /// A sample is flagged when others used more than this share of the
    /// machine's CPU capacity during it (0.05 = 5 %).
    pub noise_threshold: f64,
    /// Wait up to this long for a quiet machine before each sample.
    pub wait_quiet: Option<Duration>,
    /// Knob values of each variant; empty (or one empty map) for none.
    pub combos: Vec<BTreeMap<String, String>>,
    /// Profile and lock recording beside each measured sample.
    pub probes: crate::probes::Request,
    /// Times every case is visited, each visit with its own warm-up and
    /// samples (counts and limits per visit), its samples tagged with the
    /// visit in `noise["invocation"]` when there is more than one
    /// (docs/repetitions.md, "Invocations").
    pub invocations: usize,
    /// /proc/meminfo fields read during each sample, their means kept as
    /// figures (`monitor::meminfo`).
    pub meminfo: Vec<crate::monitor::meminfo::Field>,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            noise_threshold: 0.05,
            wait_quiet: None,
            combos: Vec::new(),
            probes: crate::probes::Request::default(),
            invocations: 1,
            meminfo: Vec::new(),
        }
    }
}

/// The cases a run stores: each workload case once per knob combination,
/// combinations adjacent (the order they are sampled and printed).
pub fn expand_cases(cases: &[Case], combos: &[BTreeMap<String, String>]) -> Vec<Case> {
    if combos.iter().all(|c| c.is_empty()) {
        return cases.to_vec();
    }
    cases
        .iter()
        .flat_map(|c| combos.iter().map(|k| c.with_knobs(k.clone())))
        .collect()
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Plan {
    /// Warm-up samples taken and stored, but excluded from figures.
    pub warmup: usize,
    pub reps: Reps,
}

/// How the run ended and why.
pub struct Ending {
    pub status: Status,
    pub note: String,
}

/// Receives progress; the command decides whether to draw it.
pub trait Progress {
    fn start(&self, total: u64);
    fn step(&self, message: &str);
    /// What runs now, without a unit done.
    fn note(&self, _message: &str) {}
    fn finish(&self);
    /// More samples than planned: an adaptive case keeps sampling.
    fn grow(&self, _more: u64) {}
    /// A line for the user while the run goes on (the store went away).
    fn say(&self, line: &str) {
        eprintln!("vmscale: {line}");
    }
}
