//! The churn report (seed 004): zfod faults/s in total and per task, the
//! imbalance between tasks, and the per-interval totals.

use crate::model::{Run, Sample};

fn fig(s: &Sample, k: &str) -> f64 {
    s.data.figures.get(k).copied().unwrap_or(f64::NAN)
}

pub fn text(run: &Run) -> String {
    let c = &run.meta.config;
    let mut out = format!(
        "churn: mmap/touch/munmap of {} per loop for {} s, {} mode\n",
        crate::parse::format_size(c.get("chunk").and_then(|v| v.as_u64()).unwrap_or(0)),
        c.get("secs").and_then(|v| v.as_f64()).unwrap_or(0.0),
        c.get("mode").and_then(|v| v.as_str()).unwrap_or("?"),
    );
    out.push_str(
        " Thr Rep      zfod/s  zfod/s/task     task min     task max  max/min      loops\n",
    );
    let mut series = String::new();
    for cs in &run.cases {
        let Some((s, reps)) = crate::report::median_sample(cs, "zfod/s") else {
            continue;
        };
        out.push_str(&format!(
            "{:>4} {:>3} {:>11.0} {:>12.0} {:>12.0} {:>12.0} {:>8.3} {:>10.0}\n",
            cs.case.tasks,
            reps,
            fig(s, "zfod/s"),
            fig(s, "zfod/s/task"),
            fig(s, "task_min"),
            fig(s, "task_max"),
            fig(s, "imbalance"),
            fig(s, "loops"),
        ));
        let (faults, pages) = (fig(s, "faults"), fig(s, "pages"));
        if pages > 0.0 && ((faults - pages) / pages).abs() > 0.02 {
            out.push_str(&format!(
                "warning: {} tasks: {faults:.0} faults measured (rusage) for {pages:.0} pages touched\n",
                cs.case.tasks
            ));
        }
        let pts: Vec<String> = (1..)
            .map_while(|i| {
                let t = s.data.figures.get(&format!("series/{i:03}/t"))?;
                let r = s.data.figures.get(&format!("series/{i:03}/rate"))?;
                Some(format!("{t:.2}s {r:.0}"))
            })
            .collect();
        if !pts.is_empty() {
            series.push_str(&format!("{:>4}: {}\n", cs.case.tasks, pts.join(", ")));
        }
    }
    if !series.is_empty() {
        out.push_str("\nzfod/s in total per interval (real timestamps, median sample):\n");
        out.push_str(&series);
    }
    out
}
