//! case-remap (usemem_remap): each task maps its sparse file on the
//! page-cache file system shared and populated, then reverses the order
//! of its pages with remap_file_pages(2), one call a page from the last
//! page of the mapping down. Since Linux 4.0 the kernel emulates the call
//! with an mmap(2) of one page at that file offset, populated: a VMA a
//! page, so vm.max_map_count bounds the pages (`Sizes::remap_bytes`).
//! Bytes are the pages remapped; the count is the calls.

use super::usemem::{V, timed};
use crate::error::{Error, Result};
use crate::exec::region::Region;
use crate::exec::{Task, TaskReport, signals};
use crate::workload::fault_map::OwnedFile;

/// Calls between two looks at the clock.
const CHECK: u64 = 1024;

fn remap(r: &mut TaskReport, f: &OwnedFile, bytes: u64, page: u64, deadline: u64) -> Result<u64> {
    let prot = libc::PROT_READ | libc::PROT_WRITE;
    let flags = libc::MAP_SHARED | libc::MAP_POPULATE;
    let map = Region::map(bytes as usize, prot, flags, Some(&f.file))?;
    let pages = bytes / page.max(1);
    let Some(last) = pages.checked_sub(1) else {
        return Ok(0);
    };
    let mut done = 0;
    while done < pages {
        let at = (last - done) * page;
        // SAFETY: the page at `at` lies inside our shared mapping of the
        // file, which is at least `pages` pages long.
        let e = unsafe {
            libc::syscall(
                libc::SYS_remap_file_pages,
                map.ptr().add(at as usize),
                page as usize,
                0,
                done as usize,
                libc::MAP_SHARED | libc::MAP_POPULATE,
            )
        };
        if e != 0 {
            return Err(Error::Failed(format!(
                "remap_file_pages of page {done} of {pages} failed: {} \
                 (vm.max_map_count: a VMA a page)",
                crate::exec::errno_text()
            )));
        }
        done += 1;
        if done % CHECK == 0 && signals::past(deadline) {
            break;
        }
    }
    r.values[V::Count] = done as f64;
    Ok(done * page)
}

/// One task: its file mapped, its pages remapped in reverse, unmapped.
pub fn task(files: &[OwnedFile], bytes: u64, page: u64, t: &Task, runtime_ns: u64) -> TaskReport {
    let mut r = TaskReport::default();
    let Some(f) = files.get(t.index) else {
        r.fail("no file for this task");
        return r;
    };
    timed(r, t, runtime_ns, |r, deadline| {
        let out = remap(r, f, bytes, page, deadline);
        super::usemem::or_fail(r, out)
    })
}
