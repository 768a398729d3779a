//! churn (seed 004): for a fixed time each task loops mmap, touch every
//! page, munmap: zero-fill-on-demand faults with their teardown. Each task
//! samples its own fault count (rusage) about once a second with the real
//! timestamp of each reading, so rates never assume the interval.

use super::spec::rate;
use super::stored::view_struct;
use super::values::task_values;
use serde::{Deserialize, Serialize};

use super::{Case, Measure, SampleData, Workload};
use crate::exec::region::Region;
use crate::exec::{self, Mode, Task, TaskReport, clock};
use crate::machine::Snapshot;

use super::options::page_size;
use super::placement::{Placed, Placement};
use super::spec::{Env, Options, Spec};
use super::timed::Timed;
use crate::error::Result;
use crate::parse;

/// churn in the registry (`workload::REGISTRY`).
pub const SPEC: Spec = Spec {
    name: "churn",
    about: "Timed mmap/touch/munmap loop: zfod faults/s per task and in total",
    examples: "Examples:\n  vmscale run churn --tasks auto --time 5\n  \
vmscale run churn --tasks 1-2 --mode process --chunk 4M --time 2 --reps 3",
    mode: Some(Mode::Process),
    figures: &[
        rate("zfod/s", "faults/s"),
        rate("zfod/s/task", "faults/s"),
        rate("task_min", "faults/s"),
        rate("task_max", "faults/s"),
    ],
    report: super::Report::Churn,
    size_flags: "a smaller --chunk or fewer --tasks",
    quick,
    ..Spec::of::<Args>()
};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Config {
    #[serde(flatten)]
    pub place: Placed,
    /// Bytes mapped, touched and unmapped per loop.
    pub chunk: u64,
    #[serde(flatten)]
    pub timed: Timed,
    pub page_size: u64,
}

view_struct! {
    /// What the churn report prints of a stored run's configuration.
    pub struct Stored {
        pub chunk: u64,
        pub secs: f64,
        pub mode: Option<String>,
    }
}

/// Readings kept per task (time, count); later readings overwrite the last.
pub(super) const POINTS: usize = 256;
task_values! {
    /// What each task reports in its values.
    enum V {
        Loops,
        Pages,
        Points,
    }
}

pub struct Churn {
    cfg: Config,
    machine: Snapshot,
}

impl Churn {
    pub fn new(cfg: Config, machine: Snapshot) -> Result<Churn> {
        cfg.place.check(&machine)?;
        let Timed { secs, every } = cfg.timed;
        super::check_timed(secs, 0.1, None, "--chunk", cfg.chunk, cfg.page_size)?;
        // Readings come at most every --time seconds: a longer --every reads none.
        crate::limits::in_range("--every", every, 0.01, secs)?;
        Ok(Churn { cfg, machine })
    }
}

/// `run quick`: 0.2 s samples read every 0.05 s.
pub fn quick(m: &Snapshot) -> Vec<Vec<String>> {
    vec![super::options::with_quick_tasks(
        m,
        "--time 0.2 --every 0.05",
    )]
}

// `vmscale run churn`'s options; the harness options are added beside them.
#[derive(clap::Args, Debug, Clone)]
pub struct Args {
    #[command(flatten)]
    pub place: Placement,
    /// Bytes mapped, touched and unmapped per loop
    #[arg(long, default_value = "1M")]
    pub chunk: String,
    #[command(flatten)]
    pub timed: Timed,
}

impl Options for Args {
    fn build(&self, env: &Env) -> Result<Box<dyn Workload>> {
        let m = env.machine;
        let cfg = Config {
            place: self.place.resolve(m)?,
            chunk: parse::size_arg("--chunk", &self.chunk)?,
            timed: self.timed,
            page_size: page_size(m),
        };
        env.made(cfg, |cfg| Churn::new(cfg, m.clone()))
    }
}

