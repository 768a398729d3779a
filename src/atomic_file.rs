//! Files and directories replaced whole or not at all: the new content is
//! written to a temporary beside the target, synced, renamed over it, and
//! the directory synced, so a crash or a concurrent reader sees the old
//! content or the new, never part of it. The temporary is created
//! exclusively (O_CREAT|O_EXCL|O_NOFOLLOW) under a random name, so a file
//! or symbolic link planted at a name is never written through (another
//! name is drawn) and concurrent writers never share one.
//!
//! The one writer of this kind in vmscale; it imports nothing of vmscale
//! but the error type, so every room may use it.

use std::ffi::OsString;
use std::fs::{File, OpenOptions, Permissions};
use std::io::Write;
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use tempfile::{NamedTempFile, TempDir, TempPath};

use crate::error::{Error, Result};

/// Random characters in a temporary's name (tempfile redraws on a clash).
const RANDOM_CHARS: usize = 12;

/// The directory a target lives in ("." for a bare file name).
fn parent_of(target: &Path) -> &Path {
    target
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
}

/// ".NAME." — temporaries start with the target's name, so a leftover of
/// a killed writer says what it was for.
fn prefix_of(target: &Path) -> OsString {
    let mut prefix = OsString::from(".");
    prefix.push(target.file_name().unwrap_or_default());
    prefix.push(".");
    prefix
}

/// A temporary for `target`, made by `make` in the target's directory
/// with names ".NAME.<random>.tmp"; `what` ("file", "directory") names
/// it in the error.
fn temporary<T>(
    target: &Path,
    what: &str,
    make: impl FnOnce(&mut tempfile::Builder, &Path) -> std::io::Result<T>,
) -> Result<T> {
    let dir = parent_of(target);
    let prefix = prefix_of(target);
    let mut names = tempfile::Builder::new();
    names
        .prefix(&prefix)
        .suffix(".tmp")
        .rand_bytes(RANDOM_CHARS);
    make(&mut names, dir)
        .map_err(|e| Error::io(format!("cannot create a temporary {what} in"), dir, e))
}

/// Options that create a file anew, for writing, with permission bits
/// `mode` (the umask applies): a file or symbolic link already at the path
/// fails with `AlreadyExists` (a temporary then draws another name) and is
/// never written through; not inherited by programs vmscale starts. Every
/// file vmscale makes for itself is created so.
pub fn create_new(mode: u32) -> OpenOptions {
    let mut o = OpenOptions::new();
    o.write(true)
        .create_new(true)
        .mode(mode)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC);
    o
}

/// A new content for `target`, written through [`Write`] (streaming
/// writers need no buffer of the whole). Dropped without
/// [`AtomicFile::commit`], the temporary is removed and the target kept.
pub struct AtomicFile {
    tmp: NamedTempFile,
    target: PathBuf,
}

impl AtomicFile {
    /// A temporary for `target` in its directory (which must exist), with
    /// permission bits `mode` (the umask applies).
    pub fn create(target: &Path, mode: u32) -> Result<AtomicFile> {
        let tmp = temporary(target, "file", |names, dir| {
            names.make_in(dir, |path| create_new(mode).open(path))
        })?;
        Ok(AtomicFile {
            tmp,
            target: target.to_path_buf(),
        })
    }

    /// The content synced to disk and the temporary closed, not yet in
    /// place: for a check that runs the file (a file open for writing
    /// cannot be executed).
    pub fn finish(self) -> Result<Written> {
        let AtomicFile { tmp, target } = self;
        tmp.as_file()
            .sync_all()
            .map_err(|e| Error::io("cannot write", tmp.path(), e))?;
        Ok(Written {
            tmp: tmp.into_temp_path(),
            target,
        })
    }

    /// Syncs the content and puts it in place of the target.
    pub fn commit(self) -> Result<()> {
        self.finish()?.commit()
    }
}

