//! What an interval would become with more samples, for a case that has
//! not settled: the samples modelled as what they showed (two groups with
//! their sizes, centres and spreads, or a trend carried on with the
//! scatter around it), the median's order-statistic interval at N samples
//! read off the model at its ranks (0.5 ± 0.98/√N), and a paired ratio's
//! t interval at N rounds from the spread of its logs (a trend in them
//! widens it). The stopping rule asks whether the time budget can still
//! reach the precision (docs/repetitions.md, "Samples that do not settle").

use statrs::function::erf::erfc;

use super::mixture::Mixture;
use super::robust;
use super::summary::{mean, median, stddev, t95};

/// The fewest samples a projection speaks of (the median's interval needs
/// 5, `robust::MEDIAN_CI_MIN_N`).
const MIN_N: usize = 5;

/// Points a trend is spread over when its distribution is evaluated.
const TREND_POINTS: usize = 64;

/// The distribution the samples of a case are taken to come from.
#[derive(Debug, Clone, PartialEq)]
pub enum Model {
    /// Normal parts: (weight, mean, sd), weights summing to 1.
    Parts(Vec<(f64, f64, f64)>),
    /// Sample i (from 0) is `start + slope * i` plus normal scatter `sd`:
    /// the more samples, the wider the values spread.
    Trend { start: f64, slope: f64, sd: f64 },
}

/// Standard normal CDF.
fn phi(z: f64) -> f64 {
    0.5 * erfc(-z / std::f64::consts::SQRT_2)
}

/// A spread never exactly zero, so a CDF is never a step at a point that
/// bisection cannot find.
fn floor_sd(sd: f64, centre: f64) -> f64 {
    sd.max(centre.abs() * 1e-9).max(f64::MIN_POSITIVE)
}

/// The robust spread of `v`: 1.4826 × the median absolute deviation (the
/// sd of normal data), or the sample sd when half the values are equal.
fn spread(v: &[f64]) -> f64 {
    let m = median(v);
    let dev: Vec<f64> = v.iter().map(|x| (x - m).abs()).collect();
    let mad = 1.4826 * median(&dev);
    if mad > 0.0 { mad } else { stddev(v) }
}

impl Model {
    /// Two groups as `mixture::detect` found them in `values`: each a
    /// normal part with the group's share, mean and sd.
    pub fn groups(values: &[f64], m: &Mixture) -> Model {
        let n = values.len() as f64;
        Model::Parts(
            m.groups
                .iter()
                .map(|g| {
                    let v: Vec<f64> = g.indices.iter().map(|&i| values[i]).collect();
                    let mu = mean(&v);
                    (v.len() as f64 / n, mu, floor_sd(stddev(&v), mu))
                })
                .collect(),
        )
    }

    /// The same groups with the larger one's share at the upper end of its
    /// one-sided 95 % (Wilson) interval: the most favourable shares the
    /// samples allow, so a projection from a few samples says "cannot be
    /// reached" only when it cannot be for any likely shares (the median
    /// lies inside the larger group once it holds enough).
    pub fn favouring_the_larger(self, n: usize) -> Model {
        let Model::Parts(mut parts) = self else {
            return self;
        };
        if parts.len() != 2 || n == 0 {
            return Model::Parts(parts);
        }
        let big = usize::from(parts[1].0 > parts[0].0);
        let up = wilson_upper(parts[big].0, n as f64);
        parts[big].0 = up;
        parts[1 - big].0 = 1.0 - up;
        Model::Parts(parts)
    }

    /// `values` (in sampling order) as a line through them (Sen's slope, the
    /// median intercept) and the robust scatter about it, carried on.
    pub fn trend(values: &[f64]) -> Model {
        let (slope, resid) = detrended(values);
        let start = median(&resid);
        let resid: Vec<f64> = resid.iter().map(|r| r - start).collect();
        Model::Trend {
            start,
            slope,
            sd: floor_sd(spread(&resid), start),
        }
    }

