//! Rough costs the plan's time estimate is made of (`Workload::sample_s`,
//! summed by runner/estimate.rs and printed before a run and by
//! `--dry-run`). They are a planner's round numbers, set from runs on this
//! project's machines (docs/scale.md), not measurements: every figure a
//! run reports is still measured.

/// Reading vmstat, /proc/stat and meminfo around a sample, and the store.
pub const SAMPLE_S: f64 = 0.01;
/// Starting, pinning and joining one task (thread or process).
pub const TASK_S: f64 = 0.0002;
/// Faulting in and touching memory, bytes per second (about 250,000
/// faults/s of 4 KiB pages; no credit taken for parallel tasks).
pub const TOUCH_BPS: f64 = 1024.0 * 1024.0 * 1024.0;
/// Writing memory already faulted in, bytes per second per task.
pub const MEMSET_BPS: f64 = 4.0 * 1024.0 * 1024.0 * 1024.0;
/// One cache-line hand-off between CPUs (one way; a cross-socket one is
/// 100-300 ns, SMT siblings 10-30 ns).
pub const HANDOFF_S: f64 = 150e-9;
/// An increment or lock operation whose line other tasks also want: the
/// tasks take turns, so their operations add up.
pub const CONTENDED_OP_S: f64 = 50e-9;
/// An increment or critical section on a line of the task's own.
pub const OWN_OP_S: f64 = 5e-9;
/// One dependent load of a pointer chase (a DRAM miss at worst).
pub const LOAD_S: f64 = 100e-9;
/// A command vmscale cannot see into (cmd): its sample takes what it takes.
pub const UNKNOWN_S: f64 = 0.1;

/// Seconds to fault in and touch `bytes`.
pub fn touch_s(bytes: u64) -> f64 {
    bytes as f64 / TOUCH_BPS
}

/// Seconds to start and join `tasks` tasks.
pub fn tasks_s(tasks: usize) -> f64 {
    tasks as f64 * TASK_S
}

/// The estimate of a sample that touches `bytes` with `tasks` tasks: what
/// a workload without a model of its own is planned by.
pub fn default_s(bytes: u64, tasks: usize) -> f64 {
    SAMPLE_S + tasks_s(tasks) + touch_s(bytes)
}

/// A timed sample of `secs` seconds with `tasks` tasks.
pub fn timed_s(secs: f64, tasks: usize) -> f64 {
    SAMPLE_S + tasks_s(tasks) + secs
}
