//! `--time` and `--every`: how long each sample of a timed workload runs
//! and how often each task reads its count meanwhile (churn, wis). One
//! set of options, flattened into the workload's options and, as given,
//! into its `Config` (stored as `secs` and `every`).

use serde::{Deserialize, Serialize};

#[derive(clap::Args, Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Timed {
    /// Seconds per sample
    #[arg(long = "time", value_name = "TIME", default_value_t = 1.0)]
    pub secs: f64,
    /// Seconds between each task's readings of its count
    #[arg(long, default_value_t = 0.25)]
    pub every: f64,
}

impl Timed {
    /// The plan's estimate of one sample with `tasks` tasks.
    pub fn sample_s(&self, tasks: usize) -> f64 {
        super::cost::timed_s(self.secs, tasks)
    }
}
