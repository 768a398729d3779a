//! atomic (seeds 000, 002): the cost of counting. Each task adds 1 to a
//! counter `ops` times: (shared) one atomic counter for all tasks (lock
//! xadd); (folded) a per-task counter in its own cache line, folded into a
//! global every K increments, the rss-delta scheme of seed 000; (packed)
//! per-task counters packed into shared cache lines (false sharing);
//! (locked) an uncontended lock xadd on the task's own line; (plain) a plain
//! increment of the task's own line. Final counter values are read back
//! and checked against the increments the tasks report.

use std::sync::atomic::Ordering;

use super::stored::{Text, view_struct};
use super::values::task_values;
use serde::{Deserialize, Serialize};

use super::region::Region;
use super::{Case, Measure, SampleData, Workload};
use crate::exec::{self, Mode, Task, TaskReport, clock};
use crate::machine::Snapshot;

use super::options::{name, variant};
use super::placement::{Placed, Placement};
use super::spec::{Env, Options, Spec};
use crate::error::{Error, Result};

/// atomic in the registry (`workload::REGISTRY`).
pub const SPEC: Spec = Spec {
    name: "atomic",
    about: "The cost of counting: shared, folded, packed, locked and plain counters",
    examples: "Examples:\n  vmscale run atomic --tasks auto\n  \
vmscale run atomic --variant shared,folded --fold 64 --ops 5000000\n  \
vmscale run atomic --tasks 1,2 --mode process",
    mode: Some(Mode::Thread),
    figures: super::ops::FIGURES,
    report: super::Report::Atomic,
    size_flags: "fewer --tasks or CPUs",
    quick,
    ..Spec::of::<Args>()
};

/// Which counter the tasks increment: a case's variant (`--variant`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Variant {
    /// One atomic counter for all tasks (lock xadd)
    Shared,
    /// A counter of the task's own, folded into a global every K
    Folded,
    /// The tasks' counters packed into shared cache lines
    Packed,
    /// An uncontended lock xadd on the task's own line
    Locked,
    /// A plain increment of the task's own line
    Plain,
}

/// Counters meant to be apart sit 128 bytes apart: adjacent-line
/// prefetchers move 64-byte lines in pairs.
const APART: usize = 128;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Config {
    #[serde(flatten)]
    pub place: Placed,
    pub variants: Vec<Variant>,
    /// Increments per task.
    pub ops: u64,
    /// Folded variant: increments between folds into the global.
    pub fold: u64,
}

view_struct! {
    /// What the atomic report prints of a stored run's configuration.
    pub struct Stored {
        pub mode: Text,
        pub ops: Text,
        pub fold: Text,
    }
}

pub struct Atomic {
    cfg: Config,
    machine: Snapshot,
}

impl Atomic {
    pub fn new(cfg: Config, machine: Snapshot) -> Result<Atomic> {
        cfg.place.check(&machine)?;
        if cfg.variants.is_empty() {
            return Err(Error::Input(
                "--variant needs one of shared, folded, packed, locked, plain".into(),
            ));
        }
        if cfg.ops == 0 {
            return Err(Error::Input("--ops must be at least 1".into()));
        }
        if cfg.fold == 0 {
            return Err(Error::Input(
                "--fold must be at least 1 (fold every K increments)".into(),
            ));
        }
        Ok(Atomic { cfg, machine })
    }
}

/// Where each counter lives in the shared region.
struct Layout {
    tasks: usize,
}

impl Layout {
    const SHARED: usize = 0;
    const GLOBAL: usize = APART;
    fn own(&self, i: usize) -> usize {
        (2 + i) * APART
    }
    /// Eight 8-byte counters to a 64-byte line.
    fn packed(&self, i: usize) -> usize {
        (2 + self.tasks) * APART + i * 8
    }
    fn bytes(&self) -> usize {
        (2 + self.tasks) * APART + self.tasks.div_ceil(8) * 64
    }
}

/// `run quick`: every variant at 200000 operations a task.
pub fn quick(m: &Snapshot) -> Vec<Vec<String>> {
    let ops = super::options::quick_ops(m, 200_000, 1000);
    vec![super::options::with_quick_tasks(m, &format!("--ops {ops}"))]
}

// `vmscale run atomic`'s options; the harness options are added beside them.
#[derive(clap::Args, Debug, Clone)]
pub struct Args {
    #[command(flatten)]
    pub place: Placement,
    /// Counters (comma-separated)
    #[arg(
        long,
        value_enum,
        value_delimiter = ',',
        default_value = "shared,folded,packed,locked,plain"
    )]
    pub variant: Vec<Variant>,
    /// Increments per task
    #[arg(long, default_value_t = 2_000_000)]
    pub ops: u64,
    /// Folded counters: increments between folds into the global
    #[arg(long, default_value_t = 64, value_name = "K")]
    pub fold: u64,
}

impl Options for Args {
    fn build(&self, env: &Env) -> Result<Box<dyn Workload>> {
        let (a, m) = (self, env.machine);
        let cfg = Config {
            place: a.place.resolve(m)?,
            variants: a.variant.clone(),
            ops: a.ops,
            fold: a.fold,
        };
        env.made(cfg, |cfg| Atomic::new(cfg, m.clone()))
    }
}

