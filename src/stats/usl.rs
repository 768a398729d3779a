//! The Universal Scalability Law, X(N) = λN / (1 + σ(N-1) + κN(N-1)),
//! fitted by Levenberg-Marquardt with σ, κ >= 0 on the logarithms of X:
//! throughput noise is multiplicative (a few % at any N), so relative
//! residuals weigh every N alike where plain ones let the largest X decide.
//! The bound is kept by an active-set search: the unconstrained fit, and
//! fits with σ, κ or both fixed at 0; the best feasible one wins. Standard
//! errors come from the Jacobian at the optimum; the intervals of σ and κ
//! are cut at 0 (the parameter cannot lie below), and a coefficient fixed on
//! its bound gets [0, t se] from the Jacobian of the full model there.
//! Pure math: no workload, store or report here.

use crate::error::{Error, Result};
use levenberg_marquardt::{LeastSquaresProblem, LevenbergMarquardt};
use nalgebra::{DMatrix, DVector, Dyn, Owned};
use serde::Serialize;

use super::summary::t95;

/// USL coefficients: contention σ, coherency κ, single-task throughput λ.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Params {
    pub sigma: f64,
    pub kappa: f64,
    pub lambda: f64,
}

impl Params {
    /// X(N) under these coefficients.
    pub fn x(&self, n: f64) -> f64 {
        self.lambda * n / (1.0 + self.sigma * (n - 1.0) + self.kappa * n * (n - 1.0))
    }

    /// N* = sqrt((1 - σ) / κ), the concurrency of peak throughput; `None`
    /// when κ = 0 or σ >= 1 (no interior peak).
    pub fn peak(&self) -> Option<f64> {
        (self.kappa > 0.0 && self.sigma < 1.0).then(|| ((1.0 - self.sigma) / self.kappa).sqrt())
    }
}

/// One coefficient with its uncertainty.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Estimate {
    pub value: f64,
    /// Standard error; `None` when fixed on the bound or no degrees of freedom.
    pub se: Option<f64>,
    /// 95 % confidence interval (t distribution, residual degrees of
    /// freedom), never below 0 for σ and κ.
    pub ci95: Option<(f64, f64)>,
    /// True when the fit landed on the bound and the value was fixed at 0.
    pub at_bound: bool,
}

/// The fit and everything needed to report and extrapolate it.
#[derive(Debug, Clone, Serialize)]
pub struct Fit {
    pub sigma: Estimate,
    pub kappa: Estimate,
    pub lambda: Estimate,
    pub points: usize,
    pub distinct_n: usize,
    pub min_n: f64,
    pub max_n: f64,
    /// sqrt(sum of squared residuals / df), in the units of X.
    pub residual_se: f64,
    /// The same on the log scale the fit minimises: the relative residual
    /// standard error (0.02 = 2 %).
    pub residual_rel: f64,
    pub df: usize,
    /// N* and X(N*), when there is a peak.
    pub peak: Option<(f64, f64)>,
    pub warnings: Vec<String>,
    /// Covariance of the free parameters, in the order λ, σ, κ (free only).
    #[serde(skip)]
    cov: Option<DMatrix<f64>>,
    #[serde(skip)]
    free: Vec<usize>,
}

/// A predicted point.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Prediction {
    pub n: f64,
    pub x: f64,
    /// 95 % confidence interval of the fitted curve at n (delta method on
    /// the log scale, so it stays positive).
    pub ci95: Option<(f64, f64)>,
    /// n lies beyond the largest N measured.
    pub beyond_data: bool,
}

impl Fit {
    pub fn params(&self) -> Params {
        Params {
            sigma: self.sigma.value,
            kappa: self.kappa.value,
            lambda: self.lambda.value,
        }
    }

    /// X at `n` with the confidence interval of the curve there.
    pub fn predict(&self, n: f64) -> Prediction {
        let p = self.params();
        let x = p.x(n);
        let ci95 = self.cov.as_ref().map(|cov| {
            let g = DVector::from_iterator(
                self.free.len(),
                self.free.iter().map(|&i| grad(&p, n)[i] / x),
            );
            let var = (g.transpose() * cov * &g)[(0, 0)].max(0.0);
            let h = t95(self.df as f64) * var.sqrt();
            (x * (-h).exp(), x * h.exp())
        });
        Prediction {
            n,
            x,
            ci95,
            beyond_data: n > self.max_n,
        }
    }

