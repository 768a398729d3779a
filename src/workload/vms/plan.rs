//! Each case at each task count: its sizes on the scaled machine, the
//! memory it needs (for the refusal before a run), where its files live,
//! and the checks that refuse it before anything starts (root, nodes,
//! room on tmpfs).

use serde::{Deserialize, Serialize};
use std::path::PathBuf;

use super::cases::{Amount, Engine, Family, Row, Store};
use super::sizes::Sizes;
use crate::error::{Error, Result};
use crate::machine::Snapshot;
use crate::units;

/// The tmpfs the shm cases put their files on (the suite mounts its own;
/// /dev/shm is the tmpfs every user may use).
pub const SHM_DIR: &str = "/dev/shm";

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CasePlan {
    pub case: String,
    pub family: Family,
    pub tasks: usize,
    pub amount: Amount,
    /// Peak memory one sample takes.
    pub need: u64,
    /// Bytes the tasks touch if the runtime does not stop them first.
    pub touched: u64,
    /// The script's sizing in its own words.
    pub sizing: &'static str,
    /// What the case runs in: page-cache file system, cgroup limit, swap.
    pub room: super::room::CaseNeeds,
}

/// The part of a stored plan the report prints.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct StoredPlan {
    pub case: String,
    pub family: String,
    pub tasks: usize,
    pub amount: StoredAmount,
    pub sizing: String,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct StoredAmount {
    pub per_task: u64,
    pub file: u64,
}

/// Page-table bytes of `bytes` mapped and touched (8 bytes a page).
fn tables(bytes: u64, page: u64) -> u64 {
    bytes / page.max(1) * 8
}

/// `row` at `tasks` tasks on the machine `s` describes.
pub fn plan(row: &Row, s: &Sizes, tasks: usize) -> CasePlan {
    let n = tasks as u64;
    let a = (row.size)(s, n);
    let (need, touched) = match row.engine {
        Engine::Usemem(u) => {
            let mappings = if u.prealloc { 1 } else { n };
            let mapped = a.per_task.saturating_mul(mappings);
            let need = match (u.store, u.read) {
                // Reads of /dev/zero map the zero page: page tables only.
                (Store::Anon, true) => {
                    let units = u
                        .unit_pages
                        .map_or(mappings, |k| mapped / (k * s.page).max(1));
                    tables(mapped, s.page) + units * 256
                }
                (Store::Anon, false) if u.prealloc && !u.threads => a.per_task * (n + 1),
                // The original pages and the threads' copies of them.
                (Store::Anon, false) if u.prealloc && u.prefault => a.per_task * 2,
                (Store::Anon, false) => mapped,
                // shmem allocates a page on each read of a hole; tasks of
                // one file read the same first bytes.
                (Store::Shm, _) if u.file_per_task => a.per_task * n + tables(mapped, s.page),
                (Store::Shm, _) => a.per_task + tables(mapped, s.page),
                (Store::PageCache, _) => s.mem,
            };
            (need, a.per_task.saturating_mul(n))
        }
        Engine::Dd { readers } => (s.mem, a.per_task * n * readers as u64),
        Engine::Truncate { .. } => (s.mem, s.mem),
        Engine::Fadvise => (s.mem, a.per_task * n),
        // A child's page tables and kernel stack: some 100 KiB.
        Engine::Fork { .. } => (super::fork::count(s.scale) * (100 << 10), 0),
        Engine::HugetlbPool => {
            let bytes = super::pool::pages(s.mem, s.huge_page) * s.huge_page;
            (bytes, bytes)
        }
        // The file system's image fills the tmpfs it lives on.
        Engine::DirectWrite => (s.mem.max(64 << 20), s.mem),
        Engine::Swapin => (s.mem + s.swap, a.per_task * n),
        Engine::Ksm => (a.per_task * s.nodes, a.per_task * s.nodes),
        Engine::Migrate => (s.mem, a.per_task),
        // Nothing is touched: the file system's image.
        Engine::Mincore | Engine::Remap => (s.mem, a.per_task * n),
        Engine::Mbind | Engine::KsmHuge => (a.per_task * n, a.per_task * n),
        Engine::MigrateAcross => (a.per_task * s.nodes, a.per_task * s.nodes),
        Engine::MincoreHuge => (s.mincore_huge_pages().max(1) * s.huge_page, a.per_task),
    };
    let need = match row.family {
        Family::Swap => s.mem + s.swap,
        Family::Memcg => s.mem / 3,
        _ => need,
    };
    CasePlan {
        case: row.name.to_string(),
        family: row.family,
        tasks,
        amount: a,
        need,
        touched,
        sizing: row.sizing,
        room: super::room::needs(row, s, n),
    }
}

