//! case-mincore and case-mincore-hugepages (usemem `-N` and `-H`).
//! mincore: each task maps its sparse file on the page-cache file system
//! read-only and shared (`--prealloc --readonly`) and asks mincore(2)
//! about every page of it once; nothing is touched, so the kernel looks
//! each page up in the page cache and finds it absent. mincore-hugepages:
//! one task attaches a SysV segment of hugetlb pages, asks mincore(2)
//! about it, makes it write-only with mprotect(2) and writes a byte to
//! each huge page (a hugetlb fault each). Bytes are the length asked
//! about (usemem prints no figure for either: it returns before its
//! tasks); the count is the pages mincore reported resident.

use super::segment::Segment;
use super::usemem::{V, timed};
use crate::error::{Error, Result};
use crate::exec::region::Region;
use crate::exec::{Task, TaskReport};
use crate::workload::fault_map::OwnedFile;

/// mincore(2) over `len` bytes at `at` with usemem's vector (a byte a
/// base page and one more); counts the pages resident in `r`.
fn ask(r: &mut TaskReport, at: *mut u8, len: usize, page: u64) -> Result<()> {
    let mut vec = vec![0u8; len / page.max(1) as usize + 1];
    // SAFETY: the range is mapped by the caller; vec holds a byte for
    // each of its pages.
    if unsafe { libc::mincore(at.cast(), len, vec.as_mut_ptr()) } != 0 {
        return Err(Error::Failed(format!(
            "mincore failed: {}",
            crate::exec::errno_text()
        )));
    }
    r.values[V::Count] = vec.iter().filter(|&&b| b & 1 == 1).count() as f64;
    Ok(())
}

/// One task of case-mincore: its file mapped, asked about, unmapped.
pub fn task(files: &[OwnedFile], bytes: u64, page: u64, t: &Task) -> TaskReport {
    let mut r = TaskReport::default();
    let Some(f) = files.get(t.index) else {
        r.fail("no file for this task");
        return r;
    };
    timed(r, t, 0, |r, _| {
        let work = |r: &mut TaskReport| {
            let flags = libc::MAP_SHARED;
            let map = Region::map(bytes as usize, libc::PROT_READ, flags, Some(&f.file))?;
            ask(r, map.ptr(), map.len(), page)?;
            Ok(bytes)
        };
        let out = work(r);
        super::usemem::or_fail(r, out)
    })
}

/// The one task of case-mincore-hugepages.
pub fn hugetlb(bytes: u64, huge_page: u64, page: u64, t: &Task) -> TaskReport {
    timed(TaskReport::default(), t, 0, |r, _| {
        let work = |r: &mut TaskReport| {
            let seg = Segment::attach(bytes, true)?;
            ask(r, seg.ptr(), seg.len(), page)?;
            // SAFETY: the range is the attached segment.
            if unsafe { libc::mprotect(seg.ptr().cast(), seg.len(), libc::PROT_WRITE) } != 0 {
                return Err(Error::Failed(format!(
                    "mprotect failed: {}",
                    crate::exec::errno_text()
                )));
            }
            // usemem writes `opt_bytes / HUGE_PAGE_SIZE` pages, each at
            // its first byte.
            let pages = bytes / huge_page.max(1);
            seg.touch(0, huge_page as usize, pages as usize, 1);
            Ok(bytes)
        };
        let out = work(r);
        super::usemem::or_fail(r, out)
    })
}
