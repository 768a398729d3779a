//! The c2c report: per variant a lower-triangle latency matrix (median one
//! way ns over the samples, shaded on terminals), then every pair with its
//! median, 95 % CI of the mean, range and topology labels, and the clock's
//! resolution and read cost. Past a screenful of pairs, or when the pairs
//! are a sample, each variant is summarised by topology class instead
//! (median of the pairs with its interval, the worst pair); JSON, CSV and
//! the HTML heat map keep every measured pair.

use super::cells;
use super::cells::names;
use super::export::{Align, Block, Layout, Table};
use crate::model::{CaseSamples, Run};
use crate::workload::c2c::Stored;
use crate::workload::c2c::{Pair, Variant, pair_figure};
use crate::workload::c2c_pairs::Class;
use crate::workload::stored::view;

/// What a stored case's variant measures ("ping-pong" for one this
/// version does not know).
fn describe(variant: &str) -> &'static str {
    variant
        .parse::<Variant>()
        .map_or("ping-pong", Variant::describe)
}

/// The report's blocks; `colour` shades the matrix cells for a terminal.
pub fn blocks(run: &Run, colour: bool) -> Vec<Block> {
    let cfg: Stored = view(&run.meta.config);
    let (pairs, cpus, fresh) = (&cfg.pairs, &cfg.cpus, cfg.fresh_line);
    let measured = match cfg.pairs_total {
        Some(n) if n > pairs.len() as u64 => format!(
            "{} of {n} pairs measured\n(a random sample of each topology class)",
            pairs.len()
        ),
        _ => format!("{} pair(s)", pairs.len()),
    };
    let by_class =
        cpus.len() > MATRIX_CPUS || cfg.pairs_total.is_some_and(|n| n > pairs.len() as u64);
    let mut out = vec![Block::Paragraph(format!(
        "c2c: cache-line hand-off latency, one way (round trip / 2), ns;\n\
         {} CPUs, {measured}, {};\n{} round trips x {} batches per pair\n",
        cpus.len(),
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
        if by_class {
            out.push(class_section(c, pairs, &cfg.classes));
        } else {
            out.extend(variant_section(c, pairs, cpus, colour));
        }
    }
    if by_class && !run.cases.is_empty() {
        out.push(Block::Paragraph(
            "  median and 95% CI (order statistics) of the class's pair medians;\n  \
             every pair: --json, --csv, report --html (heat map)\n"
                .into(),
        ));
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
            ..Layout::label_and(5, chunk.len(), width)
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
    if pairs.len() > SCREEN_PAIRS {
        out.push(Block::Blank);
        out.push(class_section(c, pairs, &[]));
        return out;
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

/// Pairs listed one by one (ten CPUs); more are summarised by class.
const SCREEN_PAIRS: usize = 45;
/// CPUs whose full matrix is printed (in blocks of ten columns); more, or
/// a sample of pairs, get the summary by class alone.
const MATRIX_CPUS: usize = 24;

/// A pair's class: stored with it, or (older runs) from its labels.
fn class_of(p: &Pair) -> Class {
    p.class.unwrap_or(if p.smt {
        Class::Smt
    } else if p.cross_node {
        Class::CrossNode {
            distance: None,
            same_package: true,
        }
    } else {
        Class::SameNode
    })
}

/// One variant by topology class: pairs measured of the class's pairs,
/// the median of their medians with its order-statistic interval, the
/// worst pair.
fn class_section(c: &CaseSamples, pairs: &[Pair], totals: &[(Class, u64)]) -> Block {
    let mut classes: Vec<Class> = pairs.iter().map(class_of).collect();
    classes.sort_unstable();
    classes.dedup();
    let mut rows = Vec::new();
    for class in classes {
        let values: Vec<(&Pair, f64)> = pairs
            .iter()
            .filter(|p| class_of(p) == class)
            .filter_map(|p| Some((p, cells::median(c, &pair_figure(p.a, p.b))?)))
            .collect();
        let of = totals
            .iter()
            .find(|(k, _)| *k == class)
            .map(|(_, n)| format!("/{n}"))
            .unwrap_or_default();
        let xs: Vec<f64> = values.iter().map(|v| v.1).collect();
        let worst = values.iter().max_by(|x, y| x.1.total_cmp(&y.1));
        let (median, ci) = match crate::stats::robust::median_ci(&xs) {
            Some(m) => (ns(m.median), format!("[{}, {}]", ns(m.lo), ns(m.hi))),
            None if !xs.is_empty() => (ns(crate::stats::summary::median(&xs)), "(n < 5)".into()),
            None => ("-".into(), "(no samples)".into()),
        };
        rows.push(vec![
            class.label(),
            format!("{}{of}", values.len()),
            median,
            ci,
            worst
                .map(|(p, _)| format!("{}-{}", p.a, p.b))
                .unwrap_or_default(),
            worst.map(|(_, v)| ns(*v)).unwrap_or_default(),
        ]);
    }
    Block::Table(Table {
        title: format!(
            "{} ({}), by class, ns:",
            c.case.variant,
            describe(&c.case.variant)
        ),
        header: vec![names(&[
            "class",
            "pairs",
            "median",
            "95% CI",
            "worst pair",
            "ns",
        ])],
        align: Align::runs(&[(Align::Left, 1), (Align::Right, 5)]),
        rows,
        layout: Some(Layout::spaced(&[22, 10, 8, 16, 10, 7])),
    })
}

/// Nanoseconds in a class table's cell: one decimal below 1000 (a
/// stalled hand-off under emulation can take milliseconds).
fn ns(v: f64) -> String {
    if v.abs() < 1000.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.0}")
    }
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

    /// 512 CPUs, a sample of pairs per class: one line per class with its
    /// median and interval, "k of n" said, nothing past 80 columns, and
    /// the worst pair named.
    #[test]
    fn a_sampled_run_is_summarised_by_class() {
        let classes = [
            (Class::Smt, 256u64),
            (Class::SameL3, 3584),
            (
                Class::CrossNode {
                    distance: Some(32),
                    same_package: false,
                },
                65536,
            ),
        ];
        let mut pairs = Vec::new();
        for (i, (class, _)) in classes.iter().enumerate() {
            for k in 0..8 {
                pairs.push(Pair {
                    a: 100 * i + k,
                    b: 300 + 10 * i + k,
                    smt: *class == Class::Smt,
                    cross_node: i == 2,
                    class: Some(*class),
                });
            }
        }
        let mut one = sample();
        for p in &pairs {
            let v = 20.0 + 100.0 * (p.a / 100) as f64 + (p.a % 100) as f64;
            one = one.figure(&pair_figure(p.a, p.b), v);
        }
        let run = run("c2c")
            .config(serde_json::json!({
                "pairs": pairs, "cpus": (0..512).collect::<Vec<_>>(),
                "pairs_total": 130816, "classes": classes,
            }))
            .case(case(2, "cas").sample(one))
            .build();
        let out = crate::report::export::text::blocks(&blocks(&run, false));
        assert!(out.lines().all(|l| l.chars().count() <= 80), "{out}");
        assert!(out.contains("24 of 130816 pairs measured"), "{out}");
        let smt = out
            .lines()
            .find(|l| l.starts_with("SMT siblings"))
            .expect(&out);
        assert!(smt.contains("8/256") && smt.contains("23.5"), "{smt}");
        let x = out
            .lines()
            .find(|l| l.starts_with("cross-node d=32 x-pkg"))
            .expect(&out);
        // Worst pair of the class: 207-327 at 227 ns.
        assert!(x.contains("207-327") && x.contains("227.0"), "{x}");
        assert!(
            !out.contains(" pair        median"),
            "no per-pair table: {out}"
        );
    }

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
                    class: None,
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
