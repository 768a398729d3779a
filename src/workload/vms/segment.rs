//! A SysV shared memory segment attached to this process (usemem's `-L`
//! and `-H`): marked for removal as soon as it is attached, so that the
//! kernel frees it when this process detaches or dies, and nothing is
//! left behind by a crash.

use crate::error::{Error, Result};

pub struct Segment {
    id: i32,
    at: *mut u8,
    bytes: usize,
}

impl Segment {
    /// A new segment of `bytes` (`SHM_HUGETLB`: of hugetlb pages, the
    /// length rounded up to the huge page by the kernel), attached.
    pub fn attach(bytes: u64, huge: bool) -> Result<Segment> {
        let flags = libc::IPC_CREAT | 0o600 | if huge { libc::SHM_HUGETLB } else { 0 };
        // SAFETY: shmget creates a private segment; no memory is touched.
        let id = unsafe { libc::shmget(libc::IPC_PRIVATE, bytes as usize, flags) };
        if id < 0 {
            return Err(Segment::failed("shmget", bytes, huge));
        }
        // SAFETY: attaching the segment just made, where the kernel picks.
        let at = unsafe { libc::shmat(id, std::ptr::null(), 0) };
        let e = (at as isize == -1).then(|| Segment::failed("shmat", bytes, huge));
        // SAFETY: removal of our own segment; an attached one lives until
        // its last detach.
        unsafe { libc::shmctl(id, libc::IPC_RMID, std::ptr::null_mut()) };
        match e {
            Some(e) => Err(e),
            None => Ok(Segment {
                id,
                at: at.cast(),
                bytes: bytes as usize,
            }),
        }
    }

    fn failed(what: &str, bytes: u64, huge: bool) -> Error {
        let limits = if huge {
            "the hugetlb pool (HugePages_Free), kernel.shmmax"
        } else {
            "kernel.shmmax, kernel.shmall"
        };
        Error::Failed(format!(
            "{what} of a SysV segment of {bytes} bytes failed: {} ({limits})",
            crate::exec::errno_text()
        ))
    }

    /// SHM_LOCK or SHM_UNLOCK (`cmd`) of the segment.
    pub fn control(&self, cmd: i32, what: &str) -> Result<()> {
        // SAFETY: a control command on our own segment, no buffer.
        if unsafe { libc::shmctl(self.id, cmd, std::ptr::null_mut()) } != 0 {
            return Err(Error::Failed(format!(
                "{what} of a SysV segment of {} bytes failed: {} (RLIMIT_MEMLOCK)",
                self.bytes,
                crate::exec::errno_text()
            )));
        }
        Ok(())
    }

    /// Writes `value` at every `step` bytes from `first`, `count` times
    /// at most (a fault a page).
    pub fn touch(&self, first: usize, step: usize, count: usize, value: u8) {
        for off in (first..self.bytes).step_by(step.max(1)).take(count) {
            // SAFETY: off < bytes, inside the attached segment.
            unsafe { self.at.add(off).write_volatile(value) };
        }
    }

    pub fn ptr(&self) -> *mut u8 {
        self.at
    }

    pub fn len(&self) -> usize {
        self.bytes
    }
}

impl Drop for Segment {
    fn drop(&mut self) {
        // SAFETY: detaching what attach attached; nothing refers to it now.
        unsafe { libc::shmdt(self.at.cast()) };
    }
}
