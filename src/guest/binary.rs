//! Which vmscale binary a guest runs: a static one built from the same
//! sources where there is one (`$VMSCALE_GUEST_BINARY`, else beside the
//! running binary; `cargo build-guest` makes it), else a stripped copy of
//! the running binary, which brings its C library and loader into the
//! initramfs. The static non-PIE binary makes the initramfs 2.5 MB
//! smaller and starts without dynamic loading (docs/bisect.md).

use std::fs::File;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::atomic_file::{AtomicFile, Written};
use crate::cache::{lock, prune};
use crate::error::{Error, Result};

/// The variable naming the guest binary; set, it must be usable.
pub const ENV: &str = "VMSCALE_GUEST_BINARY";

/// The guest binary's name beside the running one (an install).
pub const BESIDE: &str = "vmscale-guest";

/// Why a guest binary is not used; the caller names the file and what
/// to do.
#[derive(Debug, thiserror::Error)]
enum Unusable {
    #[error("a link, not a regular file")]
    Link,
    #[error("not a regular file")]
    NotAFile,
    #[error("others than its owner may change it, or it is not ours")]
    NotOurs,
    #[error("not a static ELF executable")]
    NotStatic,
    #[error("built from other sources: its --version says {said:?}, this one's {own:?}")]
    OtherSources { said: String, own: String },
    #[error("{0}")]
    Open(std::io::Error),
    #[error("cannot copy it into {}: {source}", dir.display())]
    Copy { dir: PathBuf, source: Error },
    #[error("cannot keep it in {}: {source}", dir.display())]
    Keep { dir: PathBuf, source: Error },
}

/// What `--version` prints for a binary of these sources.
fn own_version() -> String {
    format!("vmscale {}\n", crate::VERSION)
}

/// Where a guest binary is looked for beside the running binary in `dir`:
/// an installed `vmscale-guest`, and where `cargo build-guest` puts it
/// when the running binary is cargo's `target/release` or `target/debug`
/// one.
fn beside(dir: &Path) -> [PathBuf; 2] {
    [
        dir.join(BESIDE),
        dir.join("../x86_64-unknown-linux-gnu/guest/vmscale"),
    ]
}

/// The binary for the guest: a checked static one, else the running one
/// stripped. A `$VMSCALE_GUEST_BINARY` that cannot be used is bad input;
/// an unusable `vmscale-guest` beside the running binary is named and
/// left for the running binary.
pub fn choose(work: &Path) -> Result<PathBuf> {
    // The running image itself, also once its file is replaced or deleted
    // (a rebuild during a run); by pid, as strip reads it in a process of
    // its own.
    let exe = PathBuf::from(format!("/proc/{}/exe", std::process::id()));
    if let Some(given) = std::env::var_os(ENV).filter(|v| !v.is_empty()) {
        let given = PathBuf::from(given);
        return checked_copy(&given).map_err(|why| {
            Error::Input(format!(
                "${ENV}={}: {why}; build it with `cargo build-guest` from these \
                 sources, or unset {ENV}",
                given.display()
            ))
        });
    }
    let dir = std::fs::read_link(&exe)
        .ok()
        .and_then(|p| Some(p.parent()?.to_path_buf()));
    let found = dir
        .iter()
        .flat_map(|d| beside(d))
        .find(|p| p.symlink_metadata().is_ok());
    if let Some(found) = found {
        match checked_copy(&found) {
            Ok(p) => return Ok(p),
            Err(why) => eprintln!(
                "vmscale guest: {} is not used ({why}); the guest runs this binary",
                found.display()
            ),
        }
    }
    stripped_copy(&exe, work)
}

/// `path` opened for reading without following a link (and without
/// blocking on a FIFO planted there), if what was opened is a regular
/// file that only its owner (root or this user) may change. Every later
/// check reads this descriptor, so the file cannot be swapped between
/// the checks and the copy.
fn open_ours(path: &Path) -> Result<File, Unusable> {
    let file = File::options()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC)
        .open(path)
        .map_err(|e| match e.raw_os_error() {
            Some(libc::ELOOP) => Unusable::Link,
            _ => Unusable::Open(e),
        })?;
    let meta = file.metadata().map_err(Unusable::Open)?;
    let uid = crate::exec::euid();
    if !meta.file_type().is_file() {
        return Err(Unusable::NotAFile);
    }
    if (meta.uid() != 0 && meta.uid() != uid) || meta.mode() & 0o022 != 0 {
        return Err(Unusable::NotOurs);
    }
    Ok(file)
}

/// Why the copy `copy` cannot be the guest binary, if it cannot: it must
/// be a static ELF executable built from these sources (its `--version`).
fn unusable(copy: &Path) -> Option<Unusable> {
    if super::elf::interpreter(copy) != Some(None) {
        return Some(Unusable::NotStatic);
    }
    let out = Command::new(copy)
        .arg("--version")
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output();
    let said = out.map(|o| o.stdout).unwrap_or_default();
    same_source(&said).err()
}

/// `Ok` when a binary's `--version` output is this binary's.
fn same_source(said: &[u8]) -> Result<(), Unusable> {
    let said = String::from_utf8_lossy(said);
    if said == own_version() {
        return Ok(());
    }
    Err(Unusable::OtherSources {
        said: said.trim().to_string(),
        own: own_version().trim().to_string(),
    })
}

