//! `--tasks`, `--mode` and `--pin`: how many tasks a workload runs, as
//! threads or processes, on which CPUs. One set of options, flattened into
//! each workload that places its tasks; the default `--mode` is the
//! workload's `Spec::mode`.

use serde::{Deserialize, Serialize};

use crate::error::Result;
use crate::exec::{Mode, pin::Pin};
use crate::machine::Snapshot;

#[derive(clap::Args, Debug, Clone)]
pub struct Placement {
    /// Task counts: a list (1,2,4), a range (1-8) or auto (1, 2, 4, ... online CPUs)
    #[arg(long, default_value = "auto")]
    pub tasks: String,
    /// Tasks as threads of one process or as processes
    #[arg(long, value_enum, required = false)]
    pub mode: Mode,
    #[command(flatten)]
    pub pinning: Pinning,
}

/// `--pin` alone, for a workload that places its tasks but runs them one
/// way only (thp).
#[derive(clap::Args, Debug, Clone)]
pub struct Pinning {
    /// Placement: compact, spread, none, or a CPU list like 0-3,8
    #[arg(long, default_value = "compact")]
    pub pin: Pin,
}

impl Placement {
    /// The task counts `--tasks` names on this machine.
    pub fn tasks(&self, m: &Snapshot) -> Result<Vec<usize>> {
        super::options::tasks(&self.tasks, m)
    }

    /// The options resolved on this machine, for the workload's `Config`.
    pub fn resolve(&self, m: &Snapshot) -> Result<Placed> {
        Ok(Placed {
            tasks: self.tasks(m)?,
            mode: self.mode,
            pin: self.pinning.pin.clone(),
        })
    }
}

/// A `Placement` resolved: flattened into the workload's `Config`, so the
/// stored configuration keeps its `tasks`, `mode` and `pin` keys.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Placed {
    pub tasks: Vec<usize>,
    pub mode: Mode,
    pub pin: Pin,
}

impl Placed {
    /// Refuses no task count, a count of 0 or over the limit, and a pin
    /// list that cannot place the largest count on `machine`.
    pub fn check(&self, machine: &Snapshot) -> Result<()> {
        super::check_tasks(&self.tasks)?;
        super::check_pin(&self.pin, &self.tasks, machine)
    }

    /// The largest task count.
    pub fn most(&self) -> usize {
        self.tasks.iter().copied().max().unwrap_or(1)
    }
}
