//! Figures shared by the counting micro-benchmarks (atomic, lockfan): the
//! operations the tasks did set against what shared memory counted, the
//! cost of one operation, and one row per task.

use super::SampleData;
use super::spec::{Fig, lower, rate};
use crate::exec::{self, TaskReport};

/// The figures both workloads declare; ops/s is the headline.
pub const FIGURES: &[Fig] = &[
    rate("ops/s", "ops/s"),
    lower("ns/op", "ns"),
    lower("wall", "s"),
];

/// `done` is the report value holding each task's operation count, `name`
/// what an operation is called ("increments", "operations"), `counted` the
/// total read back from the counters afterwards.
pub fn counted_figures(
    reports: &[TaskReport],
    done: usize,
    name: &str,
    counted: u64,
) -> SampleData {
    let ops: f64 = reports.iter().map(|r| r.values[done]).sum();
    let wall = exec::wall_ns(reports) as f64 / 1e9;
    let per_task: Vec<f64> = reports
        .iter()
        .map(|r| r.end_ns.saturating_sub(r.start_ns) as f64 / r.values[done].max(1.0))
        .collect();
    let mut d = SampleData::default();
    let f = &mut d.figures;
    f.insert("counted".into(), counted as f64);
    f.insert(name.into(), ops);
    f.insert("lost".into(), ops - counted as f64);
    f.insert("wall".into(), wall);
    f.insert("ns/op".into(), crate::stats::summary::mean(&per_task));
    if wall > 0.0 {
        f.insert("ops/s".into(), counted as f64 / wall);
    }
    d.tasks = super::task_rows(reports, |i, r| {
        [
            (name, r.values[done]),
            ("ns/op", per_task[i]),
            ("user", r.user_ns as f64 / 1e9),
            ("system", r.sys_ns as f64 / 1e9),
        ]
    });
    d
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lost_and_rates_come_from_what_was_counted() {
        let mut r = [TaskReport::default(), TaskReport::default()];
        for (i, t) in r.iter_mut().enumerate() {
            t.start_ns = 1_000_000_000;
            t.end_ns = 2_000_000_000 + i as u64 * 1_000_000_000;
            t.values[0] = 100.0;
        }
        let d = counted_figures(&r, 0, "operations", 150);
        assert_eq!(d.figures["operations"], 200.0);
        assert_eq!(d.figures["lost"], 50.0);
        assert_eq!(d.figures["wall"], 2.0);
        assert_eq!(d.figures["ops/s"], 75.0);
        assert_eq!(d.figures["ns/op"], 15_000_000.0);
        assert_eq!(d.tasks.len(), 2);
        assert_eq!(d.tasks[1]["operations"], 100.0);
        assert_eq!(d.tasks[1]["ns/op"], 20_000_000.0);
    }
}
