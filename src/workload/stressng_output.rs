//! What stress-ng writes, read: the `metrics:` section of its `--yaml`
//! file (bogo ops and bogo-ops/s per stressor, as `--metrics` prints
//! them), the stressor lists `--class` and `--stressors` print, and its
//! `--version` line.

use std::collections::BTreeMap;

/// One stressor's entry of the `metrics:` section: every numeric field by
/// stress-ng's own key (`bogo-ops`, `bogo-ops-per-second-real-time`, ...).
#[derive(Debug, Clone, PartialEq)]
pub struct Metrics {
    pub stressor: String,
    pub values: BTreeMap<String, f64>,
}

impl Metrics {
    /// Bogo operations of all instances together.
    pub fn bogo_ops(&self) -> Option<f64> {
        self.values.get("bogo-ops").copied()
    }
    /// Bogo operations a second of wall time, stress-ng's "bogo ops/s
    /// (real time)": the robot's `ops_per_sec`.
    pub fn ops_per_sec(&self) -> Option<f64> {
        self.values.get("bogo-ops-per-second-real-time").copied()
    }
    /// Bogo operations a second of user and system time.
    pub fn ops_per_cpu_sec(&self) -> Option<f64> {
        self.values.get("bogo-ops-per-second-usr-sys-time").copied()
    }
}

/// The entries of the `metrics:` section of a `--yaml` file, in order. The
/// file is stress-ng's flat YAML (a `- stressor: NAME` line opens an entry,
/// indented `key: value` lines fill it); a line that is not a number is
/// passed over, and text without the section gives none.
pub fn metrics(yaml: &str) -> Vec<Metrics> {
    let mut out: Vec<Metrics> = Vec::new();
    let mut inside = false;
    for line in yaml.lines() {
        if !line.starts_with(' ') {
            inside = line.trim_end() == "metrics:";
            continue;
        }
        if !inside {
            continue;
        }
        let item = line.trim_start();
        if let Some(name) = item.strip_prefix("- stressor:") {
            out.push(Metrics {
                stressor: name.trim().to_string(),
                values: BTreeMap::new(),
            });
        } else if let (Some(entry), Some((key, value))) = (out.last_mut(), item.split_once(':'))
            && let Ok(v) = value.trim().parse::<f64>()
            && v.is_finite()
        {
            entry.values.insert(key.trim().to_string(), v);
        }
    }
    out
}

/// The stressors of `stress-ng --class NAME?`'s answer ("class 'vm'
/// stressors: a b c"); none for any other text.
pub fn class_members(text: &str) -> Vec<String> {
    text.lines()
        .find_map(|l| l.trim().strip_prefix("class '")?.split_once("stressors:"))
        .map(|(_, names)| names.split_whitespace().map(str::to_string).collect())
        .unwrap_or_default()
}

/// The version of `stress-ng --version`'s line ("stress-ng, version
/// 0.15.06 (gcc ...)").
pub fn version(text: &str) -> Option<String> {
    let rest = text.split_once("version ")?.1;
    let v = rest.split_whitespace().next()?;
    v.chars()
        .all(|c| c.is_ascii_digit() || c == '.')
        .then(|| v.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `stress-ng --fault 2 --timeout 1 --metrics --yaml F` as stress-ng
    /// 0.15.06 wrote it on this machine (2026-12-06), system-info shortened.
    const FAULT_2: &str = "---
system-info:
      stress-ng-version: 0.15.06
      run-by: root
      hostname: vm
      version: '#1 SMP PREEMPT_DYNAMIC @0'
      pagesize: 4096
      cpus: 2

metrics:
    - stressor: fault
      bogo-ops: 4261
      bogo-ops-per-second-usr-sys-time: 9481.910713
      bogo-ops-per-second-real-time: 4258.875793
      wall-clock-time: 1.000499
      user-time: 0.004085
      system-time: 0.445297
      cpu-usage-per-instance: 22.457899
      max-rss: 2580
      minor-page-faults-per-sec: 10714.763740
      major-page-faults-per-sec: 0.000000
      nanosecs-per-page-fault: 3033.920955

...
";

    #[test]
    fn the_metrics_section_gives_bogo_ops_and_rates_as_written() {
        let m = metrics(FAULT_2);
        assert_eq!(m.len(), 1);
        assert_eq!(m[0].stressor, "fault");
        assert_eq!(m[0].bogo_ops(), Some(4261.0));
        assert_eq!(m[0].ops_per_sec(), Some(4258.875793));
        assert_eq!(m[0].ops_per_cpu_sec(), Some(9481.910713));
        assert_eq!(m[0].values["nanosecs-per-page-fault"], 3033.920955);
        // system-info's numbers are not metrics.
        assert!(!m[0].values.contains_key("pagesize"));
    }

    #[test]
    fn several_stressors_keep_their_own_fields() {
        let text = "metrics:\n    - stressor: mmap\n      bogo-ops: 3\n    \
                    - stressor: vm\n      bogo-ops: 1024\n      max-rss: x\n...\n";
        let m = metrics(text);
        let names: Vec<&str> = m.iter().map(|e| e.stressor.as_str()).collect();
        assert_eq!(names, ["mmap", "vm"]);
        assert_eq!(m[0].bogo_ops(), Some(3.0));
        assert_eq!(m[1].bogo_ops(), Some(1024.0));
        assert!(!m[1].values.contains_key("max-rss"));
    }

    #[test]
    fn text_without_metrics_gives_none() {
        for text in [
            "",
            "---\nsystem-info:\n      cpus: 2\n...\n",
            "metrics:\n      bogo-ops: 5\n",
            "\u{0}\u{ff}: - stressor:",
        ] {
            assert!(
                metrics(text).iter().all(|m| m.values.is_empty()),
                "{text:?}"
            );
        }
        assert!(metrics("").is_empty());
    }

    #[test]
    fn a_class_answer_lists_its_stressors() {
        let text = "class 'vm' stressors: bad-altstack bigheap brk madvise mmap mremap\n";
        assert_eq!(
            class_members(text),
            [
                "bad-altstack",
                "bigheap",
                "brk",
                "madvise",
                "mmap",
                "mremap"
            ]
        );
        assert!(class_members("stress-ng: unknown class 'x'\n").is_empty());
    }

    #[test]
    fn the_version_line_gives_the_version() {
        let line = "stress-ng, version 0.15.06 (gcc 12.2.0, x86_64 Linux 6.18.44-fc-v1272)\n";
        assert_eq!(version(line).as_deref(), Some("0.15.06"));
        assert_eq!(version("stress-ng, version x1 (gcc)"), None);
        assert_eq!(version(""), None);
    }
}