impl Measure for Churn {
    fn sample_s(&self, case: &Case) -> f64 {
        self.cfg.timed.sample_s(case.tasks)
    }
    fn cases(&self) -> Vec<Case> {
        Case::grid(["zfod"], &self.cfg.place.tasks)
    }
    fn memory_need(&self) -> u64 {
        (self.cfg.place.most() as u64).saturating_mul(self.cfg.chunk)
    }
    fn sample(&self, case: &Case) -> Result<SampleData> {
        let cpus = exec::pin::plan(&self.cfg.place.pin, case.tasks, &self.machine)?;
        let series = Series::new(case.tasks)?;
        let out = exec::run_tasks(self.cfg.place.mode, &cpus, |task| self.task(task, &series))?;
        summarise(&out.reports, &series)
    }
}

/// Shared (fork-surviving) per-task readings: (seconds, count) pairs.
/// Each task writes only its own rows; the parent reads after join.
pub(super) struct Series {
    mem: Region,
}

impl Series {
    pub(super) fn new(tasks: usize) -> Result<Series> {
        let len = tasks * POINTS * 2 * std::mem::size_of::<f64>();
        let mem = Region::shared(len).map_err(|e| e.context("readings"))?;
        Ok(Series { mem })
    }
    pub(super) fn put(&self, task: usize, i: usize, t: f64, faults: f64) {
        let at = (task * POINTS + i.min(POINTS - 1)) * 2;
        let base = self.mem.ptr() as *mut f64;
        // SAFETY: at+1 < tasks*POINTS*2, inside the mapping; one writer per row.
        unsafe {
            base.add(at).write_volatile(t);
            base.add(at + 1).write_volatile(faults);
        }
    }
    fn get(&self, task: usize, i: usize) -> (f64, f64) {
        let at = (task * POINTS + i) * 2;
        let base = self.mem.ptr() as *const f64;
        // SAFETY: as in put; read after the tasks finished.
        unsafe {
            (
                base.add(at).read_volatile(),
                base.add(at + 1).read_volatile(),
            )
        }
    }
}

impl Series {
    /// A timed task's loop, as churn and wis run it: `pass` again and
    /// again for `--time` from the tasks' common start (or until it
    /// returns false, having failed `r`, or vmscale caught a stop
    /// signal); about every `--every`, and at the end, `count` (given the
    /// task's usage at the start) read into the task's row with its real
    /// time. `r` gets its start and end and the task's usage over the
    /// loop, which is returned with the number of readings. `pass` is
    /// given the loop's end (monotonic ns), for passes that stop inside.
    pub(super) fn timed_loop(
        &self,
        task: &Task,
        r: &mut TaskReport,
        Timed { secs, every }: Timed,
        mut pass: impl FnMut(&mut TaskReport, u64) -> bool,
        count: impl Fn(&clock::Usage) -> f64,
    ) -> (clock::Usage, usize) {
        let every = (every * 1e9) as u64;
        task.wait_start();
        let before = task.usage();
        let t0 = clock::monotonic_ns();
        r.start_ns = t0;
        let end = t0 + (secs * 1e9) as u64;
        let mut next = t0 + every;
        self.put(task.index, 0, 0.0, 0.0);
        let mut n = 1usize;
        while pass(r, end) {
            let now = clock::monotonic_ns();
            // A stop signal ends the loop too (threads cannot be killed;
            // the runner drops the sample).
            let last = now >= end || exec::signals::caught().is_some();
            if now >= next || last {
                self.put(task.index, n, (now - t0) as f64 / 1e9, count(&before));
                n = (n + 1).min(POINTS);
                next = now + every;
            }
            if last {
                break;
            }
        }
        r.end_ns = clock::monotonic_ns();
        let used = task.usage().since(&before);
        r.set_usage(&used);
        (used, n)
    }
}

