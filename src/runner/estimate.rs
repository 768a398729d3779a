//! A run's plan and its time estimate: the cases, how many samples the
//! plan can take of each (warm-up, then a fixed count, or adaptive between
//! the least it trusts and `--max-reps`, stopped by `--max-time`), and one
//! sample's expected time as the workload models it (`Workload::sample_s`).
//! Printed before a run starts and by `run --dry-run` (docs/scale.md).

use serde::Serialize;
use std::fmt::Write as _;
use std::time::Duration;

use super::{Plan, Reps};
use crate::text::clip;
use crate::units::duration;
use crate::workload::Workload;

/// One case of the plan.
#[derive(Debug, Clone, Serialize)]
pub struct CasePlan {
    pub tasks: usize,
    pub variant: String,
    /// One sample of every knob variant of the case, seconds.
    pub sample_s: f64,
    /// Samples taken at least and at most, warm-ups included; `null` at
    /// most: no cap but `--max-time`.
    pub samples_least: usize,
    pub samples_most: Option<usize>,
}

/// The plan of one run.
#[derive(Debug, Clone, Serialize)]
pub struct Estimate {
    pub workload: String,
    /// The expected time at most: every sample the plan allows, but no
    /// longer than `--max-time` once each case has its least samples.
    pub estimate_s: f64,
    /// The least samples of every case (warm-ups included).
    pub least_s: f64,
    /// The adaptive time budget; `null` for a fixed count.
    pub max_time_s: Option<f64>,
    pub cases: Vec<CasePlan>,
    /// The workload's own part of the plan (c2c: `pairs`).
    #[serde(flatten)]
    pub detail: serde_json::Map<String, serde_json::Value>,
    /// The same as text lines (c2c: how many pairs of how many).
    #[serde(skip)]
    pub notes: Vec<String>,
}

/// How the run repeats its cases besides the plan: `--invocations` visits
/// of every case, `combos` knob variants side by side in every round.
#[derive(Debug, Clone, Copy)]
pub struct Repeats {
    pub invocations: usize,
    pub combos: usize,
}

/// The plan of `w` under `plan`; `max_time` is `--max-time`.
pub fn estimate(w: &dyn Workload, plan: &Plan, max_time: Duration, rep: Repeats) -> Estimate {
    let (least_n, most_n, budget) = match plan.reps {
        Reps::Fixed(n) => (n, n, None),
        Reps::Adaptive(r) => {
            let least = r.min_reps.clamp(1, r.max_reps.max(1));
            (least, r.max_reps.max(least), Some(r.max_time))
        }
    };
    let visits = rep.invocations.max(1);
    let cases: Vec<CasePlan> = w
        .cases()
        .iter()
        .map(|c| CasePlan {
            tasks: c.tasks,
            variant: c.variant.clone(),
            sample_s: tenth_ms(w.sample_s(c) * rep.combos.max(1) as f64),
            samples_least: visits.saturating_mul(plan.warmup.saturating_add(least_n)),
            samples_most: (most_n < usize::MAX)
                .then(|| visits.saturating_mul(plan.warmup.saturating_add(most_n))),
        })
        .collect();
    let least_s: f64 = cases
        .iter()
        .map(|c| c.sample_s * c.samples_least as f64)
        .sum();
    let most_s: f64 = cases
        .iter()
        .map(|c| {
            c.samples_most
                .map_or(f64::INFINITY, |n| c.sample_s * n as f64)
        })
        .sum();
    let estimate_s = match budget {
        // Adaptive sampling stops at the budget once each case has its
        // least samples: a plan whose least is over the budget runs past it.
        Some(b) => most_s.min(least_s.max(b.as_secs_f64())),
        // A fixed count takes what it takes.
        None => least_s,
    };
    Estimate {
        workload: w.name().to_string(),
        estimate_s: tenth_ms(estimate_s),
        least_s: tenth_ms(least_s),
        max_time_s: budget.map(|_| max_time.as_secs_f64()),
        cases,
        detail: w.plan_detail(),
        notes: w.plan_notes(),
    }
}

/// Seconds to a tenth of a millisecond: a model's figure has no more.
fn tenth_ms(s: f64) -> f64 {
    (s * 1e4).round() / 1e4
}

/// Cases listed one a line before the rest are summarised.
const CASE_LINES: usize = 12;

