//! The USL fit recovers σ, κ and λ from noisy synthetic data (seeded), and
//! lands on the σ = 0 or κ = 0 bound when the data lean past it.
//!
//! Tolerance: each estimate lies within 3 standard errors of the truth, and
//! within an absolute band (σ ± 0.02, κ ± 0.0005, λ ± 3 %), with 2 %
//! multiplicative Gaussian noise, 5 samples at each N in 1..=24.

use vmscale::stats::usl::{self, Params};

/// splitmix64: a small seeded generator, so the test needs no crate.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> f64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        ((z ^ (z >> 31)) >> 11) as f64 / (1u64 << 53) as f64
    }

    /// Standard normal by Box-Muller.
    fn normal(&mut self) -> f64 {
        let u = self.next().max(1e-12);
        let v = self.next();
        (-2.0 * u.ln()).sqrt() * (2.0 * std::f64::consts::PI * v).cos()
    }
}

fn synthetic(p: Params, noise: f64, seed: u64) -> Vec<(f64, f64)> {
    let mut rng = Rng(seed);
    let mut pts = Vec::new();
    for n in 1..=24 {
        for _ in 0..5 {
            let n = n as f64;
            pts.push((n, p.x(n) * (1.0 + noise * rng.normal())));
        }
    }
    pts
}

fn close(name: &str, est: &usl::Estimate, truth: f64, band: f64) {
    let se = est.se.expect("standard error");
    let err = (est.value - truth).abs();
    assert!(
        err <= 3.0 * se && err <= band,
        "{name}: estimate {} truth {truth} se {se} band {band}",
        est.value
    );
}

#[test]
fn recovers_parameters_from_noisy_data() {
    let cases = [
        (0.05, 0.001),
        (0.10, 0.0002),
        (0.02, 0.003),
        (0.30, 0.0005),
        (0.01, 0.0001),
    ];
    for (i, &(sigma, kappa)) in cases.iter().enumerate() {
        let truth = Params {
            sigma,
            kappa,
            lambda: 50_000.0,
        };
        let f = usl::fit(&synthetic(truth, 0.02, 1000 + i as u64)).unwrap();
        close("sigma", &f.sigma, sigma, 0.02);
        close("kappa", &f.kappa, kappa, 0.0005);
        close("lambda", &f.lambda, 50_000.0, 1500.0);
        assert!(!f.sigma.at_bound && !f.kappa.at_bound, "{f:?}");
        assert_eq!(f.distinct_n, 24);
        assert!(f.warnings.is_empty(), "{:?}", f.warnings);
        let (lo, hi) = f.sigma.ci95.unwrap();
        assert!(lo < f.sigma.value && f.sigma.value < hi);
    }
}

#[test]
fn superlinear_data_land_on_sigma_zero() {
    // σ < 0 is superlinear speed-up; the constrained fit must stop at σ = 0.
    let truth = Params {
        sigma: -0.01,
        kappa: 0.002,
        lambda: 1000.0,
    };
    let f = usl::fit(&synthetic(truth, 0.005, 7)).unwrap();
    assert!(f.sigma.at_bound, "{f:?}");
    assert_eq!(f.sigma.value, 0.0);
    assert!(f.sigma.se.is_none());
    assert!(f.kappa.value >= 0.0 && !f.kappa.at_bound, "{f:?}");
}

#[test]
fn no_coherency_cost_lands_on_kappa_zero() {
    // κ < 0 bends the curve upward; the fit must hold κ at 0 and report no peak.
    let truth = Params {
        sigma: 0.2,
        kappa: -0.001,
        lambda: 1000.0,
    };
    let f = usl::fit(&synthetic(truth, 0.005, 11)).unwrap();
    assert!(f.kappa.at_bound, "{f:?}");
    assert_eq!(f.kappa.value, 0.0);
    assert!(f.peak.is_none());
    assert!(f.sigma.value > 0.0 && !f.sigma.at_bound, "{f:?}");
}

#[test]
fn linear_data_land_on_both_bounds() {
    let pts: Vec<(f64, f64)> = (1..=8)
        .flat_map(|n| {
            [
                (n as f64, 100.0 * n as f64 * 1.01),
                (n as f64, 100.0 * n as f64 * 0.99),
            ]
        })
        .map(|(n, x)| (n, x * (1.0 + 0.02 * (n - 1.0) / 7.0)))
        .collect();
    let f = usl::fit(&pts).unwrap();
    assert!(f.sigma.at_bound && f.kappa.at_bound, "{f:?}");
    assert!((f.lambda.value - 101.0).abs() < 2.0, "{f:?}");
}

#[test]
fn warns_on_few_n_and_on_extrapolation() {
    let truth = Params {
        sigma: 0.05,
        kappa: 0.001,
        lambda: 1000.0,
    };
    let pts: Vec<(f64, f64)> = synthetic(truth, 0.01, 3)
        .into_iter()
        .filter(|(n, _)| *n <= 4.0)
        .collect();
    let f = usl::fit(&pts).unwrap();
    assert!(
        f.warnings.iter().any(|w| w.contains("4 distinct N")),
        "{:?}",
        f.warnings
    );
    let (rows, warnings) = f.extrapolate(&[2.0, 64.0]);
    assert!(!rows[0].beyond_data && rows[1].beyond_data);
    assert_eq!(warnings.len(), 1);
    assert!(warnings[0].contains("64"));
    let (lo, hi) = rows[1].ci95.unwrap();
    assert!(lo <= rows[1].x && rows[1].x <= hi);
}
