//! `vmscale run pft`'s options and how they become a validated `Pft`: the
//! sizes and placement, then the backing, sharing, access and page options
//! as a checked mapping (hugetlb refused with the numbers unless reserved
//! with `--knob nr_hugepages=N`).

use std::path::PathBuf;

use super::Workload;
use super::fault_map::{self, PageKind};
use super::options::{line_size, page_size};
use super::pft::{self, Pft};
use super::placement::Placement;
use super::spec::{Env, Options, higher, lower, rate};
use crate::error::{Error, Result};
use crate::exec::Mode;
use crate::machine::Snapshot;
use crate::parse;

/// `--thp`: pft's and colour's, one mapping madvised or not.
#[derive(clap::Args, Debug, Clone, Copy)]
pub struct MappingThp {
    /// Transparent huge pages for the mapping (madvise)
    #[arg(long, value_enum, default_value = "never")]
    pub thp: pft::Thp,
}

// `vmscale run pft`'s options; the harness options are added beside them.
#[derive(clap::Args, Debug, Clone)]
pub struct Args {
    #[command(flatten)]
    pub place: Placement,
    /// Total memory, split evenly among the tasks (e.g. 256M, 4G)
    #[arg(long)]
    pub size: Option<String>,
    /// Memory per task instead of a total
    #[arg(long, value_name = "SIZE")]
    pub size_per_task: Option<String>,
    /// Cache lines written per page, 1 .. page size / line size
    #[arg(long, default_value_t = 1)]
    pub cline: u64,
    #[command(flatten)]
    pub thp: MappingThp,
    /// Also measure the kernel-only limit: MADV_POPULATE_WRITE on the same sizes
    #[arg(long)]
    pub populate: bool,
    /// What backs the memory: shm is shared anonymous, file needs --path
    #[arg(long, value_enum, default_value = "anon")]
    pub backing: fault_map::Backing,
    /// The file for --backing file: created new (never an existing path), removed after
    #[arg(long, value_name = "PATH")]
    pub path: Option<PathBuf>,
    /// A shared mapping instead of a private one (private file mappings take COW faults;
    /// implied by --backing shm)
    #[arg(long)]
    pub shared: bool,
    /// The fault taken; read: the zero page on anon, page cache and fault-around on files
    #[arg(long, value_enum, default_value = "write")]
    pub access: fault_map::Access,
    /// Pages per mapping: thp by madvise, hugetlb from reserved huge pages [default:
    /// base, or thp with --thp always]
    #[arg(long, value_enum)]
    pub pages: Option<PageKind>,
    /// Also count each task's faults with the perf `page-faults` counter, a
    /// cross-check of rusage; it costs in every fault (docs/pft.md), so off by default
    #[arg(long)]
    pub perf_faults: bool,
}

/// `vmscale run pft --help`'s examples.
pub const EXAMPLES: &str = "Examples:\n  vmscale run pft --tasks auto --size 512M\n  \
vmscale run pft --tasks 1,2 --mode process --size-per-task 64M --cline 64\n  \
vmscale run pft --tasks 1-2 --size 256M --thp always --populate";

/// pft in the registry (`workload::REGISTRY`).
pub const SPEC: super::Spec = super::Spec {
    name: "pft",
    about: "Page-fault scaling (Lameter's pft): N tasks write-fault anonymous memory",
    examples: EXAMPLES,
    mode: Some(Mode::Thread),
    // pft's figures, fault/wsec first (also used for imported pft tables).
    figures: &[
        rate(pft::HEADLINE, "faults/s"),
        rate("flt/cpu/s", "faults/s"),
        lower("wall", "s"),
        lower("user", "s"),
        lower("system", "s"),
        rate("bytes/wsec", "B/s"),
        higher("pages/fault", "pages"),
    ],
    report: super::Report::Pft,
    size_flags: "a smaller --size or --size-per-task",
    quick: pft::quick,
    ..super::Spec::of::<Args>()
};

impl Options for Args {
    fn build(&self, env: &Env) -> Result<Box<dyn Workload>> {
        let (a, m) = (self, env.machine);
        let size =
            |flag, s: &Option<String>| s.as_deref().map(|t| parse::size_arg(flag, t)).transpose();
        let cfg = pft::Config {
            place: a.place.resolve(m)?,
            size_total: size("--size", &a.size)?,
            size_per_task: size("--size-per-task", &a.size_per_task)?,
            cline: a.cline,
            thp: a.thp.thp,
            populate: a.populate,
            page_size: page_size(m),
            line_size: line_size(m),
            map: Default::default(),
            huge_size: 0,
            perf_faults: a.perf_faults,
        };
        with_mapping(cfg, a, env)
    }
}

