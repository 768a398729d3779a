//! thp: transparent huge page faults after fragmentation, in the manner of
//! mmtests' thpscale and thpchallenge but on any number of CPUs. Phase 1
//! fragments memory (thp_fragment.rs); phase 2 faults a new region advised
//! MADV_HUGEPAGE in 2 MiB steps, each step timed by the clock and found
//! huge or not by mincore (did one write map the whole step?), with the
//! kernel's THP and compaction counters read around the phase.

use super::spec::{higher, lower};
use std::sync::Mutex;

use super::stored::view_struct;
use serde::{Deserialize, Serialize};

use super::options::{page_size, tasks};
use super::spec::{Env, Options, Spec};
use super::thp_fragment::{self, FileSet, FileSpec, Method};
use super::{Case, Measure, SampleData, Workload};
use crate::error::{Error, Result};
use crate::exec::region::Region;
use crate::exec::{self, Mode, Task, TaskReport, clock, pin::Pin};
use crate::machine::Snapshot;
use crate::monitor::vmstat;
use crate::parse;

/// thp in the registry (`workload::REGISTRY`).
pub const SPEC: Spec = Spec {
    name: "thp",
    about: "THP faults after fragmentation: latency, huge-page share, compaction",
    examples: "Examples:\n  vmscale run thp --size 1G\n  \
               vmscale run thp --size 60% --fragment anon,files,none\n  \
               vmscale run thp --size 1G --knob thp_defrag=madvise,never",
    figures: &[
        lower("latency", "us"),
        higher("huge%", "%"),
        lower("huge/p50", "us"),
        lower("base/p50", "us"),
        lower("thp_fault_fallback", "faults"),
        lower("compact_stall", "stalls"),
        lower("fragment_s", "s"),
    ],
    report: super::Report::Thp,
    size_flags: "a smaller --size or --fault-size",
    measures_knobs: &[
        "thp",
        "thp_defrag",
        "khugepaged_defrag",
        "compaction_proactiveness",
    ],
    quick,
    // A machine with THP off (or without it) refuses the run.
    quick_may_skip: true,
    ..Spec::of::<Args>()
};

