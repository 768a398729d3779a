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

/// Says which rule stopped the cases: how many by precision (and the sample
/// counts), which could not converge and why (a mixture, a drift), which
/// by max-reps or max-time.
fn adaptive_note(
    rule: &Rule,
    headline: &str,
    stops: &[(String, Stop, usize)],
    warmup: usize,
    variants: usize,
) -> String {
    let n = stops.len();
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
            "precision reached in {} of {n} cases (n={}{})",
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
            "paired ratio to the first variant within {} in {paired} of {n} cases",
            percent(rule.precision)
        ));
    }
    for (kind, limit) in [
        ("mixture", String::new()),
        ("drift", String::new()),
        ("max-reps", format!(" {}", rule.max_reps)),
        ("max-time", format!(" {:?}", rule.max_time)),
    ] {
        let hit: Vec<String> = stops
            .iter()
            .filter(|(_, s, _)| s.kind() == kind)
            .map(|(k, s, n)| match s.reason() {
                Some(why) => format!("{k} at n={n}: {why}"),
                None => k.clone(),
            })
            .collect();
        if !hit.is_empty() {
            let mut names = hit.iter().take(3).cloned().collect::<Vec<_>>().join(", ");
            if hit.len() > 3 {
                names.push_str(", ...");
            }
            parts.push(format!("{kind}{limit} stopped {} ({names})", hit.len()));
        }
    }
    format!(
        "adaptive, 95% CI of {headline} median within {}: {}; after {warmup} warm-up{}",
        percent(rule.precision),
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
        let rule = Rule {
            precision: 0.01,
            min_reps: 3,
            max_reps: 30,
            max_time: Duration::from_secs(60),
        };
        let stops = [
            ("fault/1".to_string(), Stop::Precision(0.008), 12),
            (
                "fault/2".to_string(),
                Stop::Mixture {
                    low_n: 4,
                    low: 290_123.4,
                    high_n: 6,
                    high: 620_456.7,
                },
                10,
            ),
            (
                "fault/4".to_string(),
                Stop::Drift {
                    per_sample: 0.0085,
                    p: 2.1e-4,
                },
                14,
            ),
        ];
        let note = adaptive_note(&rule, "fault/wsec", &stops, 1, 1);
        assert_eq!(
            note,
            "adaptive, 95% CI of fault/wsec median within 1%: precision reached in 1 of \
             3 cases (n=12); mixture stopped 1 (fault/2 at n=10: 4 near 290123, 6 near \
             620457); drift stopped 1 (fault/4 at n=14: +0.85%/sample, p=2.1e-4); after \
             1 warm-up"
        );
    }
}
