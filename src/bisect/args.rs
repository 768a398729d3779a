//! The options of `vmscale bisect` and `vmscale bisect judge` (the room
//! owns them, as a workload owns its own; `cli` registers the command).

use clap::{Args, Subcommand};
use std::path::PathBuf;

use crate::guest::options::BootOptions;
use crate::options::Json;

pub const EXAMPLES: &str = "\
Examples:
  vmscale bisect --kernel 6.1.0-47.deb --kernel 6.1.0-50.deb --kernel 6.1.0-56.deb -- run pft
  vmscale bisect --tree ~/linux --good v6.1 --bad mm-next -- run pft --tasks 1 --size 16M
  vmscale bisect --tree linux --good HEAD~8 --bad HEAD --decide 20% --json -- run pft

The ends are measured first; each step is booted in turn with the good end
until its ratio is told like good or like bad (else skipped); the first bad
is measured again against its parent. Runs are stored labelled
bisect-KEY/REVISION; the same command run again continues from them.
See docs/bisect.md.";

const JUDGE_EXAMPLES: &str = "\
Examples:
  vmscale bisect judge --good g.bzImage --bad b.bzImage --kernel bzImage -- run pft
  git bisect run sh -c 'make bzImage || exit 125; vmscale bisect judge --good g.bzImage \\
      --bad b.bzImage --kernel arch/x86/boot/bzImage -- run pft --tasks 1'

Exit 0 like good, 1 like bad, 125 skip; 128 on any error (stops git bisect
run). The ends' rounds are stored under their key, so later steps reuse
them. See docs/bisect.md.";

/// `vmscale bisect`: a list of kernels or a range of a tree.
#[derive(Args, Debug)]
#[command(
    args_conflicts_with_subcommands = true,
    subcommand_negates_reqs = true,
    mut_arg("json", |a| a.help(
        "JSON: first_bad and every step (revision or kernel, verdict, rounds, ratio, ci)"
    ))
)]
pub struct BisectArgs {
    #[command(subcommand)]
    pub judge: Option<JudgeCommand>,
    /// A kernel (bzImage, vmlinuz or .deb), in order: the first good, the last
    /// bad; repeat for each
    #[arg(long = "kernel", value_name = "FILE", conflicts_with = "tree")]
    pub kernels: Vec<PathBuf>,
    /// A kernel source tree under git: bisect the commits from --good to --bad
    #[arg(long, value_name = "DIR", requires_all = ["good", "bad"])]
    pub tree: Option<PathBuf>,
    /// The good commit of --tree (older)
    #[arg(long, value_name = "REV", requires = "tree")]
    pub good: Option<String>,
    /// The bad commit of --tree (newer, a descendant of --good)
    #[arg(long, value_name = "REV", requires = "tree")]
    pub bad: Option<String>,
    #[command(flatten)]
    pub tree_config: crate::kbuild::config::Options,
    #[command(flatten)]
    pub json: Json,
    #[command(flatten)]
    pub run: BisectRun,
}

#[derive(Subcommand, Debug)]
pub enum JudgeCommand {
    /// One step for `git bisect run`: exit 0 like good, 1 like bad, 125 skip
    /// (128 on an error, which stops `git bisect run`)
    #[command(after_help = JUDGE_EXAMPLES)]
    Judge(JudgeArgs),
}

/// `vmscale bisect judge`.
#[derive(Args, Debug)]
pub struct JudgeArgs {
    /// The good kernel
    #[arg(long, value_name = "FILE")]
    pub good: PathBuf,
    /// The bad kernel
    #[arg(long, value_name = "FILE")]
    pub bad: PathBuf,
    /// The kernel to judge (the one your build script made of this commit)
    #[arg(long = "kernel", value_name = "FILE")]
    pub kernel: PathBuf,
    #[command(flatten)]
    pub run: BisectRun,
}

/// How each kernel boots and what decides, and the plan.
#[derive(Args, Debug)]
pub struct BisectRun {
    #[command(flatten)]
    pub boot: BootOptions,
    /// The plan: a vmscale command line, several separated by `---`; the
    /// first stores the deciding run
    #[arg(last = true, value_name = "PLAN")]
    pub plan: Vec<String>,
}
