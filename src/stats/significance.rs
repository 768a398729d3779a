//! Comparison statistics: Welch's t-test (on logs for rates), the
//! Benjamini-Hochberg correction across the rows of one comparison, a
//! seeded bootstrap interval of the ratio of means, and the signed
//! percentage change where positive always means better.

use crate::model::Better;
use statrs::distribution::{ContinuousCDF, StudentsT};

use super::rng::SplitMix64;
use super::summary::{mean, stddev};

/// What Welch's test and the log-ratio interval read of one side's values:
/// their count, mean and standard deviation (n - 1).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Moments {
    pub n: usize,
    pub mean: f64,
    pub sd: f64,
}

impl Moments {
    pub fn of(values: &[f64]) -> Moments {
        super::work::pass(2 * values.len());
        Moments {
            n: values.len(),
            mean: mean(values),
            sd: stddev(values),
        }
    }

    /// The moments of the logarithms; `None` unless every value is
    /// positive and finite.
    pub fn of_logs(values: &[f64]) -> Option<Moments> {
        if values.iter().any(|&v| !(v > 0.0 && v.is_finite())) {
            return None;
        }
        // Two passes over the logs, as `mean` and `stddev` would make over
        // them, without holding them.
        let n = values.len();
        super::work::pass(2 * n);
        let logs = || values.iter().map(|v| v.ln());
        let m = logs().sum::<f64>() / n as f64;
        let sd = if n < 2 {
            0.0
        } else {
            (logs().map(|x| (x - m).powi(2)).sum::<f64>() / (n - 1) as f64).sqrt()
        };
        Some(Moments { n, mean: m, sd })
    }
}

/// Two-sided p-value of Welch's unequal-variance t-test between `a` and `b`.
///
/// `None` when either side has fewer than two values (no variance estimate).
/// When both sides have zero variance the test degenerates: equal means give
/// p = 1, different means p = 0 (the samples cannot overlap).
pub fn welch_p(a: &[f64], b: &[f64]) -> Option<f64> {
    if a.iter().chain(b).any(|v| !v.is_finite()) {
        return None;
    }
    welch_p_of(&Moments::of(a), &Moments::of(b))
}

/// Welch's test from the sides' moments (of finite values).
pub fn welch_p_of(a: &Moments, b: &Moments) -> Option<f64> {
    let (na, nb) = (a.n as f64, b.n as f64);
    if a.n < 2 || b.n < 2 {
        return None;
    }
    let (ma, mb) = (a.mean, b.mean);
    let (va, vb) = (a.sd.powi(2) / na, b.sd.powi(2) / nb);
    let se2 = va + vb;
    if se2 <= 0.0 {
        return Some(if ma == mb { 1.0 } else { 0.0 });
    }
    let t = (ma - mb) / se2.sqrt();
    // Welch-Satterthwaite degrees of freedom.
    let df = se2 * se2 / (va * va / (na - 1.0) + vb * vb / (nb - 1.0));
    let dist = StudentsT::new(0.0, 1.0, df).ok()?;
    Some((2.0 * dist.cdf(-t.abs())).clamp(0.0, 1.0))
}

/// Welch's test as vmscale applies it: rates (figures whose harmonic mean is
/// shown, like faults/s) are tested on their logarithms, where a ratio
/// change is a shift and the right-skew of rates is tamed; times and counts
/// on their plain values. Non-positive rates fall back to plain values.
pub fn figure_p(a: &[f64], b: &[f64], rate: bool) -> Option<f64> {
    if rate && a.iter().chain(b).all(|&v| v > 0.0) {
        let la: Vec<f64> = a.iter().map(|v| v.ln()).collect();
        let lb: Vec<f64> = b.iter().map(|v| v.ln()).collect();
        welch_p(&la, &lb)
    } else {
        welch_p(a, b)
    }
}

