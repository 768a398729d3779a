//! zswap's own counters from debugfs, /sys/kernel/debug/zswap/*
//! (stored_pages, written_back_pages, reject_*, pool_limit_hit, ...), as
//! `zswap.<name>`. vmscale never mounts debugfs: where it is not mounted
//! the counters are absent and a report says so.

use std::path::Path;

use super::vmstat::Vmstat;
use crate::machine::memory::ZSWAP_DEBUGFS;
use crate::machine::{read_num, under};

/// The prefix of every zswap key in a sample's counter deltas.
pub const PREFIX: &str = "zswap.";

/// Every numeric file of zswap's debugfs directory; empty without one.
/// Entries that are not plain files (a planted link) are skipped.
pub fn read(root: &Path) -> Vmstat {
    let Ok(entries) = std::fs::read_dir(under(root, ZSWAP_DEBUGFS)) else {
        return Vmstat::new();
    };
    entries
        .filter_map(|e| e.ok())
        .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
        .filter_map(|e| {
            let name = e.file_name().to_str()?.to_string();
            let v = read_num::<u64>(root, &format!("{ZSWAP_DEBUGFS}/{name}"))?;
            Some((format!("{PREFIX}{name}"), v))
        })
        .collect()
}

/// The line a report prints where zswap's debugfs counters were not read
/// (`debugfs` as `machine::memory::zswap_debugfs` found it).
pub fn missing_line(debugfs: Option<bool>) -> Option<&'static str> {
    match debugfs {
        Some(true) => None,
        None => Some("zswap: this kernel has no zswap, so no zswap counters"),
        Some(false) => Some(
            "zswap: debugfs is not mounted at /sys/kernel/debug, so zswap's own \
             counters (stored_pages, written_back_pages, reject_*) are not read; \
             vmstat's zswpout and zswpin are",
        ),
    }
}

/// The line a report prints where zswap stored pages (vmstat's zswpout)
/// yet no debugfs counter moved between a sample's two reads.
pub const LEVELS_LINE: &str = "zswap: no /sys/kernel/debug/zswap counter moved \
     between the samples' reads though zswap stored pages (vmstat's \
     zswpout): stored_pages and pool_total_size are levels, and pages freed \
     before a sample's last read (its tasks' exit) leave them where they were";

#[cfg(test)]
mod tests {
    use super::*;
    use crate::machine::memory::zswap_debugfs;

    #[test]
    fn counters_and_where_they_come_from() {
        let t = tempfile::tempdir().unwrap();
        assert_eq!(zswap_debugfs(t.path()), None);
        std::fs::create_dir_all(t.path().join("sys/module/zswap/parameters")).unwrap();
        assert_eq!(zswap_debugfs(t.path()), Some(false));
        assert!(read(t.path()).is_empty());
        // Linux 6.12 makes zswap's directory only once zswap is on: a
        // mounted debugfs is enough.
        let proc = t.path().join("proc/self");
        std::fs::create_dir_all(&proc).unwrap();
        let tracefs = "tracefs /sys/kernel/debug/tracing tracefs rw 0 0\n";
        std::fs::write(proc.join("mounts"), tracefs).unwrap();
        assert_eq!(zswap_debugfs(t.path()), Some(false));
        let debugfs = format!("{tracefs}debugfs /sys/kernel/debug debugfs rw 0 0\n");
        std::fs::write(proc.join("mounts"), debugfs).unwrap();
        assert_eq!(zswap_debugfs(t.path()), Some(true));
        std::fs::remove_file(proc.join("mounts")).unwrap();
        let d = t.path().join("sys/kernel/debug/zswap");
        std::fs::create_dir_all(&d).unwrap();
        std::fs::write(d.join("stored_pages"), "40\n").unwrap();
        std::fs::write(d.join("reject_compress_poor"), "2\n").unwrap();
        std::os::unix::fs::symlink(d.join("stored_pages"), d.join("link")).unwrap();
        assert_eq!(zswap_debugfs(t.path()), Some(true));
        let c = read(t.path());
        assert_eq!(c.get("zswap.stored_pages"), Some(&40));
        assert_eq!(c.get("zswap.reject_compress_poor"), Some(&2));
        assert!(!c.contains_key("zswap.link"));
        assert!(missing_line(Some(true)).is_none());
        assert!(missing_line(Some(false)).unwrap().contains("not mounted"));
        assert!(missing_line(None).unwrap().contains("no zswap"));
    }
}
