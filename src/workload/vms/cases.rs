//! vm-scalability's cases by their own names, one row each: the family,
//! what the case maps and how its tasks touch it (the options the suite's
//! `case-*` script passes to usemem, or the other program it runs), and
//! how big it is, as the script derives it from the machine.

use super::sizes::Sizes;
use crate::error::{Error, Result};

/// The families docs/vms.md describes, one implementation each.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
// Tests list every family through clap's derive, so none can be left out.
#[cfg_attr(test, derive(clap::ValueEnum))]
pub enum Family {
    Anon,
    PageCache,
    Shm,
    Memcg,
    Swap,
    Msync,
    Truncate,
    Mlock,
    SmallAllocs,
    Migrate,
    Ksm,
    Fork,
    Hugetlb,
    DirectWrite,
    Mincore,
    Remap,
}

impl Family {
    /// The family's name, as the plan and `--case list` show it.
    pub fn name(self) -> &'static str {
        match self {
            Family::Anon => "anon",
            Family::PageCache => "page-cache",
            Family::Shm => "shm",
            Family::Memcg => "memcg",
            Family::Swap => "swap",
            Family::Msync => "msync",
            Family::Truncate => "truncate",
            Family::Mlock => "mlock",
            Family::SmallAllocs => "small-allocs",
            Family::Migrate => "migrate",
            Family::Ksm => "ksm",
            Family::Fork => "fork",
            Family::Hugetlb => "hugetlb",
            Family::DirectWrite => "direct-write",
            Family::Mincore => "mincore",
            Family::Remap => "remap",
        }
    }
}

/// Where a case's file lives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Store {
    /// `/dev/zero` mapped private: anonymous memory, as usemem maps it.
    Anon,
    /// A sparse file on tmpfs (the suite's `$SHM_FILE`): shmem pages.
    Shm,
    /// A sparse file on a loop-mounted file system (`$SPARSE_FILE`): page
    /// cache without disk traffic.
    PageCache,
}

/// usemem's options as a case passes them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Use {
    /// `-t` (threads of one process) rather than `-n` (processes).
    pub threads: bool,
    pub store: Store,
    /// One usemem (one task) per file, each its own file (the scripts'
    /// `for i in seq 1 $nr_task` loops); otherwise one file for all.
    pub file_per_task: bool,
    /// `--readonly`.
    pub read: bool,
    /// `--random`.
    pub random: bool,
    /// `--prealloc`: one mapping made before the tasks start, shared by
    /// them (threads) or inherited (processes: copy-on-write).
    pub prealloc: bool,
    /// `--prefault`: MAP_POPULATE.
    pub prefault: bool,
    /// `--mlock` after the pass.
    pub mlock: bool,
    /// `--msync`: msync(MS_SYNC) after each pass.
    pub msync: bool,
    /// `--unit`: allocate in chunks of this many pages (small-allocs).
    pub unit_pages: Option<u64>,
    /// `-O -U`: MAP_ANONYMOUS | MAP_HUGETLB, pages from the hugetlb pool.
    pub hugetlb: bool,
    /// `-E`: the `--prealloc` mapping grown tenfold by mremap(2) before
    /// the tasks start.
    pub remap: bool,
    /// `-L`: a SysV segment as big as a task's memory made, touched,
    /// SHM_LOCKed, unlocked and removed before the tasks start.
    pub shm_lock: bool,
}

/// usemem's defaults: one anonymous private mapping per task, written
/// sequentially.
pub const USE: Use = Use {
    threads: false,
    store: Store::Anon,
    file_per_task: false,
    read: false,
    random: false,
    prealloc: false,
    prefault: false,
    mlock: false,
    msync: false,
    unit_pages: None,
    hugetlb: false,
    remap: false,
    shm_lock: false,
};

