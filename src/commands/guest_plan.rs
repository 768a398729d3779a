//! `vmscale guest`'s input, checked before anything boots: the plan after
//! `--` (each step a vmscale command line that makes sense in a guest),
//! `--append-to`, and the rounds' budget and deciding rule (`--rounds
//! N|auto` with `--decide`, `--max-rounds`, `--max-time`, `--figure`).

use clap::Parser;
use std::time::Duration;

use super::{Error, Result};
use crate::cli::{Cli, Command, GuestArgs, Rounds};
use crate::guest::nested::InnerStep;
use crate::guest::qemu::Accel;
use crate::stats::decide::Rule;

/// Commands a plan may run inside a guest.
const PLAN_COMMANDS: &str = "run, sysinfo, show, list, compare, doctor, pcp, fit or guest";

/// Splits the words after `--` at `---` and checks each step parses as a
/// vmscale command line that makes sense inside a guest.
pub fn split_plan(words: &[String]) -> Result<Vec<Vec<String>>> {
    let mut steps: Vec<Vec<String>> = vec![Vec::new()];
    for w in words {
        if w == "---" {
            steps.push(Vec::new());
        } else if let Some(last) = steps.last_mut() {
            last.push(w.clone());
        }
    }
    if steps.len() == 1 && steps[0].is_empty() {
        return Ok(Vec::new());
    }
    for (i, step) in steps.iter().enumerate() {
        let k = i + 1;
        if step.is_empty() {
            return Err(Error::Input(format!(
                "plan step {k} is empty: put a vmscale command line between `---`s"
            )));
        }
        let argv = std::iter::once("vmscale".to_string()).chain(step.iter().cloned());
        let cli = Cli::try_parse_from(argv).map_err(|e| {
            let e = e.to_string();
            Error::Input(format!(
                "plan step {k} (`{}`): {}",
                step.join(" "),
                e.lines().next().unwrap_or("").trim_start_matches("error: ")
            ))
        })?;
        if cli.db.is_some() || cli.output.is_some() {
            return Err(Error::Input(format!(
                "plan step {k}: --db and -o have no place in a plan: the guest's store \
                 comes back by itself"
            )));
        }
        let fits = matches!(
            cli.command,
            Command::Run(_)
                | Command::Sysinfo(_)
                | Command::Show(_)
                | Command::List(_)
                | Command::Compare(_)
                | Command::Doctor(_)
                | Command::Pcp(_)
                | Command::Fit(_)
                | Command::Guest(_)
        );
        if !fits {
            return Err(Error::Input(format!(
                "plan step {k} (`{}`): a guest's plan runs {PLAN_COMMANDS}",
                step[0]
            )));
        }
        if let Command::Guest(g) = &cli.command {
            check_nested(k, g)?;
        }
    }
    Ok(steps)
}

/// A `guest` step: its kernels are files (a tree would be built inside an
/// emulated CPU) and its own plan boots no guest (a third level).
fn check_nested(k: usize, g: &GuestArgs) -> Result<()> {
    if g.tree.is_some() {
        return Err(Error::Input(format!(
            "plan step {k}: a guest step boots --kernel files; build --tree on the host \
             (vmscale guest --tree caches the bzImage) and give it as --kernel"
        )));
    }
    let inner = split_plan(&g.plan)?;
    if inner.is_empty() {
        return Err(Error::Input(format!(
            "plan step {k}: the guest step needs its own plan after its `--`"
        )));
    }
    if inner.iter().any(|s| s[0] == "guest") {
        return Err(Error::Input(format!(
            "plan step {k}: a guest inside a guest runs no guests of its own (two levels \
             at most)"
        )));
    }
    Ok(())
}

/// The plan's `guest` steps as the host must prepare them.
pub(super) fn inner_steps(steps: &[Vec<String>]) -> Result<Vec<InnerStep>> {
    let mut out = Vec::new();
    for (index, step) in steps.iter().enumerate() {
        let argv = std::iter::once("vmscale".to_string()).chain(step.iter().cloned());
        if let Ok(Cli {
            command: Command::Guest(g),
            ..
        }) = Cli::try_parse_from(argv)
        {
            out.push(InnerStep {
                index,
                kernels: g.kernels.clone(),
                modules: g.boot.modules.clone(),
                mem_mib: g.boot.mem_mib,
            });
        }
    }
    Ok(out)
}

