//! Workloads: one module each, registered in one table. A workload turns a
//! case (task count, variant) into one measured sample.

pub mod atomic;
pub mod c2c;
pub mod latency;
pub mod lockfan;
pub mod pft;
pub mod region;

pub use crate::model::{Better, Case, Figure, SampleData};

/// A workload ready to run: validated configuration, cases, and the sampler.
pub trait Workload {
    fn name(&self) -> &'static str;
    /// The validated configuration, stored with the run.
    fn config(&self) -> serde_json::Value;
    /// Cases in the order they are run and printed.
    fn cases(&self) -> Vec<Case>;
    /// Figures reported; the first is the headline used for stopping rules.
    fn figures(&self) -> Vec<Figure>;
    /// Peak memory one sample needs, in bytes, for the safety check.
    fn memory_need(&self) -> u64;
    /// Runs one sample of `case`.
    fn sample(&self, case: &Case) -> Result<SampleData, String>;
}

/// The registry: every workload's name and one-line description.
pub const REGISTRY: &[(&str, &str)] = &[
    (
        "pft",
        "anonymous write faults by N tasks released together (Lameter's pft)",
    ),
    (
        "c2c",
        "cache-line hand-off latency between every pair of CPUs (ping-pong)",
    ),
    (
        "atomic",
        "the cost of counting: shared, folded, packed, locked and plain counters",
    ),
    (
        "lockfan",
        "short critical sections on one lock versus the same work hashed over K locks",
    ),
    (
        "latency",
        "dependent-load latency by working-set size, base pages and THP",
    ),
];
