//! What every workload declares about itself, in one place: its name, its
//! one-line description, its options and how they become a workload, its
//! figures, how its runs are reported, and what a "not enough memory"
//! refusal tells the user to shrink. The table of these is
//! `workload::REGISTRY`: `vmscale run`'s subcommands are generated from it,
//! and code that used to match on a workload's name looks its `Spec` up
//! there instead.

use clap::{ArgMatches, FromArgMatches};
use serde::Serialize;

use super::{Measure, Workload};
use crate::error::{Error, Result};
use crate::exec::Mode;
use crate::machine::Snapshot;
use crate::model::{Better, Case, Figure, SampleData};

/// Which text report (`report/<module>.rs`) renders a workload's runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Report {
    /// `report/generic.rs`: per case, the median and spread of every
    /// figure, for a workload without a report of its own (yet).
    Generic,
    Pft,
    Numa,
    Fork,
    Churn,
    Cmd,
    Colour,
    C2c,
    Atomic,
    Lockfan,
    Latency,
    Wis,
    MmapLock,
    Thp,
    Vms,
    StressNg,
}

impl Report {
    /// The report lays knob combinations side by side itself, instead of
    /// one block per combination.
    pub fn owns_knob_blocks(self) -> bool {
        self == Report::Colour
    }
}

/// Which plots `report --html` draws for a workload's runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Plots {
    /// Figures against task count (the default for most workloads).
    Scaling,
    /// A CPU-by-CPU matrix (c2c).
    Heatmap,
    /// Latency against working-set size.
    Latency,
    /// Colour skew per task.
    Colour,
}

/// One workload's declaration. Each workload file defines its own
/// (`pub const SPEC: Spec`) and `workload::REGISTRY` lists them.
#[derive(Debug, Clone, Copy)]
pub struct Spec {
    /// The `vmscale run` subcommand and the stored workload name.
    pub name: &'static str,
    /// One line for `vmscale run --help`.
    pub about: &'static str,
    /// The examples `vmscale run NAME --help` ends with.
    pub examples: &'static str,
    /// Adds the workload's own options to its `run` subcommand: its clap
    /// `Args`, as `<XArgs as clap::Args>::augment_args`. The options every
    /// run shares (`cli::Harness`) are added after them.
    pub args: fn(clap::Command) -> clap::Command,
    /// The workload the parsed options describe, validated: bad input is
    /// `Error::Input` (exit 2), before anything is stored.
    pub build: Build,
    /// The default of `--mode` (`Placement`), for a workload that takes it.
    pub mode: Option<Mode>,
    /// The figures every run reports; the first is the headline (adaptive
    /// stopping, plots and `compare` default to it). A run may add more
    /// (c2c adds one per CPU pair).
    pub figures: &'static [Fig],
    /// Which text report renders its runs.
    pub report: Report,
    /// Which plots the HTML report draws.
    pub plots: Plots,
    /// The fix a "not enough memory" refusal offers: the options that
    /// make a run smaller.
    pub size_flags: &'static str,
    /// Knobs the workload measures, which `--tune` leaves as they are.
    pub measures_knobs: &'static [&'static str],
    /// Its runs in `run quick`: for each, the arguments after
    /// `vmscale run NAME`, parsed like a command line. None where this
    /// machine cannot run it (c2c on one CPU).
    pub quick: fn(&Snapshot) -> Vec<Vec<String>>,
    /// `run quick` skips it with a note, instead of refusing the suite,
    /// when its options are refused on this machine (colour cannot read
    /// frame numbers without CAP_SYS_ADMIN). Such entries run last.
    pub quick_may_skip: bool,
    /// The option whose value `list` prints its choices (`--case list`)
    /// instead of running.
    pub listing: Option<Listing>,
}

impl Spec {
    /// The declaration of a workload whose options are `A`, built by
    /// [`build`], with what most workloads declare: scaling plots, the
    /// generic report, no `--mode`, no measured knobs, no quick entry. A
    /// workload's `SPEC` names what it changes and ends `..Spec::of::<Args>()`.
    pub const fn of<A: Options>() -> Spec {
        Spec {
            name: "",
            about: "",
            examples: "",
            args: <A as clap::Args>::augment_args,
            build: build::<A>,
            mode: None,
            figures: &[],
            report: Report::Generic,
            plots: Plots::Scaling,
            size_flags: DEFAULT_SIZE_FLAGS,
            measures_knobs: &[],
            quick: no_quick,
            quick_may_skip: false,
            listing: None,
        }
    }

    /// The figures every run reports, as the model holds them.
    pub fn figures(&self) -> Vec<Figure> {
        self.figures.iter().map(Fig::figure).collect()
    }

