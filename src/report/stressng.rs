//! The stress-ng report: per instance count, stress-ng's bogo-ops/s under
//! the robot's name (`stress-ng.STRESSOR.ops_per_sec`), its spread, and the
//! harness's counters of the median sample beside it: the child tree's
//! times and faults, and the main /proc/vmstat deltas.

use super::cells::{FLAGGED_ROW, any_flagged, flag, names};
use super::export::{Align, Block, Layout, Table};
use crate::model::Run;
use crate::stats::summary::summarise;
use crate::workload::stored::view;
use crate::workload::stressng::Stored;

/// The vmstat deltas shown, as the kernel names them.
const VMSTAT: [&str; 4] = ["pgfault", "pgmajfault", "thp_fault_alloc", "pgfree"];

pub fn blocks(run: &Run) -> Vec<Block> {
    let cfg: Stored = view(&run.meta.config);
    let stressor = cfg.stressor.unwrap_or_else(|| "?".into());
    let mut args = format!(
        "--{stressor} N --timeout {}",
        cfg.timeout_s.map_or("?".into(), |t| t.to_string())
    );
    if cfg.pathological == Some(true) {
        args.push_str(" --pathological");
    }
    if !cfg.options.is_empty() {
        args.push(' ');
        args.push_str(&crate::parse::shell_words(&cfg.options));
    }
    let head = format!(
        "stress-ng {} {args}\nstress-ng.{stressor}.ops_per_sec: stress-ng's bogo-ops/s (real time)\n",
        cfg.version.as_deref().unwrap_or("?"),
    );
    let mut rows = Vec::new();
    let mut vm_rows = Vec::new();
    for cs in &run.cases {
        let values: Vec<f64> = cs.values("ops_per_sec").collect();
        let (Some(s), Some((median, _))) = (
            summarise(&values, true),
            crate::report::median_sample(cs, "ops_per_sec"),
        ) else {
            continue;
        };
        let f = |n: &str| median.data.figures.get(n).copied().unwrap_or(f64::NAN);
        let n = cs.case.tasks.to_string();
        rows.push(vec![
            n.clone(),
            s.n.to_string(),
            format!("{:.2}", s.median),
            format!("{:.2}", s.coeff_var),
            format!("{:.0}", f("bogo_ops")),
            format!("{:.2}", f("user")),
            format!("{:.2}", f("system")),
            format!("{:.0}", f("minflt")),
            flag(cs),
        ]);
        // A delta of 0 is not stored.
        let vm = VMSTAT.map(|k| median.vmstat.get(k).copied().unwrap_or(0).to_string());
        vm_rows.push([n].into_iter().chain(vm).collect());
    }
    let header = names(&[
        "N",
        "n",
        "ops_per_sec",
        "cv%",
        "bogo ops",
        "user s",
        "sys s",
        "minflt",
    ]);
    let mut out = vec![
        Block::Paragraph(head),
        Block::Table(Table {
            title: format!(
                "stress-ng.{stressor}.ops_per_sec by instances N (median; \
                 the tree's times and faults of the median sample)"
            ),
            header: vec![header],
            align: [Align::Right; 8].into_iter().chain([Align::Left]).collect(),
            rows,
            layout: Some(
                Layout::spaced(&[4, 3, 14, 7, 12, 8, 8, 12, 0])
                    .sep(8, "")
                    .untitled(),
            ),
        }),
    ];
    if any_flagged(run) {
        out.push(Block::Paragraph(FLAGGED_ROW.into()));
    }
    let mut vm_header = vec!["N"];
    vm_header.extend(VMSTAT);
    out.push(Block::Blank);
    out.push(Block::Table(Table {
        title: "vmstat deltas of the median sample".into(),
        header: vec![names(&vm_header)],
        align: vec![Align::Right; 5],
        rows: vm_rows,
        layout: Some(Layout::spaced(&[4, 12, 12, 16, 12])),
    }));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::build::{case, run, sample};
    use crate::report::export::text;

    #[test]
    fn the_robot_s_name_heads_the_median_and_the_tree_s_counters() {
        let r = run("stress-ng")
            .set("stressor", serde_json::json!("mmap"))
            .set("timeout_s", serde_json::json!(5))
            .set("version", serde_json::json!("0.15.06"))
            .set("options", serde_json::json!(["--mmap-bytes", "16M"]))
            .case(case(2, "mmap").samples(3, |i| {
                sample()
                    .figure("ops_per_sec", [10.0, 30.0, 20.0][i])
                    .figure("bogo_ops", [50.0, 150.0, 100.0][i])
                    .figure("minflt", 7.0)
                    .vmstat("pgfault", 9)
            }))
            .build();
        let out = text::blocks(&blocks(&r));
        assert!(
            out.starts_with("stress-ng 0.15.06 --mmap N --timeout 5 --mmap-bytes 16M\n"),
            "{out}"
        );
        assert!(out.contains("stress-ng.mmap.ops_per_sec"), "{out}");
        // The median sample's own figures: its bogo ops, not another's.
        let row = out
            .lines()
            .find(|l| l.trim_start().starts_with("2 "))
            .unwrap();
        let cells: Vec<&str> = row.split_whitespace().collect();
        assert_eq!(&cells[..3], ["2", "3", "20.00"], "{out}");
        assert_eq!(cells[4], "100", "{out}");
        assert!(out.contains("pgfault"), "{out}");
        assert!(out.lines().all(|l| l.chars().count() <= 80), "{out}");
    }
}
