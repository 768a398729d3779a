//! Command-line definitions only (clap derive); no behaviour here.

use clap::{Args, Parser, Subcommand};
use std::path::PathBuf;

const EXAMPLES: &str = "\
Examples:
  vmscale run quick                         the short suite (about a minute)
  vmscale run pft --tasks auto --size 1G    page-fault scaling over 1, 2, 4.. tasks
  vmscale run pft --tasks 1-4 --mode process --size-per-task 256M --populate
  vmscale show last                         reprint the newest run
  vmscale list --json                       every stored run, as JSON
  vmscale sysinfo                           what vmscale sees of this machine
  vmscale run pft --tasks 1,2 --size 64M --knob thp_defrag=madvise,never
  vmscale restore                           undo knobs left changed by a killed run";

#[derive(Parser, Debug)]
#[command(
    name = "vmscale",
    version,
    about = "A Linux memory-management scalability laboratory",
    long_about = "vmscale measures how the kernel's virtual-memory paths (page faults, fork/exit, \
NUMA balancing, page allocation, locks) behave as cores, tasks and memory grow, keeps every \
sample in an embedded SQLite store, and prints the tables kernel developers paste into mail.",
    after_help = EXAMPLES
)]
pub struct Cli {
    /// The results store (default: $XDG_DATA_HOME/vmscale/vmscale.db)
    #[arg(long, global = true, env = "VMSCALE_DB", value_name = "PATH")]
    pub db: Option<PathBuf>,

    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand, Debug)]
#[allow(clippy::large_enum_variant)] // parsed once; boxing would buy nothing
pub enum Command {
    /// Run a workload or a suite and store every sample
    Run(RunArgs),
    /// Reprint a stored run (an id, a label, `last` or `last~N`)
    Show(ShowArgs),
    /// List stored runs
    List(ListArgs),
    /// Describe this machine: CPUs, caches, nodes, pages, kernel, sysctls
    Sysinfo(SysinfoArgs),
    /// Put back kernel knobs a killed `run --knob` left changed (from its journal)
    Restore(RestoreArgs),
    /// Write an HTML report with plots for one or more runs
    #[command(after_help = "Examples:\n  vmscale report last --html report.html\n  \
vmscale report 3 4 5 --html compare.html --figure fault/wsec")]
    Report(ReportArgs),
    /// Fit the Universal Scalability Law to a run (or to a file of `N X` pairs)
    #[command(after_help = "Examples:\n  vmscale fit last\n  \
vmscale fit 3 --figure flt/cpu/s --extrapolate 16,64,512\n  \
vmscale fit --file pairs.txt --json")]
    Fit(FitArgs),
    /// Import pft tables or will-it-scale CSV into the store as runs
    #[command(after_help = "Examples:\n  vmscale import lameter-2005.txt\n  \
vmscale import page_fault1.csv --label wis-pf1")]
    Import(ImportArgs),
}

#[derive(Args, Debug)]
pub struct RunArgs {
    #[command(subcommand)]
    pub what: RunWhat,
}

#[derive(Subcommand, Debug)]
pub enum RunWhat {
    /// The short suite: sysinfo, then pft in thread and process mode over auto tasks
    Quick(QuickArgs),
    /// Page-fault scaling (seed 000): N tasks write-fault anonymous memory
    #[command(
        after_help = "Examples:\n  vmscale run pft --tasks auto --size 512M\n  \
vmscale run pft --tasks 1,2 --mode process --size-per-task 64M --cline 64\n  \
vmscale run pft --tasks 1-2 --size 256M --thp always --populate"
    )]
    Pft(PftArgs),
}

