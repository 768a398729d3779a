//! `vmscale run`: validates a workload's options, refuses what cannot be
//! run safely, then runs it into the store and prints the stored result.
//! `build` is the one place a `run` subcommand becomes a workload, through
//! its registered `Spec::build` (`run quick` builds its entries through it
//! too, in quick.rs).

use std::path::Path;

use super::{Error, Result};
use crate::cli::{Harness, QUICK, RunArgs};
use crate::exec::signals;
use crate::machine::{self, Snapshot};
use crate::model::{Run, Status};
use crate::parse;
use crate::runner::{self, Plan, Reps};
use crate::store::{NewRun, Store};
use crate::workload::{Env, Workload};

pub fn run(db: &Path, args: RunArgs) -> Result<()> {
    let machine = machine::live();
    if args.name == QUICK {
        return super::quick::run(db, &args.harness, &machine);
    }
    let w = build(&args, &machine)?;
    run_one(db, w.as_ref(), &args.harness, &machine)
}

/// The workload a `run` subcommand names, its options validated by its
/// `Spec::build` (input errors exit 2 before anything is stored).
pub(crate) fn build(args: &RunArgs, m: &Snapshot) -> Result<Box<dyn Workload>> {
    let spec = crate::workload::find(&args.name)
        .ok_or_else(|| Error::Failed(format!("{} is not a registered workload", args.name)))?;
    let env = Env {
        machine: m,
        knobs: &args.harness.knob,
    };
    (spec.build)(&args.matches, &env)
}

/// Runs one workload into the store and prints it. A failed run of a
/// workload that runs a user's command exits with the command's code.
fn run_one(db: &Path, w: &dyn Workload, h: &Harness, m: &Snapshot) -> Result<()> {
    let run = match run_workload(db, w, &plan(h)?, h, m) {
        Ok(run) => run,
        Err(Error::Failed(msg)) => match w.exit_code() {
            Some(code) => return Err(Error::Exit(code, msg)),
            None => return Err(Error::Failed(msg)),
        },
        Err(e) => return Err(e),
    };
    print_run(db, &run, h)?;
    print_probes(db, &run, h)?;
    super::rerun_note::print(db, &run, h)
}

/// The profile and lock tables after a run's text report.
pub(crate) fn print_probes(db: &Path, run: &Run, h: &Harness) -> Result<()> {
    if (h.profile.is_some() || h.lock_stats) && !(h.json || h.markdown || h.csv) {
        super::probes_out::print(db, run.meta.id)?;
    }
    Ok(())
}

pub(crate) use crate::error::input;

pub(crate) fn plan(h: &Harness) -> Result<Plan> {
    plan_with(h, DEFAULT_MAX_REPS)
}

const DEFAULT_MAX_REPS: usize = 30;
/// `run quick` stops adaptive sampling sooner, to stay quick.
pub(crate) const QUICK_MAX_REPS: usize = 5;

/// The plan from the harness options: `--reps N` fixed, else adaptive.
pub(crate) fn plan_with(h: &Harness, default_max_reps: usize) -> Result<Plan> {
    if h.reps == Some(0) {
        return Err(Error::Input(
            "--reps 0 takes no samples: use 1 or more".into(),
        ));
    }
    if h.max_reps == Some(0) {
        return Err(Error::Input(
            "--max-reps 0 takes no samples: use 1 or more".into(),
        ));
    }
    let precision = input(parse::percent(&h.precision).map_err(|e| format!("--precision: {e}")))?;
    let max_time = input(parse::duration(&h.max_time).map_err(|e| format!("--max-time: {e}")))?;
    let reps = match h.reps {
        Some(n) => Reps::Fixed(n),
        None => Reps::Adaptive(crate::stats::stopping::Rule {
            precision,
            min_reps: MIN_REPS,
            max_reps: h.max_reps.unwrap_or(default_max_reps),
            max_time,
        }),
    };
    Ok(Plan {
        warmup: h.warmup,
        reps,
    })
}

/// Adaptive stopping never trusts a CI of fewer samples than this.
const MIN_REPS: usize = 3;

