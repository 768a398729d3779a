//! The ratio of two interleaved variants from neighbouring pairs: knob
//! variants are sampled A B A B, so sample i of A and sample i of B were
//! taken seconds apart and share whatever the host was doing then. The
//! log of each pair's ratio cancels slow drifts; their mean and its t
//! interval give the ratio (a geometric mean of pair ratios) and its CI.

use serde::Serialize;

use super::summary::{mean, stddev, t95};
use crate::model::CaseSamples;

/// The noise key holding the round of the boot a guest run's sample was
/// taken in (`vmscale guest --rounds`): kernels boot in turn A B A B, so
/// a round is the pairing unit between them.
pub const GUEST_ROUND: &str = "guest_round";

/// The paired estimate of new / base.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct PairedRatio {
    pub ratio: f64,
    pub ci95: (f64, f64),
    /// Pairs used (rounds where both sides have a positive value).
    pub pairs: usize,
}

/// Pairs `base` and `new` by round (the `i64` tags, e.g. sample sequence
/// numbers) and estimates new / base; `None` with fewer than two pairs.
/// Values that are not positive and finite are left out with their pair.
pub fn ratio(base: &[(i64, f64)], new: &[(i64, f64)]) -> Option<PairedRatio> {
    let ok = |v: f64| v > 0.0 && v.is_finite();
    let d: Vec<f64> = base
        .iter()
        .filter(|(_, a)| ok(*a))
        .filter_map(|(round, a)| {
            new.iter()
                .find(|(r, b)| r == round && ok(*b))
                .map(|(_, b)| (b / a).ln())
        })
        .collect();
    let n = d.len();
    if n < 2 {
        return None;
    }
    let m = mean(&d);
    let h = t95((n - 1) as f64) * stddev(&d) / (n as f64).sqrt();
    Some(PairedRatio {
        ratio: m.exp(),
        ci95: ((m - h).exp(), (m + h).exp()),
        pairs: n,
    })
}

/// Each guest round's geometric mean of `figure` in `c`, tagged with the
/// round; empty when the samples carry no round or a value is not
/// positive and finite (a figure at its clock's resolution, such as CPU
/// time in ticks, has zeros: it is not compared on logs).
pub fn round_means(c: &CaseSamples, figure: &str) -> Vec<(i64, f64)> {
    let mut logs: Vec<(i64, Vec<f64>)> = Vec::new();
    for s in c.measured() {
        let (Some(r), Some(v)) = (s.noise.get(GUEST_ROUND), s.data.figures.get(figure)) else {
            continue;
        };
        if !(*v > 0.0 && v.is_finite()) {
            return Vec::new();
        }
        let r = *r as i64;
        match logs.iter_mut().find(|(x, _)| *x == r) {
            Some((_, l)) => l.push(v.ln()),
            None => logs.push((r, vec![v.ln()])),
        }
    }
    logs.into_iter().map(|(r, l)| (r, mean(&l).exp())).collect()
}

/// `new` / `base` paired by guest round: the ratio of each round's
/// geometric means, their geometric mean and its t interval. `None` with
/// fewer than two rounds on both sides.
pub fn by_round(base: &CaseSamples, new: &CaseSamples, figure: &str) -> Option<PairedRatio> {
    ratio(&round_means(base, figure), &round_means(new, figure))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::compare::{SplitMix64, log_t_ratio_ci};

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
            assert!(cov >= 0.93, "n={n}: {cov}");
            assert!(narrower > trials * 9 / 10, "n={n}: {narrower}");
        }
    }

    #[test]
    fn guest_rounds_pair_on_their_geometric_means() {
        use crate::model::{Case, Sample, SampleData};
        let case = |vals: &[(u32, f64)]| CaseSamples {
            case: Case::new(1, "fault"),
            samples: vals
                .iter()
                .enumerate()
                .map(|(i, (r, v))| Sample {
                    seq: i as i64,
                    warmup: false,
                    taken_at: String::new(),
                    data: SampleData {
                        figures: [("x".to_string(), *v)].into(),
                        tasks: Vec::new(),
                    },
                    vmstat: Default::default(),
                    noise: [(GUEST_ROUND.to_string(), f64::from(*r))].into(),
                    flagged: false,
                })
                .collect(),
        };
        let a = case(&[(1, 100.0), (1, 400.0), (2, 100.0), (2, 100.0)]);
        let b = case(&[(1, 400.0), (1, 400.0), (2, 200.0), (2, 200.0)]);
        let m = round_means(&a, "x");
        assert_eq!(m.iter().map(|x| x.0).collect::<Vec<_>>(), vec![1, 2]);
        assert!(
            (m[0].1 - 200.0).abs() < 1e-9 && (m[1].1 - 100.0).abs() < 1e-9,
            "{m:?}"
        );
        let p = by_round(&a, &b, "x").unwrap();
        assert_eq!(p.pairs, 2);
        assert!((p.ratio - 2.0).abs() < 1e-9, "{p:?}");
        assert!(by_round(&a, &case(&[(1, 1.0)]), "x").is_none());
        // A zero anywhere: no pairing on logs.
        assert!(by_round(&a, &case(&[(1, 1.0), (1, 0.0), (2, 1.0)]), "x").is_none());
    }

    #[test]
    fn the_round_paired_interval_covers_1_for_the_same_kernel_twice() {
        use crate::model::{Case, Sample, SampleData};
        // A/A: every boot has its own level (between-boot sd 10 %, a slow
        // host drift over the rounds), 3 samples around it (5 %).
        let mut rng = SplitMix64::new(2026);
        let case = |vals: Vec<(u32, f64)>| CaseSamples {
            case: Case::new(1, "fault"),
            samples: vals
                .into_iter()
                .map(|(r, v)| Sample {
                    seq: 0,
                    warmup: false,
                    taken_at: String::new(),
                    data: SampleData {
                        figures: [("x".to_string(), v)].into(),
                        tasks: Vec::new(),
                    },
                    vmstat: Default::default(),
                    noise: [(GUEST_ROUND.to_string(), f64::from(r))].into(),
                    flagged: false,
                })
                .collect(),
        };
        for rounds in [2u32, 3, 5] {
            let trials = 2000;
            let mut hit = 0;
            for _ in 0..trials {
                let mut boot = |r: u32| -> Vec<(u32, f64)> {
                    let level = 1000.0
                        * (1.0 + 0.3 * (f64::from(r) / 2.0).sin())
                        * (0.1 * rng.normal()).exp();
                    (0..3)
                        .map(|_| (r, level * (0.05 * rng.normal()).exp()))
                        .collect()
                };
                let (mut a, mut b) = (Vec::new(), Vec::new());
                for r in 1..=rounds {
                    a.extend(boot(r));
                    b.extend(boot(r));
                }
                let p = by_round(&case(a), &case(b), "x").unwrap();
                hit += (p.ci95.0 <= 1.0 && 1.0 <= p.ci95.1) as usize;
            }
            let cov = hit as f64 / trials as f64;
            println!("round-paired A/A, {rounds} rounds: coverage {cov:.3}");
            assert!(cov >= 0.93, "{rounds} rounds: {cov}");
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
    }
}
