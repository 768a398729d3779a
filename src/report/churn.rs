//! The churn report (seed 004): zfod faults/s in total and per task, the
//! imbalance between tasks, and the per-interval totals.

use super::cells::names;
use super::export::{Align, Block, Layout, Table};
use crate::model::{Run, Sample};
use crate::workload::churn::Stored;
use crate::workload::stored::view;

fn fig(s: &Sample, k: &str) -> f64 {
    s.data.figures.get(k).copied().unwrap_or(f64::NAN)
}

pub fn blocks(run: &Run) -> Vec<Block> {
    let cfg: Stored = view(&run.meta.config);
    let about = format!(
        "churn: mmap/touch/munmap of {} per loop for {} s, {} mode\n",
        crate::units::size(cfg.chunk),
        cfg.secs,
        cfg.mode.as_deref().unwrap_or("?"),
    );
    let mut out = vec![Block::Paragraph(about)];
    let mut table = Table {
        title: "zfod faults per second by task count (median sample)".into(),
        header: vec![names(&[
            "Thr",
            "Rep",
            "zfod/s",
            "zfod/s/task",
            "task min",
            "task max",
            "max/min",
            "loops",
        ])],
        align: vec![Align::Right; 8],
        rows: Vec::new(),
        layout: Some(Layout::spaced(&[4, 3, 11, 12, 12, 12, 8, 10]).untitled()),
    };
    let mut series = String::new();
    for cs in &run.cases {
        let Some((s, reps)) = crate::report::median_sample(cs, "zfod/s") else {
            continue;
        };
        table.rows.push(vec![
            cs.case.tasks.to_string(),
            reps.to_string(),
            format!("{:.0}", fig(s, "zfod/s")),
            format!("{:.0}", fig(s, "zfod/s/task")),
            format!("{:.0}", fig(s, "task_min")),
            format!("{:.0}", fig(s, "task_max")),
            format!("{:.3}", fig(s, "imbalance")),
            format!("{:.0}", fig(s, "loops")),
        ]);
        let (faults, pages) = (fig(s, "faults"), fig(s, "pages"));
        if pages > 0.0 && ((faults - pages) / pages).abs() > 0.02 {
            // A note under its row: one cell spans the table.
            table.rows.push(vec![format!(
                "warning: {} tasks: {faults:.0} faults measured (rusage) for {pages:.0} pages touched",
                cs.case.tasks
            )]);
        }
        let pts: Vec<String> = (1..)
            .map_while(|i| {
                let t = s.data.figures.get(&format!("series/{i:03}/t"))?;
                let r = s.data.figures.get(&format!("series/{i:03}/rate"))?;
                Some(format!("{t:.2}s {r:.0}"))
            })
            .collect();
        if !pts.is_empty() {
            series.push_str(&format!("{:>4}: {}\n", cs.case.tasks, pts.join(", ")));
        }
    }
    out.push(Block::Table(table));
    if !series.is_empty() {
        out.push(Block::Blank);
        out.push(Block::Paragraph(format!(
            "zfod/s in total per interval (real timestamps, median sample):\n{series}"
        )));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::build::{case, run, sample};
    use crate::report::export::text;

    /// A warning about a row's fault count sits right under that row, in
    /// text, and is a row of its own in Markdown.
    #[test]
    fn a_fault_count_warning_follows_its_row() {
        let s = |faults: f64| {
            sample().figures(&[
                ("zfod/s", 1000.0),
                ("faults", faults),
                ("pages", 100.0),
                ("imbalance", 1.0),
            ])
        };
        let r = run("churn")
            .case(case(1, "churn").sample(s(50.0)))
            .case(case(2, "churn").sample(s(100.0)))
            .build();
        let b = blocks(&r);
        let out = text::blocks(&b);
        let lines: Vec<&str> = out.lines().collect();
        assert!(lines[2].starts_with("   1   1        1000"), "{out}");
        assert_eq!(
            lines[3],
            "warning: 1 tasks: 50 faults measured (rusage) for 100 pages touched"
        );
        assert!(lines[4].starts_with("   2   1        1000"), "{out}");
        let md = crate::report::export::markdown::blocks(&b);
        assert!(
            md.contains("| warning: 1 tasks: 50 faults measured"),
            "{md}"
        );
    }
}