/// The directory a family's files go in, when it has files.
pub fn dir(family: Family) -> Option<PathBuf> {
    match family {
        Family::Shm => Some(PathBuf::from(SHM_DIR)),
        _ => None,
    }
}

fn is_root() -> bool {
    crate::exec::euid() == 0
}

/// Refuses, before anything starts, a case this machine or user cannot
/// run, with the reason and the fix.
pub fn check(p: &CasePlan, m: &Snapshot, knobs: &crate::knobs::Plan) -> Result<()> {
    let row = super::cases::find(&p.case)
        .ok_or_else(|| Error::Input(format!("unknown case {}", p.case)))?;
    if row.family == Family::Migrate && m.nodes.len() < 2 {
        return Err(Error::Refused(format!(
            "{}: moves pages between NUMA nodes ({} a task) and this machine has {} \
             node: run it in a guest with two (vmscale guest --nodes 2 ... -- run vms \
             --case {}; docs/numa.md)",
            p.case,
            units::size(p.amount.per_task),
            m.nodes.len().max(1),
            p.case
        )));
    }
    if row.engine == Engine::MigrateAcross && !is_root() {
        return Err(Error::Refused(format!(
            "{}: moves its pages with MPOL_MF_MOVE_ALL, which needs CAP_SYS_NICE: run it \
             as root",
            p.case
        )));
    }
    if needs_room(row) {
        if !is_root() {
            return Err(Error::Refused(format!(
                "{}: needs root: it runs in a set-up vmscale makes and undoes (a page-cache \
                 file system, a memory cgroup or a swap device); run it as root",
                p.case
            )));
        }
        crate::setup::check(&p.room.as_setup()).map_err(|e| e.context(&p.case))?;
    }
    // `--knob ksm_run=1` starts ksmd for the run: ksm need not run now.
    if row.engine == Engine::Ksm && knobs.values("ksm_run").is_none_or(|v| v != ["1"]) {
        super::ksm::check()?;
    }
    if row.engine == Engine::KsmHuge {
        super::ksm::check_huge(knobs)?;
    }
    if row.family == Family::Mlock && !is_root() {
        let limit = memlock_limit();
        let per = p.amount.per_task;
        if limit < per {
            return Err(Error::Refused(format!(
                "{}: mlock of {} per task exceeds RLIMIT_MEMLOCK ({}): run as root, or \
                 raise the limit (ulimit -l), or use a smaller --size",
                p.case,
                units::size(per),
                units::size(limit)
            )));
        }
    }
    if row.family == Family::Shm {
        let free = tmpfs_free(SHM_DIR)?;
        if p.need > free {
            return Err(Error::Refused(format!(
                "{}: needs {} of tmpfs but {SHM_DIR} has {} free: use a smaller --size",
                p.case,
                units::size(p.need),
                units::size(free)
            )));
        }
    }
    Ok(())
}

/// Whether the case runs in the set-up room: on the page-cache file
/// system, in a memory cgroup or with a swap device.
pub fn needs_room(row: &Row) -> bool {
    match row.engine {
        Engine::Usemem(u) => u.store == Store::PageCache || u.hugetlb || row.family == Family::Swap,
        Engine::Dd { .. }
        | Engine::Truncate { .. }
        | Engine::Swapin
        | Engine::Fadvise
        | Engine::HugetlbPool
        | Engine::DirectWrite
        | Engine::Mincore
        | Engine::MincoreHuge
        | Engine::Remap => true,
        Engine::Ksm
        | Engine::KsmHuge
        | Engine::Migrate
        | Engine::Mbind
        | Engine::MigrateAcross
        | Engine::Fork { .. } => false,
    }
}

