//! `vmscale run`: validates a workload's options, refuses what cannot be
//! run safely, then runs it into the store and prints the stored result.
//! `build` is the one place a `run` subcommand becomes a workload, through
//! its registered `Spec::build` (`run quick` builds its entries through it
//! too, in quick.rs).

use std::path::Path;

use super::harness::RunOptions;
use super::{Error, Result};
use crate::cli::{Harness, RunArgs};
use crate::machine::{self, Snapshot};
use crate::model::{Run, Status};
use crate::parse;
use crate::report::export::Format;
use crate::runner::estimate::{Estimate, Repeats};
use crate::runner::{KnobSetup, Session, Setup};
use crate::store::Store;
use crate::workload::{Env, Workload};

/// `vmscale run NAME` for a registered workload (`run quick` is
/// `quick::run`, chosen in main.rs).
pub fn run(db: &Path, args: RunArgs) -> Result<()> {
    if let Some(lines) = listing(&args) {
        return super::output::text(&lines);
    }
    let machine = machine::live();
    let opts = RunOptions::of(&args.harness)?;
    let w = build(&args, &machine, &opts.knobs)?;
    let e = estimate(w.as_ref(), &opts);
    if args.harness.dry_run {
        return dry_run(&e, &args.harness);
    }
    check_budget(w.as_ref(), &e, &opts)?;
    refuse_other_root()?;
    if w.fixed_layout() {
        crate::exec::layout::fix()?;
    }
    if std::io::IsTerminal::is_terminal(&std::io::stderr()) && !super::output::quiet() {
        eprint!("{}", e.text());
    }
    run_one(db, w.as_ref(), &opts, &args.harness, &machine)
}

/// The choices of the option the workload lists, when its value is `list`
/// (`--case list`) or another listing word it takes, one a line.
fn listing(args: &RunArgs) -> Option<String> {
    let l = crate::workload::find(&args.name)?.listing?;
    let mut given = args.matches.get_raw(l.option).into_iter().flatten();
    let lines = given.find_map(|v| {
        if v == "list" {
            return Some(l.lines);
        }
        l.also.iter().find(|(word, _)| v == *word).map(|(_, f)| *f)
    })?;
    Some(
        lines()
            .into_iter()
            .map(|line| format!("{line}\n"))
            .collect(),
    )
}

/// `run ... --dry-run`: the plan and its estimate, nothing measured or
/// stored.
fn dry_run(e: &Estimate, h: &Harness) -> Result<()> {
    if h.output.json.json {
        super::print_json(&e)
    } else {
        super::output::text(&e.text())
    }
}

/// Refuses to measure while `VMSCALE_MACHINE_ROOT` describes another
/// machine: the plan can be read (`--dry-run`), nothing can run on it.
pub(crate) fn refuse_other_root() -> Result<()> {
    match machine::other_root() {
        Some(r) => Err(Error::Refused(format!(
            "{}={} describes another machine, on which nothing can be measured: \
             use --dry-run (or sysinfo, pcp, doctor) with it, or unset it to run here",
            machine::ROOT_ENV,
            r.display()
        ))),
        None => Ok(()),
    }
}

/// The plan of `w` under the run's options (runner/estimate.rs).
pub(crate) fn estimate(w: &dyn Workload, o: &RunOptions) -> Estimate {
    let repeats = Repeats {
        invocations: o.runner.invocations,
        combos: o.runner.combos.len().max(1),
    };
    crate::runner::estimate::estimate(w, &o.plan, o.max_time, repeats)
}

/// Refuses a plan that must fit `--max-time` (c2c's `--pairs all`) and
/// does not, with the numbers and the way to ask for it anyway.
pub(crate) fn check_budget(w: &dyn Workload, e: &Estimate, o: &RunOptions) -> Result<()> {
    if !w.bounded_by_max_time() || e.least_s <= o.max_time.as_secs_f64() {
        return Ok(());
    }
    let ask = if e.least_s > 3600.0 {
        format!("{}h", (e.least_s / 3600.0).ceil())
    } else {
        format!("{}m", (e.least_s / 60.0).ceil())
    };
    Err(Error::Refused(format!(
        "{}: {}; the plan takes about {} at least, over --max-time {}: \
         give --max-time {ask} to run it anyway (see --dry-run)",
        w.name(),
        e.notes.first().map_or("", String::as_str),
        crate::units::duration(e.least_s),
        parse::format_duration(o.max_time),
    )))
}

