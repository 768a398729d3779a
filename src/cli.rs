//! Command-line definitions only (clap derive); no behaviour here. The
//! `run` subcommands are generated from the workload registry: each
//! `workload::Spec` gives its name, description, examples and options, and
//! every one gets the options all runs share (`Harness`).

use clap::{ArgMatches, Args, FromArgMatches, Parser, Subcommand};
use std::path::PathBuf;

use crate::deferred::Deferred;
use crate::guest::options::BootOptions;
use crate::history::select::By;
use crate::machine::cpulist::CpuList;
use crate::model::Better;
use crate::report::export::Format;
use crate::stats::comparison::RatioOf;
use crate::store::manage::ListFilter;
use crate::workload::{REGISTRY, Spec};

/// The `run` subcommand that runs the short suite (defined beside the
/// registry, which the guest reads too).
pub use crate::workload::QUICK;

const EXAMPLES: &str = "\
Examples:
  vmscale run quick                         the short suite (about a minute)
  vmscale run pft --tasks auto --size 1G    page-fault scaling over 1, 2, 4.. tasks
  vmscale run pft --tasks 1-4 --mode process --size-per-task 256M --populate
  vmscale show last                         reprint the newest run
  vmscale show last --plot                  its curve in the terminal
  vmscale list --workload pft --since 2026-01-01
  vmscale list --json                       every stored run, as JSON
  vmscale completions bash                  a completion script (also zsh, fish)
  vmscale sysinfo                           what vmscale sees of this machine
  vmscale run pft --tasks 1,2 --size 64M --knob swappiness=10,60
  vmscale restore                           undo knobs left changed by a killed run";

#[derive(Parser, Debug)]
#[command(
    name = "vmscale",
    version = crate::VERSION,
    about = "A Linux memory-management scalability laboratory",
    long_about = "vmscale measures how the kernel's virtual-memory paths (page faults, fork/exit, \
NUMA balancing, page allocation, locks) behave as cores, tasks and memory grow, keeps every \
sample in an embedded SQLite store, and prints the tables kernel developers paste into mail.",
    after_help = EXAMPLES,
    max_term_width = 100
)]
pub struct Cli {
    /// The results store: a SQLite file or a postgres://URL [default:
    /// $VMSCALE_DB, else $XDG_DATA_HOME/vmscale/vmscale.db, else
    /// ~/.local/share/vmscale/vmscale.db]
    // VMSCALE_DB is read by store::default_path, not by clap, so that an
    // empty VMSCALE_DB means "unset" instead of an error about --db.
    #[arg(long, global = true, value_name = "PATH")]
    pub db: Option<PathBuf>,

    /// Write the output to FILE instead of stdout (warnings and progress stay on stderr)
    #[arg(short = 'o', long = "output", global = true, value_name = "FILE")]
    pub output: Option<PathBuf>,

    /// Quiet: no progress and no warnings; `run` prints only each run's first line
    #[arg(short = 'q', long = "quiet", global = true)]
    pub quiet: bool,

    #[command(subcommand)]
    pub command: Command,
}

