//! Per-case summary of one figure: n, min, median, mean (arithmetic, or
//! harmonic for rates), standard deviation, coefficient of variation, max,
//! and the 95 % confidence interval of the mean.

use serde::Serialize;
use statrs::distribution::{ContinuousCDF, StudentsT};

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Summary {
    pub n: usize,
    pub min: f64,
    pub median: f64,
    /// Arithmetic mean, or harmonic mean when summarising a rate.
    pub mean: f64,
    /// `mean` is the harmonic mean (a rate whose values are all positive).
    pub harmonic: bool,
    pub stddev: f64,
    /// stddev / mean, in percent.
    pub coeff_var: f64,
    pub max: f64,
    /// Half-width of the 95 % CI of `mean` (t distribution; for the
    /// harmonic mean, by the delta method on the reciprocals).
    pub ci95: f64,
}

/// Median of a non-empty slice (mean of the middle two for even n), NaN
/// for an empty one. O(n): a selection, not a sort.
pub fn median(values: &[f64]) -> f64 {
    let n = values.len();
    if n == 0 {
        return f64::NAN;
    }
    let mut v = values.to_vec();
    super::work::pass(2 * n);
    let (below, mid, _) = v.select_nth_unstable_by(n / 2, f64::total_cmp);
    if n % 2 == 1 {
        *mid
    } else {
        let lower = below.iter().copied().max_by(f64::total_cmp).unwrap_or(*mid);
        (lower + *mid) / 2.0
    }
}

/// Index of the median element (the lower middle for even n): the sample
/// shown as "the median sample".
/// Equal values are ranked by position, as a stable sort would.
pub fn median_index(values: &[f64]) -> Option<usize> {
    if values.is_empty() {
        return None;
    }
    let mut idx: Vec<usize> = (0..values.len()).collect();
    let k = (values.len() - 1) / 2;
    super::work::pass(2 * values.len());
    idx.select_nth_unstable_by(k, |&a, &b| values[a].total_cmp(&values[b]).then(a.cmp(&b)));
    Some(idx[k])
}

pub fn mean(values: &[f64]) -> f64 {
    values.iter().sum::<f64>() / values.len() as f64
}

/// Sample standard deviation (n - 1); 0 for fewer than two values.
pub fn stddev(values: &[f64]) -> f64 {
    let n = values.len();
    if n < 2 {
        return 0.0;
    }
    let m = mean(values);
    (values.iter().map(|x| (x - m).powi(2)).sum::<f64>() / (n - 1) as f64).sqrt()
}

/// Two-sided 95 % Student t quantile for `df` degrees of freedom. Above
/// `T95_SERIES_DF` the Cornish-Fisher series in 1/df (Abramowitz and
/// Stegun 26.7.5, four terms; its error there is below 1e-12) instead of
/// inverting the incomplete beta function, which takes seconds at the
/// millions of degrees of freedom of large sample files.
pub fn t95(df: f64) -> f64 {
    if df > T95_SERIES_DF {
        let z: f64 = 1.959_963_984_540_054;
        let g = [
            (z.powi(3) + z) / 4.0,
            (5.0 * z.powi(5) + 16.0 * z.powi(3) + 3.0 * z) / 96.0,
            (3.0 * z.powi(7) + 19.0 * z.powi(5) + 17.0 * z.powi(3) - 15.0 * z) / 384.0,
            (79.0 * z.powi(9) + 776.0 * z.powi(7) + 1482.0 * z.powi(5)
                - 1920.0 * z.powi(3)
                - 945.0 * z)
                / 92160.0,
        ];
        return z + g.iter().rev().fold(0.0, |acc, gi| (acc + gi) / df);
    }
    StudentsT::new(0.0, 1.0, df)
        .map(|t| t.inverse_cdf(0.975))
        .unwrap_or(f64::NAN)
}

/// Degrees of freedom from which `t95` sums its series.
pub const T95_SERIES_DF: f64 = 1000.0;

/// Summarises `values`; `rate` selects the harmonic mean.
pub fn summarise(values: &[f64], rate: bool) -> Option<Summary> {
    summarise_with_median(values, rate, median(values))
}

