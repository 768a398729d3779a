//! Memory facts: /proc/meminfo, the base page size, hugetlb page sizes and
//! transparent huge page settings.

use super::{read_num, read_trimmed, under};
use std::collections::BTreeMap;
use std::path::Path;

/// Where the THP settings live, the per-size directories among them.
pub const THP: &str = "/sys/kernel/mm/transparent_hugepage";

/// /proc/meminfo as name -> kB (empty if absent).
pub fn read_meminfo(root: &Path) -> BTreeMap<String, u64> {
    std::fs::read_to_string(under(root, "/proc/meminfo"))
        .unwrap_or_default()
        .lines()
        .filter_map(|l| {
            let (name, rest) = l.split_once(':')?;
            Some((
                name.to_string(),
                rest.split_whitespace().next()?.parse().ok()?,
            ))
        })
        .collect()
}

/// Node `node`'s meminfo (/sys/devices/system/node/nodeN/meminfo, lines
/// "Node 0 MemTotal:  123 kB") as name -> kB (empty if absent).
pub fn read_node_meminfo(root: &Path, node: usize) -> BTreeMap<String, u64> {
    let path = format!("/sys/devices/system/node/node{node}/meminfo");
    node_meminfo(&std::fs::read_to_string(under(root, &path)).unwrap_or_default())
}

fn node_meminfo(text: &str) -> BTreeMap<String, u64> {
    text.lines()
        .filter_map(|l| {
            let (head, rest) = l.split_once(':')?;
            let name = head.split_whitespace().nth(2)?;
            Some((
                name.to_string(),
                rest.split_whitespace().next()?.parse().ok()?,
            ))
        })
        .collect()
}

/// The base page size in bytes: sysconf for the live machine (`root` is
/// "/"), else the first `KernelPageSize:` of <root>/proc/self/smaps.
pub fn page_size(root: &Path) -> Option<u64> {
    if root == Path::new("/") {
        // SAFETY: sysconf has no preconditions.
        let size = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
        return u64::try_from(size).ok().filter(|&s| s > 0);
    }
    let smaps = std::fs::read_to_string(under(root, "/proc/self/smaps")).ok()?;
    kernel_page_size(&smaps)
}

/// The first `KernelPageSize:  4 kB` line of an smaps file, in bytes.
fn kernel_page_size(smaps: &str) -> Option<u64> {
    let rest = smaps
        .lines()
        .find_map(|l| l.strip_prefix("KernelPageSize:"))?;
    let kib: u64 = rest.split_whitespace().next()?.parse().ok()?;
    kib.checked_mul(1024)
}

/// hugetlb page sizes in bytes, ascending, from the hugepages-<N>kB
/// directories of /sys/kernel/mm/hugepages.
pub fn huge_page_sizes(root: &Path) -> Vec<u64> {
    let mut sizes: Vec<u64> = std::fs::read_dir(under(root, "/sys/kernel/mm/hugepages"))
        .map(|entries| {
            entries
                .filter_map(|e| e.ok())
                .filter_map(|e| hugepage_dir_bytes(e.file_name().to_str()?))
                .collect()
        })
        .unwrap_or_default();
    sizes.sort_unstable();
    sizes.dedup();
    sizes
}

/// "hugepages-2048kB" -> 2 MiB in bytes.
fn hugepage_dir_bytes(name: &str) -> Option<u64> {
    let kib: u64 = name
        .strip_prefix("hugepages-")?
        .strip_suffix("kB")?
        .parse()
        .ok()?;
    kib.checked_mul(1024)
}

/// The per-size THP directories' sizes ("64kB"), ascending: the N of
/// each hugepages-<N>kB directory (Linux 6.8+; none before).
pub fn thp_size_dirs(root: &Path) -> Vec<String> {
    let mut kib: Vec<u64> = std::fs::read_dir(under(root, THP))
        .map(|entries| {
            entries
                .filter_map(|e| e.ok())
                .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
                .filter_map(|e| hugepage_dir_bytes(e.file_name().to_str()?))
                .map(|b| b / 1024)
                .collect()
        })
        .unwrap_or_default();
    kib.sort_unstable();
    kib.into_iter().map(|k| format!("{k}kB")).collect()
}

/// The sizes ("64kB") whose hugepages-<N>kB/stats/ directory holds
/// counters (Linux 6.10+), ascending.
pub fn thp_stats_sizes(root: &Path) -> Vec<String> {
    thp_size_dirs(root)
        .into_iter()
        .filter(|s| {
            std::fs::read_dir(under(root, &format!("{THP}/hugepages-{s}/stats")))
                .is_ok_and(|mut d| d.next().is_some())
        })
        .collect()
}

