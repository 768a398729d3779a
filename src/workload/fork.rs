//! fork (seed 002): each task populates a mapping, then forks children over
//! it; each child writes K pages (copy-on-write for a private mapping) and
//! exits. Measured per fork: the time inside fork() (copy_page_range), and
//! apart from it the teardown from the child's last instruction to the
//! parent's wait4 return (exit_mmap, zap_pte_range, reap). System time is
//! the parent's plus the children's (wait4 rusage); forks are counted.

use super::spec::{lower, rate};
use super::stored::lenient;
use super::values::task_values;
use serde::{Deserialize, Serialize};
use std::path::PathBuf;

use super::{Case, Measure, SampleData, Workload};
use crate::exec::region::{Pages, Region};
use crate::exec::{self, Mode, Task, TaskReport, clock};
use crate::machine::Snapshot;

use super::options::page_size;
use super::placement::{Placed, Placement};
use super::spec::{Env, Options, Spec};
use crate::error::{Error, Result};
use crate::parse;

/// fork in the registry (`workload::REGISTRY`).
pub const SPEC: Spec = Spec {
    name: "fork",
    about: "fork over a populated mapping: forks/s, system time per fork and per page",
    examples: "Examples:\n  vmscale run fork --tasks 1,2 --size 64M --forks 200 --touch 16\n  \
vmscale run fork --tasks auto --size 256M --shared-file --file-dir /mnt/scratch",
    mode: Some(Mode::Process),
    figures: &[
        rate("forks/s", "forks/s"),
        lower("sys/fork", "us"),
        lower("sys/page", "ns"),
        lower("fork", "us"),
        lower("teardown", "us"),
        lower("wall", "s"),
    ],
    report: super::Report::Fork,
    size_flags: "a smaller --size or --touch, or fewer --tasks",
    quick,
    ..Spec::of::<Args>()
};

/// What the parent's mapping is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Backing {
    /// Anonymous private: children's writes copy pages.
    Anon,
    /// A shared file in this directory (created, then unlinked once mapped).
    File(PathBuf),
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Config {
    #[serde(flatten)]
    pub place: Placed,
    /// Bytes of the mapping each task populates before forking.
    pub size: u64,
    pub backing: Backing,
    /// Forks each task performs per sample.
    pub forks: u64,
    /// Pages each child writes before exiting.
    pub touch: u64,
    pub page_size: u64,
}

/// What the fork report prints of a stored run's configuration: fields of
/// runs stored by older versions may be missing.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct Stored {
    /// "anonymous", "shared file in DIR", "file", or "?".
    #[serde(deserialize_with = "backing_text")]
    pub backing: String,
    #[serde(deserialize_with = "lenient")]
    pub size: u64,
    #[serde(deserialize_with = "lenient")]
    pub forks: u64,
    #[serde(deserialize_with = "lenient")]
    pub touch: u64,
    #[serde(deserialize_with = "lenient")]
    pub mode: Option<String>,
}

fn backing_text<'de, D: serde::Deserializer<'de>>(d: D) -> std::result::Result<String, D::Error> {
    Ok(match serde_json::Value::deserialize(d)? {
        serde_json::Value::String(s) => s,
        serde_json::Value::Object(o) => o
            .get("file")
            .and_then(|p| p.as_str())
            .map(|p| format!("shared file in {p}"))
            .unwrap_or_else(|| "file".into()),
        _ => "?".into(),
    })
}

task_values! {
    /// What each task reports in its values.
    enum V {
        Forks,
        ForkNs,
        TeardownNs,
        ChildUserNs,
        ChildSysNs,
        Pages,
        ChildMinflt,
    }
}

pub struct Fork {
    cfg: Config,
    machine: Snapshot,
}

impl Fork {
    pub fn new(cfg: Config, machine: Snapshot) -> Result<Fork> {
        cfg.place.check(&machine)?;
        if cfg.forks == 0 {
            return Err(Error::Input("--forks 0 does no work: use 1 or more".into()));
        }
        let pages = cfg.size / cfg.page_size;
        if pages == 0 {
            return Err(Error::Input(format!(
                "--size must be at least one page ({} bytes)",
                cfg.page_size
            )));
        }
        if cfg.touch > pages {
            return Err(Error::Input(format!(
                "--touch {} is more pages than the mapping has ({pages}): lower --touch or raise --size",
                cfg.touch
            )));
        }
        if let Backing::File(dir) = &cfg.backing
            && !dir.is_dir()
        {
            return Err(Error::Input(format!(
                "--file-dir {}: not a directory; name an existing directory for the shared file",
                dir.display()
            )));
        }
        Ok(Fork { cfg, machine })
    }
}

