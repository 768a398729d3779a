//! pft (seed 000): N tasks, released together by a barrier, each
//! write-fault their share of an anonymous private mapping, writing CLine
//! cache lines per page. The timed section is the fault loop alone; mmap
//! and munmap are timed apart. `populate` variants fault the same sizes in
//! with MADV_POPULATE_WRITE: the kernel-only path, the limit a user-space
//! fault loop can approach.

use serde::{Deserialize, Serialize};

use super::{Better, Case, Figure, SampleData, Workload};
use crate::exec::region::{Pages, Region};
use crate::exec::{self, Mode, Task, TaskReport, clock, pin::Pin};
use crate::machine::Snapshot;

/// Transparent huge pages per mapping, applied with madvise.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Thp {
    Never,
    Always,
}

impl Thp {
    /// `always` needs THP enabled (always or madvise) on the machine.
    pub fn check(&self, machine: &Snapshot) -> Result<(), String> {
        if *self == Thp::Always {
            match machine.thp_enabled.as_deref() {
                Some("always") | Some("madvise") => {}
                other => {
                    return Err(format!(
                        "--thp always needs /sys/kernel/mm/transparent_hugepage/enabled set to \
                         always or madvise (it is {}): change it, or use --thp never",
                        other.unwrap_or("unknown")
                    ));
                }
            }
        }
        Ok(())
    }

    /// The pages a mapping asks for with this setting.
    pub fn pages(&self) -> Pages {
        match self {
            Thp::Always => Pages::Huge,
            Thp::Never => Pages::Base,
        }
    }
}

impl std::str::FromStr for Thp {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "never" => Ok(Thp::Never),
            "always" => Ok(Thp::Always),
            _ => Err(format!("unknown --thp '{s}': use never or always")),
        }
    }
}

/// The validated pft configuration, stored with each run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Config {
    pub tasks: Vec<usize>,
    pub mode: Mode,
    /// Bytes per task for each task count (total split evenly, or fixed).
    pub size_total: Option<u64>,
    pub size_per_task: Option<u64>,
    pub cline: u64,
    pub pin: Pin,
    pub thp: Thp,
    pub populate: bool,
    pub page_size: u64,
    pub line_size: u64,
}

/// Indices into a task report's values.
const V_PAGES: usize = 0;
const V_MMAP_NS: usize = 1;
const V_MUNMAP_NS: usize = 2;

/// pft's figures, fault/wsec first (also used for imported pft tables).
pub fn figures() -> Vec<Figure> {
    vec![
        Figure::new("fault/wsec", "faults/s", Better::Higher, true),
        Figure::new("flt/cpu/s", "faults/s", Better::Higher, true),
        Figure::new("wall", "s", Better::Lower, false),
        Figure::new("user", "s", Better::Lower, false),
        Figure::new("system", "s", Better::Lower, false),
    ]
}

pub struct Pft {
    cfg: Config,
    machine: Snapshot,
}

impl Pft {
    /// Checks the configuration against the machine; errors are input errors.
    pub fn new(cfg: Config, machine: Snapshot) -> Result<Pft, String> {
        super::check_tasks(&cfg.tasks)?;
        let max_cline = cfg.page_size / cfg.line_size;
        if cfg.cline < 1 || cfg.cline > max_cline {
            return Err(format!(
                "--cline {} is out of range: use 1 to {max_cline} (page size {} / line size {})",
                cfg.cline, cfg.page_size, cfg.line_size
            ));
        }
        match (cfg.size_total, cfg.size_per_task) {
            (Some(_), Some(_)) => {
                return Err("give --size or --size-per-task, not both".into());
            }
            (None, None) => {
                return Err(
                    "give --size (total, split among the tasks) or --size-per-task, e.g. --size 1G"
                        .into(),
                );
            }
            _ => {}
        }
        let pft = Pft { cfg, machine };
        for &t in &pft.cfg.tasks {
            if pft.bytes_per_task(t) < pft.cfg.page_size {
                return Err(format!(
                    "the size gives {} tasks less than one page each: raise --size",
                    t
                ));
            }
        }
        pft.cfg.thp.check(&pft.machine)?;
        super::check_pin(&pft.cfg.pin, &pft.cfg.tasks, &pft.machine)?;
        Ok(pft)
    }

    pub fn config_ref(&self) -> &Config {
        &self.cfg
    }

    fn bytes_per_task(&self, tasks: usize) -> u64 {
        let raw = match (self.cfg.size_total, self.cfg.size_per_task) {
            (_, Some(per)) => per,
            (Some(total), None) => total / tasks as u64,
            (None, None) => 0,
        };
        raw / self.cfg.page_size * self.cfg.page_size
    }
}

