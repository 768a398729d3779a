//! Lameter's pft table (seed 000), the measured fault counts beside the
//! pages touched, and the populate limit with the fidelity ratio.

use crate::model::{CaseSamples, Run, Sample};
use crate::workload::pft::{FAULT, HEADLINE, POPULATE};

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

fn cfg_str(run: &Run, key: &str) -> String {
    match run.meta.config.get(key) {
        Some(serde_json::Value::String(s)) => s.clone(),
        Some(serde_json::Value::Null) | None => "?".into(),
        Some(v) => v.to_string(),
    }
}

fn cases<'a>(run: &'a Run, variant: &'a str) -> impl Iterator<Item = &'a CaseSamples> {
    run.cases.iter().filter(move |c| c.case.variant == variant)
}

pub fn text(run: &Run) -> String {
    let page = run
        .meta
        .config
        .get("page_size")
        .and_then(|v| v.as_u64())
        .unwrap_or(4096);
    // The PMD THP size of the machine the run was taken on (2 MiB on x86-64).
    let thp_size = run
        .meta
        .machine
        .get("thp_pmd_size")
        .and_then(|v| v.as_u64())
        .unwrap_or(2 << 20);
    let pin = match run.meta.config.get("pin") {
        Some(serde_json::Value::Object(o)) => o
            .get("list")
            .and_then(|l| l.as_array())
            .map(|a| {
                let cpus: Vec<usize> = a
                    .iter()
                    .filter_map(|v| v.as_u64())
                    .map(|v| v as usize)
                    .collect();
                crate::machine::cpulist::format(&cpus)
            })
            .unwrap_or_else(|| "?".into()),
        _ => cfg_str(run, "pin"),
    };
    let spec: crate::workload::fault_map::Spec =
        serde_json::from_value(run.meta.config.clone()).unwrap_or_default();
    let mut out = if spec == crate::workload::fault_map::Spec::default() {
        format!(
            "pft: anonymous write faults, {} mode, {} KiB pages, THP {}, pin {}\n",
            cfg_str(run, "mode"),
            page / 1024,
            cfg_str(run, "thp"),
            pin
        )
    } else {
        format!(
            "pft: {}, {} mode, pin {}\n",
            spec.describe(),
            cfg_str(run, "mode"),
            pin
        )
    };
    out.push_str("   Gb Rep  Thr CLine      User     System       Wall   flt/cpu/s  fault/wsec\n");
    let cline = cfg_str(run, "cline");
    let mut checks = Vec::new();
    let mut counts = String::new();
    let mut work = String::new();
    for c in cases(run, FAULT) {
        let Some((s, reps)) = crate::report::median_sample(c, HEADLINE) else {
            out.push_str(&format!(
                "{:>5} {:>3} {:>4}   (no samples)\n",
                "-", 0, c.case.tasks
            ));
            continue;
        };
        out.push_str(&format!(
            "{:>5} {:>3} {:>4} {:>5} {:>9.3}s {:>9.3}s {:>9.3}s {:>11} {:>11}{}\n",
            gb(fig(s, "bytes")),
            reps,
            c.case.tasks,
            cline,
            fig(s, "user"),
            fig(s, "system"),
            fig(s, "wall"),
            rate(fig(s, "flt/cpu/s")),
            rate(fig(s, HEADLINE)),
            if c.measured().any(|s| s.flagged) {
                " *"
            } else {
                ""
            },
        ));
        counts.push_str(&format!(
            "{:>4} {:>11.0} {:>11.0} {:>11} {:>9} {:>9.4}s {:>9.4}s\n",
            c.case.tasks,
            fig(s, "pages"),
            fig(s, "faults"),
            vm(s, "pgfault"),
            vm(s, "thp_fault_alloc"),
            fig(s, "mmap"),
            fig(s, "munmap"),
        ));
        work.push_str(&format!(
            "{:>4} {:>10.1} {:>9.4}s {:>12.1} {:>12.0} {:>11.2} {:>11}\n",
            c.case.tasks,
            fig(s, "pages") * page as f64 / (1u64 << 20) as f64,
            fig(s, "wall"),
            fig(s, "bytes/wsec") / (1u64 << 20) as f64,
            fig(s, HEADLINE),
            fig(s, "pages/fault"),
            s.data
                .figures
                .get("kfaults")
                .map_or("-".into(), |k| format!("{k:.0}")),
        ));
        checks.extend(fault_checks(c.case.tasks, s, page, thp_size, &spec));
    }
    if run.cases.iter().any(|c| c.measured().any(|s| s.flagged)) {
        out.push_str("  * a sample of this row was flagged as noisy\n");
    }
    out.push_str("\nMeasured faults (median sample; mmap and munmap timed apart, slowest task):\n");
    out.push_str(" Thr     touched      faults     pgfault  thp_alloc      mmap     munmap\n");
    out.push_str(&counts);
    if !work.is_empty() {
        out.push_str(
            "\nWork done (median sample; ready = wall time until all of it is faulted in):\n",
        );
        out.push_str(
            " Thr        MiB      ready     MiB/wsec   fault/wsec pages/fault perf faults\n",
        );
        out.push_str(&work);
    }
    for w in &checks {
        out.push_str(&format!("warning: {w}\n"));
    }
    out.push_str(&populate_section(run));
    out
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
    let pgfault = vm(s, "pgfault") as f64;
    let d = off(pgfault, minflt);
    if d.abs() > 2.0 {
        w.push(format!(
            "{tasks} tasks: /proc/vmstat pgfault rose by {pgfault:.0}, tasks' rusage says \
             {minflt:.0} ({d:+.1} %){}",
            if d > 0.0 {
                "; other activity faulted meanwhile"
            } else {
                ""
            }
        ));
    }
    w
}

fn populate_section(run: &Run) -> String {
    let mut rows = String::new();
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
        rows.push_str(&format!(
            "{:>4} {:>14.3} {:>14} {:>9}\n",
            c.case.tasks,
            limit,
            faulted
                .map(|f| format!("{f:.3}"))
                .unwrap_or_else(|| "-".into()),
            faulted
                .filter(|_| limit > 0.0)
                .map(|f| format!("{:.3}", f / limit))
                .unwrap_or_else(|| "-".into()),
        ));
    }
    if rows.is_empty() {
        return String::new();
    }
    format!(
        "\nPopulate limit (MADV_POPULATE_WRITE, same sizes;\n\
         pages resident by mincore per wall-second):\n \
         Thr     pages/wsec     fault/wsec  fidelity\n{rows}"
    )
}
