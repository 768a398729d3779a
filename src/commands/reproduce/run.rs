//! Reproduce's run: base and head booted in turn (A B A B) through `vmscale
//! guest`'s rounds until the interval decides, the robot's figures stored
//! as a pair of runs beside them, and the robot's table with this
//! machine's figures and the verdict printed (`--json`: the same).

use std::path::Path;

use crate::cli::{GuestArgs, ReproduceArgs, Rounds};
use crate::commands::guest;
use crate::error::{Error, Result};
use crate::kbuild::git;
use crate::model::{Case, Figure, Run, Sample, SampleData, Status};
use crate::reproduce::planner::{Here as Guest, Measured, Plan};
use crate::reproduce::report::{Commit, Report};
use crate::reproduce::table::{self, Here, Line};
use crate::reproduce::verdict::{self, Judged};
use crate::store::{NewRun, Store};

/// Boots base and head, stores both sides, prints the table and verdict;
/// the verdict's exit code (docs/reproduce.md) comes back as
/// `Error::Verdict` unless it is "reproduced".
pub fn reproduce(
    db: &Path,
    a: &ReproduceArgs,
    report: &Report,
    plan: &Plan,
    shape: Guest,
) -> Result<()> {
    let (base, head) = match (&report.base, &report.head) {
        (Some(b), Some(h)) => (b, h),
        _ => {
            return Err(Error::Input(
                "the report names no base and head commits to boot; give the robot's mail \
                 (a job.yaml names one commit: use --dry-run for its plan)"
                    .into(),
            ));
        }
    };
    let labels = vec![short(&base.id), short(&head.id)];
    let (kernels, revs) = match (&a.tree, a.kernels.len()) {
        (Some(tree), 0) => {
            super::commits::check(tree, &[base, head])?;
            (Vec::new(), vec![base.id.clone(), head.id.clone()])
        }
        (None, 2) => (a.kernels.clone(), Vec::new()),
        _ => {
            return Err(Error::Input(
                "give the kernels to boot: --tree DIR (base and head are built from it) or \
                 --kernel BASE --kernel HEAD; or --dry-run for the plan alone"
                    .into(),
            ));
        }
    };
    let headline_figure = headline_figure(report, plan);
    let mut boot = a.boot.clone();
    boot.cpus = Some(shape.cpus);
    if boot.figure.is_none() {
        boot.figure.clone_from(&headline_figure);
    }
    let asked = super::bisect::ask(a, (base, head), &boot, &plan.command)?;
    let args = GuestArgs {
        kernels,
        tree: a.tree.clone(),
        revs,
        tree_config: a.tree_config.clone(),
        labels: labels.clone(),
        memory_only_nodes: 0,
        distance: Vec::new(),
        sockets: 1,
        dies: 1,
        threads: 1,
        boot,
        rounds: Rounds::Auto,
        max_time: a.max_time,
        append_to: Vec::new(),
        json: Default::default(),
        out: a.out.clone(),
        no_merge: false,
        plan: plan.command.clone(),
    };
    let ran = guest::run(db, &args)?;
    if let Some(e) = ran.failure {
        return Err(e);
    }
    let store = Store::open_existing(&ran.landed.store)?;
    let sides: Vec<Run> = ran
        .landed
        .runs
        .iter()
        .map(|runs| {
            let first = runs
                .first()
                .ok_or_else(|| Error::Failed("a kernel's guest stored no run".into()))?;
            store.load(first.id).map_err(Error::from)
        })
        .collect::<Result<_>>()?;
    drop(store);
    let [here_base, here_head] = &sides[..] else {
        return Err(Error::Failed(
            "reproduce booted other than two kernels".into(),
        ));
    };
    let decision = ran.deciding.decisions().into_iter().next().flatten();
    let figure = ran.deciding.figure.clone().unwrap_or_default();
    let better = here_base
        .meta
        .figures
        .iter()
        .find(|f| f.name == figure)
        .map(|f| f.better == crate::model::Better::Higher);
    let judged: Option<Judged> = match (&report.headline, &decision) {
        (Some(h), Some(d)) => Some(verdict::judge(d, verdict::robot_change(h, better))),
        _ => None,
    };
    let lines = lines(report, plan, (here_base, here_head), (&figure, &decision));
    let robot_ids = store_robot_side(&ran.landed.store, report, plan, here_base, [base, head])?;
    if !a.json.json {
        super::output::text(&text(report, &labels, &lines, judged.as_ref(), &figure))?;
    }
    let verdict = judged.map(|j| j.verdict);
    let (found, failed) = match asked.map(|x| x.run(db, verdict, &ran.deciding.logs(1))) {
        Some(Ok(f)) => (Some(f), None),
        Some(Err(e)) => (None, Some(e)),
        None => (None, None),
    };
    if a.json.json {
        super::super::print_json(&serde_json::json!({
            "figure": figure,
            "verdict": judged,
            "rows": lines,
            "runs": {
                "robot": robot_ids,
                "here": [here_base.meta.id, here_head.meta.id],
            },
            "bisect": found.as_ref().map(super::bisect::json),
            "boots_s": ran.boot_seconds,
        }))?;
    } else if let Some(f) = &found {
        super::output::text(&super::bisect::text(f))?;
    }
    if let Some(e) = failed {
        return Err(e);
    }
    match verdict {
        Some(v) if v.exit_code() != 0 => Err(Error::Exit(v.exit_code(), v.as_str().into())),
        Some(_) => Ok(()),
        None => Err(Error::Exit(
            verdict::Verdict::Undecided.exit_code(),
            "undecided: fewer than two rounds of both kernels held the figure".into(),
        )),
    }
}

