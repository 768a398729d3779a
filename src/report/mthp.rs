//! The per-size THP counters (hugepages-<N>kB/stats/) and zswap's debugfs
//! counters of each case's median sample, under any workload's tables,
//! and a plain line where the kernel (or an unmounted debugfs) gave none.

use super::cells::names;
use super::export::{Align, Block, Layout, Table};
use crate::model::{Run, Sample};
use crate::monitor::{mthp, zswap};

/// "mthp.64kB.anon_fault_alloc" -> "64kB anon_fault_alloc";
/// "zswap.stored_pages" -> "zswap stored_pages"; others -> None.
fn label(key: &str) -> Option<String> {
    if let Some(rest) = key.strip_prefix(mthp::PREFIX) {
        let (size, name) = rest.split_once('.')?;
        return Some(format!("{size} {name}"));
    }
    key.strip_prefix(zswap::PREFIX)
        .map(|name| format!("zswap {name}"))
}

/// The sample's non-zero per-size THP and zswap deltas, labelled.
pub fn entries(s: &Sample) -> Vec<(String, i64)> {
    s.vmstat
        .iter()
        .filter(|(_, v)| **v != 0)
        .filter_map(|(k, v)| Some((label(k)?, *v)))
        .collect()
}

/// Whether the run is about THP: it set a per-size THP knob, its
/// workload measures THP, or it asked for THP (`--thp` other than never).
fn about_thp(run: &Run) -> bool {
    let per_size = run.meta.knobs["values"].as_object().is_some_and(|v| {
        v.keys().any(|k| {
            crate::knobs::registry::find(k).is_some_and(crate::knobs::registry::per_size_thp)
        })
    });
    let asked = run.meta.config["thp"]
        .as_str()
        .is_some_and(|t| t != "never");
    per_size
        || asked
        || crate::workload::find(&run.meta.workload)
            .is_some_and(|s| s.measures_knobs.contains(&"thp"))
}

/// Whether any measured sample counted one of `counters` (vmstat) > 0.
fn counted(run: &Run, counters: &[&str]) -> bool {
    run.cases.iter().flat_map(|c| c.measured()).any(|s| {
        counters
            .iter()
            .any(|k| s.vmstat.get(*k).is_some_and(|v| *v > 0))
    })
}

/// The table (when any case has such counters) and the plain lines.
pub fn blocks(run: &Run) -> Vec<Block> {
    let figure = run.meta.figures.first().map(|f| f.name.as_str());
    let mut rows = Vec::new();
    for cs in &run.cases {
        let Some((s, _)) = figure.and_then(|f| super::median_sample(cs, f)) else {
            continue;
        };
        for (name, v) in entries(s) {
            rows.push(vec![
                cs.case.variant.clone(),
                cs.case.tasks.to_string(),
                name,
                v.to_string(),
            ]);
        }
    }
    let mut out = Vec::new();
    let had_rows = !rows.is_empty();
    if had_rows {
        use Align::{Left as L, Right as R};
        out.push(Block::Blank);
        out.push(Block::Table(Table {
            title: "Per-size THP and zswap counters of each case's median sample (deltas)".into(),
            header: vec![names(&["case", "Thr", "counter", "delta"])],
            align: vec![L, R, L, R],
            rows,
            layout: Some(Layout::spaced(&[23, 3, 34, 12])),
        }));
    }
    let m = &run.meta.machine;
    let mut lines = String::new();
    // A run stored before these fields existed says nothing of them.
    if m.get("zswap_debugfs").is_some() {
        let has_stats = m["thp_stats_sizes"]
            .as_array()
            .is_some_and(|a| !a.is_empty());
        if !has_stats && about_thp(run) {
            lines.push_str(&format!(
                "per-size THP: Linux {} has no hugepages-<N>kB/stats/ counters (they \
                 need Linux 6.10+, per-size THP itself 6.8+), so none are shown\n",
                m["kernel_release"].as_str().unwrap_or("?")
            ));
        } else if has_stats && about_thp(run) && !had_rows {
            lines.push_str("per-size THP: every hugepages-<N>kB/stats/ counter stayed 0\n");
        }
        if counted(run, &["pswpout", "zswpout"]) {
            let debugfs = m["zswap_debugfs"].as_bool();
            let zswap_rows = run
                .cases
                .iter()
                .flat_map(|c| c.measured())
                .any(|s| s.vmstat.keys().any(|k| k.starts_with(zswap::PREFIX)));
            let stored = counted(run, &["zswpout"]);
            let line = match zswap::missing_line(debugfs) {
                None if stored && !zswap_rows => Some(zswap::LEVELS_LINE),
                l => l,
            };
            if let Some(l) = line {
                lines.push_str(l);
                lines.push('\n');
            }
        }
    }
    if !lines.is_empty() {
        out.push(Block::Blank);
        out.push(Block::Paragraph(crate::text::wrap(&lines, 78)));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Better;
    use crate::model::build::{case, run, sample};
    use crate::report::export::text;

    /// The report of a swap run with `vmstat` in its one sample, on a
    /// machine whose zswap debugfs was `debugfs` at the run's start.
    fn report(debugfs: bool, vmstat: &[(&str, i64)]) -> String {
        let s = vmstat
            .iter()
            .fold(sample().figure("throughput", 1.0), |s, (k, v)| {
                s.vmstat(k, *v)
            });
        let machine = serde_json::json!({
            "zswap_debugfs": debugfs,
            "thp_stats_sizes": ["64kB"],
            "kernel_release": "6.12.118",
        });
        let r = run("vms")
            .figure("throughput", "KB/s", Better::Higher, true)
            .machine(machine)
            .case(case(2, "swap-w-seq").sample(s))
            .build();
        text::blocks(&blocks(&r))
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
    }

    #[test]
    fn zswap_counters_shown_or_why_none_moved() {
        let moved = report(true, &[("zswpout", 40), ("zswap.stored_pages", 7)]);
        assert!(moved.contains("zswap stored_pages 7"), "{moved}");
        assert!(
            !moved.contains("no /sys/kernel/debug/zswap counter"),
            "{moved}"
        );
        let still = report(true, &[("zswpout", 40)]);
        assert!(
            still.contains("no /sys/kernel/debug/zswap counter moved"),
            "{still}"
        );
        assert!(still.contains("are levels"), "{still}");
        // Swapped to the device only: zswap stored nothing, nothing to say.
        let device = report(true, &[("pswpout", 16)]);
        assert!(!device.contains("zswap"), "{device}");
        let unmounted = report(false, &[("zswpout", 40)]);
        assert!(unmounted.contains("debugfs is not mounted"), "{unmounted}");
    }
}
