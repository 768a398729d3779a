//! The latency report: ns per dependent load by working-set size on base
//! pages and THP (their ratio is the TLB's share), the latency on each side
//! of every cache size sysfs reports, and the plateaus found in the curve.

use super::cells;
use crate::machine::Snapshot;
use crate::model::Run;
use crate::parse::format_size;
use crate::workload::latency::parse_variant;

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

pub fn text(run: &Run) -> String {
    let base = curve(run, "base");
    let thp = curve(run, "thp");
    let n = run.cases.first().map(|c| c.measured().count()).unwrap_or(0);
    let mut out = format!(
        "latency: dependent loads over one random cycle of {}-byte nodes, at least {} loads \
         per sample;\nns per load, medians of {n} samples\n",
        cells::cfg(run, "line_size"),
        cells::cfg(run, "loads"),
    );
    out.push_str("\n  working set    base ns     thp ns  base/thp  thp huge%\n");
    let mut sizes: Vec<u64> = base.iter().chain(&thp).map(|x| x.0).collect();
    sizes.sort_unstable();
    sizes.dedup();
    for s in &sizes {
        let b = base.iter().find(|x| x.0 == *s);
        let t = thp.iter().find(|x| x.0 == *s);
        let f = |v: Option<f64>, p: usize| v.map(|v| format!("{v:.p$}")).unwrap_or("-".into());
        let ratio = match (b, t) {
            (Some(b), Some(t)) if t.1 > 0.0 => Some(b.1 / t.1),
            _ => None,
        };
        out.push_str(&format!(
            "{:>13} {:>10} {:>10} {:>9} {:>10}\n",
            format_size(*s),
            f(b.map(|x| x.1), 2),
            f(t.map(|x| x.1), 2),
            f(ratio, 2),
            f(t.and_then(|x| x.2), 0),
        ));
    }
    let main = if base.is_empty() { &thp } else { &base };
    let machine: Option<Snapshot> = serde_json::from_value(run.meta.machine.clone()).ok();
    out.push_str(&caches_section(main, machine.as_ref()));
    out.push_str(&plateaus_section(main));
    out
}

/// For each data cache level: latency at the largest size that fits and at
/// the smallest size beyond it.
fn caches_section(curve: &[(u64, f64, Option<f64>)], m: Option<&Snapshot>) -> String {
    let Some(m) = m else {
        return String::new();
    };
    let mut s = String::new();
    for level in m.cache_levels() {
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
        match (below, above) {
            (Some(b), Some(a)) => s.push_str(&format!(
                "  {name:<4} {:>9}: {:>7.2} ns at {:>9} -> {:>7.2} ns at {:>9}  x{:.2}{}\n",
                format_size(size),
                b.1,
                format_size(b.0),
                a.1,
                format_size(a.0),
                a.1 / b.1,
                if a.1 / b.1 > STEP { "" } else { "  (no step)" }
            )),
            _ => s.push_str(&format!(
                "  {name:<4} {:>9}: not bracketed by the sizes measured\n",
                format_size(size)
            )),
        }
    }
    if s.is_empty() {
        return s;
    }
    format!("\ncache sizes (sysfs) and the latency either side (half and twice the size):\n{s}")
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

fn plateaus_section(curve: &[(u64, f64, Option<f64>)]) -> String {
    let pts: Vec<(u64, f64)> = curve.iter().map(|x| (x.0, x.1)).collect();
    let p = plateaus(&pts);
    if p.is_empty() {
        return String::new();
    }
    let mut s = format!(
        "\nplateaus (neighbouring sizes within x{STEP} of each other, {} pages):\n",
        if curve.iter().any(|x| x.2.is_some_and(|h| h > 0.0)) {
            "huge"
        } else {
            "base"
        }
    );
    for (lo, hi, ns) in p {
        s.push_str(&format!(
            "  {:>9} .. {:<9} {ns:>8.2} ns\n",
            format_size(lo),
            format_size(hi)
        ));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

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