    /// The headline figure's name.
    pub fn headline(&self) -> String {
        self.figures
            .first()
            .map(|f| f.name)
            .unwrap_or_default()
            .into()
    }
}

/// A figure as a workload declares it: its name, its unit, which way is
/// better and whether it is a rate (averaged harmonically, tested on logs).
/// Written with [`rate`], [`higher`], [`lower`] or [`lower_rate`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Fig {
    pub name: &'static str,
    pub unit: &'static str,
    pub better: Better,
    pub rate: bool,
}

impl Fig {
    pub fn figure(&self) -> Figure {
        Figure::new(self.name, self.unit, self.better, self.rate)
    }
}

/// A rate, higher is better (faults/s).
pub const fn rate(name: &'static str, unit: &'static str) -> Fig {
    Fig {
        name,
        unit,
        better: Better::Higher,
        rate: true,
    }
}

/// A rate, lower is better (TLB shootdowns/s).
pub const fn lower_rate(name: &'static str, unit: &'static str) -> Fig {
    Fig {
        better: Better::Lower,
        ..rate(name, unit)
    }
}

/// Not a rate, higher is better (a fraction of huge pages).
pub const fn higher(name: &'static str, unit: &'static str) -> Fig {
    Fig {
        rate: false,
        ..rate(name, unit)
    }
}

/// Not a rate, lower is better (seconds, faults, a latency).
pub const fn lower(name: &'static str, unit: &'static str) -> Fig {
    Fig {
        better: Better::Lower,
        ..higher(name, unit)
    }
}

/// No entry in `run quick`.
fn no_quick(_: &Snapshot) -> Vec<Vec<String>> {
    Vec::new()
}

/// `Spec::build`: the parsed options to a validated workload.
pub type Build = fn(&ArgMatches, &Env) -> Result<Box<dyn Workload>>;

/// An option that takes `list` for its choices: `vmscale run vms --case
/// list` prints them on stdout, one a line with what each needs, and runs
/// nothing.
#[derive(Debug, Clone, Copy)]
pub struct Listing {
    /// The option's id (its field's name in the workload's `Args`).
    pub option: &'static str,
    /// The choices, one a line.
    pub lines: fn() -> Vec<String>,
    /// Other words the option takes for a listing of its own (`--case
    /// suite`: every script of the suite, run or refused), with its lines.
    pub also: &'static [(&'static str, Lines)],
}

/// A listing's lines, one a choice.
pub type Lines = fn() -> Vec<String>;

/// What building a workload may read besides its own options.
pub struct Env<'a> {
    /// The workload's declaration (numa's four patterns share options).
    pub spec: &'static Spec,
    /// The machine the run is for.
    pub machine: &'a Snapshot,
    /// The run's `--knob` plan: a knob the run sets counts instead of the
    /// machine's value now (pft's THP and hugetlb checks).
    pub knobs: &'a crate::knobs::Plan,
}

impl Env<'_> {
    /// The workload `make` makes of `cfg`, checking it (bad input is
    /// `Error::Input`), as the runner sees it: with what its `Spec`
    /// declares and `cfg` as its stored configuration, serialized here,
    /// once. `make` keeps `cfg` as it is.
    pub fn made<C: Serialize, W: Measure + 'static>(
        &self,
        cfg: C,
        make: impl FnOnce(C) -> Result<W>,
    ) -> Result<Box<dyn Workload>> {
        let config = serde_json::to_value(&cfg)
            .map_err(|e| Error::Failed(format!("{}: its configuration: {e}", self.spec.name)))?;
        Ok(Box::new(Declared {
            spec: self.spec,
            config,
            work: make(cfg)?,
        }))
    }
}

/// A workload's clap options and how they become the workload: every
/// `Spec::build` is [`build`] of them.
pub trait Options: clap::Args + FromArgMatches {
    /// The validated workload, made by [`Env::made`]: bad input is
    /// `Error::Input` (exit 2).
    fn build(&self, env: &Env) -> Result<Box<dyn Workload>>;
}

/// `Spec::build` of a workload whose options are `A`.
pub fn build<A: Options>(m: &ArgMatches, env: &Env) -> Result<Box<dyn Workload>> {
    options::<A>(m)?.build(env)
}

/// A built workload with its declaration and configuration: the
/// `Workload` the runner sees.
struct Declared<W> {
    spec: &'static Spec,
    config: serde_json::Value,
    work: W,
}

impl<W: Measure> Workload for Declared<W> {
    fn name(&self) -> &'static str {
        self.spec.name
    }
    fn figures(&self) -> Vec<Figure> {
        self.work.run_figures(self.spec.figures())
    }
    fn config(&self) -> serde_json::Value {
        self.config.clone()
    }
}