impl Write for AtomicFile {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.tmp.as_file_mut().write(buf)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.tmp.as_file_mut().flush()
    }
}

/// A finished temporary (synced and closed) waiting to replace its
/// target; dropped without [`Written::commit`], it is removed.
pub struct Written {
    tmp: TempPath,
    target: PathBuf,
}

impl Written {
    /// The temporary's path (to check or run the content before it counts).
    pub fn path(&self) -> &Path {
        &self.tmp
    }

    /// Renames the temporary over the target and syncs the directory.
    pub fn commit(self) -> Result<()> {
        let Written { tmp, target } = self;
        tmp.persist(&target)
            .map_err(|e| Error::io("cannot move a new file into", &target, e.error))?;
        sync_dir(parent_of(&target));
        Ok(())
    }
}

/// Writes `bytes` as the whole new content of `target` (mode `mode`).
pub fn write(target: &Path, bytes: &[u8], mode: u32) -> Result<()> {
    let mut f = AtomicFile::create(target, mode)?;
    f.write_all(bytes)
        .map_err(|e| Error::io("cannot write", target, e))?;
    f.commit()
}

/// A new directory for `target`, filled through [`AtomicDir::path`] and
/// then renamed over it. The temporary is private (mode 0700) while it is
/// filled; dropped without [`AtomicDir::commit`], it is removed with what
/// it holds.
pub struct AtomicDir {
    tmp: TempDir,
    target: PathBuf,
    mode: u32,
}

impl AtomicDir {
    /// A temporary directory for `target` beside it (the parent must
    /// exist); `mode` is the directory's once committed.
    pub fn create(target: &Path, mode: u32) -> Result<AtomicDir> {
        let tmp = temporary(target, "directory", |names, dir| {
            names
                .permissions(Permissions::from_mode(0o700))
                .tempdir_in(dir)
        })?;
        Ok(AtomicDir {
            tmp,
            target: target.to_path_buf(),
            mode,
        })
    }

    /// The temporary directory to fill.
    pub fn path(&self) -> &Path {
        self.tmp.path()
    }

    /// Puts the directory in place of the target. A directory already
    /// there is first renamed aside (so the target's name never goes
    /// missing) and then removed; a file or symbolic link there is
    /// removed, never followed.
    pub fn commit(self) -> Result<()> {
        let AtomicDir { tmp, target, mode } = self;
        let fail = |e| Error::io("cannot move a new directory into", &target, e);
        std::fs::set_permissions(tmp.path(), Permissions::from_mode(mode)).map_err(fail)?;
        if std::fs::rename(tmp.path(), &target).is_err() {
            let old = std::fs::symlink_metadata(&target).map_err(fail)?;
            // The empty directory the old one is renamed onto; dropped
            // (with the old content) when this function returns.
            let aside;
            if old.is_dir() {
                aside = AtomicDir::create(&target, 0o700)?;
                std::fs::rename(&target, aside.path()).map_err(fail)?;
            } else {
                std::fs::remove_file(&target).map_err(fail)?;
            }
            std::fs::rename(tmp.path(), &target).map_err(fail)?;
        }
        // Renamed away: nothing left for the drop to remove.
        let _ = tmp.keep();
        sync_dir(parent_of(&target));
        Ok(())
    }
}

/// Renames the directory `target` to a fresh temporary name beside it
/// (as a killed writer's leftovers are named) and returns that name: a
/// reader sees the directory whole or not at all, and the caller removes
/// it after.
pub fn set_aside(target: &Path) -> Result<PathBuf> {
    let aside = AtomicDir::create(target, 0o700)?;
    std::fs::rename(target, aside.path()).map_err(|e| Error::io("cannot move aside", target, e))?;
    Ok(aside.tmp.keep())
}