/// Each command's options are built only when it is the one invoked
/// ([`Deferred`]).
#[derive(Subcommand, Debug)]
#[allow(clippy::large_enum_variant)] // parsed once; boxing would buy nothing
pub enum Command {
    /// Run a workload or a suite and store every sample
    #[command(after_help = "Examples:\n  vmscale run quick\n  \
vmscale run pft --tasks auto --size 1G\n  \
vmscale run fork --tasks 1,2 --reps 3 --label base\n  \
vmscale run pft --tasks 1-2 --size 64M --thp always --knob thp=never,always\n\n\
Every workload also takes --reps, --warmup, --precision, --max-reps, --max-time,\n\
--label, --json and --knob: see `vmscale run pft --help`.")]
    Run(Deferred<RunArgs>),
    /// Reprint a stored run (an id, a label, `last` or `last~N`)
    #[command(after_help = "Examples:\n  vmscale show\n  vmscale show last~1\n  \
vmscale show 7 --markdown\n  vmscale show base --csv > samples.csv\n  vmscale show last --json\n  \
vmscale show base --plot --figure flt/cpu/s\n  vmscale show -o base.txt base")]
    Show(Deferred<ShowArgs>),
    /// List stored runs
    #[command(after_help = "Examples:\n  vmscale list\n  vmscale list --json\n  \
vmscale list --markdown                    also --csv\n  \
vmscale list --label before                a suite: before/pft, before/fork, ...\n  \
vmscale list --kernel 6.18 --until 2026-06-01\n  \
vmscale --db /tmp/other.db list")]
    List(Deferred<ListArgs>),
    /// Compare runs (the first is the baseline), the knob variants of one run, or sample files
    #[command(after_help = COMPARE_EXAMPLES)]
    Compare(Deferred<CompareArgs>),
    /// Describe this machine: CPUs, caches, nodes, pages, kernel, sysctls
    #[command(after_help = "Examples:\n  vmscale sysinfo\n  vmscale sysinfo --json")]
    Sysinfo(Deferred<SysinfoArgs>),
    /// Put back kernel knobs a killed `run --knob` left changed (from its journal)
    #[command(after_help = "Examples:\n  vmscale restore\n  \
VMSCALE_STATE_DIR=/root/vmscale-state vmscale restore   a journal kept elsewhere")]
    Restore(Deferred<RestoreArgs>),
    /// Write an HTML report with plots for one or more runs
    #[command(after_help = "Examples:\n  vmscale report last --html report.html\n  \
vmscale report 3 4 5 --html compare.html --figure fault/wsec\n  \
vmscale report --html history.html --history --workload pft --by kernel")]
    Report(Deferred<ReportArgs>),
    /// Fit the Universal Scalability Law to a run (or to a file of `N X` pairs)
    #[command(after_help = "Examples:\n  vmscale fit last\n  \
vmscale fit 3 --figure flt/cpu/s --extrapolate 16,64,512\n  \
vmscale fit --file pairs.txt --json\n  \
vmscale fit last --markdown                also --csv")]
    Fit(Deferred<FitArgs>),
    /// Import pft tables or will-it-scale CSV into the store as runs
    #[command(after_help = "Examples:\n  vmscale import lameter-2005.txt\n  \
vmscale import page_fault1.csv --label wis-pf1")]
    Import(Deferred<ImportArgs>),
    /// Per-CPU page lists from /proc/zoneinfo: count, high, batch per CPU and zone
    #[command(
        after_help = "Examples:\n  vmscale pcp\n  vmscale pcp --per-cpu\n  vmscale pcp --json"
    )]
    Pcp(Deferred<PcpArgs>),
    /// List what on this machine can bias or scatter a measurement, with evidence and fixes
    #[command(
        after_help = "Examples:\n  vmscale doctor\n  vmscale doctor --cpus 0,1 --json\n  \
vmscale run pft --tune            applies the reversible fixes, restored after\n\n\
See docs/noise.md."
    )]
    Doctor(Deferred<DoctorArgs>),
    /// Delete stored runs and all their samples
    #[command(
        after_help = "Examples:\n  vmscale delete 3\n  vmscale delete 3 4 base\n  \
vmscale delete last"
    )]
    Delete(Deferred<DeleteArgs>),
    /// Give a stored run a new label (an empty label removes it)
    #[command(after_help = "Examples:\n  vmscale rename last base\n  vmscale rename 7 thp-on")]
    Rename(Deferred<RenameArgs>),
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell)
    #[command(after_help = "Examples:\n  \
vmscale completions bash > /etc/bash_completion.d/vmscale\n  \
vmscale completions zsh > ~/.zfunc/_vmscale")]
    Completions(Deferred<CompletionsArgs>),
    /// Print vmscale's man page (roff)
    #[command(
        after_help = "Examples:\n  vmscale man > vmscale.1 && man ./vmscale.1\n  \
vmscale man -o /usr/local/share/man/man1/vmscale.1"
    )]
    Man(Deferred<ManArgs>),
    /// Copy the runs of other stores (e.g. one SQLite file per node) into this store
    #[command(after_help = "Examples:\n  vmscale merge node1.db node2.db\n  \
vmscale --db postgres://vmscale@db/lab merge /shared/run-*.db\n\n\
A run is copied once, by its identity: merging the same files again adds nothing.")]
    Merge(Deferred<MergeArgs>),
    /// Boot each kernel in a QEMU guest, run the same plan in each, and compare them
    #[command(after_help = GUEST_EXAMPLES)]
    Guest(Deferred<GuestArgs>),
    /// Which kernel of a list, or which commit of a tree, moved the plan's figure
    #[command(after_help = crate::bisect::args::EXAMPLES)]
    Bisect(Deferred<crate::bisect::args::BisectArgs>),
    /// One figure across like runs (by time or kernel) and the steps where it moved
    #[command(after_help = HISTORY_EXAMPLES)]
    History(Deferred<HistoryArgs>),
    /// Read a kernel test robot report and plan its test on this machine
    #[command(after_help = REPRODUCE_EXAMPLES)]
    Reproduce(Deferred<ReproduceArgs>),
    /// What vmscale's cache holds (kernels, unpacked packages, builds), and pruning it
    #[command(after_help = CACHE_EXAMPLES)]
    Cache(Deferred<CacheArgs>),
}

const CACHE_EXAMPLES: &str = "\
Examples:
  vmscale cache                              each entry: kind, size, last use
  vmscale cache --json
  vmscale cache prune                        down to the cap (16 GiB)
  vmscale cache prune --max-size 100M        least recently used first
  vmscale cache prune --older-than 30d

The cache is $VMSCALE_CACHE_DIR, else $XDG_CACHE_HOME/vmscale, else
~/.cache/vmscale. A run that adds an entry prunes the cache to its cap
(VMSCALE_CACHE_MAX: a size, or off). What a running vmscale uses is never
removed. See docs/cache.md.";