/// `--case list`: every case, its family, and what it needs beyond an
/// ordinary user on one NUMA node (what `check` refuses without); the
/// sizing is in the plan and docs/vms.md.
pub fn listing() -> Vec<String> {
    let cases = super::cases::CASES;
    let name_w = cases.iter().map(|r| r.name.len()).max().unwrap_or(0);
    let family_w = cases
        .iter()
        .map(|r| r.family.name().len())
        .max()
        .unwrap_or(0);
    cases
        .iter()
        .map(|r| {
            let line = format!(
                "{:name_w$}  {:family_w$}  {}",
                r.name,
                r.family.name(),
                needs(r)
            );
            line.trim_end().to_string()
        })
        .collect()
}

/// What `check` refuses a case without, in a few words.
fn needs(row: &Row) -> String {
    if needs_room(row) {
        let made = [
            (
                matches!(row.engine, Engine::Usemem(u) if u.hugetlb)
                    || matches!(row.engine, Engine::HugetlbPool | Engine::MincoreHuge),
                "hugetlb pool",
            ),
            (super::room::on_fs(row), "fs"),
            (
                matches!(row.family, Family::PageCache | Family::Memcg | Family::Swap),
                "memcg",
            ),
            (row.family == Family::Swap, "swap"),
        ];
        let made: Vec<&str> = made.iter().filter(|m| m.0).map(|m| m.1).collect();
        return format!("root: {}", made.join(", "));
    }
    match (row.family, row.engine) {
        (Family::Migrate, Engine::MigrateAcross) => "root, 2 NUMA nodes".into(),
        (Family::Migrate, _) => "2 NUMA nodes".into(),
        (_, Engine::Ksm) => "ksmd running".into(),
        (_, Engine::KsmHuge) => "root: knobs thp, ksm_*, khugepaged".into(),
        (Family::Mlock, _) => "root, or ulimit -l".into(),
        (Family::Shm, _) => format!("room on {SHM_DIR}"),
        _ => String::new(),
    }
}

fn memlock_limit() -> u64 {
    let mut r = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: r is a valid, writable rlimit.
    if unsafe { libc::getrlimit(libc::RLIMIT_MEMLOCK, &mut r) } != 0 {
        return 0;
    }
    r.rlim_cur
}

/// Free bytes of the tmpfs at `dir`; refuses a directory that is not one.
fn tmpfs_free(dir: &str) -> Result<u64> {
    let c = std::ffi::CString::new(dir).map_err(|_| Error::Failed("bad path".into()))?;
    // SAFETY: zeroed statfs is a valid out-parameter.
    let mut st: libc::statfs = unsafe { std::mem::zeroed() };
    // SAFETY: c is a valid C string and st is writable.
    if unsafe { libc::statfs(c.as_ptr(), &mut st) } != 0 {
        return Err(Error::Refused(format!(
            "{dir}: cannot read it ({}): the shm cases need a tmpfs there",
            crate::exec::errno_text()
        )));
    }
    if st.f_type != libc::TMPFS_MAGIC {
        return Err(Error::Refused(format!(
            "{dir} is not a tmpfs: the shm cases need one there (mount -t tmpfs tmpfs {dir})"
        )));
    }
    Ok(st.f_bavail * st.f_bsize as u64)
}

/// The plan's text lines: the scaled machine and each case's sizes.
pub fn notes(cfg: &super::Config) -> Vec<String> {
    let s = &cfg.sizes;
    let mut out = vec![
        format!(
            "machine modelled: {:.4} of this one: mem {}, mem_avail {}, rotate {}",
            s.scale,
            units::size(s.mem),
            units::size(s.mem_avail),
            units::size(s.rotate())
        ),
        format!("runtime {} s per sample at most", cfg.runtime_s),
    ];
    for p in &cfg.plans {
        let file = if p.amount.file > 0 {
            format!(", file {}", units::size(p.amount.file))
        } else {
            String::new()
        };
        out.push(format!(
            "{} x{}: {} per task{file}; needs {} ({})",
            p.case,
            p.tasks,
            units::size(p.amount.per_task),
            units::size(p.need),
            p.sizing
        ));
    }
    out
}