/// Benjamini-Hochberg adjusted p-values (step-up, false discovery rate),
/// in the order given. `None` entries are not tests and stay `None`; they
/// do not count towards the number of hypotheses.
pub fn benjamini_hochberg(p: &[Option<f64>]) -> Vec<Option<f64>> {
    let mut idx: Vec<usize> = (0..p.len()).filter(|&i| p[i].is_some()).collect();
    let m = idx.len() as f64;
    idx.sort_by(|&x, &y| p[x].unwrap_or(1.0).total_cmp(&p[y].unwrap_or(1.0)));
    let mut out = vec![None; p.len()];
    let mut running = 1.0f64;
    for (rank, &i) in idx.iter().enumerate().rev() {
        let adj = p[i].unwrap_or(1.0) * m / (rank + 1) as f64;
        running = running.min(adj);
        out[i] = Some(running.min(1.0));
    }
    out
}

/// Signed percentage change of `new` against `base`, positive when `new`
/// is better in the figure's direction (as mmtests prints it).
pub fn pct_better(base: f64, new: f64, better: Better) -> f64 {
    if base == 0.0 || !base.is_finite() || !new.is_finite() {
        return if base == new { 0.0 } else { f64::NAN };
    }
    let raw = (new - base) / base.abs() * 100.0;
    match better {
        Better::Higher => raw,
        Better::Lower => -raw,
    }
}

/// The mean a figure is summarised by: harmonic for rates, else arithmetic.
pub fn figure_mean(values: &[f64], rate: bool) -> f64 {
    if rate && !values.is_empty() && values.iter().all(|&v| v > 0.0) {
        values.len() as f64 / values.iter().map(|v| 1.0 / v).sum::<f64>()
    } else {
        mean(values)
    }
}

/// Resampling rounds for the bootstraps of one comparison that together
/// draw from `total` values per round: 2000, fewer for very large
/// comparisons so that the work stays near 1e8 draws, and never under 200
/// (at tens of thousands of values a side the interval of a mean is
/// narrow and its percentiles settle with fewer rounds).
pub fn bootstrap_rounds(total: usize) -> usize {
    (100_000_000 / total.max(1)).clamp(200, 2000)
}

/// Percentile bootstrap 95 % CI of mean(new) / mean(base) over `rounds`
/// resamplings of each side with replacement (the mean as the figure is
/// summarised: harmonic for rates); deterministic for a given `seed`.
/// `None` with fewer than two values a side or a zero base mean.
pub fn bootstrap_ratio_ci(
    base: &[f64],
    new: &[f64],
    rate: bool,
    seed: u64,
    rounds: usize,
) -> Option<(f64, f64)> {
    if base.len() < 2 || new.len() < 2 || rounds == 0 {
        return None;
    }
    let mut rng = SplitMix64::new(seed);
    let mut ratios = Vec::with_capacity(rounds);
    // Rates resample their reciprocals (harmonic mean = 1 / mean of 1/x),
    // so each draw is one load and one add.
    let prep = |v: &[f64]| -> (Vec<f64>, bool) {
        if rate && v.iter().all(|&x| x > 0.0) {
            (v.iter().map(|x| 1.0 / x).collect(), true)
        } else {
            (v.to_vec(), false)
        }
    };
    let (base, base_h) = prep(base);
    let (new, new_h) = prep(new);
    let resample = |v: &[f64], h: bool, rng: &mut SplitMix64| -> f64 {
        let mut acc = 0.0;
        for _ in 0..v.len() {
            acc += v[rng.below(v.len())];
        }
        let m = acc / v.len() as f64;
        if h { 1.0 / m } else { m }
    };
    for _ in 0..rounds {
        let b = resample(&base, base_h, &mut rng);
        let n = resample(&new, new_h, &mut rng);
        if b != 0.0 && (n / b).is_finite() {
            ratios.push(n / b);
        }
    }
    if ratios.len() < rounds / 2 {
        return None;
    }
    ratios.sort_by(f64::total_cmp);
    let at = |q: f64| ratios[((ratios.len() - 1) as f64 * q).round() as usize];
    Some((at(0.025), at(0.975)))
}

/// Rows with more values than this (both sides together) get the normal
/// interval instead of the bootstrap: there the bootstrap distribution of
/// a mean is normal by the central limit theorem, and resampling would
/// cost seconds.
pub const BOOTSTRAP_MAX_VALUES: usize = 20_000;

