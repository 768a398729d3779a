//! Between-run agreement: whether a run's headline intervals overlap those
//! of the previous run of the same command on the same machine. Disjoint
//! intervals mean the machine's state changed between the runs by more than
//! either run's own interval shows (on a VM: vCPU placement by the host).

use crate::model::{CaseSamples, Run};
use crate::stats::robust::{MedianCi, median_ci};

/// A case whose headline interval misses the earlier run's.
#[derive(Debug, Clone, PartialEq)]
pub struct Disagreement {
    pub case: String,
    pub figure: String,
    pub now: MedianCi,
    pub before: MedianCi,
}

/// The first declared figure the case's measured samples carry.
fn headline(run: &Run, case: &CaseSamples) -> Option<String> {
    run.meta
        .figures
        .iter()
        .find(|f| {
            case.measured()
                .any(|s| s.data.figures.get(&f.name).is_some_and(|v| v.is_finite()))
        })
        .map(|f| f.name.clone())
}

fn interval(case: &CaseSamples, figure: &str) -> Option<MedianCi> {
    let values: Vec<f64> = case.values(figure).filter(|v| v.is_finite()).collect();
    median_ci(&values)
}

/// Cases of `now` whose headline median interval and the same case's in
/// `before` do not overlap (cases either run lacks are passed over).
pub fn disagreements(before: &Run, now: &Run) -> Vec<Disagreement> {
    let mut out = Vec::new();
    for case in &now.cases {
        let key = case.case.key();
        let Some(earlier) = before.cases.iter().find(|c| c.case.key() == key) else {
            continue;
        };
        let Some(figure) = headline(now, case) else {
            continue;
        };
        let (Some(n), Some(b)) = (interval(case, &figure), interval(earlier, &figure)) else {
            continue;
        };
        if n.hi < b.lo || b.hi < n.lo {
            out.push(Disagreement {
                case: key,
                figure,
                now: n,
                before: b,
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Better, Case, Figure, RunMeta, Sample, SampleData};

    fn run(id: i64, centre: f64) -> Run {
        let mut meta = RunMeta::bare(id, "c2c", serde_json::json!({}));
        meta.figures = vec![Figure::new("ns", "ns", Better::Lower, false)];
        let samples = (0..8)
            .map(|i| Sample {
                seq: i,
                warmup: false,
                taken_at: String::new(),
                data: SampleData {
                    figures: [("ns".to_string(), centre + 0.01 * i as f64)].into(),
                    tasks: Vec::new(),
                },
                vmstat: Default::default(),
                noise: Default::default(),
                flagged: false,
            })
            .collect();
        Run {
            meta,
            cases: vec![CaseSamples {
                case: Case::new(2, "cas"),
                samples,
            }],
        }
    }

    #[test]
    fn disjoint_intervals_are_named_and_overlapping_ones_are_not() {
        let found = disagreements(&run(1, 22.8), &run(2, 23.7));
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].case, Case::new(2, "cas").key());
        assert!(found[0].now.lo > found[0].before.hi);
        assert!(disagreements(&run(1, 22.8), &run(2, 22.82)).is_empty());
    }

    #[test]
    fn a_case_the_earlier_run_lacks_is_passed_over() {
        let mut other = run(1, 10.0);
        other.cases[0].case = Case::new(4, "cas");
        assert!(disagreements(&other, &run(2, 23.7)).is_empty());
    }
}
