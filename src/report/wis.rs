//! The will-it-scale tests' table: per mode and task count, the median
//! sample's operations per second, per task, faults per second and per
//! operation, and TLB shootdown interrupts per second (system-wide, from
//! /proc/interrupts), with the vmstat TLB counters where the kernel has them.

use super::cells::{FLAGGED_ROW, any_flagged, flag, names};
use super::export::{Align, Block, Layout, Table};
use crate::model::{Run, Sample};
use crate::workload::stored::view;
use crate::workload::wis::Stored;

fn fig(s: &Sample, name: &str) -> String {
    match s.data.figures.get(name) {
        Some(v) if v.is_finite() => format!("{v:.0}"),
        _ => "-".into(),
    }
}

pub fn blocks(run: &Run) -> Vec<Block> {
    let cfg: Stored = view(&run.meta.config);
    let test = cfg.test.as_deref().unwrap_or("?");
    let named = crate::workload::wis::Test::named(test);
    let about = named.map_or(String::new(), |t| t.about());
    let alone = match named {
        Some(t) if t.processes_only() => {
            format!("{test} {}\n", crate::workload::wis::PROCESSES_ONLY)
        }
        _ => String::new(),
    };
    let size = cfg
        .size
        .map(crate::units::size)
        .unwrap_or_else(|| "?".into());
    let secs = cfg.secs.unwrap_or(f64::NAN);
    let mut out = vec![Block::Paragraph(format!(
        "wis {test}: {about}\n{size} per loop, {secs} s per sample\n{alone}"
    ))];
    let mut rows = Vec::new();
    let mut tlb = String::new();
    for cs in &run.cases {
        let Some((s, reps)) = crate::report::median_sample(cs, "ops/s") else {
            continue;
        };
        let per_op = s
            .data
            .figures
            .get("faults/op")
            .map_or("-".into(), |v| format!("{v:.3}"));
        rows.push(vec![
            cs.case.variant.clone(),
            cs.case.tasks.to_string(),
            reps.to_string(),
            fig(s, "ops/s"),
            fig(s, "ops/s/task"),
            fig(s, "faults/s"),
            per_op,
            fig(s, "shootdowns/s"),
            flag(cs),
        ]);
        let counters: Vec<String> = s
            .vmstat
            .iter()
            .filter(|(k, _)| k.starts_with("nr_tlb"))
            .map(|(k, v)| format!("{k} {v}"))
            .collect();
        if !counters.is_empty() {
            tlb.push_str(&format!(
                " {} {}: {}\n",
                cs.case.variant,
                cs.case.tasks,
                counters.join(", ")
            ));
        }
    }
    let mut align = vec![Align::Left];
    align.extend([Align::Right; 7]);
    align.push(Align::Left);
    out.push(Block::Table(Table {
        title: format!("{test}: operations and faults per second by mode and task count"),
        header: vec![names(&[
            "mode",
            "Thr",
            "Rep",
            "ops/s",
            "ops/s/task",
            "faults/s",
            "faults/op",
            "shootdn/s",
        ])],
        align,
        rows,
        layout: Some(
            Layout::spaced(&[8, 3, 3, 12, 12, 12, 9, 9, 0])
                .sep(0, " ")
                .sep(8, "")
                .with_header(
                    " mode     Thr Rep        ops/s   ops/s/task     faults/s faults/op shootdn/s\n",
                ),
        ),
    }));
    let mut notes = String::new();
    if any_flagged(run) {
        notes.push_str(FLAGGED_ROW);
    }
    notes.push_str(
        "shootdn/s: TLB shootdown interrupts of all CPUs (/proc/interrupts) per second\n",
    );
    if !tlb.is_empty() {
        notes.push_str("vmstat TLB counters (median sample):\n");
        notes.push_str(&tlb);
    }
    out.push(Block::Paragraph(notes));
    out
}