impl Workload for Pft {
    fn name(&self) -> &'static str {
        "pft"
    }

    fn config(&self) -> serde_json::Value {
        serde_json::to_value(&self.cfg).unwrap_or_default()
    }

    fn cases(&self) -> Vec<Case> {
        let mut cases: Vec<Case> = self
            .cfg
            .tasks
            .iter()
            .map(|&tasks| Case::new(tasks, "fault"))
            .collect();
        if self.cfg.populate {
            cases.extend(
                self.cfg
                    .tasks
                    .iter()
                    .map(|&tasks| Case::new(tasks, "populate")),
            );
        }
        cases
    }

    fn figures(&self) -> Vec<Figure> {
        figures()
    }

    fn memory_need(&self) -> u64 {
        self.cfg
            .tasks
            .iter()
            .map(|&t| self.bytes_per_task(t).saturating_mul(t as u64))
            .max()
            .unwrap_or(0)
    }

    fn sample(&self, case: &Case) -> Result<SampleData, String> {
        let bytes = self.bytes_per_task(case.tasks) as usize;
        let cpus = exec::pin::plan(&self.cfg.pin, case.tasks, &self.machine)?;
        let populate = case.variant == "populate";
        let (ps, line, cline) = (
            self.cfg.page_size as usize,
            self.cfg.line_size as usize,
            self.cfg.cline as usize,
        );
        let thp = self.cfg.thp;
        let outcome = exec::run_tasks(self.cfg.mode, &cpus, |task| {
            fault_task(task, bytes, ps, line, cline, thp, populate)
        })?;
        summarise(&outcome.reports, bytes as u64)
    }
}

/// One task: map, wait for the start, fault the mapping in, unmap.
fn fault_task(
    task: &Task,
    bytes: usize,
    page_size: usize,
    line: usize,
    cline: usize,
    thp: Thp,
    populate: bool,
) -> TaskReport {
    let mut r = TaskReport::default();
    let t0 = clock::monotonic_ns();
    let region = Region::private_noreserve(bytes);
    r.values[V_MMAP_NS] = (clock::monotonic_ns() - t0) as f64;
    let region = match region {
        Ok(region) => region,
        Err(e) => {
            r.fail(&e);
            return r;
        }
    };
    if let Err(e) = region.advise_thp(thp.pages()) {
        r.fail(&e);
        return r;
    }
    let p = region.ptr();
    let base: *mut libc::c_void = p.cast();

    task.wait_start();
    let before = task.usage();
    r.start_ns = clock::monotonic_ns();
    let mut pages = 0u64;
    if populate {
        // SAFETY: base..base+bytes is the region's mapping.
        if unsafe { libc::madvise(base, bytes, libc::MADV_POPULATE_WRITE) } != 0 {
            r.fail(&format!(
                "MADV_POPULATE_WRITE failed (needs Linux 5.14 or later): {}",
                exec::errno_text()
            ));
        }
    } else {
        let mut off = 0;
        while off < bytes {
            for l in 0..cline {
                // SAFETY: off + l*line < off + page_size <= bytes, inside the mapping.
                unsafe { p.add(off + l * line).write_volatile(1) };
            }
            pages += 1;
            off += page_size;
        }
    }
    r.end_ns = clock::monotonic_ns();
    let used = task.usage().since(&before);
    r.set_usage(&used);
    if populate {
        // The kernel faulted the pages in; count what is resident, not what we asked for.
        pages = region.resident_pages(page_size);
    }
    r.values[V_PAGES] = pages as f64;

    let t1 = clock::monotonic_ns();
    drop(region);
    r.values[V_MUNMAP_NS] = (clock::monotonic_ns() - t1) as f64;
    r
}

/// Folds task reports into the sample's figures.
fn summarise(reports: &[TaskReport], bytes_per_task: u64) -> Result<SampleData, String> {
    exec::first_error(reports)?;
    let start = exec::first_start_ns(reports);
    let wall = exec::wall_ns(reports) as f64 / 1e9;
    let sum = |f: &dyn Fn(&TaskReport) -> f64| reports.iter().map(f).sum::<f64>();
    let user = sum(&|r| r.user_ns as f64 / 1e9);
    let system = sum(&|r| r.sys_ns as f64 / 1e9);
    let faults = sum(&|r| r.minflt as f64);
    let mut d = SampleData::default();
    let f = &mut d.figures;
    f.insert("wall".into(), wall);
    f.insert("user".into(), user);
    f.insert("system".into(), system);
    f.insert("faults".into(), faults);
    f.insert("majflt".into(), sum(&|r| r.majflt as f64));
    f.insert("pages".into(), sum(&|r| r.values[V_PAGES]));
    f.insert(
        "bytes".into(),
        (bytes_per_task * reports.len() as u64) as f64,
    );
    if user + system > 0.0 {
        f.insert("flt/cpu/s".into(), faults / (user + system));
    }
    if wall > 0.0 {
        f.insert("fault/wsec".into(), faults / wall);
        f.insert("pages/wsec".into(), sum(&|r| r.values[V_PAGES]) / wall);
    }
    let max = |i: usize| {
        reports
            .iter()
            .map(|r| r.values[i] / 1e9)
            .fold(0.0, f64::max)
    };
    f.insert("mmap".into(), max(V_MMAP_NS));
    f.insert("munmap".into(), max(V_MUNMAP_NS));
    d.tasks = reports
        .iter()
        .map(|r| {
            [
                ("cpu", r.cpu as f64),
                ("start", (r.start_ns - start) as f64 / 1e9),
                ("wall", (r.end_ns - r.start_ns) as f64 / 1e9),
                ("user", r.user_ns as f64 / 1e9),
                ("system", r.sys_ns as f64 / 1e9),
                ("faults", r.minflt as f64),
                ("pages", r.values[V_PAGES]),
                ("mmap", r.values[V_MMAP_NS] / 1e9),
                ("munmap", r.values[V_MUNMAP_NS] / 1e9),
            ]
            .into_iter()
            .map(|(k, v)| (k.to_string(), v))
            .collect()
        })
        .collect();
    Ok(d)
}