    /// Predictions at `ns`, with warnings for those past the data.
    pub fn extrapolate(&self, ns: &[f64]) -> (Vec<Prediction>, Vec<String>) {
        let rows: Vec<Prediction> = ns.iter().map(|&n| self.predict(n)).collect();
        let mut warnings = Vec::new();
        if let Some(far) = rows
            .iter()
            .filter(|r| r.beyond_data)
            .map(|r| r.n)
            .reduce(f64::max)
        {
            warnings.push(format!(
                "extrapolating to N = {far} beyond the largest N measured ({}): the model, \
                 not the machine, gives these values",
                self.max_n
            ));
        }
        (rows, warnings)
    }
}

/// ∂X/∂(λ, σ, κ) at n.
fn grad(p: &Params, n: f64) -> [f64; 3] {
    let d = 1.0 + p.sigma * (n - 1.0) + p.kappa * n * (n - 1.0);
    let x_d2 = p.lambda * n / (d * d);
    [n / d, -x_d2 * (n - 1.0), -x_d2 * n * (n - 1.0)]
}

/// The least-squares problem over the free subset of (λ, σ, κ).
struct Problem<'a> {
    ns: &'a [f64],
    xs: &'a [f64],
    full: [f64; 3],
    free: Vec<usize>,
}

impl Problem<'_> {
    fn params(&self) -> Params {
        Params {
            lambda: self.full[0],
            sigma: self.full[1],
            kappa: self.full[2],
        }
    }

    /// Sum of squared log residuals (NaN where the model is not positive).
    fn rss(&self) -> f64 {
        let p = self.params();
        self.ns
            .iter()
            .zip(self.xs)
            .map(|(&n, &x)| (p.x(n).ln() - x.ln()).powi(2))
            .sum()
    }

    /// Sum of squared plain residuals, in the fit's units of X.
    fn rss_plain(&self) -> f64 {
        let p = self.params();
        self.ns
            .iter()
            .zip(self.xs)
            .map(|(&n, &x)| (p.x(n) - x).powi(2))
            .sum()
    }

    /// ∂ ln X / ∂ (the parameters in `cols`) at every point.
    fn jacobian_of(&self, cols: &[usize]) -> DMatrix<f64> {
        let p = self.params();
        DMatrix::from_fn(self.ns.len(), cols.len(), |r, c| {
            let n = self.ns[r];
            grad(&p, n)[cols[c]] / p.x(n)
        })
    }

    fn jacobian_matrix(&self) -> DMatrix<f64> {
        self.jacobian_of(&self.free)
    }
}

impl LeastSquaresProblem<f64, Dyn, Dyn> for Problem<'_> {
    type ResidualStorage = Owned<f64, Dyn>;
    type JacobianStorage = Owned<f64, Dyn, Dyn>;
    type ParameterStorage = Owned<f64, Dyn>;

    fn set_params(&mut self, x: &DVector<f64>) {
        for (k, &i) in self.free.iter().enumerate() {
            self.full[i] = x[k];
        }
    }

    fn params(&self) -> DVector<f64> {
        DVector::from_iterator(self.free.len(), self.free.iter().map(|&i| self.full[i]))
    }

    fn residuals(&self) -> Option<DVector<f64>> {
        let p = Problem::params(self);
        let r = DVector::from_iterator(
            self.ns.len(),
            self.ns
                .iter()
                .zip(self.xs)
                .map(|(&n, &x)| p.x(n).ln() - x.ln()),
        );
        r.iter().all(|v| v.is_finite()).then_some(r)
    }

    fn jacobian(&self) -> Option<DMatrix<f64>> {
        let j = self.jacobian_matrix();
        j.iter().all(|v| v.is_finite()).then_some(j)
    }
}

