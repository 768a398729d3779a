//! Memory regions for the micro-benchmarks (now in `exec::region`, shared
//! with the other workloads and the task launcher), and the clock quality
//! they report.

pub use crate::exec::region::{Pages, Region};

use crate::exec;

/// Clock resolution and the cost of one clock read, for reports.
pub fn clock_quality() -> (f64, f64) {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: ts is valid and writable.
    unsafe { libc::clock_getres(libc::CLOCK_MONOTONIC, &mut ts) };
    let res = ts.tv_sec as f64 * 1e9 + ts.tv_nsec as f64;
    // Back-to-back reads: the median of 101 batches of 100 reads.
    let mut per: Vec<f64> = (0..101)
        .map(|_| {
            let t0 = exec::clock::monotonic_ns();
            for _ in 0..99 {
                std::hint::black_box(exec::clock::monotonic_ns());
            }
            (exec::clock::monotonic_ns() - t0) as f64 / 100.0
        })
        .collect();
    per.sort_by(f64::total_cmp);
    (res, per[50])
}
