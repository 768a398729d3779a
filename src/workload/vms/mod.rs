//! vms: Intel vm-scalability's cases by their own names (`vmscale run vms
//! --case lru-file-readtwice`), each implemented natively with the
//! semantics of the suite's `case-*` script, sized from the machine as
//! the suite sizes them and scaled by `--size`. The headline is
//! `throughput`, KB/s summed over tasks, as the 0-day robot reports it
//! (docs/vms.md).

pub mod cases;
mod dd;
mod direct;
mod fadvise;
mod fork;
mod ksm;
mod migrate;
mod mincore;
mod nodes;
mod plan;
mod pool;
mod remap;
mod room;
mod segment;
pub mod sizes;
pub mod suite;
mod swapin;
mod truncate;
mod usemem;
mod words;

use super::spec::{lower, rate};
use serde::{Deserialize, Serialize};

use super::spec::{Env, Options, Spec};
use super::stored::lenient;
use super::{Case, Measure, SampleData, Workload};
use crate::error::{Error, Result};
use crate::exec::{self, Mode};
use crate::machine::Snapshot;
use crate::workload::fault_map::OwnedFile;
pub use cases::{Engine, Family, Row};
pub use plan::CasePlan;
pub use words::Access;

/// The prefix under which a sample carries its cgroup's counters.
pub const MEMCG: &str = "memcg.";
/// ... and ksmd's and migrate_pages' counts.
pub const KSM: &str = "ksm.";
pub const MIGRATE: &str = "migrate.";
use sizes::Sizes;

// `vmscale run vms`'s options; the harness options are added beside them.
#[derive(clap::Args, Debug, Clone)]
pub struct Args {
    /// vm-scalability case names, repeated or comma-separated; globs such as
    /// 'lru-*' pick a family (the list: vmscale run vms --case list)
    #[arg(long = "case", value_name = "NAME", required = true)]
    pub cases: Vec<String>,
    /// Task counts (the suite's nr_task) [default: the online CPUs, as the suite]
    #[arg(long)]
    pub tasks: Option<String>,
    /// The machine the sizes are derived from, as a fraction of this one's
    /// memory (1/16, 25%) or a size (2G); pressure cases get a cgroup that big
    #[arg(long, default_value = "1/16")]
    pub size: String,
    /// Seconds a sample runs at most (usemem's --runtime, dd's timeout)
    #[arg(long, default_value_t = 2.0)]
    pub runtime: f64,
    /// How usemem's cases walk their words: `usemem`, the suite's loop (the
    /// same user time a page); `native` departs from the suite (a tighter
    /// loop: a kernel change moves the figure by more than the suite's)
    #[arg(long, value_enum, default_value_t = Access::Usemem)]
    pub access: Access,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Config {
    pub cases: Vec<String>,
    pub tasks: Vec<usize>,
    pub runtime_s: f64,
    /// The word loop of usemem's cases (and case-swapin's read).
    pub access: Access,
    pub sizes: Sizes,
    /// Each case at each task count: its sizes and what it needs.
    pub plans: Vec<CasePlan>,
}

/// What the vms report reads of a stored run's configuration.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct Stored {
    #[serde(deserialize_with = "lenient")]
    pub runtime_s: Option<f64>,
    pub plans: Vec<plan::StoredPlan>,
}

pub struct Vms {
    cfg: Config,
    /// What the run made for its cases; undone when the run ends.
    room: room::Room,
}

impl Options for Args {
    fn build(&self, env: &Env) -> Result<Box<dyn Workload>> {
        let (a, m, knobs) = (self, env.machine, env.knobs);
        let rows = cases::select(&a.cases)?;
        let cpus = super::options::online(m);
        let tasks = match &a.tasks {
            Some(t) => super::options::tasks(t, m)?,
            None => vec![cpus],
        };
        super::check_tasks(&tasks)?;
        if !(a.runtime.is_finite() && (0.05..=3600.0).contains(&a.runtime)) {
            return Err(Error::Input(format!(
                "--runtime {} is out of range: use 0.05 to 3600 seconds",
                a.runtime
            )));
        }
        let mem_total = m.mem_total_kib.unwrap_or(0) * 1024;
        let scale = sizes::parse_scale(&a.size, mem_total)?;
        let sizes = Sizes::read(m, &crate::machine::root(), scale);
        let mut plans = Vec::new();
        for row in &rows {
            for &n in &tasks {
                plans.push(plan::plan(row, &sizes, n));
            }
        }
        for p in &plans {
            plan::check(p, m, knobs)?;
        }
        let cfg = Config {
            cases: rows.iter().map(|r| r.name.to_string()).collect(),
            tasks,
            runtime_s: a.runtime,
            access: a.access,
            sizes,
            plans,
        };
        let room = room::Room::default();
        env.made(cfg, |cfg| Ok(Vms { cfg, room }))
    }
}

/// `run quick`: one short case of each family that runs without the
/// set-up room, on 1/512 of the machine.
pub fn quick(_: &Snapshot) -> Vec<Vec<String>> {
    vec![super::spec::args(
        "--case anon-w-seq,lru-shm,small-allocs --size 1/512 --runtime 0.1",
    )]
}

