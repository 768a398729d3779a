//! The autonumabench access patterns (seed 001), written afresh and sized
//! from the machine at run time:
//!
//! - numa01: 2 processes x (CPUs/2) threads; each process has its own
//!   private region and every thread zeroes its process's whole region,
//!   50 passes.
//! - numa01-threadlocal: the same, each thread zeroing only its own slice
//!   of its process's region, 1000 passes.
//! - numa02: 1 process, one thread per CPU, a private region first touched
//!   by the main thread; each thread zeroes its own slice, 800 passes.
//! - numa02-smt: numa02 with half the threads.
//!
//! Each worker process maps its region after the fork, as autonumabench
//! mallocs after it, and its main thread first touches it on the CPUs of
//! the first node that has CPUs (a memory-only node cannot run it), so
//! every page starts on one node. The
//! workers are then left to the scheduler and NUMA balancing. A sampler
//! thread in the parent records each worker thread's locality at an
//! interval (the share of a sample of the pages it works on that sit on
//! the node of its CPU; monitor::thread_locality).

use super::spec::{Fig, higher, lower};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::PathBuf;

use super::stored::view_struct;
use super::{Case, Measure, SampleData};
use crate::error::{Error, Result};
use crate::exec::{self, TaskReport, children, clock, shared::SharedBlock};
use crate::machine::Snapshot;
use crate::monitor::thread_locality::{self as tl, ProcessPlan, TidTable};
use crate::monitor::{numa_maps, vmstat};
use worker::{V, region_pages};

mod worker;

/// Which access pattern.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Pattern {
    Numa01,
    Numa01Threadlocal,
    Numa02,
    Numa02Smt,
}

impl Pattern {
    /// Its name: its subcommand and its entry in the registry.
    pub const fn name(&self) -> &'static str {
        match self {
            Pattern::Numa01 => "numa01",
            Pattern::Numa01Threadlocal => "numa01-threadlocal",
            Pattern::Numa02 => "numa02",
            Pattern::Numa02Smt => "numa02-smt",
        }
    }

    /// The pattern whose entry in the registry is `spec`.
    pub fn of(spec: &super::Spec) -> Result<Pattern> {
        [
            Pattern::Numa01,
            Pattern::Numa01Threadlocal,
            Pattern::Numa02,
            Pattern::Numa02Smt,
        ]
        .into_iter()
        .find(|p| p.name() == spec.name)
        .ok_or_else(|| Error::Failed(format!("{} is not a NUMA pattern", spec.name)))
    }

    /// autonumabench's pass counts.
    pub const fn original_loops(&self) -> u64 {
        match self {
            Pattern::Numa01 => 50,
            Pattern::Numa01Threadlocal => 1000,
            Pattern::Numa02 | Pattern::Numa02Smt => 800,
        }
    }

    /// Passes a default run makes over each thread's `share` of the
    /// region: autonumabench's, fewer where a thread would zero more in a
    /// sample than a numa01 thread does ([`DEFAULT_THREAD_BYTES`]). On 2
    /// CPUs numa01-threadlocal's and numa02-smt's one thread a process
    /// gets its whole region, and 1000 or 800 passes took 15-21 s a sample
    /// at load 14, a default run 66-88 s; `--loops` gives the original.
    pub fn default_loops(&self, share: u64) -> u64 {
        (DEFAULT_THREAD_BYTES / share.max(1)).clamp(1, self.original_loops())
    }

    /// autonumabench's region sizes, per process.
    pub const fn original_size(&self) -> u64 {
        match self {
            Pattern::Numa01 | Pattern::Numa01Threadlocal => 3 << 30,
            Pattern::Numa02 | Pattern::Numa02Smt => 1 << 30,
        }
    }

    /// Every thread zeroes the whole region (numa01) or only its slice.
    fn whole_region(&self) -> bool {
        matches!(self, Pattern::Numa01)
    }
}