/// `vmscale run thp`'s options; the harness options are added beside them.
#[derive(clap::Args, Debug, Clone)]
pub struct Args {
    /// How phase 1 fragments memory; a list (anon,none) runs each
    #[arg(long, value_enum, value_delimiter = ',', default_value = "anon")]
    pub fragment: Vec<Method>,
    /// Memory phase 1 touches: a size (1G) or a share of MemAvailable (70%)
    #[arg(long, default_value = "70%")]
    pub size: String,
    /// Memory phase 2 faults in huge-page steps, shared by the tasks
    /// [default: half of --size]
    #[arg(long)]
    pub fault_size: Option<String>,
    /// Tasks (threads) faulting at once: a list (1,2), a range or auto
    #[arg(long, default_value = "1")]
    pub tasks: String,
    /// Where --fragment files makes its private directory (a disk file
    /// system, not tmpfs) [default: the temporary directory]
    #[arg(long)]
    pub dir: Option<std::path::PathBuf>,
    /// Size of each small file of --fragment files
    #[arg(long, default_value = "16K")]
    pub file_size: String,
    #[command(flatten)]
    pub pinning: super::placement::Pinning,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Config {
    pub fragment: Vec<Method>,
    pub tasks: Vec<usize>,
    /// Bytes phase 1 touches.
    pub size: u64,
    /// Bytes phase 2 faults, all tasks together.
    pub fault_size: u64,
    /// One step: the PMD huge page size.
    pub step: u64,
    pub page_size: u64,
    pub files: Option<FileSpec>,
    pub pin: Pin,
    /// THP settings when the run was built (a `--knob` overrides them per
    /// variant; the report names those).
    pub thp_enabled: String,
    pub thp_defrag: String,
}

view_struct! {
    /// What the thp report prints of a stored run's configuration.
    pub struct Stored {
        pub size: u64,
        pub fault_size: u64,
        pub step: u64,
        pub thp_enabled: String,
        pub thp_defrag: String,
    }
}

pub struct Thp {
    cfg: Config,
    machine: Snapshot,
    /// `--fragment files`' files, made by the first sample that needs
    /// them and removed when the run ends.
    files: Mutex<Option<FileSet>>,
}

/// The kernel counters read around phase 2, as mmtests' vmstat report
/// names them.
pub const COUNTERS: [&str; 9] = [
    "thp_fault_alloc",
    "thp_fault_fallback",
    "thp_fault_fallback_charge",
    "compact_stall",
    "compact_fail",
    "compact_success",
    "compact_migrate_scanned",
    "compact_free_scanned",
    "pgmigrate_success",
];

/// Percentiles reported of each kind of step.
pub const PERCENTILES: [u32; 6] = [25, 50, 75, 90, 95, 99];

/// `--size 70%` or `--size 1G`: bytes, a share of MemAvailable.
fn size_or_share(flag: &str, text: &str, m: &Snapshot) -> Result<u64> {
    if text.trim().ends_with('%') {
        let share = parse::percent(text).map_err(|e| e.context(flag))?;
        let avail = m.mem_available_kib.unwrap_or(0) * 1024;
        return Ok((avail as f64 * share) as u64);
    }
    parse::size_arg(flag, text)
}

/// The THP setting a knob of the run sets, else the machine's.
fn setting(env: &Env, knob: &str, now: Option<&String>) -> Result<Vec<String>> {
    Ok(env
        .knobs
        .values(knob)
        .map(<[String]>::to_vec)
        .unwrap_or_else(|| vec![now.cloned().unwrap_or_else(|| "unknown".into())]))
}

impl Options for Args {
    fn build(&self, env: &Env) -> Result<Box<dyn Workload>> {
        let (a, m) = (self, env.machine);
        let fragment = a.fragment.clone();
        let size = size_or_share("--size", &a.size, m)?;
        let fault_size = match &a.fault_size {
            Some(t) => size_or_share("--fault-size", t, m)?,
            None => size / 2,
        };
        let files = if fragment.contains(&Method::Files) {
            let dir = a.dir.clone().unwrap_or_else(std::env::temp_dir);
            thp_fragment::check_dir(&dir)?;
            Some(FileSpec {
                dir,
                file_size: parse::size_arg("--file-size", &a.file_size)?,
            })
        } else {
            None
        };
        for enabled in setting(env, "thp", m.thp_enabled.as_ref())? {
            if enabled != "always" && enabled != "madvise" {
                return Err(Error::Refused(format!(
                    "thp faults need /sys/kernel/mm/transparent_hugepage/enabled set to always \
                     or madvise (it is {enabled}): set it, or run with --knob thp=madvise"
                )));
            }
        }
        let cfg = Config {
            fragment,
            tasks: tasks(&a.tasks, m)?,
            size,
            fault_size,
            step: m.thp_pmd_size.ok_or_else(|| {
                Error::Refused(
                    "this kernel has no transparent huge pages \
                     (/sys/kernel/mm/transparent_hugepage/hpage_pmd_size is missing)"
                        .into(),
                )
            })?,
            page_size: page_size(m),
            files,
            pin: a.pinning.pin.clone(),
            thp_enabled: m.thp_enabled.clone().unwrap_or_else(|| "unknown".into()),
            thp_defrag: m.thp_defrag.clone().unwrap_or_else(|| "unknown".into()),
        };
        env.made(cfg, |cfg| Thp::new(cfg, m.clone()))
    }
}

impl Thp {
    pub fn new(cfg: Config, machine: Snapshot) -> Result<Thp> {
        super::check_tasks(&cfg.tasks)?;
        let fragments = cfg.fragment.iter().any(|&f| f != Method::None);
        if fragments && cfg.size < cfg.step {
            return Err(Error::Input(format!(
                "--size {} is less than one {} block: nothing to fragment; use a larger \
                 --size, or --fragment none",
                crate::units::size(cfg.size),
                crate::units::size(cfg.step)
            )));
        }
        let most = cfg.tasks.iter().copied().max().unwrap_or(1) as u64;
        if cfg.fault_size < most * cfg.step {
            return Err(Error::Input(format!(
                "--fault-size {} gives a task less than one {} step: fault at least {} \
                 (one step per task), e.g. a larger --size",
                crate::units::size(cfg.fault_size),
                crate::units::size(cfg.step),
                crate::units::size(most * cfg.step),
            )));
        }
        if let Some(f) = &cfg.files
            && (f.file_size < cfg.page_size || f.file_size > cfg.step)
        {
            return Err(Error::Input(format!(
                "--file-size {} is out of range: use one page ({}) up to {}",
                crate::units::size(f.file_size),
                cfg.page_size,
                crate::units::size(cfg.step)
            )));
        }
        super::check_pin(&cfg.pin, &cfg.tasks, &machine)?;
        Ok(Thp {
            cfg,
            machine,
            files: Mutex::new(None),
        })
    }

