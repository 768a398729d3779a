//! mmap-lock: N threads fault in their own regions (write every page, then
//! MADV_DONTNEED it all and fault it in again) while M other threads of the
//! same process mmap, mprotect and munmap unrelated small regions at a set
//! rate. With per-VMA locks the fault rate should not collapse as M grows;
//! with faults under mmap_lock it does. Both rates are measured: faults by
//! the faulting threads' rusage, address-space changes by count, each over
//! its own threads' measured time.

use super::spec::rate;
use super::values::task_values;
use std::sync::atomic::{AtomicUsize, Ordering};

use super::stored::view_struct;
use serde::{Deserialize, Serialize};

use super::{Case, Measure, SampleData, Workload};
use crate::exec::region::{Pages, Region};
use crate::exec::{self, Mode, Task, TaskReport, clock, pin::Pin};
use crate::machine::Snapshot;

use super::options::page_size;
use super::spec::{Env, Options, Spec};
use crate::error::{Error, Result};
use crate::parse;

/// mmap-lock in the registry (`workload::REGISTRY`).
pub const SPEC: Spec = Spec {
    name: "mmap-lock",
    about: "Faults in N threads while M threads mmap/mprotect/munmap other regions",
    examples: "Examples:\n  vmscale run mmap-lock --tasks 1 --changers 0,1\n  \
vmscale run mmap-lock --tasks 1,2 --changers 0,1,2 --rate 0 --time 2",
    // The figures: the fault rate first, the change rate beside it.
    figures: &[
        rate("fault/s", "faults/s"),
        rate("changes/s", "changes/s"),
        rate("fault/s/task", "faults/s"),
    ],
    report: super::Report::MmapLock,
    quick,
    ..Spec::of::<Args>()
};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Config {
    /// Faulting thread counts (N).
    pub tasks: Vec<usize>,
    /// Address-space-changing thread counts (M), 0 for none.
    pub changers: Vec<usize>,
    /// Region each faulting thread faults, bytes.
    pub size: u64,
    /// mmap+mprotect+munmap cycles per second per changing thread; 0 = as
    /// fast as it can.
    pub rate: f64,
    /// Seconds the faulting threads run per sample.
    pub secs: f64,
    pub pin: Pin,
    pub page_size: u64,
}

view_struct! {
    /// What the mmap-lock report prints of a stored run's configuration.
    pub struct Stored {
        pub size: Option<u64>,
        pub rate: Option<f64>,
    }
}

task_values! {
    /// What each task reports in its values.
    enum V {
        RoleChanger,
        Pages,
        Changes,
    }
}
/// Bytes of each region a changer maps, protects and unmaps.
const CHANGE_LEN: usize = 64 << 10;

pub struct MmapLock {
    cfg: Config,
    machine: Snapshot,
}

impl MmapLock {
    pub fn new(cfg: Config, machine: Snapshot) -> Result<MmapLock> {
        super::check_tasks(&cfg.tasks)?;
        if cfg.changers.is_empty() || cfg.changers.iter().any(|&m| m > 1024) {
            return Err(Error::Input(
                "--changers must list counts from 0 to 1024, e.g. 0,1,2".into(),
            ));
        }
        super::check_timed(cfg.secs, 0.05, None, "--size", cfg.size, cfg.page_size)?;
        if !(cfg.rate >= 0.0 && cfg.rate <= 1e7) {
            return Err(Error::Input(
                "--rate must be 0 (unthrottled) to 10000000 cycles/s".into(),
            ));
        }
        super::check_pin(&cfg.pin, &cfg.tasks, &machine)?;
        Ok(MmapLock { cfg, machine })
    }
}

/// `run quick`: one faulting thread against 0 and 1 changers, 0.1 s each.
pub fn quick(_: &Snapshot) -> Vec<Vec<String>> {
    vec![super::spec::args("--size 4M --time 0.1")]
}

