//! The progress total is the work really planned: fixed counts exactly;
//! for adaptive stopping the least it takes, grown by each sample a case
//! adds, so the bar ends at its total instead of short of a cap.

mod common;

use std::cell::{Cell, RefCell};

use common::Scratch;
use vmscale::machine::Snapshot;
use vmscale::model::{Better, Case, Figure, SampleData};
use vmscale::runner::{KnobSetup, Options, Plan, Progress, Reps, Session, Setup};
use vmscale::stats::stopping::Rule;
use vmscale::workload::{Measure, Workload};

/// Two cases whose figure alternates widely, so adaptive stopping runs to
/// its cap, and one that never varies, so it stops at the minimum.
struct Alternating {
    calls: Cell<u64>,
}

impl Measure for Alternating {
    fn cases(&self) -> Vec<Case> {
        vec![Case::new(1, "wide"), Case::new(1, "flat")]
    }
    fn memory_need(&self) -> u64 {
        0
    }
    fn sample(&self, case: &Case) -> vmscale::error::Result<SampleData> {
        let n = self.calls.get();
        self.calls.set(n + 1);
        let x = match case.variant.as_str() {
            "wide" => [1.0, 9.0, 2.0, 8.0][(n % 4) as usize],
            _ => 5.0,
        };
        Ok(SampleData {
            figures: [("x".to_string(), x)].into(),
            tasks: Vec::new(),
        })
    }
}

impl Workload for Alternating {
    fn name(&self) -> &'static str {
        "alternating"
    }
    fn figures(&self) -> Vec<Figure> {
        vec![Figure::new("x", "s", Better::Lower, false)]
    }
    fn config(&self) -> serde_json::Value {
        serde_json::json!({})
    }
}

#[derive(Default)]
struct Recorder {
    total: Cell<u64>,
    first_total: Cell<u64>,
    steps: Cell<u64>,
    log: RefCell<Vec<String>>,
}

impl Progress for Recorder {
    fn start(&self, total: u64) {
        self.total.set(total);
        self.first_total.set(total);
    }
    fn step(&self, message: &str) {
        self.steps.set(self.steps.get() + 1);
        self.log.borrow_mut().push(message.to_string());
        assert!(
            self.steps.get() <= self.total.get(),
            "a step past the total"
        );
    }
    fn finish(&self) {}
    fn grow(&self, more: u64) {
        self.total.set(self.total.get() + more);
    }
}

fn run(plan: &Plan) -> Recorder {
    let s = Scratch::new("progress-plan");
    let w = Alternating {
        calls: Cell::new(0),
    };
    let machine = Snapshot::default();
    let setup = Setup {
        workload: &w,
        plan: *plan,
        options: Options::default(),
        label: None,
        command_line: String::new(),
        machine: &machine,
        knobs: KnobSetup::none(),
    };
    let rec = Recorder::default();
    Session::begin(&s.db(), setup).unwrap().run(&rec).unwrap();
    rec
}

#[test]
fn fixed_counts_are_planned_exactly() {
    let rec = run(&Plan {
        warmup: 1,
        reps: Reps::Fixed(4),
    });
    assert_eq!(rec.first_total.get(), 2 * (1 + 4));
    assert_eq!(rec.total.get(), rec.steps.get());
}

#[test]
fn adaptive_runs_plan_the_minimum_and_grow_to_what_was_done() {
    let rec = run(&Plan {
        warmup: 1,
        reps: Reps::Adaptive(Rule {
            precision: 0.01,
            min_reps: 3,
            max_reps: 12,
            max_time: std::time::Duration::from_secs(600),
        }),
    });
    // Planned: warm-up and the minimum per case, not the cap of 12.
    assert_eq!(rec.first_total.get(), 2 * (1 + 3));
    // The wide case went on past the minimum; the bar grew with it and
    // ends exactly at its total.
    assert!(
        rec.steps.get() > rec.first_total.get(),
        "{:?}",
        rec.log.borrow()
    );
    assert_eq!(rec.total.get(), rec.steps.get());
}
