//! The churn report (seed 004): zfod faults/s in total and per task, the
//! imbalance between tasks, and the per-interval totals.

use super::export::{Align, Block, Layout, Table};
use super::generic::cells;
use crate::model::{Run, Sample};

fn fig(s: &Sample, k: &str) -> f64 {
    s.data.figures.get(k).copied().unwrap_or(f64::NAN)
}

pub fn blocks(run: &Run) -> Vec<Block> {
    let c = &run.meta.config;
    let about = format!(
        "churn: mmap/touch/munmap of {} per loop for {} s, {} mode\n",
        crate::parse::format_size(c.get("chunk").and_then(|v| v.as_u64()).unwrap_or(0)),
        c.get("secs").and_then(|v| v.as_f64()).unwrap_or(0.0),
        c.get("mode").and_then(|v| v.as_str()).unwrap_or("?"),
    );
    let mut out = vec![Block::Paragraph(about)];
    let mut table = Table {
        title: "zfod faults per second by task count (median sample)".into(),
        header: vec![cells(&[
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
