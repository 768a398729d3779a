//! Folding the task reports of one sample: the first failure, the common
//! wall time.

use super::TaskReport;
use crate::error::{Error, Result};

/// `Err("task i: message")` for the first task that failed.
pub fn first_error(reports: &[TaskReport]) -> Result<()> {
    first_error_as(reports, "task")
}

/// As `first_error`, naming the failed task `who i` (e.g. "process 1").
pub fn first_error_as(reports: &[TaskReport], who: &str) -> Result<()> {
    match reports
        .iter()
        .enumerate()
        .find_map(|(i, r)| r.error().map(|e| (i, e)))
    {
        Some((i, e)) => Err(Error::Failed(format!("{who} {i}: {e}"))),
        None => Ok(()),
    }
}

/// The earliest start of any task's timed section (0 without tasks).
pub fn first_start_ns(reports: &[TaskReport]) -> u64 {
    reports.iter().map(|r| r.start_ns).min().unwrap_or(0)
}

/// From the first task's start to the last task's end, in ns.
pub fn wall_ns(reports: &[TaskReport]) -> u64 {
    let end = reports.iter().map(|r| r.end_ns).max().unwrap_or(0);
    end.saturating_sub(first_start_ns(reports))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report(start_ns: u64, end_ns: u64) -> TaskReport {
        TaskReport {
            start_ns,
            end_ns,
            ..Default::default()
        }
    }

    #[test]
    fn wall_spans_first_start_to_last_end() {
        let r = [report(20, 50), report(10, 40), report(30, 70)];
        assert_eq!(first_start_ns(&r), 10);
        assert_eq!(wall_ns(&r), 60);
        assert_eq!(wall_ns(&[]), 0);
    }

    #[test]
    fn names_the_first_failed_task() {
        let mut r = [report(0, 1), report(0, 1), report(0, 1)];
        assert!(first_error(&r).is_ok());
        r[2].fail("late");
        r[1].fail("mmap failed");
        assert_eq!(
            first_error(&r).unwrap_err().to_string(),
            "task 1: mmap failed"
        );
        assert!(matches!(
            first_error_as(&r, "process"),
            Err(Error::Failed(m)) if m == "process 1: mmap failed"
        ));
    }
}
