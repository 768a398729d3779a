//! The cmd report: wall/user/system and faults of the command tree, the
//! main vmstat deltas, and seed 001's iostat-like disk figures.

use super::cells::names;
use super::export::{Align, Block, Layout, Table};
use crate::model::{Run, Sample};
use crate::stats::summary::summarise;
use crate::workload::cmd::Stored;
use crate::workload::stored::view;

fn values(run: &Run, k: &str) -> Vec<f64> {
    run.cases.iter().flat_map(|c| c.values(k)).collect()
}

fn vm(s: &Sample, k: &str) -> i64 {
    s.vmstat.get(k).copied().unwrap_or(0)
}

pub fn blocks(run: &Run) -> Vec<Block> {
    let cfg: Stored = view(&run.meta.config);
    let argv: Vec<&str> = cfg.argv.iter().map(String::as_str).collect();
    let mut out = vec![Block::Paragraph(format!(
        "cmd: {}\n",
        crate::parse::shell_words(&argv)
    ))];
    let mut rows = Vec::new();
    for (l, k) in [
        ("wall", "wall"),
        ("user", "user"),
        ("system", "system"),
        ("minflt", "minflt"),
        ("majflt", "majflt"),
    ] {
        if let Some(s) = summarise(&values(run, k), false) {
            rows.push(vec![
                l.to_string(),
                s.n.to_string(),
                format!("{:.3}", s.min),
                format!("{:.3}", s.median),
                format!("{:.3}", s.mean),
                format!("{:.3}", s.max),
                format!("{:.2}", s.coeff_var),
            ]);
        }
    }
    let header = names(&["", "n", "min", "median", "mean", "max", "cv%"]);
    let layout = Layout::spaced(&[10, 3, 12, 12, 12, 12, 8]).untitled();
    // The warning sat between the header and the rows: the header is the
    // text heading then.
    let warning = warm_up_check(run);
    let layout = if warning.is_empty() {
        layout
    } else {
        let head = crate::report::export::text::table(&Table {
            header: vec![header.clone()],
            align: vec![Align::Right; 7],
            layout: Some(layout.clone()),
            ..Table::default()
        });
        layout.with_header(head + &warning)
    };
    out.push(Block::Table(Table {
        title: "Times and faults of the command tree".into(),
        header: vec![header],
        align: [Align::Left].into_iter().chain([Align::Right; 6]).collect(),
        rows,
        layout: Some(layout),
    }));
    let Some((s, _)) = run
        .cases
        .first()
        .and_then(|c| crate::report::median_sample(c, "wall"))
    else {
        return out;
    };
    let mut vmstat = String::new();
    for keys in [
        &["pgfault", "pgmajfault", "pgpgin", "pgpgout"][..],
        &["pswpin", "pswpout", "numa_pages_migrated"][..],
    ] {
        for k in keys {
            vmstat.push_str(&format!("  {k} {}", vm(s, k)));
        }
        vmstat.push('\n');
    }
    out.push(Block::Blank);
    out.push(Block::Paragraph(format!(
        "vmstat deltas (median sample):\n{vmstat}"
    )));
    if let Some(dev) = &cfg.device {
        let rows = crate::monitor::diskstats::SHOWN
            .iter()
            .map(|k| {
                let mean = s.data.figures.get(&format!("disk/{k}"));
                let max = s.data.figures.get(&format!("disk_max/{k}"));
                vec![
                    format!("{dev}-{}", k.replace('-', "")),
                    mean.map(|v| format!("{v:.2}"))
                        .unwrap_or_else(|| "-".into()),
                    max.map(|v| format!("{v:.2}")).unwrap_or_else(|| "-".into()),
                ]
            })
            .collect();
        out.push(Block::Blank);
        out.push(Block::Table(Table {
            title: format!("{dev}: disk figures"),
            header: vec![names(&["", "Mean", "Max"])],
            align: vec![Align::Left, Align::Right, Align::Right],
            rows,
            layout: Some(
                Layout::spaced(&[16, 10, 10])
                    .with_header(format!("{dev}: {:<10} {:>10} {:>10}\n", "", "Mean", "Max")),
            ),
        }));
        out.push(Block::Paragraph(
            "(Mean over the whole sample; Max of the per-interval values)\n".into(),
        ));
    }
    out
}

/// A command that does its work once (a build, then "up to date") makes
/// the warm-up the only real sample. Without `--setup` to reset its state,
/// a warm-up several times slower than every measured sample says so.
fn warm_up_check(run: &Run) -> String {
    let cfg: Stored = view(&run.meta.config);
    if cfg.setup.is_some() {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::build::{case, run, sample};
    use crate::report::export::text;

    /// A warm-up far slower than every measured sample is warned about
    /// between the table's heading and its rows, as it always was.
    #[test]
    fn a_slow_warm_up_is_warned_about_above_the_rows() {
        let r = run("cmd")
            .set("argv", serde_json::json!(["make"]))
            .case(
                case(1, "cmd")
                    .sample(sample().warmup().figure("wall", 10.0))
                    .samples(2, |_| sample().figure("wall", 1.0)),
            )
            .build();
        let out = text::blocks(&blocks(&r));
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines[0], "cmd: make");
        assert!(
            lines[1].ends_with("cv%") && lines[1].starts_with(&format!("{:<10} {:>3}", "", "n"))
        );
        assert!(
            lines[2].starts_with("warning: the warm-up took 10.000 s"),
            "{out}"
        );
        assert!(lines[3].starts_with("wall         2        1.000"), "{out}");
    }
}
