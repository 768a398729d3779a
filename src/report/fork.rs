//! The fork report (seed 002): forks/s and system time per fork and per
//! page by task count, with fork() and teardown timed apart.

use super::cells::names;
use super::export::{Align, Block, Layout, Table};
use crate::model::{Run, Sample};

fn fig(s: &Sample, k: &str) -> f64 {
    s.data.figures.get(k).copied().unwrap_or(f64::NAN)
}

pub fn blocks(run: &Run) -> Vec<Block> {
    let c = &run.meta.config;
    let backing = match c.get("backing") {
        Some(serde_json::Value::String(s)) => s.clone(),
        Some(serde_json::Value::Object(o)) => o
            .get("file")
            .and_then(|p| p.as_str())
            .map(|p| format!("shared file in {p}"))
            .unwrap_or_else(|| "file".into()),
        _ => "?".into(),
    };
    let size = c.get("size").and_then(|v| v.as_u64()).unwrap_or(0);
    let out = format!(
        "fork: {} mapping of {} per task, {} forks per task,\n\
         children write {} pages, {} mode\n",
        backing,
        crate::parse::format_size(size),
        c.get("forks").and_then(|v| v.as_u64()).unwrap_or(0),
        c.get("touch").and_then(|v| v.as_u64()).unwrap_or(0),
        c.get("mode").and_then(|v| v.as_str()).unwrap_or("?"),
    );
    let mut rows = Vec::new();
    for cs in &run.cases {
        let Some((s, reps)) = crate::report::median_sample(cs, "forks/s") else {
            continue;
        };
        let forks = fig(s, "forks");
        rows.push(vec![
            cs.case.tasks.to_string(),
            reps.to_string(),
            format!("{forks:.0}"),
            format!("{:.1}", fig(s, "forks/s")),
            format!("{:.1}", fig(s, "sys/fork")),
            format!("{:.2}", fig(s, "sys/page")),
            format!("{:.1}", fig(s, "fork")),
            format!("{:.1}", fig(s, "teardown")),
            format!("{:.1}", fig(s, "child_minflt") / forks),
        ]);
    }
    vec![
        Block::Paragraph(out),
        Block::Table(Table {
            title: "Forks by task count (median sample by forks/s)".into(),
            header: vec![
                names(&[
                    "Thr",
                    "Rep",
                    "forks",
                    "forks/s",
                    "sys/fork",
                    "sys/page",
                    "fork",
                    "teardown",
                    "child_flt",
                ]),
                names(&["", "", "", "", "us", "ns", "us", "us", "per fork"]),
            ],
            align: vec![Align::Right; 9],
            rows,
            layout: Some(
                Layout::spaced(&[4, 3, 7, 10, 9, 9, 9, 9, 10]).with_header(
                    " Thr Rep   forks    forks/s  sys/fork  sys/page      fork  teardown  child_flt\n\
                     \x20                                   us        ns        us        us   per fork\n",
                ),
            ),
        }),
        Block::Paragraph(
            "sys = parent + children system time (wait4);\n\
             per page of the parent's populated mapping\n"
                .into(),
        ),
    ]
}