/// Options every run shares.
#[derive(Args, Debug, Clone)]
pub struct Harness {
    /// A fixed count of measured samples per case, instead of adaptive stopping
    #[arg(long, value_name = "N")]
    pub reps: Option<usize>,
    /// Warm-up samples per case (stored, not counted)
    #[arg(long, default_value_t = 1, value_name = "N")]
    pub warmup: usize,
    /// A label to find the run by later
    #[arg(long)]
    pub label: Option<String>,
    /// Print the stored run as JSON instead of text
    #[arg(long)]
    pub json: bool,
    /// Adaptive: sample until the 95 % CI of the headline mean is within P % of it
    #[arg(long, default_value = "1%", value_name = "P%")]
    pub precision: String,
    /// Adaptive: at most N measured samples per case [default: 30; run quick: 5]
    #[arg(long, value_name = "N")]
    pub max_reps: Option<usize>,
    /// Adaptive: time budget for all samples of the run (30s, 10m, 1h), shared by the cases
    #[arg(long, default_value = "10m", value_name = "TIME")]
    pub max_time: String,
    /// Flag a sample when other processes and steal used more than P % of the CPUs meanwhile
    #[arg(long, default_value = "5%", value_name = "P%")]
    pub noise_threshold: String,
    /// Before each sample, wait (up to 30 s) for the machine to be quiet
    #[arg(long)]
    pub wait_quiet: bool,
    /// Vary a kernel knob over values, A B A B per repetition; repeat for the cross product.
    /// Needs root; restored at the end, on error and on SIGINT/SIGTERM. Knobs: thp, thp_defrag,
    /// thp_shmem, khugepaged_defrag, numa_balancing, pcp_high_fraction, zone_reclaim,
    /// overcommit, swappiness, stat_interval, compaction_proactiveness,
    /// watermark_scale_factor (see docs/knobs.md)
    #[arg(long = "knob", value_name = "NAME=V1,V2")]
    pub knob: Vec<String>,
}

#[derive(Args, Debug)]
pub struct QuickArgs {
    #[command(flatten)]
    pub harness: Harness,
}

#[derive(Args, Debug)]
pub struct PftArgs {
    /// Task counts: a list (1,2,4), a range (1-8) or auto (1, 2, 4, ... online CPUs)
    #[arg(long, default_value = "auto")]
    pub tasks: String,
    /// thread or process
    #[arg(long, default_value = "thread")]
    pub mode: String,
    /// Total memory, split evenly among the tasks (e.g. 256M, 4G)
    #[arg(long)]
    pub size: Option<String>,
    /// Memory per task instead of a total
    #[arg(long, value_name = "SIZE")]
    pub size_per_task: Option<String>,
    /// Cache lines written per page, 1 .. page size / line size
    #[arg(long, default_value_t = 1)]
    pub cline: u64,
    /// Placement: compact, spread, none, or a CPU list like 0-3,8
    #[arg(long, default_value = "compact")]
    pub pin: String,
    /// Transparent huge pages for the mapping (madvise): never or always
    #[arg(long, default_value = "never")]
    pub thp: String,
    /// Also measure the kernel-only limit: MADV_POPULATE_WRITE on the same sizes
    #[arg(long)]
    pub populate: bool,
    #[command(flatten)]
    pub harness: Harness,
}

#[derive(Args, Debug)]
pub struct ShowArgs {
    /// Run id, label, `last` or `last~N`
    #[arg(default_value = "last")]
    pub run: String,
    /// JSON instead of text
    #[arg(long)]
    pub json: bool,
}

#[derive(Args, Debug)]
pub struct ListArgs {
    /// JSON instead of text
    #[arg(long)]
    pub json: bool,
}

#[derive(Args, Debug)]
pub struct SysinfoArgs {
    /// JSON instead of text
    #[arg(long)]
    pub json: bool,
    /// Read sysfs/procfs under this root instead of / (for fixtures)
    #[arg(long, hide = true, default_value = "/")]
    pub root: PathBuf,
}

#[derive(Args, Debug)]
pub struct RestoreArgs {}

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
}

#[derive(Args, Debug)]
pub struct FitArgs {
    /// Run id, label, `last` or `last~N` (not with --file)
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
    /// JSON instead of text
    #[arg(long)]
    pub json: bool,
}

#[derive(Args, Debug)]
pub struct ImportArgs {
    /// A pft table (Lameter's layout or pft 0.12) or a will-it-scale runtest CSV
    pub file: PathBuf,
    /// A label for the imported runs
    #[arg(long)]
    pub label: Option<String>,
    /// JSON instead of text
    #[arg(long)]
    pub json: bool,
}