/// `run quick`: 40 forks over 16 MiB per task count.
pub fn quick(m: &Snapshot) -> Vec<Vec<String>> {
    vec![super::options::with_quick_tasks(m, "--size 16M --forks 40")]
}

// `vmscale run fork`'s options; the harness options are added beside them.
#[derive(clap::Args, Debug, Clone)]
pub struct Args {
    #[command(flatten)]
    pub place: Placement,
    /// The mapping each task populates before forking
    #[arg(long, default_value = "64M")]
    pub size: String,
    /// Forks per task per sample
    #[arg(long, default_value_t = 200)]
    pub forks: u64,
    /// Pages each child writes before exiting
    #[arg(long, default_value_t = 16)]
    pub touch: u64,
    /// Map a shared file instead of anonymous private memory
    #[arg(long)]
    pub shared_file: bool,
    /// Directory for the shared file (default: the temp directory)
    #[arg(long, value_name = "DIR")]
    pub file_dir: Option<PathBuf>,
}

impl Options for Args {
    fn build(&self, env: &Env) -> Result<Box<dyn Workload>> {
        let (a, m) = (self, env.machine);
        let cfg = Config {
            place: a.place.resolve(m)?,
            size: parse::size_arg("--size", &a.size)?,
            backing: if a.shared_file {
                Backing::File(a.file_dir.clone().unwrap_or_else(std::env::temp_dir))
            } else if a.file_dir.is_some() {
                return Err(Error::Input(
                    "--file-dir only applies with --shared-file".into(),
                ));
            } else {
                Backing::Anon
            },
            forks: a.forks,
            touch: a.touch,
            page_size: page_size(m),
        };
        env.made(cfg, |cfg| Fork::new(cfg, m.clone()))
    }
}

impl Measure for Fork {
    fn sample_s(&self, case: &Case) -> f64 {
        use super::cost::{SAMPLE_S, TASK_S, tasks_s, touch_s};
        // Each fork copies the page tables of the mapping (about 1/512 of
        // touching it) and its child touches `touch` pages; tasks overlap.
        let per_fork = 2.0 * TASK_S
            + touch_s(self.cfg.size) / 512.0
            + touch_s(self.cfg.touch * self.cfg.page_size);
        SAMPLE_S + tasks_s(case.tasks) + touch_s(self.cfg.size) + self.cfg.forks as f64 * per_fork
    }

    fn cases(&self) -> Vec<Case> {
        let v = match self.cfg.backing {
            Backing::Anon => "anon",
            Backing::File(_) => "file",
        };
        Case::grid([v], &self.cfg.place.tasks)
    }

    fn memory_need(&self) -> u64 {
        // Each live child may copy `touch` pages; one child per task at a time.
        let most = self.cfg.place.most() as u64;
        most.saturating_mul(
            self.cfg
                .size
                .saturating_add(self.cfg.touch.saturating_mul(self.cfg.page_size)),
        )
    }

    fn sample(&self, case: &Case) -> Result<SampleData> {
        let cpus = exec::pin::plan(&self.cfg.place.pin, case.tasks, &self.machine)?;
        let out = exec::run_tasks(self.cfg.place.mode, &cpus, |task| self.task(task))?;
        summarise(&out.reports, self.cfg.size / self.cfg.page_size)
    }
}

impl Fork {
    fn map(&self, task: usize) -> Result<Region> {
        let len = self.cfg.size as usize;
        let file = match &self.cfg.backing {
            Backing::Anon => None,
            Backing::File(dir) => {
                let path = dir.join(format!(
                    ".vmscale-fork-{}-{task}-{}",
                    std::process::id(),
                    clock::monotonic_ns()
                ));
                let f = crate::atomic_file::create_new(0o600)
                    .read(true)
                    .open(&path)
                    .map_err(|e| Error::Failed(format!("creating {}: {e}", path.display())))?;
                let _ = std::fs::remove_file(&path);
                f.set_len(self.cfg.size)
                    .map_err(|e| Error::Failed(format!("sizing {}: {e}", path.display())))?;
                Some(f)
            }
        };
        let flags = match file {
            Some(_) => libc::MAP_SHARED,
            None => libc::MAP_PRIVATE,
        };
        // The mapping keeps the file; our descriptor closes when `file` drops.
        let region = Region::map(
            len,
            libc::PROT_READ | libc::PROT_WRITE,
            flags,
            file.as_ref(),
        )?;
        // Base pages keep the per-page costs comparable.
        let _ = region.advise_thp(Pages::Base);
        Ok(region)
    }

