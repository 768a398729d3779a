//! The cmd report: wall/user/system and faults of the command tree, the
//! main vmstat deltas, and seed 001's iostat-like disk figures.

use crate::model::{Run, Sample};
use crate::stats::summary::summarise;

fn values(run: &Run, k: &str) -> Vec<f64> {
    run.cases
        .iter()
        .flat_map(|c| c.measured())
        .filter_map(|s| s.data.figures.get(k).copied())
        .collect()
}

fn vm(s: &Sample, k: &str) -> i64 {
    s.vmstat.get(k).copied().unwrap_or(0)
}

pub fn text(run: &Run) -> String {
    let c = &run.meta.config;
    let argv: Vec<&str> = c
        .get("argv")
        .and_then(|v| v.as_array())
        .map(|a| a.iter().filter_map(|x| x.as_str()).collect())
        .unwrap_or_default();
    let mut out = format!("cmd: {}\n", crate::parse::shell_words(&argv));
    out.push_str(&format!(
        "{:<10} {:>3} {:>12} {:>12} {:>12} {:>12} {:>8}\n",
        "", "n", "min", "median", "mean", "max", "cv%"
    ));
    let row = |out: &mut String, label: &str, k: &str, rate: bool| {
        if let Some(s) = summarise(&values(run, k), rate) {
            out.push_str(&format!(
                "{label:<10} {:>3} {:>12.3} {:>12.3} {:>12.3} {:>12.3} {:>8.2}\n",
                s.n, s.min, s.median, s.mean, s.max, s.coeff_var
            ));
        }
    };
    for (l, k) in [
        ("wall", "wall"),
        ("user", "user"),
        ("system", "system"),
        ("minflt", "minflt"),
        ("majflt", "majflt"),
    ] {
        row(&mut out, l, k, false);
    }
    let Some((s, _)) = run
        .cases
        .first()
        .and_then(|c| crate::report::median_sample(c, "wall"))
    else {
        return out;
    };
    out.push_str("\nvmstat deltas (median sample):");
    for k in [
        "pgfault",
        "pgmajfault",
        "pgpgin",
        "pgpgout",
        "pswpin",
        "pswpout",
        "numa_pages_migrated",
    ] {
        out.push_str(&format!(" {k} {}", vm(s, k)));
    }
    out.push('\n');
    if let Some(dev) = c.get("device").and_then(|v| v.as_str()) {
        out.push_str(&format!(
            "\n{dev}: {:<10} {:>10} {:>10}\n",
            "", "Mean", "Max"
        ));
        for k in crate::monitor::diskstats::SHOWN {
            let mean = s.data.figures.get(&format!("disk/{k}"));
            let max = s.data.figures.get(&format!("disk_max/{k}"));
            out.push_str(&format!(
                "{:<16} {:>10} {:>10}\n",
                format!("{dev}-{}", k.replace('-', "")),
                mean.map(|v| format!("{v:.2}"))
                    .unwrap_or_else(|| "-".into()),
                max.map(|v| format!("{v:.2}")).unwrap_or_else(|| "-".into()),
            ));
        }
        out.push_str("(Mean over the whole sample; Max of the per-interval values)\n");
    }
    out
}
