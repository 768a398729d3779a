//! `reproduce --bisect`: when the verdict finds the robot's change and
//! base..head holds more than one commit, `vmscale bisect`'s machinery
//! (`commands::bisect::Range`) goes over the range with reproduce's plan,
//! guest shape and rule, and names the first bad commit. Reproduce's own
//! rounds of base and head are the bisection's ends, so they are not
//! booted again. Everything is checked before the first build; `--dry-run`
//! shows the bisection planned (`planned`).

use serde_json::{Value, json};

use crate::bisect::args::BisectRun;
use crate::bisect::entries;
use crate::cli::ReproduceArgs;
use crate::commands::bisect::{Bisected, Range, Setup};
use crate::error::{Error, Result};
use crate::guest::options::BootOptions;
use crate::kbuild::git;
use crate::reproduce::bisection::{self, Bisection};
use crate::reproduce::report::{Commit, Report};
use crate::reproduce::verdict::Verdict;

/// A bisection asked for and checked, waiting for the verdict.
pub struct Asked {
    range: Range,
    setup: Setup,
    run: BisectRun,
}

/// What `--bisect` found.
pub enum Found {
    /// base..head is one commit: the head.
    OneCommit(Commit),
    Bisected(Box<Bisected>),
}

/// `--bisect`'s input checked before anything is built: a tree (not
/// `--kernel`), base an ancestor of head along the first-parent line, and
/// the plan a bisection can run.
pub fn ask(
    a: &ReproduceArgs,
    (base, head): (&Commit, &Commit),
    boot: &BootOptions,
    plan: &[String],
) -> Result<Option<Asked>> {
    if !a.bisect {
        return Ok(None);
    }
    let Some(tree) = &a.tree else {
        return Err(needs_tree());
    };
    let range = Range::of_tree(tree, &base.id, &head.id, &a.tree_config).map_err(as_bisect)?;
    let run = BisectRun {
        boot: boot.clone(),
        plan: plan.to_vec(),
    };
    let setup = Setup::of(&run)?;
    Ok(Some(Asked { range, setup, run }))
}

/// The bisection `--bisect` would run, for `--dry-run`: its range
/// counted in `--tree` (checked as the run checks it, nothing built), or
/// uncounted without one; `run_s`: the plan's seconds a kernel and round.
pub fn planned(a: &ReproduceArgs, report: &Report, run_s: f64) -> Result<Option<Bisection>> {
    if !a.bisect {
        return Ok(None);
    }
    let (Some(base), Some(head)) = (&report.base, &report.head) else {
        return Err(Error::Input(
            "--bisect needs the report's base and head commits, and this one names \
             no pair (a job.yaml names one commit): give the robot's mail"
                .into(),
        ));
    };
    if !a.kernels.is_empty() {
        return Err(needs_tree());
    }
    let commits = match &a.tree {
        Some(tree) => {
            super::commits::check(tree, &[base, head])?;
            let range = entries::revisions(tree, &base.id, &head.id).map_err(as_bisect)?;
            Some(range.len().saturating_sub(1))
        }
        None => None,
    };
    let most = a.boot.max_rounds() as usize;
    Ok(Some(bisection::plan((base, head), commits, run_s, most)))
}

fn needs_tree() -> Error {
    Error::Input(
        "--bisect needs --tree DIR: it builds the commits between the report's base \
         and head, and --kernel gives only the two ends"
            .into(),
    )
}

/// A range refused by `vmscale bisect`'s checks, said in reproduce's terms.
fn as_bisect(e: Error) -> Error {
    e.context("--bisect (base as --good, head as --bad)")
}

/// Whether a verdict calls for a bisection: this machine sees the
/// robot's change, in its direction.
pub fn called_for(v: Option<Verdict>) -> bool {
    v.is_some_and(|v| v.sees_the_change())
}

/// The planned bisection as text, 80 columns.
pub fn plan_text(b: &Bisection) -> String {
    let (verdicts, last) = b.after.split_at(b.after.len().saturating_sub(1));
    let mut line = format!(
        "{}..{} after a verdict of {} or {}",
        git::short(&b.base),
        git::short(&b.head),
        verdicts.join(", "),
        last.join("")
    );
    match (b.commits, b.steps, b.pairs, b.run_s) {
        (Some(1), ..) => line.push_str(": one commit, the head is named, nothing more booted"),
        (Some(c), Some(steps), Some(pairs), Some([fewest, most])) => line.push_str(&format!(
            ": {c} commits, at most {steps} steps (log2 {c}; more if a commit is \
             skipped) and the first bad against its parent: {pairs} pairs of {}-{} \
             rounds, about {} to {} of runs (builds and boots aside)",
            b.rounds[0],
            b.rounds[1],
            crate::units::duration(fewest),
            crate::units::duration(most)
        )),
        _ => line.push_str(&format!(
            ": the commits are counted with --tree DIR (which --bisect needs); \
             each step is a pair of {}-{} rounds",
            b.rounds[0], b.rounds[1]
        )),
    }
    crate::text::fill(&line, 80, "Bisect: ", "        ")
}

impl Asked {
    /// Bisects base..head after verdict `v` (refused, bad input, when it
    /// does not call for one); `ends`: reproduce's rounds, ln head / base.
    pub fn run(self, db: &std::path::Path, v: Option<Verdict>, ends: &[f64]) -> Result<Found> {
        if !called_for(v) {
            let said = v.map_or("undecided", Verdict::as_str);
            return Err(Error::Input(format!(
                "--bisect: the verdict is {said}: this machine does not see the robot's \
                 change between base and head, so there is nothing to bisect (the runs \
                 above are stored; more --max-rounds may decide)"
            )));
        }
        let Asked { range, setup, run } = self;
        if let [_, head] = &range.entries[..] {
            return Ok(Found::OneCommit(Commit {
                id: head.name.clone(),
                subject: head.subject.clone(),
            }));
        }
        range
            .bisect(db, setup, &run.boot, Some(ends))
            .map(|b| Found::Bisected(Box::new(b)))
    }
}

/// The answer as text, after the verdict.
pub fn text(f: &Found) -> String {
    match f {
        Found::OneCommit(c) => format!(
            "\nbisect: base..head is one commit: the first bad is the head, {}{}\n",
            c.id,
            c.subject
                .as_deref()
                .map(|s| format!(" \"{s}\""))
                .unwrap_or_default()
        ),
        Found::Bisected(b) => format!("\n{}", crate::report::bisect::text(&b.view(true))),
    }
}

/// The answer as JSON: the bisection's report (`vmscale bisect --json`).
pub fn json(f: &Found) -> Value {
    match f {
        Found::OneCommit(c) => json!({
            "answer": "found",
            "first_bad": c.id,
            "entries": 2,
            "steps": [],
        }),
        Found::Bisected(b) => crate::report::bisect::json(&b.view(true)),
    }
}
