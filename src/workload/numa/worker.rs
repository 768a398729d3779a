//! A NUMA worker process (what each forked process of numa01/numa02 runs:
//! map its own region, first touch it on the first node, run its threads'
//! passes) and the figures the parent makes of their reports.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};

use super::Numa;
use crate::error::{Error, Result};
use crate::exec::region::Region;
use crate::exec::{self, TaskReport, clock, shared::SharedBlock};
use crate::model::SampleData;
use crate::monitor::thread_locality::{self as tl, TidTable};
use crate::monitor::{autonuma, numa_maps};
use crate::workload::values::task_values;

task_values! {
    /// What each task reports in its values.
    pub(super) enum V {
        Passes,
        /// Where the process mapped its region, for the parent's samplers.
        Base,
    }
}

impl Numa {
    /// One worker process: maps its own region and first touches it on the
    /// first node's CPUs, reports where it mapped it, barrier, threads.
    /// Its report is in `block` slot `p` when it arrives at
    /// `done`; it stays until `done` is released, so the parent's last
    /// locality sample still finds its pages. Each thread records the CPU
    /// of its last pass: where it waits afterwards is the scheduler's
    /// choice, not where it worked.
    pub(super) fn child(&self, p: usize, block: &SharedBlock, done: &SharedBlock, tids: &TidTable) {
        let mut r = TaskReport::default();
        let region = Guarded::map(self.cfg.size as usize, self.cfg.page_size as usize)
            .and_then(|g| on_cpus(&self.cfg.first_cpus, || g.touch()).map(|_| g));
        let region = match region {
            Ok(g) => g,
            Err(e) => {
                r.fail(&e.to_string());
                block.put(p, r);
                block.arrive();
                done.arrive();
                done.wait_release();
                return;
            }
        };
        r.values[V::Base] = region.data() as u64 as f64;
        block.put(p, r);
        block.arrive();
        block.wait_release();
        let before = clock::usage(clock::Who::Process);
        r.start_ns = clock::monotonic_ns();
        let passes = AtomicU64::new(0);
        let finished = AtomicU64::new(0);
        let base = region.data() as usize;
        std::thread::scope(|s| {
            for t in 0..self.cfg.threads {
                let g = p * self.cfg.threads + t;
                let (off, len) = self.slice(t);
                let (passes, finished, loops) = (&passes, &finished, self.cfg.loops);
                s.spawn(move || {
                    tids.publish(g);
                    for _ in 0..loops {
                        let ptr = std::hint::black_box(base) as *mut u8;
                        // SAFETY: off..off+len lies inside the region's data pages.
                        unsafe { std::ptr::write_bytes(ptr.add(off), 0, len) };
                        passes.fetch_add(1, Ordering::Relaxed);
                    }
                    tids.finish(g);
                    finished.fetch_add(1, Ordering::AcqRel);
                    done.wait_release();
                });
            }
            while finished.load(Ordering::Acquire) < self.cfg.threads as u64 {
                std::thread::sleep(std::time::Duration::from_micros(200));
            }
            r.end_ns = clock::monotonic_ns();
            r.set_usage(&clock::usage(clock::Who::Process).since(&before));
            r.values[V::Passes] = passes.load(Ordering::Relaxed) as f64;
            block.put(p, r);
            done.arrive();
        });
    }