impl<W: Measure> Measure for Declared<W> {
    fn cases(&self) -> Vec<Case> {
        self.work.cases()
    }
    fn run_figures(&self, declared: Vec<Figure>) -> Vec<Figure> {
        self.work.run_figures(declared)
    }
    fn memory_need(&self) -> u64 {
        self.work.memory_need()
    }
    fn sample(&self, case: &Case) -> Result<SampleData> {
        self.work.sample(case)
    }
    fn sample_s(&self, case: &Case) -> f64 {
        self.work.sample_s(case)
    }
    fn plan_detail(&self) -> serde_json::Map<String, serde_json::Value> {
        self.work.plan_detail()
    }
    fn plan_notes(&self) -> Vec<String> {
        self.work.plan_notes()
    }
    fn bounded_by_max_time(&self) -> bool {
        self.work.bounded_by_max_time()
    }
    fn exit_code(&self) -> Option<i32> {
        self.work.exit_code()
    }
    fn fixed_layout(&self) -> bool {
        self.work.fixed_layout()
    }
}

/// A workload's options out of its subcommand's matches. clap has checked
/// them already, so a failure here is a bug, not bad input.
pub fn options<A: FromArgMatches>(m: &ArgMatches) -> Result<A> {
    A::from_arg_matches(m).map_err(|e| Error::Failed(format!("options: {e}")))
}

/// A quick-suite command line split at spaces (for arguments that hold none).
pub fn args(line: &str) -> Vec<String> {
    line.split_whitespace().map(str::to_string).collect()
}

/// The fix a "not enough memory" refusal offers for a workload that is not
/// registered (an imported run, say).
pub const DEFAULT_SIZE_FLAGS: &str = "smaller sizes or fewer --tasks";

#[cfg(test)]
mod tests {
    use crate::workload::{REGISTRY, find};
    use clap::CommandFactory;

    /// `run`, built: its subcommands and their options are deferred.
    fn run_command() -> clap::Command {
        let mut cli = crate::cli::Cli::command();
        cli.build();
        cli.find_subcommand("run")
            .expect("a run subcommand")
            .clone()
    }

    /// Each registered workload with its `run` subcommand.
    fn subcommands() -> Vec<(&'static crate::workload::Spec, clap::Command)> {
        let run = run_command();
        let sub = |name| run.find_subcommand(name).expect("registered").clone();
        REGISTRY.iter().map(|s| (*s, sub(s.name))).collect()
    }

