//! `vmscale bisect`: which kernel of an ordered list, or which commit of a
//! tree, moved the plan's deciding figure (`src/bisect/`), and `bisect
//! judge`, one step for `git bisect run`. Everything that can be checked
//! is checked before the first build or boot; runs go to the store as they
//! are measured, so the same command run again continues.

mod judge;
mod setup;
pub use setup::Setup;

use std::path::Path;

use super::{Error, Result};
use crate::bisect::args::{BisectArgs, JudgeCommand};
use crate::bisect::boots::Build;
use crate::bisect::entries::{self, Entry};
use crate::bisect::flow::{self, Outcome, Record, Role};
use crate::bisect::stored;
use crate::guest::options::BootOptions;
use crate::kbuild::config;
use crate::report::bisect::{self as report, Named, View};

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
    let range = match &a.tree {
        Some(tree) => {
            let (good, bad) = (a.good.as_deref(), a.bad.as_deref());
            Range::of_tree(tree, good.unwrap_or(""), bad.unwrap_or(""), &a.tree_config)?
        }
        None => {
            let e = entries::kernels(&a.kernels, a.run.boot.modules.as_deref())?;
            let shas = e
                .iter()
                .filter_map(|e| e.kernel.as_ref())
                .map(|k| k.sha256.clone());
            let key = std::iter::once("kernels".to_string()).chain(shas).collect();
            Range {
                entries: e,
                build: None,
                key,
            }
        }
    };
    let done = range.bisect(db, setup, &a.run.boot, None)?;
    let view = done.view(a.tree.is_some());
    if a.json.json {
        super::print_json(&report::json(&view))
    } else {
        super::output::text(&report::text(&view))
    }
}

/// What a bisection goes over: its entries, what builds a revision, and
/// what of them makes two bisections the same.
pub struct Range {
    pub entries: Vec<Entry>,
    build: Option<Build>,
    key: Vec<String>,
}

/// A finished bisection: its key, entries and outcome, and the figure
/// that decided.
pub struct Bisected {
    pub key: String,
    pub named: Vec<Named>,
    pub outcome: Outcome,
    pub figure: Option<String>,
}

impl Bisected {
    /// The report's view (`tree`: the entries are revisions).
    pub fn view(&self, tree: bool) -> View<'_> {
        View {
            key: &self.key,
            tree,
            figure: self.figure.as_deref(),
            entries: &self.named,
            outcome: &self.outcome,
        }
    }
}

impl Range {
    /// The revisions of `tree` from `good` to `bad`, built with `cfg`;
    /// refused (bad input) before anything is built.
    pub fn of_tree(tree: &Path, good: &str, bad: &str, cfg: &config::Options) -> Result<Range> {
        crate::kbuild::make::check_tools()?;
        let base = config::Base::parse(&cfg.config)?;
        for i in &cfg.config_items {
            config::Item::parse(i)?;
        }
        let entries = entries::revisions(tree, good, bad)?;
        let mut key = vec![format!("tree {:?}", base)];
        key.extend(cfg.config_items.iter().cloned());
        key.extend(entries.iter().map(|e| e.name.clone()));
        let build = Build {
            tree: tree.to_path_buf(),
            config: cfg.config.clone(),
            items: cfg.config_items.clone(),
        };
        Ok(Range {
            entries,
            build: Some(build),
            key,
        })
    }

    /// Bisects the range with `setup`'s plan and `boot`'s guest and rule,
    /// its progress on stderr. `ends`: the rounds of the first entry
    /// against the last already measured by the same plan and rule (ln
    /// last / first by round), taken as the ends' first rounds.
    pub fn bisect(
        self,
        db: &Path,
        setup: Setup,
        boot: &BootOptions,
        ends: Option<&[f64]>,
    ) -> Result<Bisected> {
        let Range {
            entries,
            build,
            mut key,
        } = self;
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
        let ends_labels = (named[0].label.clone(), named[n - 1].label.clone());
        let done = setup.run(db, &key, entries, build, boot, |bench, rule| {
            if let Some(logs) = ends {
                let (good, bad) = &ends_labels;
                bench.stored.seed(Role::Ends, good, bad, logs);
            }
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
        Ok(Bisected {
            key,
            named,
            outcome,
            figure,
        })
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
    let busy = match r.host {
        Some(b) if b.busy > 0 => format!(
            "\n  the host was busy in {} of {} boots (others used up to {:.0}% of its CPUs)",
            b.busy,
            b.boots,
            b.max_other_share * 100.0
        ),
        _ => String::new(),
    };
    format!(
        "bisect: {} against {}: {verdict}{ratio}, {} rounds{resumed}{busy}\n",
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
            host: None,
        };
        assert_eq!(
            progress_line(&named, &r),
            "bisect: bad against good: undecided, 3 rounds\n"
        );
        r.stored = 2;
        assert!(progress_line(&named, &r).ends_with("3 rounds (2 from the store)\n"));
        r.host = crate::guest::host_load::Busy::of([0.02, 0.4, 0.05]);
        assert!(
            progress_line(&named, &r).ends_with(
                "(2 from the store)\n  the host was busy in 1 of 3 boots (others used up to \
                 40% of its CPUs)\n"
            ),
            "{}",
            progress_line(&named, &r)
        );
    }
}