/// `summarise` for values whose sorted copy is at hand (the median read
/// from it, not selected again).
pub fn summarise_sorted(values: &[f64], sorted: &[f64], rate: bool) -> Option<Summary> {
    summarise_with_median(values, rate, sorted_median(sorted))
}

/// The median of sorted values (NaN for none).
pub fn sorted_median(sorted: &[f64]) -> f64 {
    let n = sorted.len();
    match n {
        0 => f64::NAN,
        _ if n % 2 == 1 => sorted[n / 2],
        _ => (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0,
    }
}

fn summarise_with_median(values: &[f64], rate: bool, median: f64) -> Option<Summary> {
    if values.is_empty() {
        return None;
    }
    super::work::pass(6 * values.len());
    let n = values.len();
    let m = mean(values);
    let sd = stddev(values);
    let harmonic = rate && values.iter().all(|&v| v > 0.0);
    // The harmonic mean is 1 / mean(1/x): its standard error is that of
    // mean(1/x) times H^2 (delta method), so the interval is the one of the
    // figure shown, not of the arithmetic mean.
    let (shown_mean, spread) = if harmonic {
        let inv = || values.iter().map(|v| 1.0 / v);
        let mi = inv().sum::<f64>() / n as f64;
        let sdi = if n < 2 {
            0.0
        } else {
            (inv().map(|x| (x - mi).powi(2)).sum::<f64>() / (n - 1) as f64).sqrt()
        };
        let h = 1.0 / mi;
        (h, h * h * sdi)
    } else {
        (m, sd)
    };
    Some(Summary {
        n,
        min: values.iter().copied().fold(f64::INFINITY, f64::min),
        median,
        mean: shown_mean,
        harmonic,
        stddev: sd,
        coeff_var: if m != 0.0 { sd / m.abs() * 100.0 } else { 0.0 },
        max: values.iter().copied().fold(f64::NEG_INFINITY, f64::max),
        ci95: if n > 1 {
            t95((n - 1) as f64) * spread / (n as f64).sqrt()
        } else {
            f64::INFINITY
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summary_of_known_values() {
        let s = summarise(&[2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0], false).unwrap();
        assert_eq!(s.n, 8);
        assert_eq!(s.median, 4.5);
        assert_eq!(s.mean, 5.0);
        assert!((s.stddev - 2.138089935).abs() < 1e-6);
        // t(7, 0.975) = 2.364624
        assert!((s.ci95 - 2.364624 * 2.138089935 / 8f64.sqrt()).abs() < 1e-4);
    }

    #[test]
    fn the_t_series_agrees_with_the_exact_quantile_where_it_takes_over() {
        for df in [1000.5, 1500.0, 4000.0, 2e4] {
            let exact = StudentsT::new(0.0, 1.0, df).unwrap().inverse_cdf(0.975);
            assert!(
                (t95(df) - exact).abs() < 1e-10,
                "df {df}: {} vs {exact}",
                t95(df)
            );
        }
        assert!(t95(2e7) > 1.959_963 && t95(2e7) < 1.959_965);
    }

    #[test]
    fn harmonic_for_rates() {
        let s = summarise(&[1.0, 2.0, 4.0], true).unwrap();
        assert!((s.mean - 3.0 / 1.75).abs() < 1e-12);
        assert!(s.harmonic);
        // The CI is the harmonic mean's: reciprocals 1, .5, .25 have sd
        // 0.381881; se(H) = H^2 sd / sqrt(3); t(2, 0.975) = 4.302653.
        let h = 3.0 / 1.75;
        let want = 4.302653 * h * h * 0.381881 / 3f64.sqrt();
        assert!((s.ci95 - want).abs() < 1e-4, "{} vs {want}", s.ci95);
        // A non-positive value leaves the arithmetic mean, and says so.
        let s = summarise(&[0.0, 2.0, 4.0], true).unwrap();
        assert_eq!(s.mean, 2.0);
        assert!(!s.harmonic);
    }

    #[test]
    fn median_index_picks_lower_middle() {
        assert_eq!(median_index(&[5.0, 1.0, 3.0]), Some(2));
        assert_eq!(median_index(&[4.0, 1.0, 3.0, 2.0]), Some(3));
        assert_eq!(median_index(&[]), None);
        assert_eq!(median_index(&[2.0, 1.0, 2.0, 2.0, 3.0]), Some(2));
    }
}