/// How a case runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Engine {
    Usemem(Use),
    /// `dd bs=4k if=FILE of=/dev/null`, `readers` of them on each task's file.
    Dd {
        readers: usize,
    },
    /// Files read into the page cache, then removed by all tasks at once,
    /// or by one task one after the other (`sequential`).
    Truncate {
        sequential: bool,
    },
    /// Each task's file advised WILLNEED, then DONTNEED.
    Fadvise,
    /// Processes forked with no memory, all at once, each sleeping this
    /// long (at most the runtime) before it exits.
    Fork {
        sleep_s: u64,
    },
    /// The hugetlb pool grown to mem/3 and shrunk back.
    HugetlbPool,
    /// Each task's file written with O_DIRECT until full.
    DirectWrite,
    /// Tasks write their memory, others push it out to swap, then the
    /// tasks read it back (usemem -W).
    Swapin,
    /// Pages of a mapping merged by ksmd (usemem_ksm).
    Ksm,
    /// Pages of a mapping moved between nodes (migratepages).
    Migrate,
    /// Each task's sparse file mapped and asked about by mincore(2)
    /// (usemem -N).
    Mincore,
    /// A SysV segment of hugetlb pages asked about by mincore(2), then
    /// written a byte a huge page, by one task (usemem -H).
    MincoreHuge,
    /// Each task's file mapped populated, its pages remapped in reverse
    /// order by remap_file_pages(2) (usemem_remap).
    Remap,
    /// Each task's pages moved to node 0 by move_pages(2), then bound to
    /// node 1 by mbind(2) (usemem_mbind).
    Mbind,
    /// A task a node: its pages moved to node 1 by move_pages(2), then
    /// back by migrate_pages(2) (usemem_migrate).
    MigrateAcross,
    /// Mappings advised MADV_HUGEPAGE, collapsed by khugepaged, then
    /// merged by ksmd (usemem_ksm_hugepages).
    KsmHuge,
}

impl Engine {
    /// The name under which a sample carries the sum of its tasks'
    /// `usemem::V::Count`, for the engines that count something.
    pub fn count(self) -> Option<&'static str> {
        match self {
            Engine::Mincore | Engine::MincoreHuge => Some("mincore.resident"),
            Engine::Remap => Some("remap.calls"),
            Engine::Mbind | Engine::MigrateAcross => Some("nodes.misplaced"),
            _ => None,
        }
    }
}

/// Bytes a case works on: per task (usemem's size argument) and the
/// size of each file it maps.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
pub struct Amount {
    pub per_task: u64,
    pub file: u64,
}

/// One case of the suite.
pub struct Row {
    pub name: &'static str,
    pub family: Family,
    pub engine: Engine,
    /// The sizes, from the machine and the task count, as the script
    /// computes them.
    pub size: fn(&Sizes, u64) -> Amount,
    /// The script's sizing, in its own terms (for the plan and the docs).
    pub sizing: &'static str,
}

const fn anon(threads: bool, read: bool, random: bool, prealloc: bool) -> Engine {
    Engine::Usemem(Use {
        threads,
        read,
        random,
        prealloc,
        ..USE
    })
}

const fn cow(threads: bool, random: bool) -> Engine {
    Engine::Usemem(Use {
        threads,
        random,
        prealloc: true,
        prefault: true,
        ..USE
    })
}

const fn file(store: Store, threads: bool, per_task: bool, random: bool, prealloc: bool) -> Engine {
    Engine::Usemem(file_use(store, threads, per_task, random, prealloc))
}

const fn file_use(
    store: Store,
    threads: bool,
    per_task: bool,
    random: bool,
    prealloc: bool,
) -> Use {
    Use {
        threads,
        store,
        file_per_task: per_task,
        read: true,
        random,
        prealloc,
        ..USE
    }
}

const fn msync(threads: bool) -> Engine {
    Engine::Usemem(Use {
        threads,
        store: Store::PageCache,
        file_per_task: !threads,
        prealloc: true,
        prefault: true,
        msync: true,
        ..USE
    })
}

/// `-O -U`: hugetlb pages, written; `cow`: preallocated and prefaulted
/// before the fork.
const fn hugetlb(cow: bool, random: bool) -> Engine {
    Engine::Usemem(Use {
        random,
        prealloc: cow,
        prefault: cow,
        hugetlb: true,
        ..USE
    })
}

const fn small(threads: bool) -> Engine {
    Engine::Usemem(Use {
        threads,
        read: true,
        unit_pages: Some(10),
        ..USE
    })
}

const fn swap(threads: bool, random: bool) -> Engine {
    Engine::Usemem(Use {
        threads,
        random,
        ..USE
    })
}

fn per(total: u64, n: u64) -> u64 {
    total / n.max(1)
}

fn amount(per_task: u64) -> Amount {
    both(per_task, 0)
}

fn both(per_task: u64, file: u64) -> Amount {
    Amount { per_task, file }
}

