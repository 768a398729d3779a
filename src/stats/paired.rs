//! The ratio of two sides sampled in the same rounds. Knob variants are
//! sampled A B A B, so sample i of A and sample i of B were taken seconds
//! apart and share whatever the host was doing; kernels booted in turn
//! (A B, B A over rounds) share a round the same way. The log of each
//! round's ratio cancels slow drifts; their mean and its t interval give
//! the ratio (a geometric mean of the rounds' ratios) and its CI, and a
//! paired t-test its p-value.

use serde::Serialize;
use statrs::distribution::{ContinuousCDF, StudentsT};

use super::summary::{mean, stddev, t95};

/// Which samples of two sides were taken together.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Pairing {
    /// Not paired: the sides were sampled apart (runs, files).
    None,
    /// Knob variants of one run: a round is a sample number (`seq`).
    Seq,
    /// Guest runs of one session, whose samples carry their boot's round
    /// (`model::GUEST_ROUND`).
    Round,
}

/// The paired estimate of new / base.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct PairedRatio {
    pub ratio: f64,
    pub ci95: (f64, f64),
    /// Rounds used (rounds where both sides have a positive value).
    pub pairs: usize,
    /// Two-sided p-value of the paired t-test of ratio = 1 (on the logs).
    pub p: f64,
}

/// Pairs `base` and `new` by round (the `i64` tags: sample sequence
/// numbers, or rounds) and estimates new / base; `None` with fewer than
/// two rounds both sides have. A side with several values in a round
/// enters it with their geometric mean. Values that are not positive and
/// finite are left out. O(n log n).
pub fn ratio(base: &[(i64, f64)], new: &[(i64, f64)]) -> Option<PairedRatio> {
    let d = round_log_ratios(base, new);
    let n = d.len();
    if n < 2 {
        return None;
    }
    let m = mean(&d);
    let se = stddev(&d) / (n as f64).sqrt();
    let df = (n - 1) as f64;
    let h = t95(df) * se;
    let p = if se > 0.0 {
        StudentsT::new(0.0, 1.0, df)
            .map(|t| (2.0 * t.cdf(-(m / se).abs())).clamp(0.0, 1.0))
            .unwrap_or(f64::NAN)
    } else if m == 0.0 {
        1.0
    } else {
        0.0
    };
    Some(PairedRatio {
        ratio: m.exp(),
        ci95: ((m - h).exp(), (m + h).exp()),
        pairs: n,
        p,
    })
}

/// Each round's mean log, by round.
fn round_logs(v: &[(i64, f64)]) -> Vec<(i64, f64)> {
    let mut logs: Vec<(i64, f64)> = v
        .iter()
        .filter(|(_, x)| *x > 0.0 && x.is_finite())
        .map(|&(r, x)| (r, x.ln()))
        .collect();
    logs.sort_by_key(|&(r, _)| r);
    super::work::sort(logs.len());
    let mut out: Vec<(i64, f64)> = Vec::new();
    let mut i = 0;
    while i < logs.len() {
        let r = logs[i].0;
        let j = i + logs[i..].iter().take_while(|(q, _)| *q == r).count();
        let values: Vec<f64> = logs[i..j].iter().map(|&(_, l)| l).collect();
        out.push((r, mean(&values)));
        i = j;
    }
    out
}

/// ln(new / base) of every round both sides have, in round order.
pub(crate) fn round_log_ratios(base: &[(i64, f64)], new: &[(i64, f64)]) -> Vec<f64> {
    let (b, n) = (round_logs(base), round_logs(new));
    let mut d = Vec::with_capacity(b.len().min(n.len()));
    let mut j = 0;
    for &(r, lb) in &b {
        while j < n.len() && n[j].0 < r {
            j += 1;
        }
        if let Some(&(q, ln)) = n.get(j)
            && q == r
        {
            d.push(ln - lb);
        }
    }
    d
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::rng::SplitMix64;
    use crate::stats::significance::log_t_ratio_ci;

    type Rounds = Vec<(i64, f64)>;

    /// n rounds under a host drift of +/-`drift` (a slow sine) and
    /// log-normal noise `cv`; B is 1.02 x A.
    fn rounds(rng: &mut SplitMix64, n: usize, drift: f64, cv: f64) -> (Rounds, Rounds) {
        let mut a = Vec::new();
        let mut b = Vec::new();
        for i in 0..n {
            let host = 1.0 + drift * (i as f64 / 3.0).sin();
            a.push((i as i64, 1000.0 * host * (cv * rng.normal()).exp()));
            b.push((i as i64, 1020.0 * host * (cv * rng.normal()).exp()));
        }
        (a, b)
    }

    #[test]
    fn paired_interval_covers_and_beats_the_unpaired_one_under_drift() {
        let mut rng = SplitMix64::new(99);
        for n in [3usize, 5, 10] {
            let trials = 2000;
            let (mut hit, mut narrower) = (0, 0);
            for _ in 0..trials {
                let (a, b) = rounds(&mut rng, n, 0.2, 0.01);
                let p = ratio(&a, &b).unwrap();
                hit += (p.ci95.0 <= 1.02 && 1.02 <= p.ci95.1) as usize;
                let va: Vec<f64> = a.iter().map(|x| x.1).collect();
                let vb: Vec<f64> = b.iter().map(|x| x.1).collect();
                let u = log_t_ratio_ci(&va, &vb, false).unwrap();
                narrower += (p.ci95.1 / p.ci95.0 < u.1 / u.0) as usize;
            }
            let cov = hit as f64 / trials as f64;
            println!("paired n={n}: coverage {cov:.3}, narrower {narrower} of {trials}");
            // The p-value says what the interval says.
            let (a, b) = rounds(&mut rng, n, 0.2, 0.01);
            let p = ratio(&a, &b).unwrap();
            assert_eq!(p.p < 0.05, p.ci95.0 > 1.0 || p.ci95.1 < 1.0, "{p:?}");
            assert!(cov >= 0.93, "n={n}: {cov}");
            assert!(narrower > trials * 9 / 10, "n={n}: {narrower}");
        }
    }

    #[test]
    fn rounds_are_matched_by_tag_and_gaps_skipped() {
        let a = [(0, 100.0), (1, 200.0), (2, 0.0), (3, 100.0)];
        let b = [(1, 220.0), (0, 110.0), (2, 5.0)];
        let p = ratio(&a, &b).unwrap();
        assert_eq!(p.pairs, 2);
        assert!((p.ratio - 1.1).abs() < 1e-12 && (p.ci95.0 - 1.1).abs() < 1e-12);
        assert!(ratio(&a[..1], &b).is_none());
        // Several samples a round (a kernel's run per boot): each round
        // enters with its geometric mean, so 2 x 1.1 and 1.1 x 1.1 rounds
        // give the same ratio as one sample each.
        let a = [(0, 100.0), (0, 400.0), (1, 100.0)];
        let b = [(0, 110.0), (0, 440.0), (1, 121.0), (1, 100.0)];
        let p = ratio(&a, &b).unwrap();
        assert_eq!(p.pairs, 2);
        assert!((p.ratio - 1.1).abs() < 1e-12, "{p:?}");
    }
}
