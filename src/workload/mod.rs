//! Workloads: one module each, registered in one table. A workload turns a
//! case (task count, variant) into one measured sample.

pub mod atomic;
pub mod c2c;
pub mod churn;
pub mod cmd;
pub mod colour;
mod colour_data;
pub mod fault_map;
pub mod fork;
pub mod latency;
pub mod lockfan;
pub mod mmap_lock;
pub mod numa;
mod ops;
pub mod pft;
pub mod region;
pub mod wis;

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
        "numa01",
        "autonumabench numa01: 2 processes share a region first touched on one node",
    ),
    (
        "numa01-threadlocal",
        "autonumabench numa01, each thread zeroing only its own slice",
    ),
    (
        "numa02",
        "autonumabench numa02: one thread per CPU zeroes its slice of a private region",
    ),
    ("numa02-smt", "autonumabench numa02 with half the threads"),
    (
        "fork",
        "fork over a populated mapping, children write K pages and exit",
    ),
    ("churn", "timed mmap/touch/munmap loop: zfod faults/s"),
    (
        "cmd",
        "any external command under the harness: times, faults, disk",
    ),
    (
        "colour",
        "page colours of memory tasks allocate in parallel (Steiner's per-CPU list skew)",
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
    (
        "wis",
        "will-it-scale's VM tests: page faults, mmap, brk, malloc, TLB flushes",
    ),
    (
        "mmap-lock",
        "faults in N threads while M threads change the address space",
    ),
];

/// Refuses an empty task list or a task count of 0.
pub fn check_tasks(tasks: &[usize]) -> Result<(), String> {
    if tasks.is_empty() || tasks.contains(&0) {
        return Err("--tasks must name at least one task count of 1 or more".into());
    }
    if let Some(t) = tasks.iter().find(|&&t| t > crate::limits::MAX_TASKS) {
        return Err(format!(
            "--tasks {t} is out of range: use 1 to {}",
            crate::limits::MAX_TASKS
        ));
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
) -> Result<(), String> {
    if bytes < page_size {
        return Err(format!(
            "{flag} must be at least one page ({page_size} bytes)"
        ));
    }
    if !(secs >= min && secs <= 3600.0) {
        return Err(format!(
            "--time {secs} is out of range: use {min} to 3600 seconds"
        ));
    }
    if every.is_some_and(|e| e.is_nan() || e < 0.01) {
        return Err("--every must be at least 0.01 seconds".into());
    }
    Ok(())
}

/// Fails on a bad pin list now, not in the middle of a run: plans the
/// largest task count.
pub fn check_pin(
    pin: &crate::exec::pin::Pin,
    tasks: &[usize],
    machine: &crate::machine::Snapshot,
) -> Result<(), String> {
    let most = tasks.iter().copied().max().unwrap_or(1);
    crate::exec::pin::plan(pin, most, machine).map(|_| ())
}