/// A checked copy of the static binary `path` in the cache, named by the
/// file (size and modification time) and the sources, so that boots after
/// the first neither check nor copy it again. The file is opened once;
/// the copy, in vmscale's own cache, is what is checked and run.
fn checked_copy(path: &Path) -> Result<PathBuf, Unusable> {
    let dir = crate::cache::cache_dir().join("bin");
    let mut from = open_ours(path)?;
    let meta = from.metadata().map_err(Unusable::Open)?;
    let key = super::deb::key_of(&meta);
    let cached = dir.join(format!("vmscale-static-{key}-{}", crate::SOURCE_ID));
    let hold = |p: &Path| {
        lock::hold(p).map_err(|source| Unusable::Keep {
            dir: dir.clone(),
            source,
        })
    };
    if cached.is_file() && hold(&cached)? {
        return Ok(cached);
    }
    let mut copy = || -> crate::error::Result<Written> {
        std::fs::create_dir_all(&dir).map_err(|e| Error::io("cannot create", &dir, e))?;
        let mut to = AtomicFile::create(&cached, 0o755)?;
        std::io::copy(&mut from, &mut to).map_err(|e| Error::io("cannot copy", path, e))?;
        to.finish()
    };
    let copied = copy().map_err(|source| Unusable::Copy {
        dir: dir.clone(),
        source,
    })?;
    if let Some(why) = unusable(copied.path()) {
        return Err(why);
    }
    copied.commit().map_err(|source| Unusable::Keep {
        dir: dir.clone(),
        source,
    })?;
    if !hold(&cached)? {
        return Err(Unusable::Keep {
            dir: dir.clone(),
            source: lock::vanished(&cached),
        });
    }
    forget_old();
    Ok(cached)
}

/// A stripped copy of `exe`, kept in the cache per binary (size and
/// modification time), so boots after the first reuse it; a plain copy in
/// `work` where `strip` is missing.
fn stripped_copy(exe: &Path, work: &Path) -> Result<PathBuf> {
    let dir = crate::cache::cache_dir().join("bin");
    let cached = dir.join(format!("vmscale-{}", super::deb::cache_key(exe)?));
    if cached.is_file() && lock::hold(&cached)? {
        return Ok(cached);
    }
    if keep_stripped(exe, &dir, &cached).is_ok() && lock::hold(&cached)? {
        forget_old();
        return Ok(cached);
    }
    let copy = work.join("vmscale");
    std::fs::copy(exe, &copy).map_err(|e| Error::io("cannot copy", exe, e))?;
    Ok(copy)
}

/// Strips `exe` into `cached`: strip writes its output in a private
/// temporary directory, whose file is then copied into place whole.
fn keep_stripped(exe: &Path, dir: &Path, cached: &Path) -> Result<()> {
    std::fs::create_dir_all(dir).map_err(|e| Error::io("cannot create", dir, e))?;
    let private = tempfile::Builder::new()
        .prefix(".vmscale-strip.")
        .tempdir_in(dir)
        .map_err(|e| Error::io("cannot create a directory in", dir, e))?;
    let out = private.path().join("vmscale");
    let stripped = Command::new("strip")
        .arg("-o")
        .arg(&out)
        .arg(exe)
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !stripped {
        return Err(Error::Failed(format!("strip failed on {}", exe.display())));
    }
    let mut from = File::open(&out).map_err(|e| Error::io("cannot read", &out, e))?;
    let mut to = AtomicFile::create(cached, 0o755)?;
    std::io::copy(&mut from, &mut to).map_err(|e| Error::io("cannot copy", &out, e))?;
    to.commit()
}

/// Removes guest binaries not used for a day (each build makes one) but
/// those a running vmscale holds, then prunes the cache to its cap.
fn forget_old() {
    let limits = prune::Limits {
        older_than: Some(std::time::Duration::from_secs(86_400)),
        only: Some("bin"),
        ..prune::Limits::default()
    };
    if let Err(e) = prune::prune(&crate::cache::cache_dir(), &limits) {
        eprintln!("vmscale: warning: cannot remove old guest binaries: {e}");
    }
    prune::to_cap();
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn only_a_binary_of_these_sources_is_the_same_source() {
        assert!(same_source(own_version().as_bytes()).is_ok());
        let other = format!("vmscale {}0\n", crate::VERSION);
        let why = same_source(other.as_bytes()).unwrap_err().to_string();
        assert!(why.contains("other sources"), "{why}");
        assert!(same_source(b"").is_err());
    }

    #[test]
    fn links_fifos_writable_and_dynamic_binaries_are_refused() {
        let bin = crate::scratch::at("vmscale-guest");
        // This test's own executable: a regular, dynamically linked ELF.
        std::fs::copy("/proc/self/exe", &*bin).unwrap();
        let chmod = |mode| std::fs::set_permissions(&*bin, PermissionsExt::from_mode(mode));
        chmod(0o755).unwrap();
        assert!(open_ours(&bin).is_ok());
        let why = unusable(&bin).unwrap().to_string();
        assert!(why.contains("not a static ELF"), "{why}");
        chmod(0o775).unwrap();
        let why = open_ours(&bin).unwrap_err().to_string();
        assert!(why.contains("may change it"), "{why}");
        let link = bin.with_file_name("link");
        std::os::unix::fs::symlink(&*bin, &link).unwrap();
        let why = open_ours(&link).unwrap_err().to_string();
        assert_eq!(why, "a link, not a regular file");
        // A FIFO is refused at once, not waited on for a writer.
        let fifo = bin.with_file_name("fifo");
        let c = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: `c` is a NUL-terminated path that outlives the call.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let why = open_ours(&fifo).unwrap_err().to_string();
        assert_eq!(why, "not a regular file");
        assert!(open_ours(&bin.with_file_name("none")).is_err());
    }
}