    fn task(&self, task: &Task) -> TaskReport {
        let mut r = TaskReport::default();
        let ps = self.cfg.page_size as usize;
        let len = self.cfg.size as usize;
        let region = match self.map(task.index) {
            Ok(region) => region,
            Err(e) => {
                r.fail(&e.to_string());
                return r;
            }
        };
        let base = region.ptr();
        for off in (0..len).step_by(ps) {
            // SAFETY: off < len, inside the mapping.
            unsafe { base.add(off).write_volatile(1) };
        }
        r.values[V::Pages] = region.resident_pages(ps) as f64;
        // One shared word where a child leaves its exit timestamp.
        let stamp_page = match Region::shared(ps) {
            Ok(page) => page,
            Err(e) => {
                r.fail(&format!("the timestamp page: {e}"));
                return r;
            }
        };
        let stamp = stamp_page.ptr() as *mut u64;
        let touch = self.cfg.touch as usize;

        task.wait_start();
        let before = task.usage();
        r.start_ns = clock::monotonic_ns();
        for _ in 0..self.cfg.forks {
            let t0 = clock::monotonic_ns();
            // SAFETY: the child only writes memory, reads the clock and _exits
            // (async-signal-safe even when the parent has threads).
            let pid = unsafe { libc::fork() };
            if pid == 0 {
                for i in 0..touch {
                    // SAFETY: i < touch <= pages of the mapping.
                    unsafe { base.add(i * ps).write_volatile(2) };
                }
                // SAFETY: the shared stamp page is mapped in the child too.
                unsafe {
                    stamp.write_volatile(clock::monotonic_ns());
                    libc::_exit(0)
                };
            }
            let t1 = clock::monotonic_ns();
            if pid < 0 {
                r.fail(&format!("fork failed: {}", exec::errno_text()));
                break;
            }
            let reaped = exec::children::reap(pid);
            let t2 = clock::monotonic_ns();
            let u = match reaped {
                Ok(u) => u,
                Err(e) => {
                    r.fail(&format!("child {pid}: {e}"));
                    break;
                }
            };
            // SAFETY: the child wrote the stamp before exiting; it is reaped now.
            let exited = unsafe { stamp.read_volatile() };
            r.values[V::Forks] += 1.0;
            r.values[V::ForkNs] += (t1 - t0) as f64;
            r.values[V::TeardownNs] += t2.saturating_sub(exited) as f64;
            r.values[V::ChildUserNs] += u.user_ns as f64;
            r.values[V::ChildSysNs] += u.sys_ns as f64;
            r.values[V::ChildMinflt] += u.minflt as f64;
        }
        r.end_ns = clock::monotonic_ns();
        r.set_usage(&task.usage().since(&before));
        drop(stamp_page);
        drop(region);
        r
    }
}

fn summarise(reports: &[TaskReport], pages_per_task: u64) -> Result<SampleData> {
    exec::first_error(reports)?;
    let wall = exec::wall_ns(reports) as f64 / 1e9;
    let sum = |f: &dyn Fn(&TaskReport) -> f64| reports.iter().map(f).sum::<f64>();
    let forks = sum(&|r| r.values[V::Forks]);
    let parent_sys = sum(&|r| r.sys_ns as f64) / 1e9;
    let child_sys = sum(&|r| r.values[V::ChildSysNs]) / 1e9;
    let pages = sum(&|r| r.values[V::Pages]) / reports.len().max(1) as f64;
    let mut d = SampleData::default();
    let f = &mut d.figures;
    f.insert("forks".into(), forks);
    f.insert("wall".into(), wall);
    f.insert("user".into(), sum(&|r| r.user_ns as f64) / 1e9);
    f.insert("system".into(), parent_sys);
    f.insert(
        "child_user".into(),
        sum(&|r| r.values[V::ChildUserNs]) / 1e9,
    );
    f.insert("child_system".into(), child_sys);
    f.insert("child_minflt".into(), sum(&|r| r.values[V::ChildMinflt]));
    f.insert("pages_populated".into(), pages);
    f.insert("pages_configured".into(), pages_per_task as f64);
    if forks > 0.0 {
        let per = (parent_sys + child_sys) / forks;
        f.insert("sys/fork".into(), per * 1e6);
        if pages > 0.0 {
            f.insert("sys/page".into(), per / pages * 1e9);
        }
        f.insert("fork".into(), sum(&|r| r.values[V::ForkNs]) / forks / 1e3);
        f.insert(
            "teardown".into(),
            sum(&|r| r.values[V::TeardownNs]) / forks / 1e3,
        );
    }
    if wall > 0.0 {
        f.insert("forks/s".into(), forks / wall);
    }
    d.tasks = super::task_rows(reports, |_, r| {
        [
            ("forks", r.values[V::Forks]),
            ("wall", r.end_ns.saturating_sub(r.start_ns) as f64 / 1e9),
            ("system", r.sys_ns as f64 / 1e9),
            ("child_system", r.values[V::ChildSysNs] / 1e9),
        ]
    });
    Ok(d)
}
