//! The kernel's own count of page-fault exceptions taken by the calling
//! thread (the `page-faults` software perf event), read beside rusage so
//! each task's fault count is cross-checked by a second kernel counter that
//! other processes on a busy machine cannot disturb.

use crate::error::{Error, Result};
use std::fs::File;
use std::io::Read;
use std::os::fd::FromRawFd;

/// perf_event_attr fields used here (the rest stay zero).
const PERF_TYPE_SOFTWARE: u32 = 1;
const PERF_COUNT_SW_PAGE_FAULTS: u64 = 2;
const PERF_FLAG_FD_CLOEXEC: libc::c_ulong = 1 << 3;
/// PERF_ATTR_SIZE_VER5: the kernel accepts any size it knows.
const ATTR_SIZE: u32 = 112;

/// A counting (not sampling) event bound to this thread.
pub struct FaultCounter {
    file: File,
}

impl FaultCounter {
    /// Opens the counter for the calling thread; Err with the reason (no
    /// perf events, or perf_event_paranoid forbids it).
    pub fn open() -> Result<FaultCounter> {
        let mut attr = [0u8; ATTR_SIZE as usize];
        attr[0..4].copy_from_slice(&PERF_TYPE_SOFTWARE.to_ne_bytes());
        attr[4..8].copy_from_slice(&ATTR_SIZE.to_ne_bytes());
        attr[8..16].copy_from_slice(&PERF_COUNT_SW_PAGE_FAULTS.to_ne_bytes());
        // SAFETY: attr is a zeroed perf_event_attr of the size it declares;
        // pid 0 / cpu -1 is this thread on any CPU; the result is checked.
        let fd = unsafe {
            libc::syscall(
                libc::SYS_perf_event_open,
                attr.as_ptr(),
                0 as libc::pid_t,
                -1 as libc::c_int,
                -1 as libc::c_int,
                PERF_FLAG_FD_CLOEXEC,
            )
        };
        if fd < 0 {
            return Err(Error::Refused(format!(
                "perf_event_open(page-faults) failed: {}",
                super::errno_text()
            )));
        }
        // SAFETY: fd is a fresh descriptor we own.
        let file = unsafe { File::from_raw_fd(fd as i32) };
        Ok(FaultCounter { file })
    }

    /// Faults counted since the counter was opened.
    pub fn read(&mut self) -> u64 {
        let mut b = [0u8; 8];
        match self.file.read(&mut b) {
            Ok(8) => u64::from_ne_bytes(b),
            _ => 0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_the_faults_of_touching_fresh_pages() {
        let mut c = match FaultCounter::open() {
            Ok(c) => c,
            Err(e) => {
                assert!(!crate::scratch::under_ci(), "{e}");
                eprintln!("skipped: {e}");
                return;
            }
        };
        let r = super::super::region::Region::private_noreserve(64 * 4096).unwrap();
        r.advise_thp(super::super::region::Pages::Base).unwrap();
        let before = c.read();
        for i in 0..64 {
            // SAFETY: page i of 64 lies inside the region.
            unsafe { r.ptr().add(i * 4096).write_volatile(1) };
        }
        let n = c.read() - before;
        assert!((64..=70).contains(&n), "{n} faults for 64 fresh pages");
    }
}
