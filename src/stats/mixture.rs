//! Samples that fall into groups: a detector for two clearly separated
//! groups (a gap between neighbouring sorted values far wider than the
//! spread inside each group), and what else differed between the groups.
//! Why this test and these thresholds: docs/statistics.md, "Mixtures".

use serde::Serialize;

use super::significance::welch_p;
use super::summary::median;
use super::work;

/// Fewest values the detector looks at.
pub const MIN_N: usize = 8;

/// The least gap between the groups, in pooled within-group standard
/// deviations, for `n` values: 24 / n, at least 1.
fn gap_min(n: usize) -> f64 {
    (24.0 / n as f64).max(1.0)
}

/// The least distance between the group means, in the same unit: 3.5 +
/// 56 / n, at least 5 (the best split of unimodal data reaches about 3
/// at large n and much more at small n by chance).
fn separation_min(n: usize) -> f64 {
    (3.5 + 56.0 / n as f64).max(5.0)
}

/// One group of samples.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Group {
    /// Positions of the group's values in the input, ascending.
    pub indices: Vec<usize>,
    pub median: f64,
    pub min: f64,
    pub max: f64,
}

/// Two groups, the lower values first.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Mixture {
    pub groups: [Group; 2],
    /// Gap between the groups / pooled within-group sd (on the scale
    /// where it is smaller: plain values, or logs for positive data).
    pub gap: f64,
    /// Distance of the group means / pooled within-group sd (same scale).
    pub separation: f64,
}

/// Running mean and sum of squared deviations (Welford) of a group of
/// values, one value added at a time.
#[derive(Clone, Copy, Default)]
struct Running {
    n: f64,
    mean: f64,
    m2: f64,
}

impl Running {
    fn add(&mut self, v: f64) {
        self.n += 1.0;
        let d = v - self.mean;
        self.mean += d / self.n;
        self.m2 += d * (v - self.mean);
    }
}

/// The best split of sorted `y`: (size of the lower group, gap,
/// separation). The lower group's moments are carried forward one value at
/// a time; the upper group's come from a backward pass, kept at the end of
/// every block of about sqrt(n) splits and recomputed a block at a time
/// from there (the same numbers as keeping them all, in O(sqrt n) memory
/// instead of 16 bytes a value). O(n).
fn best_split(y: &[f64]) -> Option<(usize, f64, f64)> {
    let n = y.len();
    let m0 = 3usize.max(n.div_ceil(10));
    let last = n.saturating_sub(m0);
    if m0 > last {
        return None;
    }
    work::pass(4 * n);
    let block = (n as f64).sqrt() as usize + 1;
    let blocks = n.div_ceil(block);
    // after[b]: the moments of the values after block b.
    let mut after = vec![Running::default(); blocks];
    let mut acc = Running::default();
    for b in (0..blocks).rev() {
        after[b] = acc;
        for i in (b * block..((b + 1) * block).min(n)).rev() {
            acc.add(y[i]);
        }
    }
    let mut upper = vec![Running::default(); block];
    let mut lower = Running::default();
    for &v in &y[..m0 - 1] {
        lower.add(v);
    }
    let mut best: Option<(usize, f64, f64)> = None;
    let mut filled = usize::MAX;
    for k in m0..=last {
        let b = k / block;
        if filled != b {
            // The upper moments of every split in block b.
            let (start, mut acc) = (b * block, after[b]);
            let end = (start + block).min(n);
            for i in (start..end).rev() {
                acc.add(y[i]);
                upper[i - start] = acc;
            }
            filled = b;
        }
        lower.add(y[k - 1]);
        let r = upper[k - b * block];
        let sd = ((lower.m2 + r.m2) / (n - 2) as f64).sqrt();
        keep_wider(&mut best, k, y[k] - y[k - 1], r.mean - lower.mean, sd);
    }
    best
}

/// Scores the split at `k` (its gap and the means' distance, in pooled
/// SDs; infinite where the SD is 0 and the gap is not) and keeps it in
/// `best` if its gap is the widest yet.
fn keep_wider(best: &mut Option<(usize, f64, f64)>, k: usize, gap: f64, means: f64, sd: f64) {
    let (g, d) = if sd > 0.0 {
        (gap / sd, means / sd)
    } else if gap > 0.0 {
        (f64::INFINITY, f64::INFINITY)
    } else {
        (0.0, 0.0)
    };
    if best.is_none_or(|b| g > b.1) {
        *best = Some((k, g, d));
    }
}

/// Two groups in `values`, when there clearly are two: on plain values and
/// (for positive data) on their logarithms alike, the widest gap must
/// exceed `gap_min(n)` and the group means lie `separation_min(n)` pooled
/// within-group standard deviations apart, each group holding at least 3
/// values and a tenth of them. `None` otherwise, and for fewer than
/// `MIN_N` values or any non-finite value. O(n log n): one sort.
pub fn detect(values: &[f64]) -> Option<Mixture> {
    if values.len() < MIN_N || values.iter().any(|v| !v.is_finite()) {
        return None;
    }
    detect_sorted(values, &sorted(values))
}

