//! Imported runs reprinted in the layout they came in: pft tables with their
//! own Rep column, will-it-scale as its runtest CSV columns.

use super::export::{Align, Block, Layout, Table};
use crate::model::Run;

/// True for runs this renderer prints.
pub fn handles(run: &Run) -> bool {
    run.meta.origin.starts_with("imported")
}

fn fig(run: &Run, i: usize, name: &str) -> Vec<f64> {
    run.cases[i].values(name).collect()
}

pub fn blocks(run: &Run) -> Vec<Block> {
    let spec = crate::workload::find(&run.meta.workload);
    match spec.map(|s| s.report) {
        Some(crate::workload::Report::Pft) => pft(run),
        _ => crate::report::generic::blocks(run),
    }
}

/// Lameter's columns: the pft table's header, and the layout of runs
/// imported before the header's columns were kept.
pub const LAMETER: [&str; 9] = [
    "Gb",
    "Rep",
    "Thr",
    "CLine",
    "User",
    "System",
    "Wall",
    "flt/cpu/s",
    "fault/wsec",
];

/// How a column is printed: the figure it shows, its width, the fewest
/// decimals, and whether an `s` follows.
fn column(name: &str) -> (&'static str, usize, usize, bool) {
    match name {
        "Gb" | "GB" => ("gb", 5, 0, false),
        "Mb" | "MB" => ("mb", 5, 0, false),
        "Rep" => ("rep", 3, 0, false),
        "Thr" | "Threads" => ("", 4, 0, false),
        "CLine" => ("cline", 5, 0, false),
        "User" => ("user", 9, 2, true),
        "System" => ("system", 9, 2, true),
        "Wall" => ("wall", 9, 2, true),
        "flt/cpu/s" => ("flt/cpu/s", 12, 3, false),
        _ => ("fault/wsec", 12, 3, false),
    }
}

/// A value with every digit it was imported with, and at least `min`
/// decimals (as the table printed them).
fn exact(v: f64, min: usize) -> String {
    let shortest = format!("{v}");
    let decimals = shortest.split_once('.').map_or(0, |(_, d)| d.len());
    if decimals >= min {
        shortest
    } else {
        format!("{v:.min$}")
    }
}

/// The table in the columns it was imported with, each value as precise as
/// it was printed.
fn pft(run: &Run) -> Vec<Block> {
    let mut out = Vec::new();
    if let Some(c) = run.meta.config.get("caption").and_then(|c| c.as_str()) {
        out.push(Block::Paragraph(format!("(after: \"{c}\")\n")));
    }
    let names: Vec<String> = run
        .meta
        .config
        .get("columns")
        .and_then(|c| serde_json::from_value(c.clone()).ok())
        .unwrap_or_else(|| LAMETER.iter().map(|s| s.to_string()).collect());
    let columns = names
        .iter()
        .enumerate()
        .map(|(i, n)| {
            let (_, width, _, s) = column(n);
            (
                if i == 0 { "" } else { " " },
                (width + s as usize).max(n.len()),
            )
        })
        .collect();
    let mut rows = Vec::new();
    for (i, c) in run.cases.iter().enumerate() {
        for k in 0..c.measured().count() {
            rows.push(
                names
                    .iter()
                    .map(|n| {
                        let (figure, _, min, s) = column(n);
                        let text = if figure.is_empty() {
                            c.case.tasks.to_string()
                        } else {
                            fig(run, i, figure)
                                .get(k)
                                .map_or("-".into(), |v| exact(*v, min))
                        };
                        format!("{text}{}", if s { "s" } else { "" })
                    })
                    .collect(),
            );
        }
    }
    out.push(Block::Table(Table {
        title: "Imported pft table, every row as it was printed".into(),
        align: vec![Align::Right; names.len()],
        header: vec![names],
        rows,
        layout: Some(Layout::columns(columns).untitled()),
    }));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_keep_their_digits() {
        assert_eq!(exact(2.5, 2), "2.50");
        assert_eq!(exact(1.234, 2), "1.234");
        assert_eq!(exact(56576.495, 3), "56576.495");
        assert_eq!(exact(64.0, 0), "64");
    }
}