/// Starting values: λ from the smallest N, then σ and κ by linear least
/// squares on N λ / X - 1 = σ(N-1) + κN(N-1).
fn start(ns: &[f64], xs: &[f64]) -> [f64; 3] {
    let n0 = ns.iter().copied().fold(f64::INFINITY, f64::min);
    let at0: Vec<f64> = ns
        .iter()
        .zip(xs)
        .filter(|(n, _)| **n == n0)
        .map(|(_, x)| *x)
        .collect();
    let lambda = at0.iter().sum::<f64>() / at0.len() as f64 / n0;
    let (mut a11, mut a12, mut a22, mut b1, mut b2) = (0.0, 0.0, 0.0, 0.0, 0.0);
    for (&n, &x) in ns.iter().zip(xs) {
        let (u, v, z) = (n - 1.0, n * (n - 1.0), n * lambda / x - 1.0);
        a11 += u * u;
        a12 += u * v;
        a22 += v * v;
        b1 += u * z;
        b2 += v * z;
    }
    let det = a11 * a22 - a12 * a12;
    let (s, k) = if det.abs() > 1e-12 {
        ((b1 * a22 - b2 * a12) / det, (a11 * b2 - a12 * b1) / det)
    } else {
        (0.0, 0.0)
    };
    [lambda, s.max(1e-4), k.max(1e-6)]
}

/// Fits the subset `free` of (λ, σ, κ) from `init`; the others stay as in `init`.
fn fit_subset<'a>(ns: &'a [f64], xs: &'a [f64], init: [f64; 3], free: Vec<usize>) -> Problem<'a> {
    let problem = Problem {
        ns,
        xs,
        full: init,
        free,
    };
    let (p, _report) = LevenbergMarquardt::new()
        .with_patience(400)
        .minimize(problem);
    p
}

/// Fits the USL to (N, X) points, every sample a point. X must be positive
/// and N at least 1; at least two distinct N and three points are needed.
pub fn fit(points: &[(f64, f64)]) -> Result<Fit> {
    if let Some((n, x)) = points
        .iter()
        .find(|(n, x)| !n.is_finite() || !x.is_finite() || *n < 1.0 || *x <= 0.0)
    {
        return Err(Error::Input(format!(
            "the USL needs N >= 1 and X > 0 at every point; got N = {n}, X = {x}"
        )));
    }
    let mut distinct: Vec<f64> = points.iter().map(|p| p.0).collect();
    distinct.sort_by(f64::total_cmp);
    distinct.dedup();
    if points.len() < 3 || distinct.len() < 2 {
        return Err(Error::Input(format!(
            "the USL needs at least 3 points at 2 or more distinct N; got {} points at {} N",
            points.len(),
            distinct.len()
        )));
    }
    // Fit in units of the largest X so the solver sees numbers near 1.
    let scale = points.iter().map(|p| p.1).fold(0.0, f64::max);
    let ns: Vec<f64> = points.iter().map(|p| p.0).collect();
    let xs: Vec<f64> = points.iter().map(|p| p.1 / scale).collect();
    let guess = start(&ns, &xs);

    let mut best: Option<Problem> = None;
    for free in [vec![0, 1, 2], vec![0, 2], vec![0, 1], vec![0]] {
        if free.len() > points.len() {
            continue;
        }
        for init in [guess, [guess[0], 0.1, 1e-3], [guess[0], 0.01, 1e-5]] {
            let mut init = init;
            for (i, v) in init.iter_mut().enumerate().skip(1) {
                if !free.contains(&i) {
                    *v = 0.0;
                }
            }
            let p = fit_subset(&ns, &xs, init, free.clone());
            let feasible = p.full[1] >= 0.0 && p.full[2] >= 0.0 && p.full[0] > 0.0;
            let rss = p.rss();
            if feasible
                && rss.is_finite()
                && best.as_ref().is_none_or(|b| rss < b.rss() * (1.0 - 1e-9))
            {
                best = Some(p);
            }
        }
    }
    let best =
        best.ok_or_else(|| Error::Failed("the USL fit did not converge on these points".into()))?;
    Ok(finish(best, scale, distinct))
}

