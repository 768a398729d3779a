//! The adaptive stopping rule: keep sampling until the 95 % confidence
//! interval of the headline figure's median (order statistics, no
//! distribution assumed) is within a relative precision; stop early when
//! the samples show they cannot settle (two groups, or a drift); else stop
//! at a time limit (or a sample count, when one is given). Pure: it sees
//! numbers only. Beyond `CHECK_EVERY_FROM` samples the precision and the
//! cannot-converge tests run at every 1 % more samples rather than after
//! every one, so a case sampled for a long budget costs O(n log n) in all.

use std::time::Duration;

use super::mixture;
use super::robust::{self, MEDIAN_CI_MIN_N};

/// When to stop sampling one case.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rule {
    /// Target half-width of the 95 % CI as a fraction of the median (0.01 = 1 %).
    pub precision: f64,
    /// Never stop by precision before this many samples.
    pub min_reps: usize,
    /// Stop after this many samples whatever the precision (`usize::MAX`:
    /// no count, the time budget decides).
    pub max_reps: usize,
    /// Stop once sampling this case has taken this long (after `min_reps`).
    pub max_time: Duration,
}

/// From this many samples on, the precision and cannot-converge tests run
/// only at every 1 % more samples (`worth_checking`).
pub const CHECK_EVERY_FROM: usize = 200;

/// Whether the rule's tests run after sample `n`: always up to
/// `CHECK_EVERY_FROM`, then when n is a multiple of n / 100.
pub fn worth_checking(n: usize) -> bool {
    n <= CHECK_EVERY_FROM || n.is_multiple_of(n / 100)
}

/// Samples needed before a mixture or a drift may stop a case.
pub const CANNOT_CONVERGE_MIN_N: usize = 10;

/// A Mann-Kendall p-value below this stops a case as drifting. Strict,
/// because the test is repeated after every sample.
pub const DRIFT_P: f64 = 0.001;

/// Why sampling stopped.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Stop {
    /// The median's CI half-width reached this fraction of the median.
    Precision(f64),
    /// Knob variants: the paired ratio of every variant to the first
    /// reached this relative half-width (the largest of them).
    Paired(f64),
    /// The samples form two groups: sizes and medians, lower group first.
    Mixture {
        low_n: usize,
        low: f64,
        high_n: usize,
        high: f64,
    },
    /// The samples drift: Sen's slope as a fraction of the median per
    /// sample, and the trend test's p-value.
    Drift {
        per_sample: f64,
        p: f64,
    },
    MaxReps,
    /// The time budget was spent; the relative half-width reached.
    MaxTime(f64),
}

impl Stop {
    /// "precision", "mixture", "drift", "max-reps" or "max-time".
    pub fn kind(&self) -> &'static str {
        match self {
            Stop::Precision(_) => "precision",
            Stop::Paired(_) => "paired",
            Stop::Mixture { .. } => "mixture",
            Stop::Drift { .. } => "drift",
            Stop::MaxReps => "max-reps",
            Stop::MaxTime(_) => "max-time",
        }
    }

    /// The evidence of a mixture or drift, for the run's note.
    pub fn reason(&self) -> Option<String> {
        match *self {
            Stop::Mixture {
                low_n,
                low,
                high_n,
                high,
            } => Some(format!(
                "{low_n} near {}, {high_n} near {}",
                sig4(low),
                sig4(high)
            )),
            Stop::Drift { per_sample, p } => {
                Some(format!("{:+.2}%/sample, p={p:.1e}", per_sample * 100.0))
            }
            Stop::MaxTime(rel) if rel.is_finite() => {
                Some(format!("median CI ±{:.2}%", rel * 100.0))
            }
            _ => None,
        }
    }
}

/// `v` with about four significant digits (no exponent).
pub fn sig4(v: f64) -> String {
    let d = if v == 0.0 || !v.is_finite() {
        0
    } else {
        (3 - v.abs().log10().floor() as i32).clamp(0, 9) as usize
    };
    format!("{v:.d$}")
}

/// The median CI's half-width as a fraction of |median|; infinite when
/// undefined (fewer than `MEDIAN_CI_MIN_N` values, a zero median, or a
/// missing value).
pub fn relative_ci(values: &[f64]) -> f64 {
    robust::median_ci(values).map_or(f64::INFINITY, |c| c.relative_half_width())
}

/// Knob variants sampled in rounds (`variants[v][i]` from round i): the
/// largest relative half-width of the paired ratio of each variant to the
/// first (`stats::paired`), infinite with fewer than 3 rounds.
pub fn paired_relative_ci(variants: &[Vec<f64>]) -> f64 {
    let Some(first) = variants.first() else {
        return f64::INFINITY;
    };
    let tagged = |v: &[f64]| -> Vec<(i64, f64)> {
        v.iter().enumerate().map(|(i, x)| (i as i64, *x)).collect()
    };
    let base = tagged(first);
    variants[1..]
        .iter()
        .map(|v| match super::paired::ratio(&base, &tagged(v)) {
            Some(p) if p.pairs >= 3 => (p.ci95.1 / p.ratio - 1.0).max(1.0 - p.ci95.0 / p.ratio),
            _ => f64::INFINITY,
        })
        .fold(0.0, f64::max)
}

