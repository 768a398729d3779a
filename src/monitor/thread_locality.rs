//! Per-thread page locality: for each worker thread, the fraction of the
//! pages it works on that sit on the node of the CPU it last ran on, and a
//! sampler thread that records it over time so the time to converge can be
//! reported.
//!
//! Where each page is comes from move_pages(2) with `nodes` NULL: it moves
//! nothing and returns each page's node (or -ENOENT for a page not present
//! in that process's page tables, and, on the 6.1 kernel tried, for a page
//! whose PTE NUMA balancing has just made PROT_NONE to take a hint fault:
//! such a page counts on the node it was last seen on, since balancing
//! moves a page only when that fault comes). It is asked about an evenly spread
//! sample of at most `MAX_PAGES` pages per process and sample, so the cost
//! stays bounded whatever the region's size. The CPU a thread last ran on
//! is field 39 of /proc/PID/task/TID/stat.

use std::collections::BTreeMap;
use std::ops::Range;
use std::path::{Path, PathBuf};

use crate::error::Result;
use crate::exec::sys::page_nodes;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::exec::region::Region;

/// Pages asked about per process and sample, split over its threads'
/// distinct slices.
pub const MAX_PAGES: usize = 4096;

/// The thread ids of the workers, by global thread index, in shared memory
/// so that forked workers can publish them to the sampler (0 = not
/// started), and the CPU each thread ran its last pass on (+1, 0 = still
/// working): a finished thread waits, idle, wherever the scheduler puts
/// it, which says nothing about where it worked.
pub struct TidTable {
    mem: Region,
    n: usize,
}

impl TidTable {
    pub fn new(n: usize) -> Result<TidTable> {
        Ok(TidTable {
            mem: Region::shared(n.max(1) * 8)?,
            n,
        })
    }

    /// Called by worker thread `g` itself.
    pub fn publish(&self, g: usize) {
        if g < self.n {
            let tid = crate::exec::sys::gettid();
            self.mem.u32_at(g * 8).store(tid as u32, Ordering::Release);
        }
    }

    /// Called by worker thread `g` itself at the end of its last pass.
    pub fn finish(&self, g: usize) {
        if let Some(cpu) = crate::exec::sys::current_cpu()
            && g < self.n
        {
            self.mem.u32_at(g * 8 + 4).store(cpu + 1, Ordering::Release);
        }
    }

    pub fn get(&self, g: usize) -> Option<i32> {
        if g >= self.n {
            return None;
        }
        let tid = self.mem.u32_at(g * 8).load(Ordering::Acquire) as i32;
        (tid > 0).then_some(tid)
    }

    /// The CPU of thread `g`'s last pass, once it has finished.
    pub fn end_cpu(&self, g: usize) -> Option<usize> {
        if g >= self.n {
            return None;
        }
        let c = self.mem.u32_at(g * 8 + 4).load(Ordering::Acquire);
        (c > 0).then(|| c as usize - 1)
    }
}

/// What one process's threads work on: sampled page addresses and, per
/// thread (global index), the range of those addresses that is its work;
/// and the node each address was last seen on (negative: never).
#[derive(Debug, Clone, PartialEq)]
pub struct ProcessPlan {
    pub pid: i32,
    pub addrs: Vec<u64>,
    pub threads: Vec<(usize, Range<usize>)>,
    pub last: Vec<i32>,
}

/// Up to `budget` page addresses spread evenly over `len` bytes at `start`
/// (every page when it has no more).
pub fn spread(start: u64, len: u64, page: u64, budget: usize) -> Vec<u64> {
    let pages = (len / page.max(1)) as usize;
    let take = pages.min(budget.max(1));
    (0..take)
        .map(|i| start + (i * pages / take) as u64 * page)
        .collect()
}

