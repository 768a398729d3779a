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
