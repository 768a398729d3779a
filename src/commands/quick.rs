//! `vmscale run quick`: the machine's sysinfo, then every registered
//! workload's short runs (`Spec::quick`) as one labelled suite. Each entry
//! is parsed as the command line `vmscale run NAME ARGS` would be, so the
//! suite runs exactly what a user can type.

use std::path::Path;

use clap::Parser;

use super::harness::{QUICK_MAX_REPS, RunOptions};
use super::run::{build, check_budget, check_memory, emit, estimate, run_workload};
use super::{Error, Result};
use crate::cli::{Cli, Command, Harness, RunArgs};
use crate::machine::Snapshot;
use crate::model::{Run, Status};
use crate::report::export::Format;
use crate::store::Store;
use crate::workload::{REGISTRY, Spec, Workload};

/// Runs the suite. Entries that may be skipped (`Spec::quick_may_skip`)
/// run last, so a skip leaves the rest of the suite as it always is.
pub fn run(db: &Path, h: &Harness, m: &Snapshot) -> Result<()> {
    // Bad knobs and harness values are refused before anything is printed.
    let o = RunOptions::with(h, QUICK_MAX_REPS)?;
    let mut suite: Vec<Box<dyn Workload>> = Vec::new();
    for spec in REGISTRY.iter().filter(|s| !s.quick_may_skip) {
        for args in (spec.quick)(m) {
            suite.push(entry(spec, &args, h, &o, m)?);
        }
    }
    if h.dry_run {
        let e = suite_estimate(&suite, h, &o, m);
        return if h.output.json.json {
            super::print_json(&e)
        } else {
            super::output::text(&e.text())
        };
    }
    super::run::refuse_other_root()?;
    if std::io::IsTerminal::is_terminal(&std::io::stderr()) && !super::output::quiet() {
        eprint!("{}", suite_estimate(&suite, h, &o, m).text());
    }
    for w in &suite {
        check_memory(w.as_ref(), m)?;
        check_budget(w.as_ref(), &estimate(w.as_ref(), &o), &o)?;
        super::conflicts::check(w.name(), &w.config(), &o.knobs)?;
    }
    o.knobs.preflight(
        &crate::knobs::live_root(),
        &crate::knobs::journal::default_path(),
    )?;
    if h.output.format() == Format::Text && !super::output::quiet() {
        super::output::text(&format!("{}\n", crate::report::sysinfo::text(m)))?;
    }
    let suite_id = suite_label(db, h)?;
    let mut labels = super::suite::Labels::new(&suite_id);
    let mut runs = Vec::new();
    for w in &suite {
        run_entry(db, w.as_ref(), &o, h, &mut labels, m, &mut runs)?;
    }
    for spec in REGISTRY.iter().filter(|s| s.quick_may_skip) {
        for args in (spec.quick)(m) {
            let w = match entry(spec, &args, h, &o, m) {
                Ok(w) => w,
                Err(e) if e.is_input() => {
                    eprintln!("vmscale: quick: {} skipped: {e}", spec.name);
                    continue;
                }
                Err(e) => return Err(e),
            };
            check_budget(w.as_ref(), &estimate(w.as_ref(), &o), &o)?;
            run_entry(db, w.as_ref(), &o, h, &mut labels, m, &mut runs)?;
        }
    }
    if h.output.json.json {
        // The shape of `import --json`: an array of runs as `show --json`
        // prints each (docs/json.md).
        super::print_json(&runs)?;
    }
    Ok(())
}

/// The suite's plan (`--dry-run`, and before it starts on a terminal):
/// every entry's and the total; the entries that may be skipped are
/// planned where they build.
fn suite_estimate(
    suite: &[Box<dyn Workload>],
    h: &Harness,
    o: &RunOptions,
    m: &Snapshot,
) -> crate::runner::estimate::SuiteEstimate {
    let mut runs = Vec::new();
    for w in suite {
        runs.push(estimate(w.as_ref(), o));
    }
    for spec in REGISTRY.iter().filter(|s| s.quick_may_skip) {
        for args in (spec.quick)(m) {
            if let Ok(w) = entry(spec, &args, h, o, m) {
                runs.push(estimate(w.as_ref(), o));
            }
        }
    }
    crate::runner::estimate::SuiteEstimate::new(runs)
}

/// One entry of `spec`'s quick list, parsed and built with the suite's
/// harness options in place of the defaults.
fn entry(
    spec: &Spec,
    args: &[String],
    h: &Harness,
    o: &RunOptions,
    m: &Snapshot,
) -> Result<Box<dyn Workload>> {
    let mut run = parse(spec, args)?;
    run.harness = h.clone();
    build(&run, m, &o.knobs)
}

/// `vmscale run NAME ARGS` as the command line parses it. A refusal is a
/// bug in the entry, not the user's input.
pub(crate) fn parse(spec: &Spec, args: &[String]) -> Result<RunArgs> {
    let argv = ["vmscale", "run", spec.name]
        .into_iter()
        .map(str::to_string)
        .chain(args.iter().cloned());
    match Cli::try_parse_from(argv) {
        Ok(Cli {
            command: Command::Run(r),
            ..
        }) => Ok(r.0),
        Ok(_) => Err(Error::Failed(format!("quick: {} is not a run", spec.name))),
        Err(e) => Err(Error::Failed(format!(
            "quick: the entry `{} {}` does not parse: {e}",
            spec.name,
            args.join(" ")
        ))),
    }
}

/// Runs one built entry under its suite label and prints it (unless the
/// suite prints JSON at the end); an interrupted run ends the suite.
fn run_entry(
    db: &Path,
    w: &dyn Workload,
    o: &RunOptions,
    h: &Harness,
    labels: &mut super::suite::Labels,
    m: &Snapshot,
    runs: &mut Vec<Run>,
) -> Result<()> {
    let labelled = labels.harness(h, w.name(), &w.config());
    let run = run_workload(db, w, o, &labelled, m)?;
    let interrupted = run.meta.status == Status::Incomplete;
    if !h.output.json.json {
        emit(db, &run, h)?;
        if !super::output::quiet() {
            super::output::text("\n")?;
        }
    }
    runs.push(run);
    if interrupted {
        return Err(Error::Interrupted);
    }
    Ok(())
}

/// The suite's id, the first part of every label it gives: `--label`, or
/// `quick-N` with N the id its first run will get.
fn suite_label(db: &Path, h: &Harness) -> Result<String> {
    if let Some(l) = &h.label {
        super::manage::check_label(l)?;
        return Ok(l.clone());
    }
    let next = match Store::open_existing(db) {
        Ok(store) => store.next_id()?,
        Err(_) => 1,
    };
    Ok(format!("quick-{next}"))
}

#[cfg(test)]
mod tests;