/// How many rounds, and what ends them: `--rounds N` fixed, or `--rounds
/// auto` until the verdict, `--max-rounds` or `--max-time`.
pub(super) struct Budget {
    pub(super) auto: bool,
    /// The most rounds.
    pub(super) rounds: u32,
    /// `--decide` as a fraction; None: the accelerator's default.
    pub(super) threshold: Option<f64>,
    pub(super) max_time: Option<Duration>,
}
/// The error of the whole sequence of intervals.
const ALPHA: f64 = 0.05;

impl Budget {
    pub(super) fn of(a: &GuestArgs, steps: &[Vec<String>]) -> Result<Budget> {
        let kernels = a.kernels.len() + a.revs.len();
        let auto = a.rounds == Rounds::Auto;
        if !auto && (a.boot.max_rounds.is_some() || a.max_time.is_some()) {
            return Err(Error::Input(
                "--max-rounds and --max-time bound --rounds auto: give --rounds auto, or \
                 leave them out"
                    .into(),
            ));
        }
        if auto && kernels < 2 {
            return Err(Error::Input(
                "--rounds auto decides between kernels: give two --kernel (the same \
                 file twice for an A/A check)"
                    .into(),
            ));
        }
        let rounds = match a.rounds {
            Rounds::Fixed(n) => n,
            Rounds::Auto => a.boot.max_rounds(),
        };
        // --max-rounds is bounded as it is parsed.
        if !(1..=100).contains(&rounds) {
            return Err(Error::Input(format!("--rounds {rounds}: give 1 to 100")));
        }
        if let Some(f) = &a.boot.figure {
            check_figure(f, steps)?;
        }
        Ok(Budget {
            auto,
            rounds,
            threshold: a.boot.decide,
            max_time: a.max_time,
        })
    }

    /// The rule, its band `--decide` or the accelerator's default.
    pub(super) fn rule(&self, accel: Accel) -> Rule {
        let t = self.threshold.unwrap_or_else(|| accel.default_threshold());
        if self.auto {
            Rule::sequential(t, ALPHA, self.rounds as usize)
        } else {
            Rule::fixed(t, ALPHA, self.rounds as usize)
        }
    }
}

/// Refuses a `--figure` the plan's first run cannot report.
pub fn check_figure(figure: &str, steps: &[Vec<String>]) -> Result<()> {
    let Some(spec) = steps
        .iter()
        .find(|s| s.first().is_some_and(|w| w == "run"))
        .and_then(|s| s.get(1))
        .and_then(|w| crate::workload::find(w))
    else {
        return Ok(());
    };
    let names: Vec<String> = spec.figures().into_iter().map(|f| f.name).collect();
    // c2c adds a figure per CPU pair to those it declares.
    if names.iter().any(|n| n == figure) || spec.name == "c2c" {
        return Ok(());
    }
    Err(Error::Input(format!(
        "--figure {figure}: {} reports {}",
        spec.name,
        names.join(", ")
    )))
}

/// `--append-to N=ARGS` as each kernel's own additions.
pub(super) fn appends_to(given: &[String], kernels: usize) -> Result<Vec<String>> {
    let mut out = vec![String::new(); kernels];
    for g in given {
        let bad = || {
            Error::Input(format!(
                "--append-to {g}: give N=ARGS with N from 1 to {kernels} (the kernel's place \
                 among the --kernel options)"
            ))
        };
        let (k, args) = g.split_once('=').ok_or_else(bad)?;
        let k: usize = k.trim().parse().map_err(|_| bad())?;
        let slot = out.get_mut(k.wrapping_sub(1)).ok_or_else(bad)?;
        slot.push(' ');
        slot.push_str(args.trim());
    }
    Ok(out.into_iter().map(|s| s.trim().to_string()).collect())
}
