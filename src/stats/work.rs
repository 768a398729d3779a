//! A count of the elementary steps the analysis takes, per thread: every
//! routine that walks or orders samples adds what it did (n for a pass over
//! n values, n log2 n for a sort). Tests read it to show that doubling the
//! samples does not quadruple the work, without timing anything. It costs
//! one thread-local add per call, nothing per sample.

use std::cell::Cell;

thread_local! {
    static STEPS: Cell<u64> = const { Cell::new(0) };
}

/// Counts `n` steps.
pub fn add(n: u64) {
    STEPS.with(|s| s.set(s.get().saturating_add(n)));
}

/// One pass over `n` values.
pub fn pass(n: usize) {
    add(n as u64);
}

/// One comparison sort of `n` values: n ceil(log2 n) steps.
pub fn sort(n: usize) {
    let n = n as u64;
    add(n * (64 - n.leading_zeros()) as u64);
}

/// The steps this thread has counted so far.
pub fn steps() -> u64 {
    STEPS.with(Cell::get)
}

/// The steps `f` counts on this thread, and its result.
pub fn counted<T>(f: impl FnOnce() -> T) -> (u64, T) {
    let before = steps();
    let out = f();
    (steps() - before, out)
}

/// Fails unless the steps `at(n)` counts grow by less than 2.5 times from
/// each size to the next, its double: n log n grows by a bit more than 2
/// per doubling, n^2 by 4.
#[cfg(test)]
pub fn assert_n_log_n(sizes: &[usize], at: impl FnMut(usize) -> u64) {
    let steps: Vec<u64> = sizes.iter().copied().map(at).collect();
    for w in steps.windows(2) {
        assert!(w[1] * 10 < w[0] * 25, "steps {steps:?} at {sizes:?}");
    }
}

/// `f` over `items` in order, on up to as many threads at once as there
/// are CPUs when `parallel` (else on this thread), each thread's steps
/// added to this thread's count. For work on whole sides of a large
/// comparison: a side or a file at a time, so memory stays within what
/// that many sides need.
pub fn map<T: Sync, R: Send>(items: &[T], parallel: bool, f: impl Fn(&T) -> R + Sync) -> Vec<R> {
    let width = std::thread::available_parallelism().map_or(1, |n| n.get());
    if !parallel || width < 2 || items.len() < 2 {
        return items.iter().map(f).collect();
    }
    let mut out = Vec::with_capacity(items.len());
    for chunk in items.chunks(width) {
        let done: Vec<(u64, R)> = std::thread::scope(|s| {
            let handles: Vec<_> = chunk
                .iter()
                .map(|item| s.spawn(|| counted(|| f(item))))
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
                .collect()
        });
        for (steps, r) in done {
            add(steps);
            out.push(r);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::rng::SplitMix64;
    use crate::stats::{paired, robust, stopping};

    /// Steps of what adaptive stopping and `show` compute over n samples:
    /// the stopping rule after a sample, the paired ratio of two knob
    /// variants, the trend with Sen's slope, the median's interval.
    fn steps(n: usize, rng: &mut SplitMix64) -> u64 {
        let mut draw =
            || -> Vec<f64> { (0..n).map(|_| 1e3 * (0.05 * rng.normal()).exp()).collect() };
        let (a, b) = (draw(), draw());
        let rule = stopping::Rule {
            precision: 1e-6,
            min_reps: 3,
            max_reps: usize::MAX,
            max_time: std::time::Duration::MAX,
        };
        counted(|| {
            let stop = stopping::decide(&rule, &a, std::time::Duration::ZERO);
            assert_eq!(stop, None);
            assert!(stopping::paired_relative_ci(&[a.clone(), b.clone()]).is_finite());
            assert!(robust::trend(&a).is_some());
            assert!(robust::median_ci(&b).is_some());
            let tagged = |v: &[f64]| -> Vec<(i64, f64)> {
                v.iter().enumerate().map(|(i, x)| (i as i64, *x)).collect()
            };
            assert!(paired::ratio(&tagged(&a), &tagged(&b)).is_some());
        })
        .0
    }

    #[test]
    fn stopping_and_the_centre_grow_by_n_log_n() {
        let mut rng = SplitMix64::new(3);
        assert_n_log_n(&[2_000, 4_000, 8_000], |n| steps(n, &mut rng));
    }
}
