//! The will-it-scale tests' table: per mode and task count, the median
//! sample's operations per second, per task, faults per second and per
//! operation, and TLB shootdown interrupts per second (system-wide, from
//! /proc/interrupts), with the vmstat TLB counters where the kernel has them;
//! then ops per second a task as vmscale's median with its 95 % interval
//! and as the 0-day robot's `will-it-scale.per_thread_ops` or
//! `per_process_ops` (the mean over samples, as will-it-scale's average).

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
    let layout = match cfg.randomised {
        Some(false) => format!("{}\n", crate::workload::wis::FIXED_LAYOUT),
        Some(true) => "address space laid out at random (--aslr on, or run quick)\n".into(),
        None => String::new(),
    };
    let size = cfg
        .size
        .map(crate::units::size)
        .unwrap_or_else(|| "?".into());
    let secs = cfg.secs.unwrap_or(f64::NAN);
    let mut out = vec![Block::Paragraph(format!(
        "wis {test}: {about}\n{size} per loop, {secs} s per sample\n{alone}{layout}"
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
    out.push(robot(run));
    out.push(Block::Paragraph(
        concat!(
            "median and 95% CI: vmscale's centre of the samples; 0-day mean:\n",
            "will-it-scale.per_thread_ops or per_process_ops as the robot reports\n",
            "it (will-it-scale's average of its one-second totals, a task).\n",
        )
        .into(),
    ));
    out
}

/// Ops per second a task: vmscale's median and interval beside the robot's
/// mean, which differ where samples do (a file whose pages cost unlike
/// amounts, each sample covering another part of it).
fn robot(run: &Run) -> Block {
    super::robot_mean::table(
        run,
        "ops/s/task",
        "ops/s a task: vmscale's median, the robot's per_thread/process_ops".into(),
        "mode",
        &[8, 3, 3, 12, 27, 12, 0],
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::build::{case, run, sample};
    use crate::report::export::text;
    use serde_json::json;

    /// The robot's figure is the mean of the samples, not their median:
    /// samples of 10, 10, 40, 10 and 40 K ops/s a task print median 10 K
    /// and mean 22 K.
    #[test]
    fn the_robot_s_mean_stands_beside_the_median_a_task() {
        let per_task = [10e3, 10e3, 40e3, 10e3, 40e3];
        let c = case(2, "thread").samples(per_task.len(), |i| {
            sample()
                .figure("ops/s/task", per_task[i])
                .figure("ops/s", 2.0 * per_task[i])
        });
        let r = run("wis")
            .config(json!({"test": "tlb_flush3", "size": 1 << 27, "secs": 1.0}))
            .case(c)
            .build();
        let t = text::blocks(&blocks(&r));
        assert!(t.contains("per_thread/process_ops"), "{t}");
        let row: Vec<&str> = t
            .lines()
            .skip_while(|l| !l.contains("0-day mean"))
            .nth(1)
            .expect("a row under the robot's header")
            .split_whitespace()
            .collect();
        assert_eq!(row[..3], ["thread", "2", "5"], "{t}");
        assert_eq!(row[3], "10000", "the median: {t}");
        assert_eq!(row.last(), Some(&"22000"), "the mean: {t}");
        assert!(t.lines().all(|l| l.chars().count() <= 80), "{t}");
    }
}