/// The first 12 hex digits of a commit id, as the robot prints them.
fn short(id: &str) -> String {
    git::short(id).to_string()
}

/// The vmscale figure the robot's headline metric maps to, if one does.
fn headline_figure(report: &Report, plan: &Plan) -> Option<String> {
    let metric = &report.headline.as_ref()?.metric;
    plan.rows
        .iter()
        .find(|r| &r.name == metric)
        .and_then(|r| match &r.measured_by {
            Some(Measured::Figure(f)) => Some(f.clone()),
            _ => None,
        })
}

/// A row's value in one run: the median over its measured samples of the
/// figure or vmstat counter (every case pooled).
fn value(run: &Run, by: &Measured) -> Option<f64> {
    let mut v: Vec<f64> = run
        .cases
        .iter()
        .flat_map(|c| c.measured())
        .filter_map(|s| match by {
            Measured::Figure(f) => s.data.figures.get(f).copied(),
            Measured::Vmstat(c) => Some(s.vmstat.get(c).copied().unwrap_or(0) as f64),
        })
        .filter(|x| x.is_finite())
        .collect();
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let n = v.len();
    Some(if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    })
}

/// The robot's measured rows with this machine's figures; the deciding
/// figure's row carries the paired interval.
fn lines(
    report: &Report,
    plan: &Plan,
    (base, head): (&Run, &Run),
    (figure, decision): (&str, &Option<crate::stats::decide::Decision>),
) -> Vec<Line> {
    let test = &report.tests[0];
    test.rows
        .iter()
        .zip(&plan.rows)
        .filter_map(|(row, p)| {
            let by = p.measured_by.as_ref()?;
            let (b, h) = (value(base, by)?, value(head, by)?);
            let ci = match (by, decision) {
                (Measured::Figure(f), Some(d)) if f == figure => Some(d.ci),
                _ => None,
            };
            Some(Line::of(
                row,
                Here {
                    base: b,
                    head: h,
                    ci: ci.map(|(lo, hi)| (lo - 1.0, hi - 1.0)),
                },
            ))
        })
        .collect()
}

/// The robot's base and head as runs of the store at `db` (labelled
/// robot-COMMIT, its machine the robot's test machine), each measured
/// row's figure one sample, so compare, history and report show them
/// beside this machine's runs. Gives their ids.
fn store_robot_side(
    db: &Path,
    report: &Report,
    plan: &Plan,
    like: &Run,
    commits: [&Commit; 2],
) -> Result<Vec<i64>> {
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
    let machine = serde_json::json!({ "robot": test.machine, "axes": test.axes });
    let command = format!("vmscale {}", crate::parse::shell_words(&plan.command));
    let mut store = Store::open(db)?;
    let mut ids = Vec::new();
    for (side, commit) in commits.iter().enumerate() {
        let label = format!("robot-{}", short(&commit.id));
        let id = store.create_run(&NewRun {
            label: Some(&label),
            workload: &like.meta.workload,
            command_line: &command,
            config: &serde_json::json!({
                "robot": { "commit": commit.id, "subject": commit.subject,
                           "params": test.params },
            }),
            figures: &figures,
            machine: &machine,
            knobs: &serde_json::json!({}),
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
        ids.push(id);
    }
    Ok(ids)
}

/// The answer as text: the robot's table with this machine's figures,
/// then the verdict with its interval.
fn text(
    report: &Report,
    labels: &[String],
    lines: &[Line],
    judged: Option<&Judged>,
    figure: &str,
) -> String {
    let mut o = format!(
        "base {}  head {}: the robot's rows measured here\n",
        labels[0], labels[1]
    );
    o.push_str(&table::render(lines));
    if let Some(j) = judged {
        o.push_str(&format!(
            "here: medians of every sample; interval: the paired rounds' at {:.1}%\n",
            j.level * 100.0
        ));
    }
    o.push('\n');
    match (judged, &report.headline) {
        (Some(j), Some(h)) => o.push_str(&crate::text::fill(
            &format!(
                "{}: the robot saw {:+.1}% of {}; here {figure} moved {:+.1}% \
                 [{:+.1}%, {:+.1}%] at {:.1}% over {} rounds{}",
                j.verdict.as_str().to_uppercase(),
                j.robot * 100.0,
                h.metric,
                j.change * 100.0,
                j.ci.0 * 100.0,
                j.ci.1 * 100.0,
                j.level * 100.0,
                j.rounds,
                j.rounds_needed
                    .map(|n| format!(" (about {n} rounds would decide)"))
                    .unwrap_or_default()
            ),
            80,
            "Verdict: ",
            "  ",
        )),
        _ => o.push_str("Verdict: UNDECIDED: too few rounds held the figure\n"),
    }
    o
}
