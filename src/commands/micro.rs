//! Options of the micro-benchmarks (c2c, atomic, lockfan, latency) turned
//! into validated workloads.

use super::{Error, Result};
use crate::cli::{AtomicArgs, C2cArgs, LatencyArgs, LockfanArgs};
use crate::exec::{Mode, pin::Pin};
use crate::machine::{Snapshot, cpulist};
use crate::parse;
use crate::workload::{atomic, c2c, latency, lockfan};

use crate::error::input;

fn list(text: &str) -> Vec<String> {
    text.split(',')
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .collect()
}

pub fn c2c_from_args(a: &C2cArgs, m: &Snapshot) -> Result<c2c::C2c> {
    let cpus = a
        .cpus
        .as_deref()
        .map(|t| {
            cpulist::parse(t).map_err(|e| format!("--cpus '{t}': {e}; use a CPU list like 0-3,8"))
        })
        .transpose();
    input(c2c::C2c::new(
        input(cpus)?,
        list(&a.variant),
        a.fresh_line,
        a.rounds,
        a.batches,
        m,
    ))
}

pub fn atomic_from_args(a: &AtomicArgs, m: &Snapshot) -> Result<atomic::Atomic> {
    let cfg = atomic::Config {
        tasks: input(parse::tasks(&a.tasks, m.cpus.len().max(1)))?,
        mode: input(a.mode.parse::<Mode>())?,
        pin: input(a.pin.parse::<Pin>())?,
        variants: list(&a.variant),
        ops: a.ops,
        fold: a.fold,
    };
    input(atomic::Atomic::new(cfg, m.clone()))
}

pub fn lockfan_from_args(a: &LockfanArgs, m: &Snapshot) -> Result<lockfan::Lockfan> {
    let locks = parse::tasks(&a.locks, 256).map_err(|e| {
        e.to_string()
            .replace("--tasks", "--locks")
            .replace("tasks", "locks")
    });
    let cfg = lockfan::Config {
        tasks: input(parse::tasks(&a.tasks, m.cpus.len().max(1)))?,
        mode: input(a.mode.parse::<Mode>())?,
        pin: input(a.pin.parse::<Pin>())?,
        locks: input(locks)?,
        kinds: list(&a.kind),
        ops: a.ops,
        lines: a.lines,
    };
    input(lockfan::Lockfan::new(cfg, m.clone()))
}

pub fn latency_from_args(a: &LatencyArgs, m: &Snapshot) -> Result<latency::Latency> {
    let min = input(parse::size_arg("--min", &a.min))?;
    let max = match &a.max {
        Some(t) => input(parse::size_arg("--max", t))?,
        None => {
            // Twice the LLC brackets its step and keeps a default run
            // within a minute (the largest sizes cost most per sample).
            let llc = m.llc().and_then(|c| c.size_bytes).unwrap_or(32 << 20);
            (2 * llc).next_power_of_two()
        }
    };
    if max < min {
        return Err(Error::Input(format!(
            "--max {} is below --min {}: raise --max",
            parse::format_size(max),
            parse::format_size(min)
        )));
    }
    let cfg = latency::Config {
        sizes: latency::doubling_sizes(min, max),
        pages: list(&a.pages),
        loads: a.loads,
        pin: input(a.pin.parse::<Pin>())?,
        line_size: super::run::line_size(m),
        thp_size: m.thp_pmd_size.unwrap_or(2 << 20),
    };
    input(latency::Latency::new(cfg, m.clone()))
}
