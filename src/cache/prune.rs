//! Removing cache entries, least recently used first, down to a size or
//! past an age, and the temporaries killed writers left. An entry a
//! running vmscale holds (`lock::hold`) is skipped, and so is all of
//! `kbuild/` while a build holds its lock. A directory is first renamed
//! aside (so a run sees it whole or not at all) and then removed without
//! following any link inside; a link planted as an entry is removed
//! itself, never followed.

use std::fs::File;
use std::path::Path;
use std::time::{Duration, SystemTime};

use super::scan::{Entry, scan};
use super::{KBUILD_LOCK, lock, under_kbuild};
use crate::error::{Error, Result};

/// A temporary outside `kbuild/` is removed once nothing has changed in it
/// for this long (a writer at work changes it; under `kbuild/` the build
/// lock tells instead).
pub const TEMPORARY_AGE: Duration = Duration::from_secs(3600);

/// What to remove; an entry goes when either limit asks.
#[derive(Debug, Clone, Copy, Default)]
pub struct Limits {
    /// Remove the least recently used until the cache holds at most this.
    pub max_size: Option<u64>,
    /// Remove every entry not used for this long.
    pub older_than: Option<Duration>,
    /// Only entries of this kind (`Kind::name`).
    pub only: Option<&'static str>,
}

/// What a prune did.
#[derive(Debug, Default)]
pub struct Outcome {
    pub removed: Vec<Entry>,
    /// Entries a limit asked to remove but that stayed, with why.
    pub skipped: Vec<(Entry, String)>,
    pub temporaries: Vec<Entry>,
    /// Kind directories not read (a link, another owner).
    pub passed: Vec<String>,
    /// Bytes the cache held before and holds after.
    pub before: u64,
    pub after: u64,
}

/// Prunes the cache at `root` to `limits`.
pub fn prune(root: &Path, limits: &Limits) -> Result<Outcome> {
    let now = SystemTime::now();
    let found = scan(root);
    let mut out = Outcome {
        before: found.total(),
        after: found.total(),
        passed: found.passed,
        ..Outcome::default()
    };
    let kbuild = kbuild_lock(root)?;
    let wanted = |e: &Entry| limits.only.is_none_or(|k| k == e.kind.name);
    for t in found.temporaries.into_iter().filter(wanted) {
        let left = match under_kbuild(t.kind) {
            true => kbuild.is_some(),
            false => t.changed.elapsed().is_ok_and(|age| age >= TEMPORARY_AGE),
        };
        if left && matches!(remove(&t), Ok(None)) {
            out.after -= t.bytes;
            out.temporaries.push(t);
        }
    }
    let mut entries: Vec<Entry> = found.entries.into_iter().filter(wanted).collect();
    entries.sort_by_key(|e| e.last_use);
    for e in entries {
        let old = limits.older_than.is_some_and(|age| e.idle(now) >= age);
        let over = limits.max_size.is_some_and(|max| out.after > max);
        if !old && !over {
            continue;
        }
        let why = match under_kbuild(e.kind) && kbuild.is_none() {
            true => Some(format!("a kernel build holds {KBUILD_LOCK}")),
            // One entry that cannot go (another owner's file inside) does
            // not stop the others.
            false => remove(&e).unwrap_or_else(|err| Some(err.to_string())),
        };
        match why {
            Some(why) => out.skipped.push((e, why)),
            None => {
                out.after -= e.bytes;
                out.removed.push(e);
            }
        }
    }
    Ok(out)
}

/// The kernel builds' lock taken exclusively, or `None` while a build
/// holds it (a cache without `kbuild/` has nothing of it to keep: an
/// empty lock is made for the time of the prune).
fn kbuild_lock(root: &Path) -> Result<Option<File>> {
    let path = root.join(KBUILD_LOCK);
    match lock::try_exclusive(&path) {
        Ok(lock) => Ok(lock),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Some(
            File::open("/dev/null").map_err(|e| Error::io("cannot open", "/dev/null", e))?,
        )),
        Err(e) => Err(Error::io("cannot lock", path, e)),
    }
}

/// Removes one entry: `None` when done (or gone already), else why not.
fn remove(e: &Entry) -> Result<Option<String>> {
    let meta = match std::fs::symlink_metadata(&e.path) {
        Ok(m) => m,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(err) => return Err(Error::io("cannot read", &e.path, err)),
    };
    if !meta.is_dir() && !meta.is_file() {
        // A link (or anything else) planted as an entry: itself, never
        // what it points at.
        return unlink(&e.path).map(|()| None);
    }
    let held = match lock::try_exclusive(&e.path) {
        Ok(Some(held)) => held,
        Ok(None) => return Ok(Some("in use by a running vmscale".into())),
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(err) => return Err(Error::io("cannot lock", &e.path, err)),
    };
    if meta.is_file() {
        unlink(&e.path)?;
    } else {
        let aside = crate::atomic_file::set_aside(&e.path)?;
        // std's remove_dir_all opens each directory without following a
        // link (openat, O_NOFOLLOW), so nothing outside is touched.
        std::fs::remove_dir_all(&aside).map_err(|err| Error::io("cannot remove", &aside, err))?;
    }
    drop(held);
    Ok(None)
}

fn unlink(path: &Path) -> Result<()> {
    match std::fs::remove_file(path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
            Err(Error::io("cannot remove", path, e))
        }
        _ => Ok(()),
    }
}

/// After a run added an entry: prunes the cache to its cap (`cap::get`)
/// when it is over, saying on stderr what went. Never fails the run: a
/// prune that cannot finish is a warning.
pub fn to_cap() {
    let Some(max) = super::cap::get() else {
        return;
    };
    let root = super::cache_dir();
    let limits = Limits {
        max_size: Some(max),
        ..Limits::default()
    };
    match prune(&root, &limits) {
        Ok(o) if o.removed.is_empty() && o.skipped.is_empty() => {}
        Ok(o) => {
            let said = format!(
                "vmscale: the cache was over its cap of {} ({}): removed {} entries, \
                 least recently used first; {} left, {} in use kept",
                crate::units::size(max),
                super::cap::ENV,
                o.removed.len(),
                crate::units::memory(o.after),
                o.skipped.len()
            );
            eprint!("{}", crate::text::fill(&said, 80, "", "  "));
        }
        Err(e) => eprintln!("vmscale: warning: cannot prune the cache: {e}"),
    }
}
