//! lockfan (seed 004): T tasks each do `ops` short critical sections. Each
//! operation hashes a per-operation key to one of K locks (a spinlock, or a
//! process-shared pthread mutex), and under it increments a counter in each
//! of the few cache lines that lock protects, with plain (non-atomic)
//! reads and writes. Afterwards every lock's counters must equal the number
//! of operations done under it: a lost update means the lock failed.

use std::sync::atomic::{AtomicU32, Ordering};

use super::stored::{Text, view_struct};
use super::values::task_values;
use serde::{Deserialize, Serialize};

use super::region::Region;
use super::{Case, Measure, SampleData, Workload};
use crate::exec::{self, Mode, Task, TaskReport, clock};
use crate::machine::Snapshot;

use super::options::{each_with, name};
use super::placement::{Placed, Placement};
use super::spec::{Env, Options, Spec};
use crate::error::{Error, Result};
use crate::parse;

/// lockfan in the registry (`workload::REGISTRY`).
pub const SPEC: Spec = Spec {
    name: "lockfan",
    about: "One lock against the same work hashed over K locks",
    examples: "Examples:\n  vmscale run lockfan --tasks auto\n  \
vmscale run lockfan --locks 1,16,256 --kind spin,mutex\n  \
vmscale run lockfan --tasks 2 --lines 4 --ops 200000",
    mode: Some(Mode::Thread),
    figures: super::ops::FIGURES,
    report: super::Report::Lockfan,
    size_flags: "fewer --locks",
    quick,
    ..Spec::of::<Args>()
};

/// Which lock guards each slot (`--kind`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    /// A test-and-set spin lock
    Spin,
    /// A process-shared pthread mutex
    Mutex,
}

const LINE: usize = 64;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Config {
    #[serde(flatten)]
    pub place: Placed,
    /// Lock counts K.
    pub locks: Vec<usize>,
    pub kinds: Vec<Kind>,
    /// Critical sections per task.
    pub ops: u64,
    /// Cache lines of data each lock protects (all touched per operation).
    pub lines: usize,
}

view_struct! {
    /// What the lockfan report prints of a stored run's configuration.
    pub struct Stored {
        pub ops: Text,
        pub lines: Text,
        pub mode: Text,
    }
}

pub struct Lockfan {
    cfg: Config,
    machine: Snapshot,
}

impl Lockfan {
    pub fn new(cfg: Config, machine: Snapshot) -> Result<Lockfan> {
        cfg.place.check(&machine)?;
        if cfg.locks.is_empty() || cfg.locks.contains(&0) {
            return Err(Error::Input(
                "--locks must name at least one lock count of 1 or more".into(),
            ));
        }
        if cfg.kinds.is_empty() {
            return Err(Error::Input("--kind needs spin, mutex or both".into()));
        }
        if cfg.ops == 0 {
            return Err(Error::Input("--ops must be at least 1".into()));
        }
        if cfg.lines == 0 || cfg.lines > 64 {
            return Err(Error::Input(format!(
                "--lines {} is out of range: use 1 to 64 cache lines per lock",
                cfg.lines
            )));
        }
        if let Some(k) = cfg.locks.iter().find(|&&k| k > 1 << 20) {
            return Err(Error::Input(format!(
                "--locks {k} is more than 1048576 locks"
            )));
        }
        Ok(Lockfan { cfg, machine })
    }

    fn stride(&self) -> usize {
        (1 + self.cfg.lines) * LINE
    }
}

/// Parses a case variant "spin-16" into ("spin", 16).
pub fn parse_variant(v: &str) -> Option<(&str, usize)> {
    let (kind, k) = v.rsplit_once('-')?;
    Some((kind, k.parse().ok()?))
}

/// Which lock an operation's key maps to (Fibonacci hashing).
pub fn lock_of(key: u64, locks: usize) -> usize {
    (key.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 32) as usize % locks
}

/// `run quick`: spinlocks over 1, 16 and 256 locks.
pub fn quick(m: &Snapshot) -> Vec<Vec<String>> {
    let ops = super::options::quick_ops(m, 100_000, 1000);
    vec![super::options::with_quick_tasks(
        m,
        &format!("--locks 1,16,256 --kind spin --ops {ops}"),
    )]
}