// `vmscale run mmap-lock`'s options; the harness options are added beside them.
#[derive(clap::Args, Debug, Clone)]
pub struct Args {
    /// Faulting thread counts (N): a list (1,2), a range or auto
    #[arg(long, default_value = "1")]
    pub tasks: String,
    /// Address-space-changing thread counts (M), e.g. 0,1,2
    #[arg(long, default_value = "0,1")]
    pub changers: String,
    /// Region each faulting thread faults in, again and again
    #[arg(long, default_value = "16M")]
    pub size: String,
    /// mmap+mprotect+munmap cycles per second per changing thread (0: unthrottled)
    #[arg(long, default_value_t = 1000.0)]
    pub rate: f64,
    /// Seconds the faulting threads run per sample
    #[arg(long, default_value_t = 1.0)]
    pub time: f64,
    /// Placement of the faulting threads: compact, spread, none, or a CPU list
    #[arg(long, default_value = "compact")]
    pub pin: Pin,
}

impl Options for Args {
    fn build(&self, env: &Env) -> Result<Box<dyn Workload>> {
        let (a, m) = (self, env.machine);
        let changers = a
            .changers
            .split(',')
            .map(str::trim)
            .filter(|c| !c.is_empty())
            .map(|c| {
                c.parse::<usize>().map_err(|_| {
                    Error::Input(format!(
                        "--changers '{}': '{c}' is not a count; use e.g. 0,1,2",
                        a.changers
                    ))
                })
            })
            .collect::<Result<Vec<usize>>>()?;
        let cfg = Config {
            tasks: super::options::tasks(&a.tasks, m)?,
            changers,
            size: parse::size_arg("--size", &a.size)?,
            rate: a.rate,
            secs: a.time,
            pin: a.pin.clone(),
            page_size: page_size(m),
        };
        env.made(cfg, |cfg| MmapLock::new(cfg, m.clone()))
    }
}

impl Measure for MmapLock {
    fn sample_s(&self, case: &Case) -> f64 {
        super::cost::timed_s(self.cfg.secs, case.tasks) + super::cost::touch_s(self.cfg.size)
    }

    fn cases(&self) -> Vec<Case> {
        let changers = self.cfg.changers.iter().map(|m| format!("m{m}"));
        Case::grid(changers, &self.cfg.tasks)
    }
    fn memory_need(&self) -> u64 {
        let n = self.cfg.tasks.iter().copied().max().unwrap_or(1) as u64;
        n.saturating_mul(self.cfg.size)
    }
    fn sample(&self, case: &Case) -> Result<SampleData> {
        let m: usize = case
            .variant
            .strip_prefix('m')
            .and_then(|v| v.parse().ok())
            .ok_or_else(|| Error::Failed(format!("bad mmap-lock case '{}'", case.variant)))?;
        let n = case.tasks;
        let mut cpus = exec::pin::plan(&self.cfg.pin, n, &self.machine)?;
        cpus.extend(std::iter::repeat_n(None, m));
        let finished = AtomicUsize::new(0);
        let out = exec::run_tasks(Mode::Thread, &cpus, |task| {
            if task.index < n {
                let r = self.fault(task);
                finished.fetch_add(1, Ordering::AcqRel);
                r
            } else {
                self.change(task, &finished, n)
            }
        })?;
        summarise(&out.reports)
    }
}

impl MmapLock {
    /// Faults the region in, drops it with MADV_DONTNEED, again, until the
    /// time is up.
    fn fault(&self, task: &Task) -> TaskReport {
        let mut r = TaskReport::default();
        let (len, ps) = (self.cfg.size as usize, self.cfg.page_size as usize);
        let region = match Region::private_noreserve(len) {
            Ok(region) => region,
            Err(e) => {
                r.fail(&e.to_string());
                return r;
            }
        };
        if let Err(e) = region.advise_thp(Pages::Base) {
            r.fail(&e.to_string());
            return r;
        }
        let p = region.ptr();
        task.wait_start();
        let before = task.usage();
        r.start_ns = clock::monotonic_ns();
        let end = r.start_ns + (self.cfg.secs * 1e9) as u64;
        let mut pages = 0u64;
        loop {
            for off in (0..len).step_by(ps) {
                // SAFETY: off < len, inside our mapping.
                unsafe { p.add(off).write_volatile(1) };
                pages += 1;
            }
            // SAFETY: our own mapping; its pages are dropped, the mapping stays.
            if unsafe { libc::madvise(p.cast(), len, libc::MADV_DONTNEED) } != 0 {
                r.fail(&format!("madvise(DONTNEED) failed: {}", exec::errno_text()));
                break;
            }
            if clock::monotonic_ns() >= end {
                break;
            }
        }
        r.end_ns = clock::monotonic_ns();
        r.set_usage(&task.usage().since(&before));
        r.values[V::Pages] = pages as f64;
        r
    }

