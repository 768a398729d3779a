//! What the cache holds: each kind's entries with their size on disk and
//! last use, and the temporaries killed writers left. Nothing is followed
//! through a symbolic link: a kind directory that is a link is passed
//! over, a link inside an entry counts as itself, and the walk stays on
//! the cache's file system.

use std::collections::HashSet;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use super::{KINDS, Kind, is_temporary};

/// One entry (or temporary) of a kind.
#[derive(Debug, Clone)]
pub struct Entry {
    pub kind: &'static Kind,
    pub name: String,
    pub path: PathBuf,
    /// Bytes on disk (allocated blocks; a hard-linked file counted once).
    pub bytes: u64,
    /// Its modification time: when it was made or a run last used it
    /// (`lock::hold` sets it).
    pub last_use: SystemTime,
    /// The newest modification anywhere inside (a writer at work keeps it
    /// recent).
    pub changed: SystemTime,
}

impl Entry {
    /// How long ago it was last used (zero for a time in the future).
    pub fn idle(&self, now: SystemTime) -> Duration {
        now.duration_since(self.last_use).unwrap_or_default()
    }
}

/// The cache's entries and temporaries, by kind in [`KINDS`]'s order.
#[derive(Debug, Default)]
pub struct Scan {
    pub entries: Vec<Entry>,
    pub temporaries: Vec<Entry>,
    /// Kind directories passed over, with why (a link, another owner).
    pub passed: Vec<String>,
}

impl Scan {
    /// Bytes of entries and temporaries together.
    pub fn total(&self) -> u64 {
        self.entries
            .iter()
            .chain(&self.temporaries)
            .map(|e| e.bytes)
            .sum()
    }
}

/// Reads the cache at `root` (missing: empty).
pub fn scan(root: &Path) -> Scan {
    let mut out = Scan::default();
    let Ok(top) = std::fs::metadata(root) else {
        return out;
    };
    let mut seen = HashSet::new();
    for kind in KINDS {
        let dir = root.join(kind.dir);
        match kind_dir(root, &dir, top.dev()) {
            Ok(true) => {}
            Ok(false) => continue,
            Err(why) => {
                out.passed.push(format!("{}: {why}", dir.display()));
                continue;
            }
        }
        let Ok(names) = std::fs::read_dir(&dir) else {
            continue;
        };
        let mut names: Vec<_> = names.flatten().map(|e| e.file_name()).collect();
        names.sort();
        for name in names {
            let path = dir.join(&name);
            let Some(entry) = measure(kind, &path, top.dev(), &mut seen) else {
                continue;
            };
            if is_temporary(kind, &name) {
                out.temporaries.push(entry);
            } else {
                out.entries.push(entry);
            }
        }
    }
    out
}

/// Why a kind's directory is not read.
#[derive(Debug, thiserror::Error)]
enum NotRead {
    #[error("a symbolic link, not followed")]
    Link,
    #[error("not a directory of the cache's file system")]
    Elsewhere,
    #[error("owned by uid {owner}, not {me}")]
    Owner { owner: u32, me: u32 },
}

/// Whether a kind's directory is there to read: `Ok(false)` when absent,
/// `Err` when it (or `kbuild/` above it) is a link, not a directory, on
/// another file system or not this user's.
fn kind_dir(root: &Path, dir: &Path, dev: u64) -> Result<bool, NotRead> {
    let below = dir.strip_prefix(root).unwrap_or(dir);
    let mut at = root.to_path_buf();
    for part in below.components() {
        at.push(part);
        let meta = match std::fs::symlink_metadata(&at) {
            Ok(m) => m,
            Err(_) => return Ok(false),
        };
        if meta.file_type().is_symlink() {
            return Err(NotRead::Link);
        }
        if !meta.is_dir() || meta.dev() != dev {
            return Err(NotRead::Elsewhere);
        }
        let me = crate::exec::euid();
        if meta.uid() != me {
            return Err(NotRead::Owner {
                owner: meta.uid(),
                me,
            });
        }
    }
    Ok(true)
}

/// An entry's size and times, walked without following links and
/// without leaving the file system `dev`.
fn measure(
    kind: &'static Kind,
    path: &Path,
    dev: u64,
    seen: &mut HashSet<(u64, u64)>,
) -> Option<Entry> {
    let meta = std::fs::symlink_metadata(path).ok()?;
    let mut entry = Entry {
        kind,
        name: path.file_name()?.to_string_lossy().into_owned(),
        path: path.to_path_buf(),
        bytes: 0,
        last_use: meta.modified().ok()?,
        changed: meta.modified().ok()?,
    };
    let mut stack = vec![(path.to_path_buf(), meta)];
    while let Some((p, m)) = stack.pop() {
        if seen.insert((m.dev(), m.ino())) {
            entry.bytes += m.blocks() * 512;
        }
        if let Ok(t) = m.modified() {
            entry.changed = entry.changed.max(t);
        }
        if !m.file_type().is_dir() || m.dev() != dev {
            continue;
        }
        for child in std::fs::read_dir(&p).into_iter().flatten().flatten() {
            // DirEntry::metadata does not follow a link.
            if let Ok(cm) = child.metadata() {
                stack.push((child.path(), cm));
            }
        }
    }
    Some(entry)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_count_each_file_once_and_never_through_a_link() {
        let root = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("big"), vec![1u8; 1 << 20]).unwrap();
        let entry = root.path().join("unpacked/k-1-5");
        std::fs::create_dir_all(entry.join("boot")).unwrap();
        std::fs::write(entry.join("boot/vmlinuz"), vec![1u8; 64 << 10]).unwrap();
        std::fs::hard_link(entry.join("boot/vmlinuz"), entry.join("again")).unwrap();
        std::os::unix::fs::symlink(outside.path(), entry.join("out")).unwrap();
        std::fs::create_dir(root.path().join("unpacked/.k.abc.tmp")).unwrap();
        let s = scan(root.path());
        assert_eq!(s.entries.len(), 1);
        assert_eq!(s.temporaries.len(), 1);
        let bytes = s.entries[0].bytes;
        assert!((64 << 10..512 << 10).contains(&bytes), "{bytes}");
    }

    #[test]
    fn a_download_directory_of_the_kernels_script_is_a_temporary() {
        let root = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(root.path().join("kernels/dl.Ab12")).unwrap();
        std::fs::write(root.path().join("kernels/k.deb"), b"!<arch>\n").unwrap();
        std::fs::create_dir_all(root.path().join("unpacked/dl.x")).unwrap();
        let s = scan(root.path());
        let names = |v: &[Entry]| v.iter().map(|e| e.name.clone()).collect::<Vec<_>>();
        assert_eq!(names(&s.temporaries), ["dl.Ab12"]);
        assert_eq!(names(&s.entries), ["k.deb", "dl.x"]);
    }

    #[test]
    fn a_kind_directory_that_is_a_link_is_passed_over() {
        let root = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("victim"), b"x").unwrap();
        std::os::unix::fs::symlink(outside.path(), root.path().join("pvh")).unwrap();
        let s = scan(root.path());
        assert!(s.entries.is_empty());
        assert!(s.passed[0].contains("symbolic link"), "{:?}", s.passed);
    }
}
