//! The robust centre of a case and what says it cannot settle: the median
//! with its distribution-free 95 % interval from order statistics, and the
//! Mann-Kendall trend test (with Sen's slope) for samples that drift.

use serde::Serialize;
use statrs::distribution::{Binomial, ContinuousCDF, DiscreteCDF, Normal};

use super::summary::median;

/// The fewest samples whose order-statistic interval still covers the
/// median in at least 93 % of cases ([min, max] at n = 5 covers 93.75 %).
pub const MEDIAN_CI_MIN_N: usize = 5;

/// The median and its 95 % interval.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct MedianCi {
    pub median: f64,
    pub lo: f64,
    pub hi: f64,
    /// The interval's exact coverage for continuous data (>= 0.95 from
    /// n = 6 on, 0.9375 at n = 5).
    pub coverage: f64,
}

impl MedianCi {
    /// The larger distance from the median to an end, as a fraction of
    /// |median| (infinite for a zero median).
    pub fn relative_half_width(&self) -> f64 {
        let h = (self.median - self.lo).max(self.hi - self.median);
        if self.median == 0.0 {
            if h == 0.0 { 0.0 } else { f64::INFINITY }
        } else {
            h / self.median.abs()
        }
    }
}

/// The distribution-free 95 % interval of the median: [x(k), x(n+1-k)]
/// with the largest k whose binomial tail P(B <= k-1) <= 2.5 %, B ~
/// Bin(n, 1/2). It assumes only independent samples of one continuous
/// distribution. `None` below `MEDIAN_CI_MIN_N` values or with a
/// non-finite value.
pub fn median_ci(values: &[f64]) -> Option<MedianCi> {
    let n = values.len();
    if n < MEDIAN_CI_MIN_N || values.iter().any(|v| !v.is_finite()) {
        return None;
    }
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    let (k, coverage) = order_rank(n);
    Some(MedianCi {
        median: median(&v),
        lo: v[k - 1],
        hi: v[n - k],
        coverage,
    })
}

/// The 1-based rank k of the interval's lower end and its coverage.
fn order_rank(n: usize) -> (usize, f64) {
    let Ok(b) = Binomial::new(0.5, n as u64) else {
        return (1, 1.0);
    };
    // The median lies above x(k) unless at most k - 1 values are below it.
    let below = |k: usize| b.cdf((k - 1) as u64);
    let (mut lo, mut hi) = (1usize, n.div_ceil(2));
    if below(1) > 0.025 {
        // n = 5: [min, max] is the best there is.
        return (1, 1.0 - 2.0 * below(1));
    }
    while lo < hi {
        let mid = (lo + hi).div_ceil(2);
        if below(mid) <= 0.025 {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    (lo, 1.0 - 2.0 * below(lo))
}

/// A monotonic trend in the order the samples were taken.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Trend {
    /// Two-sided p-value of the Mann-Kendall test (normal approximation
    /// with the tie correction).
    pub p: f64,
    /// Sen's slope (median of the pairwise slopes) per sample.
    pub slope: f64,
}

/// The Mann-Kendall test for a trend in `values` (in sampling order);
/// `None` for fewer than 8 values, a non-finite value, or more than 2000
/// values (the test is quadratic).
pub fn trend(values: &[f64]) -> Option<Trend> {
    let n = values.len();
    if !(8..=2000).contains(&n) || values.iter().any(|v| !v.is_finite()) {
        return None;
    }
    let mut s = 0i64;
    let mut slopes = Vec::with_capacity(n * (n - 1) / 2);
    for i in 0..n {
        for j in i + 1..n {
            let d = values[j] - values[i];
            s += (d > 0.0) as i64 - (d < 0.0) as i64;
            slopes.push(d / (j - i) as f64);
        }
    }
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let mut ties = 0.0;
    let mut run = 1usize;
    for i in 1..=n {
        if i < n && sorted[i] == sorted[i - 1] {
            run += 1;
        } else {
            let t = run as f64;
            ties += t * (t - 1.0) * (2.0 * t + 5.0);
            run = 1;
        }
    }
    let nf = n as f64;
    let var = (nf * (nf - 1.0) * (2.0 * nf + 5.0) - ties) / 18.0;
    let p = if var <= 0.0 {
        1.0
    } else {
        let z = (s - s.signum()) as f64 / var.sqrt();
        let norm = Normal::new(0.0, 1.0).ok()?;
        (2.0 * norm.cdf(-z.abs())).clamp(0.0, 1.0)
    };
    Some(Trend {
        p,
        slope: median(&slopes),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::compare::SplitMix64;

    #[test]
    fn order_ranks_match_the_binomial_tables() {
        // Standard tables of the 95 % median interval: n = 6 -> (1, 6),
        // n = 10 -> (2, 9), n = 20 -> (6, 15), n = 30 -> (10, 21).
        assert_eq!(order_rank(6).0, 1);
        assert_eq!(order_rank(10).0, 2);
        assert_eq!(order_rank(20).0, 6);
        assert_eq!(order_rank(30).0, 10);
        assert!((order_rank(5).1 - 0.9375).abs() < 1e-12);
        assert!(median_ci(&[1.0, 2.0, 3.0, 4.0]).is_none());
        let ci = median_ci(&[5.0, 1.0, 4.0, 2.0, 3.0, 6.0]).unwrap();
        assert_eq!((ci.lo, ci.median, ci.hi), (1.0, 3.5, 6.0));
    }

    #[test]
    fn median_interval_covers_in_at_least_93_percent() {
        // Skewed (log-normal) and symmetric data: the interval is
        // distribution-free, so both must cover the true median.
        let mut rng = SplitMix64::new(77);
        for n in [5usize, 6, 10, 30] {
            for lognormal in [false, true] {
                let trials = 2000;
                let mut hit = 0;
                for _ in 0..trials {
                    let v: Vec<f64> = (0..n)
                        .map(|_| {
                            let z = 0.3 * rng.normal();
                            if lognormal {
                                100.0 * z.exp()
                            } else {
                                100.0 + 30.0 * z
                            }
                        })
                        .collect();
                    let ci = median_ci(&v).unwrap();
                    hit += (ci.lo <= 100.0 && 100.0 <= ci.hi) as usize;
                }
                let cov = hit as f64 / trials as f64;
                assert!(cov >= 0.925, "n={n} lognormal={lognormal}: {cov}");
            }
        }
    }

    #[test]
    fn trend_is_found_in_a_drift_and_not_in_noise() {
        let mut rng = SplitMix64::new(5);
        let drift: Vec<f64> = (0..20).map(|i| 100.0 + i as f64 + rng.normal()).collect();
        let t = trend(&drift).unwrap();
        assert!(t.p < 1e-4 && (t.slope - 1.0).abs() < 0.3, "{t:?}");
        // False alarms at p < 0.001 over 500 flat series: expect 0.5.
        let alarms = (0..500)
            .filter(|_| {
                let v: Vec<f64> = (0..20).map(|_| 100.0 + rng.normal()).collect();
                trend(&v).unwrap().p < 0.001
            })
            .count();
        assert!(alarms <= 4, "{alarms} of 500");
        assert_eq!(trend(&[1.0; 7]), None);
        assert_eq!(trend(&[1.0; 9]).unwrap().p, 1.0);
    }
}
