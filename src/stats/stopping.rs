//! The adaptive stopping rule: keep sampling until the 95 % confidence
//! interval of the headline figure's median (order statistics, no
//! distribution assumed) is within a relative precision, or a time limit
//! (or a sample count, when one is given) is reached. Samples that do not
//! settle (two groups, or a drift) stop a case early only when a
//! projection (`projection`) shows the budget cannot reach the precision.
//! Knob variants are judged by their paired ratio, so a drift they share
//! never stops them. Pure: it sees numbers only. Beyond
//! `CHECK_EVERY_FROM` samples the tests run at every 1 % more samples
//! rather than after every one, so a case sampled for a long budget costs
//! O(n log n) in all.

use std::time::Duration;

use super::mixture;
use super::projection::{self, Model, Need};
use super::robust::{self, MEDIAN_CI_MIN_N};

/// `--max-time`'s default: the budget of a run's samples (warm-ups
/// included) that keeps a default run within a minute (a plan that runs
/// the harness elsewhere, as reproduce's, counts on the same figure;
/// `runner` re-exports these defaults).
pub const DEFAULT_MAX_TIME: &str = "40s";

/// `--warmup`'s default: warm-up samples a case takes before it counts.
pub const DEFAULT_WARMUP: usize = 1;

/// Adaptive stopping never trusts a CI of fewer samples than this.
pub const MIN_REPS: usize = 3;

/// [`DEFAULT_MAX_TIME`] as the duration clap makes of it.
pub fn default_max_time() -> std::time::Duration {
    crate::parse::duration(DEFAULT_MAX_TIME).expect("DEFAULT_MAX_TIME is a duration")
}

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

/// What keeps a case's samples from settling.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Unsettled {
    /// The samples form two groups: sizes and medians, lower group first.
    Mixture {
        low_n: usize,
        low: f64,
        high_n: usize,
        high: f64,
    },
    /// The samples drift: Sen's slope as a fraction of the median per
    /// sample, and the trend test's p-value.
    Drift { per_sample: f64, p: f64 },
}

impl Unsettled {
    /// "3 near 554197, 7 near 689441" or "+0.40%/sample, p=1.0e-4".
    pub fn reason(&self) -> String {
        match *self {
            Unsettled::Mixture {
                low_n,
                low,
                high_n,
                high,
            } => format!("{low_n} near {}, {high_n} near {}", sig4(low), sig4(high)),
            Unsettled::Drift { per_sample, p } => {
                format!("{:+.2}%/sample, p={p:.1e}", per_sample * 100.0)
            }
        }
    }
}

/// The projection behind an early stop: the budget at the pace so far
/// cannot reach the precision.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Projection {
    /// The samples the time budget allows at the pace so far (or
    /// `max_reps`, when fewer).
    pub budget_n: usize,
    /// The interval projected at `budget_n` samples (relative).
    pub at_budget: f64,
    /// The samples the precision would need.
    pub need: Need,
    /// Seconds one more sample of the case took, in turn with the others.
    pub per_sample_s: f64,
}

/// Why sampling stopped.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Stop {
    /// The median's CI half-width reached this fraction of the median.
    Precision(f64),
    /// Knob variants: the paired ratio of every variant to the first
    /// reached this relative half-width (the largest of them).
    Paired(f64),
    /// The samples do not settle (`why`) and the projection shows the
    /// budget cannot reach the precision; `rel` is the interval now (of
    /// the paired ratio when `paired`).
    Unreachable {
        rel: f64,
        why: Unsettled,
        projection: Projection,
        paired: bool,
    },
    MaxReps,
    /// The time budget was spent: the relative half-width reached (of the
    /// paired ratio when `paired`), and what kept the samples from
    /// settling, if anything did.
    MaxTime {
        rel: f64,
        paired: bool,
        seen: Option<Unsettled>,
    },
}

