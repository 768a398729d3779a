//! pft (seed 000): N tasks, released together by a barrier, each
//! write-fault their share of an anonymous private mapping, writing CLine
//! cache lines per page. The timed section is the fault loop alone; mmap
//! and munmap are timed apart. `populate` variants fault the same sizes in
//! with MADV_POPULATE_WRITE: the kernel-only path, the limit a user-space
//! fault loop can approach. The memory may instead be shared anonymous,
//! memfd or a file, private or shared, read or written, with base pages,
//! THP or hugetlb (`fault_map`); each task maps its own slice.

use super::placement::Placed;
use super::values::task_values;
use serde::{Deserialize, Serialize};

use super::fault_map::{self, Access, OwnedFile, PageKind, Spec};
use super::stored::{Text, lenient, view};
use super::{Case, Measure, SampleData};
use crate::error::{Error, Result};
use crate::exec::region::Pages;
use crate::exec::{self, Task, TaskReport, clock};
use crate::machine::Snapshot;

/// Transparent huge pages per mapping, applied with madvise.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Thp {
    Never,
    Always,
}

impl Thp {
    /// `always` needs THP enabled (always or madvise) on the machine.
    pub fn check(&self, machine: &Snapshot) -> Result<()> {
        if *self == Thp::Always {
            match machine.thp_enabled.as_deref() {
                Some("always") | Some("madvise") => {}
                other => {
                    return Err(Error::Input(format!(
                        "--thp always needs /sys/kernel/mm/transparent_hugepage/enabled set to \
                         always or madvise (it is {}): change it, or use --thp never",
                        other.unwrap_or("unknown")
                    )));
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

/// The validated pft configuration, stored with each run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Config {
    #[serde(flatten)]
    pub place: Placed,
    /// Bytes per task for each task count (total split evenly, or fixed).
    pub size_total: Option<u64>,
    pub size_per_task: Option<u64>,
    pub cline: u64,
    pub thp: Thp,
    pub populate: bool,
    pub page_size: u64,
    pub line_size: u64,
    /// Backing, sharing, access and page kind (anonymous private write
    /// faults on base pages when absent from an older stored run).
    #[serde(flatten, default)]
    pub map: Spec,
    /// The huge page size faults map with `pages` thp or hugetlb.
    #[serde(default)]
    pub huge_size: u64,
    /// Count faults with the perf `page-faults` counter too (opt-in: the
    /// counter is a cost in every fault of the timed loop).
    #[serde(default)]
    pub perf_faults: bool,
}

/// What pft's report prints of a stored run's configuration: fields of
/// runs stored by older versions or imported may be missing ("?").
#[derive(Debug, Default, Deserialize)]
pub struct Stored {
    #[serde(default)]
    pub mode: Text,
    #[serde(default)]
    pub thp: Text,
    #[serde(default)]
    pub cline: Text,
    /// The CPU list of a `--pin` list, else the policy as stored.
    #[serde(default, deserialize_with = "pin_text")]
    pub pin: Text,
    #[serde(default, deserialize_with = "lenient")]
    pub page_size: Option<u64>,
    /// Read on its own: a stored map that does not parse is the default.
    #[serde(skip)]
    pub map: Spec,
}

impl Stored {
    pub fn of(config: &serde_json::Value) -> Self {
        Stored {
            map: serde_json::from_value(config.clone()).unwrap_or_default(),
            ..view(config)
        }
    }
}

fn pin_text<'de, D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Text, D::Error> {
    Ok(match serde_json::Value::deserialize(d)? {
        serde_json::Value::Object(o) => Text::from(
            o.get("list")
                .and_then(|l| l.as_array())
                .map(|a| {
                    let cpus: Vec<usize> = a
                        .iter()
                        .filter_map(|v| v.as_u64())
                        .map(|v| v as usize)
                        .collect();
                    crate::machine::cpulist::format(&cpus)
                })
                .unwrap_or_else(|| "?".into()),
        ),
        v => Text::of(v),
    })
}

task_values! {
    /// Indices into a task report's values.
    enum V {
        Pages,
        MmapNs,
        MunmapNs,
        /// Faults the kernel's perf `page-faults` counter saw in the timed section
        /// (with `--perf-faults`).
        Kfaults,
        /// 1 when that counter was asked for and could be opened.
        Kok,
    }
}

/// pft's headline figure: faults per wall-clock second, all tasks together.
pub const HEADLINE: &str = "fault/wsec";
/// The case variant of the faults measured; with `--populate` each task
/// count also has a `POPULATE` case (MADV_POPULATE_WRITE on the same sizes).
pub const FAULT: &str = "fault";
pub const POPULATE: &str = "populate";

pub struct Pft {
    cfg: Config,
    machine: Snapshot,
}

impl Pft {
    /// Checks the configuration against the machine; errors are input errors.
    pub fn new(cfg: Config, machine: Snapshot) -> Result<Pft> {
        cfg.place.check(&machine)?;
        let max_cline = cfg.page_size / cfg.line_size;
        if cfg.cline < 1 || cfg.cline > max_cline {
            return Err(Error::Input(format!(
                "--cline {} is out of range: use 1 to {max_cline} (page size {} / line size {})",
                cfg.cline, cfg.page_size, cfg.line_size
            )));
        }
        match (cfg.size_total, cfg.size_per_task) {
            (Some(_), Some(_)) => {
                return Err(Error::Input(
                    "give --size or --size-per-task, not both".into(),
                ));
            }
            (None, None) => {
                return Err(Error::Input(
                    "give --size (total, split among the tasks) or --size-per-task, e.g. --size 1G"
                        .into(),
                ));
            }
            _ => {}
        }
        let pft = Pft { cfg, machine };
        for &t in &pft.cfg.place.tasks {
            if pft.bytes_per_task(t) < pft.cfg.page_size.max(pft.unit()) {
                return Err(Error::Input(format!(
                    "the size gives {} tasks less than one page each: raise --size",
                    t
                )));
            }
        }
        pft.cfg.thp.check(&pft.machine)?;
        if pft.cfg.map.pages != PageKind::Base && pft.cfg.huge_size == 0 {
            return Err(Error::Input(
                "the huge page size of this machine is unknown".into(),
            ));
        }
        Ok(pft)
    }

    fn bytes_per_task(&self, tasks: usize) -> u64 {
        let raw = match (self.cfg.size_total, self.cfg.size_per_task) {
            (_, Some(per)) => per,
            (Some(total), None) => total / tasks as u64,
            (None, None) => 0,
        };
        let unit = self.unit();
        raw / unit * unit
    }

    /// Hugetlb mappings come in whole huge pages; others in base pages.
    fn unit(&self) -> u64 {
        if self.cfg.map.pages == PageKind::Hugetlb {
            self.cfg.huge_size.max(self.cfg.page_size)
        } else {
            self.cfg.page_size
        }
    }

    /// Peak bytes one sample maps.
    fn peak_bytes(&self) -> u64 {
        self.cfg
            .place
            .tasks
            .iter()
            .map(|&t| self.bytes_per_task(t).saturating_mul(t as u64))
            .max()
            .unwrap_or(0)
    }

    /// Hugetlb pages the largest case needs, in pages of `huge_size`.
    pub fn hugetlb_pages_needed(&self) -> u64 {
        if self.cfg.map.pages != PageKind::Hugetlb || self.cfg.huge_size == 0 {
            return 0;
        }
        self.peak_bytes() / self.cfg.huge_size
    }
}

/// `run quick`: 256 MiB in threads, then in processes, each with the
/// kernel-only populate limit.
pub fn quick(m: &Snapshot) -> Vec<Vec<String>> {
    // Past 8 CPUs the size is split by more tasks: a quarter keeps the
    // suite within its minute (docs/scale.md).
    let size = if super::options::quick_tasks(m).is_some() {
        "64M"
    } else {
        "256M"
    };
    vec![
        super::options::with_quick_tasks(m, &format!("--size {size} --populate")),
        super::options::with_quick_tasks(m, &format!("--mode process --size {size} --populate")),
    ]
}

impl Measure for Pft {
    fn cases(&self) -> Vec<Case> {
        let variants: &[&str] = if self.cfg.populate {
            &[FAULT, POPULATE]
        } else {
            &[FAULT]
        };
        Case::grid(variants, &self.cfg.place.tasks)
    }

    /// Hugetlb pages come from the reserved pool, checked apart.
    fn memory_need(&self) -> u64 {
        if self.cfg.map.pages == PageKind::Hugetlb {
            return 0;
        }
        self.peak_bytes()
    }

    fn sample(&self, case: &Case) -> Result<SampleData> {
        let bytes = self.bytes_per_task(case.tasks) as usize;
        let cpus = exec::pin::plan(&self.cfg.place.pin, case.tasks, &self.machine)?;
        let populate = case.variant == POPULATE;
        let (ps, line, cline) = (
            self.cfg.page_size as usize,
            self.cfg.line_size as usize,
            self.cfg.cline as usize,
        );
        let spec = &self.cfg.map;
        let total = bytes as u64 * case.tasks as u64;
        let file = match (spec.backing, &spec.path) {
            (fault_map::Backing::File, Some(path)) => Some(OwnedFile::create(path, total)?),
            (fault_map::Backing::Memfd, _) => {
                Some(OwnedFile::memfd(total, spec.pages == PageKind::Hugetlb)?)
            }
            _ => None,
        };
        if let Some(f) = &file {
            f.drop_cache();
        }
        let job = Job {
            bytes,
            page_size: ps,
            line,
            cline,
            spec,
            file: file.as_ref().map(|f| &f.file),
            populate,
            perf_faults: self.cfg.perf_faults,
        };
        let outcome = exec::run_tasks(self.cfg.place.mode, &cpus, |task| fault_task(task, &job))?;
        drop(file);
        let huge = if spec.pages == PageKind::Base {
            0
        } else {
            self.cfg.huge_size
        };
        summarise(&outcome.reports, bytes as u64, ps as u64, huge, spec)
    }
}

/// The machine's shmem THP selection, the bracketed word.
pub fn read_shmem_enabled() -> Option<String> {
    let t = std::fs::read_to_string("/sys/kernel/mm/transparent_hugepage/shmem_enabled").ok()?;
    let start = t.find('[')?;
    let end = t[start..].find(']')?;
    Some(t[start + 1..start + end].to_string())
}

/// What every task of one sample does.
struct Job<'a> {
    bytes: usize,
    page_size: usize,
    line: usize,
    cline: usize,
    spec: &'a Spec,
    file: Option<&'a std::fs::File>,
    populate: bool,
    perf_faults: bool,
}

/// One task: map its slice, wait for the start, fault it in, unmap.
fn fault_task(task: &Task, job: &Job) -> TaskReport {
    let mut r = TaskReport::default();
    let (bytes, page_size) = (job.bytes, job.page_size);
    let t0 = clock::monotonic_ns();
    let offset = (task.index * bytes) as u64;
    let region = fault_map::map(job.spec, bytes, job.file, offset);
    r.values[V::MmapNs] = (clock::monotonic_ns() - t0) as f64;
    let region = match region {
        Ok(region) => region,
        Err(e) => {
            r.fail(&e.to_string());
            return r;
        }
    };
    let p = region.ptr();
    let base: *mut libc::c_void = p.cast();
    let write = job.spec.access == Access::Write;

    // Faults are counted by rusage read outside the loop; an open perf
    // counter would add its cost to every fault of it, so only on request.
    let mut counter = job
        .perf_faults
        .then(exec::fault_counter::FaultCounter::open)
        .and_then(|c| c.ok());
    task.wait_start();
    let k0 = counter.as_mut().map_or(0, |c| c.read());
    let before = task.usage();
    r.start_ns = clock::monotonic_ns();
    let mut pages = 0u64;
    if job.populate {
        let advice = if write {
            libc::MADV_POPULATE_WRITE
        } else {
            libc::MADV_POPULATE_READ
        };
        // SAFETY: base..base+bytes is the region's mapping.
        if unsafe { libc::madvise(base, bytes, advice) } != 0 {
            r.fail(&format!(
                "MADV_POPULATE_{} failed (needs Linux 5.14 or later): {}",
                if write { "WRITE" } else { "READ" },
                exec::errno_text()
            ));
        }
    } else {
        let mut sink = 0u8;
        let mut off = 0;
        while off < bytes {
            for l in 0..job.cline {
                // SAFETY: off + l*line < off + page_size <= bytes, inside the mapping.
                unsafe {
                    let at = p.add(off + l * job.line);
                    if write {
                        at.write_volatile(1);
                    } else {
                        sink ^= at.read_volatile();
                    }
                }
            }
            pages += 1;
            off += page_size;
        }
        std::hint::black_box(sink);
    }
    r.end_ns = clock::monotonic_ns();
    let used = task.usage().since(&before);
    if let Some(c) = counter.as_mut() {
        r.values[V::Kfaults] = c.read().saturating_sub(k0) as f64;
        r.values[V::Kok] = 1.0;
    }
    r.set_usage(&used);
    if job.populate {
        // The kernel faulted the pages in; count what is resident, not what we asked for.
        pages = region.resident_pages(page_size);
    }
    r.values[V::Pages] = pages as f64;

    let t1 = clock::monotonic_ns();
    drop(region);
    r.values[V::MunmapNs] = (clock::monotonic_ns() - t1) as f64;
    r
}

/// Folds task reports into the sample's figures.
fn summarise(
    reports: &[TaskReport],
    bytes_per_task: u64,
    page_size: u64,
    huge_size: u64,
    spec: &Spec,
) -> Result<SampleData> {
    exec::first_error(reports)?;
    let start = exec::first_start_ns(reports);
    let wall = exec::wall_ns(reports) as f64 / 1e9;
    let sum = |f: &dyn Fn(&TaskReport) -> f64| reports.iter().map(f).sum::<f64>();
    let user = sum(&|r| r.user_ns as f64 / 1e9);
    let system = sum(&|r| r.sys_ns as f64 / 1e9);
    let faults = sum(&|r| (r.minflt + r.majflt) as f64);
    let mut d = SampleData::default();
    let f = &mut d.figures;
    f.insert("wall".into(), wall);
    f.insert("user".into(), user);
    f.insert("system".into(), system);
    f.insert("faults".into(), faults);
    f.insert("majflt".into(), sum(&|r| r.majflt as f64));
    f.insert("pages".into(), sum(&|r| r.values[V::Pages]));
    f.insert(
        "bytes".into(),
        (bytes_per_task * reports.len() as u64) as f64,
    );
    if user + system > 0.0 {
        f.insert("flt/cpu/s".into(), faults / (user + system));
    }
    let pages = sum(&|r| r.values[V::Pages]);
    if wall > 0.0 {
        f.insert("fault/wsec".into(), faults / wall);
        f.insert("pages/wsec".into(), pages / wall);
        f.insert("bytes/wsec".into(), pages * page_size as f64 / wall);
    }
    if faults > 0.0 {
        f.insert("pages/fault".into(), pages / faults);
    }
    if reports.iter().all(|r| r.values[V::Kok] == 1.0) {
        f.insert("kfaults".into(), sum(&|r| r.values[V::Kfaults]));
    }
    if spec.pages == PageKind::Hugetlb && huge_size > 0 {
        // Every hugetlb page is one fault, whatever the access.
        f.insert(
            "expected".into(),
            (pages * page_size as f64 / huge_size as f64).round(),
        );
    }
    let max = |i: V| {
        reports
            .iter()
            .map(|r| r.values[i] / 1e9)
            .fold(0.0, f64::max)
    };
    f.insert("mmap".into(), max(V::MmapNs));
    f.insert("munmap".into(), max(V::MunmapNs));
    d.tasks = super::task_rows(reports, |_, r| {
        [
            ("start", (r.start_ns - start) as f64 / 1e9),
            ("wall", (r.end_ns - r.start_ns) as f64 / 1e9),
            ("user", r.user_ns as f64 / 1e9),
            ("system", r.sys_ns as f64 / 1e9),
            ("faults", (r.minflt + r.majflt) as f64),
            ("kfaults", r.values[V::Kfaults]),
            ("pages", r.values[V::Pages]),
            ("mmap", r.values[V::MmapNs] / 1e9),
            ("munmap", r.values[V::MunmapNs] / 1e9),
        ]
    });
    Ok(d)
}
