//! Text tables of profiles and locks: top kernel functions per case in the
//! shape of `perf report --stdio`, the functions whose share moved between
//! two profiles (like `perf diff`), and a lockmeter-like lock table.

use super::export::{Align, Block, Layout, Table, text};
use crate::locks::LockRow;
use crate::profile::CaseProfile;
use crate::profile::folded::{kernel_shares, shifts};

const WIDTH: usize = 80;
/// Rows per table.
pub const TOP: usize = 15;

use crate::text::clip as fit;

/// `n` as a percentage of `total` (0 when there is nothing).
pub fn pct(n: u64, total: u64) -> f64 {
    if total == 0 {
        0.0
    } else {
        100.0 * n as f64 / total as f64
    }
}

/// Top kernel functions of one case, most self samples first.
pub fn top_table(case: &str, p: &CaseProfile, rows: usize) -> String {
    text::blocks(&top_blocks(case, p, rows))
}

/// The top-functions table as blocks (a note when there is no kernel sample).
pub fn top_blocks(case: &str, p: &CaseProfile, rows: usize) -> Vec<Block> {
    let (total, shares) = kernel_shares(&p.folded);
    let title = format!(
        "Kernel profile, case {case}: {} at {} Hz, {} samples ({} lost)",
        p.event, p.hz, total, p.lost
    );
    let rows = shares
        .iter()
        .take(rows)
        .map(|s| {
            vec![
                format!("{:.2}%", pct(s.total_samples, total)),
                format!("{:.2}%", pct(s.self_samples, total)),
                s.self_samples.to_string(),
                s.name.clone(),
            ]
        })
        .collect();
    perf_blocks(title, &TOP_COLUMNS, WIDTH - 35, rows, "no kernel samples")
}

/// The top-functions table's columns: the text before each, its width,
/// its name.
const TOP_COLUMNS: [(&str, usize, &str); 4] = [
    ("   ", 8, "Children"),
    ("  ", 8, "Self"),
    ("  ", 8, "Samples"),
    ("  ", 0, "Symbol"),
];

/// The lock table's columns.
const LOCK_COLUMNS: [(&str, usize, &str); 7] = [
    ("  ", 5, "CON%"),
    (" ", 8, "MEAN-us"),
    (" ", 8, "MAX-us"),
    (" ", 9, "TOTAL-ms"),
    (" ", 9, "ACQUIRED"),
    (" ", 7, "CONTEND"),
    ("  ", 0, "NAME"),
];

