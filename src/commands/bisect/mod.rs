//! `vmscale bisect`: which kernel of an ordered list, or which commit of a
//! tree, moved the plan's deciding figure (`src/bisect/`), and `bisect
//! judge`, one step for `git bisect run`. Everything that can be checked
//! is checked before the first build or boot; runs go to the store as they
//! are measured, so the same command run again continues.

mod judge;
mod setup;

use std::path::Path;

use super::{Error, Result};
use crate::bisect::args::{BisectArgs, JudgeCommand};
use crate::bisect::boots::Build;
use crate::bisect::entries;
use crate::bisect::flow::{self, Record};
use crate::bisect::stored;
use crate::kbuild::config;
use crate::report::bisect::{self as report, Named, View};
use setup::Setup;

pub fn bisect(db: &Path, a: &BisectArgs) -> Result<()> {
    if let Some(JudgeCommand::Judge(j)) = &a.judge {
        // git bisect run takes 1..127 but 125 for "bad": an error must stop it.
        let judged = crate::cache::cap::configure().and_then(|()| judge::judge(db, j));
        return judged.map_err(|e| match e {
            Error::Exit(..) => e,
            e => Error::Exit(128, e.to_string()),
        });
    }
    crate::cache::cap::configure()?;
    crate::exec::signals::install();
    let setup = Setup::of(&a.run)?;
    let (entries, build, mut key) = match &a.tree {
        Some(tree) => {
            crate::kbuild::make::check_tools()?;
            let base = config::Base::parse(&a.tree_config.config)?;
            for i in &a.tree_config.config_items {
                config::Item::parse(i)?;
            }
            let (good, bad) = (a.good.as_deref(), a.bad.as_deref());
            let e = entries::revisions(tree, good.unwrap_or(""), bad.unwrap_or(""))?;
            let mut key = vec![format!("tree {:?}", base)];
            key.extend(a.tree_config.config_items.iter().cloned());
            key.extend(e.iter().map(|e| e.name.clone()));
            let build = Build {
                tree: tree.clone(),
                config: a.tree_config.config.clone(),
                items: a.tree_config.config_items.clone(),
            };
            (e, Some(build), key)
        }
        None => {
            let e = entries::kernels(&a.kernels, a.run.boot.modules.as_deref())?;
            let shas = e
                .iter()
                .filter_map(|e| e.kernel.as_ref())
                .map(|k| k.sha256.clone());
            let key = std::iter::once("kernels".to_string()).chain(shas).collect();
            (e, None, key)
        }
    };
    key.extend(setup.key.iter().cloned());
    let key = stored::key(&key);
    let named: Vec<Named> = entries
        .iter()
        .map(|e| Named {
            name: e.name.clone(),
            label: e.label.clone(),
            subject: e.subject.clone(),
        })
        .collect();
    let n = entries.len();
    let quiet = super::output::quiet();
    let mut said = |r: &Record| {
        if !quiet {
            eprint!("{}", progress_line(&named, r));
        }
    };
    let done = setup.run(db, &key, entries, build, &a.run.boot, |bench, rule| {
        flow::bisect(n, rule, bench, &mut said)
    });
    let (outcome, figure) = match done {
        Ok(x) => x,
        Err(Error::Interrupted) => {
            eprintln!(
                "vmscale: the rounds so far are stored as {key}/…; the same command \
                 continues from them"
            );
            return Err(Error::Interrupted);
        }
        Err(e) => return Err(e),
    };
    let view = View {
        key: &key,
        tree: a.tree.is_some(),
        figure: figure.as_deref(),
        entries: &named,
        outcome: &outcome,
    };
    if a.json.json {
        super::print_json(&report::json(&view))
    } else {
        super::output::text(&report::text(&view))
    }
}

/// One line on stderr as each pair is measured; the rounds found in the
/// store named only for a resumed bisection.
fn progress_line(named: &[Named], r: &Record) -> String {
    let verdict = match (r.mark, r.decision) {
        (Some(m), _) => format!("like {}", m.as_str()).replace("like skip", "skipped"),
        (None, Some(d)) => d.verdict.as_str().to_string(),
        (None, None) => "undecided".into(),
    };
    let ratio = r
        .decision
        .map(|d| format!(" {:.3} [{:.3}, {:.3}]", d.ratio, d.ci.0, d.ci.1))
        .unwrap_or_default();
    let resumed = if r.stored > 0 {
        format!(" ({} from the store)", r.stored)
    } else {
        String::new()
    };
    format!(
        "bisect: {} against {}: {verdict}{ratio}, {} rounds{resumed}\n",
        named[r.new].label, named[r.base].label, r.rounds
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_progress_line_names_stored_rounds_only_when_resumed() {
        let named: Vec<Named> = ["good", "bad"]
            .iter()
            .map(|l| Named {
                name: l.to_string(),
                label: l.to_string(),
                subject: None,
            })
            .collect();
        let mut r = Record {
            base: 0,
            new: 1,
            mark: None,
            decision: None,
            rounds: 3,
            stored: 0,
            seconds: 1.0,
            failure: None,
        };
        assert_eq!(
            progress_line(&named, &r),
            "bisect: bad against good: undecided, 3 rounds\n"
        );
        r.stored = 2;
        assert!(progress_line(&named, &r).ends_with("3 rounds (2 from the store)\n"));
    }
}
