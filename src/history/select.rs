//! The like runs of a history: one workload, one configuration apart from
//! the kernel and the host, one case and figure, ordered by start time or
//! by kernel version. Runs of mixed configurations are refused with what
//! differs, so a step never comes from a changed option.

use super::{Point, RunRef};
use crate::error::{Error, Result};
use crate::machine::release;
use crate::model::Figure;
use crate::store::Store;
use crate::store::history::HistoryRun;
use crate::store::manage::ListFilter;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};

/// The order of a series.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum By {
    Time,
    Kernel,
}

/// What the user asked for; every field that is set must match.
#[derive(Debug, Clone)]
pub struct Request {
    pub filter: ListFilter,
    pub host: Option<String>,
    pub case: Option<String>,
    pub figure: Option<String>,
    pub by: By,
}

/// The like runs, ready for `analyse`.
#[derive(Debug, Clone)]
pub struct Series {
    pub workload: String,
    pub case: String,
    pub figure: Figure,
    pub by: By,
    pub points: Vec<Point>,
    /// What was left out and why, and the other cases and figures.
    pub notes: Vec<String>,
}

fn host(r: &HistoryRun) -> Option<String> {
    r.listing
        .host
        .clone()
        .or_else(|| r.machine["hostname"].as_str().map(String::from))
}

fn kernel(r: &HistoryRun) -> Option<String> {
    r.machine["kernel_release"].as_str().map(String::from)
}

/// The like runs of `req` in the store.
pub fn series(store: &Store, req: &Request) -> Result<Series> {
    let (listings, damaged) = store.list_filtered(&req.filter)?;
    let mut notes: Vec<String> = damaged
        .into_iter()
        .map(|d| format!("{d}; left out"))
        .collect();
    let listings: Vec<_> = listings
        .into_iter()
        .filter(|l| l.status == "complete" || l.status == "incomplete")
        .collect();
    let runs: Vec<HistoryRun> = store
        .history_runs(listings)?
        .into_iter()
        .filter(|r| {
            req.host
                .as_ref()
                .is_none_or(|h| host(r).as_ref() == Some(h))
        })
        .collect();
    if runs.is_empty() {
        return Err(Error::Input(
            "no finished run matches: see `vmscale list` and widen --workload, --label, \
             --host, --since or --until"
                .into(),
        ));
    }
    let workload = one_workload(&runs)?;
    if runs.iter().any(|r| like_key(r) != like_key(&runs[0])) {
        refuse_mixed(&runs)?;
    }
    let case = pick_case(&runs, req.case.as_deref())?;
    let figure = pick_figure(&runs, req.figure.as_deref())?;
    let with_case: Vec<&HistoryRun> = runs.iter().filter(|r| r.cases.contains(&case)).collect();
    if with_case.len() < runs.len() {
        notes.push(format!(
            "{} run(s) without case {case} left out",
            runs.len() - with_case.len()
        ));
    }
    let ids: Vec<i64> = with_case.iter().map(|r| r.listing.id).collect();
    let mut values = store.history_values(&ids, &case, &figure.name)?;
    let mut points: Vec<(Point, &HistoryRun)> = with_case
        .into_iter()
        .filter_map(|r| {
            let v = values.remove(&r.listing.id)?;
            Some((
                Point {
                    run: RunRef {
                        id: r.listing.id,
                        label: r.listing.label.clone(),
                        kernel: kernel(r),
                        host: host(r),
                    },
                    started_at: r.listing.started_at.clone(),
                    values: v,
                },
                r,
            ))
        })
        .collect();
    if points.len() < ids.len() {
        notes.push(format!(
            "{} run(s) with no measured {} in case {case} left out",
            ids.len() - points.len(),
            figure.name
        ));
    }
    match req.by {
        By::Time => points.sort_by(|a, b| {
            (a.0.started_at.as_str(), a.0.run.id).cmp(&(b.0.started_at.as_str(), b.0.run.id))
        }),
        By::Kernel => {
            let unknown = points.iter().filter(|p| p.0.run.kernel.is_none()).count();
            if unknown > 0 {
                notes.push(format!(
                    "{unknown} run(s) with no kernel release recorded come last"
                ));
            }
            points.sort_by(|a, b| {
                let k = match (&a.0.run.kernel, &b.0.run.kernel) {
                    (Some(x), Some(y)) => release::compare(x, y),
                    (Some(_), None) => std::cmp::Ordering::Less,
                    (None, Some(_)) => std::cmp::Ordering::Greater,
                    (None, None) => std::cmp::Ordering::Equal,
                };
                k.then_with(|| a.0.started_at.cmp(&b.0.started_at))
                    .then(a.0.run.id.cmp(&b.0.run.id))
            })
        }
    }
    if points.is_empty() {
        return Err(Error::Input(format!(
            "no run of {workload} has measured samples of {} in case {case}",
            figure.name
        )));
    }
    Ok(Series {
        workload,
        case,
        figure,
        by: req.by,
        points: points.into_iter().map(|p| p.0).collect(),
        notes,
    })
}

