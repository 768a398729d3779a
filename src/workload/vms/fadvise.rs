//! case-posix-fadvise: each task's sparse file on the page-cache file
//! system advised POSIX_FADV_WILLNEED over its whole length, then, through
//! the file opened again, POSIX_FADV_DONTNEED over its whole length, as
//! usemem's `-D` does. One WILLNEED reads at most the readahead maximum
//! (the kernel's force_page_cache_ra caps it), so the work is the two
//! calls; bytes are the file's length, advised.

use std::os::fd::AsRawFd;

use super::usemem::timed;
use crate::exec::{Task, TaskReport};
use crate::workload::fault_map::OwnedFile;

fn advise(fd: i32, advice: i32) -> std::io::Result<()> {
    // SAFETY: fadvise on a descriptor this task holds open; 0, 0 is the
    // whole file.
    let e = unsafe { libc::posix_fadvise(fd, 0, 0, advice) };
    if e != 0 {
        return Err(std::io::Error::from_raw_os_error(e));
    }
    Ok(())
}

pub fn task(files: &[OwnedFile], t: &Task) -> TaskReport {
    let mut r = TaskReport::default();
    let Some(f) = files.get(t.index) else {
        r.fail("no file for this task");
        return r;
    };
    let size = f.file.metadata().map(|m| m.len()).unwrap_or(0);
    timed(r, t, 0, |r, _| {
        if let Err(e) = advise(f.file.as_raw_fd(), libc::POSIX_FADV_WILLNEED) {
            r.fail(&format!("posix_fadvise(WILLNEED) failed: {e}"));
            return 0;
        }
        let again = match super::dd::reopen(&f.file) {
            Ok(again) => again,
            Err(e) => {
                r.fail(&e.to_string());
                return 0;
            }
        };
        if let Err(e) = advise(again.as_raw_fd(), libc::POSIX_FADV_DONTNEED) {
            r.fail(&format!("posix_fadvise(DONTNEED) failed: {e}"));
            return 0;
        }
        size
    })
}
