//! The fork report (seed 002): forks/s and system time per fork and per
//! page by task count, with fork() and teardown timed apart.

use super::cells::names;
use super::export::{Align, Block, Layout, Table};
use crate::model::{Run, Sample};
use crate::workload::fork::Stored;
use crate::workload::stored::view;

fn fig(s: &Sample, k: &str) -> f64 {
    s.data.figures.get(k).copied().unwrap_or(f64::NAN)
}

pub fn blocks(run: &Run) -> Vec<Block> {
    let cfg: Stored = view(&run.meta.config);
    let out = format!(
        "fork: {} mapping of {} per task, {} forks per task,\n\
         children write {} pages, {} mode\n",
        cfg.backing,
        crate::units::size(cfg.size),
        cfg.forks,
        cfg.touch,
        cfg.mode.as_deref().unwrap_or("?"),
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::build::run;
    use crate::report::export::text;
    use serde_json::json;

    fn head(config: serde_json::Value) -> String {
        text::blocks(&blocks(&run("fork").config(config).build()))
            .lines()
            .take(2)
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// A shared-file backing names its directory; a run stored without
    /// touch or mode, or with a count of another type, shows 0 and "?".
    #[test]
    fn the_header_reads_the_backing_and_survives_missing_fields() {
        let h = head(json!({"backing": {"file": "/mnt/x"}, "size": 2097152, "forks": "9"}));
        assert_eq!(
            h,
            "fork: shared file in /mnt/x mapping of 2 MiB per task, 0 forks per task,\n\
             children write 0 pages, ? mode"
        );
        let h = head(json!({"backing": "anonymous", "touch": 4, "mode": "process"}));
        assert!(h.starts_with("fork: anonymous mapping of 0 B"), "{h}");
        assert!(h.ends_with("children write 4 pages, process mode"), "{h}");
    }
}
