//! The set-up a case runs in, made through `crate::setup` (crash-safe:
//! journaled before it is made, undone at the end of the run or at the
//! next start): the page-cache file system its files live on, the memory
//! cgroup that puts it under pressure, the swap device it swaps to. A
//! case in a cgroup runs in a forked child that joins the cgroup first,
//! so only the case's own memory is charged there.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Mutex;

use super::cases::{Engine, Family, Row, Store};
use super::sizes::Sizes;
use crate::error::{Error, Result};
use crate::exec::region::Region;
use crate::model::SampleData;
use crate::setup::{Memcg, Needs, Setup};

/// What one case needs of the room.
#[derive(Debug, Clone, Copy, PartialEq, Default, serde::Serialize)]
pub struct CaseNeeds {
    pub page_cache_fs: Option<u64>,
    pub memcg: Option<u64>,
    pub swap: Option<u64>,
    /// Huge pages of the default size added to the hugetlb pool.
    pub hugetlb_pages: Option<u64>,
}

impl CaseNeeds {
    /// The same as `setup::Needs`, for its check before anything is made.
    pub fn as_setup(&self) -> Needs {
        Needs {
            page_cache_bytes: self.page_cache_fs,
            memcg_bytes: self.memcg,
            swap_bytes: self.swap,
            hugetlb_pages: self.hugetlb_pages,
        }
    }
}

/// The room `row` needs on the machine `s` models: page-cache cases read
/// more than the memory holds, so they run in a cgroup of the modelled
/// machine's size; lru-memcg in one of a third of it (the script's
/// limit); the swap cases in one of its available memory (what the
/// suite's writes of (avail + swap) * 3/4 exceed on any machine; a cgroup
/// of `mem` would hold them whenever avail < mem/3) with a swap device
/// of `mem`; swapin, whose tasks write mem_avail and page it out
/// themselves, in one of `mem`, which holds the writes without reclaim.
/// The `-hugetlb` cases at `tasks` tasks get the pool setup_hugetlb asks
/// for (as nr_hugepages: reserved, not overcommitted).
pub fn needs(row: &Row, s: &Sizes, tasks: u64) -> CaseNeeds {
    // The file system holds what msync writes back (mem/2); at least 64 MiB.
    let fs = Some(s.mem.max(64 << 20));
    let mut n = CaseNeeds {
        page_cache_fs: on_fs(row).then_some(fs).flatten(),
        hugetlb_pages: hugetlb_pages(row, s, tasks),
        ..CaseNeeds::default()
    };
    match row.family {
        Family::PageCache => n.memcg = Some(s.mem),
        Family::Memcg => n.memcg = Some(s.mem / 3),
        Family::Swap => {
            let swapin = row.engine == Engine::Swapin;
            n.memcg = Some(if swapin { s.mem } else { s.mem_avail });
            n.swap = Some(s.swap);
        }
        _ => {}
    }
    n
}

/// The huge pages a case's pool needs, if it maps hugetlb pages.
pub fn hugetlb_pages(row: &Row, s: &Sizes, tasks: u64) -> Option<u64> {
    match row.engine {
        Engine::Usemem(u) if u.hugetlb => Some(s.hugetlb_pages(s.mem / 2, tasks)),
        Engine::MincoreHuge => Some(s.mincore_huge_pages().max(1)),
        _ => None,
    }
}

/// Whether the case's files live on the page-cache file system.
pub fn on_fs(row: &Row) -> bool {
    match row.engine {
        Engine::Usemem(u) => u.store == Store::PageCache,
        Engine::Dd { .. }
        | Engine::Truncate { .. }
        | Engine::Fadvise
        | Engine::DirectWrite
        | Engine::Mincore
        | Engine::Remap => true,
        _ => false,
    }
}

/// What the run has made so far, kept for its life.
#[derive(Default)]
pub struct Room {
    made: Mutex<Made>,
}

#[derive(Default)]
struct Made {
    setup: Option<Setup>,
    fs: Option<PathBuf>,
    memcgs: Vec<(u64, Memcg)>,
    swap: bool,
    /// Huge pages added to the pool so far.
    huge: u64,
}