/// `vmscale cache`'s options.
#[derive(Args, Debug)]
#[command(mut_arg("json", |a| a.help("JSON: every entry, or what the prune removed and kept")))]
pub struct CacheArgs {
    #[command(subcommand)]
    pub prune: Option<CacheCommand>,
    #[command(flatten)]
    pub json: Json,
}

/// `vmscale cache prune`.
#[derive(Subcommand, Debug)]
pub enum CacheCommand {
    /// Remove entries least recently used first (and leftover temporaries)
    #[command(after_help = "Examples:\n  vmscale cache prune\n  \
vmscale cache prune --max-size 100M\n  vmscale cache prune --older-than 30d --json\n\n\
Entries a running vmscale uses are kept (and said); so is all of kbuild/ while\n\
a kernel build holds its lock. See docs/cache.md.")]
    Prune(CachePruneArgs),
}

/// `vmscale cache prune`'s limits; with neither, the cap.
#[derive(Args, Debug)]
pub struct CachePruneArgs {
    /// Leave at most this much (e.g. 100M, 2G) [default: the cap, VMSCALE_CACHE_MAX or 16G]
    #[arg(long, value_name = "SIZE", value_parser = crate::parse::size)]
    pub max_size: Option<u64>,
    /// Remove every entry not used for this long (e.g. 12h, 30d)
    #[arg(long, value_name = "AGE", value_parser = crate::parse::duration)]
    pub older_than: Option<std::time::Duration>,
    #[command(flatten)]
    pub json: Json,
}

const REPRODUCE_EXAMPLES: &str = "\
Examples:
  vmscale reproduce report.mbox --dry-run        the plan: command, scaling, rows
  vmscale reproduce report.eml --dry-run --json  the report and the plan as JSON
  vmscale reproduce job.yaml --dry-run --runtime 5s
  vmscale reproduce report.eml --tree ~/linux    build base and head, decide
  vmscale reproduce report.eml --kernel base.bzImage --kernel head.bzImage
  vmscale reproduce report.eml --tree ~/linux --bisect   and the first bad one
  vmscale reproduce report.eml --tree ~/linux --bisect --dry-run   its steps

REPORT is the robot's mail (saved from the list, one message of an mbox, or a
reply quoting it) or the job.yaml its materials link to. vm-scalability runs as
`run vms --case`, will-it-scale as `run wis --test --mode`, pft as `run pft`;
nr_task becomes the same share of this machine's CPUs, a size the same share of
its memory, and each sample runs 2 s instead of the robot's 300 s.

Verdicts on the headline, from the paired interval of head / base against the
robot's change (exit code): reproduced (0): same direction, the interval excludes
no change and holds the robot's; smaller (3) / larger (4): same direction, the
interval wholly short of (and not inside the band) / beyond it; not reproduced (5): the interval holds no
change and excludes the robot's, or lies wholly inside the --decide band, or on
the other side not wholly beyond it; opposite (6): the other side, beyond the
band; undecided (7), with the rounds a decision would need. The robot's figures and the runs of both kernels are stored,
labelled robot-BASE/robot-HEAD (found again when the same report is reproduced;
another report on the same commit takes robot-BASE-2...) and by short commit id. --bisect, after a verdict
that sees the change (0, 3, 4): base..head bisected as `vmscale bisect` does,
from these rounds, naming the first bad commit; refused (2) after any other
verdict; --dry-run plans it: the range's commits, about log2 of them steps and
their time. See docs/reproduce.md.";

/// `vmscale reproduce`'s options.
#[derive(Args, Debug)]
#[command(mut_arg("json", |a| a.help("JSON: the report as read, this machine and the plan")))]
pub struct ReproduceArgs {
    /// The robot's report: a mail, an mbox message, a reply quoting it, or
    /// lkp's job.yaml; `-` for stdin
    #[arg(value_name = "REPORT")]
    pub report: PathBuf,
    /// Print the plan and stop: nothing is built, booted or stored
    #[arg(long)]
    pub dry_run: bool,
    /// How long each sample runs (e.g. 5s) [default: 2s, the robot's runtime shortened]
    #[arg(long, value_name = "DURATION", value_parser = crate::parse::duration)]
    pub runtime: Option<std::time::Duration>,
    /// Each kernel's run samples until its interval is precise or this is spent
    /// (the run's --max-time) [default: 40s]
    #[arg(long, value_name = "DURATION", value_parser = crate::parse::duration)]
    pub sample_budget: Option<std::time::Duration>,
    /// The base kernel, then the head kernel (bzImage, vmlinuz or .deb)
    #[arg(
        long = "kernel",
        value_name = "FILE",
        conflicts_with = "tree",
        num_args = 1
    )]
    pub kernels: Vec<PathBuf>,
    /// A kernel tree under git holding the report's base and head commits: both
    /// are built from it (cached) and booted
    #[arg(long, value_name = "DIR")]
    pub tree: Option<PathBuf>,
    #[command(flatten)]
    pub tree_config: crate::kbuild::config::Options,
    /// When the verdict sees the robot's change (reproduced, smaller or larger)
    /// and base..head holds several commits: bisect them with the same plan,
    /// guest and rule (`vmscale bisect`) and name the first bad (needs --tree)
    #[arg(long)]
    pub bisect: bool,
    #[command(flatten)]
    pub boot: crate::guest::options::BootOptions,
    /// Start no round after this much time (e.g. 30m): the rounds run until the
    /// interval decides, --max-rounds or this
    #[arg(long, value_name = "DURATION", value_parser = crate::parse::duration)]
    pub max_time: Option<std::time::Duration>,
    /// Keep each boot's console, QEMU's stderr and results under DIR
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    #[command(flatten)]
    pub json: Json,
}

