//! The runner with a fake workload and a store in a temporary file: what
//! it stores per case, warm-ups, a failed sample, adaptive stopping.

use std::cell::Cell;
use std::path::PathBuf;
use std::time::Duration;

use super::{KnobSetup, Options, Plan, Progress, Reps, Session, Setup};
use crate::error::Error;
use crate::machine::Snapshot;
use crate::model::{Better, Case, Figure, Run, SampleData, Status};
use crate::stats::stopping::Rule;
use crate::store::Store;
use crate::workload::{Measure, Workload};

/// Two cases; sample k (counted over the run) reports x = `xs[k % len]`
/// and y = k, or fails when k is `fail_at`.
struct Fake {
    xs: Vec<f64>,
    fail_at: Option<usize>,
    calls: Cell<usize>,
    /// Slept in every sample.
    pause: Duration,
}

impl Fake {
    fn new(xs: &[f64], fail_at: Option<usize>) -> Fake {
        Fake {
            xs: xs.to_vec(),
            fail_at,
            calls: Cell::new(0),
            pause: Duration::ZERO,
        }
    }
}

impl Measure for Fake {
    fn cases(&self) -> Vec<Case> {
        vec![Case::new(1, "fake"), Case::new(2, "fake")]
    }
    fn memory_need(&self) -> u64 {
        0
    }
    fn sample(&self, _: &Case) -> crate::error::Result<SampleData> {
        let k = self.calls.get();
        self.calls.set(k + 1);
        std::thread::sleep(self.pause);
        if self.fail_at == Some(k) {
            return Err(Error::Failed(format!("sample {k} broke")));
        }
        let x = self.xs[k % self.xs.len()];
        Ok(SampleData {
            figures: [("x".to_string(), x), ("y".to_string(), k as f64)].into(),
            tasks: Vec::new(),
        })
    }
}

impl Workload for Fake {
    fn name(&self) -> &'static str {
        "fake"
    }
    fn figures(&self) -> Vec<Figure> {
        vec![
            Figure::new("x", "s", Better::Lower, true),
            Figure::new("y", "n", Better::Higher, false),
        ]
    }
    fn config(&self) -> serde_json::Value {
        serde_json::json!({"xs": self.xs})
    }
}

struct Quiet;

impl Progress for Quiet {
    fn start(&self, _: u64) {}
    fn step(&self, _: &str) {}
    fn finish(&self) {}
}

/// A store file of its own, removed after with its directory.
struct Db {
    path: PathBuf,
    _dir: tempfile::TempDir,
}

impl Db {
    fn new() -> Db {
        let dir = tempfile::tempdir().unwrap();
        Db {
            path: dir.path().join("runs.db"),
            _dir: dir,
        }
    }
}

fn run(db: &Db, w: &Fake, plan: Plan) -> crate::error::Result<Run> {
    let machine = Snapshot::default();
    let setup = Setup {
        workload: w,
        plan,
        options: Options::default(),
        label: Some("t"),
        command_line: "vmscale run fake".into(),
        machine: &machine,
        knobs: KnobSetup::none(),
    };
    Session::begin(&db.path, setup)?.run(&Quiet)
}

fn fixed(warmup: usize, n: usize) -> Plan {
    Plan {
        warmup,
        reps: Reps::Fixed(n),
    }
}

/// Adaptive stopping at 1 % precision, from 3 samples to `max_reps` or
/// `max_time`.
fn adaptive(max_reps: usize, max_time: Duration) -> Plan {
    let rule = Rule {
        precision: 0.01,
        min_reps: 3,
        max_reps,
        max_time,
    };
    Plan {
        warmup: 0,
        reps: Reps::Adaptive(rule),
    }
}

#[test]
fn every_sample_is_stored_under_its_case_with_warmups_marked() {
    let db = Db::new();
    let w = Fake::new(&[1.0, 2.0, 3.0], None);
    let run = run(&db, &w, fixed(1, 3)).unwrap();
    assert_eq!(run.meta.status, Status::Complete);
    assert_eq!(run.meta.label.as_deref(), Some("t"));
    assert_eq!(run.cases.len(), 2);
    for c in &run.cases {
        let seqs: Vec<i64> = c.samples.iter().map(|s| s.seq).collect();
        assert_eq!(seqs, [0, 1, 2, 3], "{}", c.case.key());
        let warm: Vec<bool> = c.samples.iter().map(|s| s.warmup).collect();
        assert_eq!(warm, [true, false, false, false]);
        assert_eq!(c.measured().count(), 3);
    }
    // Cases are sampled in turn, warm-ups first, the order rotated every
    // round (1 2, then 2 1, 1 2 ...), with the figures the workload returned.
    let y = |c: usize| -> Vec<f64> {
        run.cases[c]
            .samples
            .iter()
            .map(|s| s.data.figures["y"])
            .collect()
    };
    assert_eq!(y(0), [0.0, 2.0, 5.0, 6.0]);
    assert_eq!(y(1), [1.0, 3.0, 4.0, 7.0]);
    assert_eq!(w.calls.get(), 8);
    let note = run.meta.note.as_deref().unwrap_or("");
    assert!(
        note.starts_with("fixed count: 3 samples per case after 1 warm-up"),
        "{note}"
    );
}

