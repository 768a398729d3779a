//! usemem, natively: each task maps its memory (anonymous as `/dev/zero`
//! private, or a sparse file shared), reads or writes every word of it
//! once, in order or at random, until done or the runtime is up; with
//! usemem's `--prealloc` (mappings made before the tasks start), `--prefault`
//! (MAP_POPULATE), `--msync`, `--mlock` and `--unit` (many small mappings).
//! Bytes are counted as usemem counts them: every word read or written,
//! plus an eighth of the bytes mapped (usemem's credit for allocating).

use std::fs::File;
use std::os::fd::AsRawFd;

use super::cases::{Amount, Store, Use};
use super::words::{self, Access, Rand48, Walk};
use crate::error::{Error, Result};
use crate::exec::children::Forked;
use crate::exec::region::Region;
use crate::exec::{Task, TaskReport, clock, signals};
use crate::workload::fault_map::OwnedFile;
use crate::workload::values::task_values;

task_values! {
    /// TaskReport values: bytes counted, nanoseconds the task's time began
    /// before its start (the shared mapping's making, which usemem counts),
    /// and an engine's own count (`cases::Engine::count`).
    pub enum V {
        Bytes,
        BeforeNs,
        Count,
    }
}

/// Times one task's `work` as every engine here does: from the tasks'
/// common start, the task's clock and rusage around it, and the bytes
/// `work` counts in [`V::Bytes`]. `work` gets the deadline `runtime_ns`
/// after the start, and fails the task in `r` itself.
pub fn timed(
    mut r: TaskReport,
    t: &Task,
    runtime_ns: u64,
    work: impl FnOnce(&mut TaskReport, u64) -> u64,
) -> TaskReport {
    t.wait_start();
    let before = t.usage();
    r.start_ns = clock::monotonic_ns();
    let deadline = r.start_ns.saturating_add(runtime_ns);
    let bytes = work(&mut r, deadline);
    r.end_ns = clock::monotonic_ns();
    r.set_usage(&t.usage().since(&before));
    r.values[V::Bytes] = bytes as f64;
    r
}

/// `work`'s bytes, or 0 with the task failed by its error.
pub fn or_fail(r: &mut TaskReport, work: Result<u64>) -> u64 {
    work.unwrap_or_else(|e| {
        r.fail(&e.to_string());
        0
    })
}

/// What the tasks of one sample share, made before they start.
pub struct Prepared {
    zero: File,
    /// The huge page size hugetlb mappings are rounded up to.
    huge_page: u64,
    files: Vec<OwnedFile>,
    /// `--prealloc`'s mappings with the nanoseconds each took to make
    /// (and prefault): one the tasks share, or one a task where each task
    /// has its own file (msync: the script starts one usemem a file, and
    /// each makes its own).
    prealloc: Vec<(Region, u64)>,
    /// Nanoseconds of the rest of what was made before the tasks.
    shared_ns: u64,
    /// `-t` over a prefaulted private `--prealloc`: the child that keeps
    /// the original pages (`as_a_forked_child_finds_it`), killed on drop.
    _original: Option<Forked>,
    /// Bytes usemem credits each task for what was done before the tasks
    /// (`-E`'s mremap, `-L`'s segment: an eighth of the bytes each).
    credit: u64,
}

impl Prepared {
    /// What task `index` finds made before it: its own `--prealloc`
    /// mapping where each task has one, else the shared one (or none), and
    /// the nanoseconds usemem counts for it (its mapping's and the rest).
    fn before(&self, index: usize) -> (Option<&Region>, u64) {
        let mine = self.prealloc.len().saturating_sub(1).min(index);
        match self.prealloc.get(mine) {
            Some((region, own)) => (Some(region), self.shared_ns + own),
            None => (None, self.shared_ns),
        }
    }
}

/// Opens `/dev/zero` and maps `--prealloc`'s region over `files` (none
/// for anonymous memory, one, or one per task).
pub fn prepare(u: &Use, a: Amount, huge_page: u64, files: Vec<OwnedFile>) -> Result<Prepared> {
    let zero = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open("/dev/zero")
        .map_err(|e| Error::io("cannot open", std::path::Path::new("/dev/zero"), e))?;
    let mut p = Prepared {
        zero,
        huge_page,
        files,
        prealloc: Vec::new(),
        shared_ns: 0,
        _original: None,
        credit: 0,
    };
    let t0 = clock::monotonic_ns();
    if u.prealloc {
        let count = if u.file_per_task { p.files.len() } else { 1 };
        for i in 0..count {
            let made = clock::monotonic_ns();
            let mut region = map(u, &p, i, a.per_task as usize)?;
            if u.remap {
                let grown = region.len().saturating_mul(REMAP_SCALE);
                region = region.grow(grown)?;
            }
            p.prealloc.push((region, clock::monotonic_ns() - made));
        }
        if u.remap {
            p.credit += a.per_task / 8;
        }
    }
    if u.shm_lock {
        shm_lock_unlock(a.per_task)?;
        p.credit += a.per_task / 8;
    }
    if u.threads
        && u.prefault
        && let [(region, _)] = p.prealloc.as_slice()
    {
        p._original = as_a_forked_child_finds_it(u, region)?;
    }
    let own: u64 = p.prealloc.iter().map(|(_, ns)| ns).sum();
    p.shared_ns = (clock::monotonic_ns() - t0).saturating_sub(own);
    Ok(p)
}

