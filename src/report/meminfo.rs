//! The /proc/meminfo levels a run read during its samples (`run
//! --meminfo`): per case and field, the median over the measured samples
//! of each sample's mean, in kB, under any workload's tables.

use super::cells::names;
use super::export::{Align, Block, Layout, Table};
use crate::model::Run;
use crate::monitor::meminfo::PREFIX;
use crate::stats::summary::median;

/// The table, when any measured sample holds a level.
pub fn blocks(run: &Run) -> Vec<Block> {
    let mut rows = Vec::new();
    for cs in &run.cases {
        let fields: std::collections::BTreeSet<&str> = cs
            .measured()
            .flat_map(|s| s.data.figures.keys())
            .filter_map(|k| k.strip_prefix(PREFIX))
            .collect();
        for field in fields {
            let levels: Vec<f64> = cs.values(&format!("{PREFIX}{field}")).collect();
            rows.push(vec![
                cs.case.variant.clone(),
                cs.case.tasks.to_string(),
                field.to_string(),
                format!("{:.0}", median(&levels)),
                levels.len().to_string(),
            ]);
        }
    }
    if rows.is_empty() {
        return Vec::new();
    }
    use Align::{Left as L, Right as R};
    vec![
        Block::Blank,
        Block::Table(Table {
            title: "meminfo levels during the samples (--meminfo): median of the samples' \
                    means, kB"
                .into(),
            header: vec![names(&["case", "Thr", "field", "kB", "n"])],
            align: vec![L, R, L, R, R],
            rows,
            layout: Some(Layout::spaced(&[23, 3, 22, 14, 4])),
        }),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Better;
    use crate::model::build::{case, run, sample};
    use crate::report::export::text;

    #[test]
    fn each_field_shows_the_median_of_the_samples_that_read_it() {
        let s = |anon: Option<f64>| {
            let s = sample().figure("fault/wsec", 1.0);
            match anon {
                Some(a) => s.figure("meminfo.AnonPages", a),
                None => s,
            }
        };
        let r = run("pft")
            .figure("fault/wsec", "faults/s", Better::Higher, true)
            .case(
                case(2, "fault")
                    .sample(s(Some(100.0)))
                    .sample(s(Some(300.0)))
                    .sample(s(Some(200.0)))
                    .sample(s(None)),
            )
            .build();
        let out = text::blocks(&blocks(&r));
        let line = out.lines().find(|l| l.contains("AnonPages")).unwrap();
        let cells: Vec<&str> = line.split_whitespace().collect();
        assert_eq!(cells, ["fault", "2", "AnonPages", "200", "3"], "{out}");
        assert!(out.lines().all(|l| l.chars().count() <= 80), "{out}");
        let none = run("pft")
            .figure("fault/wsec", "faults/s", Better::Higher, true)
            .case(case(1, "fault").sample(s(None)))
            .build();
        assert!(blocks(&none).is_empty());
    }
}