/// Normal (delta-method) 95 % CI of mean(new) / mean(base) on the log
/// scale: var(ln mean(y)) ~ var(y) / (n mean(y)^2), with y = 1/x for rates
/// (whose harmonic means are compared), y = x otherwise.
pub fn normal_ratio_ci(base: &[f64], new: &[f64], rate: bool) -> Option<(f64, f64)> {
    if base.len() < 2 || new.len() < 2 {
        return None;
    }
    // Each side's mean as it is summarised (harmonic only when all its
    // values are positive): (ln of that mean, variance of the ln).
    let side = |v: &[f64]| -> Option<(f64, f64)> {
        let harmonic = rate && v.iter().all(|&x| x > 0.0);
        let y: Vec<f64> = if harmonic {
            v.iter().map(|x| 1.0 / x).collect()
        } else {
            v.to_vec()
        };
        let m = mean(&y);
        if m <= 0.0 {
            return None;
        }
        let var = stddev(&y).powi(2) / (y.len() as f64 * m * m);
        Some((if harmonic { -m.ln() } else { m.ln() }, var))
    };
    let (lb, vb) = side(base)?;
    let (ln, vn) = side(new)?;
    let log_r = ln - lb;
    let se = (vb + vn).sqrt();
    let z = 1.959_963_984_540_054;
    Some(((log_r - z * se).exp(), (log_r + z * se).exp()))
}

/// Welch t 95 % CI of mean(new) / mean(base) on the log scale: the
/// difference of the sides' mean logs has the standard error and the
/// Welch-Satterthwaite degrees of freedom of Welch's test on logs, and the
/// interval is ratio x exp(+/- t se) around the ratio of the means as the
/// figure is summarised (harmonic for rates). Under multiplicative noise
/// (one shape, a change of scale) every centre moves by the same ratio, so
/// this covers it; the t quantile keeps n = 3 honest. `None` unless both
/// sides have two or more values, all positive.
pub fn log_t_ratio_ci(base: &[f64], new: &[f64], rate: bool) -> Option<(f64, f64)> {
    let (lb, ln) = (Moments::of_logs(base)?, Moments::of_logs(new)?);
    log_t_ratio_ci_of(&lb, &ln, figure_mean(new, rate) / figure_mean(base, rate))
}

/// `log_t_ratio_ci` from the moments of the sides' logs, around `ratio`.
pub fn log_t_ratio_ci_of(
    base_logs: &Moments,
    new_logs: &Moments,
    ratio: f64,
) -> Option<(f64, f64)> {
    if base_logs.n < 2 || new_logs.n < 2 {
        return None;
    }
    let side = |m: &Moments| m.sd.powi(2) / m.n as f64;
    let (vb, vn) = (side(base_logs), side(new_logs));
    let se2 = vb + vn;
    if se2 <= 0.0 {
        return Some((ratio, ratio));
    }
    let df = se2 * se2 / (vb * vb / (base_logs.n - 1) as f64 + vn * vn / (new_logs.n - 1) as f64);
    let h = super::summary::t95(df) * se2.sqrt();
    Some((ratio * (-h).exp(), ratio * h.exp()))
}

