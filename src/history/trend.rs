//! The trend column of `list --trend`: each run's headline median against
//! the previous like run (same workload and configuration, first case),
//! and `step` where the history of those runs has a change point.

use super::select::like_key;
use super::{Options, Point, RunRef, analyse};
use crate::error::Result;
use crate::stats::summary::median;
use crate::store::history::HistoryRun;
use crate::store::{RunListing, Store};
use std::collections::{BTreeMap, HashMap};

/// A run's trend cell: the change against the previous like run, if any.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct Trend {
    /// This run's headline median over the previous like run's.
    pub change: Option<f64>,
    /// A step of the like runs' history begins at this run.
    pub step: bool,
}

impl Trend {
    /// "+1.2%", "-30.0% step", or "-" for the first of its kind.
    pub fn cell(&self) -> String {
        let mut s = self
            .change
            .map_or("-".into(), |c| format!("{:+.1}%", (c - 1.0) * 100.0));
        if self.step {
            s.push_str(" step");
        }
        s
    }
}

/// The trend of every run in `runs` (listed oldest first).
pub fn trends(store: &Store, runs: &[RunListing]) -> Result<HashMap<i64, Trend>> {
    let full = store.history_runs(runs.to_vec())?;
    let mut groups: BTreeMap<String, Vec<&HistoryRun>> = BTreeMap::new();
    for r in &full {
        groups.entry(like_key(r)).or_default().push(r);
    }
    let mut out = HashMap::new();
    for group in groups.values() {
        let (Some(case), Some(figure)) = (group[0].cases.first(), group[0].figures.first()) else {
            continue;
        };
        let ids: Vec<i64> = group.iter().map(|r| r.listing.id).collect();
        let mut values = store.history_values(&ids, case, &figure.name)?;
        let points: Vec<Point> = group
            .iter()
            .filter_map(|r| {
                Some(Point {
                    run: RunRef {
                        id: r.listing.id,
                        ..RunRef::default()
                    },
                    started_at: r.listing.started_at.clone(),
                    values: values.remove(&r.listing.id)?,
                })
            })
            .collect();
        let steps: Vec<i64> = analyse(&points, figure, &Options::default())
            .change_points
            .iter()
            .map(|c| c.after_run)
            .collect();
        let mut previous: Option<f64> = None;
        for p in &points {
            let m = median(&p.values);
            out.insert(
                p.run.id,
                Trend {
                    change: previous.filter(|&b| b != 0.0).map(|b| m / b),
                    step: steps.contains(&p.run.id),
                },
            );
            previous = Some(m);
        }
    }
    Ok(out)
}