/// Noise and knob options from the harness, validated.
pub(crate) fn options(h: &Harness, knobs: &crate::knobs::Plan) -> Result<runner::Options> {
    let threshold =
        input(parse::percent(&h.noise_threshold).map_err(|e| format!("--noise-threshold: {e}")))?;
    Ok(runner::Options {
        noise_threshold: threshold,
        wait_quiet: h.wait_quiet.then(|| std::time::Duration::from_secs(30)),
        combos: knobs.combos(),
        probes: probes(h),
        invocations: h.invocations.into(),
    })
}

/// What `--profile` and `--lock-stats` ask to record.
fn probes(h: &Harness) -> crate::probes::Request {
    crate::probes::Request {
        hz: h.profile,
        locks: h.lock_stats,
    }
}

/// Refuses a run whose peak memory exceeds MemAvailable less a reserve.
pub(crate) fn check_memory(w: &dyn Workload, m: &Snapshot) -> Result<()> {
    let need = w.memory_need();
    let avail = m.mem_available_kib.unwrap_or(0) * 1024;
    let total = m.mem_total_kib.unwrap_or(0) * 1024;
    let reserve = (total / 16).max(256 << 20);
    let usable = avail.saturating_sub(reserve);
    if need > usable {
        return Err(Error::Input(format!(
            "{} needs {} but only {} can be used safely (MemAvailable {} less a reserve of {}): \
             use {}",
            w.name(),
            parse::format_size(need),
            parse::format_size(usable),
            parse::format_size(avail),
            parse::format_size(reserve),
            crate::workload::find(w.name())
                .map_or(crate::workload::spec::DEFAULT_SIZE_FLAGS, |s| s.size_flags),
        )));
    }
    Ok(())
}

/// More tasks than online CPUs share CPUs: per-task times then include
/// waiting for a CPU. Said on stderr, not refused.
fn warn_oversubscribed(w: &dyn Workload, m: &Snapshot) {
    let online = m.cpus.len();
    let most = w.cases().iter().map(|c| c.tasks).max().unwrap_or(1);
    if online > 0 && most > online {
        super::output::warn(&format!(
            "{}: {most} tasks on {online} online CPUs; tasks will share CPUs and wait \
             for them, so per-task figures include that wait",
            w.name()
        ));
    }
}

fn command_line() -> String {
    let args: Vec<String> = std::env::args().collect();
    parse::shell_words(&args)
}

/// Takes the machine-wide knob lock (waiting, or refusing with `no_wait`)
/// and starts the knob session.
fn begin_knobs(
    plan: &crate::knobs::Plan,
    root: &Path,
    journal: &Path,
    no_wait: bool,
) -> Result<crate::knobs::Session> {
    use crate::knobs::lock::{KnobLock, Wait};
    let wait = if no_wait { Wait::No } else { Wait::Yes };
    let lock = KnobLock::acquire(wait).map_err(|e| match signals::caught() {
        Some(_) => Error::Exit(130, e.to_string()),
        None => e,
    })?;
    crate::knobs::Session::begin(plan, root, journal, Some(lock))
}