    /// The parts of the distribution of `n` samples.
    fn parts(&self, n: usize) -> Vec<(f64, f64, f64)> {
        match self {
            Model::Parts(p) => p.clone(),
            Model::Trend { start, slope, sd } => {
                let k = n.clamp(1, TREND_POINTS);
                let last = n.saturating_sub(1) as f64;
                (0..k)
                    .map(|j| {
                        let i = last * (j as f64 + 0.5) / k as f64;
                        (1.0 / k as f64, start + slope * i, *sd)
                    })
                    .collect()
            }
        }
    }

    /// The median's 95 % interval at `n` samples as a fraction of the
    /// median: the larger distance from the median to the quantiles at
    /// 0.5 ± 0.98/√n (the order-statistic ranks of `robust::median_ci`,
    /// by the normal approximation of the binomial). Infinite below 5
    /// samples or for a zero median.
    pub fn relative_ci(&self, n: usize) -> f64 {
        if n < MIN_N {
            return f64::INFINITY;
        }
        let parts = self.parts(n);
        let h = 0.98 / (n as f64).sqrt();
        let q = |p: f64| quantile(&parts, p.clamp(1e-12, 1.0 - 1e-12));
        let (lo, mid, hi) = (q(0.5 - h), q(0.5), q(0.5 + h));
        let rel = (mid - lo).max(hi - mid) / mid.abs();
        if rel.is_finite() { rel } else { f64::INFINITY }
    }
}

/// The upper end of the one-sided 95 % Wilson interval of a share `p`
/// observed in `n` samples.
fn wilson_upper(p: f64, n: f64) -> f64 {
    const Z: f64 = 1.645;
    let z2 = Z * Z;
    let centre = p + z2 / (2.0 * n);
    let spread = Z * (p * (1.0 - p) / n + z2 / (4.0 * n * n)).sqrt();
    ((centre + spread) / (1.0 + z2 / n)).min(1.0)
}

/// The `p` quantile of a mixture of normal parts, by bisection.
fn quantile(parts: &[(f64, f64, f64)], p: f64) -> f64 {
    let cdf = |x: f64| -> f64 { parts.iter().map(|&(w, m, s)| w * phi((x - m) / s)).sum() };
    let mut lo = parts
        .iter()
        .map(|&(_, m, s)| m - 10.0 * s)
        .fold(f64::INFINITY, f64::min);
    let mut hi = parts
        .iter()
        .map(|&(_, m, s)| m + 10.0 * s)
        .fold(f64::NEG_INFINITY, f64::max);
    for _ in 0..100 {
        let mid = 0.5 * (lo + hi);
        if mid <= lo || mid >= hi {
            break;
        }
        if cdf(mid) < p {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    0.5 * (lo + hi)
}

/// A paired ratio's logs (one per round, in round order) carried on: the
/// t interval's relative half-width at `n` rounds, from the scatter of
/// the logs about their trend and the spread the trend adds over `n`
/// rounds (a slope b over n rounds adds b²(n²-1)/12 to the variance).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PairedModel {
    slope: f64,
    sd: f64,
}

impl PairedModel {
    /// From the rounds' log ratios; `drift` when they trend (else the
    /// slope is taken as zero and their whole spread as scatter).
    pub fn new(logs: &[f64], drift: bool) -> PairedModel {
        if !drift {
            return PairedModel {
                slope: 0.0,
                sd: stddev(logs),
            };
        }
        let (slope, resid) = detrended(logs);
        PairedModel {
            slope,
            sd: stddev(&resid),
        }
    }

    /// The ratio's interval at `n` rounds: exp(t × sd_n / √n) - 1.
    pub fn relative_ci(&self, n: usize) -> f64 {
        if n < 3 {
            return f64::INFINITY;
        }
        let nf = n as f64;
        let var = self.sd.powi(2) + self.slope.powi(2) * (nf * nf - 1.0) / 12.0;
        (t95(nf - 1.0) * var.sqrt() / nf.sqrt()).exp() - 1.0
    }
}

/// Sen's slope of `values` in sampling order (0 where there is none) and
/// what is left of each value once the slope is taken off.
fn detrended(values: &[f64]) -> (f64, Vec<f64>) {
    let slope = robust::sen_slope(values);
    let slope = if slope.is_finite() { slope } else { 0.0 };
    let resid = values
        .iter()
        .enumerate()
        .map(|(i, v)| v - slope * i as f64)
        .collect();
    (slope, resid)
}

/// How many samples a projection says the precision needs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Need {
    /// About this many (rounded to two significant digits).
    pub samples: usize,
    /// True when no count up to `samples` reaches it (a trend widens the
    /// interval faster than more samples narrow it).
    pub more_than: bool,
}

