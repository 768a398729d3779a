//! `reproduce --bisect`: when the verdict finds the robot's change and
//! base..head holds more than one commit, `vmscale bisect`'s machinery
//! (`commands::bisect::Range`) goes over the range with reproduce's plan,
//! guest shape and rule, and names the first bad commit. Reproduce's own
//! rounds of base and head are the bisection's ends, so they are not
//! booted again. Everything is checked before the first build.

use serde_json::{Value, json};

use crate::bisect::args::BisectRun;
use crate::cli::ReproduceArgs;
use crate::commands::bisect::{Bisected, Range, Setup};
use crate::error::{Error, Result};
use crate::guest::options::BootOptions;
use crate::reproduce::report::Commit;
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
        return Err(Error::Input(
            "--bisect needs --tree DIR: it builds the commits between the report's base \
             and head, and --kernel gives only the two ends"
                .into(),
        ));
    };
    let range = Range::of_tree(tree, &base.id, &head.id, &a.tree_config)
        .map_err(|e| e.context("--bisect (base as --good, head as --bad)"))?;
    let run = BisectRun {
        boot: boot.clone(),
        plan: plan.to_vec(),
    };
    let setup = Setup::of(&run)?;
    Ok(Some(Asked { range, setup, run }))
}

/// Whether a verdict calls for a bisection: this machine sees the
/// robot's change, in its direction.
pub fn called_for(v: Option<Verdict>) -> bool {
    matches!(
        v,
        Some(Verdict::Reproduced | Verdict::Smaller | Verdict::Larger)
    )
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
