//! Lameter's pft table (seed 000), the measured fault counts beside the
//! pages touched, and the populate limit with the fidelity ratio.

use super::cells::{FLAGGED_ROW, any_flagged, flag, names};
use super::export::{Align, Block, Layout, Table};
use crate::model::{CaseSamples, Run, Sample};
use crate::workload::pft::{FAULT, HEADLINE, POPULATE, Stored};

fn fig(s: &Sample, name: &str) -> f64 {
    s.data.figures.get(name).copied().unwrap_or(f64::NAN)
}

/// A rate to 0.001, or "-" when it could not be measured (no CPU time or
/// wall time registered: the size was too small for the clocks).
fn rate(v: f64) -> String {
    if v.is_finite() {
        format!("{v:.3}")
    } else {
        "-".into()
    }
}

fn vm(s: &Sample, name: &str) -> i64 {
    s.vmstat.get(name).copied().unwrap_or(0)
}

/// "64" for whole GiB, "0.25" for sizes under 1 GiB or fractional.
fn gb(bytes: f64) -> String {
    let g = bytes / (1u64 << 30) as f64;
    if g >= 1.0 && (g - g.round()).abs() < 1e-9 {
        format!("{}", g.round() as u64)
    } else {
        format!("{g:.2}")
    }
}

fn cases<'a>(run: &'a Run, variant: &'a str) -> impl Iterator<Item = &'a CaseSamples> {
    run.cases.iter().filter(move |c| c.case.variant == variant)
}

pub fn blocks(run: &Run) -> Vec<Block> {
    let cfg = Stored::of(&run.meta.config);
    let page = cfg.page_size.unwrap_or(4096);
    // The PMD THP size of the machine the run was taken on (2 MiB on x86-64).
    let thp_size = run
        .meta
        .machine
        .get("thp_pmd_size")
        .and_then(|v| v.as_u64())
        .unwrap_or(2 << 20);
    let spec = &cfg.map;
    let out = if *spec == crate::workload::fault_map::Spec::default() {
        format!(
            "pft: anonymous write faults, {} mode, {} KiB pages, THP {}, pin {}\n",
            cfg.mode,
            page / 1024,
            cfg.thp,
            cfg.pin
        )
    } else {
        format!(
            "pft: {}, {} mode, pin {}\n",
            spec.describe(),
            cfg.mode,
            cfg.pin
        )
    };
    let cline = cfg.cline.to_string();
    let mut checks = Vec::new();
    let mut main = Vec::new();
    let mut counts = Vec::new();
    let mut work = Vec::new();
    for c in cases(run, FAULT) {
        let Some((s, reps)) = crate::report::median_sample(c, HEADLINE) else {
            main.push(vec![
                "-".into(),
                "0".into(),
                c.case.tasks.to_string(),
                "  (no samples)".into(),
            ]);
            continue;
        };
        main.push(vec![
            gb(fig(s, "bytes")),
            reps.to_string(),
            c.case.tasks.to_string(),
            cline.clone(),
            format!("{:.3}s", fig(s, "user")),
            format!("{:.3}s", fig(s, "system")),
            format!("{:.3}s", fig(s, "wall")),
            rate(fig(s, "flt/cpu/s")),
            rate(fig(s, HEADLINE)),
            flag(c),
        ]);
        counts.push(vec![
            c.case.tasks.to_string(),
            format!("{:.0}", fig(s, "pages")),
            format!("{:.0}", fig(s, "faults")),
            vm(s, "pgfault").to_string(),
            vm(s, "thp_fault_alloc").to_string(),
            format!("{:.4}s", fig(s, "mmap")),
            format!("{:.4}s", fig(s, "munmap")),
        ]);
        work.push(vec![
            c.case.tasks.to_string(),
            format!("{:.1}", fig(s, "pages") * page as f64 / (1u64 << 20) as f64),
            format!("{:.4}s", fig(s, "wall")),
            format!("{:.1}", fig(s, "bytes/wsec") / (1u64 << 20) as f64),
            format!("{:.0}", fig(s, HEADLINE)),
            format!("{:.2}", fig(s, "pages/fault")),
            s.data
                .figures
                .get("kfaults")
                .map_or("-".into(), |k| format!("{k:.0}")),
        ]);
        checks.extend(fault_checks(c.case.tasks, s, page, thp_size, spec));
    }
    let mut out = vec![
        Block::Paragraph(out),
        Block::Table(Table {
            title: "Page faults by task count (Lameter's pft, median sample)".into(),
            header: vec![names(&super::imported::LAMETER)],
            align: [Align::Right; 9].into_iter().chain([Align::Left]).collect(),
            rows: main,
            layout: Some(
                Layout::spaced(&[5, 3, 4, 5, 10, 10, 10, 11, 11, 0])
                    .sep(9, "")
                    .with_header(
                        "   Gb Rep  Thr CLine      User     System       Wall   flt/cpu/s  fault/wsec\n",
                    ),
            ),
        }),
    ];
    if any_flagged(run) {
        out.push(Block::Paragraph(FLAGGED_ROW.into()));
    }
    let title = "Measured faults (median sample; mmap and munmap timed apart, slowest task):";
    out.push(Block::Blank);
    out.push(right_aligned(title, &COUNTS, counts));
    if !work.is_empty() {
        let title = "Work done (median sample; ready = wall time until all of it is faulted in):";
        out.push(Block::Blank);
        out.push(right_aligned(title, &WORK, work));
    }
    if !checks.is_empty() {
        out.push(Block::Paragraph(super::warnings::paragraph(&checks)));
    }
    out.extend(populate_section(run));
    out
}

