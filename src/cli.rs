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
  vmscale sysinfo                           what vmscale sees of this machine";

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
pub enum Command {
    /// Run a workload or a suite and store every sample
    Run(RunArgs),
    /// Reprint a stored run (an id, a label, `last` or `last~N`)
    Show(ShowArgs),
    /// List stored runs
    List(ListArgs),
    /// Describe this machine: CPUs, caches, nodes, pages, kernel, sysctls
    Sysinfo(SysinfoArgs),
    /// Per-CPU page lists from /proc/zoneinfo: count, high, batch per CPU and zone
    #[command(
        after_help = "Examples:\n  vmscale pcp\n  vmscale pcp --per-cpu\n  vmscale pcp --json"
    )]
    Pcp(PcpArgs),
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
    /// Page colours (seed 003): tasks allocate in parallel, PFNs give per-task colour skew
    #[command(
        after_help = "Examples:\n  vmscale run colour --tasks 2 --size-per-task 64M\n  \
vmscale run colour --tasks 2,4 --interleave 4 --mode process\n  \
vmscale run colour --tasks 2 --colours 16 --reps 3\n\n\
Needs CAP_SYS_ADMIN (root) to read physical frame numbers from /proc/self/pagemap."
    )]
    Colour(ColourArgs),
}

/// Options every run shares.
#[derive(Args, Debug, Clone)]
pub struct Harness {
    /// Measured samples per case, after one discarded warm-up
    #[arg(long, default_value_t = 5, value_name = "N")]
    pub reps: usize,
    /// Warm-up samples per case (stored, not counted)
    #[arg(long, default_value_t = 1, value_name = "N")]
    pub warmup: usize,
    /// A label to find the run by later
    #[arg(long)]
    pub label: Option<String>,
    /// Print the stored run as JSON instead of text
    #[arg(long)]
    pub json: bool,
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
pub struct ColourArgs {
    /// Task counts: a list (1,2,4), a range (1-8) or auto (1, 2, 4, ... online CPUs)
    #[arg(long, default_value = "2")]
    pub tasks: String,
    /// thread or process
    #[arg(long, default_value = "thread")]
    pub mode: String,
    /// Memory each task allocates and touches (e.g. 10M, 1G)
    #[arg(long, value_name = "SIZE", default_value = "64M")]
    pub size_per_task: String,
    /// Tasks take turns touching PAGES pages each (default 1), like an MPI start-up
    #[arg(long, value_name = "PAGES", num_args = 0..=1, default_missing_value = "1")]
    pub interleave: Option<u64>,
    /// Colours to analyse instead of the LLC's size / (ways x page size)
    #[arg(long, value_name = "N")]
    pub colours: Option<u64>,
    /// Placement: compact, spread, none, or a CPU list like 0-3,8
    #[arg(long, default_value = "compact")]
    pub pin: String,
    /// Transparent huge pages for the mapping (madvise): never or always
    #[arg(long, default_value = "never")]
    pub thp: String,
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
pub struct PcpArgs {
    /// JSON instead of text
    #[arg(long)]
    pub json: bool,
    /// Also list every CPU's page list in every zone
    #[arg(long)]
    pub per_cpu: bool,
    /// Read procfs under this root instead of / (for fixtures)
    #[arg(long, hide = true, default_value = "/")]
    pub root: PathBuf,
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
