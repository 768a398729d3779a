//! `vmscale doctor`'s findings: what on this machine can bias or scatter a
//! measurement, each with the evidence read (file and value) and the fix.
//! Every reader takes a root path so tests run on fixture trees; a file that
//! is absent leaves its check "not visible", never a finding.

mod cpu;
mod memory;
mod scanners;
pub mod tune;

use std::path::Path;
use std::time::Duration;

use serde::Serialize;

use crate::monitor::memory_size;

/// One file read and what it said.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Evidence {
    /// The absolute path on the machine (without the test root).
    pub path: String,
    pub value: String,
}

/// A knob value `run --tune` sets for a finding (a registry knob name).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Tune {
    pub knob: &'static str,
    pub value: String,
}

/// A source of noise or bias seen on the machine.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Finding {
    /// Short stable name of the check ("virtualisation", "page-reporting").
    pub check: &'static str,
    /// What was seen, one line.
    pub what: String,
    pub evidence: Vec<Evidence>,
    /// What to do about it.
    pub fix: String,
    /// What `run --tune` sets for it (empty: not reversible by a knob).
    pub tune: Vec<Tune>,
}

/// A check that found nothing wrong, or could not see its files.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Clear {
    pub check: &'static str,
    /// "fine" (evidence read and good) or "not visible" (files absent).
    pub state: &'static str,
    pub evidence: Vec<Evidence>,
}

/// Every check's outcome.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Report {
    pub findings: Vec<Finding>,
    pub clear: Vec<Clear>,
}

/// What the checks are told besides the tree.
#[derive(Debug, Clone)]
pub struct Context {
    /// CPUs the measurement will use (empty: every online CPU).
    pub cpus: Vec<usize>,
    /// How long to watch /proc/stat and /proc/interrupts for activity now
    /// (zero: one reading; the activity checks then see nothing).
    pub window: Duration,
    /// The effective uid vmscale runs as (perf_event_paranoid binds non-root).
    pub euid: Option<u32>,
}

/// The longest `--window`: a second or two sees the machine's activity.
const MAX_WINDOW: Duration = Duration::from_secs(60);

/// `doctor --window`: a duration up to [`MAX_WINDOW`], or 0 (0s) for one
/// reading.
pub fn window(text: &str) -> crate::error::Result<Duration> {
    let window = match text.trim() {
        "0" | "0s" => Duration::ZERO,
        _ => crate::parse::duration(text)?,
    };
    if window > MAX_WINDOW {
        return Err(crate::error::Error::Input(
            "at most 60s; a second or two sees the machine's activity".into(),
        ));
    }
    Ok(window)
}

/// The outcome of one check.
pub(crate) enum Outcome {
    Found(Finding),
    Clear(Clear),
}

pub(crate) fn ev(path: &str, value: impl Into<String>) -> Evidence {
    Evidence {
        path: path.to_string(),
        value: value.into(),
    }
}

pub(crate) fn fine(check: &'static str, evidence: Vec<Evidence>) -> Outcome {
    Outcome::Clear(Clear {
        check,
        state: if evidence.is_empty() {
            "not visible"
        } else {
            "fine"
        },
        evidence,
    })
}

pub(crate) fn tune(knob: &'static str, value: &str) -> Vec<Tune> {
    vec![Tune {
        knob,
        value: value.to_string(),
    }]
}

/// Runs every check on the tree under `root`.
pub fn examine(root: &Path, ctx: &Context) -> Report {
    let mut ctx = ctx.clone();
    if ctx.cpus.is_empty() {
        ctx.cpus = crate::machine::topology::online_cpus(root);
    }
    let (memory0, threads0) = (memory_size::read(root), scanners::threads(root));
    let activity = cpu::Activity::watch(root, ctx.window);
    let (memory1, threads1) = (memory_size::read(root), scanners::threads(root));
    let outcomes = vec![
        cpu::virtualisation(root),
        cpu::steal(root, &activity),
        memory::page_reporting(root),
        memory::balloon(root),
        memory::lazy_memory(root, &memory0, &memory1),
        scanners::damon(root, &threads1),
        scanners::scanners(root, &threads0, &threads1),
        cpu::governor(root, &ctx.cpus),
        cpu::boost(root),
        cpu::smt_siblings(root, &ctx.cpus, &activity),
        cpu::runnable(root),
        memory::thp(root),
        memory::khugepaged(root),
        memory::compaction(root),
        memory::numa_balancing(root),
        memory::swap(root),
        cpu::aslr(root),
        cpu::interrupts(root, &ctx.cpus, &activity),
        cpu::perf_paranoid(root, ctx.euid),
    ];
    let mut report = Report::default();
    for o in outcomes {
        match o {
            Outcome::Found(f) => report.findings.push(f),
            Outcome::Clear(c) => report.clear.push(c),
        }
    }
    report
}

/// The report as text that fits 80 columns.
pub fn text(r: &Report) -> String {
    let mut out = String::new();
    if r.findings.is_empty() {
        out.push_str("No source of noise or bias found.\n");
    } else {
        out.push_str(&format!(
            "{} source(s) of noise or bias found:\n",
            r.findings.len()
        ));
    }
    for f in &r.findings {
        out.push('\n');
        out.push_str(&wrap(&format!("[{}] {}", f.check, f.what), "", 78));
        for e in &f.evidence {
            out.push_str(&wrap(&format!("{} = {}", e.path, e.value), "    ", 78));
        }
        out.push_str(&wrap(&format!("fix: {}", f.fix), "  ", 78));
        if !f.tune.is_empty() {
            let t: Vec<String> = f
                .tune
                .iter()
                .map(|t| format!("{}={}", t.knob, t.value))
                .collect();
            out.push_str(&wrap(
                &format!("run --tune sets {} (restored after)", t.join(", ")),
                "  ",
                78,
            ));
        }
    }
    let fine: Vec<&str> = r
        .clear
        .iter()
        .filter(|c| c.state == "fine")
        .map(|c| c.check)
        .collect();
    let unseen: Vec<&str> = r
        .clear
        .iter()
        .filter(|c| c.state != "fine")
        .map(|c| c.check)
        .collect();
    if !fine.is_empty() {
        out.push('\n');
        out.push_str(&wrap(&format!("fine: {}", fine.join(", ")), "  ", 78));
    }
    if !unseen.is_empty() {
        out.push_str(&wrap(
            &format!("not visible here: {}", unseen.join(", ")),
            "  ",
            78,
        ));
    }
    out
}

/// `s` folded to `width`, continuation lines indented by `indent` plus two.
fn wrap(s: &str, indent: &str, width: usize) -> String {
    crate::text::fill(s, width, indent, &format!("{indent}  "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_window_is_zero_a_duration_or_refused_past_a_minute() {
        assert_eq!(window("0").unwrap(), Duration::ZERO);
        assert_eq!(window("0s").unwrap(), Duration::ZERO);
        assert_eq!(window("250ms").unwrap(), Duration::from_millis(250));
        assert_eq!(window("60s").unwrap(), Duration::from_secs(60));
        for bad in ["61s", "forever", "-1s"] {
            crate::error::assert_input(window(bad));
        }
    }
}
