//! The lockfan report: operations per second by lock count K and task count
//! T, the speedup over K=1 at each T, and the lost-update check.

use super::cells;
use crate::model::Run;
use crate::workload::lockfan::parse_variant;

pub fn text(run: &Run) -> String {
    let mut tasks: Vec<usize> = run.cases.iter().map(|c| c.case.tasks).collect();
    tasks.sort_unstable();
    tasks.dedup();
    let mut kinds: Vec<&str> = Vec::new();
    let mut locks: Vec<usize> = Vec::new();
    for c in &run.cases {
        if let Some((kind, k)) = parse_variant(&c.case.variant) {
            if !kinds.contains(&kind) {
                kinds.push(kind);
            }
            if !locks.contains(&k) {
                locks.push(k);
            }
        }
    }
    locks.sort_unstable();
    let mut out = format!(
        "lockfan: {} critical sections per task, each writing {} cache lines\n\
         under one of K locks; {} mode; {}\n\
         million ops/s (all tasks) at T tasks, and x: the speedup over K=1\n",
        cells::cfg(run, "ops"),
        cells::cfg(run, "lines"),
        cells::cfg(run, "mode"),
        cells::medians_of(run),
    );
    let get = |kind: &str, k: usize, t: usize| {
        run.cases
            .iter()
            .find(|c| c.case.variant == format!("{kind}-{k}") && c.case.tasks == t)
            .and_then(|c| cells::median(c, "ops/s"))
    };
    // Four task counts fit 80 columns; more are split into further blocks.
    for (kind, tasks) in kinds
        .iter()
        .flat_map(|kind| tasks.chunks(4).map(move |ts| (kind, ts)))
    {
        out.push_str(&format!("\n{kind:<6}  K"));
        for t in tasks {
            out.push_str(&format!("{:>10}{:>7}", format!("T={t}"), "x"));
        }
        out.push('\n');
        for &k in &locks {
            out.push_str(&format!("{:>9}", k));
            for &t in tasks {
                let v = get(kind, k, t);
                let base = get(kind, 1, t);
                let cell = v.map(|v| format!("{:.2}", v / 1e6)).unwrap_or("-".into());
                let x = match (v, base) {
                    (Some(v), Some(b)) if b > 0.0 => format!("{:.2}", v / b),
                    _ => "-".into(),
                };
                out.push_str(&format!("{cell:>10}{x:>7}"));
            }
            out.push('\n');
        }
    }
    let lost = cells::max_over_run(run, "lost");
    let torn = cells::max_over_run(run, "torn locks");
    let samples: usize = run.cases.iter().map(|c| c.measured().count()).sum();
    if lost == 0.0 && torn == 0.0 {
        out.push_str(&format!(
            "\nlock check: no lost updates; every protected counter equals the operations\n\
             done under its lock ({samples} samples)\n"
        ));
    } else {
        out.push_str(&format!(
            "\nwarning: the locks lost updates: up to {lost:.0} increments lost, {torn:.0} locks \
             with disagreeing lines in a sample\n"
        ));
    }
    out
}