    /// The subcommand's option `--flag`.
    fn option<'a>(sub: &'a clap::Command, flag: &str) -> Option<&'a clap::Arg> {
        sub.get_arguments().find(|a| a.get_long() == Some(flag))
    }

    /// The subcommand has the option `--flag`.
    fn takes(sub: &clap::Command, flag: &str) -> bool {
        option(sub, flag).is_some()
    }

    #[test]
    fn a_bare_profile_flag_samples_at_the_default_rate() {
        use clap::Parser;
        let rate = |extra: &[&str]| {
            let mut argv = vec!["vmscale", "run", "pft", "--size", "1M"];
            argv.extend(extra);
            match crate::cli::Cli::try_parse_from(argv)
                .expect("parses")
                .command
            {
                crate::cli::Command::Run(r) => r.harness.profile,
                _ => panic!("not a run"),
            }
        };
        assert_eq!(rate(&["--profile"]), Some(crate::profile::DEFAULT_HZ));
        assert_eq!(rate(&["--profile=99"]), Some(99));
        assert_eq!(rate(&[]), None);
    }

    #[test]
    fn every_workload_is_a_run_subcommand_in_registry_order() {
        let listed: Vec<String> = run_command()
            .get_subcommands()
            .map(|c| c.get_name().to_string())
            .filter(|n| n != "quick" && n != "help")
            .collect();
        let registered: Vec<&str> = REGISTRY.iter().map(|s| s.name).collect();
        assert_eq!(listed, registered);
    }

    #[test]
    fn names_are_unique_and_found() {
        for (i, s) in REGISTRY.iter().enumerate() {
            assert!(
                REGISTRY[..i].iter().all(|t| t.name != s.name),
                "{} twice",
                s.name
            );
            assert_eq!(find(s.name).map(|f| f.name), Some(s.name));
        }
        // Imported will-it-scale tests of its own, and junk, are not workloads.
        assert!(find("will-it-scale").is_none());
        assert!(find("").is_none());
        assert!(find("PFT").is_none());
    }

    #[test]
    fn run_help_shows_the_registered_description() {
        for (s, sub) in subcommands() {
            let about = sub.get_about().map(|a| a.to_string());
            assert_eq!(about.as_deref(), Some(s.about), "{}", s.name);
            assert!(!s.about.contains('\n') && s.about.len() <= 80, "{}", s.name);
        }
    }

    #[test]
    fn every_subcommand_has_its_examples_and_the_harness_options() {
        for (s, sub) in subcommands() {
            let after = sub.get_after_help().map(|a| a.to_string());
            assert_eq!(after.as_deref(), Some(s.examples), "{}", s.name);
            assert!(
                s.examples.starts_with("Examples:\n  vmscale run "),
                "{}",
                s.name
            );
            for flag in ["reps", "knob", "label", "json"] {
                assert!(takes(&sub, flag), "{} has no --{flag}", s.name);
            }
        }
    }

    #[test]
    fn every_mode_option_defaults_to_its_spec_mode() {
        for (s, sub) in subcommands() {
            let mode = option(&sub, "mode");
            let default = mode.map(|a| a.get_default_values().to_vec());
            match (s.mode, default) {
                (Some(m), Some(d)) => assert_eq!(d, [m.as_str()], "{}", s.name),
                (Some(_), None) => panic!("{}: a Spec mode but no --mode", s.name),
                (None, Some(d)) => assert!(!d.is_empty(), "{}: --mode without a default", s.name),
                (None, None) => {}
            }
        }
    }

    #[test]
    fn every_workload_has_a_headline_and_distinct_figures() {
        for s in REGISTRY {
            let figures = s.figures();
            assert!(!figures.is_empty(), "{} has no figures", s.name);
            assert_eq!(s.headline(), figures[0].name);
            for (i, f) in figures.iter().enumerate() {
                assert!(!f.name.is_empty() && !f.unit.is_empty(), "{}", s.name);
                assert!(
                    figures[..i].iter().all(|g| g.name != f.name),
                    "{}: figure {} twice",
                    s.name,
                    f.name
                );
            }
        }
    }

    #[test]
    fn size_fixes_name_options_the_workload_takes() {
        for (s, sub) in subcommands() {
            let flags = s
                .size_flags
                .split([' ', ','])
                .filter_map(|w| w.strip_prefix("--"));
            for flag in flags {
                assert!(takes(&sub, flag), "{} has no --{flag}", s.name);
            }
        }
    }

    #[test]
    fn a_listing_names_an_option_of_its_workload_and_lists_something() {
        let mut listed = 0;
        for s in super::super::REGISTRY {
            let Some(l) = s.listing else { continue };
            let cmd = (s.args)(clap::Command::new(s.name));
            assert!(
                cmd.get_arguments().any(|a| a.get_id() == l.option),
                "{}: no option {}",
                s.name,
                l.option
            );
            assert!(!(l.lines)().is_empty(), "{}", s.name);
            listed += 1;
        }
        assert!(listed >= 2, "{listed}");
    }

    #[test]
    fn measured_knobs_are_real_knobs() {
        for s in REGISTRY {
            for k in s.measures_knobs {
                assert!(crate::knobs::registry::find(k).is_some(), "{}: {k}", s.name);
            }
        }
    }

    /// A workload that measures nothing, made of `cfg`.
    struct Idle;
    impl crate::workload::Measure for Idle {
        fn cases(&self) -> Vec<crate::model::Case> {
            Vec::new()
        }
        fn memory_need(&self) -> u64 {
            0
        }
        fn sample(&self, _: &crate::model::Case) -> crate::error::Result<crate::model::SampleData> {
            Err(crate::error::Error::Failed("idle".into()))
        }
    }

    #[test]
    fn the_configuration_is_stored_as_made_and_one_that_does_not_serialize_is_refused() {
        use std::collections::BTreeMap;
        let machine = crate::machine::Snapshot::default();
        let env = super::Env {
            spec: &crate::workload::pft_args::SPEC,
            machine: &machine,
            knobs: &crate::knobs::Plan::default(),
        };
        let cfg = BTreeMap::from([("size", 4096)]);
        let w = env.made(cfg, |_| Ok(Idle)).expect("made");
        assert_eq!(w.config(), serde_json::json!({"size": 4096}));
        assert_eq!(w.name(), "pft");
        // serde_json cannot make a JSON key of a list.
        let bad = BTreeMap::from([(vec![1], 2)]);
        let e = env.made(bad, |_| Ok(Idle)).err().expect("refused");
        assert!(
            matches!(e, crate::error::Error::Failed(ref m) if m.starts_with("pft: its configuration")),
            "{e:?}"
        );
    }

    #[test]
    fn every_workload_reports_an_empty_run() {
        for s in REGISTRY {
            let run = crate::model::Run {
                meta: crate::model::RunMeta::bare(7, s.name, serde_json::json!({})),
                cases: Vec::new(),
            };
            let text = crate::report::text(&run);
            assert!(text.starts_with(&format!("run 7: {}", s.name)), "{text}");
        }
    }
}
