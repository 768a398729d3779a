//! The colour report (seed 003): per case, the median sample's per-task
//! colour summary, Steiner's table when there are 32 colours or fewer, run
//! lengths, physical interleaving, page counts and per-CPU lists; then, when
//! the run has several knob combinations, skew and effective colours side
//! by side with the change against the first combination. Past a screenful
//! of tasks the per-task tables give way to a summary per node
//! (report/groups.rs).

use std::collections::BTreeMap;

use super::cells::names;
use super::export::{Align, Block, Layout, Table};
use crate::model::{CaseSamples, Run, Sample};
use crate::units;
use crate::workload::colour::Stored;
use crate::workload::stored::view;

const HEADLINE: &str = "eff_fraction";

fn fig(s: &Sample, k: &str) -> Option<f64> {
    s.data.figures.get(k).copied()
}

/// Values of "prefix:N" keys of a task map, by N.
fn series(t: &BTreeMap<String, f64>, prefix: &str) -> BTreeMap<u64, f64> {
    t.iter()
        .filter_map(|(k, &v)| {
            let n = k.strip_prefix(prefix)?.strip_prefix(':')?.parse().ok()?;
            Some((n, v))
        })
        .collect()
}

/// `f(i, task)` for each task of the sample `s`, in task order.
fn per_task<T>(s: &Sample, mut f: impl FnMut(usize, &BTreeMap<String, f64>) -> T) -> Vec<T> {
    s.data
        .tasks
        .iter()
        .enumerate()
        .map(|(i, t)| f(i, t))
        .collect()
}

/// "case V, N tasks" and the case's knobs, as the colour report names a
/// case (html/colour.rs too).
pub fn case_name(c: &crate::model::Case) -> String {
    let mut out = format!("case {}, {} tasks", c.variant, c.tasks);
    if !c.knobs.is_empty() {
        out.push_str(&format!(", {}", c.knobs_label()));
    }
    out
}

/// A case's heading over its median sample, `n` the samples it is of.
fn median_heading(c: &CaseSamples, n: usize) -> String {
    format!(
        "{} (median of {n} sample{} by worst effective fraction)",
        case_name(&c.case),
        if n == 1 { "" } else { "s" }
    )
}

/// exp(-(k-1)/2N): the effective fraction expected when N pages fall on k
/// colours uniformly at random (the plug-in entropy is biased low by
/// (k-1)/2N nats), so a reader can tell noise from skew.
pub fn uniform_baseline(pages: f64, colours: f64) -> f64 {
    if pages <= 0.0 {
        return f64::NAN;
    }
    (-(colours - 1.0) / (2.0 * pages)).exp()
}

pub fn blocks(run: &Run) -> Vec<Block> {
    let cfg: Stored = view(&run.meta.config);
    let page = cfg.page_size.unwrap_or(4096);
    let touch = match cfg.interleave {
        Some(k) => format!("interleaved touch, {k} page(s) per turn"),
        None => "parallel touch".into(),
    };
    let mut out = format!(
        "colour: page colours of memory allocated in parallel\n\
         {} mode, {} per task, {}, THP {}, {} KiB pages\n",
        cfg.mode,
        units::size(cfg.size_per_task),
        touch,
        cfg.thp,
        page / 1024
    );
    let colours = cfg.colours;
    let l2 = cfg.l2_colours;
    out.push_str(&format!(
        "colours: {colours} ({}){}\n",
        cfg.colours_from,
        l2.map(|c| format!(", L2 {c}")).unwrap_or_default()
    ));
    let mut blocks = vec![Block::Paragraph(out)];
    let machine = super::groups::machine_of(run);
    for c in &run.cases {
        blocks.push(Block::Blank);
        blocks.extend(case_block(c, colours, l2, page, machine.as_ref()));
    }
    blocks.extend(knob_ab(run, colours));
    blocks
}

