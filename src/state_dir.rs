//! The directories vmscale's state lives in (knob and set-up journals and
//! locks, the store's spool, kbuild's cache) and how their files are opened.
//! vmscale runs as root, so every such directory must belong to the user
//! running vmscale, be writable by nobody else, and sit below directories
//! only root (or that user) can change; files are opened without following
//! symbolic links.

use std::fs::{File, OpenOptions};
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt};
use std::path::{Component, Path, PathBuf};

use crate::error::{Error, Result};

/// The state directory as root when `VMSCALE_STATE_DIR` is not set.
pub const DEFAULT_DIR: &str = "/var/lib/vmscale";

/// `$VMSCALE_STATE_DIR` when set and not empty, else /var/lib/vmscale.
pub fn dir() -> PathBuf {
    std::env::var_os("VMSCALE_STATE_DIR")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(DEFAULT_DIR))
}

/// The user whose files are trusted: the effective uid.
fn me() -> u32 {
    crate::exec::euid()
}

/// Creates `dir` (mode 0700, missing parents 0755) if absent, then checks it.
pub fn ensure_dir(dir: &Path) -> Result<()> {
    if std::fs::symlink_metadata(dir).is_err() {
        if let Some(parent) = dir.parent().filter(|p| !p.as_os_str().is_empty()) {
            std::fs::DirBuilder::new()
                .recursive(true)
                .mode(0o755)
                .create(parent)
                .map_err(|e| Error::io("cannot create", parent, e))?;
        }
        match std::fs::DirBuilder::new().mode(0o700).create(dir) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(Error::io("cannot create", dir, e)),
        }
    }
    check_dir(dir)
}

/// Writes `text` to `path` durably: a temporary file, fsync, rename, fsync
/// of the directory, so after a crash there is either the old file or the
/// new. The directory is created 0700 if needed and checked; `what` names
/// the file in errors ("knob journal").
pub fn write_durably(path: &Path, text: &[u8], what: &str) -> Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    ensure_dir(dir).map_err(|e| e.context(what))?;
    crate::atomic_file::write(path, text, 0o600).map_err(|e| e.context(format!("the {what}")))
}

/// Removes `path` (gone already is fine) and makes the removal durable.
pub fn remove_durably(path: &Path, what: &str) -> Result<()> {
    match std::fs::remove_file(path) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(Error::io(format!("cannot remove the {what}"), path, e)),
    }
    if let Some(d) = path.parent() {
        crate::atomic_file::sync_dir(d);
    }
    Ok(())
}

/// Refuses a state directory that another user could change: a symbolic
/// link, not a directory, not owned by us, writable by group or others, or
/// below a directory others may write to (sticky directories such as /tmp
/// excepted, since there only the owner can rename what it created).
pub fn check_dir(dir: &Path) -> Result<()> {
    let fix = "use a directory owned by root with mode 0700 (the default is /var/lib/vmscale; \
               VMSCALE_STATE_DIR chooses another)";
    let m = std::fs::symlink_metadata(dir).map_err(|e| Error::io("state directory", dir, e))?;
    if m.file_type().is_symlink() {
        return Err(Error::Refused(format!(
            "state directory {} is a symbolic link; {fix}",
            dir.display()
        )));
    }
    if !m.is_dir() {
        return Err(Error::Refused(format!(
            "state directory {} is not a directory; {fix}",
            dir.display()
        )));
    }
    if m.uid() != me() {
        return Err(Error::Refused(format!(
            "state directory {} belongs to uid {}, not to uid {} running vmscale; {fix}",
            dir.display(),
            m.uid(),
            me()
        )));
    }
    if m.mode() & 0o022 != 0 {
        return Err(Error::Refused(format!(
            "state directory {} is writable by other users (mode {:o}); {fix}",
            dir.display(),
            m.mode() & 0o7777
        )));
    }
    let real = dir
        .canonicalize()
        .map_err(|e| Error::io("state directory", dir, e))?;
    for up in real.ancestors().skip(1) {
        let m = std::fs::metadata(up).map_err(|e| Error::io("cannot inspect", up, e))?;
        let sticky = m.mode() & 0o1000 != 0;
        if (m.uid() != 0 && m.uid() != me()) || (m.mode() & 0o022 != 0 && !sticky) {
            return Err(Error::Refused(format!(
                "state directory {} lies below {}, which other users can change (owner uid \
                 {}, mode {:o}); {fix}",
                dir.display(),
                up.display(),
                m.uid(),
                m.mode() & 0o7777
            )));
        }
    }
    Ok(())
}

/// Options every state file is opened with: no symbolic link followed, not
/// inherited by programs vmscale starts.
fn options() -> OpenOptions {
    let mut o = OpenOptions::new();
    o.custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .mode(0o600);
    o
}

