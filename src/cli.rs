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
}

#[derive(Args, Debug)]
pub struct RunArgs {
    #[command(subcommand)]
    pub what: RunWhat,
}

#[derive(Subcommand, Debug)]
pub enum RunWhat {
    /// The short suite: sysinfo, pft in thread and process mode, then c2c, atomic, lockfan, latency
    Quick(QuickArgs),
    /// Page-fault scaling (seed 000): N tasks write-fault anonymous memory
    #[command(
        after_help = "Examples:\n  vmscale run pft --tasks auto --size 512M\n  \
vmscale run pft --tasks 1,2 --mode process --size-per-task 64M --cline 64\n  \
vmscale run pft --tasks 1-2 --size 256M --thp always --populate"
    )]
    Pft(PftArgs),
    /// Cache-line hand-off latency between every pair of CPUs (seed 002)
    #[command(after_help = "Examples:\n  vmscale run c2c\n  \
vmscale run c2c --cpus 0-3 --variant cas\n  \
vmscale run c2c --fresh-line --rounds 2000 --batches 100")]
    C2c(C2cArgs),
    /// The cost of counting: shared, folded, packed, locked and plain counters (seeds 000, 002)
    #[command(after_help = "Examples:\n  vmscale run atomic --tasks auto\n  \
vmscale run atomic --variant shared,folded --fold 64 --ops 5000000\n  \
vmscale run atomic --tasks 1,2 --mode process")]
    Atomic(AtomicArgs),
    /// One lock against the same work hashed over K locks (seed 004)
    #[command(after_help = "Examples:\n  vmscale run lockfan --tasks auto\n  \
vmscale run lockfan --locks 1,16,256 --kind spin,mutex\n  \
vmscale run lockfan --tasks 2 --lines 4 --ops 200000")]
    Lockfan(LockfanArgs),
    /// Dependent-load latency by working-set size, base pages and THP (seed 002)
    #[command(after_help = "Examples:\n  vmscale run latency\n  \
vmscale run latency --max 256M --pages base,thp\n  \
vmscale run latency --min 16K --max 4M --pages base --pin 1")]
    Latency(LatencyArgs),
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

#[derive(Args, Debug, Clone)]
pub struct C2cArgs {
    /// CPUs whose pairs are measured (default: every online CPU), e.g. 0-3,8
    #[arg(long, value_name = "LIST")]
    pub cpus: Option<String>,
    /// Ping-pong kinds: cas, storeload, or both
    #[arg(long, default_value = "cas,storeload")]
    pub variant: String,
    /// A new cache line per pair, first touched by the pair's first CPU
    #[arg(long)]
    pub fresh_line: bool,
    /// Round trips per timed batch
    #[arg(long, default_value_t = 1000)]
    pub rounds: u64,
    /// Timed batches per pair; a pair's figure is their median
    #[arg(long, default_value_t = 50)]
    pub batches: u64,
    #[command(flatten)]
    pub harness: Harness,
}

#[derive(Args, Debug, Clone)]
pub struct AtomicArgs {
    /// Task counts: a list (1,2,4), a range (1-8) or auto
    #[arg(long, default_value = "auto")]
    pub tasks: String,
    /// thread or process
    #[arg(long, default_value = "thread")]
    pub mode: String,
    /// Counters: shared, folded, packed, locked, plain (comma-separated)
    #[arg(long, default_value = "shared,folded,packed,locked,plain")]
    pub variant: String,
    /// Increments per task
    #[arg(long, default_value_t = 2_000_000)]
    pub ops: u64,
    /// Folded counters: increments between folds into the global
    #[arg(long, default_value_t = 64, value_name = "K")]
    pub fold: u64,
    /// Placement: compact, spread, none, or a CPU list like 0-3,8
    #[arg(long, default_value = "compact")]
    pub pin: String,
    #[command(flatten)]
    pub harness: Harness,
}

#[derive(Args, Debug, Clone)]
pub struct LockfanArgs {
    /// Task counts: a list (1,2,4), a range (1-8) or auto
    #[arg(long, default_value = "auto")]
    pub tasks: String,
    /// thread or process
    #[arg(long, default_value = "thread")]
    pub mode: String,
    /// Lock counts K: a list, a range, or auto (1, 2, 4, ... 256)
    #[arg(long, default_value = "auto")]
    pub locks: String,
    /// Lock kinds: spin, mutex, or both
    #[arg(long, default_value = "spin,mutex")]
    pub kind: String,
    /// Critical sections per task
    #[arg(long, default_value_t = 1_000_000)]
    pub ops: u64,
    /// Cache lines of data each lock protects, all written per operation
    #[arg(long, default_value_t = 2)]
    pub lines: usize,
    /// Placement: compact, spread, none, or a CPU list like 0-3,8
    #[arg(long, default_value = "compact")]
    pub pin: String,
    #[command(flatten)]
    pub harness: Harness,
}

#[derive(Args, Debug, Clone)]
pub struct LatencyArgs {
    /// Smallest working set
    #[arg(long, default_value = "4K", value_name = "SIZE")]
    pub min: String,
    /// Largest working set (default: 4 x the last-level cache)
    #[arg(long, value_name = "SIZE")]
    pub max: Option<String>,
    /// Page kinds: base, thp, or both
    #[arg(long, default_value = "base,thp")]
    pub pages: String,
    /// Least timed loads per sample (at least two laps of the chain are timed)
    #[arg(long, default_value_t = 2_000_000)]
    pub loads: u64,
    /// Placement of the one task: compact, spread, none, or a CPU
    #[arg(long, default_value = "compact")]
    pub pin: String,
    #[command(flatten)]
    pub harness: Harness,
}
