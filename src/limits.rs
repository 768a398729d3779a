//! Bounds every numeric input is held to: task counts, and the memory a
//! size may take. Refusals name the range.

use crate::error::{Error, Result};

/// The most tasks (threads or processes) one case may start; also the
/// largest task count an imported table may claim.
pub const MAX_TASKS: usize = 65_536;

/// A finite number inside `lo..=hi`, or an error naming the flag and range.
pub fn in_range(flag: &str, v: f64, lo: f64, hi: f64) -> Result<f64> {
    if v.is_finite() && (lo..=hi).contains(&v) {
        Ok(v)
    } else {
        Err(Error::Input(format!(
            "{flag} {v} is out of range: use {lo} to {hi}"
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_refuse_non_finite_values() {
        assert_eq!(in_range("--every", 1.5, 0.01, 3600.0).unwrap(), 1.5);
        for bad in [f64::NAN, f64::INFINITY, -1.0, 2e10] {
            let Err(Error::Input(e)) = in_range("--every", bad, 0.01, 3600.0) else {
                panic!("{bad} is not refused as bad input")
            };
            assert!(e.contains("use 0.01 to 3600"), "{e}");
        }
    }
}
