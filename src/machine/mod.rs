//! The machine as sysfs and procfs describe it at run time: CPUs, caches,
//! NUMA nodes, page sizes, kernel facts. Every reader takes a root path so
//! tests can point it at a fake tree; an absent file becomes `None`
//! ("unknown"), never an error.

pub mod caches;
pub mod cpulist;
pub mod guest;
pub mod kernel;
pub mod memory;
pub mod release;
pub mod snapshot;
pub mod topology;

pub use caches::CacheLevel;
pub use snapshot::{Cache, Cpu, Node, Snapshot};

use std::path::{Path, PathBuf};

/// Joins an absolute procfs/sysfs path onto `root` ("/" for the live machine).
pub fn under(root: &Path, abs: &str) -> PathBuf {
    root.join(abs.trim_start_matches('/'))
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

/// The live machine.
pub fn live() -> Snapshot {
    Snapshot::read(Path::new("/"))
}
