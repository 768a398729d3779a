//! The mmap-lock table: fault rate of N faulting threads beside the
//! address-space change rate of M other threads, and the fault rate as a
//! share of the same N without changers.

use super::cells::{FLAGGED_ROW, any_flagged, flag, names};
use super::export::{Align, Block, Layout, Table};
use crate::model::Run;
use crate::workload::mmap_lock::Stored;
use crate::workload::stored::view;

pub fn blocks(run: &Run) -> Vec<Block> {
    let cfg: Stored = view(&run.meta.config);
    let size = cfg
        .size
        .map(crate::units::size)
        .unwrap_or_else(|| "?".into());
    let rate = cfg.rate.unwrap_or(f64::NAN);
    let rate = if rate == 0.0 {
        "unthrottled".to_string()
    } else {
        format!("{rate} cycles/s each")
    };
    let out = format!(
        "mmap-lock: N threads re-fault {size} each (write, MADV_DONTNEED);\n\
         M threads mmap/mprotect/munmap 64 KiB, {rate}\n"
    );
    let median = |variant: &str, tasks: usize| {
        run.cases
            .iter()
            .find(|c| c.case.variant == variant && c.case.tasks == tasks)
            .and_then(|c| crate::report::median_sample(c, "fault/s"))
    };
    let mut rows = Vec::new();
    for cs in &run.cases {
        let Some((s, reps)) = crate::report::median_sample(cs, "fault/s") else {
            continue;
        };
        let f = |n: &str| s.data.figures.get(n).copied().unwrap_or(f64::NAN);
        let base = median("m0", cs.case.tasks)
            .and_then(|(b, _)| b.data.figures.get("fault/s").copied())
            .filter(|b| *b > 0.0);
        rows.push(vec![
            cs.case.tasks.to_string(),
            cs.case.variant.trim_start_matches('m').to_string(),
            reps.to_string(),
            format!("{:.0}", f("fault/s")),
            format!("{:.0}", f("fault/s/task")),
            format!("{:.0}", f("changes/s")),
            base.map_or("-".into(), |b| format!("{:.3}", f("fault/s") / b)),
            flag(cs),
        ]);
    }
    let mut out = vec![
        Block::Paragraph(out),
        Block::Table(Table {
            title: "Faults of N threads beside M changers (median sample)".into(),
            header: vec![names(&[
                "N",
                "M",
                "Rep",
                "fault/s",
                "fault/s/task",
                "changes/s",
                "vs M=0",
            ])],
            align: [Align::Right; 7].into_iter().chain([Align::Left]).collect(),
            rows,
            layout: Some(
                Layout::spaced(&[4, 4, 3, 12, 12, 12, 7, 0])
                    .sep(7, "")
                    .with_header("   N    M Rep      fault/s fault/s/task    changes/s  vs M=0\n"),
            ),
        }),
    ];
    if any_flagged(run) {
        out.push(Block::Paragraph(FLAGGED_ROW.into()));
    }
    out
}
