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

/// Median of a non-empty slice (mean of the middle two for even n).
pub fn median(values: &[f64]) -> f64 {
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n == 0 {
        return f64::NAN;
    }
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// Index of the median element (the lower middle for even n): the sample
/// shown as "the median sample".
pub fn median_index(values: &[f64]) -> Option<usize> {
    let mut idx: Vec<usize> = (0..values.len()).collect();
    idx.sort_by(|&a, &b| values[a].total_cmp(&values[b]));
    idx.get((values.len().max(1) - 1) / 2).copied()
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

/// Two-sided 95 % Student t quantile for `df` degrees of freedom.
pub fn t95(df: f64) -> f64 {
    StudentsT::new(0.0, 1.0, df)
        .map(|t| t.inverse_cdf(0.975))
        .unwrap_or(f64::NAN)
}

/// Summarises `values`; `rate` selects the harmonic mean.
pub fn summarise(values: &[f64], rate: bool) -> Option<Summary> {
    if values.is_empty() {
        return None;
    }
    let n = values.len();
    let m = mean(values);
    let sd = stddev(values);
    let harmonic = rate && values.iter().all(|&v| v > 0.0);
    // The harmonic mean is 1 / mean(1/x): its standard error is that of
    // mean(1/x) times H^2 (delta method), so the interval is the one of the
    // figure shown, not of the arithmetic mean.
    let (shown_mean, spread) = if harmonic {
        let inv: Vec<f64> = values.iter().map(|v| 1.0 / v).collect();
        let h = 1.0 / mean(&inv);
        (h, h * h * stddev(&inv))
    } else {
        (m, sd)
    };
    Some(Summary {
        n,
        min: values.iter().copied().fold(f64::INFINITY, f64::min),
        median: median(values),
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
    }
}
