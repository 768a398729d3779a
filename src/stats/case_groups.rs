//! A stored case whose samples fall into two groups: the groups of its
//! figure (by `mixture::detect`), when and in which order their samples
//! were taken, and the other measured quantities that moved with them
//! (figures, system time per fault and per wall second, /proc/vmstat
//! deltas, noise accounting).

use serde::Serialize;
use std::collections::BTreeSet;

use super::mixture::{self, Difference};
use crate::model::{CaseSamples, Sample};

/// One group of a case's samples.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GroupFacts {
    pub n: usize,
    pub median: f64,
    pub min: f64,
    pub max: f64,
    /// The samples' sequence numbers, in order.
    pub seqs: Vec<i64>,
    /// When the group's first and last samples were taken.
    pub first_taken: String,
    pub last_taken: String,
}

/// A case's mixture in one figure, lower group first.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CaseMixture {
    pub figure: String,
    pub groups: [GroupFacts; 2],
    /// What else differed between the groups, most first.
    pub differed: Vec<Difference>,
}

/// The per-sample series worth comparing between groups, aligned with
/// `samples`: other figures, derived system-time ratios, vmstat deltas and
/// noise figures (NaN where a sample lacks one).
fn series(samples: &[&Sample], figure: &str) -> Vec<(String, Vec<f64>)> {
    let fig = |s: &Sample, name: &str| s.data.figures.get(name).copied().unwrap_or(f64::NAN);
    let mut out = Vec::new();
    let figures: BTreeSet<&String> = samples.iter().flat_map(|s| s.data.figures.keys()).collect();
    for name in figures.iter().filter(|n| n.as_str() != figure) {
        out.push((
            name.to_string(),
            samples.iter().map(|s| fig(s, name)).collect(),
        ));
    }
    for per in ["faults", "wall"] {
        if figures.iter().any(|n| n.as_str() == "system")
            && figures.iter().any(|n| n.as_str() == per)
        {
            out.push((
                format!("system/{per}"),
                samples
                    .iter()
                    .map(|s| fig(s, "system") / fig(s, per))
                    .collect(),
            ));
        }
    }
    let counters: BTreeSet<&String> = samples.iter().flat_map(|s| s.vmstat.keys()).collect();
    let noise: BTreeSet<&String> = samples.iter().flat_map(|s| s.noise.keys()).collect();
    type Get = fn(&Sample, &str) -> f64;
    let keyed: [(&str, &BTreeSet<&String>, Get); 2] = [
        ("vmstat", &counters, |s, k| {
            s.vmstat.get(k).copied().unwrap_or(0) as f64
        }),
        ("noise", &noise, |s, k| {
            s.noise.get(k).copied().unwrap_or(f64::NAN)
        }),
    ];
    for (prefix, names, get) in keyed {
        for name in names.iter() {
            let v = samples.iter().map(|s| get(s, name.as_str())).collect();
            out.push((format!("{prefix} {name}"), v));
        }
    }
    out
}

/// The mixture of `case`'s measured samples in `figure`, if they form two
/// clear groups; `limit` bounds the list of what else differed.
pub fn find(case: &CaseSamples, figure: &str, limit: usize) -> Option<CaseMixture> {
    let values: Vec<f64> = case.values(figure).filter(|v| v.is_finite()).collect();
    find_sorted(case, figure, &values, &mixture::sorted(&values), limit)
}

/// `find` for the case's finite measured values of `figure` (in sampling
/// order) and their sorted copy, when the caller has them.
pub fn find_sorted(
    case: &CaseSamples,
    figure: &str,
    values: &[f64],
    sorted: &[f64],
    limit: usize,
) -> Option<CaseMixture> {
    let m = mixture::detect_sorted(values, sorted)?;
    let samples: Vec<&Sample> = case
        .measured()
        .filter(|s| s.data.figures.get(figure).is_some_and(|v| v.is_finite()))
        .collect();
    let facts = |g: &mixture::Group| {
        let taken: Vec<&str> = g
            .indices
            .iter()
            .map(|&i| samples[i].taken_at.as_str())
            .collect();
        GroupFacts {
            n: g.indices.len(),
            median: g.median,
            min: g.min,
            max: g.max,
            seqs: g.indices.iter().map(|&i| samples[i].seq).collect(),
            first_taken: taken.iter().min().copied().unwrap_or("").to_string(),
            last_taken: taken.iter().max().copied().unwrap_or("").to_string(),
        }
    };
    Some(CaseMixture {
        figure: figure.to_string(),
        differed: mixture::differences(&m, &series(&samples, figure), limit),
        groups: [facts(&m.groups[0]), facts(&m.groups[1])],
    })
}

/// The mixture of bare values (a sample file: no times, nothing else
/// measured), their positions as sample numbers.
pub fn of_values(values: &[f64], sorted: &[f64], figure: &str) -> Option<CaseMixture> {
    let m = mixture::detect_sorted(values, sorted)?;
    let facts = |g: &mixture::Group| GroupFacts {
        n: g.indices.len(),
        median: g.median,
        min: g.min,
        max: g.max,
        seqs: g.indices.iter().map(|&i| i as i64).collect(),
        first_taken: String::new(),
        last_taken: String::new(),
    };
    Some(CaseMixture {
        figure: figure.to_string(),
        groups: [facts(&m.groups[0]), facts(&m.groups[1])],
        differed: Vec::new(),
    })
}