fn half_mem(s: &Sizes, n: u64) -> Amount {
    amount(per(s.mem / 2, n))
}
fn half_mem_whole(s: &Sizes, _: u64) -> Amount {
    amount(s.mem / 2)
}
fn cow_procs(s: &Sizes, n: u64) -> Amount {
    amount(per(s.mem / 2, n + 1))
}
fn quarter_mem(s: &Sizes, _: u64) -> Amount {
    amount(s.mem / 4)
}
fn rotate_per(s: &Sizes, n: u64) -> Amount {
    amount(per(s.rotate(), n))
}
fn rotate_whole(s: &Sizes, _: u64) -> Amount {
    amount(s.rotate())
}
fn pte_per(s: &Sizes, n: u64) -> Amount {
    amount(per(s.pte_limit(), n).min(Sizes::AS_LIMIT))
}
fn pte_per_mt(s: &Sizes, n: u64) -> Amount {
    amount(per(s.pte_limit().min(Sizes::AS_LIMIT), n))
}
fn shm_lru(s: &Sizes, n: u64) -> Amount {
    both(per(s.shm_size, n) / 2, s.shm_size)
}
fn shm_half(s: &Sizes, _: u64) -> Amount {
    both(s.shm_size / 2, s.shm_size)
}
fn mlock_size(s: &Sizes, n: u64) -> Amount {
    amount(per(s.reclaimable, n) / 3)
}
fn shm_lock(s: &Sizes, n: u64) -> Amount {
    amount(per(s.shm_size, n) / 2)
}
fn small_allocs(s: &Sizes, n: u64) -> Amount {
    amount(per(s.small_allocs_total(), n))
}
fn file_rotate_per(s: &Sizes, n: u64) -> Amount {
    let b = per(s.rotate(), n);
    both(b, b)
}
fn file_rotate_shared(s: &Sizes, n: u64) -> Amount {
    both(per(s.rotate(), n), s.rotate())
}
fn file_rotate_eighth(s: &Sizes, _: u64) -> Amount {
    both(s.rotate() >> 3, s.rotate())
}
fn msync_procs(s: &Sizes, n: u64) -> Amount {
    both(per(s.mem, n) / 2, s.mem)
}
fn msync_threads(s: &Sizes, _: u64) -> Amount {
    both(s.mem / 2, s.mem)
}
fn swap_w(s: &Sizes, n: u64) -> Amount {
    amount(per((s.mem_avail + s.swap) / 4 * 3, n))
}
fn swapin(s: &Sizes, n: u64) -> Amount {
    amount(per(s.mem_avail, n))
}
fn mem_per_file(s: &Sizes, n: u64) -> Amount {
    let b = per(s.mem, n);
    both(b, b)
}
/// The script's pool over n, in whole huge pages (usemem's mprotect of a
/// segment that ends inside a huge page fails).
fn mincore_huge(s: &Sizes, n: u64) -> Amount {
    amount(per(s.mincore_huge_pages(), n).max(1) * s.huge_page)
}
fn remap(s: &Sizes, n: u64) -> Amount {
    let b = s.remap_bytes(n);
    both(b, b)
}
/// The scripts' PAGES: MemFree (in KiB, as /proc/meminfo gives it) / n /
/// `div`, taken as a count of pages.
fn free_over(s: &Sizes, n: u64, div: u64) -> Amount {
    amount(s.mem_free / 1024 / n.max(1) / div * s.page)
}
fn mbind(s: &Sizes, n: u64) -> Amount {
    free_over(s, n, 20)
}
fn migrate_across(s: &Sizes, n: u64) -> Amount {
    free_over(s, n, 10)
}
fn half_mem_procs(s: &Sizes, n: u64) -> Amount {
    amount(per(s.mem, n) / 2)
}
fn nothing(_: &Sizes, _: u64) -> Amount {
    amount(0)
}
fn ksm(s: &Sizes, _: u64) -> Amount {
    amount(s.mem / 1000)
}
fn migrate(s: &Sizes, _: u64) -> Amount {
    both(s.mem / s.nodes.max(1) / 2, s.mem)
}

const P: Store = Store::PageCache;
const S: Store = Store::Shm;

macro_rules! row {
    ($name:literal, $family:ident, $engine:expr, $size:ident, $sizing:literal) => {
        Row {
            name: $name,
            family: Family::$family,
            engine: $engine,
            size: $size,
            sizing: $sizing,
        }
    };
}

