//! The fork report (seed 002): forks/s and system time per fork and per
//! page by task count, with fork() and teardown timed apart.

use crate::model::{Run, Sample};

fn fig(s: &Sample, k: &str) -> f64 {
    s.data.figures.get(k).copied().unwrap_or(f64::NAN)
}

pub fn text(run: &Run) -> String {
    let c = &run.meta.config;
    let backing = match c.get("backing") {
        Some(serde_json::Value::String(s)) => s.clone(),
        Some(serde_json::Value::Object(o)) => o
            .get("file")
            .and_then(|p| p.as_str())
            .map(|p| format!("shared file in {p}"))
            .unwrap_or_else(|| "file".into()),
        _ => "?".into(),
    };
    let size = c.get("size").and_then(|v| v.as_u64()).unwrap_or(0);
    let mut out = format!(
        "fork: {} mapping of {} per task, {} forks per task,\n\
         children write {} pages, {} mode\n",
        backing,
        crate::parse::format_size(size),
        c.get("forks").and_then(|v| v.as_u64()).unwrap_or(0),
        c.get("touch").and_then(|v| v.as_u64()).unwrap_or(0),
        c.get("mode").and_then(|v| v.as_str()).unwrap_or("?"),
    );
    out.push_str(
        " Thr Rep   forks    forks/s  sys/fork  sys/page      fork  teardown  child_flt\n",
    );
    out.push_str(
        "                                    us        ns        us        us   per fork\n",
    );
    for cs in &run.cases {
        let Some((s, reps)) = crate::report::median_sample(cs, "forks/s") else {
            continue;
        };
        let forks = fig(s, "forks");
        out.push_str(&format!(
            "{:>4} {:>3} {:>7.0} {:>10.1} {:>9.1} {:>9.2} {:>9.1} {:>9.1} {:>10.1}\n",
            cs.case.tasks,
            reps,
            forks,
            fig(s, "forks/s"),
            fig(s, "sys/fork"),
            fig(s, "sys/page"),
            fig(s, "fork"),
            fig(s, "teardown"),
            fig(s, "child_minflt") / forks,
        ));
    }
    out.push_str(
        "sys = parent + children system time (wait4);\n\
         per page of the parent's populated mapping\n",
    );
    out
}
