//! Repetitions: warm-up, samples per case, vmstat deltas around each
//! sample, every sample written to the store as soon as it is taken.

use crate::exec::signals;
use crate::model::{Case, Sample, Status};
use crate::monitor::vmstat;
use crate::store::Store;
use crate::workload::Workload;

/// How many samples to take.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Reps {
    /// Exactly this many measured samples per case.
    Fixed(usize),
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
    fn finish(&self);
}

/// Runs every case of `workload` per `plan`, storing each sample under `run_id`.
pub fn execute(
    store: &mut Store,
    run_id: i64,
    workload: &dyn Workload,
    plan: &Plan,
    progress: &dyn Progress,
) -> Result<Ending, String> {
    let Reps::Fixed(reps) = plan.reps;
    let cases = workload.cases();
    progress.start((cases.len() * (plan.warmup + reps)) as u64);
    for case in &cases {
        for seq in 0..(plan.warmup + reps) {
            if let Some(sig) = signals::caught() {
                progress.finish();
                return Ok(Ending {
                    status: Status::Incomplete,
                    note: format!("interrupted by {}", signals::name(sig)),
                });
            }
            let warmup = seq < plan.warmup;
            progress.step(&format!(
                "{} {} tasks={}{}",
                workload.name(),
                case.variant,
                case.tasks,
                if warmup { " (warm-up)" } else { "" }
            ));
            let sample = take_sample(workload, case, seq as i64, warmup)?;
            store.add_sample(run_id, case, &sample)?;
        }
    }
    progress.finish();
    Ok(Ending {
        status: Status::Complete,
        note: format!(
            "fixed count: {reps} samples per case after {} warm-up",
            plan.warmup
        ),
    })
}

fn take_sample(
    workload: &dyn Workload,
    case: &Case,
    seq: i64,
    warmup: bool,
) -> Result<Sample, String> {
    let before = vmstat::read_live();
    let data = workload.sample(case).map_err(|e| {
        format!(
            "{} {} with {} tasks: {e}",
            workload.name(),
            case.variant,
            case.tasks
        )
    })?;
    let after = vmstat::read_live();
    Ok(Sample {
        seq,
        warmup,
        taken_at: crate::timefmt::now(),
        data,
        vmstat: vmstat::delta(&before, &after),
        noise: Default::default(),
        flagged: false,
    })
}
