//! Files whose lock belongs to the run itself (the knob lock, the cache
//! entries it uses): an flock lives as long as any process holds the file
//! open, and forked workers inherit it, so a killed run's dying workers
//! (freeing swapped memory can take them half a minute) would keep its
//! lock, and the next start would leave the knobs the run changed as they
//! were, or a prune the entries it used. Each forked child
//! closes these files first thing; the lock then ends with the run. (A
//! set-up's lock stays with the workers on purpose: its swap device and
//! cgroup cannot be undone while they live, setup::journal waits.)

use std::fs::File;
use std::ops::{Deref, DerefMut};
use std::os::fd::{AsRawFd, RawFd};
use std::sync::atomic::{AtomicI32, Ordering};

/// More than a run holds at once: one knob lock, a set-up or two, and the
/// cache entries it uses (a few per kernel a bisect boots).
const SLOTS: usize = 64;

/// The descriptors held, -1 for a free slot. Atomics, not a mutex: a
/// forked child reads them where only async-signal-safe calls may run.
static HELD: [AtomicI32; SLOTS] = [const { AtomicI32::new(-1) }; SLOTS];

/// A locked file the run keeps to itself; dereferences to the file.
#[derive(Debug)]
pub struct Held(File);

impl Held {
    /// Marks `file`, whose lock the caller holds or is about to take, as
    /// the run's own. With every slot taken (never seen) the file is kept
    /// all the same, only inherited by workers as before.
    pub fn new(file: File) -> Held {
        let fd = file.as_raw_fd();
        let _ = HELD.iter().find(|s| {
            s.compare_exchange(-1, fd, Ordering::SeqCst, Ordering::SeqCst)
                .is_ok()
        });
        Held(file)
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        let fd = self.0.as_raw_fd();
        for s in &HELD {
            let _ = s.compare_exchange(fd, -1, Ordering::SeqCst, Ordering::SeqCst);
        }
    }
}

impl Deref for Held {
    type Target = File;
    fn deref(&self) -> &File {
        &self.0
    }
}

impl DerefMut for Held {
    fn deref_mut(&mut self) -> &mut File {
        &mut self.0
    }
}

/// In a child just forked: closes the run's held files (close(2) only,
/// async-signal-safe) and forgets them, in the child's copy of the slots:
/// the child may open files that reuse those numbers (a set-up's case
/// child opens /dev/zero), and the workers it forks in turn must not
/// close those. The child must never use the held files afterwards; the
/// children vmscale forks leave by `_exit`, running no destructor.
pub fn close_in_child() {
    for s in &HELD {
        let fd: RawFd = s.swap(-1, Ordering::SeqCst);
        if fd >= 0 {
            // SAFETY: closing a descriptor number is always memory-safe; in
            // the child it is the inherited copy of the parent's file.
            unsafe { libc::close(fd) };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs::TryLockError;

    /// Runs `child` in a forked child, which leaves with its result as
    /// exit status; that status. `child` may make only async-signal-safe
    /// calls (close, open, dup2, fcntl).
    fn in_child(child: impl FnOnce() -> i32) -> i32 {
        // SAFETY: the child runs `child`, async-signal-safe by contract.
        let pid = unsafe { libc::fork() };
        if pid == 0 {
            let code = child();
            // SAFETY: leave the child at once.
            unsafe { libc::_exit(code) };
        }
        assert!(pid > 0);
        let mut status = 0;
        // SAFETY: waits for our own child.
        assert_eq!(unsafe { libc::waitpid(pid, &mut status, 0) }, pid);
        libc::WEXITSTATUS(status)
    }

    #[test]
    fn a_forked_child_does_not_keep_the_runs_lock() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("l");
        let held = Held::new(File::create(&path).unwrap());
        held.try_lock().unwrap();
        let fd = held.as_raw_fd();
        let code = in_child(|| {
            close_in_child();
            // SAFETY: F_GETFD only asks about the descriptor.
            let open = unsafe { libc::fcntl(fd, libc::F_GETFD) } != -1;
            if open { 1 } else { 0 }
        });
        assert_eq!(code, 0, "the child still had the lock's file");
        // The parent's lock is untouched: another open file cannot take it.
        let other = File::open(&path).unwrap();
        assert!(matches!(other.try_lock(), Err(TryLockError::WouldBlock)));
        // Once dropped, the file is not closed in children any more.
        drop(held);
        assert!(HELD.iter().all(|s| s.load(Ordering::SeqCst) != fd));
    }

    #[test]
    fn a_number_reused_in_the_child_is_not_closed_by_its_children() {
        let dir = tempfile::tempdir().unwrap();
        let held = Held::new(File::create(dir.path().join("l")).unwrap());
        let fd = held.as_raw_fd();
        let code = in_child(|| {
            close_in_child();
            // A file under the number just closed, as an open(2) in the
            // child gets it when it is the lowest free one.
            // SAFETY: a NUL-terminated path; dup2 onto a free number.
            let reused =
                unsafe { libc::dup2(libc::open(c"/dev/null".as_ptr(), libc::O_RDONLY), fd) };
            // What the child's own forked workers do first.
            close_in_child();
            // SAFETY: F_GETFD only asks about the descriptor.
            let open = unsafe { libc::fcntl(reused, libc::F_GETFD) } != -1;
            match (reused == fd, open) {
                (_, false) => 1,
                (false, true) => 2,
                (true, true) => 0,
            }
        });
        assert_ne!(code, 1, "the file the child opened was closed");
        assert_eq!(code, 0, "the child's open did not reuse the number");
        drop(held);
    }
}