    /// mmap, mprotect and munmap a small unrelated region at the set rate
    /// until every faulting thread is done; three changes per cycle.
    fn change(&self, task: &Task, finished: &AtomicUsize, faulters: usize) -> TaskReport {
        let mut r = TaskReport::default();
        r.values[V::RoleChanger] = 1.0;
        let gap = if self.cfg.rate > 0.0 {
            (1e9 / self.cfg.rate) as u64
        } else {
            0
        };
        task.wait_start();
        let before = task.usage();
        r.start_ns = clock::monotonic_ns();
        let mut changes = 0u64;
        let mut k = 0u64;
        while finished.load(Ordering::Acquire) < faulters {
            let region = match Region::private_noreserve(CHANGE_LEN) {
                Ok(region) => region,
                Err(e) => {
                    r.fail(&e.to_string());
                    break;
                }
            };
            if let Err(e) = region.protect(0, CHANGE_LEN, libc::PROT_READ) {
                r.fail(&e.to_string());
                break;
            }
            drop(region);
            changes += 3;
            k += 1;
            if gap > 0 {
                let due = r.start_ns + k * gap;
                let now = clock::monotonic_ns();
                if due > now {
                    std::thread::sleep(std::time::Duration::from_nanos(due - now));
                }
            }
        }
        r.end_ns = clock::monotonic_ns();
        r.set_usage(&task.usage().since(&before));
        r.values[V::Changes] = changes as f64;
        r
    }
}

fn summarise(reports: &[TaskReport]) -> Result<SampleData> {
    exec::first_error(reports)?;
    let secs = |r: &TaskReport| r.end_ns.saturating_sub(r.start_ns) as f64 / 1e9;
    let (changers, faulters): (Vec<&TaskReport>, Vec<&TaskReport>) = reports
        .iter()
        .partition(|r| r.values[V::RoleChanger] == 1.0);
    let fault_rates: Vec<f64> = faulters
        .iter()
        .map(|r| r.minflt as f64 / secs(r).max(1e-9))
        .collect();
    let total: f64 = fault_rates.iter().sum();
    let mut d = SampleData::default();
    let f = &mut d.figures;
    f.insert("fault/s".into(), total);
    f.insert(
        "fault/s/task".into(),
        total / fault_rates.len().max(1) as f64,
    );
    f.insert(
        "changes/s".into(),
        // From +0.0: no changers is a rate of 0, not the -0.0 of an empty sum.
        changers
            .iter()
            .map(|r| r.values[V::Changes] / secs(r).max(1e-9))
            .fold(0.0, |a, b| a + b),
    );
    f.insert(
        "faults".into(),
        faulters.iter().map(|r| r.minflt as f64).sum(),
    );
    f.insert(
        "pages".into(),
        faulters.iter().map(|r| r.values[V::Pages]).sum(),
    );
    f.insert(
        "changes".into(),
        changers.iter().map(|r| r.values[V::Changes]).sum(),
    );
    f.insert("changers".into(), changers.len() as f64);
    f.insert("wall".into(), exec::wall_ns(reports) as f64 / 1e9);
    d.tasks = super::task_rows(reports, |_, r| {
        [
            ("changer", r.values[V::RoleChanger]),
            ("faults", r.minflt as f64),
            ("pages", r.values[V::Pages]),
            ("changes", r.values[V::Changes]),
            ("system", r.sys_ns as f64 / 1e9),
        ]
    });
    Ok(d)
}
