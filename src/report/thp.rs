//! The thp report (mmtests' thpscale/thpchallenge layout): per case the
//! latency of a huge-page step by kind (base, huge, all) as percentiles,
//! then the kernel's THP and compaction counters over the fault phase with
//! mmtests' derived figures (THP success, compaction and scan efficiency),
//! beside the share of steps found huge and its cross-checks.

use super::export::{Align, Block, Table};
use crate::model::{CaseSamples, Run, Sample};
use crate::units;
use crate::workload::stored::view;
use crate::workload::thp::{PERCENTILES, Stored};

fn fig(s: &Sample, k: &str) -> Option<f64> {
    s.data.figures.get(k).copied().filter(|v| v.is_finite())
}

fn cell(v: Option<f64>, places: usize) -> String {
    v.map_or("-".into(), |v| format!("{v:.places$}"))
}

fn label(c: &CaseSamples) -> String {
    format!("{}/{}", c.case.variant, c.case.tasks)
}

/// The measured sample of each case whose headline is the median.
fn medians(run: &Run) -> Vec<(&CaseSamples, &Sample, usize)> {
    run.cases
        .iter()
        .filter_map(|c| super::median_sample(c, "latency").map(|(s, n)| (c, s, n)))
        .collect()
}

pub fn blocks(run: &Run) -> Vec<Block> {
    let cfg: Stored = view(&run.meta.config);
    let picked = medians(run);
    // A knob the run varies names this block's value, else the machine's.
    let knobs = run.cases.first().map(|c| &c.case.knobs);
    let set = |k: &str, machine: &str| {
        knobs
            .and_then(|m| m.get(k))
            .map_or_else(|| or_unknown(machine).to_string(), |v| v.clone())
    };
    let mut out = vec![Block::Paragraph(format!(
        "thp: phase 1 fragments {} (anon: every other page freed; files: small\n\
         page-cache files between freed pages), phase 2 faults {} advised\n\
         MADV_HUGEPAGE in {} steps; THP enabled {}, defrag {};\n\
         {} (the median sample of each case by latency)\n",
        units::size(cfg.size),
        units::size(cfg.fault_size),
        units::size(cfg.step),
        set("thp", &cfg.thp_enabled),
        set("thp_defrag", &cfg.thp_defrag),
        super::cells::medians_of(run),
    ))];
    for (c, s, _) in &picked {
        out.push(Block::Blank);
        out.push(Block::Table(latency_table(c, s, cfg.step)));
    }
    if !picked.is_empty() {
        out.push(Block::Blank);
        out.push(Block::Table(counters_table(&picked)));
        let notes = checks(&picked, cfg.step);
        if !notes.is_empty() {
            out.push(Block::Paragraph(notes));
        }
    }
    out
}

fn or_unknown(s: &str) -> &str {
    if s.is_empty() { "?" } else { s }
}

fn latency_table(c: &CaseSamples, s: &Sample, step: u64) -> Table {
    let kinds = ["base", "huge", "all"];
    let row = |name: &str, key: &str, places: usize| {
        let mut r = vec![name.to_string()];
        r.extend(
            kinds
                .iter()
                .map(|k| cell(fig(s, &format!("{k}/{key}")), places)),
        );
        r
    };
    let mut rows = vec![row("Steps", "steps", 0), row("Min", "min", 1)];
    for p in PERCENTILES {
        rows.push(row(&format!("{p}th"), &format!("p{p}"), 1));
    }
    rows.push(row("Max", "max", 1));
    rows.push(row("Amean", "mean", 1));
    Table::plain(
        format!(
            "{}: us per {} step (first write, then one per page)",
            label(c),
            units::size(step)
        ),
        &["", "base", "huge", "all"],
        Align::runs(&[(Align::Left, 1), (Align::Right, 3)]),
        rows,
    )
}

/// A ratio in percent, None when the denominator is 0.
fn pct(num: Option<f64>, den: Option<f64>) -> Option<f64> {
    match (num, den) {
        (Some(n), Some(d)) if d > 0.0 => Some(n * 100.0 / d),
        _ => None,
    }
}