fn one_workload(runs: &[HistoryRun]) -> Result<String> {
    let mut count: BTreeMap<&str, usize> = BTreeMap::new();
    for r in runs {
        *count.entry(&r.listing.workload).or_default() += 1;
    }
    if count.len() == 1 {
        return Ok(runs[0].listing.workload.clone());
    }
    let named: Vec<String> = count
        .iter()
        .map(|(w, n)| format!("{w} ({n} runs)"))
        .collect();
    Err(Error::Input(format!(
        "runs of several workloads match: {}; choose one with --workload",
        named.join(", ")
    )))
}

/// What makes runs "like", one history: the same workload, configuration
/// and knobs. Runs of one key differ in nothing but the kernel and the time.
pub fn like_key(r: &HistoryRun) -> String {
    format!("{}\n{}\n{}", r.listing.workload, r.config, r.knobs)
}

/// Flattened configuration: `config.X` and `knobs.X` paths to values.
fn setup(r: &HistoryRun) -> BTreeMap<String, Value> {
    fn flatten(prefix: &str, v: &Value, out: &mut BTreeMap<String, Value>) {
        match v {
            Value::Object(o) => {
                for (k, v) in o {
                    flatten(&format!("{prefix}.{k}"), v, out);
                }
            }
            other => {
                out.insert(prefix.to_string(), other.clone());
            }
        }
    }
    let mut out = BTreeMap::new();
    flatten("config", &r.config, &mut out);
    flatten("knobs", &r.knobs, &mut out);
    out
}

/// Refuses runs whose configurations differ, naming each difference with
/// the runs of each value.
fn refuse_mixed(runs: &[HistoryRun]) -> Result<()> {
    let flat: Vec<BTreeMap<String, Value>> = runs.iter().map(setup).collect();
    let keys: BTreeSet<&String> = flat.iter().flat_map(|m| m.keys()).collect();
    let mut lines = Vec::new();
    for k in keys {
        let mut by_value: BTreeMap<String, Vec<i64>> = BTreeMap::new();
        for (r, m) in runs.iter().zip(&flat) {
            let v = m.get(k).map_or("absent".to_string(), |v| match v {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            });
            by_value.entry(v).or_default().push(r.listing.id);
        }
        if by_value.len() > 1 {
            let parts: Vec<String> = by_value
                .iter()
                .map(|(v, ids)| format!("{v} in {}", runs_named(ids)))
                .collect();
            lines.push(format!("  {k}: {}", parts.join("; ")));
        }
    }
    if lines.is_empty() {
        return Ok(());
    }
    let more = lines.len().saturating_sub(8);
    lines.truncate(8);
    if more > 0 {
        lines.push(format!("  and {more} more"));
    }
    Err(Error::Input(format!(
        "these runs differ in more than the kernel, so they are no history of one \
         figure:\n{}\nchoose like runs with --label, --host, --since or --until",
        lines.join("\n")
    )))
}

/// "runs 1, 2, 3" (the first five and a count).
fn runs_named(ids: &[i64]) -> String {
    let shown: Vec<String> = ids.iter().take(5).map(|i| i.to_string()).collect();
    let word = if ids.len() == 1 { "run" } else { "runs" };
    let more = if ids.len() > 5 {
        format!(" and {} more", ids.len() - 5)
    } else {
        String::new()
    };
    format!("{word} {}{more}", shown.join(", "))
}

fn pick_case(runs: &[HistoryRun], wanted: Option<&str>) -> Result<String> {
    let mut all: Vec<&String> = Vec::new();
    for r in runs {
        for c in &r.cases {
            if !all.contains(&c) {
                all.push(c);
            }
        }
    }
    match wanted {
        Some(w) if all.iter().any(|c| c.as_str() == w) => Ok(w.to_string()),
        Some(w) => Err(Error::Input(format!(
            "no run has case '{w}'; the cases are: {}",
            join(&all)
        ))),
        None => all
            .first()
            .map(|c| c.to_string())
            .ok_or_else(|| Error::Input("the matching runs have no cases".into())),
    }
}

fn pick_figure(runs: &[HistoryRun], wanted: Option<&str>) -> Result<Figure> {
    let mut all: Vec<&Figure> = Vec::new();
    for r in runs {
        for f in &r.figures {
            if !all.iter().any(|g| g.name == f.name) {
                all.push(f);
            }
        }
    }
    match wanted {
        Some(w) => all
            .iter()
            .find(|f| f.name == w)
            .map(|f| (*f).clone())
            .ok_or_else(|| {
                let names: Vec<&String> = all.iter().map(|f| &f.name).collect();
                Error::Input(format!(
                    "no run reports figure '{w}'; the figures are: {}",
                    join(&names)
                ))
            }),
        None => all
            .first()
            .map(|f| (*f).clone())
            .ok_or_else(|| Error::Input("the matching runs report no figures".into())),
    }
}

fn join<T: std::fmt::Display>(v: &[T]) -> String {
    v.iter()
        .map(|x| x.to_string())
        .collect::<Vec<_>>()
        .join(", ")
}
