//! Support for the unit tests: scratch paths (a path inside a fresh
//! private directory that lives exactly as long as the value) and whether
//! they run under CI.

use std::ops::Deref;
use std::path::{Path, PathBuf};

/// `rel` inside a new private (0700) directory with an unpredictable name,
/// which is removed when this is dropped, also when the test fails. The
/// path itself is not created; `""` is the directory.
pub struct Scratch {
    path: PathBuf,
    _dir: tempfile::TempDir,
}

/// A new [`Scratch`] at `rel`.
pub fn at(rel: &str) -> Scratch {
    let dir = tempfile::tempdir().expect("a scratch directory");
    Scratch {
        path: dir.path().join(rel),
        _dir: dir,
    }
}

impl Deref for Scratch {
    type Target = Path;
    fn deref(&self) -> &Path {
        &self.path
    }
}

impl AsRef<Path> for Scratch {
    fn as_ref(&self) -> &Path {
        &self.path
    }
}

/// Whether the tests run under CI: `CI=true`, as .ci/run sets it. There
/// every component is installed, so a test that misses one fails.
pub fn under_ci() -> bool {
    std::env::var("CI").as_deref() == Ok("true")
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    #[test]
    fn the_directory_lives_as_long_as_the_path() {
        let p = super::at("a/b");
        let dir = p.parent().and_then(Path::parent).unwrap().to_path_buf();
        assert!(dir.is_dir() && !p.exists());
        drop(p);
        assert!(!dir.exists());
    }
}