// `vmscale run lockfan`'s options; the harness options are added beside them.
#[derive(clap::Args, Debug, Clone)]
pub struct Args {
    #[command(flatten)]
    pub place: Placement,
    /// Lock counts K: a list, a range, or auto (1, 2, 4, ... 256)
    #[arg(long, default_value = "auto")]
    pub locks: String,
    /// Lock kinds (comma-separated)
    #[arg(long, value_enum, value_delimiter = ',', default_value = "spin,mutex")]
    pub kind: Vec<Kind>,
    /// Critical sections per task
    #[arg(long, default_value_t = 1_000_000)]
    pub ops: u64,
    /// Cache lines of data each lock protects, all written per operation
    #[arg(long, default_value_t = 2)]
    pub lines: usize,
}

impl Options for Args {
    fn build(&self, env: &Env) -> Result<Box<dyn Workload>> {
        let (a, m) = (self, env.machine);
        let locks = parse::tasks(&a.locks, 256).map_err(|e| {
            Error::Input(
                e.to_string()
                    .replace("--tasks", "--locks")
                    .replace("tasks", "locks"),
            )
        });
        let cfg = Config {
            place: a.place.resolve(m)?,
            locks: locks?,
            kinds: a.kind.clone(),
            ops: a.ops,
            lines: a.lines,
        };
        env.made(cfg, |cfg| Lockfan::new(cfg, m.clone()))
    }
}

impl Measure for Lockfan {
    fn sample_s(&self, case: &Case) -> f64 {
        use super::cost::{CONTENDED_OP_S, SAMPLE_S, tasks_s};
        // Tasks sharing a lock take turns: tasks / K of them at once.
        let k = parse_variant(&case.variant).map_or(1, |(_, k)| k).max(1);
        let queue = case.tasks.div_ceil(k).max(1) as f64;
        SAMPLE_S + tasks_s(case.tasks) + self.cfg.ops as f64 * CONTENDED_OP_S * queue
    }

    fn cases(&self) -> Vec<Case> {
        let variants = each_with(&self.cfg.kinds, &self.cfg.locks, |kind, k| {
            format!("{}-{k}", name(kind))
        });
        Case::grid(variants, &self.cfg.place.tasks)
    }

    fn memory_need(&self) -> u64 {
        let k = self.cfg.locks.iter().copied().max().unwrap_or(1);
        (k * self.stride()) as u64
    }

    fn sample(&self, case: &Case) -> Result<SampleData> {
        let (kind, k) = parse_variant(&case.variant)
            .ok_or_else(|| Error::Failed(format!("bad lockfan case '{}'", case.variant)))?;
        let mutex = kind == "mutex";
        let stride = self.stride();
        let region = Region::shared(k * stride)?;
        if mutex {
            for i in 0..k {
                init_mutex(&region, i * stride)?;
            }
        }
        let cpus = exec::pin::plan(&self.cfg.place.pin, case.tasks, &self.machine)?;
        let (ops, lines) = (self.cfg.ops, self.cfg.lines);
        let outcome = exec::run_tasks(self.cfg.place.mode, &cpus, |task| {
            lock_task(task, &region, k, stride, lines, mutex, ops)
        });
        if mutex {
            for i in 0..k {
                destroy_mutex(&region, i * stride);
            }
        }
        let reports = outcome?.reports;
        exec::first_error(&reports)?;
        // Read back every protected counter.
        let mut counted = 0u64;
        let mut torn = 0u64;
        for i in 0..k {
            let first = region.u64_at(i * stride + LINE).load(Ordering::Acquire);
            counted += first;
            for l in 1..lines {
                if region
                    .u64_at(i * stride + (1 + l) * LINE)
                    .load(Ordering::Acquire)
                    != first
                {
                    torn += 1;
                }
            }
        }
        let mut d = super::ops::counted_figures(&reports, V::Done as usize, "operations", counted);
        d.figures.insert("torn locks".into(), torn as f64);
        Ok(d)
    }
}

task_values! {
    /// What each task reports in its values.
    enum V {
        Done,
    }
}

fn init_mutex(region: &Region, off: usize) -> Result<()> {
    // SAFETY: the mutex sits at the start of a 64-byte aligned lock line
    // (pthread_mutex_t is 40 bytes on Linux); attr is initialised before use
    // and destroyed after.
    unsafe {
        let m = region.ptr().add(off) as *mut libc::pthread_mutex_t;
        let mut attr: libc::pthread_mutexattr_t = std::mem::zeroed();
        libc::pthread_mutexattr_init(&mut attr);
        libc::pthread_mutexattr_setpshared(&mut attr, libc::PTHREAD_PROCESS_SHARED);
        let rc = libc::pthread_mutex_init(m, &attr);
        libc::pthread_mutexattr_destroy(&mut attr);
        if rc != 0 {
            return Err(Error::Failed(format!(
                "pthread_mutex_init failed with error {rc}"
            )));
        }
    }
    Ok(())
}

