//! The robust centre of a case and what says it cannot settle: the median
//! with its distribution-free 95 % interval from order statistics, and the
//! Mann-Kendall trend test (with Sen's slope) for samples that drift. All
//! O(n log n) or better: they run after every sample of adaptive stopping.

use serde::Serialize;
use statrs::distribution::{Binomial, ContinuousCDF, DiscreteCDF, Normal};

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
    let (k, coverage) = order_rank(n);
    let [lo, below, above, hi] = order_statistics(values, [k - 1, (n - 1) / 2, n / 2, n - k]);
    let median = if n % 2 == 1 {
        above
    } else {
        (below + above) / 2.0
    };
    Some(MedianCi {
        median,
        lo,
        hi,
        coverage,
    })
}

/// The values at 0-based ranks `ranks` (ascending) of `values` in sorted
/// order, by selection: O(n), the same values a sort would put there.
fn order_statistics<const K: usize>(values: &[f64], ranks: [usize; K]) -> [f64; K] {
    let mut v = values.to_vec();
    super::work::pass(2 * K * v.len());
    ranks.map(|r| *v.select_nth_unstable_by(r, f64::total_cmp).1)
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
/// `None` for fewer than 8 values or a non-finite value.
pub fn trend(values: &[f64]) -> Option<Trend> {
    Some(Trend {
        p: trend_p(values)?,
        slope: sen_slope(values),
    })
}

/// The two-sided p-value of the Mann-Kendall test alone (normal
/// approximation with the tie correction): S, the number of rising pairs
/// less the falling ones, from the pairs out of order (counted while merge
/// sorting), O(n log n). `None` for fewer than 8 values or a non-finite one.
pub fn trend_p(values: &[f64]) -> Option<f64> {
    let n = values.len();
    if n < 8 || values.iter().any(|v| !v.is_finite()) {
        return None;
    }
    let mut sorted = values.to_vec();
    let falling = pairs_out_of_order(&mut sorted, true);
    let mut ties = 0.0;
    let mut tied_pairs = 0u64;
    for run in sorted.chunk_by(|a, b| a == b).map(<[f64]>::len) {
        let t = run as f64;
        ties += t * (t - 1.0) * (2.0 * t + 5.0);
        tied_pairs += (run * (run - 1) / 2) as u64;
    }
    let pairs = (n * (n - 1) / 2) as u64;
    let s = pairs as i64 - tied_pairs as i64 - 2 * falling as i64;
    let nf = n as f64;
    let var = (nf * (nf - 1.0) * (2.0 * nf + 5.0) - ties) / 18.0;
    Some(if var <= 0.0 {
        1.0
    } else {
        let z = (s - s.signum()) as f64 / var.sqrt();
        let norm = Normal::new(0.0, 1.0).ok()?;
        (2.0 * norm.cdf(-z.abs())).clamp(0.0, 1.0)
    })
}

/// Pairs i < j with v[i] > v[j] (`strict`) or v[i] >= v[j], counted by a
/// merge sort that leaves `v` sorted.
fn pairs_out_of_order(v: &mut [f64], strict: bool) -> u64 {
    super::work::sort(v.len());
    let mut buf = v.to_vec();
    merge_count(v, &mut buf, strict)
}

fn merge_count(v: &mut [f64], buf: &mut [f64], strict: bool) -> u64 {
    let n = v.len();
    if n < 2 {
        return 0;
    }
    let mid = n / 2;
    let mut count = merge_count(&mut v[..mid], &mut buf[..mid], strict)
        + merge_count(&mut v[mid..], &mut buf[mid..], strict);
    let (mut i, mut j) = (0, mid);
    for slot in buf.iter_mut() {
        // A right value out of order with the left values still waiting
        // counts one pair with each of them.
        let take_left = j == n || (i < mid && if strict { v[i] <= v[j] } else { v[i] < v[j] });
        if take_left {
            *slot = v[i];
            i += 1;
        } else {
            *slot = v[j];
            count += (mid - i) as u64;
            j += 1;
        }
    }
    v.copy_from_slice(buf);
    count
}

/// Sen's slope: the median of the slopes (v[j] - v[i]) / (j - i) over all
/// pairs i < j, found without listing them: the slopes at most t are the
/// pairs that v[i] - t i puts out of order (a merge sort counts them), so
/// each order statistic of the slopes is the least t whose count reaches
/// its rank, found by bisection over the doubles. O(n log n) per step, at
/// most 128 steps; the result is within rounding (1e-9 of the values'
/// range per sample, checked against the pairwise definition in the
/// tests) of the exact median.
pub fn sen_slope(values: &[f64]) -> f64 {
    let n = values.len();
    if n < 2 || values.iter().any(|v| !v.is_finite()) {
        return f64::NAN;
    }
    let lo = values.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let range = hi - lo;
    if range == 0.0 {
        return 0.0;
    }
    let pairs = (n * (n - 1) / 2) as u64;
    let at_most = |t: f64| {
        let mut z: Vec<f64> = values
            .iter()
            .enumerate()
            .map(|(i, v)| v - t * i as f64)
            .collect();
        pairs_out_of_order(&mut z, false)
    };
    // The least double t with at least `rank` slopes <= t.
    let kth = |rank: u64| {
        let (mut below, mut above) = (ordered(-2.0 * range), ordered(2.0 * range));
        while (above as i128) - (below as i128) > 1 {
            let mid = ((below as i128 + above as i128) / 2) as i64;
            if at_most(unordered(mid)) >= rank {
                above = mid;
            } else {
                below = mid;
            }
        }
        unordered(above)
    };
    if pairs % 2 == 1 {
        kth(pairs / 2 + 1)
    } else {
        (kth(pairs / 2) + kth(pairs / 2 + 1)) / 2.0
    }
}

/// A double as an integer of the same order (negative numbers below
/// positive ones, -0 just below +0).
fn ordered(x: f64) -> i64 {
    let b = x.to_bits() as i64;
    if b < 0 { i64::MIN - b - 1 } else { b }
}

fn unordered(k: i64) -> f64 {
    f64::from_bits(if k < 0 {
        (i64::MIN - k - 1) as u64
    } else {
        k as u64
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::rng::SplitMix64;

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

    /// Mann-Kendall and Sen's slope as first written: every pair listed.
    fn trend_reference(values: &[f64]) -> Trend {
        let n = values.len();
        let mut s = 0i64;
        let mut slopes = Vec::new();
        for i in 0..n {
            for j in i + 1..n {
                let d = values[j] - values[i];
                s += (d > 0.0) as i64 - (d < 0.0) as i64;
                slopes.push(d / (j - i) as f64);
            }
        }
        let mut sorted = values.to_vec();
        sorted.sort_by(f64::total_cmp);
        let ties: f64 = sorted
            .chunk_by(|a, b| a == b)
            .map(|run| {
                let t = run.len() as f64;
                t * (t - 1.0) * (2.0 * t + 5.0)
            })
            .sum();
        let nf = n as f64;
        let var = (nf * (nf - 1.0) * (2.0 * nf + 5.0) - ties) / 18.0;
        let z = (s - s.signum()) as f64 / var.sqrt();
        let p = if var <= 0.0 {
            1.0
        } else {
            (2.0 * Normal::new(0.0, 1.0).unwrap().cdf(-z.abs())).clamp(0.0, 1.0)
        };
        Trend {
            p,
            slope: crate::stats::summary::median(&slopes),
        }
    }

    #[test]
    fn trend_by_merge_sort_equals_the_pairwise_definition() {
        // Drifts, noise, ties (rounded values) and steps; n from 8 to 250.
        // The p-value is the same number; Sen's slope within 1e-9 of the
        // values' range per sample.
        let mut rng = SplitMix64::new(17);
        for trial in 0..120 {
            let n = 8 + (trial * 7) % 243;
            let v: Vec<f64> = (0..n)
                .map(|i| {
                    let x = 1000.0 + rng.normal() * 10.0;
                    match trial % 4 {
                        0 => x,
                        1 => x + 0.5 * i as f64,
                        2 => (x / 5.0).round() * 5.0,
                        _ => x - if i > n / 2 { 30.0 } else { 0.0 },
                    }
                })
                .collect();
            let (fast, slow) = (trend(&v).unwrap(), trend_reference(&v));
            assert_eq!(fast.p, slow.p, "trial {trial}");
            let range = v.iter().copied().fold(f64::MIN, f64::max)
                - v.iter().copied().fold(f64::MAX, f64::min);
            assert!(
                (fast.slope - slow.slope).abs() <= 1e-9 * range,
                "trial {trial}: {} vs {}",
                fast.slope,
                slow.slope
            );
        }
        assert_eq!(sen_slope(&[3.0, 3.0, 3.0]), 0.0);
        assert!((sen_slope(&[1.0, 2.0]) - 1.0).abs() < 1e-9);
    }

    #[test]
    fn median_interval_by_selection_equals_the_sorted_one() {
        let mut rng = SplitMix64::new(4);
        for n in 5..120 {
            let v: Vec<f64> = (0..n).map(|_| (rng.normal() * 4.0).round()).collect();
            let ci = median_ci(&v).unwrap();
            let mut s = v.clone();
            s.sort_by(f64::total_cmp);
            let k = order_rank(n).0;
            let median = if n % 2 == 1 {
                s[n / 2]
            } else {
                (s[n / 2 - 1] + s[n / 2]) / 2.0
            };
            assert_eq!((ci.lo, ci.median, ci.hi), (s[k - 1], median, s[n - k]));
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
