//! The lockfan report: operations per second by lock count K and task count
//! T, the speedup over K=1 at each T, and the lost-update check.

use super::cells;
use super::export::{Align, Block, Layout, Table};
use crate::model::Run;
use crate::workload::lockfan::Stored;
use crate::workload::lockfan::parse_variant;
use crate::workload::stored::view;

pub fn blocks(run: &Run) -> Vec<Block> {
    let mut tasks: Vec<usize> = run.cases.iter().map(|c| c.case.tasks).collect();
    tasks.sort_unstable();
    tasks.dedup();
    let mut kinds: Vec<&str> = Vec::new();
    let mut locks: Vec<usize> = Vec::new();
    for c in &run.cases {
        if let Some((kind, k)) = parse_variant(&c.case.variant) {
            if !kinds.contains(&kind) {
                kinds.push(kind);
            }
            if !locks.contains(&k) {
                locks.push(k);
            }
        }
    }
    locks.sort_unstable();
    let cfg: Stored = view(&run.meta.config);
    let out = format!(
        "lockfan: {} critical sections per task, each writing {} cache lines\n\
         under one of K locks; {} mode; {}\n\
         million ops/s (all tasks) at T tasks, and x: the speedup over K=1\n",
        cfg.ops,
        cfg.lines,
        cfg.mode,
        cells::medians_of(run),
    );
    let get = |kind: &str, k: usize, t: usize| {
        run.cases
            .iter()
            .find(|c| c.case.variant == format!("{kind}-{k}") && c.case.tasks == t)
            .and_then(|c| cells::median(c, "ops/s"))
    };
    let mut blocks = vec![Block::Paragraph(out)];
    // Four task counts fit 80 columns; more are split into further blocks.
    for (kind, tasks) in kinds
        .iter()
        .flat_map(|kind| tasks.chunks(4).map(move |ts| (kind, ts)))
    {
        let mut header = vec![format!("{kind:<6}  K")];
        let mut columns = vec![("", 9)];
        for t in tasks {
            header.push(format!("T={t}"));
            header.push("x".into());
            columns.extend([("", 10), ("", 7)]);
        }
        let rows = locks
            .iter()
            .map(|&k| {
                let mut row = vec![k.to_string()];
                for &t in tasks {
                    let v = get(kind, k, t);
                    let base = get(kind, 1, t);
                    row.push(v.map(|v| format!("{:.2}", v / 1e6)).unwrap_or("-".into()));
                    row.push(match (v, base) {
                        (Some(v), Some(b)) if b > 0.0 => format!("{:.2}", v / b),
                        _ => "-".into(),
                    });
                }
                row
            })
            .collect();
        blocks.push(Block::Blank);
        blocks.push(Block::Table(Table {
            title: format!(
                "{kind}: million ops/s at T = {} tasks by lock count K, x over K=1",
                tasks
                    .iter()
                    .map(|t| t.to_string())
                    .collect::<Vec<_>>()
                    .join(",")
            ),
            align: vec![Align::Right; header.len()],
            header: vec![header],
            rows,
            layout: Some(Layout::columns(columns).untitled()),
        }));
    }
    let lost = cells::max_over_run(run, "lost");
    let torn = cells::max_over_run(run, "torn locks");
    let samples: usize = run.cases.iter().map(|c| c.measured().count()).sum();
    blocks.push(Block::Paragraph(if lost == 0.0 && torn == 0.0 {
        format!(
            "\nlock check: no lost updates; every protected counter equals the operations\n\
             done under its lock ({samples} samples)\n"
        )
    } else {
        format!(
            "\nwarning: the locks lost updates: up to {lost:.0} increments lost, {torn:.0} locks \
             with disagreeing lines in a sample\n"
        )
    }));
    blocks
}