/// Whether the two groups are clustered in time: in sampling order (by
/// sequence number) their samples form fewer runs than a random order
/// would (Wald-Wolfowitz runs test, one-sided z below -1.96), as when a
/// slow stretch of the machine made one group, not the case itself.
pub fn clustered_in_time(m: &CaseMixture) -> bool {
    let [lo, hi] = &m.groups;
    let (n1, n2) = (lo.seqs.len() as f64, hi.seqs.len() as f64);
    let n = n1 + n2;
    if n1 < 2.0 || n2 < 2.0 {
        return false;
    }
    // Both lists are ascending: merge them, counting changes of group.
    let (mut i, mut j, mut runs, mut last) = (0, 0, 0usize, None);
    while i < lo.seqs.len() || j < hi.seqs.len() {
        let low = j >= hi.seqs.len() || (i < lo.seqs.len() && lo.seqs[i] < hi.seqs[j]);
        if low {
            i += 1;
        } else {
            j += 1;
        }
        if last != Some(low) {
            runs += 1;
            last = Some(low);
        }
    }
    let mean = 1.0 + 2.0 * n1 * n2 / n;
    let var = 2.0 * n1 * n2 * (2.0 * n1 * n2 - n) / (n * n * (n - 1.0));
    var > 0.0 && (runs as f64 - mean) / var.sqrt() < -1.96
}

/// "3,5,9-12" for sequence numbers (ascending).
pub fn ranges(seqs: &[i64]) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut i = 0;
    while i < seqs.len() {
        let mut j = i;
        while j + 1 < seqs.len() && seqs[j + 1] == seqs[j] + 1 {
            j += 1;
        }
        parts.push(if j > i + 1 {
            format!("{}-{}", seqs[i], seqs[j])
        } else if j == i + 1 {
            format!("{},{}", seqs[i], seqs[j])
        } else {
            seqs[i].to_string()
        });
        i = j + 1;
    }
    parts.join(",")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Case, SampleData};

    fn sample(seq: i64, rate: f64, system: f64) -> Sample {
        Sample {
            seq,
            warmup: seq == 0,
            taken_at: format!("2026-01-01T00:00:{seq:02}.000Z"),
            data: SampleData {
                figures: [
                    ("fault/wsec".to_string(), rate),
                    ("system".to_string(), system),
                    ("faults".to_string(), 1000.0),
                ]
                .into(),
                tasks: Vec::new(),
            },
            vmstat: [(
                "compact_stall".to_string(),
                if rate < 400.0 { 50 } else { 0 },
            )]
            .into(),
            noise: Default::default(),
            flagged: false,
        }
    }

    #[test]
    fn slow_samples_come_with_their_system_time_and_counters() {
        // Every third sample slow, with twice the system time and compaction.
        let samples = (0..31)
            .map(|i| {
                let slow = i % 3 == 1;
                let wobble = 1.0 + (i % 5) as f64 * 0.002;
                if slow {
                    sample(i, 300.0 * wobble, 2.0 * wobble)
                } else {
                    sample(i, 600.0 * wobble, 1.0 * wobble)
                }
            })
            .collect();
        let case = CaseSamples {
            case: Case::new(1, "fault"),
            samples,
        };
        let m = find(&case, "fault/wsec", 4).expect("a mixture");
        assert_eq!((m.groups[0].n, m.groups[1].n), (10, 20));
        assert_eq!(ranges(&m.groups[0].seqs), "1,4,7,10,13,16,19,22,25,28");
        assert_eq!(m.groups[0].first_taken, "2026-01-01T00:00:01.000Z");
        let names: Vec<&str> = m.differed.iter().map(|d| d.name.as_str()).collect();
        assert_eq!(names[0], "vmstat compact_stall", "{names:?}");
        assert!(
            names.contains(&"system") && names.contains(&"system/faults"),
            "{names:?}"
        );
        assert!(!names.contains(&"faults"), "{names:?}");
        assert_eq!(ranges(&[1, 2, 3, 5, 7, 8]), "1-3,5,7,8");
        // Every third sample slow: spread over the run, not a stretch.
        assert!(!clustered_in_time(&m));
    }

    #[test]
    fn a_slow_stretch_is_clustered_in_time() {
        // Samples 10-20 of 31 slow (a stretch of the machine).
        let samples = (0..31)
            .map(|i| {
                let wobble = 1.0 + (i % 5) as f64 * 0.002;
                let slow = (10..=20).contains(&i);
                sample(i, if slow { 300.0 } else { 600.0 } * wobble, 1.0)
            })
            .collect();
        let case = CaseSamples {
            case: Case::new(1, "fault"),
            samples,
        };
        let m = find(&case, "fault/wsec", 4).expect("a mixture");
        assert_eq!(ranges(&m.groups[0].seqs), "10-20");
        assert!(clustered_in_time(&m));
    }
}