/// `--json` (declared with the options several rooms share).
pub use crate::options::Json;

/// `--root` (hidden): the machine is read under this root instead of /,
/// for fixtures (`sysinfo`, `pcp`, `doctor`).
#[derive(Args, Debug, Clone)]
pub struct MachineRoot {
    /// Read sysfs/procfs under this root instead of / (for fixtures)
    #[arg(long, hide = true, env = "VMSCALE_MACHINE_ROOT", default_value = "/")]
    pub root: PathBuf,
}

/// The output formats besides text, one at a time: `--json`,
/// `--markdown`, `--csv`. A command words their help for what it prints
/// (`mut_arg`).
#[derive(Args, Debug, Clone, Copy, Default)]
pub struct OutputFormat {
    #[command(flatten)]
    pub json: Json,
    /// Markdown tables
    #[arg(long, conflicts_with_all = ["json", "csv"])]
    pub markdown: bool,
    /// CSV: one record per row
    #[arg(long, conflicts_with = "json")]
    pub csv: bool,
}

impl OutputFormat {
    pub fn format(&self) -> Format {
        Format::from_flags(self.markdown, self.csv, self.json.json)
    }
}

const HISTORY_EXAMPLES: &str = "\
Examples:
  vmscale history --workload pft            the headline of every pft run, by time
  vmscale history --workload pft --case fault/2 --figure flt/cpu/s --by kernel
  vmscale history --label nightly --host node7 --since 2026-11-01 --json
  vmscale history --workload cmd --alpha 0.05 --min-segment 5   also --csv, --markdown

Like runs share workload and configuration (options and knobs); kernels and hosts
may differ. Steps are found by E-divisive means with a permutation test and
confirmed by the runs either side. See docs/history.md.";

#[derive(Args, Debug)]
#[command(
    mut_arg("json", |a| a.help("JSON: `series` (one entry per run) and `change_points`")),
    mut_arg("csv", |a| a.help("CSV: one record per run"))
)]
pub struct HistoryArgs {
    #[command(flatten)]
    pub select: HistorySelect,
    /// The figure [default: the workload's headline]
    #[arg(long)]
    pub figure: Option<String>,
    #[command(flatten)]
    pub output: OutputFormat,
}

/// Which runs make a history and how its steps are found (`history`, and
/// `report --history`).
#[derive(Args, Debug, Clone, Default)]
#[command(mut_arg("workload", |a| a.help(
    "Only runs of this workload (needed when several match)"
)))]
pub struct HistorySelect {
    #[command(flatten)]
    pub filter: ListFilter,
    /// The case, as `variant/tasks` (e.g. fault/2) [default: the runs' first]
    #[arg(long)]
    pub case: Option<String>,
    /// Only runs measured on this host
    #[arg(long)]
    pub host: Option<String>,
    /// Order the runs by start time or by kernel release (version order) [default: time]
    #[arg(long, value_enum)]
    pub by: Option<By>,
    /// Significance level of each step (permutation test and confirmation) [default: 0.01]
    #[arg(long)]
    pub alpha: Option<f64>,
    /// The fewest runs between two steps [default: 3]
    #[arg(long, value_name = "RUNS")]
    pub min_segment: Option<usize>,
    /// Permutations per candidate step [default: 199]
    #[arg(long, value_name = "N")]
    pub permutations: Option<usize>,
    /// Seed of the permutations [default: 1]
    #[arg(long)]
    pub seed: Option<u64>,
    /// Report only steps that change the figure by P % or more [default: every
    /// confirmed step]
    #[arg(long, value_name = "P%", value_parser = crate::parse::percent)]
    pub min_step: Option<f64>,
}

const GUEST_EXAMPLES: &str = "\
Examples:
  vmscale guest --kernel A.deb --kernel B.deb -- run pft --tasks 1,2 --size 64M
  vmscale guest --kernel /boot/vmlinuz-6.1.0-48-amd64 --kernel bzImage --rounds 3 -- run fork
  vmscale guest --kernel K.deb --cpus 16 --sockets 2 --nodes 4 --threads 2 -- sysinfo --json
  vmscale guest --kernel K.deb --label k -- run pft --tasks 1 --- run fork --tasks 1