/// A stable seed for one row, so the same comparison prints the same interval.
pub fn row_seed(seed: u64, row: &str) -> u64 {
    // FNV-1a over the row name, mixed with the user's seed.
    let mut h: u64 = 0xcbf2_9ce4_8422_2325 ^ seed;
    for b in row.bytes() {
        h ^= b as u64;
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    fn draw(rng: &mut SplitMix64, n: usize, mu: f64, sd: f64) -> Vec<f64> {
        (0..n).map(|_| mu + sd * rng.normal()).collect()
    }

    #[test]
    fn welch_matches_a_hand_computed_value() {
        // a: mean 3, var 2.5; b: mean 6, var 2.5; n = 5 each.
        // t = -3 / sqrt(1) = -3, df = 8; two-sided p = 0.017071 (t tables).
        let p = welch_p(&[1.0, 2.0, 3.0, 4.0, 5.0], &[4.0, 5.0, 6.0, 7.0, 8.0]).unwrap();
        assert!((p - 0.017071).abs() < 1e-5, "p = {p}");
    }

    #[test]
    fn three_percent_with_n5_and_sd08_is_significant() {
        // The case mmtests' star misses: means 100 vs 103, sd 0.8, n = 5.
        let a = [99.0, 99.6, 100.0, 100.4, 101.0];
        let b = [102.0, 102.6, 103.0, 103.4, 104.0];
        let sd = stddev(&a);
        assert!((sd - 0.7616).abs() < 0.01, "sd {sd}");
        let p = welch_p(&a, &b).unwrap();
        assert!(p < 1e-3, "p = {p}");
        let q = benjamini_hochberg(&[Some(p)]);
        assert_eq!(q[0], Some(p));
        // Seeded draws with the same truth, as a rate tested on logs.
        let mut rng = SplitMix64::new(7);
        let a = draw(&mut rng, 5, 100.0, 0.8);
        let b = draw(&mut rng, 5, 103.0, 0.8);
        assert!(figure_p(&a, &b, true).unwrap() < 0.05);
        assert!(figure_p(&a, &b, false).unwrap() < 0.05);
    }

    #[test]
    fn false_positives_stay_near_alpha() {
        // 200 pairs from one distribution: the expected number of p < 0.05
        // is 10, binomial sd sqrt(200 * 0.05 * 0.95) = 3.1. We allow 5 %
        // plus 3 sd = 19 raw marks; after BH (all nulls true) marks must be
        // rarer still, at most 5 % of the family (FDR = FWER under the null).
        let mut rng = SplitMix64::new(2024);
        let p: Vec<Option<f64>> = (0..200)
            .map(|_| {
                let a = draw(&mut rng, 5, 100.0, 0.8);
                let b = draw(&mut rng, 5, 100.0, 0.8);
                figure_p(&a, &b, true)
            })
            .collect();
        let raw = p.iter().filter(|x| x.unwrap() < 0.05).count();
        assert!(raw <= 19, "{raw} of 200 raw p < 0.05");
        let adj = benjamini_hochberg(&p);
        let marked = adj.iter().filter(|x| x.unwrap() < 0.05).count();
        assert!(marked <= 10, "{marked} of 200 marked after BH");
    }

    #[test]
    fn bh_matches_a_worked_reference() {
        // m = 6; sorted p: .001 .008 .039 .041 .042 .60
        // raw p*m/rank: .006 .024 .078 .0615 .0504 .60
        // step-up minimum from the top: .006 .024 .0504 .0504 .0504 .60
        let p = [0.039, 0.001, 0.60, 0.041, 0.008, 0.042];
        let got = benjamini_hochberg(&p.map(Some));
        let want = [0.0504, 0.006, 0.60, 0.0504, 0.024, 0.0504];
        for (g, w) in got.iter().zip(want) {
            assert!((g.unwrap() - w).abs() < 1e-12, "{got:?}");
        }
        // Non-tests are skipped and do not count in m.
        let got = benjamini_hochberg(&[Some(0.01), None, Some(0.04)]);
        assert_eq!(got[1], None);
        assert!((got[0].unwrap() - 0.02).abs() < 1e-12);
        assert!((got[2].unwrap() - 0.04).abs() < 1e-12);
    }

    #[test]
    fn percent_sign_means_better() {
        assert!((pct_better(100.0, 103.0, Better::Higher) - 3.0).abs() < 1e-12);
        assert!((pct_better(100.0, 103.0, Better::Lower) + 3.0).abs() < 1e-12);
        assert!((pct_better(200.0, 150.0, Better::Lower) - 25.0).abs() < 1e-12);
    }

    #[test]
    fn bootstrap_is_seeded_and_covers_the_ratio() {
        let mut rng = SplitMix64::new(1);
        let a = draw(&mut rng, 20, 100.0, 1.0);
        let b = draw(&mut rng, 20, 110.0, 1.0);
        let ci = bootstrap_ratio_ci(&a, &b, false, 42, 2000).unwrap();
        assert_eq!(Some(ci), bootstrap_ratio_ci(&a, &b, false, 42, 2000));
        let r = mean(&b) / mean(&a);
        assert!(ci.0 < r && r < ci.1, "{ci:?} vs {r}");
        assert!(ci.0 > 1.08 && ci.1 < 1.12, "{ci:?}");
    }

    #[test]
    fn normal_interval_agrees_with_the_bootstrap_on_large_samples() {
        let mut rng = SplitMix64::new(3);
        for rate in [false, true] {
            let a = draw(&mut rng, 4000, 100.0, 5.0);
            let b = draw(&mut rng, 4000, 103.0, 5.0);
            let boot = bootstrap_ratio_ci(&a, &b, rate, 9, 1000).unwrap();
            let norm = normal_ratio_ci(&a, &b, rate).unwrap();
            let width = boot.1 - boot.0;
            assert!((boot.0 - norm.0).abs() < 0.1 * width, "{boot:?} {norm:?}");
            assert!((boot.1 - norm.1).abs() < 0.1 * width, "{boot:?} {norm:?}");
        }
    }

    #[test]
    fn ratio_intervals_follow_each_sides_mean() {
        // A rate with a zero on one side: that side is summarised by its
        // arithmetic mean, the other by its harmonic mean, and both
        // intervals must be about the ratio of those two means.
        let mut rng = SplitMix64::new(5);
        let a = draw(&mut rng, 200, 100.0, 1.0);
        let mut b = draw(&mut rng, 200, 110.0, 1.0);
        b.push(0.0);
        let r = figure_mean(&b, true) / figure_mean(&a, true);
        let norm = normal_ratio_ci(&a, &b, true).unwrap();
        assert!(norm.0 < r && r < norm.1, "{norm:?} vs {r}");
        let boot = bootstrap_ratio_ci(&a, &b, true, 3, 1000).unwrap();
        assert!(boot.0 < r && r < boot.1, "{boot:?} vs {r}");
    }

    #[test]
    fn degenerate_inputs_give_no_test() {
        assert_eq!(welch_p(&[1.0], &[1.0, 2.0]), None);
        assert_eq!(welch_p(&[1.0, 1.0], &[1.0, 1.0]), Some(1.0));
        assert_eq!(welch_p(&[1.0, 1.0], &[2.0, 2.0]), Some(0.0));
        assert_eq!(
            bootstrap_ratio_ci(&[1.0], &[1.0, 2.0], false, 1, 2000),
            None
        );
    }
    /// Share of `trials` seeded comparisons of n vs n samples whose ratio
    /// CI covers the true ratio 1.1: noise normal or log-normal, relative
    /// spread `cv`, rates or plain figures.
    fn ratio_coverage(n: usize, cv: f64, lognormal: bool, rate: bool, trials: usize) -> f64 {
        let mut rng = SplitMix64::new(1000 + n as u64);
        let mut draw = |scale: f64| -> Vec<f64> {
            (0..n)
                .map(|_| {
                    let z = rng.normal();
                    scale
                        * if lognormal {
                            (cv * z).exp()
                        } else {
                            (1.0 + cv * z).max(1e-6)
                        }
                })
                .collect()
        };
        let mut hit = 0;
        for _ in 0..trials {
            let (a, b) = (draw(100.0), draw(110.0));
            let (lo, hi) = log_t_ratio_ci(&a, &b, rate).unwrap();
            hit += (lo <= 1.1 && 1.1 <= hi) as usize;
        }
        hit as f64 / trials as f64
    }

    #[test]
    fn ratio_interval_keeps_its_promise_from_n3() {
        // The table in docs/statistics.md comes from this simulation
        // (run with --nocapture to print it).
        for n in [3usize, 5, 10] {
            for (cv, lognormal) in [(0.05, false), (0.2, false), (0.05, true), (0.3, true)] {
                for rate in [false, true] {
                    let c = ratio_coverage(n, cv, lognormal, rate, 2000);
                    println!("n={n} cv={cv} lognormal={lognormal} rate={rate}: {c:.3}");
                    assert!(
                        c >= 0.93,
                        "n={n} cv={cv} lognormal={lognormal} rate={rate}: {c}"
                    );
                }
            }
        }
    }
}
