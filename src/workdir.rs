//! A private temporary directory (mode 0700) named `PREFIX-PID-NANOS`,
//! removed when dropped; those an earlier process of the same prefix left
//! when it was killed (its pid gone) are removed first. Only directories
//! of the user running this are touched, and links are never followed.

use std::os::unix::fs::{DirBuilderExt, MetadataExt};
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};

pub struct WorkDir(PathBuf);

impl WorkDir {
    /// A new directory in the system's temporary directory.
    pub fn new(prefix: &str) -> Result<WorkDir> {
        let tmp = std::env::temp_dir();
        remove_stale(&tmp, prefix);
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        let dir = tmp.join(format!("{prefix}-{}-{nanos}", std::process::id()));
        std::fs::DirBuilder::new()
            .mode(0o700)
            .create(&dir)
            .map_err(|e| Error::io("cannot create", &dir, e))?;
        Ok(WorkDir(dir))
    }

    pub fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for WorkDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn remove_stale(tmp: &Path, prefix: &str) {
    let Ok(entries) = std::fs::read_dir(tmp) else {
        return;
    };
    // Only directories owned by whoever runs this (the owner of /proc/self).
    let me = std::fs::metadata("/proc/self").map(|m| m.uid());
    let lead = format!("{prefix}-");
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let Some(pid) = name
            .strip_prefix(&lead)
            .and_then(|r| r.split('-').next())
            .and_then(|p| p.parse::<u32>().ok())
        else {
            continue;
        };
        let Ok(meta) = std::fs::symlink_metadata(e.path()) else {
            continue;
        };
        let ours = me.as_ref().is_ok_and(|u| *u == meta.uid());
        if meta.is_dir() && ours && !Path::new(&format!("/proc/{pid}")).exists() {
            let _ = std::fs::remove_dir_all(e.path());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_dead_process_s_directory_goes_and_a_live_one_s_stays() {
        let prefix = format!("vmscale-workdir-test-{}", std::process::id());
        let tmp = std::env::temp_dir();
        // No process has pid 0 in /proc; this one is alive.
        let dead = tmp.join(format!("{prefix}-0-1"));
        let live = tmp.join(format!("{prefix}-{}-1", std::process::id()));
        std::fs::create_dir_all(&dead).unwrap();
        std::fs::create_dir_all(&live).unwrap();
        let w = WorkDir::new(&prefix).unwrap();
        let path = w.path().to_path_buf();
        let (dead_left, live_left) = (dead.exists(), live.exists());
        let _ = std::fs::remove_dir_all(&live);
        let _ = std::fs::remove_dir_all(&dead);
        assert!(!dead_left && live_left);
        assert!(path.is_dir());
        drop(w);
        assert!(!path.exists());
    }
}