impl ProcessPlan {
    /// `work` is (global thread index, slice start address, slice length);
    /// threads with the same slice (numa01: the whole region) share one
    /// set of sampled pages.
    pub fn new(pid: i32, work: &[(usize, u64, u64)], page: u64) -> ProcessPlan {
        let mut distinct: Vec<(u64, u64)> = work.iter().map(|&(_, s, l)| (s, l)).collect();
        distinct.sort_unstable();
        distinct.dedup();
        let budget = MAX_PAGES / distinct.len().max(1);
        let mut addrs = Vec::new();
        let mut ranges = BTreeMap::new();
        for &(s, l) in &distinct {
            let from = addrs.len();
            addrs.extend(spread(s, l, page, budget));
            ranges.insert((s, l), from..addrs.len());
        }
        let threads = work
            .iter()
            .map(|&(g, s, l)| (g, ranges[&(s, l)].clone()))
            .collect();
        ProcessPlan {
            pid,
            last: vec![-libc::ENOENT; addrs.len()],
            addrs,
            threads,
        }
    }

    /// Fills the pages move_pages could not place (negative status) with
    /// the node they were last seen on, and remembers the ones it placed.
    pub fn fill_from_last(&mut self, status: &mut [i32]) {
        for (s, last) in status.iter_mut().zip(self.last.iter_mut()) {
            if *s >= 0 {
                *last = *s;
            } else if *last >= 0 {
                *s = *last;
            }
        }
    }
}

/// Fraction of the present pages (status >= 0) on `node`; None when none
/// is present (a thread that has not touched its work yet).
pub fn fraction_on(status: &[i32], node: usize) -> Option<f64> {
    let present = status.iter().filter(|&&s| s >= 0).count();
    let local = status
        .iter()
        .filter(|&&s| s >= 0 && s as usize == node)
        .count();
    (present > 0).then(|| local as f64 / present as f64)
}

/// The CPU a task last ran on: field 39 of /proc/PID/task/TID/stat.
pub fn stat_cpu(stat: &str) -> Option<usize> {
    crate::machine::proc_stat::field(stat, 39)?.parse().ok()
}

/// The node of the CPU thread `tid` of `pid` last ran on.
pub fn thread_node(
    root: &Path,
    pid: i32,
    tid: i32,
    node_of: &BTreeMap<usize, usize>,
) -> Option<usize> {
    let path = root
        .join("proc")
        .join(pid.to_string())
        .join("task")
        .join(tid.to_string())
        .join("stat");
    let cpu = stat_cpu(&std::fs::read_to_string(path).ok()?)?;
    node_of.get(&cpu).copied()
}

/// One locality sample: seconds since the sampler started, the worst
/// thread's locality, the mean of the threads, the threads counted and
/// the sampled pages present.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Point {
    pub t: f64,
    pub locality: f64,
    pub mean: f64,
    pub threads: usize,
    pub pages: u64,
}

/// Worst and mean of the threads' localities, None for no thread.
pub fn worst_and_mean(localities: &[f64]) -> Option<(f64, f64)> {
    let worst = localities.iter().copied().reduce(f64::min)?;
    Some((
        worst,
        localities.iter().sum::<f64>() / localities.len() as f64,
    ))
}

/// Every thread's locality in one process given its pages' status and
/// each thread's node (None: not started or its CPU unknown; left out).
pub fn process_localities(
    plan: &ProcessPlan,
    status: &[i32],
    node: impl Fn(usize) -> Option<usize>,
) -> Vec<f64> {
    plan.threads
        .iter()
        .filter_map(|(g, r)| fraction_on(status.get(r.clone())?, node(*g)?))
        .collect()
}

/// One sample over every watched process, taken at `t`.
fn sample(
    root: &Path,
    plans: &mut [ProcessPlan],
    tids: &TidTable,
    node_of: &BTreeMap<usize, usize>,
    t: f64,
) -> Option<Point> {
    let mut all = Vec::new();
    let mut pages = 0;
    for plan in plans {
        let Some(mut status) = page_nodes(plan.pid, &plan.addrs) else {
            continue;
        };
        plan.fill_from_last(&mut status);
        pages += status.iter().filter(|&&s| s >= 0).count() as u64;
        all.extend(process_localities(plan, &status, |g| {
            match tids.end_cpu(g) {
                Some(cpu) => node_of.get(&cpu).copied(),
                None => thread_node(root, plan.pid, tids.get(g)?, node_of),
            }
        }));
    }
    let (locality, mean) = worst_and_mean(&all)?;
    Some(Point {
        t,
        locality,
        mean,
        threads: all.len(),
        pages,
    })
}

