//! The build cache under vmscale's cache directory (`kbuild/`), a
//! directory of the user running vmscale that nobody else can write:
//! `trees/T/` holds one tree's exported sources (`src/`, with the index
//! that records them), `builds/B/` one build directory per tree, config
//! and compiler (so a later revision's build reuses the objects of an
//! earlier one, and make rebuilds only what changed), and `images/K/`
//! the finished kernels, keyed by the revision, the config and the
//! compiler: `bzImage`, its `.config` and `build.json`. An image is
//! stored only after its build succeeded, and renamed into place whole.

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::error::{Error, Result};
use crate::machine::guest::GuestRevision;
use crate::state_dir as state;

/// The hex SHA-256 of its parts, each closed by a NUL byte.
pub fn hash(parts: &[&str]) -> String {
    let mut h = Sha256::new();
    for p in parts {
        h.update(p.as_bytes());
        h.update([0u8]);
    }
    h.finalize()
        .iter()
        .take(16)
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// What a stored image records about its build.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Record {
    pub revision: GuestRevision,
    /// The commit id, or the working tree's tree id.
    pub id: String,
    pub release: String,
    /// The hash of the effective config (`.config` after olddefconfig).
    pub config_hash: String,
    pub compiler: String,
    /// The effective config's differences from its base.
    pub differences: Vec<String>,
    /// Wall time of the build, seconds.
    pub build_seconds: f64,
}

/// The cache, locked against other vmscale processes while it is held.
pub struct Cache {
    root: PathBuf,
    _lock: File,
}

impl Cache {
    /// Opens (creating) `dir`, checked as a state directory is, and waits
    /// for any other vmscale building in it.
    pub fn open(dir: &Path) -> Result<Cache> {
        state::ensure_dir(dir)?;
        for sub in ["trees", "builds", "images"] {
            let d = dir.join(sub);
            if std::fs::symlink_metadata(&d).is_err() {
                std::fs::DirBuilder::new()
                    .create(&d)
                    .map_err(|e| Error::io("cannot create", &d, e))?;
            }
            state::check_dir(&d)?;
        }
        let lock = state::open_rw(&dir.join("lock"))?;
        lock.lock()
            .map_err(|e| Error::io("cannot lock", dir.join("lock"), e))?;
        Ok(Cache {
            root: dir.to_path_buf(),
            _lock: lock,
        })
    }

    /// The sources exported from the tree at `tree` (its canonical path).
    pub fn tree_dir(&self, tree: &Path) -> PathBuf {
        self.root
            .join("trees")
            .join(hash(&[&tree.to_string_lossy()]))
    }

    /// The build directory of a tree, config and compiler.
    pub fn build_dir(&self, tree: &Path, config: &str, compiler: &str) -> PathBuf {
        self.root
            .join("builds")
            .join(hash(&[&tree.to_string_lossy(), config, compiler]))
    }

    /// The image directory of a key.
    pub fn image_dir(&self, key: &str) -> PathBuf {
        self.root.join("images").join(key)
    }

    /// The stored build of `key`, if it is complete.
    pub fn lookup(&self, key: &str) -> Option<(PathBuf, Record)> {
        let dir = self.image_dir(key);
        let meta = std::fs::symlink_metadata(&dir).ok()?;
        if !meta.is_dir() {
            return None;
        }
        let mut text = String::new();
        let mut f = state::open_read(&dir.join("build.json")).ok()??;
        std::io::Read::read_to_string(&mut f, &mut text).ok()?;
        let record: Record = serde_json::from_str(&text).ok()?;
        let image = dir.join("bzImage");
        std::fs::symlink_metadata(&image)
            .ok()
            .filter(|m| m.is_file())?;
        Some((image, record))
    }

    /// Stores a finished build: its image and config are copied into a
    /// fresh directory, which is renamed to the key's name.
    pub fn store(&self, key: &str, build: &Path, record: &Record) -> Result<PathBuf> {
        let dir = self.image_dir(key);
        let new = crate::atomic_file::AtomicDir::create(&dir, 0o755)?;
        self.fill(new.path(), build, record)?;
        new.commit()?;
        Ok(dir.join("bzImage"))
    }

    /// Copies a build's image and config into `tmp`, with its record.
    fn fill(&self, tmp: &Path, build: &Path, record: &Record) -> Result<()> {
        for (from, to) in [("arch/x86/boot/bzImage", "bzImage"), (".config", ".config")] {
            let from = build.join(from);
            let mut r = state::open_read(&from)?
                .ok_or_else(|| Error::Failed(format!("the build left no {}", from.display())))?;
            let mut w = state::create_new(&tmp.join(to))?;
            std::io::copy(&mut r, &mut w).map_err(|e| Error::io("cannot copy", &from, e))?;
        }
        let mut w = state::create_new(&tmp.join("build.json"))?;
        let json =
            serde_json::to_string_pretty(record).map_err(|e| Error::Failed(e.to_string()))?;
        w.write_all(json.as_bytes())
            .and_then(|()| w.sync_all())
            .map_err(|e| Error::io("cannot write", tmp, e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_differ_by_every_part() {
        let k = hash(&["abc", "cfg", "gcc 12"]);
        assert_eq!(k.len(), 32);
        assert_eq!(k, hash(&["abc", "cfg", "gcc 12"]));
        assert_ne!(k, hash(&["abc", "cfg", "gcc 13"]));
        assert_ne!(hash(&["ab", "c"]), hash(&["a", "bc"]));
    }

    #[test]
    fn only_a_complete_build_is_found() {
        let tmp = tempfile::tempdir().unwrap();
        let cache = Cache::open(&tmp.path().join("kbuild")).unwrap();
        assert!(cache.lookup("k").is_none());
        let build = tmp.path().join("build");
        std::fs::create_dir_all(build.join("arch/x86/boot")).unwrap();
        std::fs::write(build.join(".config"), "CONFIG_SMP=y\n").unwrap();
        let record = Record {
            revision: GuestRevision::default(),
            id: "abc".into(),
            release: "6.1.0".into(),
            config_hash: "c".into(),
            compiler: "gcc".into(),
            differences: vec!["+SMP".into()],
            build_seconds: 1.0,
        };
        // No image: nothing stored, nothing left behind.
        assert!(cache.store("k", &build, &record).is_err());
        assert!(cache.lookup("k").is_none());
        assert_eq!(
            std::fs::read_dir(tmp.path().join("kbuild/images"))
                .unwrap()
                .count(),
            0
        );
        std::fs::write(build.join("arch/x86/boot/bzImage"), b"img").unwrap();
        let image = cache.store("k", &build, &record).unwrap();
        let (found, r) = cache.lookup("k").unwrap();
        assert_eq!((found, r), (image.clone(), record));
        assert!(image.with_file_name(".config").is_file());
    }
}