    pub(super) fn summarise(
        &self,
        reports: &[TaskReport],
        released: u64,
        total: &clock::Usage,
        delta: &BTreeMap<String, i64>,
        points: &[tl::Point],
    ) -> SampleData {
        let end = reports.iter().map(|r| r.end_ns).max().unwrap_or(released);
        let mut d = SampleData::default();
        let f = &mut d.figures;
        f.insert("elapsed".into(), end.saturating_sub(released) as f64 / 1e9);
        f.insert(
            "user".into(),
            reports.iter().map(|r| r.user_ns as f64).sum::<f64>() / 1e9,
        );
        f.insert(
            "system".into(),
            reports.iter().map(|r| r.sys_ns as f64).sum::<f64>() / 1e9,
        );
        f.insert("user_total".into(), total.user_ns as f64 / 1e9);
        f.insert("system_total".into(), total.sys_ns as f64 / 1e9);
        f.insert(
            "passes".into(),
            reports.iter().map(|r| r.values[V::Passes]).sum(),
        );
        f.insert(
            "minflt".into(),
            reports.iter().map(|r| r.minflt as f64).sum(),
        );
        f.extend(autonuma::figures(delta));
        f.insert("locality_samples".into(), points.len() as f64);
        if let Some(last) = points.last() {
            f.insert("locality_final".into(), last.locality);
            f.insert("locality_mean_final".into(), last.mean);
            f.insert("locality_threads".into(), last.threads as f64);
            f.insert("pages_sampled".into(), last.pages as f64);
        }
        if let Some(min) = points.iter().map(|p| p.locality).reduce(f64::min) {
            f.insert("locality_min".into(), min);
        }
        if let Some(t) = tl::converged_at(points, self.cfg.threshold) {
            f.insert("converged_s".into(), t);
        }
        for (i, p) in thin(points, 60).iter().enumerate() {
            f.insert(format!("series/{i:03}/t"), p.t);
            f.insert(format!("series/{i:03}/locality"), p.locality);
            f.insert(format!("series/{i:03}/mean"), p.mean);
        }
        d.tasks = reports
            .iter()
            .map(|r| {
                crate::workload::task_row([
                    ("wall", (r.end_ns.saturating_sub(r.start_ns)) as f64 / 1e9),
                    ("user", r.user_ns as f64 / 1e9),
                    ("system", r.sys_ns as f64 / 1e9),
                    ("passes", r.values[V::Passes]),
                ])
            })
            .collect();
        d
    }
}

/// At most `n` points, evenly spread, always keeping the last.
fn thin(points: &[tl::Point], n: usize) -> Vec<tl::Point> {
    if points.len() <= n {
        return points.to_vec();
    }
    let step = points.len().div_ceil(n);
    let mut v: Vec<_> = points.iter().step_by(step).copied().collect();
    if let Some(&last) = points.last()
        && v.last() != Some(&last)
    {
        v.push(last);
    }
    v
}

/// Pages per node of every process's own region together, from numa_maps
/// (None when a process's numa_maps cannot be read).
pub(super) fn region_pages(pids: &[libc::pid_t], bases: &[u64]) -> Option<numa_maps::NodePages> {
    let mut all = numa_maps::NodePages::new();
    for (&pid, &base) in pids.iter().zip(bases) {
        for (node, n) in numa_maps::read_pages(std::path::Path::new("/"), pid, base)? {
            *all.entry(node).or_default() += n;
        }
    }
    Some(all)
}

/// The mapping: private anonymous data pages between two PROT_NONE guard
/// pages, so the data is a VMA of its own whose start numa_maps lists.
struct Guarded {
    map: Region,
    page: usize,
    len: usize,
}

impl Guarded {
    fn map(len: usize, page: usize) -> Result<Guarded> {
        let map = Region::map(
            len + 2 * page,
            libc::PROT_NONE,
            libc::MAP_PRIVATE | libc::MAP_NORESERVE,
            None,
        )?;
        // Only the data pages become accessible.
        map.protect(page, len, libc::PROT_READ | libc::PROT_WRITE)?;
        Ok(Guarded { map, page, len })
    }

    /// The first data byte.
    fn data(&self) -> *mut u8 {
        // SAFETY: the data pages start one page into the mapping.
        unsafe { self.map.ptr().add(self.page) }
    }

    /// First touch: zero every byte (faults every page in on this CPU's node).
    fn touch(&self) -> Result<()> {
        // SAFETY: data..data+len is readable and writable.
        unsafe { std::ptr::write_bytes(self.data(), 0, self.len) };
        Ok(())
    }
}

/// Runs `f` with the calling thread allowed only on `cpus`, then restores
/// the thread's previous affinity.
fn on_cpus<T>(cpus: &[usize], f: impl FnOnce() -> Result<T>) -> Result<T> {
    let size = std::mem::size_of::<libc::cpu_set_t>();
    // SAFETY: cpu_set_t is plain data; CPU_SET indexes are checked against CPU_SETSIZE.
    unsafe {
        let mut old: libc::cpu_set_t = std::mem::zeroed();
        if libc::sched_getaffinity(0, size, &mut old) != 0 {
            return Err(Error::Failed(format!(
                "sched_getaffinity: {}",
                exec::errno_text()
            )));
        }
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        for &c in cpus.iter().filter(|&&c| c < libc::CPU_SETSIZE as usize) {
            libc::CPU_SET(c, &mut set);
        }
        if libc::sched_setaffinity(0, size, &set) != 0 {
            return Err(Error::Failed(format!(
                "placing the first touch on CPUs {}: {}",
                crate::machine::cpulist::format(cpus),
                exec::errno_text()
            )));
        }
        let out = f();
        libc::sched_setaffinity(0, size, &old);
        out
    }
}
