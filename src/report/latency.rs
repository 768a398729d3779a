//! The latency report: ns per dependent load by working-set size on base
//! pages and THP (their ratio is the TLB's share), the latency on each side
//! of every cache size sysfs reports, the steps found in the measured curve
//! (and where they and sysfs disagree), and the plateaus.

use super::cells;
use super::cells::names;
use super::export::{Align, Block, Layout, Table};
use crate::machine::Snapshot;
use crate::model::Run;
use crate::units;
use crate::workload::latency::Stored;
use crate::workload::latency::parse_variant;
use crate::workload::stored::view;

/// A step is a rise of more than this factor between neighbouring sizes.
const STEP: f64 = 1.25;

fn curve(run: &Run, pages: &str) -> Vec<(u64, f64, Option<f64>)> {
    let mut v: Vec<(u64, f64, Option<f64>)> = run
        .cases
        .iter()
        .filter_map(|c| {
            let (p, size) = parse_variant(&c.case.variant)?;
            (p == pages).then_some(())?;
            Some((
                size,
                cells::median(c, "ns/load")?,
                cells::median(c, "huge %"),
            ))
        })
        .collect();
    v.sort_by_key(|x| x.0);
    v
}

pub fn blocks(run: &Run) -> Vec<Block> {
    let base = curve(run, "base");
    let thp = curve(run, "thp");
    let cfg: Stored = view(&run.meta.config);
    let out = format!(
        "latency: dependent loads over one random cycle of {}-byte nodes,\n\
         at least {} loads per sample; ns per load, {}\n",
        cfg.line_size,
        cfg.loads,
        cells::medians_of(run),
    );
    let mut sizes: Vec<u64> = base.iter().chain(&thp).map(|x| x.0).collect();
    sizes.sort_unstable();
    sizes.dedup();
    let mut rows = Vec::new();
    for s in &sizes {
        let b = base.iter().find(|x| x.0 == *s);
        let t = thp.iter().find(|x| x.0 == *s);
        let f = |v: Option<f64>, p: usize| v.map(|v| format!("{v:.p$}")).unwrap_or("-".into());
        let ratio = match (b, t) {
            (Some(b), Some(t)) if t.1 > 0.0 => Some(b.1 / t.1),
            _ => None,
        };
        rows.push(vec![
            units::size(*s),
            f(b.map(|x| x.1), 2),
            f(t.map(|x| x.1), 2),
            f(ratio, 2),
            f(t.and_then(|x| x.2), 0),
        ]);
    }
    let mut out = vec![
        Block::Paragraph(out),
        Block::Blank,
        Block::Table(Table {
            title: "ns per load by working set, base pages and THP".into(),
            header: vec![names(&[
                "working set",
                "base ns",
                "thp ns",
                "base/thp",
                "thp huge%",
            ])],
            align: vec![Align::Right; 5],
            rows,
            layout: Some(
                Layout::spaced(&[13, 10, 10, 9, 10])
                    .with_header("  working set    base ns     thp ns  base/thp  thp huge%\n"),
            ),
        }),
    ];
    let main = if base.is_empty() { &thp } else { &base };
    let machine: Option<Snapshot> = serde_json::from_value(run.meta.machine.clone()).ok();
    out.extend(caches_section(main, machine.as_ref()));
    let steps = steps_section(main, machine.as_ref());
    if !steps.is_empty() {
        out.push(Block::Paragraph(steps));
    }
    out.extend(plateaus_section(main));
    out
}

/// A rise of the curve: a run of neighbouring sizes each more than
/// STEP_PAIR slower than the last (a cache's edge is smeared over several
/// doublings when its effective size is smaller or shared).
#[derive(Debug, Clone, PartialEq)]
pub struct Step {
    /// The last size before the rise and the first after it.
    pub from: u64,
    pub to: u64,
    pub before_ns: f64,
    pub after_ns: f64,
}

/// A neighbouring pair rising more than this is part of a step.
const STEP_PAIR: f64 = 1.2;

/// The steps of a measured curve (sizes ascending).
pub fn steps(curve: &[(u64, f64)]) -> Vec<Step> {
    let rises = |i: usize| curve[i - 1].1 > 0.0 && curve[i].1 / curve[i - 1].1 > STEP_PAIR;
    let mut out = Vec::new();
    let mut i = 1;
    while i < curve.len() {
        if !rises(i) {
            i += 1;
            continue;
        }
        let start = i - 1;
        while i < curve.len() && rises(i) {
            i += 1;
        }
        out.push(Step {
            from: curve[start].0,
            to: curve[i - 1].0,
            before_ns: curve[start].1,
            after_ns: curve[i - 1].1,
        });
    }
    out
}