fn case_block(
    c: &CaseSamples,
    colours: u64,
    l2: Option<u64>,
    page: u64,
    machine: Option<&crate::machine::Snapshot>,
) -> Vec<Block> {
    let Some((s, n)) = crate::report::median_sample(c, HEADLINE) else {
        return vec![Block::Paragraph(format!(
            "{}: no samples\n",
            case_name(&c.case)
        ))];
    };
    if s.data.tasks.len() > super::groups::SCREEN_ROWS {
        return summary(c, s, n, machine, page);
    }
    let rows = per_task(s, |i, t| {
        let g = |k: &str| t.get(k).copied().unwrap_or(f64::NAN);
        vec![
            i.to_string(),
            if g("cpu") >= 0.0 {
                format!("{}", g("cpu"))
            } else {
                "-".into()
            },
            format!("{}", g("pages")),
            format!("{}", g("thp_pages")),
            format!("{}", g("min")),
            format!("{}", g("max")),
            format!("{:.1}", g("cov")),
            format!("{:.1}", g("chi2")),
            pval(g("p")),
            format!("{:.1}", g("eff")),
            format!("{:.2}", g("eff_fraction")),
            t.get("l2_eff_fraction")
                .map(|v| format!("{v:.2}"))
                .unwrap_or_else(|| "-".into()),
        ]
    });
    let mut out = vec![Block::Table(Table {
        title: median_heading(c, n),
        header: vec![names(&[
            "task", "cpu", "pages", "thp", "min", "max", "CoV%", "chi2", "p-value", "eff", "frac",
            "L2frac",
        ])],
        align: vec![Align::Right; 12],
        rows,
        layout: Some(Layout::spaced(&[4, 4, 7, 6, 4, 4, 6, 9, 8, 6, 5, 6])),
    })];
    if let Some(t) = s.data.tasks.first() {
        let base = t.get("base_pages").copied().unwrap_or(0.0);
        out.push(Block::Paragraph(format!(
            "uniform-random baseline: {:.0} pages over {colours} colours give frac ~{:.2}\n",
            base,
            uniform_baseline(base, colours as f64)
        )));
    }
    for (name, prefix, k) in [("LLC", "llc", Some(colours)), ("L2", "l2", l2)] {
        if let Some(k) = k.filter(|&k| k <= 32) {
            out.extend(steiner_table(s, name, prefix, k));
        }
    }
    out.push(runs_table(s));
    out.push(Block::Paragraph(footer(s, page)));
    out
}

/// A case of more tasks than a screen holds: the effective fraction and
/// the spread of the colours per node, then the footer.
fn summary(
    c: &CaseSamples,
    s: &Sample,
    n: usize,
    machine: Option<&crate::machine::Snapshot>,
    page: u64,
) -> Vec<Block> {
    use super::groups::{Figure, Task, summarise};
    let tasks = |key: &str| -> Vec<Task> {
        per_task(s, |i, t| Task {
            index: i,
            cpu: t.get("cpu").filter(|&&c| c >= 0.0).map(|&c| c as usize),
            value: t.get(key).copied().unwrap_or(f64::NAN),
        })
    };
    let head = median_heading(c, n);
    vec![
        summarise(
            format!("{head}\neffective fraction of colours (frac) per task, by node:"),
            &tasks("eff_fraction"),
            machine,
            Figure {
                name: "frac",
                digits: 2,
                lower_is_worse: true,
            },
        ),
        summarise(
            "coefficient of variation of the colour counts (CoV%) per task:".into(),
            &tasks("cov"),
            machine,
            Figure {
                name: "CoV%",
                digits: 1,
                lower_is_worse: false,
            },
        ),
        Block::Paragraph("every task's histogram and runs: --json, --csv, report --html\n".into()),
        Block::Paragraph(footer(s, page)),
    ]
}

fn pval(p: f64) -> String {
    if p.is_nan() {
        "-".into()
    } else if p < 1e-3 {
        format!("{p:.0e}")
    } else {
        format!("{p:.3}")
    }
}

/// Seed 003's table: one row per task, one column per colour, 16 a line.
fn steiner_table(s: &Sample, name: &str, prefix: &str, colours: u64) -> Vec<Block> {
    let mut out = Vec::new();
    for lo in (0..colours).step_by(16) {
        let hi = (lo + 16).min(colours);
        let mut header = vec![format!("{name} colour  ")];
        header.extend((lo..hi).map(|c| c.to_string()));
        let rows = per_task(s, |i, t| {
            let h = series(t, prefix);
            let mut row = vec![format!("task {i:>4}:  ")];
            row.extend((lo..hi).map(|c| format!("{}", h.get(&c).copied().unwrap_or(0.0))));
            row
        });
        out.push(Block::Table(Table {
            title: format!("{name} colour counts per task, colours {lo}..{}", hi - 1),
            align: [Align::Left]
                .into_iter()
                .chain((lo..hi).map(|_| Align::Right))
                .collect(),
            header: vec![header],
            rows,
            layout: Some(Layout::label_and(0, (hi - lo) as usize, 4).untitled()),
        }));
    }
    out
}