/// A sorted copy of `values` (by `f64::total_cmp`).
pub fn sorted(values: &[f64]) -> Vec<f64> {
    let mut v = values.to_vec();
    v.sort_unstable_by(f64::total_cmp);
    work::sort(v.len());
    v
}

/// `detect` for values whose sorted copy (`sorted(values)`) is at hand.
pub fn detect_sorted(values: &[f64], sorted: &[f64]) -> Option<Mixture> {
    let n = values.len();
    if n < MIN_N || n != sorted.len() || !(sorted[0].is_finite() && sorted[n - 1].is_finite()) {
        return None;
    }
    let (k, mut gap, mut separation) = best_split(sorted)?;
    // The logs can only lower both measures: look at them only when the
    // plain values pass.
    let passes = |gap: f64, separation: f64| gap >= gap_min(n) && separation >= separation_min(n);
    if !passes(gap, separation) {
        return None;
    }
    if sorted[0] > 0.0 {
        let logs: Vec<f64> = sorted.iter().map(|v| v.ln()).collect();
        let (kl, gl, dl) = best_split(&logs)?;
        if kl != k {
            // The two scales disagree on where the groups part.
            return None;
        }
        gap = gap.min(gl);
        separation = separation.min(dl);
        if !passes(gap, separation) {
            return None;
        }
    }
    // The gap is positive, so the lower group is every value below the
    // upper group's least.
    let cut = sorted[k];
    let group = |lower: bool| {
        let indices: Vec<usize> = (0..n)
            .filter(|&i| values[i].total_cmp(&cut).is_lt() == lower)
            .collect();
        let v: Vec<f64> = indices.iter().map(|&i| values[i]).collect();
        Group {
            median: median(&v),
            min: v.iter().copied().fold(f64::INFINITY, f64::min),
            max: v.iter().copied().fold(f64::NEG_INFINITY, f64::max),
            indices,
        }
    };
    Some(Mixture {
        groups: [group(true), group(false)],
        gap,
        separation,
    })
}

/// Another measured quantity whose group medians differ.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Difference {
    pub name: String,
    /// Median in the lower and in the upper group.
    pub low: f64,
    pub high: f64,
}