/// Opens a state file for reading; Ok(None) when it does not exist. A
/// symbolic link, a non-regular file or a file owned by someone else is an
/// error naming it.
pub fn open_read(path: &Path) -> Result<Option<File>> {
    match options().read(true).open(path) {
        Ok(f) => check_file(path, &f).map(|()| Some(f)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) if e.raw_os_error() == Some(libc::ELOOP) => Err(Error::Refused(format!(
            "{} is a symbolic link; vmscale does not follow links in its state directory",
            path.display()
        ))),
        Err(e) => Err(Error::io("cannot open", path, e)),
    }
}

/// Reads a JSON state file through [`open_read`]; Ok(None) when there is
/// none. `what` names it in errors ("the knob journal"); `fix` is what a
/// damaged one asks of the user.
pub fn read_json<T: serde::de::DeserializeOwned>(
    path: &Path,
    what: &str,
    fix: &str,
) -> Result<Option<T>> {
    let Some(mut f) = open_read(path).map_err(|e| e.context(format!("refusing {what}")))? else {
        return Ok(None);
    };
    let mut text = String::new();
    std::io::Read::read_to_string(&mut f, &mut text)
        .map_err(|e| Error::io(format!("cannot read {what}"), path, e))?;
    serde_json::from_str(&text)
        .map(Some)
        .map_err(|e| Error::Refused(format!("{what} {} is damaged ({e}); {fix}", path.display())))
}

/// Creates a new state file (it must not exist yet), mode 0600.
pub fn create_new(path: &Path) -> Result<File> {
    crate::atomic_file::create_new(0o600)
        .open(path)
        .map_err(|e| Error::io("cannot create", path, e))
}

/// Opens (creating if needed) a state file for reading and writing.
pub fn open_rw(path: &Path) -> Result<File> {
    let f = options()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(path)
        .map_err(|e| Error::io("cannot open", path, e))?;
    check_file(path, &f)?;
    Ok(f)
}

fn check_file(path: &Path, f: &File) -> Result<()> {
    let m = f
        .metadata()
        .map_err(|e| Error::io("cannot inspect", path, e))?;
    if !m.is_file() || m.nlink() != 1 || m.uid() != me() {
        return Err(Error::Refused(format!(
            "{} is not a plain file of uid {} (owner uid {}, {} links); remove it",
            path.display(),
            me(),
            m.uid(),
            m.nlink()
        )));
    }
    Ok(())
}

/// The first symbolic link among `file` and the directories from `root` to
/// it, if any.
pub fn symlink_below(root: &Path, file: &Path) -> Option<PathBuf> {
    let rel = file.strip_prefix(root).ok()?;
    let mut at = root.to_path_buf();
    for c in rel.components() {
        if let Component::Normal(n) = c {
            at.push(n);
            if std::fs::symlink_metadata(&at).is_ok_and(|m| m.file_type().is_symlink()) {
                return Some(at);
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn creates_private_dir_and_refuses_open_ones() {
        let d = crate::scratch::at("");
        let s = d.join("a/state");
        ensure_dir(&s).unwrap();
        assert_eq!(std::fs::metadata(&s).unwrap().mode() & 0o777, 0o700);
        // Each unsafe directory is a refusal (exit 2) saying what is wrong.
        let refused = |dir: &Path, says: &str| match check_dir(dir) {
            Err(Error::Refused(m)) => assert!(m.contains(says), "{m}"),
            other => panic!("{} not refused: {other:?}", dir.display()),
        };
        std::fs::set_permissions(&s, std::fs::Permissions::from_mode(0o777)).unwrap();
        refused(&s, "writable by other users");
        std::fs::set_permissions(&s, std::fs::Permissions::from_mode(0o700)).unwrap();
        let link = d.join("link");
        std::os::unix::fs::symlink(&s, &link).unwrap();
        refused(&link, "symbolic link");
        std::fs::set_permissions(d.join("a"), std::fs::Permissions::from_mode(0o777)).unwrap();
        refused(&s, "other users can change");
        // A directory that is not there is an I/O error naming it.
        let gone = d.join("gone");
        assert!(matches!(check_dir(&gone), Err(Error::Io { ref path, .. }) if *path == gone));
    }

    #[test]
    fn files_are_not_followed() {
        let d = crate::scratch::at("");
        let target = d.join("target");
        std::fs::write(&target, "x").unwrap();
        let link = d.join("link");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        assert!(
            open_read(&link)
                .unwrap_err()
                .to_string()
                .contains("symbolic link")
        );
        assert!(open_rw(&link).is_err());
        assert!(create_new(&link).is_err());
        assert!(open_read(&d.join("none")).unwrap().is_none());
        assert_eq!(symlink_below(&d, &link), Some(link.clone()));
        assert_eq!(symlink_below(&d, &target), None);
    }
}
