//! Per-task tables past a screenful (colour with 512 tasks): one row per
//! NUMA node of the tasks' CPUs (per package without nodes, one row for
//! all without a topology) with the count of tasks and the min / median /
//! max of one figure and its worst task, then the same over all tasks, so
//! the text stays a screen in 80 columns. JSON, CSV and the HTML report
//! keep every task of every sample.

use std::collections::BTreeMap;

use super::cells::names;
use super::export::{Align, Block, Layout, Table};
use crate::machine::Snapshot;

/// Tables of more rows than this are summarised.
pub const SCREEN_ROWS: usize = 24;

/// One task of the table: its index, its CPU (if pinned), its value.
#[derive(Debug, Clone, Copy)]
pub struct Task {
    pub index: usize,
    pub cpu: Option<usize>,
    pub value: f64,
}

/// The summarised figure: its name, digits, and which end is worse.
#[derive(Debug, Clone, Copy)]
pub struct Figure<'a> {
    pub name: &'a str,
    pub digits: usize,
    pub lower_is_worse: bool,
}

/// The machine a stored run was taken on, if it was recorded.
pub fn machine_of(run: &crate::model::Run) -> Option<Snapshot> {
    serde_json::from_value(run.meta.machine.clone()).ok()
}

/// The summary table of `tasks` under `title`.
pub fn summarise(title: String, tasks: &[Task], m: Option<&Snapshot>, fig: Figure) -> Block {
    let (unit, key) = grouping(m);
    let mut groups: BTreeMap<Option<usize>, Vec<Task>> = BTreeMap::new();
    for t in tasks.iter().filter(|t| t.value.is_finite()) {
        groups.entry(t.cpu.and_then(&key)).or_default().push(*t);
    }
    let mut rows: Vec<Vec<String>> = groups
        .iter()
        .map(|(g, ts)| {
            let label = match g {
                Some(g) => format!("{unit} {g}"),
                None => "unpinned".into(),
            };
            row(label, ts, fig)
        })
        .collect();
    if groups.len() > 1 {
        let all: Vec<Task> = groups.into_values().flatten().collect();
        rows.push(row("all".into(), &all, fig));
    }
    Block::Table(Table {
        title,
        header: vec![names(&[
            "group",
            "tasks",
            "min",
            "median",
            "max",
            "worst task",
            "cpu",
        ])],
        align: Align::runs(&[(Align::Left, 1), (Align::Right, 6)]),
        rows,
        layout: Some(Layout::spaced(&[9, 6, 9, 9, 9, 11, 5])),
    })
}

/// A CPU's group (its node or package).
type GroupOf<'a> = Box<dyn Fn(usize) -> Option<usize> + 'a>;

/// What the rows group by: node, else package, else nothing.
fn grouping(m: Option<&Snapshot>) -> (&'static str, GroupOf<'_>) {
    match m {
        Some(m) if m.nodes.len() > 1 => ("node", Box::new(move |c| m.node_of(c))),
        Some(m) if m.packages().len() > 1 => (
            "package",
            Box::new(move |c| m.cpu(c).and_then(|c| c.package)),
        ),
        _ => ("all", Box::new(|_| Some(0))),
    }
}

fn row(label: String, ts: &[Task], fig: Figure) -> Vec<String> {
    let mut v: Vec<f64> = ts.iter().map(|t| t.value).collect();
    v.sort_by(f64::total_cmp);
    let worst = if fig.lower_is_worse {
        ts.iter().min_by(|a, b| a.value.total_cmp(&b.value))
    } else {
        ts.iter().max_by(|a, b| a.value.total_cmp(&b.value))
    };
    let d = fig.digits;
    let f = |x: f64| format!("{x:.d$}");
    vec![
        label,
        ts.len().to_string(),
        v.first().map(|&x| f(x)).unwrap_or_default(),
        f(crate::stats::summary::median(&v)),
        v.last().map(|&x| f(x)).unwrap_or_default(),
        worst
            .map(|w| format!("{} {}", w.index, f(w.value)))
            .unwrap_or_default(),
        worst
            .and_then(|w| w.cpu)
            .map(|c| c.to_string())
            .unwrap_or_else(|| "-".into()),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tasks_are_grouped_by_the_node_of_their_cpu() {
        let m = Snapshot::fake(2, 256, 512);
        let tasks: Vec<Task> = (0..512)
            .map(|i| Task {
                index: i,
                cpu: Some(i),
                value: if i == 300 { 0.5 } else { 1.0 },
            })
            .collect();
        let fig = Figure {
            name: "frac",
            digits: 2,
            lower_is_worse: true,
        };
        let Block::Table(t) = summarise("x".into(), &tasks, Some(&m), fig) else {
            panic!("a table");
        };
        assert_eq!(t.rows.len(), 3, "two nodes and all");
        assert_eq!(t.rows[1][0], "node 1");
        assert_eq!(t.rows[1][1], "256");
        assert_eq!(t.rows[1][5], "300 0.50");
        assert_eq!(t.rows[2][1], "512");
        let text = crate::report::export::text::blocks(&[Block::Table(t)]);
        assert!(text.lines().all(|l| l.chars().count() <= 80), "{text}");
    }
}
