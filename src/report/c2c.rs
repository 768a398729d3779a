//! The c2c report: per variant a lower-triangle latency matrix (median one
//! way ns over the samples, shaded on terminals), then every pair with its
//! median, 95 % CI of the mean, range and topology labels, and the clock's
//! resolution and read cost.

use super::cells;
use super::cells::names;
use super::export::{Align, Block, Layout, Table};
use crate::model::{CaseSamples, Run};
use crate::workload::c2c::Stored;
use crate::workload::c2c::{Pair, pair_figure};
use crate::workload::stored::view;

fn describe(variant: &str) -> &'static str {
    match variant {
        "cas" => "compare-and-swap ping-pong, PAUSE between retries",
        "cas-nopause" => "compare-and-swap ping-pong, retried without PAUSE",
        "storeload" => "release store / acquire load ping-pong",
        _ => "ping-pong",
    }
}

/// The report's blocks; `colour` shades the matrix cells for a terminal.
pub fn blocks(run: &Run, colour: bool) -> Vec<Block> {
    let cfg: Stored = view(&run.meta.config);
    let (pairs, cpus, fresh) = (&cfg.pairs, &cfg.cpus, cfg.fresh_line);
    let mut out = vec![Block::Paragraph(format!(
        "c2c: cache-line hand-off latency, one way (round trip / 2), ns;\n\
         {} CPUs, {} pair(s), {};\n{} round trips x {} batches per pair\n",
        cpus.len(),
        pairs.len(),
        if fresh {
            "a fresh line per pair"
        } else {
            "one line for all pairs"
        },
        cfg.rounds,
        cfg.batches,
    ))];
    for c in &run.cases {
        out.push(Block::Blank);
        out.extend(variant_section(c, pairs, cpus, colour));
    }
    let (res, read) = run
        .cases
        .first()
        .map(|c| {
            (
                cells::median(c, "clock res ns"),
                cells::median(c, "clock read ns"),
            )
        })
        .unwrap_or((None, None));
    let f = |v: Option<f64>| {
        v.map(|v| format!("{v:.1} ns"))
            .unwrap_or_else(|| "?".into())
    };
    out.push(Block::Blank);
    out.push(Block::Paragraph(format!(
        "clock: CLOCK_MONOTONIC resolution {} (clock_getres),\n\
         one read {} (back-to-back); each batch is timed by one pair of reads\n\
         around all its round trips\n",
        f(res),
        f(read)
    )));
    out
}