/// Checks, stores and runs one workload; returns the stored run.
pub fn run_workload(
    db: &Path,
    w: &dyn Workload,
    plan: &Plan,
    h: &Harness,
    m: &Snapshot,
) -> Result<Run> {
    check_memory(w, m)?;
    warn_oversubscribed(w, m);
    let user_knobs = input(crate::knobs::Plan::parse(&h.knob))?;
    super::conflicts::check(w.name(), &w.config(), &user_knobs)?;
    let opts = options(h, &user_knobs)?;
    let journal = crate::knobs::journal::default_path();
    let root = crate::knobs::live_root();
    // --tune adds one-value knobs to the plan; the variants stay the user's.
    let (knob_plan, tuned) = super::doctor::tuned_plan(h.tune, &user_knobs, w.name(), &root)?;
    input(knob_plan.preflight(&root, &journal))?;
    input(crate::probes::preflight(&opts.probes).map(drop))?;
    // The store path is input: a file that is not a store is refused
    // before any knob is touched.
    let mut store = Store::open(db)?;
    // Handlers first: from here a SIGINT only sets the flag, so the knobs
    // are restored by the session rather than left changed.
    signals::install();
    let mut session = if knob_plan.is_empty() {
        None
    } else {
        Some(begin_knobs(&knob_plan, &root, &journal, h.no_wait)?)
    };
    if let Some(s) = session.as_mut() {
        s.apply(&tuned)?;
    }
    let knobs_json = session
        .as_ref()
        .map(|s| super::doctor::describe_knobs(&knob_plan, &s.originals(), &tuned))
        .unwrap_or_else(|| serde_json::json!({}));
    let machine_json = serde_json::to_value(m).unwrap_or_default();
    let config = w.config();
    let cases = runner::expand_cases(&w.cases(), &opts.combos);
    let figures = w.figures();
    let id = store.create_run(&NewRun {
        label: h.label.as_deref(),
        workload: w.name(),
        command_line: &command_line(),
        config: &config,
        figures: &figures,
        machine: &machine_json,
        knobs: &knobs_json,
        cases: &cases,
        origin: "measured",
    })?;
    let bar = super::progress::Bar::new();
    let outcome = runner::execute_with(&mut store, id, w, plan, &opts, session.as_mut(), &bar);
    let (mut status, mut note, mut error) = match outcome {
        Ok(end) => (end.status, end.note, None),
        Err(e) => (Status::Failed, e.clone(), Some(e)),
    };
    if let Some(s) = session.as_mut() {
        match s.restore() {
            Ok(()) => {
                let was: Vec<String> = s
                    .originals()
                    .iter()
                    .map(|(k, v)| format!("{k}={v}"))
                    .collect();
                note.push_str(&super::doctor::tuned_note(&tuned));
                note.push_str(&format!("; knobs restored to {}", was.join(", ")));
            }
            Err(e) => {
                note.push_str(&format!("; knobs NOT restored: {e}"));
                status = Status::Failed;
                error.get_or_insert(e.to_string());
            }
        }
    }
    // A run that failed before its first sample leaves nothing behind.
    if let Some(e) = &error
        && store.discard_if_empty(id).unwrap_or(false)
    {
        return Err(Error::Failed(format!("{e}; nothing stored")));
    }
    store.finish_run(id, status, Some(&note))?;
    let run = store.load(id)?;
    if let Some(e) = error {
        return Err(Error::Failed(format!("run {id} failed: {e}")));
    }
    Ok(run)
}

/// Prints a stored run as `show` would, in the format the harness flags
/// choose; an interrupted run is exit 130.
pub(crate) fn print_run(db: &Path, run: &Run, h: &Harness) -> Result<()> {
    emit(db, run, h)?;
    if run.meta.status == Status::Incomplete {
        return Err(Error::Interrupted);
    }
    Ok(())
}

/// Prints a stored run through the output module; with `-q`, only its
/// identity line.
pub(crate) fn emit(db: &Path, run: &Run, h: &Harness) -> Result<()> {
    let format = crate::report::export::Format::from_flags(h.markdown, h.csv, h.json);
    if super::output::quiet() && format == crate::report::export::Format::Text {
        let m = &run.meta;
        let label = m
            .label
            .as_deref()
            .map(|l| format!(" [{l}]"))
            .unwrap_or_default();
        return super::output::text(&format!(
            "run {}{label}: {} ({})\n",
            m.id,
            m.workload,
            m.status.as_str()
        ));
    }
    super::output::emit(format, &render(db, run, h)?)
}

/// The run as `show` renders it, the stored profiles and locks included
/// (the text prints those separately, see print_probes).
fn render(db: &Path, run: &Run, h: &Harness) -> Result<String> {
    let format = crate::report::export::Format::from_flags(h.markdown, h.csv, h.json);
    let mut report = crate::report::show::report(run);
    if format != crate::report::export::Format::Text {
        let store = Store::open_existing(db)?;
        super::probes_out::attach(&store, run.meta.id, &mut report)?;
    }
    crate::report::export::exporter(format)
        .export(&report)
        .map_err(Error::Failed)
}