/// The validated configuration, stored with the run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Config {
    pub pattern: Pattern,
    pub processes: usize,
    /// Threads per process.
    pub threads: usize,
    /// Each process's own region.
    pub size: u64,
    /// True since every process maps its own private region (runs stored
    /// before had numa01's one region shared by both processes).
    #[serde(default)]
    pub region_per_process: bool,
    pub loops: u64,
    /// How the size was chosen, for the report.
    pub sized_by: String,
    /// The node the first touch runs on, and its CPUs.
    pub first_node: usize,
    pub first_cpus: Vec<usize>,
    pub nodes_with_cpus: Vec<usize>,
    pub nodes_with_memory: Vec<usize>,
    /// Locality sampling interval and the convergence threshold (0..1].
    pub interval_ms: u64,
    pub threshold: f64,
    pub page_size: u64,
    /// kernel.numa_balancing when the run was planned.
    pub numa_balancing: Option<String>,
}

view_struct! {
    /// What the numa report prints of a stored run's configuration.
    pub struct Stored {
        pub processes: u64,
        pub threads: u64,
        pub size: u64,
        pub loops: u64,
        pub first_node: u64,
        pub region_per_process: Option<bool>,
        pub nodes_with_memory: Option<Vec<serde::de::IgnoredAny>>,
        pub threshold: Option<f64>,
        pub numa_balancing: Option<String>,
    }
}

impl Config {
    /// One node with memory: NUMA balancing has nothing to move.
    pub fn single_node(&self) -> bool {
        self.nodes_with_memory.len() <= 1
    }
}

/// The default region is autonumabench's divided by this.
pub const DEFAULT_SIZE_DIVISOR: u64 = 4;

/// What one numa01 thread zeroes in a default sample: its process's
/// default region, autonumabench's 50 passes. No pattern's default passes
/// make a thread zero more ([`Pattern::default_loops`]).
pub const DEFAULT_THREAD_BYTES: u64 =
    Pattern::Numa01.original_size() / DEFAULT_SIZE_DIVISOR * Pattern::Numa01.original_loops();