/// Seconds until the worst locality reached `threshold` and stayed there
/// to the last point; None if the last point is below it. (A first sample
/// taken before the threads reach their CPUs can be "local" by accident;
/// only what lasts counts as converged.)
pub fn converged_at(points: &[Point], threshold: f64) -> Option<f64> {
    let settled = match points.iter().rposition(|p| p.locality < threshold) {
        Some(last_below) => last_below + 1,
        None => 0,
    };
    points.get(settled).map(|p| p.t)
}

/// What the sampler watches.
pub struct Watch {
    pub root: PathBuf,
    pub plans: Vec<ProcessPlan>,
    pub tids: Arc<TidTable>,
    pub node_of: BTreeMap<usize, usize>,
}

/// A thread sampling locality every `interval` until stopped.
pub struct Sampler {
    stop: Arc<AtomicBool>,
    handle: std::thread::JoinHandle<(Vec<Point>, Watch)>,
    t0: std::time::Instant,
}

impl Sampler {
    pub fn start(watch: Watch, interval: std::time::Duration) -> Sampler {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let t0 = std::time::Instant::now();
        let handle = std::thread::spawn(move || {
            let mut w = watch;
            let mut points = Vec::new();
            let mut taken = 0u32;
            while !flag.load(Ordering::Acquire) {
                let t = t0.elapsed().as_secs_f64();
                points.extend(sample(&w.root, &mut w.plans, &w.tids, &w.node_of, t));
                taken += 1;
                let next = t0 + interval * taken;
                while !flag.load(Ordering::Acquire) && std::time::Instant::now() < next {
                    std::thread::sleep(std::time::Duration::from_millis(5));
                }
            }
            (points, w)
        });
        Sampler { stop, handle, t0 }
    }