impl Measure for Atomic {
    fn sample_s(&self, case: &Case) -> f64 {
        use super::cost::{CONTENDED_OP_S, OWN_OP_S, SAMPLE_S, tasks_s};
        // Tasks on one line take turns; on their own lines they overlap.
        let ops = self.cfg.ops as f64;
        let op = match variant::<Variant>(case) {
            Ok(Variant::Shared | Variant::Packed) => CONTENDED_OP_S * case.tasks as f64,
            _ => OWN_OP_S * 4.0,
        };
        SAMPLE_S + tasks_s(case.tasks) + ops * op
    }

    fn cases(&self) -> Vec<Case> {
        Case::grid(self.cfg.variants.iter().map(name), &self.cfg.place.tasks)
    }

    fn memory_need(&self) -> u64 {
        let most = self.cfg.place.most();
        Layout { tasks: most }.bytes() as u64
    }

    fn sample(&self, case: &Case) -> Result<SampleData> {
        let layout = Layout { tasks: case.tasks };
        let region = Region::shared(layout.bytes())?;
        let cpus = exec::pin::plan(&self.cfg.place.pin, case.tasks, &self.machine)?;
        let (ops, fold) = (self.cfg.ops, self.cfg.fold);
        let variant = variant::<Variant>(case)?;
        let outcome = exec::run_tasks(self.cfg.place.mode, &cpus, |task| {
            count_task(task, &region, &layout, variant, ops, fold)
        })?;
        let reports = &outcome.reports;
        exec::first_error(reports)?;
        let counted: u64 = match variant {
            Variant::Shared => region.u64_at(Layout::SHARED).load(Ordering::Acquire),
            Variant::Folded => region.u64_at(Layout::GLOBAL).load(Ordering::Acquire),
            Variant::Packed => (0..case.tasks)
                .map(|i| region.u64_at(layout.packed(i)).load(Ordering::Acquire))
                .sum(),
            _ => (0..case.tasks)
                .map(|i| region.u64_at(layout.own(i)).load(Ordering::Acquire))
                .sum(),
        };
        let mut d = super::ops::counted_figures(reports, V::Done as usize, "increments", counted);
        d.figures.insert(
            "folds".into(),
            reports.iter().map(|r| r.values[V::Folds]).sum(),
        );
        Ok(d)
    }
}

task_values! {
    /// What each task reports in its values.
    enum V {
        Done,
        Folds,
    }
}

fn count_task(
    task: &Task,
    region: &Region,
    layout: &Layout,
    variant: Variant,
    ops: u64,
    fold: u64,
) -> TaskReport {
    let mut r = TaskReport::default();
    let own = region.u64_at(layout.own(task.index));
    let packed = region.u64_at(layout.packed(task.index));
    let shared = region.u64_at(Layout::SHARED);
    let global = region.u64_at(Layout::GLOBAL);
    task.wait_start();
    let before = task.usage();
    r.start_ns = clock::monotonic_ns();
    let mut folds = 0u64;
    match variant {
        Variant::Shared => {
            for _ in 0..ops {
                shared.fetch_add(1, Ordering::Relaxed);
            }
        }
        Variant::Folded => {
            for i in 1..=ops {
                // A plain increment of a line only this task writes.
                own.store(own.load(Ordering::Relaxed) + 1, Ordering::Relaxed);
                if i % fold == 0 {
                    global.fetch_add(own.swap(0, Ordering::Relaxed), Ordering::Relaxed);
                    folds += 1;
                }
            }
            let rest = own.swap(0, Ordering::Relaxed);
            if rest > 0 {
                global.fetch_add(rest, Ordering::Relaxed);
                folds += 1;
            }
        }
        Variant::Packed => {
            for _ in 0..ops {
                packed.store(packed.load(Ordering::Relaxed) + 1, Ordering::Relaxed);
            }
        }
        Variant::Locked => {
            for _ in 0..ops {
                own.fetch_add(1, Ordering::Relaxed);
            }
        }
        Variant::Plain => {
            for _ in 0..ops {
                own.store(own.load(Ordering::Relaxed) + 1, Ordering::Relaxed);
            }
        }
    }
    r.end_ns = clock::monotonic_ns();
    r.set_usage(&task.usage().since(&before));
    r.values[V::Done] = ops as f64;
    r.values[V::Folds] = folds as f64;
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(variant: Variant, tasks: usize, ops: u64, fold: u64) -> SampleData {
        let m = crate::machine::live();
        let a = Atomic::new(
            Config {
                place: Placed {
                    tasks: vec![tasks],
                    mode: Mode::Thread,
                    pin: crate::exec::pin::Pin::None,
                },
                variants: vec![variant],
                ops,
                fold,
            },
            m,
        )
        .unwrap();
        a.sample(&Case::new(tasks, &name(&variant))).unwrap()
    }

    #[test]
    fn shared_counter_counts_every_increment() {
        let d = run(Variant::Shared, 3, 20_000, 1);
        assert_eq!(d.figures["counted"], 60_000.0);
        assert_eq!(d.figures["lost"], 0.0);
    }

    #[test]
    fn folded_total_equals_increments() {
        // 10_007 is not a multiple of the fold, so the remainder fold is tested.
        let d = run(Variant::Folded, 3, 10_007, 64);
        assert_eq!(d.figures["counted"], 30_021.0);
        assert_eq!(d.figures["folds"], 3.0 * (10_007u64.div_ceil(64)) as f64);
    }

    #[test]
    fn every_variant_counts_exactly() {
        for v in [Variant::Packed, Variant::Locked, Variant::Plain] {
            let d = run(v, 2, 5_000, 16);
            assert_eq!(d.figures["counted"], 10_000.0, "{v:?}");
        }
    }
}
