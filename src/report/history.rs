//! A history's report: the text (80 columns, steps marked in the series),
//! the Markdown tables, the CSV records (one per run) and the JSON
//! (`series` and `change_points`); its HTML page is html/history.rs.

use crate::error::{Error, Result};
use crate::history::Options;
use crate::history::select::{By, Series};
use crate::history::{self, Analysis, ChangePoint, Entry};
use crate::report::export::{Align, Block, Records, Report, Table};
use crate::stats::stopping::sig4;
use crate::text::clip;

/// The JSON of a history.
#[derive(serde::Serialize)]
struct Data<'a> {
    workload: &'a str,
    case: &'a str,
    figure: &'a crate::model::Figure,
    by: By,
    alpha: f64,
    min_segment: usize,
    permutations: usize,
    seed: u64,
    min_step: f64,
    run_noise: Option<f64>,
    series: &'a [Entry],
    change_points: &'a [ChangePoint],
    notes: &'a [String],
}

/// The report of the series `s` and its analysis `a` found with `o`.
pub fn build(s: &Series, a: &Analysis, o: &Options) -> Result<Report> {
    let data = Data {
        workload: &s.workload,
        case: &s.case,
        figure: &s.figure,
        by: s.by,
        alpha: o.search.alpha,
        min_segment: o.search.min_segment,
        permutations: o.search.permutations,
        seed: o.search.seed,
        min_step: o.min_step,
        run_noise: a.run_noise,
        series: &a.entries,
        change_points: &a.change_points,
        notes: &s.notes,
    };
    let heading = title(s, a);
    let method = method(o);
    let blocks = vec![
        Block::Title(heading.clone()),
        Block::Paragraph(method.clone()),
        Block::Table(series_table(a)),
        Block::Table(steps_table(a)),
    ];
    Ok(Report {
        text: Some(text(a, &heading, &method, o.search.alpha)),
        blocks,
        records: records(a),
        data: serde_json::to_value(&data).map_err(|e| Error::Failed(format!("json: {e}")))?,
    })
}

fn title(s: &Series, a: &Analysis) -> String {
    let better = match s.figure.better {
        crate::model::Better::Higher => "higher",
        crate::model::Better::Lower => "lower",
    };
    let by = match s.by {
        By::Time => "time",
        By::Kernel => "kernel",
    };
    format!(
        "History of {} {} ({}, {better} is better), case {}, by {by}: {} runs, {} step{}",
        s.workload,
        s.figure.name,
        s.figure.unit,
        s.case,
        a.entries.len(),
        a.change_points.len(),
        if a.change_points.len() == 1 { "" } else { "s" }
    )
}

fn method(o: &Options) -> String {
    let s = &o.search;
    let floor = if o.min_step > 0.0 {
        format!("\nand by a change of {} % or more.", o.min_step * 100.0)
    } else {
        String::new()
    };
    format!(
        "Steps: E-divisive means on the runs' log medians (alpha {}, segments of\n\
         {} runs or more, {} permutations, seed {}), each confirmed by Welch's test\n\
         on the runs either side{}{floor}",
        s.alpha,
        s.min_segment,
        s.permutations,
        s.seed,
        if floor.is_empty() { "." } else { "" }
    )
}

/// "11-26 01:40" from an RFC 3339 time.
fn short_time(t: &str) -> String {
    let t = t.replacen('T', " ", 1);
    t.chars().skip(5).take(11).collect()
}

/// The median's interval as +/- a percentage of it.
fn half_width(e: &Entry) -> String {
    match e.ci {
        Some([lo, hi]) if e.median != 0.0 => {
            let h = (e.median - lo).max(hi - e.median) / e.median.abs() * 100.0;
            if h < 1000.0 {
                format!("{h:.2}%")
            } else {
                ">999%".into()
            }
        }
        _ => "-".into(),
    }
}

fn pct(ratio: f64) -> String {
    format!("{:+.1}%", (ratio - 1.0) * 100.0)
}

fn p_text(p: Option<f64>) -> String {
    match p {
        Some(p) if p < 1e-4 => format!("{p:.1e}"),
        Some(p) => format!("{p:.4}"),
        None => "-".into(),
    }
}

fn change_text(c: &ChangePoint) -> String {
    let ci = c.ci.map_or(String::new(), |[lo, hi]| {
        format!(" [{}, {}]", pct(lo), pct(hi))
    });
    format!(
        "{}{ci} ({})",
        pct(c.change),
        if c.better { "better" } else { "worse" }
    )
}

fn who(s: &history::RunRef) -> String {
    let mut parts = vec![format!("run {}", s.id)];
    if let Some(l) = &s.label {
        parts.push(format!("label {l}"));
    }
    if let Some(k) = &s.kernel {
        parts.push(format!("kernel {k}"));
    }
    if let Some(h) = &s.host {
        parts.push(format!("host {h}"));
    }
    parts.join(", ")
}