/// The columns of a table of numbers: their names, their text widths and
/// the text header line (in its historical spacing).
struct Columns {
    names: &'static [&'static str],
    widths: &'static [usize],
    header: &'static str,
}

/// The measured-faults table.
const COUNTS: Columns = Columns {
    names: &[
        "Thr",
        "touched",
        "faults",
        "pgfault",
        "thp_alloc",
        "mmap",
        "munmap",
    ],
    widths: &[4, 11, 11, 11, 9, 10, 10],
    header: " Thr     touched      faults     pgfault  thp_alloc      mmap     munmap",
};

/// The work-done table.
const WORK: Columns = Columns {
    names: &[
        "Thr",
        "MiB",
        "ready",
        "MiB/wsec",
        "fault/wsec",
        "pages/fault",
        "perf faults",
    ],
    widths: &[4, 10, 10, 12, 12, 11, 11],
    header: " Thr        MiB      ready     MiB/wsec   fault/wsec pages/fault perf faults",
};

/// A table of right-aligned `columns` under `title`.
fn right_aligned(title: &str, columns: &Columns, rows: Vec<Vec<String>>) -> Block {
    let header = columns.header;
    Block::Table(Table {
        title: title.into(),
        header: vec![names(columns.names)],
        align: vec![Align::Right; columns.names.len()],
        rows,
        layout: Some(Layout::spaced(columns.widths).with_header(format!("{title}\n{header}\n"))),
    })
}

/// Faults expected from the pages touched: one per base page, one per THP
/// instead of its base pages (THP counted only where the region may have them).
fn fault_checks(
    tasks: usize,
    s: &Sample,
    page: u64,
    thp_size: u64,
    spec: &crate::workload::fault_map::Spec,
) -> Vec<String> {
    let pages = fig(s, "pages");
    let minflt = fig(s, "faults");
    // With base pages the region is MADV_NOHUGEPAGE: THP faults the vmstat
    // delta shows happened elsewhere (stacks, heap under THP "always", as
    // in a Debian guest), not in the region.
    let thp = if spec.pages == crate::workload::fault_map::PageKind::Base {
        0.0
    } else {
        vm(s, "thp_fault_alloc") as f64
    };
    let per_thp = thp_size as f64 / page as f64;
    // Hugetlb runs declare what they expect; reads and shared or file
    // memory may map several pages per fault and get no check here (their
    // pages per fault is printed instead).
    let expected = match s.data.figures.get("expected") {
        Some(e) => *e,
        None if !spec.one_fault_per_page() => f64::NAN,
        None => (pages - thp * per_thp).max(0.0) + thp,
    };
    let mut w = Vec::new();
    if let Some(k) = s.data.figures.get("kfaults") {
        let d = if minflt > 0.0 {
            (k - minflt) / minflt * 100.0
        } else {
            0.0
        };
        if d.abs() > 2.0 {
            w.push(format!(
                "{tasks} tasks: the perf page-faults counter saw {k:.0} faults, rusage {minflt:.0} \
                 ({d:+.1} %)"
            ));
        }
    }
    let off = |a: f64, b: f64| {
        if b > 0.0 {
            (a - b) / b * 100.0
        } else {
            f64::INFINITY
        }
    };
    let d = off(minflt, expected);
    if expected.is_finite() && d.abs() > 2.0 {
        w.push(format!(
            "{tasks} tasks: {minflt:.0} faults measured (rusage), {expected:.0} expected from \
             {pages:.0} pages touched and their huge pages ({d:+.1} %)"
        ));
    }
    w.extend(pgfault_check(tasks, s, minflt));
    w
}