/// Removes the temporaries a killed writer of `target` left beside it.
/// Only for a caller that knows no writer of `target` is at work (it
/// holds the lock that writers take).
pub fn remove_leftovers(target: &Path) -> Result<()> {
    let dir = parent_of(target);
    let prefix = prefix_of(target);
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(Error::io("cannot list", dir, e)),
    };
    let mut removed = false;
    for entry in entries.flatten() {
        let name = entry.file_name();
        let bytes = name.as_encoded_bytes();
        if !bytes.starts_with(prefix.as_encoded_bytes()) || !bytes.ends_with(b".tmp") {
            continue;
        }
        let path = entry.path();
        let gone = match entry.file_type() {
            Ok(t) if t.is_dir() => std::fs::remove_dir_all(&path),
            _ => std::fs::remove_file(&path),
        };
        match gone {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                return Err(Error::io("cannot remove", &path, e));
            }
            _ => removed = true,
        }
    }
    if removed {
        sync_dir(dir);
    }
    Ok(())
}

/// Makes a rename or removal in `dir` durable. Best effort: some file
/// systems refuse fsync on a directory, and the rename itself is done.
pub fn sync_dir(dir: &Path) {
    if let Ok(d) = File::open(dir) {
        let _ = d.sync_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::MetadataExt;

    #[test]
    fn a_write_replaces_the_whole_file_with_the_mode_asked() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("journal");
        std::fs::write(&target, b"old content, longer than the new").unwrap();
        write(&target, b"new", 0o600).unwrap();
        assert_eq!(std::fs::read(&target).unwrap(), b"new");
        assert_eq!(std::fs::metadata(&target).unwrap().mode() & 0o777, 0o600);
        let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert_eq!(names.len(), 1, "a temporary was left behind");
    }

    #[test]
    fn an_uncommitted_file_leaves_the_target_as_it_was() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("image");
        std::fs::write(&target, b"old").unwrap();
        let mut f = AtomicFile::create(&target, 0o644).unwrap();
        f.write_all(b"half of the new").unwrap();
        drop(f);
        assert_eq!(std::fs::read(&target).unwrap(), b"old");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    /// A symbolic link or a file planted at a temporary's name (here the
    /// name a first writer drew, since names are random) is refused by
    /// the opening, and later writers draw other names: the victim is
    /// never written through.
    #[test]
    fn a_planted_link_or_file_at_a_temporary_name_is_never_written_through() {
        let dir = tempfile::tempdir().unwrap();
        let victim = dir.path().join("victim");
        std::fs::write(&victim, b"precious").unwrap();
        let target = dir.path().join("state");
        let link = AtomicFile::create(&target, 0o600)
            .unwrap()
            .tmp
            .path()
            .to_path_buf();
        let file = AtomicFile::create(&target, 0o600)
            .unwrap()
            .tmp
            .path()
            .to_path_buf();
        std::os::unix::fs::symlink(&victim, &link).unwrap();
        std::fs::write(&file, b"planted").unwrap();
        for planted in [&link, &file] {
            let refused = create_new(0o600).open(planted).unwrap_err();
            assert_eq!(refused.kind(), std::io::ErrorKind::AlreadyExists);
        }
        for _ in 0..50 {
            write(&target, b"new", 0o600).unwrap();
        }
        assert_eq!(std::fs::read(&victim).unwrap(), b"precious");
        assert_eq!(std::fs::read(&file).unwrap(), b"planted");
        assert!(std::fs::symlink_metadata(&link).unwrap().is_symlink());
        assert_eq!(std::fs::read(&target).unwrap(), b"new");
    }

    /// A dangling link planted at a name: O_EXCL refuses it too (without
    /// it, the open would create the link's target).
    #[test]
    fn a_dangling_link_at_a_temporary_name_creates_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let link = dir.path().join(".state.planted.tmp");
        let elsewhere = dir.path().join("created-through-the-link");
        std::os::unix::fs::symlink(&elsewhere, &link).unwrap();
        assert!(create_new(0o600).open(&link).is_err());
        assert!(!elsewhere.exists());
    }

    #[test]
    fn a_planted_link_at_the_target_is_replaced_not_followed() {
        let dir = tempfile::tempdir().unwrap();
        let victim = dir.path().join("victim");
        std::fs::write(&victim, b"precious").unwrap();
        let target = dir.path().join("state");
        std::os::unix::fs::symlink(&victim, &target).unwrap();
        write(&target, b"new", 0o600).unwrap();
        assert_eq!(std::fs::read(&victim).unwrap(), b"precious");
        assert!(!std::fs::symlink_metadata(&target).unwrap().is_symlink());
        assert_eq!(std::fs::read(&target).unwrap(), b"new");
    }

    /// Writers racing on one target: every read sees one writer's whole
    /// content, and the last state is one whole content.
    #[test]
    fn concurrent_writers_leave_one_whole_file() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("shared");
        let contents: Vec<Vec<u8>> = (0..4u8).map(|i| vec![b'a' + i; 256 * 1024]).collect();
        std::thread::scope(|s| {
            for content in &contents {
                let target = &target;
                s.spawn(move || {
                    for _ in 0..20 {
                        write(target, content, 0o644).unwrap();
                    }
                });
            }
            s.spawn(|| {
                for _ in 0..200 {
                    if let Ok(seen) = std::fs::read(&target) {
                        assert!(contents.contains(&seen), "a partial file was seen");
                    }
                }
            });
        });
        let last = std::fs::read(&target).unwrap();
        assert!(contents.contains(&last));
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    #[test]
    fn a_finished_file_can_be_run_before_it_is_committed() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("tool");
        let mut f = AtomicFile::create(&target, 0o755).unwrap();
        f.write_all(b"#!/bin/sh\necho ran\n").unwrap();
        let written = f.finish().unwrap();
        // Another test thread's fork may hold the closed file open for a
        // moment (ETXTBSY) until its child execs.
        let out = (0..100)
            .find_map(
                |_| match std::process::Command::new(written.path()).output() {
                    Err(e) if e.raw_os_error() == Some(libc::ETXTBSY) => {
                        std::thread::sleep(std::time::Duration::from_millis(10));
                        None
                    }
                    other => Some(other),
                },
            )
            .unwrap()
            .unwrap();
        assert_eq!(out.stdout, b"ran\n");
        assert!(!target.exists());
        written.commit().unwrap();
        assert!(target.is_file());
    }

    #[test]
    fn leftovers_of_a_killed_writer_are_removed_and_nothing_else() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("7.journal");
        std::fs::write(&target, b"kept").unwrap();
        std::fs::write(dir.path().join("8.journal"), b"kept").unwrap();
        let file = AtomicFile::create(&target, 0o600).unwrap();
        let left = file.tmp.path().to_path_buf();
        std::mem::forget(file);
        let other = AtomicFile::create(&dir.path().join("8.journal"), 0o600).unwrap();
        assert!(left.exists());
        remove_leftovers(&target).unwrap();
        assert!(!left.exists());
        assert!(other.tmp.path().exists(), "another target's temporary went");
        assert!(target.exists());
    }

    #[test]
    fn a_directory_replaces_an_old_one_whole() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("unpacked");
        std::fs::create_dir(&target).unwrap();
        std::fs::write(target.join("old"), b"").unwrap();
        let new = AtomicDir::create(&target, 0o755).unwrap();
        std::fs::write(new.path().join("complete"), b"").unwrap();
        new.commit().unwrap();
        assert!(target.join("complete").is_file());
        assert!(!target.join("old").exists());
        assert_eq!(std::fs::metadata(&target).unwrap().mode() & 0o777, 0o755);
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    #[test]
    fn an_uncommitted_directory_is_removed() {
        let dir = tempfile::tempdir().unwrap();
        let new = AtomicDir::create(&dir.path().join("build"), 0o755).unwrap();
        std::fs::write(new.path().join("half"), b"").unwrap();
        drop(new);
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }
}
