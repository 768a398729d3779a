//! Parsing and formatting of the human inputs every command shares: sizes
//! ("256M", "1.5GiB") and task lists ("1,2,4", "1-8", "auto"). Every
//! error is bad input naming the value and the fix.

use crate::error::{Error, Result};

/// Parses a size in bytes. Suffixes K, M, G, T (optionally followed by
/// "iB" or "B") are binary multiples; a bare number is bytes.
pub fn size(text: &str) -> Result<u64> {
    let t = text.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let value: f64 = num.parse().map_err(|_| {
        Error::Input(format!(
            "cannot parse size '{text}': use a number with K, M, G or T, e.g. 256M"
        ))
    })?;
    let shift = match unit.trim().to_ascii_uppercase().as_str() {
        "" | "B" => 0,
        "K" | "KB" | "KIB" => 10,
        "M" | "MB" | "MIB" => 20,
        "G" | "GB" | "GIB" => 30,
        "T" | "TB" | "TIB" => 40,
        _ => {
            return Err(Error::Input(format!(
                "cannot parse size '{text}': unknown unit '{unit}', use K, M, G or T"
            )));
        }
    };
    let bytes = value * (1u64 << shift) as f64;
    if !bytes.is_finite() || bytes < 1.0 || bytes > u64::MAX as f64 / 2.0 {
        return Err(Error::Input(format!(
            "size '{text}' is out of range: give a positive size, e.g. 256M"
        )));
    }
    Ok(bytes as u64)
}

/// [`size`] of a command-line option, with the option named in the error.
pub fn size_arg(flag: &str, text: &str) -> Result<u64> {
    size(text).map_err(|e| e.context(flag))
}

/// Parses a task list: `1,2,4`, `1-8`, a mix, or `auto` (1, 2, 4, ... up to
/// `online`, plus `online` itself).
pub fn tasks(text: &str, online: usize) -> Result<Vec<usize>> {
    let t = text.trim();
    if t == "auto" {
        return Ok(auto_tasks(online));
    }
    let mut out = Vec::new();
    for part in t.split(',').map(str::trim) {
        let bad = || {
            Error::Input(format!(
                "cannot parse --tasks '{text}': use a list (1,2,4), a range (1-8) or auto"
            ))
        };
        let (lo, hi) = match part.split_once('-') {
            Some((a, b)) => (
                a.trim().parse::<usize>().map_err(|_| bad())?,
                b.trim().parse::<usize>().map_err(|_| bad())?,
            ),
            None => {
                let n = part.parse::<usize>().map_err(|_| bad())?;
                (n, n)
            }
        };
        if lo == 0 {
            return Err(Error::Input(format!(
                "--tasks '{text}' asks for 0 tasks: the smallest is 1"
            )));
        }
        if hi < lo {
            return Err(Error::Input(format!(
                "--tasks range '{part}' runs backwards: write {hi}-{lo}"
            )));
        }
        if hi > 65536 {
            return Err(Error::Input(format!(
                "--tasks '{part}' is beyond 65536 tasks"
            )));
        }
        out.extend(lo..=hi);
    }
    out.sort_unstable();
    out.dedup();
    Ok(out)
}

fn auto_tasks(online: usize) -> Vec<usize> {
    let online = online.max(1);
    let mut out: Vec<usize> = std::iter::successors(Some(1usize), |n| Some(n * 2))
        .take_while(|&n| n <= online)
        .collect();
    if out.last() != Some(&online) {
        out.push(online);
    }
    out
}

/// A percentage as a fraction: "1%", "0.5 %" or "2" -> 0.01, 0.005, 0.02.
pub fn percent(text: &str) -> Result<f64> {
    let t = text.trim();
    let n = t.strip_suffix('%').unwrap_or(t).trim();
    match n.parse::<f64>() {
        Ok(v) if v.is_finite() && v > 0.0 && v < 100.0 => Ok(v / 100.0),
        _ => Err(Error::Input(format!(
            "'{text}' is not a percentage between 0 and 100 (exclusive): write e.g. 1% or 0.5%"
        ))),
    }
}

/// A duration: "500ms", "30s", "10m", "1h", "7d", or plain seconds ("90").
pub fn duration(text: &str) -> Result<std::time::Duration> {
    let t = text.trim();
    let bad = || {
        Error::Input(format!(
            "'{text}' is not a duration: write e.g. 30s, 10m, 1h, 7d or 500ms"
        ))
    };
    let (num, scale) = if let Some(n) = t.strip_suffix("ms") {
        (n, 0.001)
    } else if let Some(n) = t.strip_suffix('s') {
        (n, 1.0)
    } else if let Some(n) = t.strip_suffix('m') {
        (n, 60.0)
    } else if let Some(n) = t.strip_suffix('h') {
        (n, 3600.0)
    } else if let Some(n) = t.strip_suffix('d') {
        (n, 86400.0)
    } else {
        (t, 1.0)
    };
    match num.trim().parse::<f64>() {
        // At least a microsecond: a tinier positive value would round to 0.
        Ok(v) if v.is_finite() && v * scale >= 1e-6 && v * scale < 1e9 => {
            Ok(std::time::Duration::from_secs_f64(v * scale))
        }
        _ => Err(bad()),
    }
}

