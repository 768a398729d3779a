//! The locks on cache entries: a run holds a shared flock on each entry it
//! uses (a directory or a file, opened without following a link) until it
//! exits, and marks it used (its modification time); a prune takes the entry's
//! lock exclusively without waiting and skips an entry it cannot lock.
//! Locks of one process's different opens conflict too, so a run's own
//! prune skips what the run holds. The entries are the run's own
//! (`exec::held`): a forked worker closes them, so a dying worker never
//! keeps an entry locked after its run ended.

use std::fs::{File, OpenOptions, TryLockError};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::Path;
use std::sync::Mutex;

use crate::error::{Error, Result};
use crate::exec::held::Held;

/// The entries this process holds, kept open (and so locked) until exit.
static HELD: Mutex<Vec<Held>> = Mutex::new(Vec::new());

/// Opens an entry itself, never through a link; without waiting for a
/// writer should a FIFO be planted there.
pub fn open_entry(path: &Path) -> std::io::Result<File> {
    let file = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC)
        .open(path)?;
    let kind = file.metadata()?.file_type();
    if kind.is_dir() || kind.is_file() {
        Ok(file)
    } else {
        Err(std::io::Error::other("not a file or directory"))
    }
}

/// Takes a shared lock on the entry at `path` (waiting while a prune
/// removes it), marks it used and keeps it until this process exits.
/// False when the entry is gone (or was replaced) by then: the caller
/// makes it again.
pub fn hold(path: &Path) -> Result<bool> {
    hold_marking(path, true)
}

/// [`hold`] leaving the entry's times as they are: for a file whose
/// modification time names what is made of it (a package, `deb::key_of`).
pub fn hold_as_is(path: &Path) -> Result<bool> {
    hold_marking(path, false)
}

fn hold_marking(path: &Path, mark: bool) -> Result<bool> {
    let file = match open_entry(path) {
        Ok(f) => Held::new(f),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(false),
        Err(e) => return Err(Error::io("cannot open the cache entry", path, e)),
    };
    file.lock_shared()
        .map_err(|e| Error::io("cannot lock", path, e))?;
    // Removed or replaced while this waited for the lock: not the entry.
    let same = match (file.metadata(), std::fs::symlink_metadata(path)) {
        (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
        _ => false,
    };
    if !same {
        return Ok(false);
    }
    if mark {
        mark_used(&file);
    }
    HELD.lock().unwrap_or_else(|e| e.into_inner()).push(file);
    Ok(true)
}

/// The error of an entry removed each time it was made anew (another
/// vmscale pruning the cache to a cap too small for this run).
pub fn vanished(path: &Path) -> Error {
    Error::Failed(format!(
        "{}: removed again each time it was made (another vmscale pruning the cache?); \
         raise VMSCALE_CACHE_MAX",
        path.display()
    ))
}

/// Sets the entry's modification time to now: its last use. (Access
/// times would not do: listing a directory, as a scan does, sets it.)
fn mark_used(file: &File) {
    let _ = file.set_modified(std::time::SystemTime::now());
}

/// The entry's lock taken exclusively, or `None` when a running vmscale
/// holds it (or the entry cannot be opened as a file or directory).
pub fn try_exclusive(path: &Path) -> std::io::Result<Option<File>> {
    let file = open_entry(path)?;
    match file.try_lock() {
        Ok(()) => Ok(Some(file)),
        Err(TryLockError::WouldBlock) => Ok(None),
        Err(TryLockError::Error(e)) => Err(e),
    }
}

/// Lets go of this process's holds on the entry at `path` (a test's
/// run ending while its worker lives on).
#[cfg(test)]
fn release(path: &Path) {
    let Ok(meta) = std::fs::symlink_metadata(path) else {
        return;
    };
    HELD.lock().unwrap_or_else(|e| e.into_inner()).retain(|f| {
        f.metadata()
            .map_or(true, |m| (m.dev(), m.ino()) != (meta.dev(), meta.ino()))
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_worker_forked_while_an_entry_is_held_does_not_keep_it() {
        let dir = tempfile::tempdir().unwrap();
        let entry = dir.path().join("entry");
        std::fs::create_dir(&entry).unwrap();
        assert!(hold(&entry).unwrap());
        let mut ready = [0; 2];
        // SAFETY: `ready` has room for the two descriptors.
        assert_eq!(unsafe { libc::pipe(ready.as_mut_ptr()) }, 0);
        // A worker as exec::children forks it, alive until killed.
        // SAFETY: the child makes only async-signal-safe calls (close,
        // write, pause, _exit).
        let pid = unsafe { libc::fork() };
        if pid == 0 {
            crate::exec::held::close_in_child();
            // SAFETY: says it is past the closing, then waits for the
            // parent's SIGKILL.
            unsafe {
                libc::write(ready[1], b"r".as_ptr().cast(), 1);
                libc::pause();
                libc::_exit(0)
            };
        }
        assert!(pid > 0);
        let mut byte = 0u8;
        // SAFETY: reads one byte into `byte`, then closes our own pipe.
        unsafe {
            libc::read(ready[0], (&raw mut byte).cast(), 1);
            libc::close(ready[0]);
            libc::close(ready[1]);
        }
        // The run ends; its worker lives on.
        release(&entry);
        let free = try_exclusive(&entry).unwrap().is_some();
        // SAFETY: kills and reaps our own child.
        unsafe {
            libc::kill(pid, libc::SIGKILL);
            libc::waitpid(pid, std::ptr::null_mut(), 0);
        }
        assert!(
            free,
            "the worker kept the entry locked after the run let go"
        );
    }

    #[test]
    fn a_held_entry_cannot_be_locked_for_removal_and_a_free_one_can() {
        let dir = tempfile::tempdir().unwrap();
        let held = dir.path().join("held");
        let free = dir.path().join("free");
        std::fs::create_dir(&held).unwrap();
        std::fs::write(&free, b"x").unwrap();
        assert!(hold(&held).unwrap());
        assert!(try_exclusive(&held).unwrap().is_none());
        assert!(try_exclusive(&free).unwrap().is_some());
        assert!(!hold(&dir.path().join("gone")).unwrap());
    }

    #[test]
    fn a_link_is_never_opened_as_the_entry() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("target");
        std::fs::create_dir(&target).unwrap();
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        assert!(open_entry(&link).is_err());
        assert!(hold(&link).is_err());
    }
}
