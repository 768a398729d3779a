//! Who wrote a run, so a run whose process is gone can be told from one
//! still going: the pid, the process's start time (so a reused pid is not
//! mistaken for the writer), the kernel's boot id and the host name.

use std::sync::OnceLock;

use crate::machine::proc_stat::start_time;

/// The process that writes a run.
#[derive(Debug, Clone, PartialEq)]
pub struct Owner {
    pub pid: i64,
    /// Field 22 of /proc/PID/stat: clock ticks after boot.
    pub start: i64,
    pub boot_id: String,
    pub host: String,
}

fn read(path: &str) -> String {
    std::fs::read_to_string(path)
        .map(|s| s.trim().to_string())
        .unwrap_or_default()
}

/// This machine's host name.
pub fn host() -> String {
    read("/proc/sys/kernel/hostname")
}

/// This process.
pub fn me() -> &'static Owner {
    static ME: OnceLock<Owner> = OnceLock::new();
    ME.get_or_init(|| {
        let pid = i64::from(std::process::id());
        Owner {
            pid,
            start: start_time(pid).unwrap_or(0),
            boot_id: read("/proc/sys/kernel/random/boot_id"),
            host: host(),
        }
    })
}

/// True when a run recorded as written by `owner` can no longer be
/// written: its host is this one and it was booted since, or its process
/// is gone (or the pid now belongs to a later process). Runs of other
/// hosts, and runs stored without an owner, are never judged here.
pub fn gone(owner: &Owner) -> bool {
    let me = me();
    if owner.host != me.host || owner.boot_id.is_empty() {
        return false;
    }
    if owner.boot_id != me.boot_id {
        return true;
    }
    start_time(owner.pid) != Some(owner.start)
}

/// A fresh random identity for a run (the kernel's UUID generator).
pub fn new_uuid() -> String {
    let u = read("/proc/sys/kernel/random/uuid");
    if u.len() == 36 {
        return u;
    }
    // No procfs: the time and pid are unique enough on one machine.
    let t = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    format!("{:x}-{:x}-{}", t.as_secs(), t.subsec_nanos(), me().pid)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_process_is_alive_and_a_missing_one_is_gone() {
        let me = me().clone();
        assert!(me.start > 0);
        assert!(!gone(&me));
        // Same pid, another start time: a reused pid.
        assert!(gone(&Owner {
            start: me.start + 1,
            ..me.clone()
        }));
        // Another boot of this host.
        assert!(gone(&Owner {
            boot_id: "another-boot".into(),
            ..me.clone()
        }));
        // Another host is not judged.
        assert!(!gone(&Owner {
            host: format!("{}-elsewhere", me.host),
            pid: i64::from(i32::MAX),
            ..me.clone()
        }));
    }

    #[test]
    fn uuids_differ() {
        assert_ne!(new_uuid(), new_uuid());
    }
}
