//! The data model every layer shares: cases, figures, samples and stored
//! runs. It imports nothing of vmscale, so store, stats, report and
//! workloads can all speak it. `build` makes them for tests.

pub mod build;

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// One configuration measured repeatedly: a task count, a workload variant,
/// and the kernel knob values set while it runs (empty unless `--knob`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Case {
    pub tasks: usize,
    /// Workload-defined variant, e.g. "fault" or "populate".
    pub variant: String,
    /// Knob name -> value for A/B runs.
    #[serde(default)]
    pub knobs: BTreeMap<String, String>,
}

impl Case {
    pub fn new(tasks: usize, variant: &str) -> Case {
        Case {
            tasks,
            variant: variant.to_string(),
            knobs: BTreeMap::new(),
        }
    }

    /// Each variant in turn at every task count of `tasks`: a workload's
    /// cases in the order they run.
    pub fn grid<V: AsRef<str>>(
        variants: impl IntoIterator<Item = V>,
        tasks: &[usize],
    ) -> Vec<Case> {
        variants
            .into_iter()
            .flat_map(|v| tasks.iter().map(move |&t| Case::new(t, v.as_ref())))
            .collect()
    }

    /// The same case under other knob values.
    pub fn with_knobs(&self, knobs: BTreeMap<String, String>) -> Case {
        Case {
            knobs,
            ..self.clone()
        }
    }

    /// The stable key a case is stored under: "variant/tasks[/k=v,...]".
    pub fn key(&self) -> String {
        let mut k = format!("{}/{}", self.variant, self.tasks);
        if !self.knobs.is_empty() {
            k.push('/');
            k.push_str(&self.knobs_label());
        }
        k
    }

    /// "k=v,k2=v2", or "" without knobs.
    pub fn knobs_label(&self) -> String {
        self.knobs
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join(",")
    }
}

/// Which direction of a figure is an improvement.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Better {
    Higher,
    Lower,
}

/// A figure a workload reports, with what it takes to compare it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Figure {
    pub name: String,
    pub unit: String,
    pub better: Better,
    /// Rates are averaged harmonically and tested on logs.
    pub rate: bool,
}

impl Figure {
    pub fn new(name: &str, unit: &str, better: Better, rate: bool) -> Figure {
        Figure {
            name: name.into(),
            unit: unit.into(),
            better,
            rate,
        }
    }
}

/// What one sample measured: named figures for the whole sample and per task.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SampleData {
    pub figures: BTreeMap<String, f64>,
    pub tasks: Vec<BTreeMap<String, f64>>,
}

/// How a run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    Running,
    Complete,
    Incomplete,
    Failed,
}

impl Status {
    pub fn as_str(&self) -> &'static str {
        match self {
            Status::Running => "running",
            Status::Complete => "complete",
            Status::Incomplete => "incomplete",
            Status::Failed => "failed",
        }
    }

    /// A status as stored; None for an unknown word, which the store
    /// reports as a damaged row (it was once read as `running`).
    pub fn parse(s: &str) -> Option<Status> {
        match s {
            "running" => Some(Status::Running),
            "complete" => Some(Status::Complete),
            "incomplete" => Some(Status::Incomplete),
            "failed" => Some(Status::Failed),
            _ => None,
        }
    }
}

/// A run's description as stored.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunMeta {
    pub id: i64,
    pub label: Option<String>,
    pub workload: String,
    pub command_line: String,
    pub version: String,
    pub config: serde_json::Value,
    pub figures: Vec<Figure>,
    pub machine: serde_json::Value,
    pub knobs: serde_json::Value,
    pub started_at: String,
    pub ended_at: Option<String>,
    pub status: Status,
    /// Why sampling stopped (fixed count, precision reached, ...), or why it failed.
    pub note: Option<String>,
    /// "measured", or "imported" with a provenance.
    pub origin: String,
}

impl RunMeta {
    /// A complete measured run of `workload` with `config` and nothing
    /// else recorded: for building runs in tests and renderers' examples.
    pub fn bare(id: i64, workload: &str, config: serde_json::Value) -> RunMeta {
        RunMeta {
            id,
            label: None,
            workload: workload.into(),
            command_line: String::new(),
            version: String::new(),
            config,
            figures: Vec::new(),
            machine: serde_json::Value::Null,
            knobs: serde_json::Value::Null,
            started_at: String::new(),
            ended_at: None,
            status: Status::Complete,
            note: None,
            origin: "measured".into(),
        }
    }

    /// Whether the run's clock was a guest's instruction count (`vmscale
    /// guest --accel icount`): its seconds are not time, so it compares
    /// with icount runs only.
    pub fn under_icount(&self) -> bool {
        self.machine["guest"]["accel"] == "icount"
    }
}

/// The noise key holding the round of the boot a guest run's sample was
/// taken in (`vmscale guest --rounds`, written by guest/pool.rs): kernels
/// boot in turn A B A B, so a round is the pairing unit between the runs
/// of one guest session. Here, not in guest/, because stats pairs on it.
pub const GUEST_ROUND: &str = "guest_round";

/// One stored sample.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Sample {
    pub seq: i64,
    pub warmup: bool,
    pub taken_at: String,
    pub data: SampleData,
    /// Full /proc/vmstat delta over the sample (non-zero counters).
    pub vmstat: BTreeMap<String, i64>,
    /// Noise accounting (other CPU time, steal), when measured.
    pub noise: BTreeMap<String, f64>,
    pub flagged: bool,
}

/// A case with its samples, in run order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CaseSamples {
    pub case: Case,
    pub samples: Vec<Sample>,
}

impl CaseSamples {
    /// Samples that count (warm-ups excluded).
    pub fn measured(&self) -> impl Iterator<Item = &Sample> {
        self.samples.iter().filter(|s| !s.warmup)
    }

    /// The measured samples' values of one figure, in order (a sample
    /// without it is passed over).
    pub fn values(&self, figure: &str) -> impl Iterator<Item = f64> {
        self.measured()
            .filter_map(move |s| s.data.figures.get(figure).copied())
    }
}

/// A run with everything it measured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Run {
    pub meta: RunMeta,
    pub cases: Vec<CaseSamples>,
}

impl Run {
    /// The cases' distinct knob settings ([`Case::knobs_label`]), in the
    /// order they first appear.
    pub fn knob_settings(&self) -> Vec<String> {
        let mut settings: Vec<String> = Vec::new();
        for c in &self.cases {
            let k = c.case.knobs_label();
            if !settings.contains(&k) {
                settings.push(k);
            }
        }
        settings
    }
}

#[cfg(test)]
mod tests {
    use super::Case;

    #[test]
    fn a_grid_runs_each_variant_at_every_task_count() {
        let cases = Case::grid(["a", "b"], &[1, 4]);
        let got: Vec<(usize, &str)> = cases.iter().map(|c| (c.tasks, &*c.variant)).collect();
        assert_eq!(got, [(1, "a"), (4, "a"), (1, "b"), (4, "b")]);
        assert!(Case::grid(["a"], &[]).is_empty());
    }
}