The plan after `--` is any vmscale command line; `---` separates several. Kernels
boot in turn (A B A B ..) for --rounds rounds; each kernel's runs are pooled over
its rounds and stored under its --label (default: its release). Debian kernel
packages: bench/guest-kernels.sh. See docs/guest.md.";

/// `--rounds`: a number of rounds, or until the answer is decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rounds {
    Fixed(u32),
    Auto,
}

impl std::str::FromStr for Rounds {
    type Err = String;
    fn from_str(s: &str) -> Result<Rounds, String> {
        if s == "auto" {
            return Ok(Rounds::Auto);
        }
        s.parse()
            .map(Rounds::Fixed)
            .map_err(|_| format!("'{s}' is neither a number of rounds nor `auto`"))
    }
}

#[derive(Args, Debug)]
#[command(mut_arg("json", |a| {
    a.help("Print the verdict as JSON (verdict, ratio, ci, rounds) instead of the tables")
}))]
pub struct GuestArgs {
    /// A kernel: a bzImage/vmlinuz file or a Debian kernel package (.deb); repeat
    /// for each kernel, the first is the baseline
    #[arg(long = "kernel", value_name = "FILE", required_unless_present = "tree")]
    pub kernels: Vec<PathBuf>,
    /// A kernel source tree under git: each --rev is built from it (out of tree,
    /// cached) and booted after the --kernel ones
    #[arg(long, value_name = "DIR", requires = "revs")]
    pub tree: Option<PathBuf>,
    /// A revision of --tree to build and boot (a commit, branch, HEAD~1, or
    /// WORKTREE for the working tree as it is); repeat for each
    #[arg(long = "rev", value_name = "REV", requires = "tree")]
    pub revs: Vec<String>,
    #[command(flatten)]
    pub tree_config: crate::kbuild::config::Options,
    /// The label of each kernel's runs, in --kernel then --rev order [default: its
    /// release; a revision's short commit id]
    #[arg(long = "label", value_name = "LABEL")]
    pub labels: Vec<String>,
    /// Nodes with memory and no CPUs, numbered after the others
    #[arg(long, default_value_t = 0)]
    pub memory_only_nodes: usize,
    /// Node distances SRC-DST=VALUE[,...] [default: 10 local, 20 within a socket, 30 across]
    #[arg(long, value_name = "S-D=V,...")]
    pub distance: Vec<String>,
    /// Sockets (packages)
    #[arg(long, default_value_t = 1)]
    pub sockets: usize,
    /// Dies per socket
    #[arg(long, default_value_t = 1)]
    pub dies: usize,
    /// SMT threads per core
    #[arg(long, default_value_t = 1)]
    pub threads: usize,
    #[command(flatten)]
    pub boot: BootOptions,
    /// Boot the kernels in turn this many times (A B A B ..), or `auto`: until the
    /// paired ratio of the deciding figure is decided (--decide); runs are pooled per
    /// kernel
    #[arg(long, default_value = "1", value_name = "N|auto")]
    pub rounds: Rounds,
    /// With --rounds auto: start no round after this long (e.g. 30m)
    #[arg(long, value_name = "DURATION", value_parser = crate::parse::duration)]
    pub max_time: Option<std::time::Duration>,
    /// Added to kernel N's command line only (N=ARGS, N counts --kernel from 1)
    #[arg(long = "append-to", value_name = "N=ARGS", allow_hyphen_values = true)]
    pub append_to: Vec<String>,
    #[command(flatten)]
    pub json: Json,
    /// Keep each guest's files here (console log, step outputs, guest store)
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Leave the store alone: the pooled runs stay in --out's pooled.db
    #[arg(long)]
    pub no_merge: bool,
    /// The plan: a vmscale command line, several separated by `---`
    #[arg(last = true, value_name = "PLAN")]
    pub plan: Vec<String>,
}

#[derive(Args, Debug)]
#[command(mut_arg("json", |a| a.help("JSON instead of text: what happened to each run")))]
pub struct MergeArgs {
    /// SQLite stores to copy runs from
    #[arg(value_name = "FILE")]
    pub files: Vec<PathBuf>,
    #[command(flatten)]
    pub json: Json,
}

#[derive(Args, Debug)]
pub struct DeleteArgs {
    /// Runs: ids, labels, `last`, `last~N`
    #[arg(required = true, num_args = 1..)]
    pub runs: Vec<String>,
}

#[derive(Args, Debug)]
pub struct RenameArgs {
    /// The run: id, label, `last` or `last~N`
    pub run: String,
    /// Its new label
    pub label: String,
}

#[derive(Args, Debug)]
pub struct CompletionsArgs {
    /// The shell: bash, zsh, fish, elvish or powershell
    pub shell: clap_complete::Shell,
}

