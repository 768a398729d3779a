//! case-direct-write (usemem_direct_write): each task's sparse file on the
//! page-cache file system opened O_DIRECT and written from its start in
//! 16 KiB blocks from an aligned buffer until a write fails (the file
//! system is full: the script's loop) or the runtime is up. Bytes are
//! those written.

use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;

use super::usemem::timed;
use crate::exec::region::Region;
use crate::exec::{Task, TaskReport, signals};
use crate::workload::fault_map::OwnedFile;

/// usemem_direct_write's block: 512 * 32 bytes.
const BLOCK: usize = 512 * 32;

pub fn task(files: &[OwnedFile], t: &Task, runtime_ns: u64) -> TaskReport {
    let mut r = TaskReport::default();
    let Some(f) = files.get(t.index) else {
        r.fail("no file for this task");
        return r;
    };
    let opened = std::fs::OpenOptions::new()
        .write(true)
        .custom_flags(libc::O_DIRECT)
        .open(format!(
            "/proc/self/fd/{}",
            std::os::fd::AsRawFd::as_raw_fd(&f.file)
        ));
    let buf = Region::map(
        BLOCK,
        libc::PROT_READ | libc::PROT_WRITE,
        libc::MAP_PRIVATE,
        None,
    );
    let (mut file, buf) = match (opened, buf) {
        (Ok(file), Ok(buf)) => (file, buf),
        (Err(e), _) => {
            r.fail(&format!("cannot open the case's file with O_DIRECT: {e}"));
            t.wait_start();
            return r;
        }
        (_, Err(e)) => {
            r.fail(&e.to_string());
            t.wait_start();
            return r;
        }
    };
    // SAFETY: BLOCK bytes of our own writable mapping; the tool's memset
    // of the size argument's low byte, here 1.
    let block = unsafe {
        std::ptr::write_bytes(buf.ptr(), 1, BLOCK);
        std::slice::from_raw_parts(buf.ptr(), BLOCK)
    };
    timed(r, t, runtime_ns, |_, deadline| {
        let mut bytes = 0u64;
        // The script writes until the file system is full; a failed write
        // (ENOSPC) ends the task as it ends the tool.
        while let Ok(n @ 1..) = file.write(block) {
            bytes += n as u64;
            if bytes.is_multiple_of(64 * BLOCK as u64) && signals::past(deadline) {
                break;
            }
        }
        bytes
    })
}
