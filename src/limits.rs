//! Bounds every numeric input is held to: task counts, and the memory a
//! size may take. Refusals name the range.

/// The most tasks (threads or processes) one case may start; also the
/// largest task count an imported table may claim.
pub const MAX_TASKS: usize = 65_536;

/// The flags that set how much memory a workload takes, for the fix in a
/// "not enough memory" message.
pub fn size_flags(workload: &str) -> &'static str {
    match workload {
        "pft" => "a smaller --size or --size-per-task",
        "latency" => "a smaller --max",
        "churn" => "a smaller --chunk or fewer --tasks",
        "fork" => "a smaller --size or --touch, or fewer --tasks",
        "colour" => "a smaller --size-per-task or fewer --tasks",
        "lockfan" => "fewer --locks",
        "atomic" | "c2c" => "fewer --tasks or CPUs",
        w if w.starts_with("numa") => "a smaller --size",
        _ => "smaller sizes or fewer --tasks",
    }
}

/// A finite number inside `lo..=hi`, or an error naming the flag and range.
pub fn in_range(flag: &str, v: f64, lo: f64, hi: f64) -> Result<f64, String> {
    if v.is_finite() && (lo..=hi).contains(&v) {
        Ok(v)
    } else {
        Err(format!("{flag} {v} is out of range: use {lo} to {hi}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_refuse_non_finite_values() {
        assert_eq!(in_range("--every", 1.5, 0.01, 3600.0), Ok(1.5));
        for bad in [f64::NAN, f64::INFINITY, -1.0, 2e10] {
            let e = in_range("--every", bad, 0.01, 3600.0).unwrap_err();
            assert!(e.contains("use 0.01 to 3600"), "{e}");
        }
        assert!(size_flags("latency").contains("--max"));
        assert!(size_flags("numa01").contains("--size"));
    }
}