/// A duration as [`duration`] reads it back: "40s", "10m", "1h", "500ms",
/// "1.5s".
pub fn format_duration(d: std::time::Duration) -> String {
    let ms = d.as_millis();
    if d != std::time::Duration::from_millis(ms as u64) {
        return format!("{}s", d.as_secs_f64());
    }
    match ms {
        0 => "0s".into(),
        ms if ms % 3_600_000 == 0 => format!("{}h", ms / 3_600_000),
        ms if ms % 60_000 == 0 => format!("{}m", ms / 60_000),
        ms if ms % 1000 == 0 => format!("{}s", ms / 1000),
        ms => format!("{ms}ms"),
    }
}

/// Joins words into one shell command line, quoting those that need it, so
/// a printed command can be pasted back into a shell.
pub fn shell_words<S: AsRef<str>>(words: &[S]) -> String {
    words
        .iter()
        .map(|w| {
            let w = w.as_ref();
            if w.is_empty()
                || w.contains(|c: char| c.is_whitespace() || "'\"$\\<>|&;*?`()".contains(c))
            {
                format!("'{}'", w.replace('\'', "'\\''"))
            } else {
                w.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_formatted_duration_reads_back_as_itself() {
        for text in ["40s", "10m", "1h", "500ms", "1500ms", "90m", "61s"] {
            let d = duration(text).unwrap();
            assert_eq!(format_duration(d), text);
            assert_eq!(duration(&format_duration(d)).unwrap(), d);
        }
        let odd = std::time::Duration::from_micros(1500);
        assert_eq!(duration(&format_duration(odd)).unwrap(), odd);
    }

    #[test]
    fn sizes() {
        assert_eq!(size("4096").unwrap(), 4096);
        assert_eq!(size("256M").unwrap(), 256 << 20);
        assert_eq!(size("1.5GiB").unwrap(), 3 << 29);
        assert_eq!(size("64k").unwrap(), 64 << 10);
        crate::error::assert_input(size("lots"));
        crate::error::assert_input(size("12Q"));
        crate::error::assert_input(size("0"));
        let Err(Error::Input(e)) = size_arg("--chunk", "0") else {
            panic!("a zero size is not bad input")
        };
        assert!(e.starts_with("--chunk: ") && e.contains("e.g. 256M"), "{e}");
    }

    #[test]
    fn task_lists() {
        assert_eq!(tasks("1,2,4", 2).unwrap(), vec![1, 2, 4]);
        assert_eq!(tasks("1-3,8", 2).unwrap(), vec![1, 2, 3, 8]);
        assert_eq!(tasks("auto", 6).unwrap(), vec![1, 2, 4, 6]);
        assert_eq!(tasks("auto", 8).unwrap(), vec![1, 2, 4, 8]);
        assert_eq!(tasks("auto", 1).unwrap(), vec![1]);
        crate::error::assert_input(tasks("0", 2));
        crate::error::assert_input(tasks("x", 2));
        crate::error::assert_input(tasks("4-2", 2));
    }

    #[test]
    fn percents_and_durations() {
        assert_eq!(percent("1%").unwrap(), 0.01);
        assert_eq!(percent(" 0.5 %").unwrap(), 0.005);
        assert_eq!(percent("2").unwrap(), 0.02);
        for bad in ["0%", "100", "-1%", "x", ""] {
            assert!(percent(bad).is_err(), "{bad}");
        }
        assert_eq!(duration("10m").unwrap().as_secs(), 600);
        assert_eq!(duration("90").unwrap().as_secs(), 90);
        assert_eq!(duration("500ms").unwrap().as_millis(), 500);
        assert_eq!(duration("1h").unwrap().as_secs(), 3600);
        assert_eq!(duration("7d").unwrap().as_secs(), 7 * 86400);
        for bad in ["0s", "-1m", "soon", "1w", "0d", ""] {
            assert!(duration(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn shell_words_quote_what_the_shell_would_split() {
        assert_eq!(
            shell_words(&["sh", "-c", "seq 200000 >/dev/null"]),
            "sh -c 'seq 200000 >/dev/null'"
        );
        assert_eq!(shell_words(&["echo", "it's", ""]), "echo 'it'\\''s' ''");
        assert_eq!(shell_words(&["make", "-j2"]), "make -j2");
    }
}