impl Room {
    /// The directory and cgroup for a case, made on first use.
    pub fn enter(&self, n: &CaseNeeds) -> Result<(Option<PathBuf>, Option<Memcg>)> {
        let mut m = self
            .made
            .lock()
            .map_err(|_| Error::Failed("the set-up's lock was poisoned".into()))?;
        if m.setup.is_none() {
            m.setup = Some(Setup::new()?);
        }
        let Made {
            setup,
            fs,
            memcgs,
            swap,
            huge,
        } = &mut *m;
        let setup = setup
            .as_mut()
            .ok_or_else(|| Error::Failed("no set-up".into()))?;
        if let Some(bytes) = n.page_cache_fs
            && fs.is_none()
        {
            *fs = Some(setup.page_cache_fs(bytes)?);
        }
        if let Some(bytes) = n.swap
            && !*swap
        {
            setup.swap(bytes)?;
            *swap = true;
        }
        if let Some(pages) = n.hugetlb_pages
            && pages > *huge
        {
            setup.hugetlb_pages(pages - *huge)?;
            *huge = pages;
        }
        let cg = match n.memcg {
            Some(max) => match memcgs.iter().find(|(b, _)| *b == max) {
                Some((_, c)) => Some(c.clone()),
                None => {
                    let c = setup.memcg(max)?;
                    memcgs.push((max, c.clone()));
                    Some(c)
                }
            },
            None => None,
        };
        Ok((n.page_cache_fs.and(fs.clone()), cg))
    }
}

/// Counters of memory.stat worth a delta (the rest are sizes).
fn counter(name: &str) -> bool {
    ["pg", "workingset_", "thp_", "pswp", "swp", "total_pg"]
        .iter()
        .any(|p| name.starts_with(p))
}

fn counters(cg: &Memcg) -> BTreeMap<String, u64> {
    let mut all: BTreeMap<String, u64> = cg
        .stat()
        .unwrap_or_default()
        .into_iter()
        .filter(|(k, _)| counter(k))
        .collect();
    for (k, v) in cg.events().unwrap_or_default() {
        all.insert(format!("events.{k}"), v);
    }
    all
}

/// What the case's child hands back through the shared page: its sample,
/// or its error's message and kind (bad input or a refusal stays exit 2).
#[derive(serde::Serialize, serde::Deserialize)]
enum Reply {
    Sample(SampleData),
    Refused(String),
    Failed(String),
}

impl Reply {
    fn of(r: Result<SampleData>) -> Reply {
        match r {
            Ok(s) => Reply::Sample(s),
            Err(e) if e.is_input() => Reply::Refused(e.to_string()),
            Err(e) => Reply::Failed(e.to_string()),
        }
    }

    fn into_result(self) -> Result<SampleData> {
        match self {
            Reply::Sample(s) => Ok(s),
            Reply::Refused(m) => Err(Error::Refused(m)),
            Reply::Failed(m) => Err(Error::Failed(m)),
        }
    }
}

/// Bytes of the shared page a child returns its sample through.
const RESULT_BYTES: usize = 1 << 20;

/// Runs `body` in a child that joins `cg` first; adds the cgroup's
/// counter deltas to the sample it returns.
pub fn in_cgroup(cg: &Memcg, body: impl Fn() -> Result<SampleData>) -> Result<SampleData> {
    let shared = Region::shared(RESULT_BYTES)?;
    let before = counters(cg);
    let forked = crate::exec::children::Forked::spawn(1, "case", |_| {
        let out = Reply::of(cg.add_pid(std::process::id()).and_then(|_| body()));
        let text = serde_json::to_vec(&out).unwrap_or_default();
        let n = text.len().min(RESULT_BYTES - 8);
        shared
            .u64_at(0)
            .store(n as u64, std::sync::atomic::Ordering::SeqCst);
        // SAFETY: n + 8 <= RESULT_BYTES, inside the shared region.
        unsafe { std::ptr::copy_nonoverlapping(text.as_ptr(), shared.ptr().add(8), n) };
    })?;
    forked.reap()?;
    let n = shared.u64_at(0).load(std::sync::atomic::Ordering::SeqCst) as usize;
    // SAFETY: the child wrote n bytes after the length word; n is bounded.
    let text = unsafe { std::slice::from_raw_parts(shared.ptr().add(8), n.min(RESULT_BYTES - 8)) };
    let out: Reply = serde_json::from_slice(text)
        .map_err(|e| Error::Failed(format!("the case's child returned no sample: {e}")))?;
    let mut data = out.into_result()?;
    let after = counters(cg);
    for (k, v) in &after {
        let d = *v as f64 - before.get(k).copied().unwrap_or(0) as f64;
        if d != 0.0 {
            data.figures.insert(format!("{}{k}", super::MEMCG), d);
        }
    }
    Ok(data)
}
