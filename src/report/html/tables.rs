//! The vmstat delta table (median delta per case, largest counters first)
//! and the machine snapshot, as HTML.

use super::svg::escape;
use crate::machine::Snapshot;
use crate::model::Run;
use crate::stats::summary::median;
use std::collections::BTreeMap;

/// Counters shown before the rest fold away.
const SHOWN: usize = 20;

pub fn vmstat(run: &Run) -> String {
    let cases: Vec<_> = run
        .cases
        .iter()
        .filter(|c| c.measured().any(|s| !s.vmstat.is_empty()))
        .collect();
    if cases.is_empty() {
        return "<p class=\"note\">no /proc/vmstat deltas recorded for this run</p>\n".into();
    }
    // counter -> median delta per case
    let mut rows: BTreeMap<&str, Vec<Option<f64>>> = BTreeMap::new();
    for (i, c) in cases.iter().enumerate() {
        let mut per: BTreeMap<&str, Vec<f64>> = BTreeMap::new();
        for s in c.measured() {
            for (k, v) in &s.vmstat {
                per.entry(k.as_str()).or_default().push(*v as f64);
            }
        }
        let n = c.measured().count();
        for (k, mut v) in per {
            v.resize(n, 0.0); // a counter absent from a sample's delta did not move
            rows.entry(k).or_insert_with(|| vec![None; cases.len()])[i] = Some(median(&v));
        }
    }
    let mut rows: Vec<(&str, Vec<Option<f64>>)> = rows.into_iter().collect();
    let size = |r: &Vec<Option<f64>>| r.iter().flatten().map(|v| v.abs()).fold(0.0, f64::max);
    rows.sort_by(|a, b| size(&b.1).total_cmp(&size(&a.1)));
    let head: String = cases
        .iter()
        .map(|c| format!("<th>{} {}</th>", escape(&c.case.variant), c.case.tasks))
        .collect();
    let body = |rows: &[(&str, Vec<Option<f64>>)]| -> String {
        rows.iter()
            .map(|(k, v)| {
                let cells: String = v
                    .iter()
                    .map(|x| match x {
                        Some(x) => format!("<td>{x:.0}</td>"),
                        None => "<td>0</td>".into(),
                    })
                    .collect();
                format!("<tr><th>{}</th>{cells}</tr>\n", escape(k))
            })
            .collect()
    };
    let split = rows.len().min(SHOWN);
    let mut out = format!(
        "<table class=\"num\"><tr><th>counter (median delta per sample)</th>{head}</tr>\n{}</table>\n",
        body(&rows[..split])
    );
    if rows.len() > split {
        out.push_str(&format!(
            "<details><summary>{} more counters</summary><table class=\"num\"><tr><th>counter</th>{head}</tr>\n{}</table></details>\n",
            rows.len() - split,
            body(&rows[split..])
        ));
    }
    out
}

pub fn machine(run: &Run) -> String {
    let empty = run.meta.machine.as_object().is_none_or(|o| o.is_empty());
    if empty {
        return format!(
            "<p class=\"note\">no machine snapshot recorded ({})</p>\n",
            escape(&run.meta.origin)
        );
    }
    match serde_json::from_value::<Snapshot>(run.meta.machine.clone()) {
        Ok(s) => format!("<pre>{}</pre>\n", escape(&crate::report::sysinfo::text(&s))),
        Err(_) => format!(
            "<pre>{}</pre>\n",
            escape(&serde_json::to_string_pretty(&run.meta.machine).unwrap_or_default())
        ),
    }
}