/// Standard errors, CIs, peak and warnings for the chosen fit, in X's units.
fn finish(best: Problem, scale: f64, distinct: Vec<f64>) -> Fit {
    let m = best.ns.len();
    let k = best.free.len();
    let df = m.saturating_sub(k);
    let rss = best.rss();
    let cov = (df > 0)
        .then(|| {
            let j = best.jacobian_matrix();
            (j.transpose() * j)
                .try_inverse()
                .map(|inv| inv * (rss / df as f64))
        })
        .flatten();
    let t = t95(df.max(1) as f64);
    // A coefficient held on its bound has no standard error of its own; the
    // full model's at the same point bounds how far above 0 it may be.
    let full_cov = (df > 0 && best.free.len() < 3)
        .then(|| {
            let j = best.jacobian_of(&[0, 1, 2]);
            (j.transpose() * j)
                .try_inverse()
                .map(|inv| inv * (rss / df as f64))
        })
        .flatten();
    let estimate = |i: usize, unit: f64| {
        let value = best.full[i] * unit;
        let pos = best.free.iter().position(|&f| f == i);
        let se = pos
            .zip(cov.as_ref())
            .map(|(p, c)| c[(p, p)].max(0.0).sqrt() * unit);
        let floor = if i == 0 { f64::NEG_INFINITY } else { 0.0 };
        let ci95 = match se {
            Some(s) => Some(((value - t * s).max(floor), value + t * s)),
            None => full_cov
                .as_ref()
                .map(|c| (0.0, t * c[(i, i)].max(0.0).sqrt() * unit)),
        };
        Estimate {
            value,
            se,
            ci95,
            at_bound: pos.is_none(),
        }
    };
    let lambda = estimate(0, scale);
    let sigma = estimate(1, 1.0);
    let kappa = estimate(2, 1.0);
    // Covariance in X's units: λ rows/columns scale with `scale`.
    let cov = cov.map(|mut c| {
        for (a, &fa) in best.free.iter().enumerate() {
            for (b, &fb) in best.free.iter().enumerate() {
                let s = if fa == 0 { scale } else { 1.0 } * if fb == 0 { scale } else { 1.0 };
                c[(a, b)] *= s;
            }
        }
        c
    });
    let params = Params {
        sigma: sigma.value,
        kappa: kappa.value,
        lambda: lambda.value,
    };
    let mut warnings = Vec::new();
    if distinct.len() < 6 {
        warnings.push(format!(
            "only {} distinct N measured: the USL wants 6 or more for trustworthy σ and κ",
            distinct.len()
        ));
    }
    if df == 0 {
        warnings.push("no residual degrees of freedom: no standard errors".into());
    }
    Fit {
        sigma,
        kappa,
        lambda,
        points: m,
        distinct_n: distinct.len(),
        min_n: distinct[0],
        max_n: distinct[distinct.len() - 1],
        residual_se: if df > 0 {
            (best.rss_plain() / df as f64).sqrt() * scale
        } else {
            f64::NAN
        },
        residual_rel: if df > 0 {
            (rss / df as f64).sqrt()
        } else {
            f64::NAN
        },
        df,
        peak: params.peak().map(|n| (n, params.x(n))),
        warnings,
        cov,
        free: best.free,
    }
}

/// Reads plain `N X` pairs (whitespace or comma separated, `#` comments).
/// The largest N a pairs file may give (users, tasks or CPUs).
pub const MAX_N: f64 = 1e6;

