//! Variance at two levels, after Kalibera and Jones ("Rigorous
//! benchmarking in reasonable time", ISMM 2013): samples grouped by the
//! invocation they were taken in. The within-invocation and
//! between-invocation components of the variance (one-way random effects),
//! the interval of the centre from the invocation means (which holds
//! whichever level dominates), and the repetitions that reach a precision
//! most cheaply. Computed on logarithms, so spreads are relative.

use serde::Serialize;

use super::summary::{mean, t95};

/// The key of a sample's `noise` map that holds the invocation it was
/// taken in (0, 1, ...), set by the runner when a run has several.
pub const INVOCATION: &str = "invocation";

/// The two-level analysis of one case.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Levels {
    pub invocations: usize,
    /// Samples per invocation (the smallest, when they differ).
    pub per_invocation: usize,
    /// Geometric mean over invocations of each invocation's geometric mean.
    pub centre: f64,
    /// Relative standard deviation between samples of one invocation.
    pub within: f64,
    /// Relative standard deviation of the invocation level itself (the
    /// variance component, 0 when the means vary no more than chance).
    pub between: f64,
    /// 95 % interval of the centre from the invocation means: t with
    /// invocations - 1 degrees of freedom.
    pub ci95: (f64, f64),
    /// The same interval had the samples been independent (all pooled).
    pub pooled_ci95: (f64, f64),
    /// The invocation level adds more to the centre's variance than the
    /// samples within invocations do.
    pub between_dominates: bool,
}

impl Levels {
    /// Half-width of `ci95` as a fraction of the centre (the larger side).
    pub fn relative_half_width(&self) -> f64 {
        (self.ci95.1 / self.centre - 1.0).max(1.0 - self.ci95.0 / self.centre)
    }

    /// The cheapest plan for a relative precision `p` (0.01 = 1 %):
    /// (invocations, samples per invocation). `cost_ratio` is what a new
    /// invocation costs in samples (its warm-ups and set-up).
    pub fn plan(&self, p: f64, cost_ratio: f64) -> (usize, usize) {
        let (vw, vb) = (self.within.powi(2), self.between.powi(2));
        // Kalibera and Jones: r = sqrt(c_inv vw / (c_sample vb)).
        let r = if vb > 0.0 {
            ((cost_ratio.max(1.0) * vw / vb).sqrt().round() as usize).clamp(1, 1000)
        } else {
            self.per_invocation.max(1)
        };
        let per = vb + vw / r as f64;
        let mut k = 2usize;
        while k < 1000 && t95((k - 1) as f64).powi(2) * per / k as f64 > p * p {
            k += 1;
        }
        (k, r)
    }
}

