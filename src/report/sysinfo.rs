//! `vmscale sysinfo` as text: the machine snapshot in 80 columns, with
//! "unknown" wherever the machine did not say.

use crate::machine::{Snapshot, cpulist};
use crate::text::{clip, fold};
use crate::units::memory_kib;
use std::fmt::Display;
use std::fmt::Write as _;

const WIDTH: usize = 80;
/// Column where values start after a section label.
const LABEL: usize = 14;

/// Renders the snapshot as the plain-text `sysinfo` report.
pub fn text(s: &Snapshot) -> String {
    let mut out = String::new();
    cpus(&mut out, s);
    nodes(&mut out, s);
    caches(&mut out, s);
    pages(&mut out, s);
    kernel(&mut out, s);
    memory(&mut out, s);
    out
}

fn cpus(out: &mut String, s: &Snapshot) {
    let value = if s.cpus.is_empty() {
        "unknown".to_string()
    } else {
        let cores = s.cores();
        let packages = s.packages();
        let dies = s.dies();
        // Dies only where a package has more than one.
        let dies = if dies.len() > packages.len() {
            format!(", {} dies", dies.len())
        } else {
            String::new()
        };
        format!(
            "{} online, {} cores, {} threads/core, {} packages{dies}",
            s.cpus.len(),
            count(cores.len()),
            opt(s.smt_per_core()),
            count(packages.len()),
        )
    };
    line(out, "CPUs", &value);
    line(out, "CPU model", &opt(s.cpu_model.as_ref()));
}

fn nodes(out: &mut String, s: &Snapshot) {
    if s.nodes.is_empty() {
        line(out, "NUMA nodes", "unknown");
        return;
    }
    line(out, "NUMA nodes", &s.nodes.len().to_string());
    let head = format!("  {:>4}  {:>10}  {:>10}  ", "node", "memory", "free");
    let _ = writeln!(out, "{head}CPUs");
    for n in &s.nodes {
        let first = format!(
            "  {:>4}  {:>10}  {:>10}  ",
            n.id,
            opt(n.mem_total_kib.map(memory_kib)),
            opt(n.mem_free_kib.map(memory_kib)),
        );
        if n.cpus.is_empty() {
            let _ = writeln!(out, "{first}none (memory only)");
        } else {
            let list = cpulist::format(&n.cpus);
            let tokens: Vec<&str> = list.split(',').collect();
            out.push_str(&wrap(&tokens, ",", &first, head.len()));
        }
    }
    distances(out, s);
}

/// `tokens` after `first` joined by `sep` and folded to WIDTH, continuation
/// lines indented by `indent` spaces; each line ends in a newline.
fn wrap(tokens: &[&str], sep: &str, first: &str, indent: usize) -> String {
    let rest = " ".repeat(indent);
    fold(tokens, sep, WIDTH, first, &rest)
        .into_iter()
        .map(|l| l + "\n")
        .collect()
}

/// The node distance table (from row to column), as numactl prints it.
fn distances(out: &mut String, s: &Snapshot) {
    let n = s.nodes.len();
    if n < 2 || s.nodes.iter().any(|node| node.distances.len() != n) {
        return;
    }
    let head: String = s
        .nodes
        .iter()
        .map(|node| format!("{:>5}", node.id))
        .collect();
    if 8 + head.len() > WIDTH {
        let _ = writeln!(out, "  distances: {n} x {n}, see sysinfo --json");
        return;
    }
    let _ = writeln!(out, "  distance (from row to column)");
    let _ = writeln!(out, "  {:>4}  {head}", "");
    for node in &s.nodes {
        let row: String = node.distances.iter().map(|d| format!("{d:>5}")).collect();
        let _ = writeln!(out, "  {:>4}  {row}", node.id);
    }
}

fn caches(out: &mut String, s: &Snapshot) {
    let levels = s.cache_levels();
    if levels.is_empty() {
        line(out, "Caches", "unknown");
        return;
    }
    line(out, "Caches", "");
    let head = format!(
        "  {:<5} {:<11} {:>6} {:>5} {:>5} {:>7} {:>9}  ",
        "level", "type", "size", "ways", "line", "sets", "instances"
    );
    let _ = writeln!(out, "{head}shared by");
    let mut mixed = false;
    for level in &levels {
        let (l, uniform) = (&level.first, level.uniform);
        mixed |= !uniform;
        let size = format!(
            "{}{}",
            opt(l.size_bytes.map(bytes)),
            if uniform { "" } else { "*" }
        );
        let row = format!(
            "  {:<5} {:<11} {:>6} {:>5} {:>5} {:>7} {:>9}  ",
            format!("L{}", l.level),
            l.kind,
            size,
            opt(l.ways),
            opt(l.line_size),
            opt(l.sets),
            level.instances,
        );
        let room = WIDTH.saturating_sub(row.len());
        let _ = writeln!(out, "{row}{}", clip(&cpulist::format(&l.shared_cpus), room));
    }
    if mixed {
        let _ = writeln!(out, "  * instances differ; the first is shown");
    }
}

