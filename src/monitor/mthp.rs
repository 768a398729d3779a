//! The per-size THP counters: every file of every
//! /sys/kernel/mm/transparent_hugepage/hugepages-<N>kB/stats/ directory,
//! found by listing (the kernel adds counters from release to release),
//! as `mthp.<N>kB.<counter>`. Kernels before 6.10 have none.

use std::path::Path;

use super::vmstat::Vmstat;
use crate::machine::memory::{THP as THP_SIZES_DIR, thp_size_dirs};
use crate::machine::read_num;

/// The prefix of every per-size THP key in a sample's counter deltas.
pub const PREFIX: &str = "mthp.";

/// Every per-size counter under `root`; empty where the kernel has none.
/// Entries that are not plain files (a planted link) are skipped.
pub fn read(root: &Path) -> Vmstat {
    let mut out = Vmstat::new();
    for size in thp_size_dirs(root) {
        let dir = format!("{THP_SIZES_DIR}/hugepages-{size}/stats");
        let Ok(entries) = std::fs::read_dir(crate::machine::under(root, &dir)) else {
            continue;
        };
        for e in entries.filter_map(|e| e.ok()) {
            if !e.file_type().is_ok_and(|t| t.is_file()) {
                continue;
            }
            let Some(name) = e.file_name().to_str().map(str::to_string) else {
                continue;
            };
            if let Some(v) = read_num::<u64>(root, &format!("{dir}/{name}")) {
                out.insert(format!("{PREFIX}{size}.{name}"), v);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::machine::memory::thp_stats_sizes;

    fn tree(sizes: &[(&str, &[(&str, &str)])]) -> tempfile::TempDir {
        let t = tempfile::tempdir().unwrap();
        for (size, files) in sizes {
            let d = t.path().join(format!(
                "sys/kernel/mm/transparent_hugepage/hugepages-{size}"
            ));
            std::fs::create_dir_all(d.join("stats")).unwrap();
            std::fs::write(d.join("enabled"), "always inherit madvise [never]\n").unwrap();
            for (name, v) in *files {
                std::fs::write(d.join("stats").join(name), v).unwrap();
            }
        }
        t
    }

    #[test]
    fn every_listed_counter_of_every_size_is_read() {
        let t = tree(&[
            (
                "64kB",
                &[("anon_fault_alloc", "12\n"), ("a_new_one", "3\n")],
            ),
            ("2048kB", &[("swpout", "7\n"), ("junk", "x\n")]),
        ]);
        let c = read(t.path());
        assert_eq!(c.get("mthp.64kB.anon_fault_alloc"), Some(&12));
        assert_eq!(c.get("mthp.64kB.a_new_one"), Some(&3));
        assert_eq!(c.get("mthp.2048kB.swpout"), Some(&7));
        assert!(!c.contains_key("mthp.2048kB.junk"));
        assert_eq!(thp_stats_sizes(t.path()), ["64kB", "2048kB"]);
    }

    #[test]
    fn a_kernel_without_per_size_stats_gives_nothing() {
        let t = tree(&[("64kB", &[])]);
        assert!(read(t.path()).is_empty());
        assert!(thp_stats_sizes(t.path()).is_empty());
        let bare = tempfile::tempdir().unwrap();
        assert!(read(bare.path()).is_empty());
    }

    #[test]
    fn a_planted_link_is_not_followed() {
        let t = tree(&[("64kB", &[("swpout", "1\n")])]);
        let victim = t.path().join("victim");
        std::fs::write(&victim, "99\n").unwrap();
        let stats = t
            .path()
            .join("sys/kernel/mm/transparent_hugepage/hugepages-64kB/stats");
        std::os::unix::fs::symlink(&victim, stats.join("linked")).unwrap();
        let c = read(t.path());
        assert!(!c.contains_key("mthp.64kB.linked"));
        assert_eq!(c.get("mthp.64kB.swpout"), Some(&1));
    }
}