/// Analyses `groups`, one per invocation, each the figure's values in that
/// invocation. `None` with fewer than two invocations, fewer than two values
/// in some invocation, or a value that is not positive and finite.
pub fn analyse(groups: &[Vec<f64>]) -> Option<Levels> {
    let k = groups.len();
    if k < 2
        || groups.iter().any(|g| g.len() < 2)
        || groups
            .iter()
            .flatten()
            .any(|v| !(*v > 0.0 && v.is_finite()))
    {
        return None;
    }
    let logs: Vec<Vec<f64>> = groups
        .iter()
        .map(|g| g.iter().map(|v| v.ln()).collect())
        .collect();
    let means: Vec<f64> = logs.iter().map(|g| mean(g)).collect();
    let grand = mean(&means);
    // Within: pooled variance about each invocation's own mean.
    let ss_within: f64 = logs
        .iter()
        .zip(&means)
        .map(|(g, m)| g.iter().map(|v| (v - m).powi(2)).sum::<f64>())
        .sum();
    let n_total: usize = logs.iter().map(Vec::len).sum();
    let vw = ss_within / (n_total - k) as f64;
    // Between: variance of the invocation means less what the samples
    // within them explain (harmonic mean of the group sizes for r).
    let r_h = k as f64 / logs.iter().map(|g| 1.0 / g.len() as f64).sum::<f64>();
    let var_means = means.iter().map(|m| (m - grand).powi(2)).sum::<f64>() / (k - 1) as f64;
    let vb = (var_means - vw / r_h).max(0.0);
    let h = t95((k - 1) as f64) * (var_means / k as f64).sqrt();
    let all: Vec<f64> = logs.iter().flatten().copied().collect();
    let pooled_mean = mean(&all);
    let pooled_sd = super::summary::stddev(&all);
    let hp = t95((n_total - 1) as f64) * pooled_sd / (n_total as f64).sqrt();
    Some(Levels {
        invocations: k,
        per_invocation: logs.iter().map(Vec::len).min().unwrap_or(0),
        centre: grand.exp(),
        within: vw.sqrt(),
        between: vb.sqrt(),
        ci95: ((grand - h).exp(), (grand + h).exp()),
        pooled_ci95: ((pooled_mean - hp).exp(), (pooled_mean + hp).exp()),
        between_dominates: vb > vw / r_h,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::rng::SplitMix64;

    /// k invocations of r samples: each invocation's level drawn with
    /// relative sd `between`, samples around it with `within`.
    fn draw(rng: &mut SplitMix64, k: usize, r: usize, between: f64, within: f64) -> Vec<Vec<f64>> {
        (0..k)
            .map(|_| {
                let level = 100.0 * (between * rng.normal()).exp();
                (0..r)
                    .map(|_| level * (within * rng.normal()).exp())
                    .collect()
            })
            .collect()
    }

    #[test]
    fn components_are_recovered_and_the_interval_widens() {
        let mut rng = SplitMix64::new(12);
        let l = analyse(&draw(&mut rng, 40, 10, 0.05, 0.01)).unwrap();
        assert!((l.between - 0.05).abs() < 0.015, "{l:?}");
        assert!((l.within - 0.01).abs() < 0.002, "{l:?}");
        assert!(l.between_dominates);
        let pooled = l.pooled_ci95.1 / l.pooled_ci95.0;
        assert!(l.ci95.1 / l.ci95.0 > pooled, "{l:?}");
        // No invocation effect: the component is near 0, not dominant.
        let l = analyse(&draw(&mut rng, 20, 10, 0.0, 0.02)).unwrap();
        assert!(l.between < 0.01 && !l.between_dominates, "{l:?}");
        assert!(analyse(&[vec![1.0, 2.0]]).is_none());
        assert!(analyse(&[vec![1.0, 2.0], vec![3.0]]).is_none());
    }

    #[test]
    fn the_invocation_interval_covers_what_another_run_would_centre_on() {
        // The truth is the level over all invocations (100); a pooled
        // interval that ignores the invocation level covers it far less
        // often when that level dominates.
        let mut rng = SplitMix64::new(31);
        let trials = 1000;
        let (mut hit, mut pooled_hit) = (0, 0);
        for _ in 0..trials {
            let l = analyse(&draw(&mut rng, 3, 10, 0.05, 0.01)).unwrap();
            hit += (l.ci95.0 <= 100.0 && 100.0 <= l.ci95.1) as usize;
            pooled_hit += (l.pooled_ci95.0 <= 100.0 && 100.0 <= l.pooled_ci95.1) as usize;
        }
        let (cov, pooled) = (
            hit as f64 / trials as f64,
            pooled_hit as f64 / trials as f64,
        );
        println!("invocation interval {cov:.3}, pooled {pooled:.3}");
        assert!(cov >= 0.93, "{cov}");
        assert!(pooled < 0.7, "{pooled}");
    }

    #[test]
    fn the_plan_puts_repetitions_where_the_variance_is() {
        let mut rng = SplitMix64::new(5);
        // Invocation level dominates: few samples each, many invocations.
        let l = analyse(&draw(&mut rng, 30, 10, 0.03, 0.01)).unwrap();
        let (k, r) = l.plan(0.01, 1.0);
        assert!(r <= 2 && k >= 30, "{k} x {r}");
        // Within dominates: more samples per invocation, few invocations.
        let l = analyse(&draw(&mut rng, 30, 10, 0.0, 0.05)).unwrap();
        let (k2, r2) = l.plan(0.01, 1.0);
        assert!(r2 >= 4 && k2 < k, "{k2} x {r2}");
    }
}
