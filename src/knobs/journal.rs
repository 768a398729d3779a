//! The crash journal: the original value of every knob a run will touch,
//! written and fsynced before the first change and removed after the last
//! restore, so a run killed with SIGKILL can be repaired later.

use serde::{Deserialize, Serialize};
use std::io::Write;
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

/// Where the journal lives: $VMSCALE_STATE_DIR/knobs.journal, else
/// $XDG_STATE_HOME/vmscale/knobs.journal, else ~/.local/state/vmscale/knobs.journal.
pub fn default_path() -> PathBuf {
    let nonempty = |k: &str| {
        std::env::var_os(k)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    let dir = nonempty("VMSCALE_STATE_DIR")
        .or_else(|| nonempty("XDG_STATE_HOME").map(|d| d.join("vmscale")))
        .or_else(|| nonempty("HOME").map(|h| h.join(".local/state/vmscale")))
        .unwrap_or_else(|| PathBuf::from("/var/tmp/vmscale"));
    dir.join("knobs.journal")
}

/// Writes the journal durably: a temporary file, fsync, rename, fsync of the
/// directory, so after a crash there is either the old state or the new.
pub fn write(path: &Path, j: &Journal) -> Result<(), String> {
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).map_err(|e| {
        format!(
            "cannot create the knob journal directory {}: {e}",
            dir.display()
        )
    })?;
    let tmp = path.with_extension("journal.tmp");
    let text = serde_json::to_string_pretty(j).map_err(|e| format!("knob journal: {e}"))?;
    let fail = |e: std::io::Error| format!("cannot write the knob journal {}: {e}", tmp.display());
    let mut f = std::fs::File::create(&tmp).map_err(fail)?;
    f.write_all(text.as_bytes()).map_err(fail)?;
    f.sync_all().map_err(fail)?;
    std::fs::rename(&tmp, path)
        .map_err(|e| format!("cannot move the knob journal into {}: {e}", path.display()))?;
    if let Ok(d) = std::fs::File::open(dir) {
        let _ = d.sync_all();
    }
    Ok(())
}

/// Reads the journal; Ok(None) when there is none.
pub fn read(path: &Path) -> Result<Option<Journal>, String> {
    match std::fs::read_to_string(path) {
        Ok(text) => serde_json::from_str(&text).map(Some).map_err(|e| {
            format!(
                "the knob journal {} is damaged ({e}); inspect it, restore the values by hand \
                 and delete it",
                path.display()
            )
        }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(format!(
            "cannot read the knob journal {}: {e}",
            path.display()
        )),
    }
}

/// Removes the journal and makes the removal durable.
pub fn remove(path: &Path) -> Result<(), String> {
    match std::fs::remove_file(path) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => {
            return Err(format!(
                "cannot remove the knob journal {}: {e}",
                path.display()
            ));
        }
    }
    if let Some(d) = path.parent().and_then(|d| std::fs::File::open(d).ok()) {
        let _ = d.sync_all();
    }
    Ok(())
}

/// Whether the process that wrote the journal is still a running vmscale
/// (a reused pid running something else counts as gone).
pub fn owner_alive(j: &Journal) -> bool {
    if j.pid == std::process::id() {
        return false;
    }
    std::fs::read(format!("/proc/{}/cmdline", j.pid))
        .map(|c| {
            let argv0 = c.split(|&b| b == 0).next().unwrap_or(&[]);
            let base = |p: &Path| p.file_name().map(|n| n.to_string_lossy().into_owned());
            let theirs = base(Path::new(&*String::from_utf8_lossy(argv0)));
            let ours = std::env::current_exe().ok().and_then(|p| base(&p));
            theirs.is_some() && (theirs.as_deref() == Some("vmscale") || theirs == ours)
        })
        .unwrap_or(false)
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
        assert!(read(&p).unwrap_err().contains("damaged"));
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn dead_or_foreign_owner_is_not_alive() {
        let mut j = Journal {
            pid: std::process::id(),
            started_at: String::new(),
            entries: vec![],
        };
        assert!(!owner_alive(&j));
        j.pid = u32::MAX;
        assert!(!owner_alive(&j));
    }
}
