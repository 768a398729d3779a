//! The mmap-lock table: fault rate of N faulting threads beside the
//! address-space change rate of M other threads, and the fault rate as a
//! share of the same N without changers.

use crate::model::Run;

pub fn text(run: &Run) -> String {
    let c = &run.meta.config;
    let size = c
        .get("size")
        .and_then(|v| v.as_u64())
        .map(crate::parse::format_size)
        .unwrap_or_else(|| "?".into());
    let rate = c.get("rate").and_then(|v| v.as_f64()).unwrap_or(f64::NAN);
    let rate = if rate == 0.0 {
        "unthrottled".to_string()
    } else {
        format!("{rate} cycles/s each")
    };
    let mut out = format!(
        "mmap-lock: N threads re-fault {size} each (write, MADV_DONTNEED);\n\
         M threads mmap/mprotect/munmap 64 KiB, {rate}\n"
    );
    out.push_str("   N    M Rep      fault/s fault/s/task    changes/s  vs M=0\n");
    let median = |variant: &str, tasks: usize| {
        run.cases
            .iter()
            .find(|c| c.case.variant == variant && c.case.tasks == tasks)
            .and_then(|c| crate::report::median_sample(c, "fault/s"))
    };
    for cs in &run.cases {
        let Some((s, reps)) = crate::report::median_sample(cs, "fault/s") else {
            continue;
        };
        let f = |n: &str| s.data.figures.get(n).copied().unwrap_or(f64::NAN);
        let base = median("m0", cs.case.tasks)
            .and_then(|(b, _)| b.data.figures.get("fault/s").copied())
            .filter(|b| *b > 0.0);
        out.push_str(&format!(
            "{:>4} {:>4} {:>3} {:>12.0} {:>12.0} {:>12.0} {:>7}{}\n",
            cs.case.tasks,
            cs.case.variant.trim_start_matches('m'),
            reps,
            f("fault/s"),
            f("fault/s/task"),
            f("changes/s"),
            base.map_or("-".into(), |b| format!("{:.3}", f("fault/s") / b)),
            if cs.measured().any(|s| s.flagged) {
                " *"
            } else {
                ""
            }
        ));
    }
    if run.cases.iter().any(|c| c.measured().any(|s| s.flagged)) {
        out.push_str("  * a sample of this row was flagged as noisy\n");
    }
    out
}