/// Whether a cache of `size` bytes explains a step: the working set fitted
/// at half the cache at most, and no longer fits at the step's end.
fn explains(size: u64, s: &Step) -> bool {
    size >= s.from / 2 && size <= s.to
}

/// The steps found in the curve beside the sysfs cache sizes, saying where
/// they disagree.
fn steps_section(curve: &[(u64, f64, Option<f64>)], m: Option<&Snapshot>) -> String {
    let pts: Vec<(u64, f64)> = curve.iter().map(|x| (x.0, x.1)).collect();
    let found = steps(&pts);
    let levels: Vec<(String, u64)> = m
        .map(|m| {
            m.cache_levels()
                .into_iter()
                .map(|l| l.first)
                .filter(|l| l.kind != "Instruction")
                .filter_map(|l| Some((format!("L{}", l.level), l.size_bytes?)))
                .collect()
        })
        .unwrap_or_default();
    let (Some(first), Some(last)) = (pts.first(), pts.last()) else {
        return String::new();
    };
    let mut s =
        format!("\nsteps in the measured curve (neighbours each over x{STEP_PAIR} slower):\n");
    if found.is_empty() {
        s.push_str(
            "  none
",
        );
    }
    for st in &found {
        let by: Vec<String> = levels
            .iter()
            .filter(|(_, size)| explains(*size, st))
            .map(|(n, size)| format!("{n} {}", units::size(*size)))
            .collect();
        let head = format!(
            "  {:>7} -> {:<7} {:>7.2} -> {:>7.2} ns x{:.2}",
            units::size(st.from),
            units::size(st.to),
            st.before_ns,
            st.after_ns,
            st.after_ns / st.before_ns,
        );
        let tail = if by.is_empty() {
            "no sysfs cache this size".to_string()
        } else {
            format!("sysfs {}", by.join(", "))
        };
        // Keeps the line within 80 columns when several levels match.
        if head.len() + 2 + tail.len() <= 80 {
            s.push_str(&format!("{head}  {tail}\n"));
        } else {
            s.push_str(&format!("{head}\n      {tail}\n"));
        }
        // A rise that starts well before the cache it passes: less of that
        // cache is this task's than sysfs says (shared, or a host's).
        if let Some((name, size)) = levels
            .iter()
            .filter(|(_, size)| explains(*size, st))
            .max_by_key(|(_, size)| *size)
            .filter(|(_, size)| st.from.saturating_mul(2) < *size)
        {
            s.push_str(&format!(
                "      the rise starts at {}, below half of {name} {}: less of\n      \
                 it is this task's than sysfs says\n",
                units::size(st.from),
                units::size(*size)
            ));
        }
    }
    for (name, size) in &levels {
        // Only sizes the curve spans can be judged.
        if *size < first.0 || *size > last.0 {
            continue;
        }
        if !found.iter().any(|st| explains(*size, st)) {
            s.push_str(&format!(
                "  sysfs {name} {} shows no step in the curve near it\n",
                units::size(*size)
            ));
        }
    }
    s
}

/// For each data cache level: latency at the largest size that fits and at
/// the smallest size beyond it.
fn caches_section(curve: &[(u64, f64, Option<f64>)], m: Option<&Snapshot>) -> Vec<Block> {
    let Some(m) = m else {
        return Vec::new();
    };
    let mut rows = Vec::new();
    for level in m.cache_levels().into_iter().map(|l| l.first) {
        if level.kind == "Instruction" {
            continue;
        }
        let Some(size) = level.size_bytes else {
            continue;
        };
        let below = curve.iter().rev().find(|x| x.0 <= size / 2);
        let above = curve.iter().find(|x| x.0 >= size * 2);
        let name = format!(
            "L{}{}",
            level.level,
            if level.kind == "Data" { "d" } else { "" }
        );
        rows.push(match (below, above) {
            (Some(b), Some(a)) => vec![
                name,
                units::size(size),
                format!("{:.2}", b.1),
                units::size(b.0),
                format!("{:.2}", a.1),
                units::size(a.0),
                format!(
                    "{:.2}{}",
                    a.1 / b.1,
                    if a.1 / b.1 > STEP { "" } else { " (no step)" }
                ),
            ],
            _ => vec![
                name,
                units::size(size),
                "not bracketed by the sizes measured".into(),
            ],
        });
    }
    if rows.is_empty() {
        return Vec::new();
    }
    let title = "cache sizes (sysfs) and the latency either side (half and twice the size):";
    vec![
        Block::Blank,
        Block::Table(Table {
            title: title.into(),
            header: vec![names(&[
                "cache", "size", "ns below", "at", "ns above", "at", "x",
            ])],
            align: Align::runs(&[(Align::Left, 1), (Align::Right, 5), (Align::Left, 1)]),
            rows,
            layout: Some(
                Layout::columns(vec![
                    ("  ", 4),
                    (" ", 7),
                    (": ", 6),
                    (" ns at ", 7),
                    (" -> ", 6),
                    (" ns at ", 7),
                    (" x", 0),
                ])
                .with_header(format!("{title}\n")),
            ),
        }),
    ]
}