#[derive(Args, Debug)]
pub struct ManArgs {}

/// `vmscale run`: the quick suite or one registered workload, whose
/// subcommands are generated from `workload::REGISTRY`: each has the
/// workload's own options (`Spec::args`), then the harness options.
#[derive(Debug)]
pub struct RunArgs {
    /// The subcommand: [`QUICK`] or a registered workload's name.
    pub name: String,
    /// Its parsed options, for the workload's `Spec::build`.
    pub matches: ArgMatches,
    /// The options every run shares.
    pub harness: Harness,
}

/// The short suite's subcommand.
fn quick_command() -> clap::Command {
    Harness::augment_args(clap::Command::new(QUICK))
        .about(
            "The short suite: sysinfo, pft (thread, process), numa01..numa02-smt, fork, churn, \
             cmd, colour, c2c, atomic, lockfan, latency, wis (page_fault1, tlb_flush2), mmap-lock",
        )
        .after_help(
            "Examples:\n  vmscale run quick\n  vmscale run quick --reps 3 --label before\n  \
vmscale run quick --json > quick.json",
        )
}

/// A registered workload's subcommand: its options, then the harness's,
/// added only when it is the one invoked (as [`Command`]'s).
fn workload_command(spec: &Spec) -> clap::Command {
    let cmd = clap::Command::new(spec.name)
        .about(spec.about)
        .after_help(spec.examples);
    crate::deferred::defer(cmd, workload_options)
}

/// The options of the workload `cmd` is named after.
fn workload_options(cmd: clap::Command) -> clap::Command {
    let Some(spec) = crate::workload::find(cmd.get_name()) else {
        return cmd;
    };
    let mut cmd = (spec.args)(cmd);
    if let Some(mode) = spec.mode {
        cmd = cmd.mut_arg("mode", |a| a.default_value(mode.as_str()));
    }
    // Again: the options' structs may carry an about of their own.
    Harness::augment_args(cmd)
        .about(spec.about)
        .after_help(spec.examples)
}

impl Args for RunArgs {
    fn augment_args(cmd: clap::Command) -> clap::Command {
        let cmd = cmd
            .subcommand_required(true)
            .arg_required_else_help(true)
            .subcommand(quick_command());
        REGISTRY
            .iter()
            .fold(cmd, |cmd, spec| cmd.subcommand(workload_command(spec)))
    }

    fn augment_args_for_update(cmd: clap::Command) -> clap::Command {
        Self::augment_args(cmd)
    }
}

impl FromArgMatches for RunArgs {
    fn from_arg_matches(m: &ArgMatches) -> Result<Self, clap::Error> {
        let Some((name, sub)) = m.subcommand() else {
            return Err(clap::Error::new(clap::error::ErrorKind::MissingSubcommand));
        };
        Ok(RunArgs {
            name: name.to_string(),
            harness: Harness::from_arg_matches(sub)?,
            matches: sub.clone(),
        })
    }

    fn update_from_arg_matches(&mut self, m: &ArgMatches) -> Result<(), clap::Error> {
        *self = Self::from_arg_matches(m)?;
        Ok(())
    }
}

