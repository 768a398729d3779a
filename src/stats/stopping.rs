//! The adaptive stopping rule: keep sampling until the 95 % confidence
//! interval of the headline figure's mean is within a relative precision,
//! or a sample-count or time limit is reached. Pure: it sees numbers only.

use std::time::Duration;

use super::summary::summarise;

/// When to stop sampling one case.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rule {
    /// Target half-width of the 95 % CI as a fraction of the mean (0.01 = 1 %).
    pub precision: f64,
    /// Never stop by precision before this many samples.
    pub min_reps: usize,
    /// Stop after this many samples whatever the precision.
    pub max_reps: usize,
    /// Stop once sampling this case has taken this long (after `min_reps`).
    pub max_time: Duration,
}

/// Why sampling stopped.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Stop {
    /// The CI half-width reached this fraction of the mean.
    Precision(f64),
    MaxReps,
    MaxTime,
}

/// The CI half-width as a fraction of |mean|; infinite when undefined
/// (fewer than two values, a zero mean, or a missing value). For a rate the
/// mean is the harmonic mean the tables show, and the CI is its own.
pub fn relative_ci(values: &[f64], rate: bool) -> f64 {
    if values.iter().any(|v| !v.is_finite()) {
        return f64::INFINITY;
    }
    match summarise(values, rate) {
        Some(s) if s.n > 1 && s.mean != 0.0 => s.ci95 / s.mean.abs(),
        _ => f64::INFINITY,
    }
}

/// Decides, after each sample, whether to stop: `values` are the headline
/// figure of the samples taken so far (`rate`: it is a rate), `elapsed` the
/// time spent on them.
pub fn decide(rule: &Rule, values: &[f64], rate: bool, elapsed: Duration) -> Option<Stop> {
    let n = values.len();
    let min = rule.min_reps.min(rule.max_reps).max(1);
    if n >= min {
        let rel = relative_ci(values, rate);
        if rel <= rule.precision {
            return Some(Stop::Precision(rel));
        }
    }
    if n >= rule.max_reps {
        return Some(Stop::MaxReps);
    }
    if n >= min && elapsed >= rule.max_time {
        return Some(Stop::MaxTime);
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

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
            if let Some(s) = decide(rule, &seq[..n], false, Duration::from_secs(n as u64)) {
                return (n, s);
            }
        }
        panic!("never stopped");
    }

    #[test]
    fn low_noise_stops_by_precision_at_minimum() {
        let seq = synthetic(1000.0, 0.001, 100, 7);
        let (n, stop) = run(&rule(), &seq);
        assert_eq!(n, 3);
        assert!(matches!(stop, Stop::Precision(p) if p <= 0.01));
    }

    #[test]
    fn moderate_noise_needs_more_samples_but_gets_there() {
        // +/-3 % uniform: sd ~1.7 %, so about (2.1 * 1.7)^2 ~ 13 samples.
        let seq = synthetic(1000.0, 0.03, 100, 11);
        let (n, stop) = run(&rule(), &seq);
        assert!(n > 3 && n < 30, "stopped after {n}");
        assert!(matches!(stop, Stop::Precision(_)));
        assert!(relative_ci(&seq[..n], false) <= 0.01);
        assert!(relative_ci(&seq[..n - 1], false) > 0.01);
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
        assert_eq!(decide(&r, &seq[..1], false, Duration::from_secs(9)), None);
        assert_eq!(
            decide(&r, &seq[..3], false, Duration::from_secs(9)),
            Some(Stop::MaxTime)
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
    fn rates_are_judged_on_their_harmonic_mean() {
        // The harmonic mean's relative CI is the relative CI of the reciprocals.
        let seq = synthetic(1000.0, 0.2, 12, 13);
        let recip: Vec<f64> = seq.iter().map(|v| 1.0 / v).collect();
        let as_rate = relative_ci(&seq, true);
        assert!((as_rate - relative_ci(&recip, false)).abs() < 1e-9 * as_rate.max(1.0));
        assert!((as_rate - relative_ci(&seq, false)).abs() > 1e-6);
    }
}
