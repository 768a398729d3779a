//! A plain table for any workload: per case, the median and spread of each
//! declared figure.

use super::cells::{FLAGGED_CASE, any_flagged, flag, names};
use super::export::{Align, Block, Layout, Table};
use crate::model::Run;
use crate::stats::summary::summarise;

pub fn blocks(run: &Run) -> Vec<Block> {
    let mut rows = Vec::new();
    for c in &run.cases {
        for f in &run.meta.figures {
            let values: Vec<f64> = c.values(&f.name).collect();
            if let Some(s) = summarise(&values, f.rate) {
                rows.push(vec![
                    c.case.variant.clone(),
                    c.case.tasks.to_string(),
                    f.name.clone(),
                    s.n.to_string(),
                    format!("{:.3}", s.median),
                    format!("{:.2}", s.coeff_var),
                    flag(c),
                ]);
            }
        }
    }
    use Align::{Left as L, Right as R};
    let mut out = vec![Block::Table(Table {
        title: "Median and spread per case and figure".into(),
        header: vec![names(&["case", "tasks", "figure", "n", "median", "cv%"])],
        align: vec![L, R, L, R, R, R, L],
        rows,
        layout: Some(
            Layout::spaced(&[18, 5, 14, 3, 14, 8, 0])
                .sep(6, "")
                .untitled(),
        ),
    })];
    if any_flagged(run) {
        out.push(Block::Paragraph(FLAGGED_CASE.into()));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Better;
    use crate::model::build::{case, run, sample};
    use crate::report::export::{markdown, text};

    #[test]
    fn a_flagged_case_is_starred_in_text_and_markdown() {
        let r = run("other")
            .figure("wall", "s", Better::Lower, false)
            .case(case(2, "a").samples(2, |i| {
                let s = sample().figure("wall", 1.0);
                if i == 1 { s.flagged() } else { s }
            }))
            .build();
        let b = blocks(&r);
        let out = text::blocks(&b);
        assert!(out.lines().nth(1).unwrap().ends_with("0.00 *"), "{out}");
        assert!(out.ends_with(FLAGGED_CASE), "{out}");
        let md = markdown::blocks(&b);
        assert!(
            md.contains("| a | 2 | wall | 2 | 1.000 | 0.00 | * |"),
            "{md}"
        );
    }
}
