//! The vms report: per vm-scalability case, `throughput` (KB/s summed over
//! tasks) as vmscale's median with its 95 % interval and as the 0-day
//! robot's `vm-scalability.throughput` (the mean over samples), then the
//! kernel's account of the median sample: /proc/vmstat deltas and the
//! case cgroup's memory.stat and memory.events, with mmtests' reclaim
//! efficiency (steal / scan) and scan rate.

use super::cells::{FLAGGED_ROW, any_flagged, names};
use super::export::{Align, Block, Layout, Table};
use crate::model::{Run, Sample};
use crate::stats::stopping::sig4;
use crate::workload::stored::view;
use crate::workload::vms::Stored;

/// The vmstat counters each case is explained by, in print order; a name
/// ending in `*` sums every counter it begins (allocstall_dma, ...).
pub const COUNTERS: &[&str] = &[
    "pgscan_kswapd",
    "pgscan_direct",
    "pgsteal_kswapd",
    "pgsteal_direct",
    "pgscan_anon",
    "pgscan_file",
    "pgsteal_anon",
    "pgsteal_file",
    "allocstall*",
    "pgrefill",
    "workingset_refault*",
    "pgmajfault",
    "pswpin",
    "pswpout",
    "zswpin",
    "zswpout",
    "zswpwb",
    "thp_fault_alloc",
    "thp_fault_fallback",
    "compact_stall",
    "compact_fail",
    "compact_success",
    "pgmigrate_success",
    "pgmigrate_fail",
    "unevictable_pgs_mlocked",
];

use crate::workload::vms::{KSM, MEMCG, MIGRATE};

fn counter(s: &Sample, name: &str) -> i64 {
    match name.strip_suffix('*') {
        Some(prefix) => s
            .vmstat
            .iter()
            .filter(|(k, _)| k.starts_with(prefix))
            .map(|(_, v)| *v)
            .sum(),
        None => s.vmstat.get(name).copied().unwrap_or(0),
    }
}

/// Pages scanned and stolen by all reclaim. Since Linux 5.8 the `_anon`
/// and `_file` counters also count a cgroup's reclaim at its limit,
/// which `_kswapd` and `_direct` leave out; older kernels have only those.
fn reclaimed(s: &Sample) -> (f64, f64) {
    let sum = |a: &str, b: &str| (counter(s, a) + counter(s, b)) as f64;
    let all = sum("pgscan_anon", "pgscan_file");
    if all > 0.0 {
        (all, sum("pgsteal_anon", "pgsteal_file"))
    } else {
        (
            sum("pgscan_kswapd", "pgscan_direct"),
            sum("pgsteal_kswapd", "pgsteal_direct"),
        )
    }
}

fn headline(run: &Run) -> Block {
    super::robot_mean::table(
        run,
        "throughput",
        "throughput (KB/s, summed over tasks) per case".into(),
        "case",
        &[23, 3, 3, 10, 23, 10, 0],
    )
}

fn explain(run: &Run) -> Block {
    let mut rows = Vec::new();
    for cs in &run.cases {
        let Some((s, _)) = super::median_sample(cs, "throughput") else {
            continue;
        };
        let wall = s.data.figures.get("wall").copied().unwrap_or(f64::NAN);
        // (counter, value, whether a per-second rate means anything)
        let mut entries: Vec<(String, String, bool, f64)> = Vec::new();
        for name in COUNTERS {
            let v = counter(s, name);
            if v != 0 {
                let v = v as f64;
                entries.push((name.trim_end_matches('*').into(), sig4(v), true, v));
            }
        }
        let (scan, steal) = reclaimed(s);
        if scan > 0.0 {
            let eff = format!("{:.1}", 100.0 * steal / scan);
            entries.push(("reclaim efficiency %".into(), eff, false, 0.0));
        }
        for (k, v) in &s.data.figures {
            let extra = [MEMCG, KSM, MIGRATE].iter().find_map(|p| k.strip_prefix(p));
            if let Some(name) = extra
                && *v != 0.0
            {
                let prefix = k.split('.').next().unwrap_or("");
                entries.push((format!("{prefix} {name}"), sig4(*v), true, *v));
            }
        }
        for (name, value, rated, v) in entries {
            let rate = if rated && wall > 0.0 {
                sig4(v / wall)
            } else {
                String::new()
            };
            rows.push(vec![
                cs.case.variant.clone(),
                cs.case.tasks.to_string(),
                name,
                value,
                rate,
            ]);
        }
    }
    use Align::{Left as L, Right as R};
    Block::Table(Table {
        title: "Kernel counters of each case's median sample (vmstat and memcg deltas)".into(),
        header: vec![names(&["case", "Thr", "counter", "delta", "per s"])],
        align: vec![L, R, L, R, R],
        rows,
        layout: Some(Layout::spaced(&[23, 3, 30, 10, 10])),
    })
}

pub fn blocks(run: &Run) -> Vec<Block> {
    let cfg: Stored = view(&run.meta.config);
    let mut intro = String::from("vms: vm-scalability's cases, run natively by vmscale\n");
    if let Some(r) = cfg.runtime_s {
        intro.push_str(&format!("runtime {r} s per sample at most\n"));
    }
    for p in &cfg.plans {
        let file = if p.amount.file > 0 {
            format!(", file {}", crate::units::size(p.amount.file))
        } else {
            String::new()
        };
        intro.push_str(&format!(
            " {} ({}) x{}: {} per task{file}\n",
            p.case,
            p.family,
            p.tasks,
            crate::units::size(p.amount.per_task)
        ));
    }
    let mut notes = String::new();
    if any_flagged(run) {
        notes.push_str(FLAGGED_ROW);
    }
    notes.push_str(concat!(
        "median and 95% CI: vmscale's centre of the samples; 0-day mean:\n",
        "vm-scalability.throughput as the robot reports it (the mean of the\n",
        "per-sample sums). Counters are system-wide deltas, those not listed 0;\n",
        "reclaim efficiency = pgsteal / pgscan (mmtests; _anon + _file, which\n",
        "count a cgroup's reclaim too); per s: over the wall time.\n",
    ));
    vec![
        Block::Paragraph(intro),
        headline(run),
        explain(run),
        Block::Paragraph(notes),
    ]
}