/// Every case vmscale runs, in the suite's alphabetical order.
#[rustfmt::skip]
pub static CASES: &[Row] = &[
    row!("anon-cow-rand", Anon, cow(false, true), cow_procs, "mem/2/(n+1) per task"),
    row!("anon-cow-rand-hugetlb", Anon, hugetlb(true, true), cow_procs, "mem/2/(n+1) per task, hugetlb"),
    row!("anon-cow-rand-mt", Anon, cow(true, true), quarter_mem, "mem/4 shared"),
    row!("anon-cow-seq", Anon, cow(false, false), cow_procs, "mem/2/(n+1) per task"),
    row!("anon-cow-seq-hugetlb", Anon, hugetlb(true, false), cow_procs, "mem/2/(n+1) per task, hugetlb"),
    row!("anon-cow-seq-mt", Anon, cow(true, false), quarter_mem, "mem/4 shared"),
    row!("anon-r-rand", Anon, anon(false, true, true, false), rotate_per, "rotate/n per task"),
    row!("anon-r-rand-mt", Anon, anon(true, true, true, false), rotate_per, "rotate/n per task"),
    row!("anon-r-seq", Anon, anon(false, true, false, false), pte_per, "pte_limit/n per task"),
    row!("anon-r-seq-mt", Anon, anon(true, true, false, false), pte_per_mt, "pte_limit/n per task"),
    row!("anon-rx-rand-mt", Anon, anon(true, true, true, true), rotate_per, "rotate/n shared"),
    row!("anon-rx-seq-mt", Anon, anon(true, true, false, true), rotate_whole, "rotate shared"),
    row!("anon-w-rand", Anon, anon(false, false, true, false), half_mem, "mem/2/n per task"),
    row!("anon-w-rand-hugetlb", Anon, hugetlb(false, true), half_mem, "mem/2/n per task, hugetlb"),
    row!("anon-w-rand-mt", Anon, anon(true, false, true, false), half_mem, "mem/2/n per task"),
    row!("anon-w-seq", Anon, anon(false, false, false, false), half_mem, "mem/2/n per task"),
    row!("anon-w-seq-hugetlb", Anon, hugetlb(false, false), half_mem, "mem/2/n per task, hugetlb"),
    row!("anon-w-seq-mt", Anon, anon(true, false, false, false), half_mem, "mem/2/n per task"),
    row!("anon-wx-rand-mt", Anon, anon(true, false, true, true), half_mem, "mem/2/n shared"),
    row!("anon-wx-seq-mt", Anon, anon(true, false, false, true), half_mem_whole, "mem/2 shared"),
    row!("direct-write", DirectWrite, Engine::DirectWrite, mem_per_file, "mem/n a file each, until full"),
    row!("fork", Fork, Engine::Fork { sleep_s: 0 }, nothing, "20000 processes, scaled"),
    row!("fork-sleep", Fork, Engine::Fork { sleep_s: 10 }, nothing, "20000 processes, scaled, 10 s each"),
    row!("hugetlb", Hugetlb, Engine::HugetlbPool, nothing, "mem/3 in huge pages, pool grown and shrunk"),
    row!("ksm", Ksm, Engine::Ksm, ksm, "mem/1000 per node"),
    row!("ksm-hugepages", Ksm, Engine::KsmHuge, half_mem_procs, "mem/n/2 per task, THP"),
    row!("lru-file-mmap-read", PageCache, file(P, false, true, false, false), file_rotate_per, "rotate/n per task, a file each"),
    row!("lru-file-mmap-read-rand", PageCache, file(P, false, true, true, false), file_rotate_per, "rotate/n per task, a file each"),
    row!("lru-file-readonce", PageCache, Engine::Dd { readers: 1 }, file_rotate_per, "rotate/n per task, a file each"),
    row!("lru-file-readtwice", PageCache, Engine::Dd { readers: 2 }, file_rotate_per, "rotate/n per file, two readers each"),
    row!("lru-memcg", Memcg, Engine::Dd { readers: 1 }, file_rotate_per, "readonce under memory.max = mem/3"),
    row!("lru-shm", Shm, file(S, false, true, false, false), shm_lru, "shm_size/n/2 per task, a file each"),
    row!("lru-shm-rand", Shm, file(S, false, true, true, false), shm_lru, "shm_size/n/2 per task, a file each"),
    row!("mbind", Migrate, Engine::Mbind, mbind, "MemFree_kB/n/20 pages per task"),
    row!("migrate", Migrate, Engine::Migrate, migrate, "mem/nodes/2 moved node to node"),
    row!("migrate-across-nodes", Migrate, Engine::MigrateAcross, migrate_across, "MemFree_kB/n/10 pages, a task a node"),
    row!("mincore", Mincore, Engine::Mincore, mem_per_file, "mem/n a file each, asked about"),
    row!("mincore-hugepages", Mincore, Engine::MincoreHuge, mincore_huge, "(mem/20 + mem/10 in huge pages)/n, one task"),
    row!("mlock", Mlock, Engine::Usemem(Use { mlock: true, ..USE }), mlock_size, "reclaimable/n/3 per task"),
    row!("mmap-pread-rand", PageCache, file(P, false, false, true, false), file_rotate_per, "rotate/n of one file"),
    row!("mmap-pread-rand-mt", PageCache, file(P, true, false, true, false), file_rotate_per, "rotate/n of one file"),
    row!("mmap-pread-seq", PageCache, file(P, false, false, false, false), file_rotate_shared, "rotate/n of one file"),
    row!("mmap-pread-seq-mt", PageCache, file(P, true, false, false, false), file_rotate_eighth, "rotate/8 of one file"),
    row!("mmap-xread-rand-mt", PageCache, file(P, true, false, true, true), file_rotate_per, "rotate/n of one file, shared"),
    row!("mmap-xread-seq-mt", PageCache, file(P, true, false, false, true), file_rotate_eighth, "rotate/8 of one file, shared"),
    row!("mremap-xread-rand-mt", PageCache, Engine::Usemem(Use { remap: true, ..file_use(P, true, false, true, true) }), file_rotate_shared, "rotate/n of one file, grown tenfold"),
    row!("msync", Msync, msync(false), msync_procs, "mem/n/2 per task, a file each"),
    row!("msync-mt", Msync, msync(true), msync_threads, "mem/2 of one file, shared"),
    row!("posix-fadvise", PageCache, Engine::Fadvise, file_rotate_per, "rotate/n a file each, advised"),
    row!("remap", Remap, Engine::Remap, remap, "mem/n/2 a file each, under vm.max_map_count"),
    row!("shm-lock-unlock", Mlock, Engine::Usemem(Use { shm_lock: true, random: true, ..USE }), shm_lock, "shm_size/n/2 locked, then written"),
    row!("shm-pread-rand", Shm, file(S, false, false, true, false), shm_half, "shm_size/2 of one file"),
    row!("shm-pread-rand-mt", Shm, file(S, true, false, true, false), shm_half, "shm_size/2 of one file"),
    row!("shm-pread-seq", Shm, file(S, false, false, false, false), shm_half, "shm_size/2 of one file"),
    row!("shm-pread-seq-mt", Shm, file(S, true, false, false, false), shm_half, "shm_size/2 of one file"),
    row!("shm-xread-rand", Shm, file(S, false, false, true, true), shm_half, "shm_size/2 of one file, shared"),
    row!("shm-xread-rand-mt", Shm, file(S, true, false, true, true), shm_half, "shm_size/2 of one file, shared"),
    row!("shm-xread-seq", Shm, file(S, false, false, false, true), shm_half, "shm_size/2 of one file, shared"),
    row!("shm-xread-seq-mt", Shm, file(S, true, false, false, true), shm_half, "shm_size/2 of one file, shared"),
    row!("small-allocs", SmallAllocs, small(false), small_allocs, "rotate halved to fit the VMAs, /n"),
    row!("small-allocs-mt", SmallAllocs, small(true), small_allocs, "rotate halved to fit the VMAs, /n"),
    row!("swap-w-rand", Swap, swap(false, true), swap_w, "(avail+swap)*3/4/n per task"),
    row!("swap-w-rand-mt", Swap, swap(true, true), swap_w, "(avail+swap)*3/4/n per task"),
    row!("swap-w-seq", Swap, swap(false, false), swap_w, "(avail+swap)*3/4/n per task"),
    row!("swap-w-seq-mt", Swap, swap(true, false), swap_w, "(avail+swap)*3/4/n per task"),
    row!("swapin", Swap, Engine::Swapin, swapin, "avail/n per task"),
    row!("truncate", Truncate, Engine::Truncate { sequential: false }, mem_per_file, "mem/n per task, a file each"),
    row!("truncate-seq", Truncate, Engine::Truncate { sequential: true }, mem_per_file, "mem/n a file, n files, one task"),
];