impl Churn {
    fn task(&self, task: &Task, series: &Series) -> TaskReport {
        let mut r = TaskReport::default();
        let (len, ps) = (self.cfg.chunk as usize, self.cfg.page_size as usize);
        let pass = |r: &mut TaskReport, _end| {
            // SAFETY: fresh anonymous private mapping, checked for MAP_FAILED.
            let p = unsafe {
                libc::mmap(
                    std::ptr::null_mut(),
                    len,
                    libc::PROT_READ | libc::PROT_WRITE,
                    libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                    -1,
                    0,
                )
            };
            if p == libc::MAP_FAILED {
                r.fail(&format!("mmap failed: {}", exec::errno_text()));
                return false;
            }
            // SAFETY: our mapping; base pages so one fault per page.
            unsafe { libc::madvise(p, len, libc::MADV_NOHUGEPAGE) };
            let b = p as *mut u8;
            for off in (0..len).step_by(ps) {
                // SAFETY: off < len.
                unsafe { b.add(off).write_volatile(1) };
                r.values[V::Pages] += 1.0;
            }
            // SAFETY: unmapping the mapping just made.
            unsafe { libc::munmap(p, len) };
            r.values[V::Loops] += 1.0;
            true
        };
        let faults = |before: &clock::Usage| task.usage().since(before).minflt as f64;
        let (_, n) = series.timed_loop(task, &mut r, self.cfg.timed, pass, faults);
        r.values[V::Points] = n as f64;
        r
    }
}

fn summarise(reports: &[TaskReport], series: &Series) -> Result<SampleData> {
    exec::first_error(reports)?;
    let rates: Vec<f64> = reports
        .iter()
        .map(|r| {
            let w = r.end_ns.saturating_sub(r.start_ns) as f64 / 1e9;
            if w > 0.0 { r.minflt as f64 / w } else { 0.0 }
        })
        .collect();
    let mut d = SampleData::default();
    let f = &mut d.figures;
    let total: f64 = rates.iter().sum();
    f.insert("zfod/s".into(), total);
    f.insert("zfod/s/task".into(), total / rates.len().max(1) as f64);
    let min = rates.iter().copied().fold(f64::INFINITY, f64::min);
    let max = rates.iter().copied().fold(0.0, f64::max);
    f.insert("task_min".into(), min);
    f.insert("task_max".into(), max);
    if min > 0.0 {
        f.insert("imbalance".into(), max / min);
    }
    let sum = |g: &dyn Fn(&TaskReport) -> f64| reports.iter().map(g).sum::<f64>();
    f.insert("loops".into(), sum(&|r| r.values[V::Loops]));
    f.insert("pages".into(), sum(&|r| r.values[V::Pages]));
    f.insert("faults".into(), sum(&|r| r.minflt as f64));
    f.insert("user".into(), sum(&|r| r.user_ns as f64) / 1e9);
    f.insert("system".into(), sum(&|r| r.sys_ns as f64) / 1e9);
    f.insert("wall".into(), exec::wall_ns(reports) as f64 / 1e9);
    interval_rates(f, reports, V::Points as usize, series);
    d.tasks = super::task_rows(reports, |i, r| {
        [
            ("zfod/s", rates[i]),
            ("faults", r.minflt as f64),
            ("loops", r.values[V::Loops]),
            ("pages", r.values[V::Pages]),
        ]
    });
    Ok(d)
}

/// Per-interval totals into `f` as series/NNN/t and series/NNN/rate:
/// interval k of every task, each rate over its own measured interval,
/// summed. `points` is the report value holding each task's reading count.
pub(super) fn interval_rates(
    f: &mut std::collections::BTreeMap<String, f64>,
    reports: &[TaskReport],
    points: usize,
    series: &Series,
) {
    let points = reports
        .iter()
        .map(|r| r.values[points] as usize)
        .min()
        .unwrap_or(0);
    for k in 1..points {
        let mut rate = 0.0;
        let mut t = 0.0;
        for i in 0..reports.len() {
            let (t0, f0) = series.get(i, k - 1);
            let (t1, f1) = series.get(i, k);
            if t1 > t0 {
                rate += (f1 - f0) / (t1 - t0);
            }
            t = f64::max(t, t1);
        }
        f.insert(format!("series/{k:03}/t"), t);
        f.insert(format!("series/{k:03}/rate"), rate);
    }
}
