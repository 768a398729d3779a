//! Reproduce's run: base and head booted in turn (A B A B) through `vmscale
//! guest`'s rounds until the interval decides, the robot's figures stored
//! as a pair of runs beside them, and the robot's table with this
//! machine's figures and the verdict printed (`--json`: the same).

use std::path::Path;

use crate::cli::{GuestArgs, ReproduceArgs, Rounds};
use crate::commands::guest;
use crate::error::{Error, Result};
use crate::kbuild::git;
use crate::model::{Better, Run};
use crate::reproduce::moved;
use crate::reproduce::planner::{Here as Guest, Measured, Plan};
use crate::reproduce::report::Report;
use crate::reproduce::table::{self, Here, Line};
use crate::reproduce::verdict::{self, Judged};
use crate::stats::decide::Decision;
use crate::store::Store;
use crate::units::signed;

use super::robot_runs::{self, RobotRun};

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
    // The rounds end once the verdict is made (the interval tells no
    // change from the robot's figure), not only on the rule's band; with
    // --bisect they serve as the bisection's ends, which need the band's.
    let settles = |d: &Decision, better: Option<Better>| {
        report.headline.as_ref().is_some_and(|h| {
            verdict::settles(
                d,
                verdict::robot_change(h, better.map(|b| b == Better::Higher)),
            )
        })
    };
    let ran = guest::run(db, &args, (!a.bisect).then_some(&settles as _))?;
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
        .map(|f| f.better == Better::Higher);
    let judged: Option<Judged> = match (&report.headline, &decision) {
        (Some(h), Some(d)) => Some(verdict::judge(d, verdict::robot_change(h, better))),
        _ => None,
    };
    let lines = lines(report, plan, (here_base, here_head), (&figure, &decision));
    let moved = judged.filter(|j| j.verdict.sees_the_change()).map(|_| {
        let medians = [here_base, here_head].map(moved::vmstat_medians);
        moved::moved_most(&report.tests[0].rows, &lines, (&medians[0], &medians[1]))
    });
    let robot = robot_runs::store(&ran.landed.store, report, plan, here_base, [base, head])?;
    let host = crate::guest::host_load::busy_boots([here_base, here_head]);
    if !a.json.json {
        let mut o = text(report, &labels, &lines, judged.as_ref(), &figure);
        o.push_str(&moved.as_ref().map(moved::render).unwrap_or_default());
        o.push_str(&host.and_then(|h| h.line()).unwrap_or_default());
        o.push_str(&stored_text(
            &robot,
            [here_base.meta.id, here_head.meta.id],
            here_base.meta.under_icount(),
        ));
        super::output::text(&o)?;
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
            "moved_most": moved,
            "runs": {
                "robot": robot.iter().map(|r| r.id).collect::<Vec<_>>(),
                "robot_labels": robot.iter().map(|r| &r.label).collect::<Vec<_>>(),
                "robot_reused": robot.iter().any(|r| r.reused),
                "here": [here_base.meta.id, here_head.meta.id],
            },
            "bisect": found.as_ref().map(super::bisect::json),
            "boots_s": ran.boot_seconds,
            "host": host,
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
    let v: Vec<f64> = run
        .cases
        .iter()
        .flat_map(|c| c.measured())
        .filter_map(|s| match by {
            Measured::Figure(f) => s.data.figures.get(f).copied(),
            Measured::Vmstat(c) => Some(s.vmstat.get(c).copied().unwrap_or(0) as f64),
            Measured::Meminfo(f) => s
                .data
                .figures
                .get(&format!("{}{f}", crate::monitor::meminfo::PREFIX))
                .copied(),
        })
        .filter(|x| x.is_finite())
        .collect();
    (!v.is_empty()).then(|| crate::stats::summary::median(&v))
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
                "{}: the robot saw {}% of {}; here {figure} moved {}% \
                 [{}%, {}%] at {:.1}% over {} rounds{}",
                j.verdict.as_str().to_uppercase(),
                signed(j.robot * 100.0),
                h.metric,
                signed(j.change * 100.0),
                signed(j.ci.0 * 100.0),
                signed(j.ci.1 * 100.0),
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

/// Where both sides are stored, for `compare`: the robot's pair by label
/// (and whether this report's pair was stored before), this machine's runs
/// by id (their labels, the short commits, name every reproduce's). The
/// command offered is one `compare` runs: under icount this machine's
/// figures count instructions, so its two runs are compared with each
/// other, not with the robot's (`compare` refuses mixed clocks).
fn stored_text(robot: &[RobotRun], [base, head]: [i64; 2], icount: bool) -> String {
    let line = match robot {
        [b, h] => format!(
            "Stored: the robot's runs {} and {}{}, this machine's runs {base} and \
             {head}{}",
            b.label,
            h.label,
            if b.reused && h.reused {
                " (this report's, found in the store)"
            } else {
                ""
            },
            if icount {
                format!(
                    " (under icount, comparable with each other only): vmscale \
                     compare {base} {head}"
                )
            } else {
                format!(": vmscale compare {} {base}", b.label)
            },
        ),
        _ => format!(
            "Stored: this machine's runs {base} and {head} (no row of the robot's maps \
             to a figure)"
        ),
    };
    format!("\n{}", crate::text::fill(&line, 80, "", "  "))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn robot() -> Vec<RobotRun> {
        ["robot-aaaa", "robot-bbbb"]
            .iter()
            .zip([1, 2])
            .map(|(l, id)| RobotRun {
                id,
                label: l.to_string(),
                reused: false,
            })
            .collect()
    }

    /// The command the line offers, whitespace of the fill undone.
    fn offered(text: &str) -> String {
        let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
        flat.split_once(": vmscale ").unwrap().1.to_string()
    }

    #[test]
    fn the_offered_compare_pairs_runs_of_one_clock() {
        let timed = stored_text(&robot(), [5, 6], false);
        assert_eq!(offered(&timed), "compare robot-aaaa 5");
        // Under icount this machine's figures count instructions: its own
        // pair, never the robot's against it (compare refuses that).
        let icount = stored_text(&robot(), [5, 6], true);
        assert_eq!(offered(&icount), "compare 5 6");
        assert!(icount.contains("robot-aaaa and robot-bbbb"), "{icount}");
        for t in [timed, icount] {
            assert!(t.lines().all(|l| l.len() <= 80), "{t}");
        }
    }
}
