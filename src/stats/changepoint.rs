//! Change points of a series by E-divisive means (Matteson and James,
//! 2014; the method of MongoDB's signal-processing-algorithms and Apache
//! Otava): the split that maximises the energy statistic Q is tested by a
//! seeded permutation test, and the segments either side are split again
//! until a candidate is not significant.
//!
//! On one dimension with exponent 1 every Q of a segment comes from the sums
//! of |x_i - x_j| within the left part and across the split, which one
//! pass with a Fenwick tree over the values' ranks gives in O(n log n); a
//! permutation costs the same, and the permutations stop early (Besag and
//! Clifford) once the candidate cannot be significant. So 10,000 points take a fraction of a second, not the
//! O(n^2) per split of the textbook form.

use super::rng::SplitMix64;

/// What a search may find.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Options {
    /// Significance level of each candidate's permutation test.
    pub alpha: f64,
    /// The fewest points a segment keeps (at least 2).
    pub min_segment: usize,
    /// Permutations per candidate (fewer when it is clearly not significant).
    pub permutations: usize,
    /// Seed of the permutations: the same series gives the same answer.
    pub seed: u64,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            alpha: 0.01,
            min_segment: 3,
            permutations: 199,
            seed: 1,
        }
    }
}

/// A change point: `at` is the index of the first point after it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Split {
    pub at: usize,
    /// The energy statistic of the split within its segment.
    pub q: f64,
    /// Permutation p-value: (1 + permutations at least as large) / (1 + permutations).
    pub p: f64,
}

/// The significant change points of `x`, in order of position.
pub fn e_divisive(x: &[f64], opts: &Options) -> Vec<Split> {
    let min = opts.min_segment.max(2);
    if x.len() < 2 * min || x.iter().any(|v| !v.is_finite()) {
        return Vec::new();
    }
    // Centred, so that sums of values stay small beside their differences.
    let mean = x.iter().sum::<f64>() / x.len() as f64;
    let x: Vec<f64> = x.iter().map(|v| v - mean).collect();
    let mut rng = SplitMix64::new(opts.seed);
    let mut scratch = Scratch::default();
    // Segments [start, end) that can be split, with their best split.
    let mut segments: Vec<Candidate> = Vec::new();
    let push = |segments: &mut Vec<Candidate>, s: usize, e: usize, scratch: &mut Scratch| {
        if let Some((at, q)) = best_split(&x[s..e], min, scratch) {
            segments.push(Candidate { s, e, at, q });
        }
    };
    push(&mut segments, 0, x.len(), &mut scratch);
    let mut found = Vec::new();
    while let Some(i) = (0..segments.len()).max_by(|&a, &b| segments[a].q.total_cmp(&segments[b].q))
    {
        let Candidate { s, e, at, q } = segments.swap_remove(i);
        let p = permutation_p(&x[s..e], q, min, opts, &mut rng, &mut scratch);
        if p > opts.alpha {
            break;
        }
        found.push(Split { at: s + at, q, p });
        push(&mut segments, s, s + at, &mut scratch);
        push(&mut segments, s + at, e, &mut scratch);
    }
    found.sort_by_key(|f| f.at);
    found
}

/// A segment [s, e) and its best split: `at` points from s, with Q `q`.
struct Candidate {
    s: usize,
    e: usize,
    at: usize,
    q: f64,
}

/// Buffers reused across splits and permutations.
#[derive(Default)]
struct Scratch {
    order: Vec<usize>,
    ranks: Vec<usize>,
    /// Per rank: the sum of |x - y| over every other value y of the segment.
    dist: Vec<f64>,
    values: Vec<(f64, usize)>,
    count: Vec<f64>,
    sum: Vec<f64>,
}

/// The best split of `y` (index of the first point of its right part)
/// and its Q, when `y` can be split into two parts of `min` points.
fn best_split(y: &[f64], min: usize, s: &mut Scratch) -> Option<(usize, f64)> {
    if y.len() < 2 * min {
        return None;
    }
    rank(y, s);
    s.values.clear();
    s.values
        .extend(y.iter().copied().zip(s.ranks.iter().copied()));
    let values = std::mem::take(&mut s.values);
    let best = max_q(&values, min, s);
    s.values = values;
    Some(best)
}

/// The ranks of `y` (0-based, ties broken by position) and each value's
/// summed distance to the others.
fn rank(y: &[f64], s: &mut Scratch) {
    let n = y.len();
    s.order.clear();
    s.order.extend(0..n);
    s.order.sort_by(|&a, &b| y[a].total_cmp(&y[b]));
    s.ranks.clear();
    s.ranks.resize(n, 0);
    for (r, &i) in s.order.iter().enumerate() {
        s.ranks[i] = r;
    }
    let total: f64 = y.iter().sum();
    s.dist.clear();
    let mut below = 0.0;
    for (r, &i) in s.order.iter().enumerate() {
        let x = y[i];
        let above = total - below - x;
        s.dist
            .push(x * r as f64 - below + above - x * (n - 1 - r) as f64);
        below += x;
    }
}