/// usemem's `-t` threads run in a child it forks after `--prealloc
/// --prefault` wrote the mapping (its time counting the fork), so they
/// find a private page still the parent's, copied on their first write,
/// and no page of a shared file mapped (fork copies no page table of a
/// shared file mapping). vmscale's threads run in its own process: a
/// forked child that only waits keeps the private pages shared, so each
/// write copies one as in the suite (the child returned holds the
/// originals until the sample ends), and a shared mapping's page table is
/// emptied with MADV_DONTNEED (its page cache stays).
fn as_a_forked_child_finds_it(u: &Use, region: &Region) -> Result<Option<Forked>> {
    if u.store == Store::Anon {
        let original = Forked::spawn(1, "holder of the original pages", |_| {
            loop {
                // SAFETY: pause only waits; the child is killed when the sample
                // ends (Forked's drop) or dies with vmscale.
                unsafe { libc::pause() };
            }
        })?;
        return Ok(Some(original));
    }
    // SAFETY: the whole of our own shared mapping.
    if unsafe { libc::madvise(region.ptr().cast(), region.len(), libc::MADV_DONTNEED) } != 0 {
        return Err(Error::Failed(format!(
            "madvise(MADV_DONTNEED) of the shared mapping failed: {}",
            crate::exec::errno_text()
        )));
    }
    Ok(None)
}

/// usemem's SCALE_FACTOR: `-E` grows the mapping to this many times its size.
const REMAP_SCALE: usize = 10;

/// usemem's `-L` before its tasks: a SysV segment of `bytes` made,
/// attached, a byte of each page written, SHM_LOCKed, unlocked and
/// removed.
fn shm_lock_unlock(bytes: u64) -> Result<()> {
    let seg = super::segment::Segment::attach(bytes, false)?;
    seg.touch(1, page_size(), usize::MAX, 1);
    let locked = seg.control(libc::SHM_LOCK, "SHM_LOCK");
    seg.control(libc::SHM_UNLOCK, "SHM_UNLOCK")?;
    locked
}

fn page_size() -> usize {
    // SAFETY: sysconf has no preconditions.
    (unsafe { libc::sysconf(libc::_SC_PAGESIZE) }).max(1) as usize
}

fn map(u: &Use, p: &Prepared, task: usize, len: usize) -> Result<Region> {
    let prot = if u.read && !u.msync {
        libc::PROT_READ
    } else {
        libc::PROT_READ | libc::PROT_WRITE
    };
    let populate = if u.prefault { libc::MAP_POPULATE } else { 0 };
    if u.hugetlb {
        // A length on the huge page boundary, so that munmap takes it.
        let len = len.next_multiple_of(p.huge_page.max(1) as usize);
        let flags = libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_HUGETLB | populate;
        return Region::map_at(len, prot, flags, -1, 0).map_err(|e| {
            Error::Refused(format!(
                "mmap of {len} bytes of hugetlb pages failed: {e}: the pool has too \
                 few free (HugePages_Free in /proc/meminfo)"
            ))
        });
    }
    let (fd, shared) = match u.store {
        Store::Anon => (p.zero.as_raw_fd(), libc::MAP_PRIVATE),
        _ => {
            let f = &p.files[if u.file_per_task { task } else { 0 }];
            (f.file.as_raw_fd(), libc::MAP_SHARED)
        }
    };
    Region::map_at(len, prot, shared | populate, fd, 0)
        .map_err(|e| Error::Failed(format!("mmap of {len} bytes failed: {e}")))
}

/// One pass over the first `len` bytes of `region` as `u` walks it.
fn pass(
    region: &Region,
    len: u64,
    u: &Use,
    access: Access,
    rng: &mut Rand48,
    deadline: u64,
) -> u64 {
    let words = (len as usize).min(region.len()) / 8;
    let walk = Walk {
        access,
        read: u.read,
        random: u.random,
        check_mask: check_mask(u),
    };
    // SAFETY: the region is mapped, readable, and writable unless u.read
    // (map's protection), for as long as it lives.
    unsafe { words::pass(region.ptr().cast(), words, &walk, rng, deadline) }
}

/// How often a pass reads the clock. In order (a fault per 512 words at
/// most) every 64 Ki words, as usemem; at random each access may fault,
/// so every 4 Ki, and every 64 on a page-cache file, where a fault under
/// the case's cgroup reads ahead and reclaims a large folio (tens of ms
/// on a loaded host: at 64 Ki a 1 s runtime of lru-file-mmap-read-rand
/// ran over ten minutes, at 256 twenty seconds).
fn check_mask(u: &Use) -> usize {
    match (u.random, u.store) {
        (false, _) => 0xffff,
        (true, Store::PageCache) => 0x3f,
        (true, _) => 0xfff,
    }
}