/// Of the named per-sample series (each as long as the values `m` was
/// found in; NaN where a sample lacks it), the `limit` whose group medians
/// differ most in ratio: at least by 10 %, and by more than chance (Welch's
/// test between the groups' values, p < 0.01), largest first.
pub fn differences(m: &Mixture, series: &[(String, Vec<f64>)], limit: usize) -> Vec<Difference> {
    let pick = |g: &Group, v: &[f64]| -> Vec<f64> {
        g.indices
            .iter()
            .filter_map(|&i| v.get(i).copied())
            .filter(|x| x.is_finite())
            .collect()
    };
    let mut out: Vec<(f64, Difference)> = series
        .iter()
        .filter_map(|(name, v)| {
            let (lo, hi) = (pick(&m.groups[0], v), pick(&m.groups[1], v));
            if lo.is_empty() || hi.is_empty() || welch_p(&lo, &hi).is_none_or(|p| p >= 0.01) {
                return None;
            }
            let (low, high) = (median(&lo), median(&hi));
            let (a, b) = (low.abs().min(high.abs()), low.abs().max(high.abs()));
            let score = if a > 0.0 {
                b / a
            } else if b > 0.0 {
                f64::INFINITY
            } else {
                1.0
            };
            (score >= 1.1).then(|| {
                (
                    score,
                    Difference {
                        name: name.clone(),
                        low,
                        high,
                    },
                )
            })
        })
        .collect();
    out.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| a.1.name.cmp(&b.1.name)));
    out.into_iter().take(limit).map(|(_, d)| d).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::rng::SplitMix64;

    fn unimodal(rng: &mut SplitMix64, n: usize, cv: f64, lognormal: bool) -> Vec<f64> {
        (0..n)
            .map(|_| {
                let z = rng.normal();
                if lognormal {
                    1000.0 * (cv * z).exp()
                } else {
                    1000.0 * (1.0 + cv * z)
                }
            })
            .collect()
    }

    /// The split search as it was first written: every split's moments
    /// summed afresh, O(n^2). The reference the one-pass search must equal.
    fn best_split_reference(y: &[f64]) -> Option<(usize, f64, f64)> {
        let n = y.len();
        let m0 = 3usize.max(n.div_ceil(10));
        let mut best: Option<(usize, f64, f64)> = None;
        for k in m0..=n.saturating_sub(m0) {
            let (l, r) = y.split_at(k);
            let (ml, mr) = (
                crate::stats::summary::mean(l),
                crate::stats::summary::mean(r),
            );
            let ss: f64 = l.iter().map(|v| (v - ml).powi(2)).sum::<f64>()
                + r.iter().map(|v| (v - mr).powi(2)).sum::<f64>();
            let sd = (ss / (n - 2) as f64).sqrt();
            keep_wider(&mut best, k, y[k] - y[k - 1], mr - ml, sd);
        }
        best
    }

    #[test]
    fn the_one_pass_split_search_equals_the_quadratic_one() {
        // Unimodal, two groups, ties and a constant run; n from 8 to 600.
        let mut rng = SplitMix64::new(41);
        let close = |a: f64, b: f64| a == b || (a - b).abs() <= 1e-9 * a.abs().max(b.abs());
        for trial in 0..400 {
            let n = 8 + trial * 3 % 600;
            let mut v: Vec<f64> = match trial % 4 {
                0 => unimodal(&mut rng, n, 0.05, true),
                1 => (0..n)
                    .map(|i| if i % 3 == 0 { 300.0 } else { 600.0 } * (1.0 + 0.02 * rng.normal()))
                    .collect(),
                2 => (0..n).map(|_| (rng.below(5) as f64) * 1e6).collect(),
                _ => (0..n)
                    .map(|i| if i < n / 2 { 7.0 } else { 7.0 + rng.normal() })
                    .collect(),
            };
            v.sort_by(f64::total_cmp);
            let (fast, slow) = (best_split(&v), best_split_reference(&v));
            let (Some(f), Some(s)) = (fast, slow) else {
                assert_eq!(fast, slow);
                continue;
            };
            assert_eq!(f.0, s.0, "trial {trial}: split {f:?} vs {s:?}");
            assert!(
                close(f.1, s.1) && close(f.2, s.2),
                "trial {trial}: {f:?} vs {s:?}"
            );
        }
    }

    #[test]
    fn unimodal_data_rarely_looks_like_a_mixture() {
        // 4 sizes x 2 spreads x 2 shapes x 250 draws = 4000 tries; each
        // false alarm would make a case stop early or a table say "mixture".
        let mut rng = SplitMix64::new(11);
        let mut alarms = 0;
        let mut tries = 0;
        for n in [8usize, 12, 30, 100] {
            for cv in [0.02, 0.25] {
                for lognormal in [false, true] {
                    for _ in 0..250 {
                        tries += 1;
                        alarms += detect(&unimodal(&mut rng, n, cv, lognormal)).is_some() as usize;
                    }
                }
            }
        }
        // At most 0.25 % (10 of 4000).
        assert!(alarms <= 10, "{alarms} false alarms in {tries}");
    }

    #[test]
    fn two_clear_groups_are_found() {
        // 20 values near 600 and 10 near 300 (2 % noise), shuffled: found
        // in every draw, with the right sizes and centres.
        let mut rng = SplitMix64::new(3);
        for _ in 0..200 {
            let mut v: Vec<f64> = (0..30)
                .map(|i| {
                    let c = if i % 3 == 0 { 300.0 } else { 600.0 };
                    c * (1.0 + 0.02 * rng.normal())
                })
                .collect();
            v.swap(0, 29);
            let m = detect(&v).expect("two groups");
            assert_eq!(m.groups[0].indices.len(), 10);
            assert_eq!(m.groups[1].indices.len(), 20);
            assert!((m.groups[0].median / 300.0 - 1.0).abs() < 0.03);
            assert!((m.groups[1].median / 600.0 - 1.0).abs() < 0.03);
        }
        // The pft case: groups near 290 k and 620 k with 8 % spread.
        let mut found = 0;
        for _ in 0..200 {
            let v: Vec<f64> = (0..30)
                .map(|i| {
                    let c = if i % 3 == 0 { 290e3 } else { 620e3 };
                    c * (0.08 * rng.normal()).exp()
                })
                .collect();
            found += detect(&v).is_some() as usize;
        }
        assert!(found >= 190, "found in {found} of 200");
    }

    #[test]
    fn differences_name_what_moved_with_the_groups() {
        let v = [1.0, 1.1, 1.0, 5.0, 5.1, 5.0, 1.05, 4.9, 1.0, 5.05];
        let m = detect(&v).expect("two groups");
        let sys: Vec<f64> = v.iter().map(|x| if *x < 3.0 { 2.0 } else { 1.0 }).collect();
        let flat = vec![7.0; 10];
        // Medians 0 vs 1, but within the range of chance (p ~ 0.07).
        let gauge = vec![0.0, 1.0, 0.0, 1.0, 0.0, 1.0, 0.0, 1.0, 0.0, 1.0];
        let d = differences(
            &m,
            &[
                ("system".into(), sys),
                ("flat".into(), flat),
                ("gauge".into(), gauge),
            ],
            3,
        );
        assert_eq!(d.len(), 1);
        assert_eq!(
            (d[0].name.as_str(), d[0].low, d[0].high),
            ("system", 2.0, 1.0)
        );
        assert!(detect(&[1.0; 5]).is_none());
        assert!(detect(&[1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0]).is_none());
    }
}