/// Runs of sizes whose latency stays within STEP of the run's first value.
pub fn plateaus(curve: &[(u64, f64)]) -> Vec<(u64, u64, f64)> {
    let mut out: Vec<(u64, u64, f64)> = Vec::new();
    let mut start = 0;
    for i in 1..=curve.len() {
        if i == curve.len() || curve[i].1 > curve[start].1 * STEP {
            if i - start >= 2 {
                let vals: Vec<f64> = curve[start..i].iter().map(|x| x.1).collect();
                out.push((
                    curve[start].0,
                    curve[i - 1].0,
                    crate::stats::summary::median(&vals),
                ));
            }
            start = i;
        }
    }
    out
}

fn plateaus_section(curve: &[(u64, f64, Option<f64>)]) -> Vec<Block> {
    let pts: Vec<(u64, f64)> = curve.iter().map(|x| (x.0, x.1)).collect();
    let p = plateaus(&pts);
    if p.is_empty() {
        return Vec::new();
    }
    let pages = if curve.iter().any(|x| x.2.is_some_and(|h| h > 0.0)) {
        "huge"
    } else {
        "base"
    };
    let title =
        format!("plateaus (neighbouring sizes within x{STEP} of each other, {pages} pages):");
    vec![
        Block::Blank,
        Block::Table(Table {
            layout: Some(
                Layout::columns(vec![("  ", 9), (" .. ", 9), (" ", 11)])
                    .with_header(format!("{title}\n")),
            ),
            title,
            header: vec![names(&["from", "to", "median"])],
            align: vec![Align::Right, Align::Left, Align::Right],
            rows: p
                .iter()
                .map(|(lo, hi, ns)| vec![units::size(*lo), units::size(*hi), format!("{ns:.2} ns")])
                .collect(),
        }),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steps_are_found_where_the_curve_rises() {
        let k = 1024;
        // L1 32K, L2 1M, and the last step at 4M -> 8M although a sysfs L3
        // would say 32M; small wiggles are not steps.
        let mut c = vec![];
        for (i, size) in (10..=25).map(|p| 1u64 << p).enumerate() {
            let ns = match size {
                s if s <= 32 * k => 1.0,
                s if s <= 1024 * k => 4.0,
                s if s <= 4096 * k => 12.0,
                _ => 80.0,
            };
            c.push((size, ns * if i % 2 == 0 { 1.0 } else { 1.05 }));
        }
        let st = steps(&c);
        let at: Vec<(u64, u64)> = st.iter().map(|s| (s.from, s.to)).collect();
        assert_eq!(
            at,
            [(32 * k, 64 * k), (1024 * k, 2048 * k), (4096 * k, 8192 * k)]
        );
        assert!(explains(32 * k, &st[0]));
        assert!(explains(1024 * k, &st[1]));
        assert!(!explains(32 * 1024 * k, &st[2]));
        // A rise smeared over two doublings is one step.
        let smeared = [(1, 1.0), (2, 1.5), (4, 2.25), (8, 2.3)];
        let st = steps(&smeared);
        assert_eq!(st.len(), 1);
        assert_eq!((st[0].from, st[0].to), (1, 4));
        // A flat or falling curve has none; a smooth slope under x1.2 has none.
        assert!(steps(&[(1, 5.0), (2, 5.0), (4, 4.0)]).is_empty());
        let slope: Vec<(u64, f64)> = (0..10).map(|i| (1 << i, 1.1f64.powi(i))).collect();
        assert!(steps(&slope).is_empty());
    }

    #[test]
    fn plateaus_split_at_steps() {
        let c = [
            (1, 1.0),
            (2, 1.1),
            (4, 1.05),
            (8, 4.0),
            (16, 4.2),
            (32, 20.0),
        ];
        let p = plateaus(&c);
        assert_eq!(p.len(), 2);
        assert_eq!((p[0].0, p[0].1), (1, 4));
        assert_eq!((p[1].0, p[1].1), (8, 16));
    }
}