fn pages(out: &mut String, s: &Snapshot) {
    let huge = if s.huge_page_sizes.is_empty() {
        "unknown".to_string()
    } else {
        let sizes: Vec<String> = s.huge_page_sizes.iter().map(|&b| bytes(b)).collect();
        sizes.join(", ")
    };
    line(
        out,
        "Pages",
        &format!(
            "base {}; hugetlb {huge}; THP PMD {}",
            opt(s.page_size.map(bytes)),
            opt(s.thp_pmd_size.map(bytes)),
        ),
    );
    line(
        out,
        "THP",
        &format!(
            "enabled {}, defrag {}",
            opt(s.thp_enabled.as_ref()),
            opt(s.thp_defrag.as_ref())
        ),
    );
}

fn kernel(out: &mut String, s: &Snapshot) {
    line(out, "Kernel", &opt(s.kernel_release.as_ref()));
    match &s.kernel_cmdline {
        Some(cmdline) if !cmdline.is_empty() => {
            let tokens: Vec<&str> = cmdline.split_whitespace().collect();
            let first = format!("{:<LABEL$}", "Command line");
            out.push_str(&wrap(&tokens, " ", &first, LABEL));
        }
        Some(_) => line(out, "Command line", "(empty)"),
        None => line(out, "Command line", "unknown"),
    }
    let name_width = s.sysctls.keys().map(String::len).max().unwrap_or(0);
    let mut label = "Sysctls";
    for (name, value) in &s.sysctls {
        line(
            out,
            label,
            &format!("{name:<name_width$} = {}", opt(value.as_ref())),
        );
        label = "";
    }
    let hypervisor = match (&s.hypervisor, s.hypervisor_present) {
        (Some(name), _) => name.clone(),
        (None, Some(true)) => "present".to_string(),
        (None, Some(false)) => "none".to_string(),
        (None, None) => "unknown".to_string(),
    };
    line(out, "Hypervisor", &hypervisor);
}

fn memory(out: &mut String, s: &Snapshot) {
    line(
        out,
        "Memory",
        &format!(
            "{} total, {} available",
            opt(s.mem_total_kib.map(memory_kib)),
            opt(s.mem_available_kib.map(memory_kib)),
        ),
    );
    let llc = match s.llc() {
        Some(c) => format!("(L{}) {}", c.level, opt(s.llc_colours())),
        None => "unknown".to_string(),
    };
    line(
        out,
        "Page colours",
        &format!("LLC {llc}, L2 {}", opt(s.l2_colours())),
    );
}

/// One "Label        value" line.
fn line(out: &mut String, label: &str, value: &str) {
    let _ = writeln!(out, "{}", format!("{label:<LABEL$}{value}").trim_end());
}

/// The value or "unknown".
fn opt<T: Display>(v: Option<T>) -> String {
    v.map_or_else(|| "unknown".to_string(), |v| v.to_string())
}

/// A count that is unknown when zero (nothing was read).
fn count(n: usize) -> String {
    if n == 0 {
        "unknown".to_string()
    } else {
        n.to_string()
    }
}

/// Bytes in the sysfs style: "4K", "2M", "1G", or plain bytes.
pub fn bytes(b: u64) -> String {
    for (shift, unit) in [(30, "G"), (20, "M"), (10, "K")] {
        if b >= 1 << shift && b.is_multiple_of(1 << shift) {
            return format!("{}{unit}", b >> shift);
        }
    }
    format!("{b}B")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn byte_units() {
        assert_eq!(bytes(4096), "4K");
        assert_eq!(bytes(2 << 20), "2M");
        assert_eq!(bytes(1 << 30), "1G");
        assert_eq!(bytes(1536 << 10), "1536K");
        assert_eq!(bytes(100), "100B");
    }

    #[test]
    fn empty_snapshot_is_unknown() {
        let t = text(&Snapshot::default());
        assert!(t.contains("CPUs          unknown"), "{t}");
        assert!(t.contains("Hypervisor    unknown"), "{t}");
        assert!(t.lines().all(|l| l.len() <= WIDTH));
    }
}