fn destroy_mutex(region: &Region, off: usize) {
    // SAFETY: initialised by init_mutex, and no task holds it any more.
    unsafe { libc::pthread_mutex_destroy(region.ptr().add(off) as *mut libc::pthread_mutex_t) };
}

fn spin_lock(l: &AtomicU32) {
    loop {
        if l.swap(1, Ordering::Acquire) == 0 {
            return;
        }
        while l.load(Ordering::Relaxed) != 0 {
            std::hint::spin_loop();
        }
    }
}

fn lock_task(
    task: &Task,
    region: &Region,
    locks: usize,
    stride: usize,
    lines: usize,
    mutex: bool,
    ops: u64,
) -> TaskReport {
    let mut r = TaskReport::default();
    let base = region.ptr();
    task.wait_start();
    let before = task.usage();
    r.start_ns = clock::monotonic_ns();
    for i in 0..ops {
        let key = ((task.index as u64) << 40) ^ i;
        let off = lock_of(key, locks) * stride;
        // SAFETY: off + stride <= region length (lock index < locks); the
        // lock line holds either an AtomicU32 (zeroed = unlocked) or a
        // mutex set up by init_mutex; the data lines are only written while
        // the lock is held, so the plain accesses do not race.
        unsafe {
            let lock = base.add(off);
            if mutex {
                libc::pthread_mutex_lock(lock as *mut libc::pthread_mutex_t);
            } else {
                spin_lock(&*(lock as *const AtomicU32));
            }
            for l in 0..lines {
                let c = lock.add((1 + l) * LINE) as *mut u64;
                c.write_volatile(c.read_volatile() + 1);
            }
            if mutex {
                libc::pthread_mutex_unlock(lock as *mut libc::pthread_mutex_t);
            } else {
                (*(lock as *const AtomicU32)).store(0, Ordering::Release);
            }
        }
    }
    r.end_ns = clock::monotonic_ns();
    r.set_usage(&task.usage().since(&before));
    r.values[V::Done] = ops as f64;
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(kind: Kind, locks: usize, tasks: usize, mode: Mode) -> SampleData {
        let w = Lockfan::new(
            Config {
                place: Placed {
                    tasks: vec![tasks],
                    mode,
                    pin: crate::exec::pin::Pin::None,
                },
                locks: vec![locks],
                kinds: vec![kind],
                ops: 20_000,
                lines: 3,
            },
            crate::machine::live(),
        )
        .unwrap();
        w.sample(&Case::new(tasks, &format!("{}-{locks}", name(&kind))))
            .unwrap()
    }

    #[test]
    fn no_lost_updates_under_either_lock() {
        for (kind, k) in [
            (Kind::Spin, 1),
            (Kind::Spin, 4),
            (Kind::Mutex, 1),
            (Kind::Mutex, 8),
        ] {
            let d = run(kind, k, 3, Mode::Thread);
            assert_eq!(d.figures["counted"], 60_000.0, "{kind:?}-{k}");
            assert_eq!(d.figures["lost"], 0.0, "{kind:?}-{k}");
            assert_eq!(d.figures["torn locks"], 0.0, "{kind:?}-{k}");
        }
    }

    #[test]
    fn zero_tasks_or_locks_are_refused() {
        let cfg = |tasks: Vec<usize>, locks: Vec<usize>| Config {
            place: Placed {
                tasks,
                mode: Mode::Thread,
                pin: crate::exec::pin::Pin::None,
            },
            locks,
            kinds: vec![Kind::Spin],
            ops: 1,
            lines: 1,
        };
        let m = crate::machine::live();
        crate::error::assert_input(Lockfan::new(cfg(vec![1], vec![0]), m.clone()));
        crate::error::assert_input(Lockfan::new(cfg(vec![0], vec![1]), m.clone()));
        crate::error::assert_input(Lockfan::new(cfg(vec![1], vec![]), m));
    }

    #[test]
    fn keys_spread_over_all_locks() {
        let mut seen = [0u32; 16];
        for key in 0..1600u64 {
            seen[lock_of(key, 16)] += 1;
        }
        assert!(seen.iter().all(|&n| n > 0));
    }

    #[test]
    fn variants_parse() {
        assert_eq!(parse_variant("spin-256"), Some(("spin", 256)));
        assert_eq!(parse_variant("mutex"), None);
    }
}