/// The fewest samples from `from` on whose projected interval (`rel_at`)
/// is within `precision`, searched in steps of 25 % then narrowed by
/// bisection, up to `limit`.
pub fn samples_needed(
    rel_at: impl Fn(usize) -> f64,
    precision: f64,
    from: usize,
    limit: usize,
) -> Need {
    let mut prev = from.max(MIN_N);
    if rel_at(prev) <= precision {
        return Need {
            samples: prev,
            more_than: false,
        };
    }
    loop {
        let next = (prev + prev / 4 + 1).min(limit);
        if rel_at(next) <= precision {
            let (mut lo, mut hi) = (prev, next);
            while hi - lo > 1 {
                let mid = lo + (hi - lo) / 2;
                if rel_at(mid) <= precision {
                    hi = mid;
                } else {
                    lo = mid;
                }
            }
            return Need {
                samples: round2(hi),
                more_than: false,
            };
        }
        if next >= limit {
            return Need {
                samples: round2(limit),
                more_than: true,
            };
        }
        prev = next;
    }
}

/// `n` to two significant digits.
fn round2(n: usize) -> usize {
    let mut scale = 1;
    while n / scale >= 100 {
        scale *= 10;
    }
    (n as f64 / scale as f64).round() as usize * scale
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::mixture;
    use crate::stats::rng::SplitMix64;
    use crate::stats::robust::median_ci;

    /// The median of `trials` simulated median-interval widths at `n`
    /// samples drawn by `draw`.
    fn simulated(
        rng: &mut SplitMix64,
        n: usize,
        trials: usize,
        draw: impl Fn(&mut SplitMix64, usize) -> f64,
    ) -> f64 {
        let widths: Vec<f64> = (0..trials)
            .map(|_| {
                let v: Vec<f64> = (0..n).map(|i| draw(rng, i)).collect();
                median_ci(&v).map_or(f64::INFINITY, |c| c.relative_half_width())
            })
            .collect();
        median(&widths)
    }

    /// Fails unless the model's projected interval at each count of `ns`
    /// is within a factor of 2 of the [`simulated`] one.
    fn assert_simulated(
        model: &Model,
        rng: &mut SplitMix64,
        ns: &[usize],
        trials: usize,
        draw: impl Fn(&mut SplitMix64, usize) -> f64,
    ) {
        for &n in ns {
            let projected = model.relative_ci(n);
            let truth = simulated(rng, n, trials, &draw);
            let r = projected / truth;
            assert!((0.5..2.0).contains(&r), "n={n}: {projected} vs {truth}");
        }
    }

    /// Two groups (30 % near 554k, 70 % near 689k, 2 % spread each), as
    /// a 1-task pft once showed: the model from the first 10 samples
    /// projects the interval at 60 and 600 samples within a factor of 2
    /// of what drawing that many gives (median of 200 seeded trials).
    #[test]
    fn a_mixtures_projection_matches_simulated_intervals() {
        let draw = |rng: &mut SplitMix64, i: usize| {
            let m = if i % 10 < 3 { 554_197.0 } else { 689_441.0 };
            m * (1.0 + 0.02 * rng.normal())
        };
        let mut rng = SplitMix64::new(32);
        let first: Vec<f64> = (0..10).map(|i| draw(&mut rng, i)).collect();
        let m = mixture::detect(&first).expect("two groups");
        let model = Model::groups(&first, &m);
        assert_simulated(&model, &mut rng, &[60, 600], 200, draw);
        // At 0.1 % it needs thousands of samples, not a few dozen.
        let need = samples_needed(|n| model.relative_ci(n), 0.001, 10, 1_000_000);
        assert!(!need.more_than && need.samples > 1000, "{need:?}");
        assert!(model.relative_ci(need.samples) <= 0.0011);
    }

    /// Two groups of equal size: the median sits in the gap between them
    /// and the interval spans it however many samples are taken.
    #[test]
    fn equal_groups_never_settle() {
        let v: Vec<f64> = (0..20)
            .map(|i| if i % 2 == 0 { 300.0 } else { 600.0 } * (1.0 + 0.001 * i as f64))
            .collect();
        let m = mixture::detect(&v).expect("two groups");
        let model = Model::groups(&v, &m);
        assert!(model.relative_ci(100_000) > 0.01);
    }

    /// A drift carried on widens the interval: +0.5 %/sample under 0.2 %
    /// scatter is wider at 200 samples than at 20, and the simulated
    /// widths agree within a factor of 2.
    #[test]
    fn a_drift_widens_with_the_count() {
        let draw =
            |rng: &mut SplitMix64, i: usize| 1000.0 * (1.0 + 0.005 * i as f64) + 2.0 * rng.normal();
        let mut rng = SplitMix64::new(9);
        let first: Vec<f64> = (0..20).map(|i| draw(&mut rng, i)).collect();
        let model = Model::trend(&first);
        assert!(model.relative_ci(200) > model.relative_ci(20));
        assert_simulated(&model, &mut rng, &[20, 200], 100, draw);
        let need = samples_needed(|n| model.relative_ci(n), 0.001, 20, 10_000);
        assert_eq!(
            need,
            Need {
                samples: 10_000,
                more_than: true
            }
        );
    }

    /// A paired ratio whose logs scatter 1 %: the projected interval
    /// shrinks as 1/√n and matches the t interval of simulated rounds.
    #[test]
    fn a_paired_projection_matches_simulated_rounds() {
        let mut rng = SplitMix64::new(5);
        let logs: Vec<f64> = (0..10).map(|_| 0.01 * rng.normal()).collect();
        let model = PairedModel::new(&logs, false);
        let at = |n: usize| model.relative_ci(n);
        assert!(at(400) < at(100) && at(100) < at(25));
        let widths: Vec<f64> = (0..200)
            .map(|_| {
                let d: Vec<f64> = (0..100).map(|_| 0.01 * rng.normal()).collect();
                (t95(99.0) * stddev(&d) / 10.0).exp() - 1.0
            })
            .collect();
        let r = at(100) / median(&widths);
        assert!((0.5..2.0).contains(&r), "{r}");
        // A trend in the ratio widens it with the rounds.
        let drifting: Vec<f64> = (0..10).map(|i| 0.004 * i as f64).collect();
        let d = PairedModel::new(&drifting, true);
        assert!(d.relative_ci(1000) > d.relative_ci(100));
    }

    #[test]
    fn the_favourable_shares_lean_to_the_larger_group_less_as_samples_grow() {
        let parts =
            |n: usize, big: f64| match Model::Parts(vec![(1.0 - big, 1.0, 0.1), (big, 2.0, 0.1)])
                .favouring_the_larger(n)
            {
                Model::Parts(p) => p[0].0.max(p[1].0),
                other => panic!("{other:?}"),
            };
        assert!(parts(10, 0.5) > 0.7 && parts(10, 0.5) < 0.8);
        assert!(parts(1000, 0.5) < 0.53);
        assert!((parts(10, 0.7) - 0.7).abs() < 0.25 && parts(10, 0.7) > 0.7);
    }

    #[test]
    fn counts_round_to_two_digits() {
        assert_eq!(round2(6789), 6800);
        assert_eq!(round2(99), 99);
        assert_eq!(round2(1049), 1000);
    }
}
