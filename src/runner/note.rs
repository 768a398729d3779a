//! The note a run is stored with: how many samples each case took and
//! why its sampling stopped (a fixed count, precision reached, a mixture,
//! a drift, a limit), knob variants and invocations.

use super::{Plan, Reps};
use crate::stats::stopping::{Rule, Stop};

/// The note of a run that took every sample `plan` asked for: `headlines`
/// are the headline figures the samples reported, `stops` why each
/// adaptive case stopped (its key, the rule, its sample count).
pub fn complete(
    plan: &Plan,
    headlines: &[String],
    stops: &[(String, Stop, usize)],
    variants: usize,
    invocations: usize,
) -> String {
    let mut note = match plan.reps {
        Reps::Fixed(reps) => format!(
            "fixed count: {reps} samples per case after {} warm-up{}",
            plan.warmup,
            interleaved(variants)
        ),
        Reps::Adaptive(rule) => adaptive_note(
            &rule,
            &if headlines.is_empty() {
                "?".to_string()
            } else {
                headlines.join("|")
            },
            stops,
            plan.warmup,
            variants,
        ),
    };
    if invocations > 1 {
        note.push_str(&format!(
            "; {invocations} invocations (counts and limits per invocation)"
        ));
    }
    note
}

/// "; N knob variants interleaved", or nothing for one.
fn interleaved(variants: usize) -> String {
    if variants > 1 {
        format!("; {variants} knob variants interleaved")
    } else {
        String::new()
    }
}

/// "0.5%" for 0.005.
pub fn percent(fraction: f64) -> String {
    format!("{}%", (fraction * 100.0 * 1e6).round() / 1e6)
}

/// "±0.40%", or "no interval" while there is none.
fn plus_minus(rel: f64) -> String {
    if rel.is_finite() {
        format!("±{:.2}%", rel * 100.0)
    } else {
        "no interval".into()
    }
}

/// One case's part of its stop's line: "fault/1 at n=63 ±0.41% (3 near
/// 554197, 7 near 689441)", the paired ratio's interval when paired.
fn case_stop(key: &str, n: usize, stop: &Stop) -> String {
    match stop {
        Stop::MaxTime { rel, paired, seen } => format!(
            "{key} at n={n} {}{}{}",
            if *paired { "paired ratio " } else { "" },
            plus_minus(*rel),
            seen.map_or(String::new(), |u| format!(" ({})", u.reason()))
        ),
        Stop::Unreachable {
            rel,
            why,
            projection: p,
            paired,
        } => format!(
            "{key} at n={n} would need {}~{} {} (~{}) ({}{} now; {})",
            if p.need.more_than {
                "more than "
            } else {
                "at least "
            },
            p.need.samples,
            if *paired { "rounds" } else { "samples" },
            crate::units::duration(p.need.samples as f64 * p.per_sample_s),
            if *paired { "paired ratio " } else { "" },
            plus_minus(*rel),
            why.reason()
        ),
        _ => key.to_string(),
    }
}

/// Says which rule stopped the cases: how many by precision (and the
/// sample counts), which could not reach it within the budget and why (a
/// mixture or drift, with the samples the precision would need), which
/// by max-reps or max-time (with the interval reached).
fn adaptive_note(
    rule: &Rule,
    headline: &str,
    stops: &[(String, Stop, usize)],
    warmup: usize,
    variants: usize,
) -> String {
    let n = stops.len();
    let precision = percent(rule.precision);
    let by_precision: Vec<usize> = stops
        .iter()
        .filter(|(_, s, _)| matches!(s, Stop::Precision(_)))
        .map(|(_, _, n)| *n)
        .collect();
    let mut parts = Vec::new();
    if !by_precision.is_empty() {
        let (lo, hi) = (
            by_precision.iter().min().copied().unwrap_or(0),
            by_precision.iter().max().copied().unwrap_or(0),
        );
        parts.push(format!(
            "precision {precision} reached in {} of {n} cases (n={}{})",
            by_precision.len(),
            lo,
            if hi > lo {
                format!("..{hi}")
            } else {
                String::new()
            }
        ));
    }
    let paired = stops
        .iter()
        .filter(|(_, s, _)| matches!(s, Stop::Paired(_)))
        .count();
    if paired > 0 {
        parts.push(format!(
            "paired ratio to the first variant within {precision} in {paired} of {n} cases"
        ));
    }
    for (kind, head) in [
        (
            "unreachable",
            format!("cannot reach {precision} within {:?}:", rule.max_time),
        ),
        ("max-reps", format!("max-reps {} stopped", rule.max_reps)),
        ("max-time", format!("max-time {:?}:", rule.max_time)),
    ] {
        let hit: Vec<String> = stops
            .iter()
            .filter(|(_, s, _)| s.kind() == kind)
            .map(|(k, s, n)| case_stop(k, *n, s))
            .collect();
        if hit.is_empty() {
            continue;
        }
        let mut names = hit.iter().take(3).cloned().collect::<Vec<_>>().join(", ");
        if hit.len() > 3 {
            names.push_str(&format!(", ... ({} in all)", hit.len()));
        }
        parts.push(if kind == "max-reps" {
            format!("{head} {} ({names})", hit.len())
        } else {
            format!("{head} {names}")
        });
    }
    format!(
        "adaptive, 95% CI of {headline} median within {precision}: {}; after {warmup} \
         warm-up{}",
        parts.join("; "),
        interleaved(variants)
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn the_note_says_why_cases_stopped_early() {
        use crate::stats::projection::Need;
        use crate::stats::stopping::{Projection, Unsettled};
        let rule = Rule {
            precision: 0.001,
            min_reps: 3,
            max_reps: usize::MAX,
            max_time: Duration::from_secs(60),
        };
        let mixture = Unsettled::Mixture {
            low_n: 3,
            low: 554_197.2,
            high_n: 7,
            high: 689_441.4,
        };
        let stops = [
            ("fault/1".to_string(), Stop::Precision(0.0008), 12),
            (
                "fault/2".to_string(),
                Stop::Unreachable {
                    rel: 0.196,
                    why: mixture,
                    projection: Projection {
                        budget_n: 60,
                        at_budget: 0.012,
                        need: Need {
                            samples: 6800,
                            more_than: false,
                        },
                        per_sample_s: 0.5,
                    },
                    paired: false,
                },
                10,
            ),
            (
                "fault/4".to_string(),
                Stop::MaxTime {
                    rel: 0.004,
                    paired: false,
                    seen: Some(Unsettled::Drift {
                        per_sample: 0.0085,
                        p: 2.1e-4,
                    }),
                },
                114,
            ),
        ];
        let note = adaptive_note(&rule, "fault/wsec", &stops, 1, 1);
        assert_eq!(
            note,
            "adaptive, 95% CI of fault/wsec median within 0.1%: precision 0.1% reached in 1 \
             of 3 cases (n=12); cannot reach 0.1% within 60s: fault/2 at n=10 would need at \
             least ~6800 samples (~56.7 min) (±19.60% now; 3 near 554197, 7 near 689441); \
             max-time 60s: fault/4 at n=114 ±0.40% (+0.85%/sample, p=2.1e-4); after 1 \
             warm-up"
        );
    }
}
