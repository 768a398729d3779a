//! Text rendering of the per-CPU page lists read from /proc/zoneinfo.

use crate::monitor::zoneinfo::{Zone, totals};
use crate::units;

fn range(values: impl Iterator<Item = u64>) -> String {
    let v: Vec<u64> = values.collect();
    match (v.iter().min(), v.iter().max()) {
        (Some(lo), Some(hi)) if lo == hi => lo.to_string(),
        (Some(lo), Some(hi)) => format!("{lo}-{hi}"),
        _ => "-".into(),
    }
}

/// One line per zone with lists, the total held, and optionally every list.
pub fn text(zones: &[Zone], page_size: u64, per_cpu: bool) -> String {
    let mut out = format!(
        "per-CPU page lists (/proc/zoneinfo), {} KiB pages\n",
        page_size / 1024
    );
    out.push_str(&format!(
        "{:>4} {:<8} {:>5} {:>10} {:>11} {:>13} {:>7}\n",
        "node", "zone", "cpus", "count", "held", "high/cpu", "batch"
    ));
    for z in zones.iter().filter(|z| !z.pagesets.is_empty()) {
        out.push_str(&format!(
            "{:>4} {:<8} {:>5} {:>10} {:>11} {:>13} {:>7}\n",
            z.node,
            z.name,
            z.pagesets.len(),
            z.held(),
            units::size(z.held() * page_size),
            range(z.pagesets.iter().map(|p| p.high)),
            range(z.pagesets.iter().map(|p| p.batch)),
        ));
    }
    let t = totals(zones);
    out.push_str(&format!(
        "held in per-CPU lists: {} pages = {} in {} lists; {} if every list filled to high\n",
        t.held,
        units::size(t.held * page_size),
        t.lists,
        units::size(t.high * page_size),
    ));
    if per_cpu {
        out.push_str(&format!(
            "\n{:>4} {:<8} {:>5} {:>8} {:>8} {:>7}\n",
            "node", "zone", "cpu", "count", "high", "batch"
        ));
        for z in zones {
            for p in &z.pagesets {
                out.push_str(&format!(
                    "{:>4} {:<8} {:>5} {:>8} {:>8} {:>7}\n",
                    z.node, z.name, p.cpu, p.count, p.high, p.batch
                ));
            }
        }
    }
    out
}
