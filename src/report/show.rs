//! `show` as a report for every format: the run's blocks (text prints them
//! in the historical layout byte for byte, Markdown as headings and pipe
//! tables, with a summary table per case and figure added), every sample
//! as a CSV record, and the stored run as JSON with the tables.

use super::export::{Align, Block, Records, Report, Table, text};
use crate::model::Run;
use crate::stats::summary::summarise;

fn f(v: f64) -> String {
    if v.is_finite() {
        format!("{v:.3}")
    } else {
        "-".into()
    }
}

/// n, Min, Median, Amean/Hmean, Stddev, CoeffVar, Max and the 95 % CI per
/// case and figure.
pub fn summary_table(run: &Run) -> Table {
    let mut rows = Vec::new();
    for c in &run.cases {
        for fig in &run.meta.figures {
            let values: Vec<f64> = c.values(&fig.name).filter(|v| v.is_finite()).collect();
            if let Some(s) = summarise(&values, fig.rate) {
                rows.push(vec![
                    c.case.key(),
                    fig.name.clone(),
                    s.n.to_string(),
                    f(s.min),
                    f(s.median),
                    format!("{} {}", f(s.mean), if s.harmonic { "H" } else { "A" }),
                    f(s.stddev),
                    format!("{:.2}", s.coeff_var),
                    f(s.max),
                    format!("±{}", f(s.ci95)),
                ]);
            }
        }
    }
    let mut align = vec![Align::Left, Align::Left];
    align.extend([Align::Right; 8]);
    Table {
        title: String::new(),
        layout: None,
        header: vec![
            [
                "case", "figure", "n", "Min", "Median", "Mean", "Stddev", "CoeffVar", "Max", "CI95",
            ]
            .iter()
            .map(|s| s.to_string())
            .collect(),
        ],
        align,
        rows,
    }
}

/// Every stored sample, one record per sample and figure.
pub fn records(run: &Run) -> Records {
    let mut rows = Vec::new();
    for c in &run.cases {
        for s in &c.samples {
            for (name, v) in &s.data.figures {
                rows.push(vec![
                    run.meta.id.to_string(),
                    c.case.key(),
                    c.case.variant.clone(),
                    c.case.tasks.to_string(),
                    c.case.knobs_label(),
                    s.seq.to_string(),
                    s.warmup.to_string(),
                    s.flagged.to_string(),
                    name.clone(),
                    format!("{v}"),
                ]);
            }
        }
    }
    Records {
        columns: [
            "run", "case", "variant", "tasks", "knobs", "seq", "warmup", "flagged", "figure",
            "value",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect(),
        rows,
    }
}

/// The run's report. Text is the blocks shaded for a colour terminal;
/// the other formats get them unshaded.
pub fn report(run: &Run) -> Report {
    let mut blocks = super::blocks(run, false);
    let mut data = serde_json::to_value(run).unwrap_or_default();
    if let Some(obj) = data.as_object_mut() {
        obj.insert("tables".into(), tables_json(&blocks));
    }
    blocks.push(Block::Table(Table {
        title: "Summary per case and figure (warm-ups excluded)".into(),
        ..summary_table(run)
    }));
    Report {
        text: Some(text::blocks(&super::blocks(
            run,
            super::cells::colour_stdout(),
        ))),
        blocks,
        records: records(run),
        data,
    }
}

/// The table blocks as JSON: title, header lines and rows of cells.
pub fn tables_json(blocks: &[Block]) -> serde_json::Value {
    Block::tables(blocks)
        .map(|t| {
            serde_json::json!({
                "title": t.title,
                "header": t.header,
                "rows": t.rows.iter().map(|r| r.iter().map(|c| c.trim()).collect::<Vec<_>>()).collect::<Vec<_>>(),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Better;
    use crate::report::export::{Format, exporter};

    fn run() -> Run {
        use crate::model::build::{case, run, sample};
        run("other")
            .id(4)
            .label("l")
            .figure("wall", "s", Better::Lower, false)
            .case(case(2, "x").samples(3, |i| {
                let s = sample().figure("wall", 1.0 + i as f64);
                if i == 0 { s.warmup() } else { s }
            }))
            .build()
    }

    /// The layout the report printed when it was a string, rebuilt with
    /// its format strings.
    #[test]
    fn text_is_the_historical_layout_byte_for_byte() {
        let r = run();
        let out = exporter(Format::Text).export(&report(&r)).unwrap();
        let table = format!(
            "{:<18} {:>5} {:<14} {:>3} {:>14} {:>8}\n{:<18} {:>5} {:<14} {:>3} {:>14.3} {:>8.2}\n",
            "case", "tasks", "figure", "n", "median", "cv%", "x", 2, "wall", 2, 2.5, 28.284271
        );
        let centre = format!(
            "\nCentre of wall per case: median, 95% CI by order statistics:\n\
             {:<16} {:>4} {:>10} {:>23} {:>10} {:>10}\n{:<16} {:>4} {:>10} {:>23} {:>10} {:>10} A\n",
            "case", "n", "median", "95% CI", "±", "mean", "x/2", 2, "2.500", "n<5", "-", "2.500"
        );
        assert_eq!(out, format!("run 4 [l]: other (complete)\n{table}{centre}"));
    }

    #[test]
    fn csv_has_every_sample_and_markdown_the_summary() {
        let r = run();
        let csv = exporter(Format::Csv).export(&report(&r)).unwrap();
        assert_eq!(csv.lines().count(), 1 + 3);
        assert!(csv.contains("4,x/2,x,2,,0,true,false,wall,1\n"), "{csv}");
        let md = exporter(Format::Markdown).export(&report(&r)).unwrap();
        // Warm-up excluded: n = 2, values 2 and 3.
        assert!(
            md.contains("| x/2 | wall | 2 | 2.000 | 2.500 | 2.500 A |"),
            "{md}"
        );
    }
}