impl Stop {
    /// "precision", "paired", "unreachable", "max-reps" or "max-time".
    pub fn kind(&self) -> &'static str {
        match self {
            Stop::Precision(_) => "precision",
            Stop::Paired(_) => "paired",
            Stop::Unreachable { .. } => "unreachable",
            Stop::MaxReps => "max-reps",
            Stop::MaxTime { .. } => "max-time",
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

/// Decides for knob variants sampled in rounds, by the paired ratio of
/// each variant to the first: they stop together when its interval is
/// within the precision (after `rule.min_reps` rounds), at a limit, or
/// when the ratio itself does not settle and the budget cannot bring it
/// there. A drift or mixture the variants share cancels in the ratio and
/// never stops them. One decision per variant; a single variant is
/// decided by `decide`.
pub fn decide_variants(rule: &Rule, variants: &[Vec<f64>], elapsed: Duration) -> Option<Vec<Stop>> {
    if variants.len() < 2 {
        return variants.iter().map(|v| decide(rule, v, elapsed)).collect();
    }
    let all = |s: Stop| Some(vec![s; variants.len()]);
    let n = variants[0].len();
    let min = rule.min_reps.min(rule.max_reps).max(1);
    let check = worth_checking(n);
    if check && n >= min.max(3) {
        let rel = paired_relative_ci(variants);
        if rel <= rule.precision {
            return all(Stop::Paired(rel));
        }
    }
    if n >= rule.max_reps {
        return all(Stop::MaxReps);
    }
    let ratios: Vec<Vec<f64>> = variants[1..]
        .iter()
        .map(|v| round_ratios(&variants[0], v))
        .collect();
    if n >= min && elapsed >= rule.max_time {
        return all(Stop::MaxTime {
            rel: paired_relative_ci(variants),
            paired: true,
            seen: ratios.iter().find_map(|r| cannot_converge(r)),
        });
    }
    if !check || n < min {
        return None;
    }
    let budget_n = budget(rule, n, elapsed)?;
    for r in &ratios {
        let Some(why) = cannot_converge(r) else {
            continue;
        };
        let logs: Vec<f64> = r.iter().map(|x| x.ln()).collect();
        let model = projection::PairedModel::new(&logs, matches!(why, Unsettled::Drift { .. }));
        if let Some(projection) = unreachable(rule, |k| model.relative_ci(k), n, budget_n, elapsed)
        {
            return all(Stop::Unreachable {
                rel: paired_relative_ci(variants),
                why,
                projection,
                paired: true,
            });
        }
    }
    None
}

/// Each round's ratio `new / base`, rounds where both are positive.
fn round_ratios(base: &[f64], new: &[f64]) -> Vec<f64> {
    base.iter()
        .zip(new)
        .filter(|(b, v)| **b > 0.0 && **v > 0.0 && b.is_finite() && v.is_finite())
        .map(|(b, v)| v / b)
        .collect()
}

/// Why `values` (in sampling order) cannot converge as they are, if so:
/// two groups, or a monotonic drift. Needs `CANNOT_CONVERGE_MIN_N`
/// values.
pub fn cannot_converge(values: &[f64]) -> Option<Unsettled> {
    unsettled(values).map(|(u, _)| u)
}

/// `cannot_converge` with the model of the samples it found.
fn unsettled(values: &[f64]) -> Option<(Unsettled, Model)> {
    if values.len() < CANNOT_CONVERGE_MIN_N {
        return None;
    }
    if let Some(m) = mixture::detect(values) {
        let [lo, hi] = &m.groups;
        let why = Unsettled::Mixture {
            low_n: lo.indices.len(),
            low: lo.median,
            high_n: hi.indices.len(),
            high: hi.median,
        };
        let model = Model::groups(values, &m).favouring_the_larger(values.len());
        return Some((why, model));
    }
    // Sen's slope costs more than the test: only for a drift found.
    let p = robust::trend_p(values)?;
    if p >= DRIFT_P {
        return None;
    }
    let centre = super::summary::median(values);
    let model = Model::trend(values);
    let Model::Trend { slope, .. } = model else {
        return None;
    };
    (centre != 0.0).then(|| {
        let why = Unsettled::Drift {
            per_sample: slope / centre.abs(),
            p,
        };
        (why, model)
    })
}

/// The samples the budget allows at the pace so far: `n` taken in
/// `elapsed`, carried on to `max_time`, no more than `max_reps`. `None`
/// when no pace is known yet and no count limits the case.
fn budget(rule: &Rule, n: usize, elapsed: Duration) -> Option<usize> {
    let by_time = if elapsed.is_zero() {
        None
    } else {
        let k = n as f64 * rule.max_time.as_secs_f64() / elapsed.as_secs_f64();
        Some(k.min(usize::MAX as f64 / 2.0) as usize)
    };
    let by_count = (rule.max_reps < usize::MAX).then_some(rule.max_reps);
    let b = match (by_time, by_count) {
        (Some(t), Some(c)) => t.min(c),
        (t, c) => t.or(c)?,
    };
    Some(b.max(n))
}

/// How far beyond the budget the samples needed are searched.
const NEED_SEARCH: usize = 100;

/// The projection when `rel_at` (the interval projected at a count) is
/// wider than the precision at the budget's count, else `None`.
fn unreachable(
    rule: &Rule,
    rel_at: impl Fn(usize) -> f64,
    n: usize,
    budget_n: usize,
    elapsed: Duration,
) -> Option<Projection> {
    let at_budget = rel_at(budget_n);
    if at_budget <= rule.precision {
        return None;
    }
    let limit = budget_n
        .saturating_mul(NEED_SEARCH)
        .clamp(10_000, 100_000_000);
    Some(Projection {
        budget_n,
        at_budget,
        need: projection::samples_needed(&rel_at, rule.precision, budget_n, limit),
        per_sample_s: elapsed.as_secs_f64() / n as f64,
    })
}

/// Decides, after each sample, whether to stop: `values` are the headline
/// figure of the samples taken so far, in order, `elapsed` the time spent
/// on them. Samples that form groups or drift stop the case early only
/// when their projection shows the budget cannot reach the precision;
/// else they sample on, and what was seen goes with the stop.
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
    if n >= rule.max_reps {
        return Some(Stop::MaxReps);
    }
    if n >= min && elapsed >= rule.max_time {
        return Some(Stop::MaxTime {
            rel: relative_ci(values),
            paired: false,
            seen: cannot_converge(values),
        });
    }
    if !check || n < min {
        return None;
    }
    let (why, model) = unsettled(values)?;
    let projection = unreachable(
        rule,
        |k| model.relative_ci(k),
        n,
        budget(rule, n, elapsed)?,
        elapsed,
    )?;
    Some(Stop::Unreachable {
        rel: relative_ci(values),
        why,
        projection,
        paired: false,
    })
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
            Some(Stop::MaxTime { paired: false, .. })
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
        assert!(
            matches!(stop, Stop::MaxTime { rel, seen: None, .. } if rel > 0.01),
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

    /// The early stop of `stop`: what did not settle and the projection.
    fn early(stop: Stop) -> (Unsettled, Projection) {
        match stop {
            Stop::Unreachable {
                why, projection, ..
            } => (why, projection),
            other => panic!("{other:?}"),
        }
    }

    /// `n` samples near 300 and near 600 in turn, 1 % noise.
    fn two_groups(n: usize) -> Vec<f64> {
        let mut rng = SplitMix64::new(4);
        (0..n)
            .map(|i| if i % 2 == 0 { 300.0 } else { 600.0 } * (1.0 + 0.01 * rng.normal()))
            .collect()
    }

    #[test]
    fn two_even_groups_stop_early_with_their_sizes_centres_and_need() {
        // Samples near 300 and near 600 in turn (1 % noise): once the
        // groups' sizes leave no doubt that they are even, the median's
        // interval spans the gap at the 30 samples allowed.
        let seq = two_groups(60);
        let (n, stop) = run(&rule(), &seq);
        assert!((CANNOT_CONVERGE_MIN_N..30).contains(&n), "{n}");
        let (why, p) = early(stop);
        match why {
            Unsettled::Mixture {
                low_n,
                low,
                high_n,
                high,
            } => {
                assert!(
                    low_n.abs_diff(high_n) <= 1 && low_n + high_n == n,
                    "{why:?}"
                );
                assert!((low / 300.0 - 1.0).abs() < 0.03 && (high / 600.0 - 1.0).abs() < 0.03);
            }
            other => panic!("{other:?}"),
        }
        assert!(why.reason().starts_with("5 near 29"), "{}", why.reason());
        assert_eq!(p.budget_n, 30);
        assert!(p.at_budget > 0.01 && p.need.samples > 30, "{p:?}");
        assert!((p.per_sample_s - 1.0).abs() < 1e-9);
    }

    #[test]
    fn a_minority_group_samples_on_until_the_median_settles_in_the_larger() {
        // 3 in 10 samples near 550, the rest near 690 (0.3 % noise): a
        // mixture from the 10th sample, but the median lies inside the
        // larger group, whose interval narrows with the count: no early
        // stop, precision (0.1 %) reached within the budget.
        let mut rng = SplitMix64::new(12);
        let seq: Vec<f64> = (0..500)
            .map(|i| if i % 10 < 3 { 550.0 } else { 690.0 } * (1.0 + 0.003 * rng.normal()))
            .collect();
        assert!(cannot_converge(&seq[..10]).is_some());
        assert!(cannot_converge(&seq[..13]).is_some());
        let r = Rule {
            precision: 0.001,
            max_reps: usize::MAX,
            ..rule()
        };
        let (n, stop) = run(&r, &seq);
        assert!(
            matches!(stop, Stop::Precision(p) if p <= 0.001),
            "{stop:?} at {n}"
        );
        assert!(n > CANNOT_CONVERGE_MIN_N, "{n}");
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
        match early(stop).0 {
            Unsettled::Drift { per_sample, p } => {
                assert!(
                    p < DRIFT_P && per_sample > 0.007 && per_sample < 0.013,
                    "{stop:?}"
                );
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn at_the_budget_the_stop_keeps_what_did_not_settle() {
        let seq = two_groups(12);
        let r = Rule {
            max_time: Duration::from_secs(5),
            ..rule()
        };
        let stop = decide(&r, &seq, Duration::from_secs(5));
        assert!(
            matches!(
                stop,
                Some(Stop::MaxTime {
                    seen: Some(Unsettled::Mixture { .. }),
                    ..
                })
            ),
            "{stop:?}"
        );
    }

    #[test]
    fn steady_noise_rarely_stops_early() {
        // 300 sequences of 30 log-normal samples at 5 % spread (too noisy for
        // 1 %): each should run to max-reps; an early stop is a false
        // alarm. Allow 3 % (9).
        let mut rng = SplitMix64::new(21);
        let mut early = 0;
        for _ in 0..300 {
            let seq: Vec<f64> = (0..30)
                .map(|_| 1000.0 * (0.05 * rng.normal()).exp())
                .collect();
            let (_, stop) = run(&rule(), &seq);
            early += matches!(stop, Stop::Unreachable { .. }) as usize;
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

    #[test]
    fn a_drift_the_variants_share_never_stops_them() {
        // An A/A pair drifting +0.4 %/round together under 0.3 % noise:
        // each alone stops as a drift the budget cannot cure, their ratio
        // has no trend, so the pair samples on to the budget.
        let mut rng = SplitMix64::new(17);
        let r = Rule {
            precision: 0.0001,
            max_reps: usize::MAX,
            ..rule()
        };
        let (mut a, mut b) = (Vec::new(), Vec::new());
        for i in 0..120 {
            let host = 1000.0 * (1.0 + 0.004 * i as f64);
            a.push(host * (1.0 + 0.003 * rng.normal()));
            b.push(host * (1.0 + 0.003 * rng.normal()));
            let d = decide_variants(&r, &[a.clone(), b.clone()], Duration::from_secs(i + 1));
            assert_eq!(d, None, "round {i}");
        }
        assert!(matches!(
            decide(&r, &a, Duration::from_secs(120)),
            Some(Stop::Unreachable {
                why: Unsettled::Drift { .. },
                ..
            })
        ));
        // At the budget the stop names the paired ratio's interval.
        let d = decide_variants(&r, &[a, b], Duration::from_secs(600)).unwrap();
        assert!(
            matches!(d[1], Stop::MaxTime { paired: true, rel, seen: None } if rel < 0.01),
            "{d:?}"
        );
    }

    #[test]
    fn a_ratio_that_drifts_stops_the_variants_early() {
        // B gains 1 % on A every round: the ratio itself never settles.
        let mut rng = SplitMix64::new(3);
        let (mut a, mut b) = (Vec::new(), Vec::new());
        for i in 0..60 {
            a.push(1000.0 * (1.0 + 0.002 * rng.normal()));
            b.push(1000.0 * (1.0 + 0.01 * i as f64) * (1.0 + 0.002 * rng.normal()));
            if let Some(d) =
                decide_variants(&rule(), &[a.clone(), b.clone()], Duration::from_secs(i + 1))
            {
                assert!(
                    matches!(
                        d[0],
                        Stop::Unreachable {
                            paired: true,
                            why: Unsettled::Drift { .. },
                            ..
                        }
                    ),
                    "{d:?}"
                );
                assert!(a.len() < 30, "{}", a.len());
                return;
            }
        }
        panic!("never stopped");
    }
}