/// Decides for knob variants sampled in rounds: they stop together by the
/// precision of their paired ratios (after `rule.min_reps` rounds), else
/// when each variant's own rule stops it. One decision per variant.
pub fn decide_variants(rule: &Rule, variants: &[Vec<f64>], elapsed: Duration) -> Option<Vec<Stop>> {
    let n = variants.first().map_or(0, Vec::len);
    if variants.len() > 1 && n >= rule.min_reps.min(rule.max_reps).max(3) && worth_checking(n) {
        let rel = paired_relative_ci(variants);
        if rel <= rule.precision {
            return Some(vec![Stop::Paired(rel); variants.len()]);
        }
    }
    variants.iter().map(|v| decide(rule, v, elapsed)).collect()
}

/// Why `values` (in sampling order) cannot converge, if they cannot: two
/// groups, or a monotonic drift. Needs `CANNOT_CONVERGE_MIN_N` values.
pub fn cannot_converge(values: &[f64]) -> Option<Stop> {
    if values.len() < CANNOT_CONVERGE_MIN_N {
        return None;
    }
    if let Some(m) = mixture::detect(values) {
        let [lo, hi] = &m.groups;
        return Some(Stop::Mixture {
            low_n: lo.indices.len(),
            low: lo.median,
            high_n: hi.indices.len(),
            high: hi.median,
        });
    }
    // Sen's slope costs more than the test: only for a drift found.
    let p = robust::trend_p(values)?;
    if p >= DRIFT_P {
        return None;
    }
    let centre = super::summary::median(values);
    (centre != 0.0).then(|| Stop::Drift {
        per_sample: robust::sen_slope(values) / centre.abs(),
        p,
    })
}

