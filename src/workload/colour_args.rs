//! `vmscale run colour`'s options and how they become a validated
//! `Colour`: the colours from `--colours` or the LLC's geometry, the
//! memory per task from `--size-per-task` or `--size`.

use super::Workload;
use super::colour::{self, Colour};
use super::options::{online, page_size};
use super::placement::Placement;
use super::spec::{Env, Options, Spec, higher, lower};
use crate::error::{Error, Result};
use crate::exec::Mode;
use crate::parse;

// `vmscale run colour`'s options; the harness options are added beside them.
#[derive(clap::Args, Debug, Clone)]
#[command(mut_arg("tasks", |a| a.default_value("2")))]
pub struct Args {
    #[command(flatten)]
    pub place: Placement,
    /// Memory each task allocates and touches (e.g. 10M, 1G) [default: 64M]
    #[arg(long, value_name = "SIZE", conflicts_with = "size")]
    pub size_per_task: Option<String>,
    /// Total memory instead of --size-per-task: each task gets SIZE / the largest task count
    #[arg(long, value_name = "SIZE")]
    pub size: Option<String>,
    /// Tasks take turns touching PAGES pages each (default 1), like an MPI start-up
    #[arg(long, value_name = "PAGES", num_args = 0..=1, default_missing_value = "1")]
    pub interleave: Option<u64>,
    /// Colours to analyse instead of the LLC's size / (ways x page size)
    #[arg(long, value_name = "N")]
    pub colours: Option<u64>,
    #[command(flatten)]
    pub thp: super::pft_args::MappingThp,
}

/// `vmscale run colour --help`'s examples.
pub const EXAMPLES: &str = "Examples:\n  vmscale run colour --tasks 2 --size-per-task 64M\n  \
vmscale run colour --tasks 2,4 --interleave 4 --mode process\n  \
vmscale run colour --tasks 2 --colours 16 --reps 3\n\n\
Needs CAP_SYS_ADMIN (root) to read physical frame numbers from /proc/self/pagemap.";

/// colour in the registry (`workload::REGISTRY`).
pub const SPEC: Spec = Spec {
    name: "colour",
    about: "Page colours: tasks allocate in parallel, PFNs give per-task colour skew",
    examples: EXAMPLES,
    mode: Some(Mode::Thread),
    figures: &[
        higher("eff_fraction", "fraction"),
        higher("eff_colours", "colours"),
        lower("cov_max", "%"),
        higher("l2_eff_fraction", "fraction"),
        higher("switch_fraction", "fraction"),
        lower("pcp_after_kib", "KiB"),
        lower("wall", "s"),
        lower("analysis", "s"),
    ],
    report: super::Report::Colour,
    plots: super::Plots::Colour,
    size_flags: "a smaller --size-per-task or fewer --tasks",
    quick: colour::quick,
    quick_may_skip: true,
    ..Spec::of::<Args>()
};

impl Options for Args {
    fn build(&self, env: &Env) -> Result<Box<dyn Workload>> {
        let (a, m) = (self, env.machine);
        let (colours, colours_from) = match a.colours {
            Some(n) => (n, "--colours".to_string()),
            None => {
                let n = m.llc_colours().ok_or_else(|| {
                    Error::Input(
                        "the LLC geometry (size and ways) is not in sysfs on this machine, so its \
                         page colours are unknown: give --colours N"
                            .into(),
                    )
                })?;
                let from = m
                    .llc()
                    .map(|c| {
                        format!(
                            "L{} {} {}-way",
                            c.level,
                            c.size_bytes.map(crate::units::size).unwrap_or_default(),
                            c.ways.unwrap_or(0)
                        )
                    })
                    .unwrap_or_default();
                (n, from)
            }
        };
        let cfg = colour::Config {
            place: a.place.resolve(m)?,
            size_per_task: size_per_task(a, online(m))?,
            interleave: a.interleave,
            colours,
            colours_from,
            l2_colours: m.l2_colours().filter(|&c| c >= 2),
            thp: a.thp.thp,
            page_size: page_size(m),
        };
        env.made(cfg, |cfg| Colour::new(cfg, m.clone()))
    }
}

/// Memory per task: `--size-per-task`, or `--size` split evenly among the
/// largest task count (so every case's tasks touch the same amount each),
/// 64 MiB by default.
fn size_per_task(a: &Args, online: usize) -> Result<u64> {
    match (&a.size, &a.size_per_task) {
        (Some(total), _) => {
            let total = parse::size_arg("--size", total)?;
            let tasks = parse::tasks(&a.place.tasks, online)?;
            let most = tasks.iter().copied().max().unwrap_or(1).max(1) as u64;
            Ok(total / most)
        }
        (None, Some(per)) => parse::size_arg("--size-per-task", per),
        (None, None) => parse::size_arg("--size-per-task", "64M"),
    }
}
