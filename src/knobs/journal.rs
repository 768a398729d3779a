//! The crash journal: the original value of every knob a run will touch,
//! written and fsynced before the first change and removed after the last
//! restore, so a run killed with SIGKILL can be repaired later.

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::state_dir as state;
use std::path::{Path, PathBuf};

/// One knob's original value and where it lives.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Entry {
    pub name: String,
    pub path: PathBuf,
    pub original: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Journal {
    /// The vmscale process that changes the knobs.
    pub pid: u32,
    pub started_at: String,
    pub entries: Vec<Entry>,
}

/// Where the journal lives: knobs.journal in the state directory
/// (`$VMSCALE_STATE_DIR`, else /var/lib/vmscale).
pub fn default_path() -> PathBuf {
    crate::state_dir::dir().join("knobs.journal")
}

/// Writes the journal durably: a temporary file, fsync, rename, fsync of the
/// directory, so after a crash there is either the old state or the new.
/// The directory is created 0700 if needed and checked (see `state`).
pub fn write(path: &Path, j: &Journal) -> Result<()> {
    let text =
        serde_json::to_string_pretty(j).map_err(|e| Error::Failed(format!("knob journal: {e}")))?;
    state::write_durably(path, text.as_bytes(), "knob journal")
}

/// Reads the journal; Ok(None) when there is none. Its directory must pass
/// the state directory checks and the file must not be a symbolic link.
pub fn read(path: &Path) -> Result<Option<Journal>> {
    let dir = path.parent().unwrap_or(Path::new("."));
    if std::fs::symlink_metadata(path).is_err() && std::fs::symlink_metadata(dir).is_err() {
        return Ok(None);
    }
    state::check_dir(dir)
        .map_err(|e| e.context(format!("refusing the knob journal {}", path.display())))?;
    state::read_json(
        path,
        "the knob journal",
        "inspect it, restore the values by hand and delete it",
    )
}

/// Removes the journal (and what a killed writer of it left) and makes
/// the removal durable.
pub fn remove(path: &Path) -> Result<()> {
    crate::atomic_file::remove_leftovers(path)?;
    state::remove_durably(path, "knob journal")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_remove() {
        let p = crate::scratch::at("sub/knobs.journal");
        assert_eq!(read(&p).unwrap(), None);
        let j = Journal {
            pid: 1,
            started_at: "now".into(),
            entries: vec![Entry {
                name: "thp_defrag".into(),
                path: "/sys/kernel/mm/transparent_hugepage/defrag".into(),
                original: "madvise".into(),
            }],
        };
        write(&p, &j).unwrap();
        assert_eq!(read(&p).unwrap(), Some(j));
        remove(&p).unwrap();
        assert_eq!(read(&p).unwrap(), None);
        std::fs::write(&p, "{not json").unwrap();
        assert!(read(&p).unwrap_err().to_string().contains("damaged"));
    }
}
