//! The machine as sysfs and procfs describe it at run time: CPUs, caches,
//! NUMA nodes, page sizes, kernel facts. Every reader takes a root path so
//! tests can point it at a fake tree; an absent file becomes `None`
//! ("unknown"), never an error. `VMSCALE_MACHINE_ROOT` names another
//! root (a directory holding `sys/` and `proc/`, as the fixtures do) for
//! everything that reads "the machine": `sysinfo`, `pcp`, `doctor` and
//! `run --dry-run` then describe that tree (docs/scale.md).

pub mod caches;
pub mod cpulist;
pub mod guest;
pub mod kernel;
pub mod memory;
pub mod proc_stat;
pub mod release;
pub mod snapshot;
pub mod topology;

pub use caches::{Cache, CacheLevel};
pub use snapshot::Snapshot;
pub use topology::{CoreKey, Cpu, Node};

use std::path::{Path, PathBuf};

/// Joins an absolute procfs/sysfs path onto `root` ("/" for the live machine).
pub fn under(root: &Path, abs: &str) -> PathBuf {
    root.join(abs.trim_start_matches('/'))
}

/// The N of every PREFIXN entry of the directory `abs` under `root`,
/// ascending (none when it cannot be listed).
pub fn numbered<N: std::str::FromStr + Ord>(root: &Path, abs: &str, prefix: &str) -> Vec<N> {
    let mut ns: Vec<N> = std::fs::read_dir(under(root, abs))
        .map(|entries| {
            entries
                .filter_map(|e| e.ok())
                .filter_map(|e| e.file_name().to_str()?.strip_prefix(prefix)?.parse().ok())
                .collect()
        })
        .unwrap_or_default();
    ns.sort_unstable();
    ns
}

/// Reads a small text file under `root`, trimmed; `None` if absent or unreadable.
pub fn read_trimmed(root: &Path, abs: &str) -> Option<String> {
    std::fs::read_to_string(under(root, abs))
        .ok()
        .map(|s| s.trim().to_string())
}

/// Reads a file and parses it as a number; `None` if absent or not a number.
pub fn read_num<T: std::str::FromStr>(root: &Path, abs: &str) -> Option<T> {
    read_trimmed(root, abs).and_then(|s| s.parse().ok())
}

/// The variable that points vmscale at another machine's sysfs/procfs tree.
pub const ROOT_ENV: &str = "VMSCALE_MACHINE_ROOT";

/// The root the machine is read under: `VMSCALE_MACHINE_ROOT` when set
/// and not empty, else "/".
pub fn root() -> PathBuf {
    match std::env::var_os(ROOT_ENV) {
        Some(v) if !v.is_empty() => PathBuf::from(v),
        _ => PathBuf::from("/"),
    }
}

/// `Some(root)` when `VMSCALE_MACHINE_ROOT` points away from "/": the
/// machine read is not the one vmscale runs on, so nothing may be measured.
pub fn other_root() -> Option<PathBuf> {
    let r = root();
    (r != Path::new("/")).then_some(r)
}

/// Checks `VMSCALE_MACHINE_ROOT`: unset, "/", or a directory holding
/// `sys/` or `proc/`; the message names the problem and the fix.
pub fn check_root() -> crate::error::Result<()> {
    let Some(r) = other_root() else {
        return Ok(());
    };
    if !["sys", "proc"].iter().any(|d| r.join(d).is_dir()) {
        return Err(crate::error::Error::Input(format!(
            "{ROOT_ENV}={} holds no sys/ or proc/ directory: point it at a machine \
             tree (such as tests/fixtures/fake-2s4n) or unset it",
            r.display()
        )));
    }
    Ok(())
}

/// The machine under [`root`]: the live one unless `VMSCALE_MACHINE_ROOT`
/// says otherwise.
pub fn live() -> Snapshot {
    Snapshot::read(&root())
}