/// vms in the registry (`workload::REGISTRY`).
pub const SPEC: Spec = Spec {
    name: "vms",
    about: "vm-scalability's cases by name: anon, page cache, shm, memcg, swap, msync, ...",
    examples: "Examples:\n  vmscale run vms --case lru-file-readtwice\n  \
vmscale run vms --case 'anon-w-*' --tasks 1,2 --size 1/32\n  \
vmscale run vms --case swap-w-seq --case swap-w-rand-mt --runtime 5\n  \
vmscale run vms --case list\n  \
vmscale run vms --case suite    (the suite's 71 scripts: run or refused)\n\n\
Sizes follow the suite's scripts on a machine of --size times this one's\n\
memory; cases that need pressure run in a cgroup of that size (docs/vms.md).",
    // The figures every vms run reports; `throughput` first, as the 0-day
    // robot names it.
    figures: &[
        rate("throughput", "KB/s"),
        lower("wall", "s"),
        lower("minflt", "faults"),
        lower("majflt", "faults"),
    ],
    report: super::Report::Vms,
    size_flags: "a smaller --size or fewer --tasks",
    quick,
    listing: Some(super::spec::Listing {
        option: "cases",
        lines: plan::listing,
        also: &[("suite", suite::listing)],
    }),
    ..Spec::of::<Args>()
};

impl Vms {
    fn plan(&self, case: &Case) -> Result<&CasePlan> {
        self.cfg
            .plans
            .iter()
            .find(|p| p.case == case.variant && p.tasks == case.tasks)
            .ok_or_else(|| Error::Failed(format!("no plan for case {}", case.key())))
    }

    fn runtime_ns(&self) -> u64 {
        (self.cfg.runtime_s * 1e9) as u64
    }
}

/// Sums the tasks' reports into the sample's figures: throughput as
/// usemem reports it (each task's bytes over its own time, summed).
fn figures_of(reports: &[exec::TaskReport]) -> SampleData {
    let mut data = SampleData::default();
    let mut total = 0.0;
    for r in reports {
        let ns = (r.end_ns.saturating_sub(r.start_ns)) as f64 + r.values[usemem::V::BeforeNs];
        let kbps = if ns > 0.0 {
            r.values[usemem::V::Bytes] / 1024.0 / (ns / 1e9)
        } else {
            0.0
        };
        total += kbps;
        let mut t = std::collections::BTreeMap::new();
        t.insert("throughput".to_string(), kbps);
        t.insert("bytes".to_string(), r.values[usemem::V::Bytes]);
        data.tasks.push(t);
    }
    let wall = exec::wall_ns(reports) as f64 / 1e9;
    data.figures.insert("throughput".into(), total);
    data.figures.insert("wall".into(), wall);
    data.figures.insert(
        "minflt".into(),
        reports.iter().map(|r| r.minflt as f64).sum(),
    );
    data.figures.insert(
        "majflt".into(),
        reports.iter().map(|r| r.majflt as f64).sum(),
    );
    data
}

impl Measure for Vms {
    fn cases(&self) -> Vec<Case> {
        self.cfg
            .plans
            .iter()
            .map(|p| Case::new(p.tasks, &p.case))
            .collect()
    }
    fn memory_need(&self) -> u64 {
        self.cfg.plans.iter().map(|p| p.need).max().unwrap_or(0)
    }
    fn sample_s(&self, case: &Case) -> f64 {
        let Ok(p) = self.plan(case) else {
            return self.cfg.runtime_s;
        };
        let model = super::cost::default_s(p.touched, case.tasks);
        model.min(self.cfg.runtime_s)
    }
    fn plan_notes(&self) -> Vec<String> {
        plan::notes(&self.cfg)
    }
    fn plan_detail(&self) -> serde_json::Map<String, serde_json::Value> {
        let mut m = serde_json::Map::new();
        m.insert(
            "sizes".into(),
            serde_json::to_value(&self.cfg.sizes).unwrap_or_default(),
        );
        m.insert(
            "case_sizes".into(),
            serde_json::to_value(&self.cfg.plans).unwrap_or_default(),
        );
        m
    }
    fn sample(&self, case: &Case) -> Result<SampleData> {
        let p = self.plan(case)?;
        let row = cases::find(&p.case)
            .ok_or_else(|| Error::Failed(format!("unknown case {}", p.case)))?;
        let s = &self.cfg.sizes;
        let runtime = self.runtime_ns();
        if !plan::needs_room(row) {
            let dir = plan::dir(row.family);
            return run_case(row, p, dir.as_deref(), s, runtime, self.cfg.access);
        }
        let (dir, cg) = self.room.enter(&p.room)?;
        match cg {
            Some(cg) => room::in_cgroup(&cg, || {
                run_case(row, p, dir.as_deref(), s, runtime, self.cfg.access)
            }),
            None => run_case(row, p, dir.as_deref(), s, runtime, self.cfg.access),
        }
    }
}

