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
    /// Compare runs (the first is the baseline), the knob variants of one run, or sample files
    #[command(after_help = COMPARE_EXAMPLES)]
    Compare(CompareArgs),
    /// Describe this machine: CPUs, caches, nodes, pages, kernel, sysctls
    Sysinfo(SysinfoArgs),
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
pub struct ShowArgs {
    /// Run id, label, `last` or `last~N`
    #[arg(default_value = "last")]
    pub run: String,
    /// JSON instead of text
    #[arg(long)]
    pub json: bool,
    /// Markdown: a summary table per case and figure
    #[arg(long, conflicts_with_all = ["json", "csv"])]
    pub markdown: bool,
    /// CSV: every sample, one record per figure
    #[arg(long, conflicts_with = "json")]
    pub csv: bool,
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
pub struct CompareArgs {
    /// Runs: ids, labels, `last`, `last~N` (sample files if all are existing files)
    pub runs: Vec<String>,
    /// Sample files instead of runs: one number a line, CSV with a header, or a JSON array
    #[arg(long, num_args = 1.., value_name = "FILE")]
    pub files: Vec<PathBuf>,
    /// CSV column of the sample files, by name or 1-based number (default: first numeric)
    #[arg(long)]
    pub column: Option<String>,
    /// For sample files: which direction is better, higher or lower
    #[arg(long, default_value = "higher")]
    pub better: String,
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
    #[arg(long, default_value = "B", value_name = "A|B")]
    pub ratio_of: String,
    /// Markdown tables
    #[arg(long, conflicts_with_all = ["json", "csv"])]
    pub markdown: bool,
    /// CSV: one record per case, figure and side
    #[arg(long, conflicts_with = "json")]
    pub csv: bool,
    /// JSON: the whole comparison
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