/// /proc/vmstat's pgfault against the faults measured: the tasks' timed
/// loops (rusage), vmscale's own around them (its rusage across the
/// sample: mapping, file preparation, teardown) and the rest, with the
/// evidence for what the rest was.
fn pgfault_check(tasks: usize, s: &Sample, minflt: f64) -> Option<String> {
    let pgfault = vm(s, "pgfault") as f64;
    if minflt <= 0.0 {
        return None;
    }
    let pct = |x: f64| x / minflt * 100.0;
    let Some(&own) = s.noise.get(crate::monitor::vmstat::OWN_FAULTS) else {
        // Stored before vmscale counted its own faults.
        let d = pct(pgfault - minflt);
        return (d.abs() > 2.0).then(|| {
            format!(
                "{tasks} tasks: /proc/vmstat pgfault rose by {pgfault:.0}, tasks' rusage says \
                 {minflt:.0} ({d:+.1} %); this run did not count vmscale's own faults apart"
            )
        });
    };
    let rest = pgfault - own.max(minflt);
    if pct(rest).abs() <= 2.0 {
        return None;
    }
    let around = (own - minflt).max(0.0);
    let split = format!(
        "{tasks} tasks: /proc/vmstat pgfault rose by {pgfault:.0}: {minflt:.0} in the tasks' \
         timed loops, {around:.0} by vmscale around them (its rusage), {rest:.0} ({:+.1} %) \
         by neither",
        pct(rest)
    );
    let share = s.noise.get("other_share").copied().unwrap_or(f64::NAN);
    let why = if rest < 0.0 {
        String::new()
    } else if share >= 0.01 {
        format!(
            "; other processes faulted meanwhile (they used {:.0} % of the CPUs)",
            share * 100.0
        )
    } else if share.is_finite() {
        // mm/memory.c counts PGFAULT on every try of a fault, rusage and
        // perf once per fault that completed; /proc/stat's ticks are too
        // coarse to rule other processes out over a short sample.
        format!(
            "; other processes used {:.1} % of the CPUs meanwhile: too little to tell \
             them from faults the kernel retried (pgfault counts each try)",
            share * 100.0
        )
    } else {
        String::new()
    };
    Some(split + &why)
}

