//! The robot's side in the store: the report's base and head figures as a
//! pair of imported runs labelled robot-COMMIT, so `compare`, `history`
//! and `report` show them beside this machine's. The pair is the
//! report's, keyed on its commits, testcase and parameters: the same
//! report reproduced again finds its pair and stores nothing new; another
//! report on the same commit (another test, or another head) gets labels
//! of its own, robot-COMMIT-2 and on, so a label names one run.

use std::path::Path;

use serde::Serialize;
use serde_json::{Value, json};

use crate::error::Result;
use crate::kbuild::git;
use crate::model::{Case, Figure, Run, Sample, SampleData, Status};
use crate::reproduce::planner::{Measured, Plan};
use crate::reproduce::report::{Commit, Report};
use crate::store::{NewRun, Store};

/// One side of the robot's pair as stored.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RobotRun {
    pub id: i64,
    pub label: String,
    /// Found in the store (the same report reproduced before), not added.
    pub reused: bool,
}

/// Stores (or finds) the robot's base and head as runs of the store at
/// `db`, its machine the robot's test machine, each measured row's figure
/// one sample; `like`: this machine's base run, whose workload, figures
/// and case the pair takes. Nothing when no row maps to a figure.
pub fn store(
    db: &Path,
    report: &Report,
    plan: &Plan,
    like: &Run,
    commits: [&Commit; 2],
) -> Result<Vec<RobotRun>> {
    let test = &report.tests[0];
    let rows: Vec<(&str, f64, f64)> = test
        .rows
        .iter()
        .zip(&plan.rows)
        .filter_map(|(row, p)| match &p.measured_by {
            Some(Measured::Figure(f)) => Some((f.as_str(), row.base, row.head)),
            _ => None,
        })
        .collect();
    let figures: Vec<Figure> = like
        .meta
        .figures
        .iter()
        .filter(|f| rows.iter().any(|(n, _, _)| *n == f.name))
        .cloned()
        .collect();
    if figures.is_empty() {
        return Ok(Vec::new());
    }
    let case = like
        .cases
        .first()
        .map(|c| c.case.clone())
        .unwrap_or_else(|| Case::new(1, &plan.testcase));
    let machine = json!({ "robot": test.machine, "axes": test.axes });
    let command = format!("vmscale {}", crate::parse::shell_words(&plan.command));
    let pair = [&commits[0].id, &commits[1].id];
    let mut store = Store::open(db)?;
    let mut stored = Vec::new();
    for (side, commit) in commits.iter().enumerate() {
        let config = json!({
            "robot": { "commit": commit.id, "subject": commit.subject,
                       "params": test.params, "testcase": plan.testcase,
                       "pair": pair },
        });
        let (label, found) = label_for(&store, commit, &config)?;
        if let Some(id) = found {
            stored.push(RobotRun {
                id,
                label,
                reused: true,
            });
            continue;
        }
        let id = store.create_run(&NewRun {
            label: Some(&label),
            workload: &like.meta.workload,
            command_line: &command,
            config: &config,
            figures: &figures,
            machine: &machine,
            knobs: &json!({}),
            cases: std::slice::from_ref(&case),
            origin: "imported: the kernel test robot's report (vmscale reproduce)",
        })?;
        let mut data = SampleData::default();
        for (name, b, h) in &rows {
            data.figures
                .insert(name.to_string(), if side == 0 { *b } else { *h });
        }
        let sample = Sample {
            seq: 0,
            warmup: false,
            taken_at: crate::timefmt::now(),
            data,
            vmstat: Default::default(),
            noise: Default::default(),
            flagged: false,
        };
        store.add_sample(id, &case, &sample)?;
        store.finish_run(id, Status::Complete, Some("the robot's means, one sample"))?;
        stored.push(RobotRun {
            id,
            label,
            reused: false,
        });
    }
    Ok(stored)
}

/// The label of `commit`'s side with `config` (the report's key), and the
/// run already stored under it with that key: robot-COMMIT, else the
/// first of robot-COMMIT-2, -3, … free or holding the same key.
fn label_for(store: &Store, commit: &Commit, config: &Value) -> Result<(String, Option<i64>)> {
    let short = git::short(&commit.id);
    // Ends: each label tried is held by runs of the store, which are few.
    let mut n = 1;
    loop {
        let label = match n {
            1 => format!("robot-{short}"),
            n => format!("robot-{short}-{n}"),
        };
        let runs = store.runs_labelled(&label)?;
        if runs.is_empty() {
            return Ok((label, None));
        }
        for (id, _) in runs {
            if store.load_figures(id)?.meta.config == *config {
                return Ok((label, Some(id)));
            }
        }
        n += 1;
    }
}

#[cfg(test)]
mod tests;