/// A table in the shape of perf's: right-aligned numbers and a last,
/// left-aligned name cut to `fit` characters, under `# title` and a `#`
/// line of the column names; `(empty)` where there is no row.
fn perf_blocks(
    title: String,
    columns: &[(&'static str, usize, &str)],
    fit: usize,
    rows: Vec<Vec<String>>,
    empty: &str,
) -> Vec<Block> {
    let last = columns.len() - 1;
    let names: String = columns
        .iter()
        .map(|&(sep, w, name)| format!("{sep}{name:>w$}"))
        .collect();
    let none = rows.is_empty();
    let mut out = vec![Block::Table(Table {
        header: vec![columns.iter().map(|c| c.2.to_string()).collect()],
        align: std::iter::repeat_n(Align::Right, last)
            .chain([Align::Left])
            .collect(),
        rows,
        layout: Some(Layout {
            columns: columns.iter().map(|&(sep, w, _)| (sep, w)).collect(),
            text_header: Some(format!("# {title}\n#{}\n", &names[1..])),
            text_title: false,
            fit: Some((last, fit)),
        }),
        title,
    })];
    if none {
        out.push(Block::Paragraph(format!("   ({empty})\n")));
    }
    out
}

/// The kernel functions whose self share moved most from `base` to `other`.
pub fn diff_table(title: &str, base: &CaseProfile, other: &CaseProfile, rows: usize) -> String {
    let mut out = format!("# Profile shift, {title} (self share of all samples)\n");
    out.push_str("#  Baseline   Samples     Other   Samples     Delta  Symbol\n");
    let v = shifts(&base.folded, &other.folded);
    for s in v.iter().take(rows) {
        out.push_str(&format!(
            "   {:>7.2}%  {:>8}  {:>7.2}%  {:>8}  {:>+7.2}pp  {}\n",
            s.base_share * 100.0,
            s.base_samples,
            s.other_share * 100.0,
            s.other_samples,
            s.delta_points(),
            fit(&s.name, WIDTH - 54)
        ));
    }
    if v.is_empty() {
        out.push_str("   (no kernel samples)\n");
    }
    out
}

fn us(ns: f64) -> String {
    format!("{:.2}", ns / 1000.0)
}

/// The lock table of one case: per source, heaviest total wait first.
pub fn locks_table(case: &str, samples: u64, rows: &[LockRow]) -> String {
    text::blocks(&locks_blocks(case, samples, rows))
}

/// The lock table as blocks: a `[source]` line over each source's rows (a
/// note when there is no lock event).
pub fn locks_blocks(case: &str, samples: u64, rows: &[LockRow]) -> Vec<Block> {
    let title = format!("Locks, case {case}, summed over {samples} samples");
    let mut lines = Vec::new();
    let mut sources: Vec<&str> = rows.iter().map(|r| r.source.as_str()).collect();
    sources.sort_unstable();
    sources.dedup();
    for src in sources {
        lines.push(vec![format!("[{src}]")]);
        let mut these: Vec<&LockRow> = rows.iter().filter(|r| r.source == src).collect();
        these.sort_by(|a, b| {
            b.wait_ns
                .cmp(&a.wait_ns)
                .then(b.acquisitions.cmp(&a.acquisitions))
        });
        for r in these.iter().take(TOP) {
            // mmap_lock rows time every acquisition; the others only waits.
            let waits = if r.source == "mmap_lock" {
                r.acquisitions
            } else {
                r.contended
            };
            let mean = r.wait_ns as f64 / waits.max(1) as f64;
            lines.push(vec![
                format!("{:.1}", pct(r.contended, r.acquisitions)),
                us(mean),
                us(r.max_wait_ns as f64),
                format!("{:.3}", r.wait_ns as f64 / 1e6),
                r.acquisitions.to_string(),
                r.contended.to_string(),
                r.name.clone(),
            ]);
        }
    }
    perf_blocks(title, &LOCK_COLUMNS, WIDTH - 55, lines, "no lock events")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn profile(lines: &[(&str, u64)]) -> CaseProfile {
        CaseProfile {
            event: "cpu-clock".into(),
            hz: 999,
            samples: lines.iter().map(|l| l.1).sum(),
            lost: 0,
            folded: lines.iter().map(|(s, n)| (s.to_string(), *n)).collect(),
        }
    }

    #[test]
    fn tables_fit_80_columns_and_name_the_functions() {
        let long = "x".repeat(200);
        let a = profile(&[
            ("main;f_[k];clear_page_erms_[k]", 8),
            (&format!("{long}_[k]"), 2),
        ]);
        let b = profile(&[("main;f_[k];clear_page_erms_[k]", 2), ("main;f_[k]", 8)]);
        let t = top_table("anon/2", &a, 10);
        assert!(t.contains("80.00%") && t.contains("clear_page_erms"), "{t}");
        let d = diff_table("run 1 -> run 2", &a, &b, 10);
        assert!(d.contains("-60.00pp  clear_page_erms"), "{d}");
        let rows = vec![LockRow {
            source: "mmap_lock".into(),
            name: long.clone(),
            acquisitions: 4,
            contended: 1,
            wait_ns: 3000,
            max_wait_ns: 3000,
        }];
        let l = locks_table("anon/2", 2, &rows);
        assert!(l.contains(" 25.0 "), "{l}");
        for text in [t, d, l] {
            assert!(text.lines().all(|x| x.chars().count() <= 80), "{text}");
        }
    }
}