pub fn parse_pairs(text: &str) -> Result<Vec<(f64, f64)>> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        let f: Vec<&str> = line
            .split(|c: char| c.is_whitespace() || c == ',')
            .filter(|s| !s.is_empty())
            .collect();
        let num = |s: &str| s.parse::<f64>().ok().filter(|v| v.is_finite());
        match f.as_slice() {
            [n, x] => match (num(n), num(x)) {
                (Some(n), Some(x)) if !(1.0..=MAX_N).contains(&n) || !(0.0..=1e15).contains(&x) => {
                    return Err(Error::Input(format!(
                        "line {}: N {n} X {x} is out of range: N must be 1 to {MAX_N}, X 0 to \
                         1e15",
                        i + 1
                    )));
                }
                (Some(n), Some(x)) => out.push((n, x)),
                _ if out.is_empty() && num(n).is_none() => continue, // a header line
                _ => {
                    return Err(Error::Input(format!(
                        "line {}: '{line}' is not two numbers `N X`",
                        i + 1
                    )));
                }
            },
            _ => {
                return Err(Error::Input(format!(
                    "line {}: '{line}' is not two numbers `N X`",
                    i + 1
                )));
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_data_is_recovered() {
        let p = Params {
            sigma: 0.05,
            kappa: 0.002,
            lambda: 1000.0,
        };
        let pts: Vec<(f64, f64)> = (1..=16).map(|n| (n as f64, p.x(n as f64))).collect();
        let f = fit(&pts).unwrap();
        assert!((f.sigma.value - 0.05).abs() < 1e-6, "{f:?}");
        assert!((f.kappa.value - 0.002).abs() < 1e-8, "{f:?}");
        assert!((f.lambda.value - 1000.0).abs() < 1e-3, "{f:?}");
        let (n, x) = f.peak.unwrap();
        assert!((n - (0.95f64 / 0.002).sqrt()).abs() < 1e-3);
        assert!((x - p.x(n)).abs() < 1e-6 * x);
    }

    #[test]
    fn pairs_parse_with_header_and_comments() {
        let v = parse_pairs("N X\n1 10 # one\n2,19\n\n4\t30\n").unwrap();
        assert_eq!(v, vec![(1.0, 10.0), (2.0, 19.0), (4.0, 30.0)]);
        crate::error::assert_input(parse_pairs("1 2\n3 x\n"));
    }

    #[test]
    fn bad_points_are_refused() {
        crate::error::assert_input(fit(&[(1.0, 1.0), (2.0, 2.0)]));
        crate::error::assert_input(fit(&[(1.0, 1.0), (1.0, 2.0), (1.0, 3.0)]));
        crate::error::assert_input(fit(&[(0.0, 1.0), (1.0, 2.0), (2.0, 3.0)]));
    }
    /// Share of `trials` seeded fits (N = 1..=16, two samples each, 3 %
    /// log-normal noise) whose 95 % intervals cover the true σ and κ.
    fn usl_coverage(truth: Params, trials: usize, seed: u64) -> (f64, f64) {
        let mut rng = crate::stats::rng::SplitMix64::new(seed);
        let (mut s_hit, mut k_hit) = (0, 0);
        for _ in 0..trials {
            let pts: Vec<(f64, f64)> = (1..=16)
                .flat_map(|n| [n, n])
                .map(|n| {
                    let n = n as f64;
                    (n, truth.x(n) * (0.03 * rng.normal()).exp())
                })
                .collect();
            let f = fit(&pts).unwrap();
            let covers = |e: &Estimate, v: f64| e.ci95.is_some_and(|(lo, hi)| lo <= v && v <= hi);
            s_hit += covers(&f.sigma, truth.sigma) as usize;
            k_hit += covers(&f.kappa, truth.kappa) as usize;
            let (lo, _) = f.kappa.ci95.unwrap();
            assert!(lo >= 0.0 && f.sigma.ci95.unwrap().0 >= 0.0, "{f:?}");
        }
        (s_hit as f64 / trials as f64, k_hit as f64 / trials as f64)
    }

    #[test]
    fn intervals_cover_sigma_and_kappa_under_multiplicative_noise() {
        // docs/statistics.md prints this table (run with --nocapture).
        for (sigma, kappa) in [(0.05, 0.002), (0.2, 0.0005), (0.02, 0.0)] {
            let truth = Params {
                sigma,
                kappa,
                lambda: 1000.0,
            };
            let (cs, ck) = usl_coverage(truth, 200, 17);
            println!("sigma={sigma} kappa={kappa}: sigma {cs:.3} kappa {ck:.3}");
            assert!(
                cs >= 0.9 && ck >= 0.9,
                "sigma={sigma} kappa={kappa}: {cs} {ck}"
            );
        }
    }
}