/// The figures of a sample that ran without tasks (ksm, migrate).
fn data(figures: std::collections::BTreeMap<String, f64>) -> SampleData {
    SampleData {
        figures,
        tasks: Vec::new(),
    }
}

/// Unnamed sparse files in `dir`, `count` of `len` bytes.
fn files(dir: Option<&std::path::Path>, count: usize, len: u64) -> Result<Vec<OwnedFile>> {
    if count == 0 {
        return Ok(Vec::new());
    }
    let dir = dir.ok_or_else(|| Error::Failed("no directory for the case's files".into()))?;
    (0..count).map(|_| OwnedFile::tmpfile(dir, len)).collect()
}

/// One sample of `row` as `p` plans it, in this process.
fn run_case(
    row: &Row,
    p: &CasePlan,
    dir: Option<&std::path::Path>,
    s: &Sizes,
    runtime: u64,
    access: Access,
) -> Result<SampleData> {
    let n = p.tasks;
    let procs = vec![None; n];
    let out = match row.engine {
        Engine::Usemem(u) => {
            let count = match (u.store, u.file_per_task) {
                (cases::Store::Anon, _) => 0,
                (_, true) => n,
                (_, false) => 1,
            };
            let f = files(dir, count, p.amount.file.max(p.amount.per_task))?;
            let prep = usemem::prepare(&u, p.amount, s.huge_page, f)?;
            let mode = if u.threads {
                Mode::Thread
            } else {
                Mode::Process
            };
            exec::run_tasks(mode, &procs, |t| {
                usemem::task(&u, access, p.amount, s.page, &prep, t, runtime)
            })?
        }
        Engine::Dd { readers } => {
            let f = files(dir, n, p.amount.file)?;
            let cpus = vec![None; n * readers];
            exec::run_tasks(Mode::Process, &cpus, |t| dd::task(&f, readers, t, runtime))?
        }
        Engine::Truncate { sequential: false } => {
            let f = files(dir, n, p.amount.file)?;
            exec::run_tasks(Mode::Process, &procs, |t| truncate::task(&f, t))?
        }
        Engine::Truncate { sequential: true } => {
            let f = files(dir, n, p.amount.file)?;
            exec::run_tasks(Mode::Process, &[None], |t| truncate::sequential(&f, t))?
        }
        Engine::Fadvise => {
            let f = files(dir, n, p.amount.file)?;
            exec::run_tasks(Mode::Process, &procs, |t| fadvise::task(&f, t))?
        }
        Engine::DirectWrite => {
            let f = files(dir, n, p.amount.file)?;
            exec::run_tasks(Mode::Process, &procs, |t| direct::task(&f, t, runtime))?
        }
        Engine::HugetlbPool => return pool::sample(s.mem, s.huge_page).map(data),
        Engine::Fork { sleep_s } => {
            let sleep = (sleep_s * 1_000_000_000).min(runtime);
            return fork::sample(fork::count(s.scale), sleep).map(data);
        }
        Engine::Swapin => {
            let written = crate::exec::region::Region::shared(64)?;
            let push = p.amount.per_task.saturating_mul(n as u64).min(s.swap);
            exec::run_tasks(Mode::Process, &procs, |t| {
                swapin::task(p.amount.per_task, push, n, &written, t, runtime, access)
            })?
        }
        Engine::Ksm => return ksm::sample(s.nodes, p.amount.per_task, runtime).map(data),
        Engine::KsmHuge => {
            return ksm::sample_huge(n as u64, p.amount.per_task, runtime).map(data);
        }
        Engine::Migrate => {
            return migrate::sample(s.nodes, p.amount.per_task, s.page, runtime).map(data);
        }
        Engine::Mincore => {
            let f = files(dir, n, p.amount.file)?;
            exec::run_tasks(Mode::Process, &procs, |t| {
                mincore::task(&f, p.amount.per_task, s.page, t)
            })?
        }
        Engine::Remap => {
            let f = files(dir, n, p.amount.file)?;
            exec::run_tasks(Mode::Process, &procs, |t| {
                remap::task(&f, p.amount.per_task, s.page, t, runtime)
            })?
        }
        Engine::Mbind => exec::run_tasks(Mode::Process, &procs, |t| {
            nodes::task(true, p.amount.per_task, s.page, t)
        })?,
        // The script starts a usemem_migrate a node.
        Engine::MigrateAcross => {
            let each = vec![None; s.nodes as usize];
            exec::run_tasks(Mode::Process, &each, |t| {
                nodes::task(false, p.amount.per_task, s.page, t)
            })?
        }
        // usemem -H does its work before its tasks: one process.
        Engine::MincoreHuge => exec::run_tasks(Mode::Process, &[None], |t| {
            mincore::hugetlb(p.amount.per_task, s.huge_page, s.page, t)
        })?,
    };
    exec::first_error(&out.reports)?;
    let mut data = figures_of(&out.reports);
    if let Some(name) = row.engine.count() {
        let sum = out.reports.iter().map(|r| r.values[usemem::V::Count]).sum();
        data.figures.insert(name.into(), sum);
    }
    Ok(data)
}
