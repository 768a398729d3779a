//! Page locality from /proc/PID/numa_maps: pages per node of one mapping,
//! the nodes a process's threads are running on (/proc/PID/task/*/stat),
//! and a sampler thread that records locality over time so the time to
//! converge can be reported. Every reader takes a root path for fixtures.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

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

/// The CPU a task last ran on: field 39 of /proc/PID/task/TID/stat.
pub fn stat_cpu(stat: &str) -> Option<usize> {
    // comm (field 2) may hold spaces and parentheses; fields resume after the last ')'.
    let rest = &stat[stat.rfind(')')? + 1..];
    rest.split_whitespace()
        .nth(39 - 3)
        .and_then(|s| s.parse().ok())
}

/// Nodes on which the threads of `pid` last ran, given CPU -> node.
pub fn thread_nodes(root: &Path, pid: i32, node_of: &BTreeMap<usize, usize>) -> BTreeSet<usize> {
    let Ok(dir) = std::fs::read_dir(proc_dir(root, pid).join("task")) else {
        return BTreeSet::new();
    };
    dir.filter_map(|e| e.ok())
        .filter_map(|e| std::fs::read_to_string(e.path().join("stat")).ok())
        .filter_map(|s| stat_cpu(&s))
        .filter_map(|cpu| node_of.get(&cpu).copied())
        .collect()
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

/// One locality sample: seconds since the sampler started, the lowest
/// locality over the watched processes, their mean, and the most pages
/// one of them maps.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Point {
    pub t: f64,
    pub locality: f64,
    pub mean: f64,
    pub pages: u64,
}

/// One sample over every watched process: (worst locality, mean locality,
/// most pages mapped). A process that maps none of the region yet (a
/// forked child before its first access) has no locality and is left out;
/// `None` when no process maps any page.
pub fn sample(
    root: &Path,
    pids: &[i32],
    start: u64,
    node_of: &BTreeMap<usize, usize>,
) -> Option<(f64, f64, u64)> {
    let mut localities = Vec::with_capacity(pids.len());
    let mut pages = 0;
    for &pid in pids {
        let p = read_pages(root, pid, start)?;
        let mapped: u64 = p.values().sum();
        pages = pages.max(mapped);
        if mapped > 0 {
            localities.push(locality(&p, &thread_nodes(root, pid, node_of)));
        }
    }
    let worst = localities.iter().copied().reduce(f64::min)?;
    let mean = localities.iter().sum::<f64>() / localities.len() as f64;
    Some((worst, mean, pages))
}

/// Seconds until locality reached `threshold` and stayed there to the last
/// point; None if the last point is below it. (A first sample taken before
/// the threads reach their CPUs can be "local" by accident; only what lasts
/// counts as converged.)
pub fn converged_at(points: &[Point], threshold: f64) -> Option<f64> {
    let settled = match points.iter().rposition(|p| p.locality < threshold) {
        Some(last_below) => last_below + 1,
        None => 0,
    };
    points.get(settled).map(|p| p.t)
}

/// A thread sampling locality every `interval` until stopped.
pub struct Sampler {
    stop: Arc<AtomicBool>,
    handle: std::thread::JoinHandle<Vec<Point>>,
    t0: std::time::Instant,
    root: PathBuf,
    pids: Vec<i32>,
    start: u64,
    node_of: BTreeMap<usize, usize>,
}

impl Sampler {
    pub fn start(
        root: PathBuf,
        pids: Vec<i32>,
        start: u64,
        node_of: BTreeMap<usize, usize>,
        interval: std::time::Duration,
    ) -> Sampler {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let t0 = std::time::Instant::now();
        let (r, p, n) = (root.clone(), pids.clone(), node_of.clone());
        let handle = std::thread::spawn(move || {
            let (root, pids, node_of) = (r, p, n);
            let mut points = Vec::new();
            while !flag.load(Ordering::Acquire) {
                let t = t0.elapsed().as_secs_f64();
                if let Some((locality, mean, pages)) = sample(&root, &pids, start, &node_of) {
                    points.push(Point {
                        t,
                        locality,
                        mean,
                        pages,
                    });
                }
                let next = t0 + interval * (points.len() as u32 + 1);
                while !flag.load(Ordering::Acquire) && std::time::Instant::now() < next {
                    std::thread::sleep(std::time::Duration::from_millis(5));
                }
            }
            points
        });
        Sampler {
            stop,
            handle,
            t0,
            root,
            pids,
            start,
            node_of,
        }
    }

    /// Stops the thread, takes one last sample (call it while the
    /// processes and their working threads still exist: locality is
    /// judged by the nodes the threads run on) and returns every point.
    pub fn finish(self) -> Vec<Point> {
        self.stop.store(true, Ordering::Release);
        let mut points = self.handle.join().unwrap_or_default();
        let t = self.t0.elapsed().as_secs_f64();
        if let Some((locality, mean, pages)) =
            sample(&self.root, &self.pids, self.start, &self.node_of)
        {
            points.push(Point {
                t,
                locality,
                mean,
                pages,
            });
        }
        points
    }
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
    fn stat_cpu_survives_odd_comm() {
        let mut s = String::from("42 (a (b) c) R");
        for i in 4..=52 {
            s.push_str(&format!(" {}", if i == 39 { 7 } else { 0 }));
        }
        assert_eq!(stat_cpu(&s), Some(7));
    }

    #[test]
    fn convergence() {
        let pts = [0.2, 0.5, 0.95, 0.9]
            .iter()
            .enumerate()
            .map(|(i, &l)| Point {
                t: i as f64,
                locality: l,
                mean: l,
                pages: 1,
            })
            .collect::<Vec<_>>();
        assert_eq!(converged_at(&pts, 0.9), Some(2.0));
        assert_eq!(converged_at(&pts, 0.99), None);
        // Local by accident at the first sample, remote ever after (what a
        // 2-node guest showed with numa_balancing 0): not converged.
        let early = [1.0, 0.0, 0.0].map(|l| Point {
            t: l,
            locality: l,
            mean: l,
            pages: 1,
        });
        assert_eq!(converged_at(&early, 0.9), None);
        assert_eq!(converged_at(&[], 0.9), None);
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
