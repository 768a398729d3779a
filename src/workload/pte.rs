//! pte-reclaim: page-table reclaim after MADV_DONTNEED. One task maps
//! private anonymous memory (advised MADV_NOHUGEPAGE, so it is mapped by
//! PTE tables), writes every page, then drops it all with MADV_DONTNEED;
//! VmPTE of /proc/self/status is read before the map, after the writes and
//! after the advice, and the kernel's own count of page-table pages
//! (nr_page_table_pages in /proc/vmstat, machine-wide) beside it. A kernel
//! that reclaims empty PTE tables on MADV_DONTNEED (CONFIG_PT_RECLAIM)
//! gives back what the writes took; an older one keeps them until munmap.

use serde::{Deserialize, Serialize};

use super::options::page_size;
use super::spec::{Env, Options, Spec, higher, lower};
use super::{Case, Measure, SampleData, Workload};
use crate::error::{Error, Result};
use crate::exec::clock;
use crate::exec::region::{Pages, Region};
use crate::machine::Snapshot;
use crate::monitor::vmstat;
use crate::parse;

/// pte-reclaim in the registry (`workload::REGISTRY`).
pub const SPEC: Spec = Spec {
    name: "pte-reclaim",
    about: "Page-table reclaim: map, touch, MADV_DONTNEED, VmPTE before and after",
    examples: "Examples:\n  vmscale run pte-reclaim --size 256M\n  \
               vmscale run pte-reclaim --size 64M --reps 5",
    figures: &[
        lower("pte_left_kb", "kB"),
        higher("pte_freed_kb", "kB"),
        lower("pte_touched_kb", "kB"),
        lower("nr_pt_left_kb", "kB"),
        lower("dontneed_us", "us"),
    ],
    size_flags: "a smaller --size",
    quick,
    ..Spec::of::<Args>()
};

// `vmscale run pte-reclaim`'s options; the harness options are added beside them.
#[derive(clap::Args, Debug, Clone)]
pub struct Args {
    /// Memory mapped, written and dropped (e.g. 64M)
    #[arg(long, default_value = "64M")]
    pub size: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Config {
    /// Bytes mapped and written.
    pub size: u64,
    pub page_size: u64,
}

pub struct PteReclaim {
    cfg: Config,
}

impl Options for Args {
    fn build(&self, env: &Env) -> Result<Box<dyn Workload>> {
        let cfg = Config {
            size: parse::size_arg("--size", &self.size)?,
            page_size: page_size(env.machine),
        };
        env.made(cfg, PteReclaim::new)
    }
}

/// `run quick`: 16 MiB.
pub fn quick(_: &Snapshot) -> Vec<Vec<String>> {
    vec![super::spec::args("--size 16M")]
}

impl PteReclaim {
    pub fn new(cfg: Config) -> Result<PteReclaim> {
        if cfg.size < cfg.page_size {
            return Err(Error::Input(format!(
                "--size must be at least one page ({} bytes)",
                cfg.page_size
            )));
        }
        if usize::try_from(cfg.size).is_err() {
            return Err(Error::Input(format!(
                "--size {} does not fit this machine's address space",
                cfg.size
            )));
        }
        Ok(PteReclaim { cfg })
    }
}

/// VmPTE of this process in kB (its page tables), from /proc/self/status.
pub fn vm_pte_kib() -> Result<u64> {
    let path = "/proc/self/status";
    let text = std::fs::read_to_string(path)
        .map_err(|e| Error::io("cannot read", std::path::Path::new(path), e))?;
    status_kib(&text, "VmPTE").ok_or_else(|| {
        Error::Failed(format!(
            "{path} has no VmPTE line: this kernel does not report page-table memory"
        ))
    })
}

/// The kB of a `Name:   123 kB` line of a status file.
fn status_kib(text: &str, name: &str) -> Option<u64> {
    text.lines()
        .find_map(|l| l.strip_prefix(name)?.strip_prefix(':'))?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

/// The machine's page-table memory in kB by the kernel's count
/// (nr_page_table_pages), or NaN where vmstat lacks it.
fn kernel_pt_kib(page_kib: f64) -> f64 {
    vmstat::read_live()
        .get("nr_page_table_pages")
        .map_or(f64::NAN, |&p| p as f64 * page_kib)
}

impl Measure for PteReclaim {
    fn cases(&self) -> Vec<Case> {
        Case::grid([SPEC.name], &[1])
    }

    fn memory_need(&self) -> u64 {
        self.cfg.size
    }

    fn sample(&self, _case: &Case) -> Result<SampleData> {
        let ps = self.cfg.page_size as usize;
        let page_kib = self.cfg.page_size as f64 / 1024.0;
        let (pte0, kpt0) = (vm_pte_kib()?, kernel_pt_kib(page_kib));
        let region = Region::private(self.cfg.size as usize, Pages::Base, ps)?;
        for off in (0..region.len()).step_by(ps) {
            // SAFETY: off < len, inside the mapping.
            unsafe { region.ptr().add(off).write_volatile(1) };
        }
        let (pte1, kpt1) = (vm_pte_kib()?, kernel_pt_kib(page_kib));
        let t0 = clock::monotonic_ns();
        // SAFETY: the advised range is our own mapping.
        let rc = unsafe { libc::madvise(region.ptr().cast(), region.len(), libc::MADV_DONTNEED) };
        let t1 = clock::monotonic_ns();
        if rc != 0 {
            return Err(Error::Failed(format!(
                "madvise(MADV_DONTNEED) failed: {}",
                crate::exec::errno_text()
            )));
        }
        let (pte2, kpt2) = (vm_pte_kib()?, kernel_pt_kib(page_kib));
        drop(region);
        let kib = |a: u64, b: u64| a as f64 - b as f64;
        let mut d = SampleData::default();
        d.figures.insert("pte_touched_kb".into(), kib(pte1, pte0));
        d.figures.insert("pte_freed_kb".into(), kib(pte1, pte2));
        d.figures.insert("pte_left_kb".into(), kib(pte2, pte0));
        d.figures.insert("nr_pt_touched_kb".into(), kpt1 - kpt0);
        d.figures.insert("nr_pt_left_kb".into(), kpt2 - kpt0);
        d.figures
            .insert("dontneed_us".into(), (t1 - t0) as f64 / 1e3);
        Ok(d)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_lines_are_read_by_name() {
        let text = "VmRSS:\t  1024 kB\nVmPTE:\t    88 kB\nVmSwap:\t 0 kB\n";
        assert_eq!(status_kib(text, "VmPTE"), Some(88));
        assert_eq!(status_kib(text, "VmPT"), None);
        assert_eq!(status_kib("", "VmPTE"), None);
    }

    #[test]
    fn writing_memory_grows_the_page_tables_by_at_least_one_table_per_pmd() {
        let w = PteReclaim::new(Config {
            size: 16 << 20,
            page_size: 4096,
        })
        .unwrap();
        let d = w.sample(&Case::new(1, SPEC.name)).unwrap();
        // One 4 KiB PTE table maps 2 MiB: 16 MiB written needs 8 of them.
        assert!(d.figures["pte_touched_kb"] >= 32.0, "{:?}", d.figures);
        assert!(d.figures["dontneed_us"] > 0.0, "{:?}", d.figures);
    }
}