/// The case of this name.
pub fn find(name: &str) -> Option<&'static Row> {
    CASES.iter().find(|r| r.name == name)
}

/// `--case` values (names, comma lists, shell globs with `*` and `?`) to
/// rows, in the order given, each once; a name or glob that matches
/// nothing is refused with the list of names.
pub fn select(patterns: &[String]) -> Result<Vec<&'static Row>> {
    let mut out: Vec<&'static Row> = Vec::new();
    for p in patterns.iter().flat_map(|p| p.split(',')).map(str::trim) {
        if p.is_empty() {
            continue;
        }
        let hits: Vec<&'static Row> = CASES.iter().filter(|r| glob(p, r.name)).collect();
        if hits.is_empty() {
            return Err(Error::Input(format!(
                "--case '{p}' names no vm-scalability case vmscale runs: use one of {} \
                 (or a glob such as 'lru-*')",
                names().join(", ")
            )));
        }
        for h in hits {
            if !out.iter().any(|r| r.name == h.name) {
                out.push(h);
            }
        }
    }
    if out.is_empty() {
        return Err(Error::Input(format!(
            "--case names no case: use one or more of {}",
            names().join(", ")
        )));
    }
    Ok(out)
}

/// Every case name, in table order.
pub fn names() -> Vec<&'static str> {
    CASES.iter().map(|r| r.name).collect()
}