/// Decides, after each sample, whether to stop: `values` are the headline
/// figure of the samples taken so far, in order, `elapsed` the time spent
/// on them.
pub fn decide(rule: &Rule, values: &[f64], elapsed: Duration) -> Option<Stop> {
    let n = values.len();
    let min = rule.min_reps.min(rule.max_reps).max(1);
    let check = worth_checking(n);
    if check && n >= min.max(MEDIAN_CI_MIN_N) {
        let rel = relative_ci(values);
        if rel <= rule.precision {
            return Some(Stop::Precision(rel));
        }
    }
    if check
        && n >= min
        && n < rule.max_reps
        && let Some(stop) = cannot_converge(values)
    {
        return Some(stop);
    }
    if n >= rule.max_reps {
        return Some(Stop::MaxReps);
    }
    if n >= min && elapsed >= rule.max_time {
        return Some(Stop::MaxTime(relative_ci(values)));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::rng::SplitMix64;

    fn rule() -> Rule {
        Rule {
            precision: 0.01,
            min_reps: 3,
            max_reps: 30,
            max_time: Duration::from_secs(600),
        }
    }

    /// A deterministic pseudo-random sequence (xorshift) around `mean` with
    /// relative spread `spread` (uniform, +/-).
    fn synthetic(mean: f64, spread: f64, n: usize, seed: u64) -> Vec<f64> {
        let mut x = seed.max(1);
        (0..n)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                let u = (x % 1_000_000) as f64 / 1_000_000.0 * 2.0 - 1.0;
                mean * (1.0 + spread * u)
            })
            .collect()
    }

    /// Feeds a sequence one value at a time, as the runner does.
    fn run(rule: &Rule, seq: &[f64]) -> (usize, Stop) {
        for n in 1..=seq.len() {
            if let Some(s) = decide(rule, &seq[..n], Duration::from_secs(n as u64)) {
                return (n, s);
            }
        }
        panic!("never stopped");
    }

    #[test]
    fn low_noise_stops_by_precision_once_the_median_has_an_interval() {
        let seq = synthetic(1000.0, 0.001, 100, 7);
        let (n, stop) = run(&rule(), &seq);
        assert_eq!(n, MEDIAN_CI_MIN_N);
        assert!(matches!(stop, Stop::Precision(p) if p <= 0.01));
    }

    #[test]
    fn moderate_noise_needs_more_samples_but_gets_there() {
        let seq = synthetic(1000.0, 0.015, 100, 11);
        let (n, stop) = run(&rule(), &seq);
        assert!(n > MEDIAN_CI_MIN_N && n < 30, "stopped after {n}");
        assert!(matches!(stop, Stop::Precision(_)), "{stop:?}");
        assert!(relative_ci(&seq[..n]) <= 0.01);
        assert!(relative_ci(&seq[..n - 1]) > 0.01);
    }

    #[test]
    fn high_noise_stops_at_max_reps() {
        let seq = synthetic(1000.0, 0.5, 100, 3);
        assert_eq!(run(&rule(), &seq), (30, Stop::MaxReps));
    }

    #[test]
    fn max_time_stops_after_minimum_only() {
        let r = Rule {
            max_time: Duration::from_secs(0),
            ..rule()
        };
        let seq = synthetic(1000.0, 0.5, 10, 5);
        assert_eq!(decide(&r, &seq[..1], Duration::from_secs(9)), None);
        assert!(matches!(
            decide(&r, &seq[..3], Duration::from_secs(9)),
            Some(Stop::MaxTime(_))
        ));
    }

    #[test]
    fn the_tests_thin_out_to_every_percent_beyond_200_samples() {
        assert!((1..=CHECK_EVERY_FROM).all(worth_checking));
        let from = CHECK_EVERY_FROM + 1;
        let checks = (from..=20_000).filter(|&n| worth_checking(n)).count();
        // About 100 ln(100) checks from 200 to 20,000, not 19,800.
        assert!(checks < 1000, "{checks}");
        // A time limit still stops between checks.
        let r = Rule {
            max_reps: usize::MAX,
            max_time: Duration::ZERO,
            ..rule()
        };
        let seq = synthetic(1000.0, 0.5, 301, 5);
        assert!(!worth_checking(301));
        let stop = decide(&r, &seq, Duration::from_secs(1)).unwrap();
        assert!(matches!(stop, Stop::MaxTime(p) if p > 0.01), "{stop:?}");
        assert!(
            stop.reason().unwrap().starts_with("median CI ±"),
            "{stop:?}"
        );
    }

    #[test]
    fn missing_values_never_satisfy_precision() {
        let seq = vec![f64::NAN; 40];
        assert_eq!(run(&rule(), &seq), (30, Stop::MaxReps));
    }

    #[test]
    fn max_reps_below_minimum_wins() {
        let r = Rule {
            max_reps: 2,
            ..rule()
        };
        let seq = synthetic(1000.0, 0.5, 10, 9);
        assert_eq!(run(&r, &seq), (2, Stop::MaxReps));
    }

    #[test]
    fn two_groups_stop_early_with_their_sizes_and_centres() {
        // Every third sample near 300, the others near 600 (1 % noise).
        let mut rng = SplitMix64::new(4);
        let seq: Vec<f64> = (0..60)
            .map(|i| if i % 3 == 0 { 300.0 } else { 600.0 } * (1.0 + 0.01 * rng.normal()))
            .collect();
        let (n, stop) = run(&rule(), &seq);
        assert_eq!(n, CANNOT_CONVERGE_MIN_N);
        match stop {
            Stop::Mixture {
                low_n,
                low,
                high_n,
                high,
            } => {
                assert_eq!((low_n, high_n), (4, 6));
                assert!((low / 300.0 - 1.0).abs() < 0.03 && (high / 600.0 - 1.0).abs() < 0.03);
            }
            other => panic!("{other:?}"),
        }
        assert!(
            stop.reason().unwrap().starts_with("4 near 3"),
            "{:?}",
            stop.reason()
        );
    }

    #[test]
    fn a_drift_stops_early_with_its_slope() {
        // +1 % a sample under 0.5 % noise: the median never settles.
        let mut rng = SplitMix64::new(8);
        let seq: Vec<f64> = (0..60)
            .map(|i| 1000.0 * (1.0 + 0.01 * i as f64) * (1.0 + 0.005 * rng.normal()))
            .collect();
        let (n, stop) = run(&rule(), &seq);
        assert!(n < 30, "{n}");
        match stop {
            Stop::Drift { per_sample, p } => {
                assert!(
                    p < DRIFT_P && per_sample > 0.007 && per_sample < 0.013,
                    "{stop:?}"
                );
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn steady_noise_rarely_stops_early() {
        // 300 sequences of 30 log-normal samples at 5 % spread (too noisy for
        // 1 %): each should run to max-reps; an early mixture or drift stop
        // is a false alarm. Allow 3 % (9).
        let mut rng = SplitMix64::new(21);
        let mut early = 0;
        for _ in 0..300 {
            let seq: Vec<f64> = (0..30)
                .map(|_| 1000.0 * (0.05 * rng.normal()).exp())
                .collect();
            let (_, stop) = run(&rule(), &seq);
            early += matches!(stop, Stop::Mixture { .. } | Stop::Drift { .. }) as usize;
        }
        assert!(early <= 9, "{early} of 300 stopped early");
    }
    #[test]
    fn variants_stop_together_when_their_paired_ratio_is_precise() {
        // A host drift of +/-20 % swamps each variant's median, but B / A
        // in each round is 1.02 +/- 0.2 %: the pairs settle in a few rounds.
        let mut rng = SplitMix64::new(6);
        let mut a = Vec::new();
        let mut b = Vec::new();
        for i in 0..30 {
            let host = 1.0 + 0.2 * (i as f64 / 2.0).sin();
            a.push(1000.0 * host * (1.0 + 0.002 * rng.normal()));
            b.push(1020.0 * host * (1.0 + 0.002 * rng.normal()));
            let v = [a.clone(), b.clone()];
            if let Some(d) = decide_variants(&rule(), &v, Duration::from_secs(1)) {
                assert!(matches!(d[0], Stop::Paired(p) if p <= 0.01), "{d:?}");
                assert!(a.len() <= 5, "{}", a.len());
                return;
            }
        }
        panic!("never stopped");
    }
}
