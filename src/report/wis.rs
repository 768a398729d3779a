//! The will-it-scale tests' table: per mode and task count, the median
//! sample's operations per second, per task, faults per second and per
//! operation, and TLB shootdown interrupts per second (system-wide, from
//! /proc/interrupts), with the vmstat TLB counters where the kernel has them.

use crate::model::{Run, Sample};

fn fig(s: &Sample, name: &str) -> String {
    match s.data.figures.get(name) {
        Some(v) if v.is_finite() => format!("{v:.0}"),
        _ => "-".into(),
    }
}

pub fn text(run: &Run) -> String {
    let c = &run.meta.config;
    let test = c.get("test").and_then(|v| v.as_str()).unwrap_or("?");
    let about = crate::workload::wis::TESTS
        .iter()
        .find(|(n, _)| *n == test)
        .map_or("", |(_, a)| *a);
    let size = c
        .get("size")
        .and_then(|v| v.as_u64())
        .map(crate::parse::format_size)
        .unwrap_or_else(|| "?".into());
    let secs = c.get("secs").and_then(|v| v.as_f64()).unwrap_or(f64::NAN);
    let mut out = format!("wis {test}: {about}\n{size} per loop, {secs} s per sample\n");
    out.push_str(" mode     Thr Rep        ops/s   ops/s/task     faults/s faults/op shootdn/s\n");
    let mut tlb = String::new();
    for cs in &run.cases {
        let Some((s, reps)) = crate::report::median_sample(cs, "ops/s") else {
            continue;
        };
        let per_op = s
            .data
            .figures
            .get("faults/op")
            .map_or("-".into(), |v| format!("{v:.3}"));
        out.push_str(&format!(
            " {:<8} {:>3} {:>3} {:>12} {:>12} {:>12} {:>9} {:>9}{}\n",
            cs.case.variant,
            cs.case.tasks,
            reps,
            fig(s, "ops/s"),
            fig(s, "ops/s/task"),
            fig(s, "faults/s"),
            per_op,
            fig(s, "shootdowns/s"),
            if cs.measured().any(|s| s.flagged) {
                " *"
            } else {
                ""
            }
        ));
        let counters: Vec<String> = s
            .vmstat
            .iter()
            .filter(|(k, _)| k.starts_with("nr_tlb"))
            .map(|(k, v)| format!("{k} {v}"))
            .collect();
        if !counters.is_empty() {
            tlb.push_str(&format!(
                " {} {}: {}\n",
                cs.case.variant,
                cs.case.tasks,
                counters.join(", ")
            ));
        }
    }
    if run.cases.iter().any(|c| c.measured().any(|s| s.flagged)) {
        out.push_str("  * a sample of this row was flagged as noisy\n");
    }
    out.push_str("shootdn/s: TLB shootdown interrupts of all CPUs (/proc/interrupts) per second\n");
    if !tlb.is_empty() {
        out.push_str("vmstat TLB counters (median sample):\n");
        out.push_str(&tlb);
    }
    out
}
