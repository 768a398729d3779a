//! `vmscale run quick`: the machine's sysinfo, then every registered
//! workload's short runs (`Spec::quick`) as one labelled suite. Each entry
//! is parsed as the command line `vmscale run NAME ARGS` would be, so the
//! suite runs exactly what a user can type.

use std::path::Path;

use clap::Parser;

use super::run::{QUICK_MAX_REPS, build, check_memory, emit, options, plan_with, run_workload};
use super::{Error, Result};
use crate::cli::{Cli, Command, Harness, RunArgs};
use crate::machine::Snapshot;
use crate::model::{Run, Status};
use crate::runner::Plan;
use crate::store::Store;
use crate::workload::{REGISTRY, Spec, Workload};

/// Runs the suite. Entries that may be skipped (`Spec::quick_may_skip`)
/// run last, so a skip leaves the rest of the suite as it always is.
pub fn run(db: &Path, h: &Harness, m: &Snapshot) -> Result<()> {
    let plan = plan_with(h, QUICK_MAX_REPS)?;
    let mut suite: Vec<Box<dyn Workload>> = Vec::new();
    for spec in REGISTRY.iter().filter(|s| !s.quick_may_skip) {
        for args in (spec.quick)(m) {
            suite.push(entry(spec, &args, h, m)?);
        }
    }
    if h.dry_run {
        let e = suite_estimate(&suite, h, m)?;
        return if h.json {
            super::print_json(&e)
        } else {
            super::output::text(&e.text())
        };
    }
    super::run::refuse_other_root()?;
    if std::io::IsTerminal::is_terminal(&std::io::stderr()) && !super::output::quiet() {
        eprint!("{}", suite_estimate(&suite, h, m)?.text());
    }
    for w in &suite {
        check_memory(w.as_ref(), m)?;
    }
    // Refuse bad knobs before printing anything.
    let knob_plan = crate::knobs::Plan::parse(&h.knob)?;
    options(h, &knob_plan)?;
    for w in &suite {
        super::conflicts::check(w.name(), &w.config(), &knob_plan)?;
    }
    knob_plan.preflight(
        &crate::knobs::live_root(),
        &crate::knobs::journal::default_path(),
    )?;
    if !(h.json || h.markdown || h.csv || super::output::quiet()) {
        super::output::text(&format!("{}\n", crate::report::sysinfo::text(m)))?;
    }
    let suite_id = suite_label(db, h)?;
    let mut labels = super::suite::Labels::new(&suite_id);
    let mut runs = Vec::new();
    for w in &suite {
        run_entry(db, w.as_ref(), &plan, h, &mut labels, m, &mut runs)?;
    }
    for spec in REGISTRY.iter().filter(|s| s.quick_may_skip) {
        for args in (spec.quick)(m) {
            let w = match entry(spec, &args, h, m) {
                Ok(w) => w,
                Err(e) if e.is_input() => {
                    eprintln!("vmscale: quick: {} skipped: {e}", spec.name);
                    continue;
                }
                Err(e) => return Err(e),
            };
            run_entry(db, w.as_ref(), &plan, h, &mut labels, m, &mut runs)?;
        }
    }
    if h.json {
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
    m: &Snapshot,
) -> Result<crate::runner::estimate::SuiteEstimate> {
    let plan = plan_with(h, QUICK_MAX_REPS)?;
    let mut runs = Vec::new();
    for w in suite {
        runs.push(super::run::estimate(w.as_ref(), &plan, h)?);
    }
    for spec in REGISTRY.iter().filter(|s| s.quick_may_skip) {
        for args in (spec.quick)(m) {
            if let Ok(w) = entry(spec, &args, h, m) {
                runs.push(super::run::estimate(w.as_ref(), &plan, h)?);
            }
        }
    }
    Ok(crate::runner::estimate::SuiteEstimate::new(runs))
}

/// One entry of `spec`'s quick list, parsed and built with the suite's
/// harness options in place of the defaults.
fn entry(spec: &Spec, args: &[String], h: &Harness, m: &Snapshot) -> Result<Box<dyn Workload>> {
    let mut run = parse(spec, args)?;
    run.harness = h.clone();
    build(&run, m)
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
        }) => Ok(r),
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
    plan: &Plan,
    h: &Harness,
    labels: &mut super::suite::Labels,
    m: &Snapshot,
    runs: &mut Vec<Run>,
) -> Result<()> {
    let labelled = labels.harness(h, w.name(), &w.config());
    let run = run_workload(db, w, plan, &labelled, m)?;
    let interrupted = run.meta.status == Status::Incomplete;
    if !h.json {
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
mod tests {
    use super::*;
    use crate::machine::Cpu;

    /// A machine of `n` CPUs with THP `thp` and no cache geometry in sysfs.
    fn machine(n: usize, thp: &str) -> Snapshot {
        let cpu = |id| Cpu {
            id,
            package: Some(0),
            core: Some(id),
            node: Some(0),
            siblings: vec![id],
            die: None,
            cluster: None,
        };
        Snapshot {
            cpus: (0..n).map(cpu).collect(),
            thp_enabled: Some(thp.into()),
            page_size: Some(4096),
            ..Default::default()
        }
    }

    #[test]
    fn every_entry_parses_on_small_and_larger_machines() {
        for m in [
            machine(1, "never"),
            machine(2, "madvise"),
            machine(8, "always"),
            machine(64, "madvise"),
        ] {
            for spec in REGISTRY {
                for args in (spec.quick)(&m) {
                    let parsed = parse(spec, &args);
                    assert!(parsed.is_ok(), "{} {args:?}: {:?}", spec.name, parsed.err());
                }
            }
        }
    }

    #[test]
    fn the_suite_runs_every_workload_given_two_cpus() {
        let m = machine(2, "madvise");
        for spec in REGISTRY {
            assert!(
                !(spec.quick)(&m).is_empty(),
                "{} not in run quick",
                spec.name
            );
        }
        // c2c measures pairs of CPUs: one CPU has none.
        let one = machine(1, "madvise");
        let skipped: Vec<&str> = REGISTRY
            .iter()
            .filter(|s| (s.quick)(&one).is_empty())
            .map(|s| s.name)
            .collect();
        assert_eq!(skipped, [crate::workload::c2c::SPEC.name]);
    }

    /// Every workload's report of a 512-CPU run (its quick entry with
    /// `--tasks auto` where it takes one, three samples of every figure)
    /// fits 80 columns.
    #[test]
    fn every_report_of_a_512_cpu_run_fits_80_columns() {
        use crate::model::build::{case, run, sample};
        let m = machine(512, "madvise");
        let h = parse(&crate::workload::pft::SPEC, &[]).unwrap().harness;
        for spec in REGISTRY {
            for args in (spec.quick)(&m) {
                let mut auto = args.clone();
                auto.extend(["--tasks".to_string(), "auto".to_string()]);
                let w = match entry(spec, &auto, &h, &m).or_else(|_| entry(spec, &args, &h, &m)) {
                    Ok(w) => w,
                    // colour without CAP_SYS_ADMIN: the suite skips it too.
                    Err(e) if e.is_input() && spec.quick_may_skip => continue,
                    Err(e) => panic!("{} {args:?}: {e:?}", spec.name),
                };
                let figures = w.figures();
                let mut r = run(spec.name).config(w.config()).figures(figures.clone());
                for c in w.cases() {
                    let mut k = case(c.tasks, &c.variant);
                    for i in 0..3 {
                        let mut one = sample().seq(i);
                        for f in &figures {
                            one = one.figure(&f.name, 123456.789 + i as f64);
                        }
                        k = k.sample(one);
                    }
                    r = r.case(k);
                }
                let text = crate::report::text(&r.build());
                // pft's fault-count warning is one long line at any size
                // (the synthetic figures here trip it).
                for l in text.lines().filter(|l| !l.starts_with("warning: ")) {
                    assert!(l.chars().count() <= 80, "{} {args:?}:\n{l}", spec.name);
                }
            }
        }
    }

    #[test]
    fn a_broken_entry_is_a_failure_not_bad_input() {
        let spec = &crate::workload::pft::SPEC;
        let e = parse(spec, &["--no-such-option".to_string()]).unwrap_err();
        assert!(
            matches!(e, Error::Failed(ref m) if m.contains("does not parse")),
            "{e:?}"
        );
    }

    #[test]
    fn built_entries_report_the_registered_headline_first() {
        let m = crate::machine::live();
        let h = parse(&crate::workload::pft::SPEC, &[]).unwrap().harness;
        for spec in REGISTRY {
            for args in (spec.quick)(&m) {
                let w = match entry(spec, &args, &h, &m) {
                    Ok(w) => w,
                    // colour without CAP_SYS_ADMIN: the suite skips it too.
                    Err(e) if e.is_input() && spec.quick_may_skip => continue,
                    Err(e) => panic!("{} {args:?}: {e:?}", spec.name),
                };
                assert_eq!(w.name(), spec.name);
                let figures: Vec<String> = w.figures().into_iter().map(|f| f.name).collect();
                assert_eq!(figures[0], spec.headline(), "{}", spec.name);
                for f in (spec.figures)() {
                    assert!(
                        figures.contains(&f.name),
                        "{}: {} missing",
                        spec.name,
                        f.name
                    );
                }
            }
        }
    }
}