/// Options every run shares.
#[derive(Args, Debug, Clone)]
#[command(
    mut_arg("json", |a| a.help("Print the stored run as JSON instead of text")),
    mut_arg("markdown", |a| a.help("Print the stored run as Markdown (as `show --markdown`)")),
    mut_arg("csv", |a| a.help("Print every sample as CSV (as `show --csv`)"))
)]
pub struct Harness {
    /// A fixed count of measured samples per case, instead of adaptive stopping
    /// (so not with --precision or --max-reps, which it would ignore)
    #[arg(long, value_name = "N", conflicts_with_all = ["precision", "max_reps"])]
    pub reps: Option<usize>,
    /// Warm-up samples per case (stored, not counted)
    #[arg(long, default_value_t = crate::runner::DEFAULT_WARMUP, value_name = "N")]
    pub warmup: usize,
    /// A label to find the run by later
    #[arg(long)]
    pub label: Option<String>,
    #[command(flatten)]
    pub output: OutputFormat,
    /// Adaptive: sample until the 95 % CI of the headline median is within P % of it
    #[arg(long, default_value = "1%", value_name = "P%", value_parser = crate::parse::percent)]
    pub precision: f64,
    /// Adaptive: at most N measured samples per case [default: no count, --max-time
    /// decides; run quick: 5]
    #[arg(long, value_name = "N")]
    pub max_reps: Option<usize>,
    /// Adaptive: time budget for all samples of the run, warm-ups included (30s, 10m, 1h),
    /// shared by the cases;
    /// the default keeps a default run within a minute
    #[arg(long, default_value = crate::runner::DEFAULT_MAX_TIME, value_name = "TIME",
          value_parser = crate::parse::duration)]
    pub max_time: std::time::Duration,
    /// Flag a sample when other processes and steal used more than P % of the CPUs meanwhile
    #[arg(long, default_value = "5%", value_name = "P%", value_parser = crate::parse::percent)]
    pub noise_threshold: f64,
    /// Before each sample, wait (up to 30 s) for the machine to be quiet
    #[arg(long)]
    pub wait_quiet: bool,
    /// Vary a kernel knob over values, A B A B per repetition; repeat for the cross product.
    /// Needs root; restored at the end, on error and on SIGINT/SIGTERM. Knobs: thp, thp_defrag,
    /// thp_shmem, khugepaged_defrag, numa_balancing, pcp_high_fraction, zone_reclaim,
    /// overcommit, swappiness, stat_interval, compaction_proactiveness,
    /// watermark_scale_factor, nr_hugepages, page_reporting_order, randomize_va_space,
    /// no_turbo, cpu_boost, ksm_run, ksm_pages_to_scan, ksm_sleep_millisecs, zswap,
    /// zswap_compressor, zswap_max_pool_percent,
    /// thp_<size> (16K..2M, Linux 6.8+), thp_shmem_<size> (8K..2M, 6.11+) (see docs/knobs.md)
    #[arg(long = "knob", value_name = "NAME=V1,V2")]
    pub knob: Vec<String>,
    /// Sample the workers' kernel and user stacks at HZ per second (499
    /// when no HZ is given) beside each measured sample: `cycles` where a
    /// PMU exists, `cpu-clock` otherwise (see docs/profile.md).
    #[arg(long, value_name = "HZ", num_args = 0..=1, require_equals = true,
          default_missing_value = "499")]
    pub profile: Option<u64>,
    /// Record lock contention (lock:contention_begin/end), mmap_lock
    /// tracepoints and /proc/lock_stat deltas beside each measured sample
    /// (named so because lockfan's --locks is its lock counts)
    #[arg(long)]
    pub lock_stats: bool,
    /// Read these /proc/meminfo fields once a second during each sample, as lkp's
    /// meminfo monitor (nodeN.FIELD: node N's meminfo, as lkp's numa-meminfo); each
    /// sample keeps their means (kB) as figures `meminfo.FIELD`
    #[arg(long, value_name = "FIELD,...", value_delimiter = ',',
          value_parser = crate::monitor::meminfo::field)]
    pub meminfo: Vec<crate::monitor::meminfo::Field>,
    /// Apply the reversible fixes `vmscale doctor` lists (needs root), restored after
    #[arg(long)]
    pub tune: bool,
    /// Visit every case N times, each visit with its own warm-up and samples (counts and
    /// limits per visit), to measure the variance between invocations (docs/repetitions.md)
    #[arg(long, value_name = "N", default_value_t = 1,
          value_parser = clap::value_parser!(u16).range(1..=100))]
    pub invocations: u16,
    /// With --knob: refuse (exit 2) instead of waiting when another run holds the knob lock
    #[arg(long)]
    pub no_wait: bool,
    /// Print the plan (cases, pairs, samples) and its time estimate, then exit without
    /// measuring or storing anything; with --json an object (docs/scale.md)
    #[arg(long)]
    pub dry_run: bool,
}

#[derive(Args, Debug)]
#[command(
    mut_arg("markdown", |a| a.help("Markdown: a summary table per case and figure")),
    mut_arg("csv", |a| a.help("CSV: every sample, one record per figure"))
)]
pub struct ShowArgs {
    /// Run id, label, `last` or `last~N`
    #[arg(default_value = "last")]
    pub run: String,
    #[command(flatten)]
    pub output: OutputFormat,
    /// A curve of the headline figure (or --figure) by task count, in the terminal
    #[arg(long, conflicts_with_all = ["json", "csv", "markdown"])]
    pub plot: bool,
    /// The figure to plot (with --plot)
    #[arg(long, requires = "plot")]
    pub figure: Option<String>,
}

const COMPARE_EXAMPLES: &str = "\
Examples:
  vmscale compare last~1 last               the newer run against the older
  vmscale compare base thp-on thp-off       by label; the first is the baseline
  vmscale compare last                      one run's knob variants (--knob A/B)
  vmscale compare last --ratio-of A         ratio table as A / B
  vmscale compare --files a.txt b.txt       ministat-style: one number a line
  vmscale compare --files a.csv b.csv --column time --better lower
  vmscale compare 3 4 --markdown            also --csv, --json";