fn text(a: &Analysis, heading: &str, method: &str, alpha: f64) -> String {
    // A long title breaks before the case rather than anywhere.
    let heading = if heading.chars().count() > 80 {
        heading.replacen(", case ", ",\ncase ", 1)
    } else {
        heading.to_string()
    };
    let mut out = format!("{heading}\n{method}\n\n");
    out.push_str(&format!(
        "{:>5} {:<11} {:<15} {:<8} {:>4} {:>10} {:>7}  label\n",
        "run", "started", "kernel", "host", "n", "median", "95% +-"
    ));
    let mut next = a.change_points.iter().enumerate().peekable();
    for (i, e) in a.entries.iter().enumerate() {
        if let Some((k, c)) = next.peek()
            && c.index == i
        {
            let mark = format!("----- step {}: {} ", k + 1, change_text(c));
            out.push_str(&format!("{:-<79}\n", clip(&mark, 79)));
            next.next();
        }
        let line = format!(
            "{:>5} {:<11} {:<15} {:<8} {:>4} {:>10} {:>7}  {}",
            e.run.id,
            short_time(&e.started_at),
            clip(e.run.kernel.as_deref().unwrap_or("-"), 15),
            clip(e.run.host.as_deref().unwrap_or("-"), 8),
            e.n,
            sig4(e.median),
            half_width(e),
            clip(e.run.label.as_deref().unwrap_or(""), 12),
        );
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out.push('\n');
    if a.change_points.is_empty() {
        out.push_str(&format!(
            "No step: no split is significant at alpha {alpha} and confirmed by the runs.\n"
        ));
    } else {
        out.push_str("Steps (change of the segment after over the segment before, 95% CI):\n");
    }
    for (k, c) in a.change_points.iter().enumerate() {
        out.push_str(&format!(
            "{:>3}. {} after {} runs, {} runs follow\n",
            k + 1,
            change_text(c),
            c.runs_before,
            c.runs_after
        ));
        out.push_str(&format!(
            "     p {} (permutations), runs p {}, samples p {}\n",
            p_text(Some(c.p)),
            p_text(c.p_runs),
            p_text(c.p_samples)
        ));
        out.push_str(&format!("     last before: {}\n", who(&c.before)));
        out.push_str(&format!("     first after: {}\n", who(&c.after)));
    }
    if let Some(n) = a.run_noise {
        out.push_str(&format!(
            "Run-to-run noise (sd of the runs' log medians within segments): {:.2}%\n",
            n * 100.0
        ));
    }
    out
}

fn series_table(a: &Analysis) -> Table {
    let rows = a
        .entries
        .iter()
        .map(|e| {
            vec![
                e.run.id.to_string(),
                e.started_at.clone(),
                e.run.kernel.clone().unwrap_or_default(),
                e.run.host.clone().unwrap_or_default(),
                e.run.label.clone().unwrap_or_default(),
                e.n.to_string(),
                sig4(e.median),
                half_width(e),
                (e.segment + 1).to_string(),
            ]
        })
        .collect();
    Table::plain(
        "Series".into(),
        &[
            "run", "started", "kernel", "host", "label", "n", "median", "95% +-", "segment",
        ],
        Align::runs(&[(Align::Right, 1), (Align::Left, 4), (Align::Right, 4)]),
        rows,
    )
}

fn steps_table(a: &Analysis) -> Table {
    let rows = a
        .change_points
        .iter()
        .map(|c| {
            vec![
                c.before_run.to_string(),
                c.after_run.to_string(),
                format!("{:.4}", c.change),
                c.ci.map_or("-".into(), |[lo, hi]| format!("[{lo:.4}, {hi:.4}]")),
                pct(c.change),
                if c.better { "better" } else { "worse" }.into(),
                p_text(Some(c.p)),
                p_text(c.p_runs),
                p_text(c.p_samples),
            ]
        })
        .collect();
    Table::plain(
        "Steps".into(),
        &[
            "before run",
            "after run",
            "change",
            "95% CI",
            "%",
            "",
            "p",
            "runs p",
            "samples p",
        ],
        Align::runs(&[(Align::Right, 5), (Align::Left, 1), (Align::Right, 3)]),
        rows,
    )
}

/// One record per run; the step columns are set on the first run after a step.
fn records(a: &Analysis) -> Records {
    let columns = [
        "run",
        "started_at",
        "label",
        "kernel",
        "host",
        "n",
        "median",
        "ci_lo",
        "ci_hi",
        "segment",
        "segment_centre",
        "step_change",
        "step_ci_lo",
        "step_ci_hi",
        "step_p",
    ];
    let num = |v: Option<f64>| v.map_or(String::new(), |v| v.to_string());
    let rows = a
        .entries
        .iter()
        .enumerate()
        .map(|(i, e)| {
            let step = a.change_points.iter().find(|c| c.index == i);
            vec![
                e.run.id.to_string(),
                e.started_at.clone(),
                e.run.label.clone().unwrap_or_default(),
                e.run.kernel.clone().unwrap_or_default(),
                e.run.host.clone().unwrap_or_default(),
                e.n.to_string(),
                e.median.to_string(),
                num(e.ci.map(|c| c[0])),
                num(e.ci.map(|c| c[1])),
                (e.segment + 1).to_string(),
                e.segment_centre.to_string(),
                num(step.map(|c| c.change)),
                num(step.and_then(|c| c.ci.map(|x| x[0]))),
                num(step.and_then(|c| c.ci.map(|x| x[1]))),
                num(step.map(|c| c.p)),
            ]
        })
        .collect();
    Records {
        columns: columns.map(String::from).to_vec(),
        rows,
    }
}