/// Shell-style matching of `*` (any run) and `?` (any one character).
fn glob(pattern: &str, name: &str) -> bool {
    let (p, n): (Vec<char>, Vec<char>) = (pattern.chars().collect(), name.chars().collect());
    let (mut pi, mut ni) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while ni < n.len() {
        if pi < p.len() && (p[pi] == '?' || p[pi] == n[ni]) {
            pi += 1;
            ni += 1;
        } else if pi < p.len() && p[pi] == '*' {
            star = Some((pi, ni));
            pi += 1;
        } else if let Some((sp, sn)) = star {
            pi = sp + 1;
            ni = sn + 1;
            star = Some((sp, sn + 1));
        } else {
            return false;
        }
    }
    p[pi..].iter().all(|&c| c == '*')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_sorted() {
        let n = names();
        let mut sorted = n.clone();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(n, sorted);
    }

    #[test]
    fn globs_select_families_in_order_once() {
        let pick = |p: &[&str]| {
            select(&p.iter().map(|s| s.to_string()).collect::<Vec<_>>())
                .map(|v| v.iter().map(|r| r.name).collect::<Vec<_>>())
        };
        assert_eq!(
            pick(&["lru-shm*"]).unwrap(),
            vec!["lru-shm", "lru-shm-rand"]
        );
        assert_eq!(
            pick(&["swap-w-seq", "swap-w-*"]).unwrap(),
            vec![
                "swap-w-seq",
                "swap-w-rand",
                "swap-w-rand-mt",
                "swap-w-seq-mt"
            ]
        );
        assert_eq!(
            pick(&["msync,anon-w-seq"]).unwrap(),
            vec!["msync", "anon-w-seq"]
        );
        assert_eq!(
            pick(&["anon-?-seq"]).unwrap(),
            vec!["anon-r-seq", "anon-w-seq"]
        );
        let e = pick(&["lru-file-readthrice"]).unwrap_err().to_string();
        assert!(
            e.contains("lru-file-readtwice") && e.contains("readthrice"),
            "{e}"
        );
        crate::error::assert_input(pick(&[""]));
    }

    #[test]
    fn node_cases_take_the_scripts_pages_of_memfree() {
        let mut s = super::super::sizes::fixture(1);
        s.mem_free = 1 << 30;
        s.nodes = 2;
        let size = |name| (find(name).unwrap().size)(&s, 2).per_task;
        // MemFree 1048576 kB / 2 tasks / 20: 26214 pages (KiB taken as
        // pages, as the script does).
        assert_eq!(size("mbind"), 26214 * 4096);
        assert_eq!(size("migrate-across-nodes"), 52428 * 4096);
        let p = super::super::plan::plan(find("migrate-across-nodes").unwrap(), &s, 2);
        // A task a node, whatever the task count.
        assert_eq!(p.need, 2 * 52428 * 4096);
    }

    #[test]
    fn every_family_is_represented() {
        for f in <Family as clap::ValueEnum>::value_variants() {
            assert!(CASES.iter().any(|r| r.family == *f), "{f:?}");
        }
        assert!(CASES.len() >= 25);
    }
}