    /// Stops the thread, takes one last sample (call it while the
    /// processes still exist; finished threads are judged by the CPU of
    /// their last pass) and returns every point.
    pub fn finish(self) -> Vec<Point> {
        self.stop.store(true, Ordering::Release);
        let Ok((mut points, mut w)) = self.handle.join() else {
            return Vec::new();
        };
        let t = self.t0.elapsed().as_secs_f64();
        points.extend(sample(&w.root, &mut w.plans, &w.tids, &w.node_of, t));
        points
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ENOENT: i32 = -libc::ENOENT;

    #[test]
    fn spreads_evenly_and_bounded() {
        assert_eq!(
            spread(0x1000, 4 * 4096, 4096, 100),
            vec![0x1000, 0x2000, 0x3000, 0x4000]
        );
        let s = spread(0, 1000 * 4096, 4096, 4);
        assert_eq!(s, vec![0, 250 * 4096, 500 * 4096, 750 * 4096]);
        assert!(spread(0, 100, 4096, 10).is_empty(), "less than a page");
    }

    #[test]
    fn plan_shares_one_sample_for_the_whole_region() {
        // numa01: two threads on the whole region of 10000 pages.
        let whole = ProcessPlan::new(7, &[(0, 0, 10000 * 4096), (1, 0, 10000 * 4096)], 4096);
        assert_eq!(whole.addrs.len(), MAX_PAGES);
        assert_eq!(whole.threads, vec![(0, 0..MAX_PAGES), (1, 0..MAX_PAGES)]);
        // numa02: one slice each, the budget split between them.
        let own = ProcessPlan::new(7, &[(2, 8192, 8192), (3, 0, 8192)], 4096);
        assert_eq!(own.addrs, vec![0, 4096, 8192, 12288]);
        assert_eq!(own.threads, vec![(2, 2..4), (3, 0..2)]);
    }

    #[test]
    fn per_thread_locality_from_page_status() {
        // Thread 0 on node 0, thread 1 on node 1, thread 2 not started.
        let plan = ProcessPlan {
            pid: 1,
            addrs: vec![0; 8],
            threads: vec![(0, 0..4), (1, 4..8), (2, 0..4)],
            last: vec![ENOENT; 8],
        };
        let status = [0, 0, 0, 1, 1, 0, ENOENT, ENOENT];
        let node = |g: usize| [Some(0), Some(1), None][g];
        let l = process_localities(&plan, &status, node);
        assert_eq!(l, vec![0.75, 0.5]);
        assert_eq!(worst_and_mean(&l), Some((0.5, 0.625)));
        // Nothing present yet: the thread is left out, not 100 % local.
        assert_eq!(fraction_on(&[ENOENT, ENOENT], 0), None);
        assert_eq!(worst_and_mean(&[]), None);
    }

    #[test]
    fn hidden_pages_count_where_last_seen() {
        let mut plan = ProcessPlan::new(1, &[(0, 0, 3 * 4096)], 4096);
        let mut first = [0, 1, ENOENT];
        plan.fill_from_last(&mut first);
        assert_eq!(first, [0, 1, ENOENT], "never seen: still unknown");
        // A sample taken while NUMA balancing has the first two PROT_NONE.
        let mut second = [ENOENT, ENOENT, 1];
        plan.fill_from_last(&mut second);
        assert_eq!(second, [0, 1, 1]);
        assert_eq!(plan.last, vec![0, 1, 1]);
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
    fn thread_node_reads_the_task_stat_of_a_tree() {
        let tmp = tempfile::tempdir().unwrap();
        let task = tmp.path().join("proc/5/task/6");
        std::fs::create_dir_all(&task).unwrap();
        let mut s = String::from("6 (w) R");
        for i in 4..=52 {
            s.push_str(&format!(" {}", if i == 39 { 3 } else { 0 }));
        }
        std::fs::write(task.join("stat"), s).unwrap();
        let node_of = BTreeMap::from([(3, 1)]);
        assert_eq!(thread_node(tmp.path(), 5, 6, &node_of), Some(1));
        assert_eq!(thread_node(tmp.path(), 5, 9, &node_of), None);
    }

    #[test]
    fn tid_table_keeps_the_cpu_of_the_last_pass() {
        let t = TidTable::new(2).unwrap();
        assert_eq!((t.get(0), t.end_cpu(0)), (None, None));
        t.publish(1);
        assert_eq!(t.get(1), Some(crate::exec::sys::gettid()));
        t.finish(1);
        assert!(t.end_cpu(1).is_some());
        assert_eq!((t.get(2), t.end_cpu(2)), (None, None), "out of range");
    }

    fn pts(ls: &[f64]) -> Vec<Point> {
        ls.iter()
            .enumerate()
            .map(|(i, &l)| Point {
                t: i as f64,
                locality: l,
                mean: l,
                threads: 1,
                pages: 1,
            })
            .collect()
    }

    #[test]
    fn convergence() {
        let p = pts(&[0.2, 0.5, 0.95, 0.9]);
        assert_eq!(converged_at(&p, 0.9), Some(2.0));
        assert_eq!(converged_at(&p, 0.99), None);
        // Local by accident at the first sample, remote ever after (what a
        // 2-node guest showed with numa_balancing 0): not converged.
        assert_eq!(converged_at(&pts(&[1.0, 0.0, 0.0]), 0.9), None);
        assert_eq!(converged_at(&[], 0.9), None);
    }

    #[test]
    fn live_move_pages_finds_own_pages() {
        let page = 4096;
        let buf = vec![1u8; 16 * page];
        let start = (buf.as_ptr() as u64).next_multiple_of(page as u64);
        let addrs = spread(start, 8 * page as u64, page as u64, 8);
        let me = std::process::id() as i32;
        if !Path::new("/proc/self/numa_maps").exists() {
            eprintln!("skipped: kernel without CONFIG_NUMA, no move_pages");
            return;
        }
        let status = page_nodes(me, &addrs).expect("move_pages on own pages");
        assert!(status.iter().all(|&s| s >= 0), "{status:?}");
        assert!(page_nodes(i32::MAX, &addrs).is_none(), "no such process");
    }
}