    /// One task's phase 2: its share of the fault region in steps; each
    /// step's nanoseconds and whether one write mapped all of it.
    fn task(&self, task: &Task, steps_out: &Mutex<Vec<Vec<Step>>>, n: usize) -> TaskReport {
        let mut r = TaskReport::default();
        let step = self.cfg.step as usize;
        let ps = self.cfg.page_size as usize;
        let count = (self.cfg.fault_size / n as u64 / self.cfg.step) as usize;
        let region = match Region::private(count * step, super::region::Pages::Huge, step) {
            Ok(region) => region,
            Err(e) => {
                r.fail(&e.to_string());
                return r;
            }
        };
        let mut steps = Vec::with_capacity(count);
        let mut vec = vec![0u8; step / ps];
        task.wait_start();
        let before = task.usage();
        r.start_ns = clock::monotonic_ns();
        for i in 0..count {
            // SAFETY: every offset below is inside step i of the region.
            let base = unsafe { region.ptr().add(i * step) };
            let t0 = clock::monotonic_ns();
            // SAFETY: as above.
            unsafe { base.write_volatile(1) };
            let t1 = clock::monotonic_ns();
            // Untimed: did that one fault map the whole step?
            // SAFETY: vec has a byte per page of the step, which is ours.
            let ok = unsafe { libc::mincore(base.cast(), step, vec.as_mut_ptr()) } == 0;
            let huge = ok && vec.iter().all(|&b| b & 1 == 1);
            let t2 = clock::monotonic_ns();
            for off in (ps..step).step_by(ps) {
                // SAFETY: off < step, inside step i.
                unsafe { base.add(off).write_volatile(1) };
            }
            let t3 = clock::monotonic_ns();
            steps.push(Step {
                ns: (t1 - t0) + (t3 - t2),
                huge,
            });
        }
        r.end_ns = clock::monotonic_ns();
        r.set_usage(&task.usage().since(&before));
        r.values[0] = region.huge_bytes().map_or(f64::NAN, |b| b as f64);
        if let Ok(mut all) = steps_out.lock() {
            all[task.index] = steps;
        }
        r
    }
}

/// One 2 MiB step of phase 2.
#[derive(Debug, Clone, Copy)]
pub struct Step {
    pub ns: u64,
    pub huge: bool,
}

/// The nearest-rank percentile `p` of ascending `sorted` (a measured
/// value, never interpolated).
pub fn percentile(sorted: &[u64], p: u32) -> Option<u64> {
    if sorted.is_empty() {
        return None;
    }
    let rank = (p as usize * sorted.len()).div_ceil(100).max(1);
    Some(sorted[rank - 1])
}

/// Latency figures of one kind of step ("base", "huge" or "all"), in
/// microseconds: count, min, percentiles, max, mean.
pub fn latency_figures(kind: &str, mut ns: Vec<u64>, out: &mut SampleData) {
    ns.sort_unstable();
    out.figures.insert(format!("{kind}/steps"), ns.len() as f64);
    if ns.is_empty() {
        return;
    }
    let us = |v: u64| v as f64 / 1e3;
    out.figures.insert(format!("{kind}/min"), us(ns[0]));
    for p in PERCENTILES {
        if let Some(v) = percentile(&ns, p) {
            out.figures.insert(format!("{kind}/p{p}"), us(v));
        }
    }
    out.figures
        .insert(format!("{kind}/max"), us(ns[ns.len() - 1]));
    let mean = ns.iter().sum::<u64>() as f64 / ns.len() as f64;
    out.figures.insert(format!("{kind}/mean"), mean / 1e3);
}

/// `run quick`: 64 MiB fragmented, 32 MiB faulted.
pub fn quick(_: &Snapshot) -> Vec<Vec<String>> {
    vec![super::spec::args("--size 64M")]
}

impl Measure for Thp {
    fn cases(&self) -> Vec<Case> {
        Case::grid(
            self.cfg.fragment.iter().map(|f| f.as_str()),
            &self.cfg.tasks,
        )
    }
    fn memory_need(&self) -> u64 {
        // Phase 1 touches all of --size and keeps half; phase 2 adds the
        // fault region to what is kept.
        let size = if self.cfg.fragment == [Method::None] {
            0
        } else {
            self.cfg.size
        };
        size.max(size / 2 + self.cfg.fault_size)
    }
    fn sample_s(&self, case: &Case) -> f64 {
        // Phase 1 touches --size (none: nothing), phase 2 the fault region.
        let size = if case.variant == Method::None.as_str() {
            0
        } else {
            self.cfg.size
        };
        super::cost::default_s(size + self.cfg.fault_size, case.tasks)
    }
    fn sample(&self, case: &Case) -> Result<SampleData> {
        let method = Method::of_case(&case.variant)?;
        let cpus = exec::pin::plan(&self.cfg.pin, case.tasks, &self.machine)?;
        let mut files = self
            .files
            .lock()
            .map_err(|_| Error::Failed("thp: the file set's lock is poisoned".into()))?;
        if method == Method::Files
            && files.is_none()
            && let Some(spec) = &self.cfg.files
        {
            *files = Some(FileSet::create(spec)?);
        }
        let t0 = clock::monotonic_ns();
        let held = thp_fragment::fragment(
            method,
            self.cfg.size,
            self.cfg.page_size as usize,
            files.as_mut().filter(|_| method == Method::Files),
        )?;
        let fragment_s = (clock::monotonic_ns() - t0) as f64 / 1e9;
        let steps = Mutex::new(vec![Vec::new(); case.tasks]);
        let before = vmstat::read_live();
        let out = exec::run_tasks(Mode::Thread, &cpus, |task| {
            self.task(task, &steps, case.tasks)
        })?;
        let after = vmstat::read_live();
        let held_bytes = held.bytes;
        drop(held);
        exec::first_error(&out.reports)?;
        let steps: Vec<Step> = steps
            .into_inner()
            .map_err(|_| Error::Failed("thp: a task panicked".into()))?
            .into_iter()
            .flatten()
            .collect();
        let mut data = SampleData::default();
        let huge = steps.iter().filter(|s| s.huge).count();
        let all: Vec<u64> = steps.iter().map(|s| s.ns).collect();
        let mean = all.iter().sum::<u64>() as f64 / all.len().max(1) as f64;
        data.figures.insert("latency".into(), mean / 1e3);
        data.figures.insert(
            "huge%".into(),
            huge as f64 * 100.0 / steps.len().max(1) as f64,
        );
        latency_figures("all", all, &mut data);
        let kind = |h: bool| steps.iter().filter(|s| s.huge == h).map(|s| s.ns).collect();
        latency_figures("huge", kind(true), &mut data);
        latency_figures("base", kind(false), &mut data);
        for c in COUNTERS {
            let d = after
                .get(c)
                .zip(before.get(c))
                .map(|(a, b)| a.saturating_sub(*b));
            data.figures.insert(c.into(), d.unwrap_or(0) as f64);
        }
        data.figures.insert("fragment_s".into(), fragment_s);
        data.figures.insert("held_bytes".into(), held_bytes as f64);
        let smaps: f64 = out.reports.iter().map(|r| r.values[0]).sum();
        data.figures.insert("smaps_huge_bytes".into(), smaps);
        let minflt: u64 = out.reports.iter().map(|r| r.minflt).sum();
        data.figures.insert("minflt".into(), minflt as f64);
        data.figures
            .insert("wall".into(), exec::wall_ns(&out.reports) as f64 / 1e9);
        Ok(data)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_rank_percentiles_are_values_taken() {
        let v: Vec<u64> = (1..=10).collect();
        assert_eq!(percentile(&v, 50), Some(5));
        assert_eq!(percentile(&v, 90), Some(9));
        assert_eq!(percentile(&v, 99), Some(10));
        assert_eq!(percentile(&v, 25), Some(3));
        assert_eq!(percentile(&[7], 99), Some(7));
        assert_eq!(percentile(&[], 50), None);
    }

    #[test]
    fn latency_figures_split_by_kind_and_skip_empty_ones() {
        let mut d = SampleData::default();
        latency_figures("huge", vec![3000, 1000, 2000], &mut d);
        latency_figures("base", vec![], &mut d);
        assert_eq!(d.figures["huge/steps"], 3.0);
        assert_eq!(d.figures["huge/min"], 1.0);
        assert_eq!(d.figures["huge/p50"], 2.0);
        assert_eq!(d.figures["huge/max"], 3.0);
        assert_eq!(d.figures["huge/mean"], 2.0);
        assert_eq!(d.figures["base/steps"], 0.0);
        assert!(!d.figures.contains_key("base/p50"));
    }
}