/// Whether zswap's debugfs counters can be read: `None` on a kernel
/// without zswap, `Some(false)` where debugfs is not mounted. Linux 6.12
/// makes /sys/kernel/debug/zswap only when zswap is first enabled (a
/// run's `zswap` knob may do so after this is read), so a mounted debugfs
/// counts as readable too.
pub fn zswap_debugfs(root: &Path) -> Option<bool> {
    if !under(root, "/sys/module/zswap/parameters").is_dir() {
        return None;
    }
    Some(std::fs::read_dir(under(root, ZSWAP_DEBUGFS)).is_ok() || debugfs_mounted(root))
}

/// Whether debugfs is mounted at /sys/kernel/debug (/proc/self/mounts).
fn debugfs_mounted(root: &Path) -> bool {
    read_trimmed(root, "/proc/self/mounts").is_some_and(|mounts| {
        mounts.lines().any(|l| {
            let f: Vec<&str> = l.split(' ').collect();
            f.get(1) == Some(&"/sys/kernel/debug") && f.get(2) == Some(&"debugfs")
        })
    })
}

/// zswap's counters in debugfs.
pub const ZSWAP_DEBUGFS: &str = "/sys/kernel/debug/zswap";

/// The PMD-sized THP in bytes (hpage_pmd_size).
pub fn thp_pmd_size(root: &Path) -> Option<u64> {
    read_num(root, &format!("{THP}/hpage_pmd_size"))
}

/// The selected THP mode of `enabled` or `defrag` ("madvise", ...).
pub fn thp_setting(root: &Path, file: &str) -> Option<String> {
    read_trimmed(root, &format!("{THP}/{file}")).and_then(|s| selected(&s))
}

/// The selected word of a sysfs choice line: "always [madvise] never" ->
/// "madvise". A line holding a single bare word is that word.
pub fn selected(line: &str) -> Option<String> {
    if let Some(word) = line.split_whitespace().find_map(|w| {
        w.strip_prefix('[')
            .and_then(|w| w.strip_suffix(']'))
            .filter(|w| !w.is_empty())
    }) {
        return Some(word.to_string());
    }
    let mut words = line.split_whitespace();
    match (words.next(), words.next()) {
        (Some(w), None) if !w.contains(['[', ']']) => Some(w.to_string()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn node_meminfo_fields() {
        let text = "Node 1 MemTotal:       16384 kB\nNode 1 Active(anon):  100 kB\n\
                    Node 1 HugePages_Total:     0\n";
        let m = node_meminfo(text);
        assert_eq!(m.get("MemTotal"), Some(&16384));
        assert_eq!(m.get("Active(anon)"), Some(&100));
        assert_eq!(m.get("HugePages_Total"), Some(&0));
        assert_eq!(m.get("MemUsed"), None);
    }

    #[test]
    fn bracketed_selection() {
        for (text, want) in [
            ("always [madvise] never", Some("madvise")),
            (
                "always defer defer+madvise [madvise] never\n",
                Some("madvise"),
            ),
            ("[always] madvise never", Some("always")),
            (
                "always defer [defer+madvise] madvise never",
                Some("defer+madvise"),
            ),
            ("never", Some("never")),
            ("always madvise never", None),
            ("[]", None),
            ("", None),
        ] {
            assert_eq!(selected(text).as_deref(), want, "{text:?}");
        }
    }

    #[test]
    fn hugepage_dir_names() {
        assert_eq!(hugepage_dir_bytes("hugepages-2048kB"), Some(2 << 20));
        assert_eq!(hugepage_dir_bytes("hugepages-1048576kB"), Some(1 << 30));
        assert_eq!(hugepage_dir_bytes("hugepages-64kB"), Some(64 << 10));
        assert_eq!(hugepage_dir_bytes("hugepages-xkB"), None);
        assert_eq!(hugepage_dir_bytes("khugepaged"), None);
    }

    #[test]
    fn smaps_page_size() {
        let smaps = "00400000-0040b000 r-xp 00000000 08:01 1 /bin/cat\n\
                     Size:                 44 kB\n\
                     KernelPageSize:        4 kB\n\
                     MMUPageSize:           4 kB\n\
                     KernelPageSize:     2048 kB\n";
        assert_eq!(kernel_page_size(smaps), Some(4096));
        assert_eq!(kernel_page_size("Size: 4 kB\n"), None);
    }

    #[test]
    fn live_page_size_is_a_power_of_two() {
        let size = page_size(Path::new("/"));
        assert!(size.is_some_and(u64::is_power_of_two), "{size:?}");
    }
}