/// The workload a `run` subcommand names, its options validated by its
/// `Spec::build` (input errors exit 2 before anything is stored).
pub(crate) fn build(
    args: &RunArgs,
    m: &Snapshot,
    knobs: &crate::knobs::Plan,
) -> Result<Box<dyn Workload>> {
    let spec = crate::workload::find(&args.name)
        .ok_or_else(|| Error::Failed(format!("{} is not a registered workload", args.name)))?;
    let env = Env {
        spec,
        machine: m,
        knobs,
    };
    (spec.build)(&args.matches, &env)
}

/// Runs one workload into the store and prints it. A failed run of a
/// workload that runs a user's command exits with the command's code.
fn run_one(db: &Path, w: &dyn Workload, o: &RunOptions, h: &Harness, m: &Snapshot) -> Result<()> {
    let run = match run_workload(db, w, o, h, m) {
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
    if (h.profile.is_some() || h.lock_stats) && h.output.format() == Format::Text {
        super::probes_out::print(db, run.meta.id)?;
    }
    Ok(())
}

/// Refuses a run whose peak memory exceeds MemAvailable less a reserve.
pub(crate) fn check_memory(w: &dyn Workload, m: &Snapshot) -> Result<()> {
    let need = w.memory_need();
    let avail = m.mem_available_kib.unwrap_or(0) * 1024;
    let total = m.mem_total_kib.unwrap_or(0) * 1024;
    let reserve = (total / 16).max(256 << 20);
    let usable = avail.saturating_sub(reserve);
    if need > usable {
        return Err(Error::Refused(format!(
            "{} needs {} but only {} can be used safely (MemAvailable {} less a reserve of {}): \
             use {}",
            w.name(),
            crate::units::size(need),
            crate::units::size(usable),
            crate::units::size(avail),
            crate::units::size(reserve),
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

/// Checks one workload against the machine and the knobs it is run
/// with (its budget was checked before, see `check_budget`), then runs it
/// in a session (runner/session.rs); returns the stored run.
pub(crate) fn run_workload(
    db: &Path,
    w: &dyn Workload,
    o: &RunOptions,
    h: &Harness,
    m: &Snapshot,
) -> Result<Run> {
    check_memory(w, m)?;
    warn_oversubscribed(w, m);
    super::conflicts::check(w.name(), &w.config(), &o.knobs)?;
    let journal = crate::knobs::journal::default_path();
    let root = crate::knobs::live_root();
    // --tune adds one-value knobs to the plan; the variants stay the user's.
    let (knob_plan, tuned) = super::doctor::tuned_plan(h.tune, &o.knobs, w.name(), &root)?;
    knob_plan.preflight(&root, &journal)?;
    crate::probes::preflight(&o.runner.probes).map(drop)?;
    crate::monitor::meminfo::check(&crate::machine::root(), &o.runner.meminfo)?;
    let setup = Setup {
        workload: w,
        plan: o.plan,
        options: o.runner.clone(),
        label: h.label.as_deref(),
        command_line: command_line(),
        machine: m,
        knobs: KnobSetup {
            plan: knob_plan,
            tuned,
            root,
            journal,
            no_wait: h.no_wait,
        },
    };
    Session::begin(db, setup)?.run(&super::progress::Bar::new("samples"))
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
    let format = h.output.format();
    if super::output::quiet() && format == Format::Text {
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
    let format = h.output.format();
    let mut report = crate::report::show::report(run);
    if format != Format::Text {
        let store = Store::open_existing(db)?;
        super::probes_out::attach(&store, run.meta.id, &mut report)?;
    }
    crate::report::export::exporter(format).export(&report)
}