impl Estimate {
    /// The plan in 80 columns.
    pub fn text(&self) -> String {
        let mut out = String::new();
        let samples = |c: &CasePlan| match c.samples_most {
            Some(n) if n == c.samples_least => n.to_string(),
            Some(n) => format!("{}-{n}", c.samples_least),
            None => format!("{}+", c.samples_least),
        };
        let _ = writeln!(
            out,
            "plan: {}, {} case(s); samples per case with warm-up",
            self.workload,
            self.cases.len()
        );
        for n in &self.notes {
            let _ = writeln!(out, "  {n}");
        }
        let _ = writeln!(
            out,
            "  {:<30} {:>6} {:>12} {:>9}",
            "case", "tasks", "one sample", "samples"
        );
        for c in self.cases.iter().take(CASE_LINES) {
            let _ = writeln!(
                out,
                "  {:<30} {:>6} {:>12} {:>9}",
                clip(&c.variant, 30),
                c.tasks,
                duration(c.sample_s),
                samples(c)
            );
        }
        if self.cases.len() > CASE_LINES {
            let rest = &self.cases[CASE_LINES..];
            let (lo, hi) = rest.iter().fold((usize::MAX, 0), |(lo, hi), c| {
                (lo.min(c.tasks), hi.max(c.tasks))
            });
            let longest = rest.iter().map(|c| c.sample_s).fold(0.0, f64::max);
            let _ = writeln!(
                out,
                "  ... {} more (tasks {lo}-{hi}, one sample at most {})",
                rest.len(),
                duration(longest)
            );
        }
        let budget = self
            .max_time_s
            .map(|b| format!(" (adaptive, --max-time {})", duration(b)))
            .unwrap_or_default();
        let _ = writeln!(
            out,
            "estimate: {} at most, {} at least{budget}",
            duration(self.estimate_s),
            duration(self.least_s)
        );
        if self.max_time_s.is_some_and(|b| self.least_s > b) {
            let _ = writeln!(
                out,
                "  over --max-time: the least samples of every case take longer;\n  \
                 give fewer --tasks, less work per task, or a bigger --max-time"
            );
        }
        out
    }
}

/// The plan of a suite (`run quick`): its runs and their total.
#[derive(Debug, Clone, Serialize)]
pub struct SuiteEstimate {
    pub estimate_s: f64,
    pub least_s: f64,
    pub runs: Vec<Estimate>,
}

impl SuiteEstimate {
    pub fn new(runs: Vec<Estimate>) -> SuiteEstimate {
        SuiteEstimate {
            estimate_s: tenth_ms(runs.iter().map(|r| r.estimate_s).sum()),
            least_s: tenth_ms(runs.iter().map(|r| r.least_s).sum()),
            runs,
        }
    }

    /// One line a run, then the total, in 80 columns.
    pub fn text(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(
            out,
            "plan: {:<22} {:>6} {:>12} {:>12}",
            "run", "cases", "at least", "at most"
        );
        for r in &self.runs {
            let _ = writeln!(
                out,
                "      {:<22} {:>6} {:>12} {:>12}",
                clip(&r.workload, 22),
                r.cases.len(),
                duration(r.least_s),
                duration(r.estimate_s)
            );
            for n in &r.notes {
                let _ = writeln!(out, "        {}", clip(n, 72));
            }
        }
        let _ = writeln!(
            out,
            "estimate: {} at most, {} at least",
            duration(self.estimate_s),
            duration(self.least_s)
        );
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::stopping::Rule;

    use crate::workload::Measure;

    struct Two;
    impl Measure for Two {
        fn cases(&self) -> Vec<crate::model::Case> {
            vec![
                crate::model::Case::new(1, "a"),
                crate::model::Case::new(2, "a"),
            ]
        }
        fn memory_need(&self) -> u64 {
            0
        }
        fn sample_s(&self, c: &crate::model::Case) -> f64 {
            c.tasks as f64
        }
        fn sample(&self, _: &crate::model::Case) -> crate::error::Result<crate::model::SampleData> {
            unreachable!()
        }
    }

    impl Workload for Two {
        fn name(&self) -> &'static str {
            "two"
        }
        fn figures(&self) -> Vec<crate::model::Figure> {
            Vec::new()
        }
        fn config(&self) -> serde_json::Value {
            serde_json::Value::Null
        }
    }

    #[test]
    fn fixed_counts_add_up_and_adaptive_stops_at_the_budget() {
        let one = Repeats {
            invocations: 1,
            combos: 1,
        };
        let fixed = Plan {
            warmup: 1,
            reps: Reps::Fixed(4),
        };
        let e = estimate(&Two, &fixed, Duration::from_secs(40), one);
        assert_eq!((e.least_s, e.estimate_s), (15.0, 15.0));
        let rule = |secs| Rule {
            precision: 0.01,
            min_reps: 3,
            max_reps: 30,
            max_time: Duration::from_secs(secs),
        };
        let adaptive = Plan {
            warmup: 1,
            reps: Reps::Adaptive(rule(40)),
        };
        let e = estimate(&Two, &adaptive, Duration::from_secs(40), one);
        assert_eq!((e.least_s, e.estimate_s), (12.0, 40.0));
        // No cap on the samples (the default): the budget is the most.
        let uncapped = Plan {
            warmup: 1,
            reps: Reps::Adaptive(Rule {
                max_reps: usize::MAX,
                ..rule(40)
            }),
        };
        let e = estimate(&Two, &uncapped, Duration::from_secs(40), one);
        assert_eq!((e.least_s, e.estimate_s), (12.0, 40.0));
        assert_eq!(e.cases[0].samples_most, None);
        assert!(e.text().contains(" 4+"), "{}", e.text());
        // A budget below the least: the least is what it takes.
        let tight = Plan {
            warmup: 1,
            reps: Reps::Adaptive(rule(5)),
        };
        assert_eq!(
            estimate(&Two, &tight, Duration::from_secs(5), one).estimate_s,
            12.0
        );
        // Knob variants and invocations multiply.
        let more = Repeats {
            invocations: 2,
            combos: 2,
        };
        assert_eq!(
            estimate(&Two, &fixed, Duration::from_secs(40), more).least_s,
            60.0
        );
    }
}