fn variant_section(c: &CaseSamples, pairs: &[Pair], cpus: &[usize], colour: bool) -> Vec<Block> {
    let n = c.measured().count();
    let mut out = Vec::new();
    let values: Vec<(usize, usize, f64)> = pairs
        .iter()
        .filter_map(|p| Some((p.a, p.b, cells::median(c, &pair_figure(p.a, p.b))?)))
        .collect();
    let lo = values.iter().map(|v| v.2).fold(f64::INFINITY, f64::min);
    let hi = values.iter().map(|v| v.2).fold(0.0, f64::max);
    let width = 7;
    // Lower triangle: row CPU b, column CPU a < b; ten columns fit 80
    // columns, more CPUs are split into blocks of ten.
    let columns = &cpus[..cpus.len().saturating_sub(1)];
    let about = format!(
        "{} ({}), median of {n} samples:",
        c.case.variant,
        describe(&c.case.variant)
    );
    if columns.is_empty() {
        out.push(Block::Paragraph(about.clone()));
    }
    for (block, chunk) in columns.chunks(10).enumerate() {
        if block > 0 {
            out.push(Block::Blank);
        }
        let mut header = vec![String::new()];
        header.extend(chunk.iter().map(|a| a.to_string()));
        let mut rows = Vec::new();
        let first = block * 10;
        for (row, &b) in cpus.iter().enumerate().skip(first + 1) {
            let mut line = vec![b.to_string()];
            for (col, &a) in chunk.iter().enumerate() {
                if first + col >= row {
                    break;
                }
                let p = pairs.iter().find(|p| p.a == a && p.b == b);
                let mark = p.map(mark).unwrap_or("");
                let cell = match values.iter().find(|v| v.0 == a && v.1 == b) {
                    Some(&(_, _, v)) => {
                        let text = format!("{:>w$}", format!("{v:.0}{mark}"), w = width);
                        if colour {
                            cells::shade(&text, v, lo, hi)
                        } else {
                            text
                        }
                    }
                    None => "-".into(),
                };
                line.push(cell);
            }
            rows.push(line);
        }
        let layout = Layout {
            text_title: block == 0,
            ..Layout::columns(
                [("", 5)]
                    .into_iter()
                    .chain(chunk.iter().map(|_| ("", width)))
                    .collect(),
            )
        };
        out.push(Block::Table(Table {
            title: if block == 0 {
                about.clone()
            } else {
                format!("{}: from CPU {}", c.case.variant, chunk[0])
            },
            header: vec![header],
            align: vec![Align::Right; chunk.len() + 1],
            rows,
            layout: Some(layout),
        }));
    }
    if pairs.iter().any(|p| p.smt || p.cross_node) {
        out.push(Block::Paragraph(
            "  s = SMT siblings, x = across NUMA nodes\n".into(),
        ));
    }
    let mut rows = Vec::new();
    for p in pairs {
        let s = cells::summary(c, &pair_figure(p.a, p.b), false);
        let topo = match (p.smt, p.cross_node) {
            (true, _) => "SMT siblings",
            (_, true) => "cross-node",
            _ => "same node",
        };
        let name = format!("{}-{}", p.a, p.b);
        rows.push(match s {
            Some(s) => vec![
                name,
                format!("{:.1}", s.median),
                format!("{:.1}", s.ci95),
                format!("{:.1}", s.min),
                format!("{:.1}", s.max),
                s.n.to_string(),
                topo.to_string(),
            ],
            None => vec![name, "-".into(), format!(" (no samples)  {topo}")],
        });
    }
    out.push(Block::Blank);
    out.push(Block::Table(Table {
        title: format!("{}: one-way latency per pair, ns", c.case.variant),
        header: vec![names(&[
            "pair", "median", "ci95 +/-", "min", "max", "n", "topology",
        ])],
        align: Align::runs(&[(Align::Left, 1), (Align::Right, 5), (Align::Left, 1)]),
        rows,
        layout: Some(
            Layout::spaced(&[9, 9, 11, 9, 9, 3, 0])
                .sep(0, " ")
                .sep(6, "  ")
                .with_header(" pair        median    ci95 +/-       min       max   n  topology\n"),
        ),
    }));
    out
}

fn mark(p: &Pair) -> &'static str {
    if p.smt {
        "s"
    } else if p.cross_node {
        "x"
    } else {
        ""
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::build::{case, run, sample};

    /// 24 CPUs: the matrix is split into blocks of ten columns, every pair
    /// is shown once, and no line passes 80 columns.
    #[test]
    fn a_wide_matrix_is_split_into_blocks() {
        let cpus: Vec<usize> = (0..24).collect();
        let mut pairs = Vec::new();
        for b in 1..24 {
            for a in 0..b {
                pairs.push(Pair {
                    a,
                    b,
                    smt: false,
                    cross_node: false,
                });
            }
        }
        let mut one = sample();
        for p in &pairs {
            one = one.figure(&pair_figure(p.a, p.b), (100 + p.a + p.b) as f64);
        }
        let run = run("c2c")
            .config(serde_json::json!({ "pairs": pairs, "cpus": cpus }))
            .case(case(2, "cas").sample(one))
            .build();
        let out = crate::report::export::text::blocks(&blocks(&run, false));
        assert!(out.lines().all(|l| l.chars().count() <= 80), "{out}");
        // Pair 22-23 (value 145) sits in the third block's last row.
        let last_block = out.split("\n\n").find(|b| b.contains("     20")).unwrap();
        assert!(
            last_block
                .lines()
                .any(|l| l.starts_with("   23") && l.contains("145"))
        );
        // Every pair's median appears once in the matrices: 276 cells.
        let matrix_cells: usize = out
            .split("\n pair")
            .next()
            .unwrap()
            .lines()
            .filter(|l| l.len() > 5 && l[..5].trim().parse::<usize>().is_ok())
            .map(|l| l[5..].split_whitespace().count())
            .sum();
        assert_eq!(matrix_cells, 24 * 23 / 2, "{out}");
    }
}
