//! Pages per node of one mapping from /proc/PID/numa_maps: every page of
//! the region, exact, for the before/after counts on the first-touch node
//! (locality over time, per thread and sampled, is thread_locality's).
//! Every reader takes a root path for fixtures.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Pages per node of one mapping, in base pages (numa_maps counts a THP as
/// its base pages).
pub type NodePages = BTreeMap<usize, u64>;

/// Parses one numa_maps line: (start address, pages per node).
pub fn parse_line(line: &str) -> Option<(u64, NodePages)> {
    let mut it = line.split_whitespace();
    let start = u64::from_str_radix(it.next()?, 16).ok()?;
    let mut pages = NodePages::new();
    for tok in it {
        if let Some(rest) = tok.strip_prefix('N')
            && let Some((node, n)) = rest.split_once('=')
            && let (Ok(node), Ok(n)) = (node.parse::<usize>(), n.parse::<u64>())
        {
            *pages.entry(node).or_default() += n;
        }
    }
    Some((start, pages))
}

/// Pages per node of the mapping that starts at `start` (empty if absent).
pub fn pages_of(text: &str, start: u64) -> NodePages {
    text.lines()
        .filter_map(parse_line)
        .find(|(s, _)| *s == start)
        .map(|(_, p)| p)
        .unwrap_or_default()
}

fn proc_dir(root: &Path, pid: i32) -> PathBuf {
    root.join("proc").join(pid.to_string())
}

/// Reads `<root>/proc/PID/numa_maps` for the mapping at `start`.
pub fn read_pages(root: &Path, pid: i32, start: u64) -> Option<NodePages> {
    let text = std::fs::read_to_string(proc_dir(root, pid).join("numa_maps")).ok()?;
    Some(pages_of(&text, start))
}

/// Fraction of the pages that sit on `nodes` (1.0 for no pages).
pub fn locality(pages: &NodePages, nodes: &BTreeSet<usize>) -> f64 {
    let total: u64 = pages.values().sum();
    if total == 0 {
        return 1.0;
    }
    let local: u64 = pages
        .iter()
        .filter(|(n, _)| nodes.contains(n))
        .map(|(_, p)| p)
        .sum();
    local as f64 / total as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    const MAPS: &str = "\
7f0000000000 default anon=10 dirty=10 N0=6 N1=4 kernelpagesize_kB=4
7f1000000000 default file=/dev/zero\\040(deleted) dirty=512 N2=512 kernelpagesize_kB=4
";

    #[test]
    fn parses_pages_per_node() {
        let p = pages_of(MAPS, 0x7f00_0000_0000);
        assert_eq!(p.get(&0), Some(&6));
        assert_eq!(p.get(&1), Some(&4));
        assert_eq!(pages_of(MAPS, 0x7f10_0000_0000).get(&2), Some(&512));
        assert!(pages_of(MAPS, 0x1234).is_empty());
    }

    #[test]
    fn locality_fraction() {
        let p = pages_of(MAPS, 0x7f00_0000_0000);
        assert_eq!(locality(&p, &BTreeSet::from([0])), 0.6);
        assert_eq!(locality(&p, &BTreeSet::from([0, 1])), 1.0);
        assert_eq!(locality(&NodePages::new(), &BTreeSet::new()), 1.0);
    }

    #[test]
    fn live_self_numa_maps_has_pages() {
        let text = std::fs::read_to_string("/proc/self/numa_maps").unwrap_or_default();
        if text.is_empty() {
            eprintln!("skipped: /proc/self/numa_maps absent (kernel without CONFIG_NUMA)");
            return;
        }
        let total: u64 = text
            .lines()
            .filter_map(parse_line)
            .map(|(_, p)| p.values().sum::<u64>())
            .sum();
        assert!(total > 0);
    }
}