const BUCKETS: [(u64, u64, &str); 7] = [
    (1, 1, "1"),
    (2, 3, "2-3"),
    (4, 7, "4-7"),
    (8, 15, "8-15"),
    (16, 63, "16-63"),
    (64, 511, "64-511"),
    (512, u64::MAX, "512+"),
];

/// Share of pages in runs of physically consecutive frames, by run length.
fn runs_table(s: &Sample) -> Block {
    let mut header = vec!["task".to_string()];
    header.extend(BUCKETS.iter().map(|b| b.2.to_string()));
    header.push("typical".into());
    let rows = per_task(s, |i, t| {
        let h = series(t, "run");
        let pages: f64 = h.iter().map(|(len, n)| *len as f64 * n).sum();
        let mut row = vec![i.to_string()];
        for (lo, hi, _) in BUCKETS {
            let p: f64 = h.range(lo..=hi).map(|(len, n)| *len as f64 * n).sum();
            // + 0.0: an empty f64 sum is -0.0.
            row.push(format!("{:.1}", 100.0 * p / pages.max(1.0) + 0.0));
        }
        row.push(
            t.get("typical_run")
                .map(|v| format!("{v}"))
                .unwrap_or_else(|| "-".into()),
        );
        row
    });
    Block::Table(Table {
        title: "% of pages in runs of consecutive frames (virtual order)".into(),
        header: vec![header],
        align: vec![Align::Right; BUCKETS.len() + 2],
        rows,
        layout: Some(Layout::columns(
            [("", 4)]
                .into_iter()
                .chain(BUCKETS.iter().map(|_| ("", 8)))
                .chain([("", 10)])
                .collect(),
        )),
    })
}

fn footer(s: &Sample, page: u64) -> String {
    let f = |k: &str| fig(s, k).unwrap_or(f64::NAN);
    let mut out = String::new();
    let mut prun: Vec<f64> = per_task(s, |_, t| {
        let h = series(t, "prun");
        let (pages, runs) = h
            .iter()
            .fold((0.0, 0.0), |(p, r), (len, n)| (p + *len as f64 * n, r + n));
        pages / runs.max(1.0)
    });
    // One figure per task fits a line up to 8 tasks; more are summarised.
    let mean_prun: Vec<String> = if prun.len() <= 8 {
        prun.iter().map(|v| format!("{v:.1}")).collect()
    } else {
        prun.sort_by(f64::total_cmp);
        vec![format!(
            "min {:.1}, median {:.1}, max {:.1} of {} tasks",
            prun[0],
            crate::stats::summary::median(&prun),
            prun[prun.len() - 1],
            prun.len()
        )]
    };
    out.push_str(&format!(
        "physical interleave: {} adjacent frame pairs, {} change task ({:.1}%);\n\
         mean own run in PFN order {}\n",
        f("adjacent_pairs"),
        f("switches"),
        100.0 * f("switch_fraction"),
        mean_prun.join(" / ")
    ));
    let ok = f("pages") == f("pages_read");
    out.push_str(&format!(
        "pages touched {} read {}{}; faults {};\nTHP pages {} ({})\n",
        f("pages"),
        f("pages_read"),
        if ok { " (equal)" } else { " (MISMATCH)" },
        f("faults"),
        f("thp_pages"),
        if f("thp_separated") == 1.0 {
            "from kpageflags, kept out of the histograms"
        } else {
            "kpageflags unreadable: not separated"
        }
    ));
    if f("duplicate_frames") > 0.0 {
        out.push_str(&format!(
            "WARNING: {} frames appear in more than one task\n",
            f("duplicate_frames")
        ));
    }
    if let (Some(b), Some(a)) = (fig(s, "pcp_before_kib"), fig(s, "pcp_after_kib")) {
        let kib = |v: f64| units::size((v * 1024.0) as u64);
        out.push_str(&format!(
            "per-CPU lists held {} before, {} after\n\
             (all lists at high: {}, batch {}, {} KiB pages)\n",
            kib(b),
            kib(a),
            kib(f("pcp_high_kib")),
            f("pcp_batch"),
            page / 1024
        ));
    }
    out
}