fn sync(r: &Region) -> Result<()> {
    // SAFETY: the range is our own mapping.
    if unsafe { libc::msync(r.ptr().cast(), r.len(), libc::MS_SYNC) } != 0 {
        return Err(Error::Failed(format!(
            "msync failed: {}",
            crate::exec::errno_text()
        )));
    }
    Ok(())
}

fn lock(r: &Region) -> Result<()> {
    // SAFETY: the range is our own mapping.
    if unsafe { libc::mlock(r.ptr().cast(), r.len()) } != 0 {
        return Err(Error::Failed(format!(
            "mlock failed: {}",
            crate::exec::errno_text()
        )));
    }
    Ok(())
}

/// One task of a usemem case: maps, passes, msyncs; mlocks after the
/// timed section as usemem does, and unmaps outside it.
pub fn task(
    u: &Use,
    access: Access,
    a: Amount,
    page: u64,
    p: &Prepared,
    t: &Task,
    runtime_ns: u64,
) -> TaskReport {
    let mut rng = Rand48::new(0x9e37_79b9 ^ (t.index as u32 + 1));
    let mut maps: Vec<Region> = Vec::new();
    let (prealloc, before_ns) = p.before(t.index);
    let mut r = timed(TaskReport::default(), t, runtime_ns, |r, deadline| {
        let outcome = (|| -> Result<u64> {
            let mut bytes = if prealloc.is_some() { 0 } else { p.credit };
            if let Some(region) = prealloc {
                bytes += a.per_task / 8 + p.credit;
                bytes += pass(region, a.per_task, u, access, &mut rng, deadline);
                if u.msync {
                    sync(region)?;
                }
                return Ok(bytes);
            }
            let unit = u.unit_pages.map_or(a.per_task, |n| n * page).max(8);
            let mut left = a.per_task;
            while left > 0 {
                let size = left.min(unit);
                let region = map(u, p, t.index, size as usize)?;
                bytes += size / 8;
                bytes += pass(&region, size, u, access, &mut rng, deadline);
                if u.msync {
                    sync(&region)?;
                }
                maps.push(region);
                left -= size;
                if signals::past(deadline) {
                    break;
                }
            }
            Ok(bytes)
        })();
        outcome.unwrap_or_else(|e| {
            r.fail(&e.to_string());
            0
        })
    });
    r.values[V::BeforeNs] = before_ns as f64;
    if u.mlock && r.error().is_none() {
        let locked = match prealloc {
            Some(region) => lock(region),
            None => maps.iter().try_for_each(lock),
        };
        if let Err(e) = locked {
            r.fail(&e.to_string());
        }
    }
    r
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::vms::cases::USE;

    fn first_byte(r: &Region) -> u8 {
        // SAFETY: the region is mapped and readable.
        unsafe { r.ptr().read_volatile() }
    }

    #[test]
    fn a_task_with_its_own_file_gets_its_own_prealloc_mapping() {
        // msync: one usemem a file, each mapping (and prefaulting) its own.
        let u = Use {
            store: Store::PageCache,
            file_per_task: true,
            prealloc: true,
            prefault: true,
            msync: true,
            ..USE
        };
        let len = 64 << 10;
        let files = (0..2)
            .map(|_| OwnedFile::memfd(len, false).unwrap())
            .collect();
        let a = Amount {
            per_task: len,
            file: len,
        };
        let p = prepare(&u, a, 2 << 20, files).unwrap();
        let (r0, _) = p.before(0);
        let (r1, _) = p.before(1);
        let (r0, r1) = (r0.unwrap(), r1.unwrap());
        assert_ne!(r0.ptr(), r1.ptr());
        // SAFETY: region 0 is mapped writable and shared over file 0.
        unsafe { r0.ptr().write_volatile(7) };
        assert_eq!((first_byte(r0), first_byte(r1)), (7, 0));
        let mut b = [0u8; 1];
        use std::os::unix::fs::FileExt;
        p.files[0].file.read_exact_at(&mut b, 0).unwrap();
        assert_eq!(b, [7], "region 0 is file 0's");
    }

    #[test]
    fn tasks_without_files_of_their_own_share_one_prealloc_mapping() {
        let u = Use {
            prealloc: true,
            ..USE
        };
        let a = Amount {
            per_task: 64 << 10,
            file: 0,
        };
        let p = prepare(&u, a, 2 << 20, Vec::new()).unwrap();
        let (r0, _) = p.before(0);
        let (r3, _) = p.before(3);
        assert_eq!(r0.map(Region::ptr), r3.map(Region::ptr));
        assert!(r0.is_some());
        let none = prepare(&USE, a, 2 << 20, Vec::new()).unwrap();
        assert!(none.before(1).0.is_none());
    }
}
