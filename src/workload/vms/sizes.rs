//! The machine as vm-scalability's `hw_vars` reads it (MemTotal,
//! MemAvailable, free and file pages, CPUs, nodes), scaled by `--size`:
//! vmscale runs each case on a machine of `scale` times this one's memory,
//! and a case that needs pressure gets it from a cgroup of that size
//! rather than by filling the real machine.

use serde::Serialize;

use crate::error::{Error, Result};
use crate::machine::Snapshot;

/// The suite's sizes for this machine, scaled.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Sizes {
    /// The factor every memory size below carries.
    pub scale: f64,
    /// `$mem`: MemTotal.
    pub mem: u64,
    /// `$mem_avail`: MemAvailable.
    pub mem_avail: u64,
    /// `$MemFree` (bytes here; the scripts use its KiB).
    pub mem_free: u64,
    /// `$reclaimable`: (nr_free_pages + nr_file_pages) pages.
    pub reclaimable: u64,
    /// `$shm_size`: the suite's tmpfs (size=100%), so MemTotal.
    pub shm_size: u64,
    /// `$SwapTotal` as the swap cases see it: the swap device vmscale
    /// makes for them, as big as `mem`.
    pub swap: u64,
    pub page: u64,
    /// `$hugepagesize`: Hugepagesize of /proc/meminfo (2 MiB when the
    /// kernel has none: the hugetlb cases are refused there).
    pub huge_page: u64,
    pub nodes: u64,
    /// vm.max_map_count: the suite raises it to 2^30 for small-allocs;
    /// vmscale leaves it and fits the case under it instead.
    pub max_map_count: u64,
}

impl Sizes {
    /// `$AS_LIMIT`.
    pub const AS_LIMIT: u64 = 1 << 46;
    const ROTATE: u64 = 1 << 42;

    /// Reads the machine (`root`: "/" or a fixture) and scales it.
    pub fn read(m: &Snapshot, root: &std::path::Path, scale: f64) -> Sizes {
        let vm = crate::monitor::vmstat::read(root);
        let page = m.page_size.unwrap_or(4096);
        let pages = |k: &str| vm.get(k).copied().unwrap_or(0);
        let kib = |v: Option<u64>| v.unwrap_or(0).saturating_mul(1024);
        let scaled = |b: u64| (b as f64 * scale) as u64;
        let mem = scaled(kib(m.mem_total_kib));
        let meminfo = crate::machine::memory::read_meminfo(root);
        let max_map_count =
            std::fs::read_to_string(crate::machine::under(root, "/proc/sys/vm/max_map_count"))
                .ok()
                .and_then(|t| t.trim().parse().ok())
                .unwrap_or(65530);
        Sizes {
            scale,
            mem,
            mem_avail: scaled(kib(m.mem_available_kib)),
            mem_free: scaled(kib(meminfo.get("MemFree").copied())),
            reclaimable: scaled((pages("nr_free_pages") + pages("nr_file_pages")) * page),
            shm_size: mem,
            swap: mem,
            page,
            huge_page: meminfo
                .get("Hugepagesize")
                .map_or(2 << 20, |k| k * 1024)
                .max(page),
            nodes: m.nodes.len().max(1) as u64,
            max_map_count,
        }
    }

    /// `$PTE_LIMIT`: MemAvailable << 8, the virtual size whose page tables
    /// fill the memory.
    pub fn pte_limit(&self) -> u64 {
        self.mem_avail.saturating_mul(256)
    }

    /// `$ROTATE_BYTES`: what the time-bound cases stream through, more
    /// than the memory holds.
    pub fn rotate(&self) -> u64 {
        Self::ROTATE.min(self.pte_limit())
    }

    /// setup_hugetlb's pool for `tasks`: the bytes `unit` in huge pages
    /// and one more a task and one besides (the script's margin for sizes
    /// and offsets not on a huge page boundary).
    pub fn hugetlb_pages(&self, unit: u64, tasks: u64) -> u64 {
        unit / self.huge_page.max(1) + tasks + 1
    }

    /// case-mincore-hugepages' pool: nr_hugepages of mem/20 and
    /// nr_overcommit_hugepages of mem/10, in huge pages (here all of it
    /// reserved, as the -hugetlb cases' pools).
    pub fn mincore_huge_pages(&self) -> u64 {
        let pages = self.mem / self.huge_page.max(1);
        pages / 20 + pages / 10
    }

    /// case-remap's file a task: mem/n/2, at most the pages whose VMAs
    /// (one a page remapped) fit vm.max_map_count less a margin, whole
    /// pages.
    pub fn remap_bytes(&self, tasks: u64) -> u64 {
        let page = self.page.max(1);
        let vmas = self.max_map_count.saturating_sub(4096);
        let bytes = (self.mem / tasks.max(1) / 2).min(vmas * page);
        bytes / page * page
    }

