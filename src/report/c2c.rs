//! The c2c report: per variant a lower-triangle latency matrix (median one
//! way ns over the samples, shaded on terminals), then every pair with its
//! median, 95 % CI of the mean, range and topology labels, and the clock's
//! resolution and read cost.

use super::cells;
use crate::model::{CaseSamples, Run};
use crate::workload::c2c::{Pair, pair_figure};

fn describe(variant: &str) -> &'static str {
    match variant {
        "cas" => "compare-and-swap ping-pong",
        "storeload" => "release store / acquire load ping-pong",
        _ => "ping-pong",
    }
}

pub fn text(run: &Run) -> String {
    text_with(run, cells::colour_stdout())
}

pub fn text_with(run: &Run, colour: bool) -> String {
    let pairs: Vec<Pair> = run
        .meta
        .config
        .get("pairs")
        .and_then(|p| serde_json::from_value(p.clone()).ok())
        .unwrap_or_default();
    let cpus: Vec<usize> = run
        .meta
        .config
        .get("cpus")
        .and_then(|p| serde_json::from_value(p.clone()).ok())
        .unwrap_or_default();
    let fresh = run.meta.config.get("fresh_line").and_then(|v| v.as_bool()) == Some(true);
    let mut out = format!(
        "c2c: cache-line hand-off latency, one way (round trip / 2), ns; {} CPUs, {} pair(s),\n\
         {}, {} round trips x {} batches per pair\n",
        cpus.len(),
        pairs.len(),
        if fresh {
            "a fresh line per pair"
        } else {
            "one line for all pairs"
        },
        cells::cfg(run, "rounds"),
        cells::cfg(run, "batches"),
    );
    for c in &run.cases {
        out.push('\n');
        out.push_str(&variant_section(c, &pairs, &cpus, colour));
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
    out.push_str(&format!(
        "\nclock: CLOCK_MONOTONIC resolution {} (clock_getres), one read {} (back-to-back);\n\
         each batch is timed by one pair of reads around all its round trips\n",
        f(res),
        f(read)
    ));
    out
}

fn variant_section(c: &CaseSamples, pairs: &[Pair], cpus: &[usize], colour: bool) -> String {
    let n = c.measured().count();
    let mut out = format!(
        "{} ({}), median of {n} samples:\n",
        c.case.variant,
        describe(&c.case.variant)
    );
    let values: Vec<(usize, usize, f64)> = pairs
        .iter()
        .filter_map(|p| Some((p.a, p.b, cells::median(c, &pair_figure(p.a, p.b))?)))
        .collect();
    let lo = values.iter().map(|v| v.2).fold(f64::INFINITY, f64::min);
    let hi = values.iter().map(|v| v.2).fold(0.0, f64::max);
    let width = 7;
    // Lower triangle: row CPU b, column CPU a < b.
    out.push_str(&format!("{:>5}", ""));
    for &a in &cpus[..cpus.len().saturating_sub(1)] {
        out.push_str(&format!("{a:>width$}"));
    }
    out.push('\n');
    for (row, &b) in cpus.iter().enumerate().skip(1) {
        out.push_str(&format!("{b:>5}"));
        for &a in &cpus[..row] {
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
                None => format!("{:>width$}", "-"),
            };
            out.push_str(&cell);
        }
        out.push('\n');
    }
    if pairs.iter().any(|p| p.smt || p.cross_node) {
        out.push_str("  s = SMT siblings, x = across NUMA nodes\n");
    }
    out.push_str("\n pair        median    ci95 +/-       min       max   n  topology\n");
    for p in pairs {
        let s = cells::summary(c, &pair_figure(p.a, p.b), false);
        let topo = match (p.smt, p.cross_node) {
            (true, _) => "SMT siblings",
            (_, true) => "cross-node",
            _ => "same node",
        };
        match s {
            Some(s) => out.push_str(&format!(
                " {:<9} {:>9.1} {:>11.1} {:>9.1} {:>9.1} {:>3}  {topo}\n",
                format!("{}-{}", p.a, p.b),
                s.median,
                s.ci95,
                s.min,
                s.max,
                s.n
            )),
            None => out.push_str(&format!(
                " {:<9} {:>9}  (no samples)  {topo}\n",
                format!("{}-{}", p.a, p.b),
                "-"
            )),
        }
    }
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