/// Plans a pattern on `m`: task counts, first-touch node and size.
pub fn plan(
    pattern: Pattern,
    size: Option<u64>,
    loops: Option<u64>,
    interval_ms: u64,
    threshold: f64,
    m: &Snapshot,
) -> Result<Config> {
    let cpus = m.cpus.len().max(1);
    let half = (cpus / 2).max(1);
    let (processes, threads) = match pattern {
        Pattern::Numa01 | Pattern::Numa01Threadlocal => (2, half),
        Pattern::Numa02 => (1, cpus),
        Pattern::Numa02Smt => (1, half),
    };
    let nodes_with_cpus: Vec<usize> = m
        .nodes
        .iter()
        .filter(|n| !n.cpus.is_empty())
        .map(|n| n.id)
        .collect();
    let nodes_with_memory: Vec<usize> = m
        .nodes
        .iter()
        .filter(|n| n.mem_total_kib.unwrap_or(0) > 0)
        .map(|n| n.id)
        .collect();
    // Without node information (a kernel without NUMA) there is one node 0.
    let (first_node, first_cpus, first_mem) = match m.nodes.iter().find(|n| !n.cpus.is_empty()) {
        Some(n) => (n.id, n.cpus.clone(), n.mem_total_kib.map(|k| k * 1024)),
        None => (0, m.online_cpus(), m.mem_total_kib.map(|k| k * 1024)),
    };
    let page = m.page_size.unwrap_or(4096);
    let avail = m.mem_available_kib.map(|k| k * 1024);
    if let Some(s) = size.filter(|&s| s < page) {
        return Err(Error::Input(format!(
            "{}: --size {} is less than one page ({}): raise --size",
            pattern.name(),
            crate::units::size(s),
            crate::units::size(page)
        )));
    }
    let size = match size {
        Some(s) => s / page * page,
        None => {
            // A quarter of autonumabench's region keeps a default run within
            // a minute on a small machine; --size gives the original. The
            // caps hold for all processes' regions together: every one is
            // first touched on the same node.
            let mut s = pattern.original_size() / DEFAULT_SIZE_DIVISOR;
            let procs = processes as u64;
            if let Some(fm) = first_mem {
                s = s.min(fm / 2 / procs);
            }
            if let Some(a) = avail {
                s = s.min(a / 4 / procs);
            }
            s / page * page
        }
    };
    let sized_by = match size {
        _ if size == pattern.original_size() => "autonumabench's size".to_string(),
        _ if size == pattern.original_size() / DEFAULT_SIZE_DIVISOR => {
            "a quarter of autonumabench's size (the default; --size for the original)".to_string()
        }
        _ => "--size, or capped (all processes' regions together) at half of the first \
              node's memory and a quarter of MemAvailable"
            .to_string(),
    };
    // Each process's threads share its region.
    let tasks = threads as u64;
    if size < page * tasks {
        return Err(Error::Input(format!(
            "{}: --size {} gives {} threads less than one page each: raise --size to at least {}",
            pattern.name(),
            crate::units::size(size),
            tasks,
            crate::units::size(page * tasks)
        )));
    }
    let share = if pattern.whole_region() {
        size
    } else {
        size / tasks
    };
    let loops = loops.unwrap_or(pattern.default_loops(share));
    if loops == 0 {
        return Err(Error::Input("--loops 0 does no work: use 1 or more".into()));
    }
    if !(threshold > 0.0 && threshold <= 1.0) {
        return Err(Error::Input(format!(
            "--threshold {threshold} is out of range: give a locality fraction in (0, 1], e.g. 0.9"
        )));
    }
    if interval_ms < 10 {
        return Err(Error::Input(
            "--interval must be at least 10 ms (each sample walks the workers' page tables)".into(),
        ));
    }
    Ok(Config {
        pattern,
        processes,
        threads,
        size,
        region_per_process: true,
        loops,
        sized_by,
        first_node,
        first_cpus,
        nodes_with_cpus,
        nodes_with_memory,
        interval_ms,
        threshold,
        page_size: page,
        numa_balancing: m.sysctls.get("kernel.numa_balancing").cloned().flatten(),
    })
}

pub struct Numa {
    cfg: Config,
    node_of: BTreeMap<usize, usize>,
}

impl Numa {
    pub fn new(cfg: Config, m: &Snapshot) -> Numa {
        let node_of = m
            .cpus
            .iter()
            .map(|c| (c.id, c.node.unwrap_or(cfg.first_node)))
            .collect();
        Numa { cfg, node_of }
    }

    /// Per worker process, the pages its threads work on in its own
    /// region (mapped at `bases[p]` in process `p`), for the sampler.
    fn plans(&self, pids: &[libc::pid_t], bases: &[u64]) -> Vec<ProcessPlan> {
        let n = self.cfg.threads;
        pids.iter()
            .zip(bases)
            .enumerate()
            .map(|(p, (&pid, &base))| {
                let work: Vec<_> = (0..n)
                    .map(|t| {
                        let (off, len) = self.slice(t);
                        (p * n + t, base + off as u64, len as u64)
                    })
                    .collect();
                ProcessPlan::new(pid, &work, self.cfg.page_size)
            })
            .collect()
    }

    /// (offset, length) in its process's region of the bytes thread `t`
    /// of that process zeroes.
    fn slice(&self, t: usize) -> (usize, usize) {
        let size = self.cfg.size as usize;
        if self.cfg.pattern.whole_region() {
            return (0, size);
        }
        let n = self.cfg.threads;
        let page = self.cfg.page_size as usize;
        let each = size / n / page * page;
        let off = t * each;
        let len = if t + 1 == n { size - off } else { each };
        (off, len)
    }
}