    /// small-allocs' total: `$ROTATE_BYTES` halved until its 10-page units
    /// fit in a third of the memory's worth of VMAs (the script's
    /// `vma_nr_max`), and here also in vm.max_map_count less a margin.
    pub fn small_allocs_total(&self) -> u64 {
        let unit = 10 * self.page;
        let vmas = (21 * (self.mem / 3) / 4096).min(self.max_map_count.saturating_sub(4096));
        let mut size = self.rotate();
        while size / unit > vmas && size > unit {
            size >>= 1;
        }
        size
    }
}

/// `--size`: a fraction of the machine ("1/16", "0.25", "25%") or the
/// memory of the machine to model ("2G", scaled from MemTotal).
pub fn parse_scale(text: &str, mem_total: u64) -> Result<f64> {
    let t = text.trim();
    let bad = || {
        Error::Input(format!(
            "--size '{text}': give a fraction of this machine's memory (1/16, 0.25, 25%) \
             or the memory to model (2G)"
        ))
    };
    let scale = if let Some((a, b)) = t.split_once('/') {
        let (a, b): (f64, f64) = (
            a.trim().parse().map_err(|_| bad())?,
            b.trim().parse().map_err(|_| bad())?,
        );
        a / b
    } else if let Some(p) = t.strip_suffix('%') {
        p.trim().parse::<f64>().map_err(|_| bad())? / 100.0
    } else if let Ok(f) = t.parse::<f64>() {
        f
    } else {
        let bytes = crate::parse::size(t).map_err(|_| bad())?;
        if mem_total == 0 {
            return Err(Error::Refused(
                "--size: MemTotal is unknown here, so a size cannot be turned into a \
                 fraction: give a fraction such as 1/16"
                    .into(),
            ));
        }
        bytes as f64 / mem_total as f64
    };
    if !(scale.is_finite() && scale > 0.0 && scale <= 1.0) {
        return Err(Error::Input(format!(
            "--size '{text}' is {scale:.3} of this machine's memory: use more than 0 and at \
             most all of it (1)"
        )));
    }
    Ok(scale)
}

/// A machine of `mem_gib` GiB, 9/10 of it available, 1/10 free, one
/// node, for the tests of sizes.
#[cfg(test)]
pub fn fixture(mem_gib: u64) -> Sizes {
    let mem = mem_gib << 30;
    Sizes {
        scale: 1.0,
        mem,
        mem_avail: mem / 10 * 9,
        mem_free: mem / 10,
        reclaimable: mem / 10 * 9,
        shm_size: mem,
        swap: mem,
        page: 4096,
        huge_page: 2 << 20,
        nodes: 1,
        max_map_count: 65530,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use fixture as sizes;

    #[test]
    fn scales_parse_as_fractions_percentages_and_sizes() {
        let g = 1u64 << 30;
        assert_eq!(parse_scale("1/16", 24 * g).unwrap(), 1.0 / 16.0);
        assert_eq!(parse_scale("25%", 24 * g).unwrap(), 0.25);
        assert_eq!(parse_scale("0.5", 24 * g).unwrap(), 0.5);
        assert_eq!(parse_scale("6G", 24 * g).unwrap(), 0.25);
        for bad in ["0", "2", "48G", "x", "1/0", "-1/4", ""] {
            let r = parse_scale(bad, 24 * g);
            assert!(matches!(r, Err(Error::Input(_))), "{bad}: {r:?}");
        }
    }

    #[test]
    fn rotate_is_the_pte_limit_capped_at_4_tib() {
        let s = sizes(1);
        assert_eq!(s.rotate(), s.mem_avail * 256);
        assert_eq!(sizes(1 << 10).rotate(), 1 << 42);
    }

    #[test]
    fn mincore_hugepages_pool_is_the_scripts_two_counts() {
        // 1 GiB: 512 huge pages of 2 MiB, 25 + 51.
        assert_eq!(sizes(1).mincore_huge_pages(), 25 + 51);
        let mut s = sizes(1);
        s.mem = 39 << 20;
        // 19 pages: 0 reserved, 1 overcommitted.
        assert_eq!(s.mincore_huge_pages(), 1);
    }

    #[test]
    fn remap_is_half_mem_a_task_under_the_map_count() {
        let mut s = sizes(1);
        s.mem = 100 << 20;
        // 25 MiB a task of 2: 6400 pages, under 65530 - 4096.
        assert_eq!(s.remap_bytes(2), 25 << 20);
        s.mem = 1 << 30;
        // 512 MiB would be 131072 VMAs: capped at 61434 pages.
        assert_eq!(s.remap_bytes(1), 61434 * 4096);
        s.mem = (100 << 20) + 5;
        assert_eq!(s.remap_bytes(3) % 4096, 0);
    }

    #[test]
    fn small_allocs_fit_the_map_count() {
        for gib in [1, 24, 1024] {
            let s = sizes(gib);
            let units = s.small_allocs_total() / (10 * 4096);
            assert!(units <= s.max_map_count - 4096, "{gib}: {units}");
            assert!(units > (s.max_map_count - 4096) / 2, "{gib}: {units}");
        }
    }
}
