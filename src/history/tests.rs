//! Seeded simulation of histories: series of 20-200 runs of 3-30 samples
//! each under log-normal noise of the size this machine shows (1-10 % per
//! sample, up to 3 % between runs), with no step, one or three steps of
//! 2-20 %. Steps of at least three times the per-run noise must be found
//! within one run; series without a step must rarely show one.

use super::*;
use crate::model::Better;
use crate::stats::rng::SplitMix64;

struct Sim {
    points: Vec<Point>,
    /// (index of the first run after, log size) of each step.
    steps: Vec<(usize, f64)>,
    /// Standard deviation of a run's log median.
    run_noise: f64,
    /// Each run's true level (log).
    levels: Vec<f64>,
}

fn uniform(rng: &mut SplitMix64, lo: f64, hi: f64) -> f64 {
    lo + (hi - lo) * (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64
}

fn simulate(seed: u64, steps: usize) -> Sim {
    let mut rng = SplitMix64::new(seed);
    let runs = 20 + rng.below(181);
    let k = 3 + rng.below(28);
    let sample_sd = uniform(&mut rng, 0.01, 0.10);
    let run_sd = uniform(&mut rng, 0.0, 0.03);
    // Steps at least 5 runs from each other and from the ends.
    let mut at: Vec<usize> = loop {
        let mut at: Vec<usize> = (0..steps).map(|_| 5 + rng.below(runs - 9)).collect();
        at.sort();
        if at.windows(2).all(|w| w[1] - w[0] >= 5) {
            break at;
        }
    };
    at.sort();
    let sizes: Vec<f64> = at
        .iter()
        .map(|_| {
            let s = uniform(&mut rng, 0.02, 0.20);
            if rng.below(2) == 0 {
                (1.0 + s).ln()
            } else {
                -(1.0 + s).ln()
            }
        })
        .collect();
    let levels: Vec<f64> = (0..runs)
        .map(|i| {
            at.iter()
                .zip(&sizes)
                .filter(|(a, _)| i >= **a)
                .map(|(_, s)| s)
                .sum()
        })
        .collect();
    let points = levels
        .iter()
        .enumerate()
        .map(|(i, level)| {
            let run = level + run_sd * rng.normal();
            Point {
                run: RunRef {
                    id: i as i64 + 1,
                    ..RunRef::default()
                },
                started_at: String::new(),
                values: (0..k)
                    .map(|_| 100.0 * (run + sample_sd * rng.normal()).exp())
                    .collect(),
            }
        })
        .collect();
    // The median of k log-normal samples: sd about 1.25 sd / sqrt(k).
    let median_sd = sample_sd * (std::f64::consts::PI / 2.0 / k as f64).sqrt();
    Sim {
        points,
        steps: at.into_iter().zip(sizes).collect(),
        run_noise: (run_sd.powi(2) + median_sd.powi(2)).sqrt(),
        levels,
    }
}

fn figure() -> Figure {
    Figure::new("rate", "1/s", Better::Higher, true)
}

#[test]
fn series_without_a_step_are_rarely_flagged() {
    let series = 300;
    let flagged = (0..series)
        .filter(|&s| {
            let sim = simulate(1000 + s, 0);
            !analyse(&sim.points, &figure(), &Options::default())
                .change_points
                .is_empty()
        })
        .count();
    eprintln!("no-step series flagged: {flagged} of {series}");
    assert!(
        flagged as f64 <= 0.05 * series as f64,
        "{flagged} of {series} series without a step show one"
    );
}

#[test]
fn steps_of_three_times_the_noise_are_found_within_one_run() {
    let (mut qualifying, mut found, mut covered, mut measured) = (0, 0, 0, 0);
    for s in 0..300u64 {
        let sim = simulate(2000 + s, if s % 2 == 0 { 1 } else { 3 });
        let a = analyse(&sim.points, &figure(), &Options::default());
        for &(at, size) in &sim.steps {
            if size.abs() < 3.0 * sim.run_noise {
                continue;
            }
            qualifying += 1;
            let hit = a.change_points.iter().find(|c| c.index.abs_diff(at) <= 1);
            if let Some(c) = hit {
                found += 1;
                // The truth the interval estimates: the ratio of the
                // segments' true centres (the step, unless a small step
                // went unseen inside a segment).
                if c.index == at
                    && let Some([lo, hi]) = c.ci
                {
                    let mean = |r: std::ops::Range<usize>| {
                        sim.levels[r.clone()].iter().sum::<f64>() / r.len() as f64
                    };
                    let truth = (mean(at..at + c.runs_after) - mean(at - c.runs_before..at)).exp();
                    measured += 1;
                    covered += usize::from(lo <= truth && truth <= hi);
                }
            }
        }
    }
    eprintln!(
        "steps >= 3x noise found within 1 run: {found} of {qualifying}; \
         intervals of steps found in place covering: {covered} of {measured}"
    );
    assert!(qualifying >= 150, "only {qualifying} steps qualify");
    assert!(
        found as f64 >= 0.9 * qualifying as f64,
        "found {found} of {qualifying} steps"
    );
    // The interval of a step found in place covers its true size.
    assert!(
        covered as f64 >= 0.93 * measured as f64,
        "covered {covered} of {measured}"
    );
}

/// A fault count as steady as `run cmd`'s (about 525 faults, ±2 from run
/// to run) with a step of 3 faults after run 12 and of 128 after run 24.
fn steady_counts() -> Vec<Point> {
    let mut rng = SplitMix64::new(7);
    (0..36)
        .map(|i| {
            let level = 525.0 + if i >= 12 { 3.0 } else { 0.0 } + if i >= 24 { 128.0 } else { 0.0 };
            Point {
                run: RunRef {
                    id: i as i64 + 1,
                    ..RunRef::default()
                },
                started_at: String::new(),
                values: (0..3).map(|_| level + rng.below(5) as f64 - 2.0).collect(),
            }
        })
        .collect()
}

#[test]
fn a_smallest_step_keeps_out_a_significant_step_of_a_few_faults_only() {
    let points = steady_counts();
    let lower = Figure::new("minflt", "faults", Better::Lower, true);
    let at = |a: &Analysis| a.change_points.iter().map(|c| c.index).collect::<Vec<_>>();
    let every = analyse(&points, &lower, &Options::default());
    assert_eq!(at(&every), [12, 24], "{:?}", every.change_points);
    let floor = Options {
        min_step: 0.05,
        ..Options::default()
    };
    let big = analyse(&points, &lower, &floor);
    assert_eq!(at(&big), [24], "{:?}", big.change_points);
    let c = &big.change_points[0];
    // The step is measured against the runs since the start, not only
    // those after the small one.
    assert_eq!(c.runs_before, 24);
    assert!((c.change - 656.0 / 526.5).abs() < 0.01, "{}", c.change);
}