/// The figures every NUMA run reports; the first is the headline.
pub const FIGURES: &[Fig] = &[
    lower("elapsed", "s"),
    lower("user", "s"),
    lower("system", "s"),
    lower("numa_hint_faults", "faults"),
    higher("numa_hint_local%", "%"),
    lower("numa_pte_updates", "ptes"),
    lower("numa_pages_migrated", "pages"),
    lower("autonuma_cost", "units"),
    higher("locality_final", "fraction"),
];

impl Measure for Numa {
    fn sample_s(&self, case: &Case) -> f64 {
        use super::cost::{MEMSET_BPS, SAMPLE_S, tasks_s, touch_s};
        // Every thread passes over the whole region (numa01) or its slice,
        // all in parallel, `loops` times.
        let threads = self.cfg.threads.max(1) as u64;
        let pass = if self.cfg.pattern == Pattern::Numa01 {
            self.cfg.size
        } else {
            self.cfg.size / threads
        };
        SAMPLE_S
            + tasks_s(case.tasks)
            + touch_s(self.memory_need())
            + self.cfg.loops as f64 * pass as f64 / MEMSET_BPS
    }

    fn cases(&self) -> Vec<Case> {
        vec![Case::new(
            self.cfg.processes * self.cfg.threads,
            self.cfg.pattern.name(),
        )]
    }

    fn memory_need(&self) -> u64 {
        self.cfg.size * self.cfg.processes as u64
    }

