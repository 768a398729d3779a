//! The suite's entries on machines of 1 to 512 CPUs: each parses, each
//! workload is in it, every report fits 80 columns.

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

/// The harness options of a `run` given none, and the suite's run options
/// made of them.
fn default_options() -> (Harness, RunOptions) {
    let h = parse(&crate::workload::pft_args::SPEC, &[])
        .unwrap()
        .harness;
    let o = RunOptions::with(&h, QUICK_MAX_REPS).unwrap();
    (h, o)
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
    let (h, o) = default_options();
    for spec in REGISTRY {
        for args in (spec.quick)(&m) {
            let mut auto = args.clone();
            auto.extend(["--tasks".to_string(), "auto".to_string()]);
            let w = match entry(spec, &auto, &h, &o, &m).or_else(|_| entry(spec, &args, &h, &o, &m))
            {
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
    let spec = &crate::workload::pft_args::SPEC;
    let e = parse(spec, &["--no-such-option".to_string()]).unwrap_err();
    assert!(
        matches!(e, Error::Failed(ref m) if m.contains("does not parse")),
        "{e:?}"
    );
}

#[test]
fn built_entries_report_the_registered_headline_first() {
    let m = crate::machine::live();
    let (h, o) = default_options();
    for spec in REGISTRY {
        for args in (spec.quick)(&m) {
            let w = match entry(spec, &args, &h, &o, &m) {
                Ok(w) => w,
                // colour without CAP_SYS_ADMIN: the suite skips it too.
                Err(e) if e.is_input() && spec.quick_may_skip => continue,
                Err(e) => panic!("{} {args:?}: {e:?}", spec.name),
            };
            assert_eq!(w.name(), spec.name);
            let figures: Vec<String> = w.figures().into_iter().map(|f| f.name).collect();
            assert_eq!(figures[0], spec.headline(), "{}", spec.name);
            for f in spec.figures() {
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
