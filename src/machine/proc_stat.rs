//! /proc/PID/stat (and task/TID/stat) lines: a field by the number
//! proc(5) gives it, and a process's start time, which tells a live
//! process from a later one that reuses its pid.

/// Field `n` (3 or more, numbered as in proc(5)) of a stat line. The
/// command name, field 2, may hold spaces and parentheses: the fields
/// after it start at its last ')'.
pub fn field(stat: &str, n: usize) -> Option<&str> {
    stat[stat.rfind(')')? + 1..]
        .split_whitespace()
        .nth(n.checked_sub(3)?)
}

/// When process `pid` started (field 22: clock ticks after boot); None
/// once it is gone.
pub fn start_time(pid: i64) -> Option<i64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    field(&stat, 22)?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_are_counted_after_an_odd_command_name() {
        let mut s = String::from("42 (a (b) c) R");
        for i in 4..=52 {
            s.push_str(&format!(" {i}"));
        }
        assert_eq!(field(&s, 3), Some("R"));
        assert_eq!(field(&s, 4), Some("4"));
        assert_eq!(field(&s, 39), Some("39"));
        assert_eq!(field(&s, 53), None);
        assert_eq!(field(&s, 2), None);
        assert_eq!(field("no name here", 3), None);
    }

    #[test]
    fn this_process_has_a_start_time_and_a_missing_one_none() {
        assert!(start_time(i64::from(std::process::id())).is_some_and(|t| t > 0));
        assert_eq!(start_time(i64::from(i32::MAX)), None);
    }
}