#[test]
fn a_failed_sample_ends_the_run_as_failed_with_what_was_taken() {
    let db = Db::new();
    let w = Fake::new(&[1.0], Some(5));
    let e = run(&db, &w, fixed(0, 3)).unwrap_err();
    let Error::Failed(msg) = &e else {
        panic!("{e:?}")
    };
    assert!(
        msg.starts_with("run 1 failed: fake fake with 2 tasks: sample 5 broke"),
        "{msg}"
    );
    // No sample after the failure: the run stops there.
    assert_eq!(w.calls.get(), 6);
    let stored = Store::open(&db.path).unwrap().load(1).unwrap();
    assert_eq!(stored.meta.status, Status::Failed);
    let counts: Vec<usize> = stored.cases.iter().map(|c| c.samples.len()).collect();
    assert_eq!(counts, [3, 2]);
}

#[test]
fn a_run_that_fails_before_its_first_sample_leaves_nothing() {
    let db = Db::new();
    let w = Fake::new(&[1.0], Some(0));
    let e = run(&db, &w, fixed(1, 2)).unwrap_err();
    assert!(e.to_string().ends_with("; nothing stored"), "{e}");
    assert!(Store::open(&db.path).unwrap().list().unwrap().is_empty());
}

#[test]
fn adaptive_stopping_stops_a_steady_case_early_and_a_wild_one_at_the_cap() {
    let db = Db::new();
    // Each case's sample count, and the run's note.
    let counts = |w: &Fake| {
        let r = run(&db, w, adaptive(10, Duration::from_secs(600))).unwrap();
        let n: Vec<usize> = r.cases.iter().map(|c| c.measured().count()).collect();
        (n, r.meta.note.unwrap_or_default())
    };
    // The order-statistics interval of a median needs 5 samples.
    let (n, note) = counts(&Fake::new(&[5.0], None));
    assert_eq!(n, [5, 5]);
    assert!(
        note.contains("precision 1% reached in 2 of 2 cases (n=5)"),
        "{note}"
    );
    // A figure that never settles runs to the cap.
    let (n, note) = counts(&Fake::new(&[1.0, 9.0, 2.0, 8.0, 1.5], None));
    assert_eq!(n, [10, 10]);
    assert!(note.contains("max-reps 10 stopped 2"), "{note}");
}

/// Measured samples per case and the note of a run within a 300 ms budget
/// whose samples, warm-ups included, never settle and sleep `pause_ms`.
fn slow_run(pause_ms: u64, warmup: usize) -> (Vec<usize>, String) {
    let db = Db::new();
    let slow = Fake {
        pause: Duration::from_millis(pause_ms),
        ..Fake::new(&[f64::NAN], None)
    };
    let plan = Plan {
        warmup,
        ..adaptive(usize::MAX, Duration::from_millis(300))
    };
    let run_ = run(&db, &slow, plan).unwrap();
    let n = run_.cases.iter().map(|c| c.measured().count()).collect();
    (n, run_.meta.note.unwrap_or_default())
}

#[test]
fn warm_ups_spend_the_time_budget_too() {
    // 2 cases x 10 warm-ups of at least 20 ms: at least 400 ms, past the
    // 300 ms budget before any measured sample, so each case gets its 3.
    let (n, note) = slow_run(20, 10);
    assert_eq!(n, [3, 3]);
    assert!(note.contains("max-time 300ms: "), "{note}");
}

#[test]
fn a_case_with_its_least_samples_takes_none_after_the_budget() {
    // Samples of at least 50 ms in turn, A B B A A B: B's third ends the
    // 300 ms budget; A, with its three, stops before a fourth.
    let (n, _) = slow_run(50, 0);
    assert_eq!(n, [3, 3]);
}

#[test]
fn without_a_count_a_case_short_of_precision_samples_to_the_time_budget() {
    let db = Db::new();
    // A figure that is never measured never reaches precision (nor forms
    // groups or a drift, whatever the count the budget allows).
    let never = Fake::new(&[f64::NAN], None);
    let run_ = run(
        &db,
        &never,
        adaptive(usize::MAX, Duration::from_millis(300)),
    )
    .unwrap();
    let note = run_.meta.note.unwrap_or_default();
    assert!(note.contains("max-time 300ms: "), "{note}");
    assert_eq!(note.matches(" no interval").count(), 2, "{note}");
    // Sampled in turn to the end of the budget: equal counts, give or take
    // the round under way.
    let n: Vec<usize> = run_.cases.iter().map(|c| c.measured().count()).collect();
    assert!(n[0].abs_diff(n[1]) <= 1 && n[0] >= 3, "{n:?}");
}