/// Completes pft's configuration with the mapping options and checks it.
fn with_mapping(mut cfg: pft::Config, a: &Args, env: &Env) -> Result<Box<dyn Workload>> {
    let m = env.machine;
    let pages = match (a.pages, cfg.thp) {
        (None, pft::Thp::Always) => PageKind::Thp,
        (None, pft::Thp::Never) => PageKind::Base,
        (Some(p), thp) => {
            if thp == pft::Thp::Always && p != PageKind::Thp {
                return Err(Error::Input(
                    "--thp always asks for THP: drop it, or use --pages thp alone".into(),
                ));
            }
            p
        }
    };
    let backing = a.backing;
    cfg.map = fault_map::Spec {
        backing,
        path: a.path.clone(),
        // Shared anonymous memory is what shm is.
        shared: a.shared || backing == fault_map::Backing::Shm,
        access: a.access,
        pages,
    };
    // A knob the run sets counts instead of the machine's value now.
    let plan = env.knobs;
    let set = |name: &str| plan.values(name).and_then(|v| v.first().cloned());
    let thp = set("thp").or_else(|| m.thp_enabled.clone());
    let shmem = set("thp_shmem").or_else(pft::read_shmem_enabled);
    cfg.map.check(thp.as_deref(), shmem.as_deref())?;
    if let Some(path) = &cfg.map.path
        && std::fs::symlink_metadata(path).is_ok()
    {
        return Err(Error::Input(format!(
            "--path {} already exists: vmscale creates the file itself and never reuses one; \
             remove it or name a new path",
            path.display()
        )));
    }
    let (free, hugetlb_size) = fault_map::hugetlb_free();
    cfg.huge_size = match pages {
        PageKind::Base => 0,
        PageKind::Thp => m.thp_pmd_size.unwrap_or(2 << 20),
        PageKind::Hugetlb => hugetlb_size,
    };
    if pages == PageKind::Thp
        && cfg.thp == pft::Thp::Never
        && cfg.map.backing == fault_map::Backing::Anon
    {
        cfg.thp = pft::Thp::Always;
    }
    env.made(cfg, |cfg| {
        let w = Pft::new(cfg, m.clone())?;
        check_hugetlb(&w, free, hugetlb_size, plan, m)?;
        Ok(w)
    })
}

/// Hugetlb pages must be reserved: free ones now, or the smallest value a
/// `--knob nr_hugepages=...` sets (which must fit in available memory).
fn check_hugetlb(
    w: &Pft,
    free: u64,
    size: u64,
    plan: &crate::knobs::Plan,
    m: &Snapshot,
) -> Result<()> {
    let need = w.hugetlb_pages_needed();
    if need == 0 {
        return Ok(());
    }
    let asked = plan.values("nr_hugepages").map(|v| {
        v.iter()
            .filter_map(|x| x.parse::<u64>().ok())
            .min()
            .unwrap_or(0)
    });
    match asked {
        None if free < need => Err(Error::Refused(format!(
            "--pages hugetlb needs {need} huge pages of {} but {free} are free \
             (HugePages_Free in /proc/meminfo): reserve them for this run with \
             --knob nr_hugepages={need}",
            crate::units::size(size)
        ))),
        None => Ok(()),
        Some(n) if n < need => Err(Error::Input(format!(
            "--knob nr_hugepages={n} reserves fewer than the {need} huge pages of {} \
             the largest case needs: use --knob nr_hugepages={need}",
            crate::units::size(size)
        ))),
        Some(n) => {
            let avail = m.mem_available_kib.unwrap_or(0) * 1024;
            let total = m.mem_total_kib.unwrap_or(0) * 1024;
            let usable = avail.saturating_sub((total / 16).max(256 << 20));
            if n.saturating_mul(size) > usable {
                return Err(Error::Refused(format!(
                    "--knob nr_hugepages={n} would reserve {} but only {} can be used safely: \
                     reserve fewer",
                    crate::units::size(n.saturating_mul(size)),
                    crate::units::size(usable)
                )));
            }
            Ok(())
        }
    }
}
