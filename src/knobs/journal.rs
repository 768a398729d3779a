//! The crash journal: the original value of every knob a run will touch,
//! written and fsynced before the first change and removed after the last
//! restore, so a run killed with SIGKILL can be repaired later.

use serde::{Deserialize, Serialize};
use std::io::{Read, Write};

use super::state;
use crate::error::{Error, Result};
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
    super::state::dir().join("knobs.journal")
}

/// Writes the journal durably: a temporary file, fsync, rename, fsync of the
/// directory, so after a crash there is either the old state or the new.
/// The directory is created 0700 if needed and checked (see `state`).
pub fn write(path: &Path, j: &Journal) -> Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    state::ensure_dir(dir).map_err(|e| e.context("knob journal"))?;
    let tmp = path.with_extension("journal.tmp");
    let text =
        serde_json::to_string_pretty(j).map_err(|e| Error::Failed(format!("knob journal: {e}")))?;
    let fail = |e: std::io::Error| Error::io("cannot write the knob journal", &tmp, e);
    // A leftover (or planted) temporary file is removed, never followed.
    match std::fs::remove_file(&tmp) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(fail(e)),
        _ => {}
    }
    let mut f = state::create_new(&tmp)?;
    f.write_all(text.as_bytes()).map_err(fail)?;
    f.sync_all().map_err(fail)?;
    std::fs::rename(&tmp, path)
        .map_err(|e| Error::io("cannot move the knob journal into", path, e))?;
    if let Ok(d) = std::fs::File::open(dir) {
        let _ = d.sync_all();
    }
    Ok(())
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
    let Some(mut f) = state::open_read(path).map_err(|e| e.context("refusing the knob journal"))?
    else {
        return Ok(None);
    };
    let mut text = String::new();
    f.read_to_string(&mut text)
        .map_err(|e| Error::io("cannot read the knob journal", path, e))?;
    serde_json::from_str(&text).map(Some).map_err(|e| {
        Error::Refused(format!(
            "the knob journal {} is damaged ({e}); inspect it, restore the values by hand \
             and delete it",
            path.display()
        ))
    })
}

/// Removes the journal and makes the removal durable.
pub fn remove(path: &Path) -> Result<()> {
    match std::fs::remove_file(path) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(Error::io("cannot remove the knob journal", path, e)),
    }
    if let Some(d) = path.parent().and_then(|d| std::fs::File::open(d).ok()) {
        let _ = d.sync_all();
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_remove() {
        let dir = std::env::temp_dir().join(format!("vmscale-journal-{}", std::process::id()));
        let p = dir.join("sub/knobs.journal");
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
        let _ = std::fs::remove_dir_all(&dir);
    }
}