fn populate_section(run: &Run) -> Vec<Block> {
    let mut rows = Vec::new();
    for c in cases(run, POPULATE) {
        let Some((p, _)) = crate::report::median_sample(c, "pages/wsec") else {
            continue;
        };
        let limit = fig(p, "pages/wsec");
        let faulted = run
            .cases
            .iter()
            .find(|f| f.case.variant == FAULT && f.case.tasks == c.case.tasks)
            .and_then(|f| crate::report::median_sample(f, HEADLINE))
            .map(|(s, _)| fig(s, HEADLINE));
        rows.push(vec![
            c.case.tasks.to_string(),
            format!("{limit:.3}"),
            faulted
                .map(|f| format!("{f:.3}"))
                .unwrap_or_else(|| "-".into()),
            faulted
                .filter(|_| limit > 0.0)
                .map(|f| format!("{:.3}", f / limit))
                .unwrap_or_else(|| "-".into()),
        ]);
    }
    if rows.is_empty() {
        return Vec::new();
    }
    vec![
        Block::Blank,
        Block::Table(Table {
            title: "Populate limit (MADV_POPULATE_WRITE, same sizes;\n\
                    pages resident by mincore per wall-second):"
                .into(),
            header: vec![names(&["Thr", "pages/wsec", "fault/wsec", "fidelity"])],
            align: vec![Align::Right; 4],
            rows,
            layout: Some(Layout::spaced(&[4, 14, 14, 9])),
        }),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::build::{case, run, sample};
    use crate::report::export::text;
    use serde_json::json;

    fn first_lines(config: serde_json::Value) -> Vec<String> {
        let one = sample().figures(&[("fault/wsec", 1e5), ("bytes", 1e6), ("pages", 10.0)]);
        let r = run("pft")
            .config(config)
            .case(case(2, FAULT).sample(one))
            .build();
        let out = text::blocks(&blocks(&r));
        out.lines().take(4).map(String::from).collect()
    }

    /// A run stored before page_size, cline and the mapping were recorded
    /// (and with its CPU list as an object) still names what it has.
    #[test]
    fn an_old_config_shows_what_it_stored_and_question_marks_for_the_rest() {
        let l = first_lines(json!({"mode": "thread", "thp": "never", "pin": {"list": [0, 1, 2]}}));
        assert_eq!(
            l[0],
            "pft: anonymous write faults, thread mode, 4 KiB pages, THP never, pin 0-2"
        );
        let row: Vec<&str> = l[2].split_whitespace().collect();
        assert_eq!(row.get(2..4), Some(&["2", "?"][..]), "{l:?}");
    }

    /// pgfault beyond the tasks' faults: vmscale's own faults (its rusage)
    /// are counted as such and need no warning; the rest is named with
    /// the evidence for its cause.
    #[test]
    fn the_pgfault_warning_tells_vmscale_own_faults_from_others() {
        let s = |own: f64, pgfault: i64, share: f64| {
            sample()
                .figures(&[("faults", 4096.0), ("pages", 4096.0)])
                .vmstat("pgfault", pgfault)
                .noise(crate::monitor::vmstat::OWN_FAULTS, own)
                .noise("other_share", share)
                .build()
        };
        // A file prepared by vmscale: pgfault 85958, all in its rusage.
        assert_eq!(pgfault_check(1, &s(85950.0, 85958, 0.0), 4096.0), None);
        let w = pgfault_check(2, &s(5000.0, 9000, 0.3), 4096.0).unwrap();
        assert!(
            w.contains("4096 in the tasks' timed loops, 904 by vmscale around them")
                && w.contains("4000 (+97.7 %) by neither; other processes faulted meanwhile"),
            "{w}"
        );
        let w = pgfault_check(2, &s(4096.0, 5000, 0.001), 4096.0).unwrap();
        assert!(w.contains("too little to tell"), "{w}");
        // A run stored before own faults were counted blames nothing.
        let old = sample()
            .figures(&[("faults", 4096.0)])
            .vmstat("pgfault", 9000)
            .build();
        let w = pgfault_check(1, &old, 4096.0).unwrap();
        assert!(
            w.ends_with("did not count vmscale's own faults apart"),
            "{w}"
        );
    }

    /// An imported table's config has its own keys beside mode and thp;
    /// a number where text is expected is shown as stored.
    #[test]
    fn an_imported_config_reads_without_the_fields_it_lacks() {
        let c = Stored::of(&json!({
            "imported": true, "caption": "pft run", "columns": ["Gb", "Rep"],
            "mode": "process", "thp": null, "pin": 3, "page_size": "4k"
        }));
        assert_eq!(c.mode.to_string(), "process");
        assert_eq!(c.thp.to_string(), "?");
        assert_eq!(c.pin.to_string(), "3");
        assert_eq!(c.cline.to_string(), "?");
        assert_eq!(c.page_size, None);
        assert_eq!(c.map, crate::workload::fault_map::Spec::default());
    }
}