/// Side-by-side skew and effective colours per knob combination.
fn knob_ab(run: &Run, colours: u64) -> Vec<Block> {
    let combos = run.knob_settings();
    if combos.len() < 2 {
        return Vec::new();
    }
    let mut rows: Vec<(String, usize)> = Vec::new();
    for c in &run.cases {
        let r = (c.case.variant.clone(), c.case.tasks);
        if !rows.contains(&r) {
            rows.push(r);
        }
    }
    let value = |variant: &str, tasks: usize, combo: &str, figure: &str| {
        run.cases
            .iter()
            .find(|c| {
                c.case.variant == variant && c.case.tasks == tasks && c.case.knobs_label() == combo
            })
            .and_then(|c| crate::report::median_sample(c, HEADLINE))
            .and_then(|(s, _)| fig(s, figure))
    };
    let width = combos.iter().map(|c| c.len()).max().unwrap_or(0).max(9);
    let mut out = vec![Block::Paragraph(format!(
        "\nknob A/B, median samples; change against {}\n",
        combos[0]
    ))];
    for (title, figure, better_higher) in [
        (
            format!("effective colours of the worst task (of {colours})"),
            "eff_colours",
            true,
        ),
        (
            "colour skew: largest per-task CoV of colour counts (%)".to_string(),
            "cov_max",
            false,
        ),
    ] {
        let mut header = names(&["case", "tasks"]);
        header.extend(combos.iter().cloned());
        header.extend(combos[1..].iter().map(|c| format!("change {}", short(c))));
        let table_rows = rows
            .iter()
            .map(|(variant, tasks)| {
                let vals: Vec<Option<f64>> = combos
                    .iter()
                    .map(|c| value(variant, *tasks, c, figure))
                    .collect();
                let mut row = vec![variant.clone(), tasks.to_string()];
                row.extend(vals.iter().map(|v| match v {
                    Some(v) => format!("{v:.1}"),
                    None => "-".into(),
                }));
                row.extend(vals[1..].iter().map(|v| change(vals[0], *v, better_higher)));
                row
            })
            .collect();
        out.push(Block::Table(Table {
            title,
            align: [Align::Left]
                .into_iter()
                .chain(vec![Align::Right; header.len() - 1])
                .collect(),
            header: vec![header],
            rows: table_rows,
            layout: Some(Layout::columns(
                [("", 12), (" ", 5)]
                    .into_iter()
                    .chain(combos.iter().map(|_| (" ", width)))
                    .chain(combos[1..].iter().map(|_| (" ", 16)))
                    .collect(),
            )),
        }));
    }
    out
}

/// The value part of "name=value", for narrow column headers.
fn short(combo: &str) -> &str {
    combo.rsplit('=').next().unwrap_or(combo)
}

fn change(base: Option<f64>, v: Option<f64>, better_higher: bool) -> String {
    match (base, v) {
        (Some(b), Some(v)) if b != 0.0 => {
            let pct = 100.0 * (v - b) / b;
            let better = if better_higher { pct > 0.0 } else { pct < 0.0 };
            let word = if pct == 0.0 {
                "same"
            } else if better {
                "better"
            } else {
                "worse"
            };
            format!("{pct:+.1}% {word}")
        }
        _ => "-".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::machine::Snapshot;
    use crate::model::build::{case, run, sample};

    /// 512 tasks on 16 nodes: a summary per node in 80 columns, no
    /// per-task rows, the worst task named.
    #[test]
    fn many_tasks_are_summarised_per_node() {
        let m = Snapshot::fake(16, 32, 256);
        let mut one = sample().figure("eff_fraction", 0.4);
        for i in 0..512 {
            let frac = if i == 77 { 0.4 } else { 0.99 };
            one = one.task(&[
                ("cpu", i as f64),
                ("pages", 4096.0),
                ("eff_fraction", frac),
                ("cov", 5.0),
                ("prun:2", 10.0),
            ]);
        }
        let r = run("colour")
            .config(serde_json::json!({"colours": 16, "size_per_task": 1 << 20}))
            .machine(serde_json::to_value(&m).unwrap())
            .case(case(512, "parallel").sample(one))
            .build();
        let out = crate::report::export::text::blocks(&blocks(&r));
        assert!(out.lines().all(|l| l.chars().count() <= 80), "{out}");
        assert!(out.lines().count() < 60, "{out}");
        let node2 = out.lines().find(|l| l.starts_with("node 2 ")).expect(&out);
        assert!(
            node2.contains("77 0.40") && node2.contains(" 32 "),
            "{node2}"
        );
        assert!(out.contains("of 512 tasks"), "{out}");
    }
}