    fn sample(&self, _case: &Case) -> Result<SampleData> {
        let procs = self.cfg.processes;
        let block = SharedBlock::new(procs)
            .map_err(|e| Error::Failed(format!("shared memory for tasks: {e}")))?;
        // Children wait here after their work so the last locality sample
        // sees their mappings.
        let done = SharedBlock::new(procs)
            .map_err(|e| Error::Failed(format!("shared memory for tasks: {e}")))?;
        let tids = std::sync::Arc::new(TidTable::new(procs * self.cfg.threads)?);
        let forked =
            children::Forked::spawn(procs, "process", |p| self.child(p, &block, &done, &tids))?;
        let pids = forked.pids().to_vec();
        // Every early return below drops `forked`, which kills the workers.
        while (block.arrived() as usize) < procs {
            if let Some(e) = forked.exited_early("before the start") {
                return Err(Error::Failed(e));
            }
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
        // A process that could not map or touch its region stops the run.
        let ready: Vec<TaskReport> = (0..procs).map(|i| block.get(i)).collect();
        exec::first_error_as(&ready, "process")?;
        let bases: Vec<u64> = ready.iter().map(|r| r.values[V::Base] as u64).collect();
        // Where the first touch put the pages: every process's own region.
        let first_touch = region_pages(&pids, &bases);
        let balancing = crate::machine::read_num::<i64>(
            std::path::Path::new("/"),
            "/proc/sys/kernel/numa_balancing",
        );
        let sampler = tl::Sampler::start(
            tl::Watch {
                root: PathBuf::from("/"),
                plans: self.plans(&pids, &bases),
                tids: tids.clone(),
                node_of: self.node_of.clone(),
            },
            std::time::Duration::from_millis(self.cfg.interval_ms),
        );
        let before = vmstat::read_live();
        let released = clock::monotonic_ns();
        block.release();
        while (done.arrived() as usize) < procs {
            // A signal vmscale caught (a plain `kill -INT`, or Ctrl-C, which
            // the workers' inherited handler would only note) ends the
            // sample now rather than after all its passes.
            let stop = forked.exited_early("before the start").or_else(|| {
                exec::signals::caught()
                    .map(|sig| format!("stopped by {}", exec::signals::name(sig)))
            });
            if let Some(e) = stop {
                done.release();
                let _ = sampler.finish();
                return Err(Error::Failed(e));
            }
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
        let points = sampler.finish();
        let at_end = region_pages(&pids, &bases);
        done.release();
        let reaped = forked.reap();
        let after = vmstat::read_live();
        let total = reaped?;
        let reports: Vec<TaskReport> = (0..procs).map(|i| block.get(i)).collect();
        exec::first_error_as(&reports, "process")?;
        let mut data = self.summarise(
            &reports,
            released,
            &total,
            &vmstat::delta(&before, &after),
            &points,
        );
        let f = &mut data.figures;
        // The region's pages on the first-touch node, as touched and at the
        // end: what NUMA balancing moved off it, seen in the page tables.
        let first_node = [self.cfg.first_node].into();
        for (key, pages) in [
            ("first_touch_local", first_touch),
            ("end_on_first_node", at_end),
        ] {
            if let Some(pages) = pages.filter(|p| !p.is_empty()) {
                f.insert(key.into(), numa_maps::locality(&pages, &first_node));
            }
        }
        if let Some(mode) = balancing {
            f.insert("numa_balancing".into(), mode as f64);
        }
        Ok(data)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::monitor::autonuma;

    fn fake() -> Snapshot {
        let root =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/fake-2s4n");
        Snapshot::read(&root)
    }

    #[test]
    fn sizes_and_places_on_four_nodes_with_a_memory_only_node() {
        let m = fake();
        let c = plan(Pattern::Numa01, None, None, 100, 0.9, &m).unwrap();
        assert_eq!((c.processes, c.threads), (2, 8));
        assert_eq!(c.first_node, 0);
        assert_eq!(c.first_cpus, vec![0, 1, 8, 9]);
        assert_eq!(c.nodes_with_cpus, vec![0, 1, 2, 3]);
        assert_eq!(c.nodes_with_memory, vec![0, 1, 2, 3, 4]);
        assert!(!c.single_node());
        assert_eq!(
            c.size,
            (3 << 30) / DEFAULT_SIZE_DIVISOR,
            "node 0 has 16 GiB, so the default quarter of the original 3 GiB fits"
        );
        let c = plan(Pattern::Numa02Smt, None, Some(3), 100, 0.9, &m).unwrap();
        assert_eq!((c.processes, c.threads, c.loops), (1, 8, 3));
        let c = plan(Pattern::Numa02, None, None, 100, 0.9, &m).unwrap();
        assert_eq!(c.threads, 16);
    }

    /// numa01's two regions count together: against MemAvailable when
    /// sizing, and in the memory the run is refused for.
    #[test]
    fn both_regions_count_against_memory() {
        let mut m = fake();
        m.mem_available_kib = Some(1 << 20);
        let c = plan(Pattern::Numa01Threadlocal, None, None, 100, 0.9, &m).unwrap();
        assert_eq!(c.size, 128 << 20, "a quarter of 1 GiB over 2 processes");
        assert_eq!(Numa::new(c, &m).memory_need(), 256 << 20);
        let c = plan(Pattern::Numa02, None, None, 100, 0.9, &m).unwrap();
        assert_eq!(c.size, 256 << 20, "one process: the whole quarter");
    }

    /// A default sample makes no thread zero more than a numa01 thread
    /// does, on 2 CPUs (one thread a process gets a whole region) as on
    /// 16; where a thread's share is small the original passes stay, and
    /// `--loops` is kept as given.
    #[test]
    fn default_passes_give_no_thread_more_than_numa01s() {
        let two_cpus = || {
            let mut m = fake();
            m.cpus.truncate(2);
            m
        };
        for m in [fake(), two_cpus()] {
            let numa01 = plan(Pattern::Numa01, None, None, 100, 0.9, &m).unwrap();
            assert_eq!(numa01.loops, Pattern::Numa01.original_loops());
            let most = numa01.size * numa01.loops;
            for p in [
                Pattern::Numa01Threadlocal,
                Pattern::Numa02,
                Pattern::Numa02Smt,
            ] {
                let c = plan(p, None, None, 100, 0.9, &m).unwrap();
                let share = c.size / c.threads as u64;
                assert!(
                    share * c.loops <= most,
                    "{} on {} CPUs",
                    p.name(),
                    m.cpus.len()
                );
                assert!(c.loops >= 1 && c.loops <= p.original_loops());
                let given = plan(p, None, Some(p.original_loops()), 100, 0.9, &m).unwrap();
                assert_eq!(given.loops, p.original_loops());
            }
        }
        let c = plan(Pattern::Numa02, None, None, 100, 0.9, &fake()).unwrap();
        assert_eq!(
            c.loops,
            Pattern::Numa02.original_loops(),
            "16 threads share 256 MiB: 16 MiB each, autonumabench's 800 passes"
        );
        let c = plan(Pattern::Numa02Smt, None, None, 100, 0.9, &two_cpus()).unwrap();
        assert!(c.loops < Pattern::Numa02Smt.original_loops());
    }

    #[test]
    fn slices_cover_the_region_exactly() {
        let m = fake();
        let c = plan(
            Pattern::Numa01Threadlocal,
            Some(10 << 20),
            None,
            100,
            0.9,
            &m,
        )
        .unwrap();
        let w = Numa::new(c, &m);
        // Each process's 8 threads split that process's own region.
        let n = 8;
        let mut end = 0;
        for g in 0..n {
            let (off, len) = w.slice(g);
            assert_eq!(off, end);
            assert!(len > 0);
            end = off + len;
        }
        assert_eq!(end, 10 << 20);
    }

    #[test]
    fn rejects_bad_input() {
        let m = fake();
        crate::error::assert_input(plan(Pattern::Numa02, Some(4096), None, 100, 0.9, &m));
        crate::error::assert_input(plan(Pattern::Numa02, None, Some(0), 100, 0.9, &m));
        crate::error::assert_input(plan(Pattern::Numa02, None, None, 100, 1.5, &m));
    }

    #[test]
    fn runs_and_counts_passes_exactly() {
        let m = crate::machine::live();
        let c = plan(
            Pattern::Numa01Threadlocal,
            Some(4 << 20),
            Some(7),
            20,
            0.9,
            &m,
        )
        .unwrap();
        let tasks = (c.processes * c.threads) as f64;
        let procs = c.processes as f64;
        let expected = tasks * 7.0;
        let w = Numa::new(c, &m);
        let d = w.sample(&w.cases()[0]).unwrap();
        assert_eq!(d.figures["passes"], expected);
        for k in autonuma::COUNTERS {
            assert!(d.figures.contains_key(*k), "{k}");
        }
        assert!(d.figures.contains_key("autonuma_cost"));
        if std::path::Path::new("/proc/self/numa_maps").exists() {
            // Each process has its own 4 MiB region: all 1024 pages of each
            // are sampled (fewer than MAX_PAGES per process).
            let pages = procs * (4 << 20) as f64 / m.page_size.unwrap_or(4096) as f64;
            assert_eq!(d.figures.get("pages_sampled"), Some(&pages));
            assert_eq!(d.figures.get("locality_threads"), Some(&tasks));
            if m.nodes.len() <= 1 {
                assert_eq!(d.figures.get("locality_final"), Some(&1.0));
                assert_eq!(d.figures.get("converged_s"), d.figures.get("series/000/t"));
            }
        }
    }

    /// numa01: every thread works on its process's whole region, sampled
    /// once per process (MAX_PAGES of its pages).
    #[test]
    fn numa01_samples_the_whole_region_per_thread() {
        let m = crate::machine::live();
        let c = plan(Pattern::Numa01, Some(32 << 20), Some(2), 20, 0.9, &m).unwrap();
        let tasks = (c.processes * c.threads) as f64;
        let procs = c.processes as f64;
        let w = Numa::new(c, &m);
        let d = w.sample(&w.cases()[0]).unwrap();
        if std::path::Path::new("/proc/self/numa_maps").exists() {
            let sampled = (tl::MAX_PAGES as f64) * procs;
            assert_eq!(d.figures.get("pages_sampled"), Some(&sampled));
            assert_eq!(d.figures.get("locality_threads"), Some(&tasks));
            if m.nodes.len() <= 1 {
                assert_eq!(d.figures.get("locality_final"), Some(&1.0));
            }
        }
    }
}
