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
    out.push_str(&warm_up_check(run));
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
    out.push_str("\nvmstat deltas (median sample):\n");
    for keys in [
        &["pgfault", "pgmajfault", "pgpgin", "pgpgout"][..],
        &["pswpin", "pswpout", "numa_pages_migrated"][..],
    ] {
        for k in keys {
            out.push_str(&format!("  {k} {}", vm(s, k)));
        }
        out.push('\n');
    }
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

/// A command that does its work once (a build, then "up to date") makes
/// the warm-up the only real sample. Without `--setup` to reset its state,
/// a warm-up several times slower than every measured sample says so.
fn warm_up_check(run: &Run) -> String {
    if run.meta.config.get("setup").is_some_and(|s| !s.is_null()) {
        return String::new();
    }
    let warm: Vec<f64> = run
        .cases
        .iter()
        .flat_map(|c| c.samples.iter().filter(|s| s.warmup))
        .filter_map(|s| s.data.figures.get("wall").copied())
        .collect();
    let measured = values(run, "wall");
    let (Some(first), Some(slowest)) = (
        warm.first().copied(),
        measured.iter().copied().reduce(f64::max),
    ) else {
        return String::new();
    };
    // Five times and a tenth of a second: noise does not reach that.
    if first > 5.0 * slowest && first - slowest > 0.1 {
        return format!(
            "warning: the warm-up took {first:.3} s, every measured sample {slowest:.3} s or \
             less: the command seems to do its work only once (a build then up to date); \
             give --setup to reset it before each sample (e.g. --setup 'make clean') or \
             measure it with --warmup 0 --reps 1\n"
        );
    }
    String::new()
}