fn counters_table(picked: &[(&CaseSamples, &Sample, usize)]) -> Table {
    type Row = (&'static str, fn(&Sample) -> Option<f64>, usize);
    let rows: [Row; 15] = [
        ("Huge steps % (mincore)", |s| fig(s, "huge%"), 2),
        ("THP fault alloc", |s| fig(s, "thp_fault_alloc"), 0),
        ("THP fault fallback", |s| fig(s, "thp_fault_fallback"), 0),
        (
            "THP fallback (charge)",
            |s| fig(s, "thp_fault_fallback_charge"),
            0,
        ),
        (
            "THP success %",
            |s| {
                let a = fig(s, "thp_fault_alloc");
                let f = fig(s, "thp_fault_fallback");
                pct(a, a.zip(f).map(|(a, f)| a + f))
            },
            2,
        ),
        ("Compaction stalls", |s| fig(s, "compact_stall"), 0),
        ("Compaction success", |s| fig(s, "compact_success"), 0),
        ("Compaction failures", |s| fig(s, "compact_fail"), 0),
        (
            "Compaction efficiency %",
            |s| pct(fig(s, "compact_success"), fig(s, "compact_stall")),
            2,
        ),
        (
            "Compaction migrate scanned",
            |s| fig(s, "compact_migrate_scanned"),
            0,
        ),
        (
            "Compaction free scanned",
            |s| fig(s, "compact_free_scanned"),
            0,
        ),
        (
            "Compact scan efficiency %",
            |s| {
                pct(
                    fig(s, "compact_migrate_scanned"),
                    fig(s, "compact_free_scanned"),
                )
            },
            2,
        ),
        ("Page migrate success", |s| fig(s, "pgmigrate_success"), 0),
        ("Minor faults (rusage)", |s| fig(s, "minflt"), 0),
        ("Phase 1 seconds", |s| fig(s, "fragment_s"), 3),
    ];
    let mut header = vec![String::new()];
    header.extend(picked.iter().map(|(c, _, _)| label(c)));
    Table {
        title: "fault phase: /proc/vmstat deltas (whole machine) and derived figures".into(),
        header: vec![header],
        align: Align::runs(&[(Align::Left, 1), (Align::Right, picked.len())]),
        rows: rows
            .iter()
            .map(|(name, f, places)| {
                let mut r = vec![name.to_string()];
                r.extend(picked.iter().map(|(_, s, _)| cell(f(s), *places)));
                r
            })
            .collect(),
        layout: None,
    }
}

/// What the counters say against the steps counted: smaps' AnonHugePages
/// of the fault regions, and the kernel's THP fault count (which also
/// counts other processes, so only too few is a contradiction).
fn checks(picked: &[(&CaseSamples, &Sample, usize)], step: u64) -> String {
    let mut out = String::new();
    for (c, s, _) in picked {
        let steps = fig(s, "huge/steps").unwrap_or(0.0);
        if let Some(smaps) = fig(s, "smaps_huge_bytes") {
            let counted = steps * step as f64;
            if smaps != counted {
                out.push_str(&format!(
                    "note: {}: smaps shows {} in huge pages, the steps found huge \
                     make {} (khugepaged collapses or splits meanwhile)\n",
                    label(c),
                    units::size(smaps as u64),
                    units::size(counted as u64)
                ));
            }
        }
        if fig(s, "thp_fault_alloc").is_some_and(|a| a < steps) {
            out.push_str(&format!(
                "warning: {}: the kernel counted fewer THP faults than steps found huge\n",
                label(c)
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::build::{case, run, sample};
    use crate::report::export::text;

    fn s(latency: f64, huge: f64, fallback: f64) -> crate::model::build::SampleBuilder {
        sample().figures(&[
            ("latency", latency),
            ("huge%", huge),
            ("huge/steps", 3.0),
            ("huge/p50", 100.0),
            ("base/steps", 1.0),
            ("base/p50", 900.0),
            ("thp_fault_alloc", 3.0),
            ("thp_fault_fallback", fallback),
            ("compact_stall", 4.0),
            ("compact_success", 1.0),
            ("smaps_huge_bytes", 3.0 * 2097152.0),
        ])
    }

    #[test]
    fn the_median_sample_gives_percentiles_and_derived_counters() {
        let r = run("thp")
            .config(
                serde_json::json!({"size": 268435456u64, "fault_size": 8388608u64,
                "step": 2097152u64, "thp_enabled": "madvise", "thp_defrag": "madvise"}),
            )
            .case(
                case(1, "anon")
                    .sample(s(300.0, 75.0, 1.0))
                    .sample(s(100.0, 50.0, 9.0))
                    .sample(s(200.0, 60.0, 2.0)),
            )
            .build();
        let out = text::blocks(&blocks(&r));
        assert!(out.contains("phase 1 fragments 256 MiB"), "{out}");
        assert!(out.contains("anon/1: us per 2 MiB step"), "{out}");
        let row = |name: &str| {
            out.lines()
                .find(|l| l.starts_with(name))
                .unwrap_or_else(|| panic!("no {name} in {out}"))
                .split_whitespace()
                .last()
                .unwrap()
                .to_string()
        };
        // The median sample by latency is the third (200 us).
        assert_eq!(row("Huge steps %"), "60.00");
        assert_eq!(row("THP fault fallback"), "2");
        // mmtests: alloc * 100 / (alloc + fallback), success * 100 / stall.
        assert_eq!(row("THP success %"), "60.00");
        assert_eq!(row("Compaction efficiency %"), "25.00");
        assert_eq!(row("Compact scan efficiency %"), "-");
        assert!(!out.contains("smaps shows"), "{out}");
    }

    #[test]
    fn a_varied_knob_names_the_setting_of_its_block() {
        let r = run("thp")
            .config(serde_json::json!({"thp_enabled": "madvise", "thp_defrag": "madvise"}))
            .case(
                case(1, "anon")
                    .knob("thp_defrag", "never")
                    .sample(s(1.0, 50.0, 1.0)),
            )
            .build();
        let out = text::blocks(&blocks(&r));
        assert!(out.contains("THP enabled madvise, defrag never;"), "{out}");
    }
}
