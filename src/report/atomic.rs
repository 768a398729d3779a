//! The atomic report: ns per increment (per task) and total increments per
//! second by counter and task count, scaling from 1 task to the most, the
//! hand-off cost the shared counter implies, and the count check.

use super::cells;
use super::export::{Align, Block, Layout, Table};
use crate::model::{CaseSamples, Run};
use crate::workload::atomic::Stored;
use crate::workload::stored::view;

const ORDER: &[(&str, &str)] = &[
    ("shared", "one atomic counter for all tasks (lock xadd)"),
    ("folded", "per-task line, folded into a global every K"),
    ("packed", "per-task counters packed in one line"),
    ("locked", "lock xadd on the task's own line"),
    ("plain", "plain increment of the task's own line"),
];

fn case<'a>(run: &'a Run, variant: &str, tasks: usize) -> Option<&'a CaseSamples> {
    run.cases
        .iter()
        .find(|c| c.case.variant == variant && c.case.tasks == tasks)
}

pub fn blocks(run: &Run) -> Vec<Block> {
    let variants: Vec<&str> = ORDER
        .iter()
        .map(|v| v.0)
        .filter(|v| run.cases.iter().any(|c| c.case.variant == *v))
        .collect();
    let mut tasks: Vec<usize> = run.cases.iter().map(|c| c.case.tasks).collect();
    tasks.sort_unstable();
    tasks.dedup();
    let cfg: Stored = view(&run.meta.config);
    let mut out = format!(
        "atomic: the cost of counting, {} mode, {} increments per task,\n\
         fold every {}; {}\n",
        cfg.mode,
        cfg.ops,
        cfg.fold,
        cells::medians_of(run),
    );
    for (v, what) in ORDER.iter().filter(|v| variants.contains(&v.0)) {
        out.push_str(&format!("  {v:<7} {what}\n"));
    }
    let mut out = vec![Block::Paragraph(out)];
    let table = |title: &str, figure: &str, scale: f64, prec: usize| {
        let mut header = vec!["Thr".to_string()];
        header.extend(variants.iter().map(|v| v.to_string()));
        let rows = tasks
            .iter()
            .map(|&t| {
                let mut row = vec![t.to_string()];
                row.extend(variants.iter().map(|v| {
                    case(run, v, t)
                        .and_then(|c| cells::median(c, figure))
                        .map(|x| format!("{:.prec$}", x / scale))
                        .unwrap_or_else(|| "-".into())
                }));
                row
            })
            .collect();
        Block::Table(Table {
            title: title.into(),
            header: vec![header],
            align: vec![Align::Right; variants.len() + 1],
            rows,
            layout: Some(Layout::label_and(4, variants.len(), 10)),
        })
    };
    out.push(Block::Blank);
    out.push(table("ns per increment, per task:", "ns/op", 1.0, 2));
    out.push(Block::Blank);
    out.push(table(
        "million increments per second, all tasks:",
        "ops/s",
        1e6,
        1,
    ));
    if let (Some(&first), Some(&last)) = (tasks.first(), tasks.last())
        && last > first
    {
        let mut s = format!("\nscaling, ops/s at {last} tasks / ops/s at {first}:\n ");
        for v in &variants {
            let r = |t| case(run, v, t).and_then(|c| cells::median(c, "ops/s"));
            if let (Some(a), Some(b)) = (r(first), r(last))
                && a > 0.0
            {
                s.push_str(&format!(" {v} {:.2}x", b / a));
            }
        }
        s.push('\n');
        out.push(Block::Paragraph(s));
    }
    let h = handoff(run, &tasks);
    if !h.is_empty() {
        out.push(Block::Paragraph(h));
    }
    out.push(Block::Paragraph(count_check(run)));
    out
}

/// With T >= 2 tasks on one counter, increments are serialised and each
/// needs the line to move: wall per increment less the uncontended cost.
fn handoff(run: &Run, tasks: &[usize]) -> String {
    let base = case(run, "locked", 1).and_then(|c| cells::median(c, "ns/op"));
    let mut s = String::new();
    for &t in tasks.iter().filter(|&&t| t >= 2) {
        let Some(c) = case(run, "shared", t) else {
            continue;
        };
        let Some(rate) = cells::median(c, "ops/s").filter(|r| *r > 0.0) else {
            continue;
        };
        let per = 1e9 / rate;
        s.push_str(&format!(
            "  {t} tasks: {per:.1} ns per serialised increment{}\n",
            base.map(|b| format!(
                "\n    - {b:.1} ns uncontended lock xadd = {:.1} ns per hand-off",
                per - b
            ))
            .unwrap_or_default()
        ));
    }
    if s.is_empty() {
        return s;
    }
    format!("\nimplied cost of one cache-line hand-off (shared counter):\n{s}")
}

fn count_check(run: &Run) -> String {
    let mut bad = String::new();
    let mut samples = 0;
    for c in &run.cases {
        for s in c.measured().chain(c.samples.iter().filter(|s| s.warmup)) {
            samples += 1;
            let f = |k: &str| s.data.figures.get(k).copied().unwrap_or(f64::NAN);
            if f("counted") != f("increments") {
                bad.push_str(&format!(
                    "warning: {} with {} tasks, sample {}: counter reads {:.0}, tasks made {:.0} \
                     increments\n",
                    c.case.variant,
                    c.case.tasks,
                    s.seq,
                    f("counted"),
                    f("increments")
                ));
            }
        }
    }
    if bad.is_empty() {
        format!(
            "\ncount check: every counter read back equals the increments made ({samples} samples)\n"
        )
    } else {
        format!("\n{bad}")
    }
}