#[derive(Args, Debug)]
#[command(
    mut_arg("json", |a| a.help("JSON: the whole comparison")),
    mut_arg("csv", |a| a.help("CSV: one record per case, figure and side"))
)]
pub struct CompareArgs {
    /// Runs: ids, labels, `last`, `last~N` (sample files if all are existing files)
    pub runs: Vec<String>,
    /// Sample files instead of runs: one number a line, CSV with a header, or a JSON array
    #[arg(long, num_args = 1.., value_name = "FILE")]
    pub files: Vec<PathBuf>,
    /// CSV column of the sample files, by name or 1-based number (default: first numeric)
    #[arg(long)]
    pub column: Option<String>,
    /// For sample files: which direction is better [default: higher]
    #[arg(long, value_enum)]
    pub better: Option<Better>,
    /// For sample files: the values are rates (harmonic mean, tested on logs)
    #[arg(long)]
    pub rate: bool,
    /// Significance level for the Benjamini-Hochberg-adjusted p-values
    #[arg(long, default_value_t = 0.05)]
    pub alpha: f64,
    /// Seed of the bootstrap intervals
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Only this figure (repeatable; default: every figure the run reports)
    #[arg(long = "figure", value_name = "NAME")]
    pub figures: Vec<String>,
    /// Ratio table of knob variants: B (B / A) or A (A / B)
    #[arg(long, value_enum, default_value = "B", ignore_case = true)]
    pub ratio_of: RatioOf,
    #[command(flatten)]
    pub output: OutputFormat,
    /// Allow runs of different workloads side by side (refused otherwise)
    #[arg(long)]
    pub cross_workload: bool,
}

#[derive(Args, Debug)]
#[command(
    mut_arg("markdown", |a| a.help("Markdown: one table")),
    mut_arg("csv", |a| a.help("CSV: one record per run"))
)]
pub struct ListArgs {
    #[command(flatten)]
    pub filter: ListFilter,
    /// A trend column: the headline median against the previous like run
    /// (same workload and configuration), `step` where `history` finds one
    #[arg(long)]
    pub trend: bool,
    #[command(flatten)]
    pub output: OutputFormat,
}

#[derive(Args, Debug)]
pub struct PcpArgs {
    #[command(flatten)]
    pub json: Json,
    /// Also list every CPU's page list in every zone
    #[arg(long)]
    pub per_cpu: bool,
    #[command(flatten)]
    pub machine: MachineRoot,
}

#[derive(Args, Debug)]
pub struct SysinfoArgs {
    #[command(flatten)]
    pub json: Json,
    #[command(flatten)]
    pub machine: MachineRoot,
}

#[derive(Args, Debug)]
pub struct RestoreArgs {
    /// Refuse (exit 2) instead of waiting when a knob run holds the knob lock
    #[arg(long)]
    pub no_wait: bool,
}

#[derive(Args, Debug)]
pub struct ReportArgs {
    /// Runs (ids, labels, `last`, `last~N`); several are compared
    #[arg(default_value = "last", num_args = 1..)]
    pub runs: Vec<String>,
    /// The HTML file to write
    #[arg(long, value_name = "FILE")]
    pub html: PathBuf,
    /// The figure to plot (default: each run's headline figure)
    #[arg(long)]
    pub figure: Option<String>,
    /// A history instead of runs: the like runs the options below select,
    /// their medians with intervals, the segments' centres and the steps
    #[arg(long)]
    pub history: bool,
    #[command(flatten)]
    pub select: HistorySelect,
}

#[derive(Args, Debug)]
#[command(
    mut_arg("markdown", |a| a.help("Markdown: the parameter and extrapolation tables")),
    mut_arg("csv", |a| a.help("CSV: one record per parameter, the peak and each prediction"))
)]
pub struct FitArgs {
    /// Run id, label, `last` or `last~N`, or a file of `N X` pairs (as --file)
    pub run: Option<String>,
    /// Figure to fit (default: the run's headline figure)
    #[arg(long)]
    pub figure: Option<String>,
    /// Variant to fit (default: the run's first)
    #[arg(long)]
    pub variant: Option<String>,
    /// Task counts to predict, e.g. 16,64,512 (default: 2x .. 16x the largest measured)
    #[arg(long, value_name = "N,...")]
    pub extrapolate: Option<String>,
    /// A plain file of `N X` pairs instead of a run
    #[arg(long, value_name = "PATH")]
    pub file: Option<PathBuf>,
    #[command(flatten)]
    pub output: OutputFormat,
}

#[derive(Args, Debug)]
pub struct ImportArgs {
    /// pft tables as mailed (Lameter's layout, pft 0.12, 8 columns, quoted) or will-it-scale CSV
    pub file: PathBuf,
    /// Leave out rows that do not parse (each reported) instead of failing the import
    #[arg(long)]
    pub skip_bad_rows: bool,
    /// A label for the imported runs
    #[arg(long)]
    pub label: Option<String>,
    #[command(flatten)]
    pub json: Json,
}

#[derive(Args, Debug)]
pub struct DoctorArgs {
    #[command(flatten)]
    pub json: Json,
    /// The CPUs the measurement will use (a list like 0-3,8) [default: all online]
    #[arg(long, value_name = "LIST")]
    pub cpus: Option<CpuList>,
    /// How long to watch CPU activity and interrupts (0s: one reading)
    #[arg(long, default_value = "1s", value_name = "TIME", value_parser = crate::doctor::window)]
    pub window: std::time::Duration,
    #[command(flatten)]
    pub machine: MachineRoot,
}