/// The permutation p-value of `q` as the best split of `y`: `y` shuffled
/// with the seeded generator, each shuffle's best Q against `q`. Stops as
/// soon as the p-value is sure to exceed alpha.
fn permutation_p(
    y: &[f64],
    q: f64,
    min: usize,
    opts: &Options,
    rng: &mut SplitMix64,
    s: &mut Scratch,
) -> f64 {
    rank(y, s);
    let mut values: Vec<(f64, usize)> = y.iter().copied().zip(s.ranks.iter().copied()).collect();
    let total = opts.permutations.max(1);
    // With `limit` exceedances the p-value is at least (limit + 1) / (total + 1) > alpha.
    let limit = (opts.alpha * (total + 1) as f64).floor() as usize;
    let mut exceed = 0usize;
    for done in 1..=total {
        for i in (1..values.len()).rev() {
            values.swap(i, rng.below(i + 1));
        }
        // A tolerance so that a permutation equal to the data counts.
        if max_q(&values, min, s).1 >= q * (1.0 - 1e-12) {
            exceed += 1;
            if exceed > limit {
                return (exceed + 1) as f64 / (done + 1) as f64;
            }
        }
    }
    (exceed + 1) as f64 / (total + 1) as f64
}

/// The split of `v` (value, rank; `s.dist` by rank from `rank`) with the
/// largest Q, each part `min` points or more. One pass: moving x from the
/// right part to the left adds its distances to the left part (a Fenwick
/// query over the ranks) to the left's sum, and changes the sum across the
/// split by its distances to the rest minus twice those.
fn max_q(v: &[(f64, usize)], min: usize, s: &mut Scratch) -> (usize, f64) {
    let n = v.len();
    let all = s.dist.iter().sum::<f64>() / 2.0;
    let (count, sum) = (&mut s.count, &mut s.sum);
    count.clear();
    count.resize(n + 1, 0.0);
    sum.clear();
    sum.resize(n + 1, 0.0);
    let (mut left, mut cross, mut total) = (0.0, 0.0, 0.0);
    let mut best = (min, f64::NEG_INFINITY);
    for (k, &(x, r)) in v[..n - min].iter().enumerate() {
        // Count and sum of the values ranked below r in the left part.
        let (mut c, mut b) = (0.0, 0.0);
        let mut i = r;
        while i > 0 {
            c += count[i];
            b += sum[i];
            i &= i - 1;
        }
        let d = x * c - b + (total - b) - x * (k as f64 - c);
        left += d;
        cross += s.dist[r] - 2.0 * d;
        total += x;
        let mut i = r + 1;
        while i <= n {
            count[i] += 1.0;
            sum[i] += x;
            i += i & i.wrapping_neg();
        }
        let t = k + 1;
        if t < min {
            continue;
        }
        let (m, rest) = (t as f64, (n - t) as f64);
        let right = all - left - cross;
        let e = 2.0 * cross / (m * rest)
            - 2.0 * left / (m * (m - 1.0))
            - 2.0 * right / (rest * (rest - 1.0));
        let q = m * rest / (m + rest) * e;
        if q > best.1 {
            best = (t, q);
        }
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Q of every split by the textbook O(n^2) sums.
    fn naive_q(y: &[f64], t: usize) -> f64 {
        let (a, b) = y.split_at(t);
        let pairs = |u: &[f64], w: &[f64]| -> f64 {
            u.iter()
                .flat_map(|x| w.iter().map(move |z| (x - z).abs()))
                .sum::<f64>()
        };
        let (m, k) = (a.len() as f64, b.len() as f64);
        let e = 2.0 * pairs(a, b) / (m * k)
            - pairs(a, a) / (m * (m - 1.0))
            - pairs(b, b) / (k * (k - 1.0));
        m * k / (m + k) * e
    }

    #[test]
    fn the_fast_statistic_is_the_textbook_one() {
        let mut rng = SplitMix64::new(7);
        let y: Vec<f64> = (0..40)
            .map(|i| rng.normal() + if i >= 25 { 2.0 } else { 0.0 })
            .collect();
        let mut s = Scratch::default();
        rank(&y, &mut s);
        let v: Vec<(f64, usize)> = y.iter().copied().zip(s.ranks.clone()).collect();
        let (at, q) = max_q(&v, 3, &mut s);
        let (mut best_t, mut best_q) = (0, f64::NEG_INFINITY);
        for t in 3..=37 {
            let nq = naive_q(&y, t);
            if nq > best_q {
                (best_t, best_q) = (t, nq);
            }
        }
        assert_eq!(at, best_t);
        assert!(
            (q - best_q).abs() < 1e-9 * best_q.abs().max(1.0),
            "{q} {best_q}"
        );
    }

    #[test]
    fn ties_and_short_series_give_no_change() {
        let o = Options::default();
        assert!(e_divisive(&[1.0; 30], &o).is_empty());
        assert!(e_divisive(&[1.0, 2.0, 3.0, 4.0, 5.0], &o).is_empty());
        assert!(e_divisive(&[1.0, f64::NAN, 3.0, 4.0, 5.0, 6.0, 7.0], &o).is_empty());
        assert!(e_divisive(&[], &o).is_empty());
    }

    #[test]
    fn two_clear_steps_are_found_where_they_are() {
        let mut rng = SplitMix64::new(3);
        let y: Vec<f64> = (0..60)
            .map(|i| {
                let level = match i {
                    0..20 => 0.0,
                    20..45 => 1.0,
                    _ => -0.5,
                };
                level + 0.1 * rng.normal()
            })
            .collect();
        let at: Vec<usize> = e_divisive(&y, &Options::default())
            .iter()
            .map(|s| s.at)
            .collect();
        assert_eq!(at, vec![20, 45]);
    }
}
