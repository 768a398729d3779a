//! `vmscale bisect judge`: one step for `git bisect run`, with the user's
//! own build script: the ends measured (or found in the store, so later
//! steps reuse them), then the kernel given against the good end.

use std::path::Path;

use super::setup::Setup;
use crate::bisect::args::JudgeArgs;
use crate::bisect::entries::Entry;
use crate::bisect::flow::{self, Record};
use crate::bisect::search::Mark;
use crate::bisect::stored;
use crate::commands::{Error, Result};
use crate::guest::kernel::{self, Kernel};

/// `vmscale bisect judge`: exit 0 like good, 1 like bad, 125 skip.
pub fn judge(db: &Path, j: &JudgeArgs) -> Result<()> {
    crate::exec::signals::install();
    let setup = Setup::of(&j.run)?;
    let modules = j.run.boot.modules.as_deref();
    let ends: Vec<Kernel> = [("--good", &j.good), ("--bad", &j.bad)]
        .into_iter()
        .map(|(what, k)| kernel::resolve(k, modules).map_err(|e| e.context(what)))
        .collect::<Result<_>>()?;
    let labels = kernel::default_labels(&ends);
    let cand = kernel::resolve(&j.kernel, modules)?;
    let mut key = vec![
        "kernels".to_string(),
        ends[0].sha256.clone(),
        ends[1].sha256.clone(),
    ];
    key.extend(setup.key.iter().cloned());
    let key = stored::key(&key);
    let mut entries: Vec<Entry> = ends
        .into_iter()
        .zip(labels)
        .zip([&j.good, &j.bad])
        .map(|((k, label), p)| Entry {
            name: p.display().to_string(),
            label,
            subject: None,
            kernel: Some(k),
        })
        .collect();
    entries.push(Entry {
        name: j.kernel.display().to_string(),
        label: format!("{}@{}", cand.release, cand.short_id()),
        subject: None,
        kernel: Some(cand),
    });
    let ((ends, step), _) = setup.run(db, &key, entries, None, &j.run.boot, |bench, rule| {
        flow::judge_one(rule, bench, 1, 2)
    })?;
    let d = |r: &Record| {
        r.decision
            .map(|d| format!("{:.3} [{:.3}, {:.3}]", d.ratio, d.ci.0, d.ci.1))
            .unwrap_or_else(|| "no interval".into())
    };
    let Some(step) = step else {
        return Err(Error::Exit(
            128,
            format!(
                "the ends are not told apart (bad / good {} after {} rounds): nothing to \
                 bisect",
                d(&ends),
                ends.rounds
            ),
        ));
    };
    let line = format!(
        "{}: {} / good = {} after {} rounds (bad / good = {})",
        match step.mark {
            Some(Mark::Good) => "like good",
            Some(Mark::Bad) => "like bad",
            _ => "skip",
        },
        j.kernel.display(),
        d(&step),
        step.rounds,
        d(&ends)
    );
    let line = match &step.failure {
        Some(f) => format!("{line}\n  {}", f.lines().next().unwrap_or("")),
        None => line,
    };
    match step.mark {
        Some(Mark::Good) => crate::commands::output::text(&format!("{line}\n")),
        Some(Mark::Bad) => Err(Error::Exit(1, line)),
        _ => Err(Error::Exit(125, line)),
    }
}
