//! How much memory the kernel has to give: MemTotal of /proc/meminfo and of
//! each NUMA node. Memory the kernel initialises lazily after boot, or that
//! is hot-added (virtio-mem, memory blocks brought online), makes the
//! nodes' totals grow while runs fault; read around each sample (outside
//! its timed section) and by `doctor`.

use std::path::Path;

use crate::machine::under;

/// The totals at one moment, in KiB.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct MemorySize {
    /// /proc/meminfo MemTotal.
    pub total_kib: Option<u64>,
    /// The sum of every node's MemTotal (/sys/devices/system/node/node*/meminfo).
    pub nodes_kib: u64,
    /// Nodes read.
    pub nodes: usize,
}

/// The kB value of `key` in a meminfo text ("MemTotal:" or "Node 0 MemTotal:").
fn kib(text: &str, key: &str) -> Option<u64> {
    text.lines().find_map(|l| {
        let (name, value) = l.split_once(':')?;
        name.ends_with(key)
            .then(|| value.split_whitespace().next()?.parse().ok())
            .flatten()
    })
}

/// Reads the totals under `root`.
pub fn read(root: &Path) -> MemorySize {
    let total_kib = std::fs::read_to_string(under(root, "/proc/meminfo"))
        .ok()
        .and_then(|t| kib(&t, "MemTotal"));
    let mut size = MemorySize {
        total_kib,
        ..MemorySize::default()
    };
    let Ok(dir) = std::fs::read_dir(under(root, "/sys/devices/system/node")) else {
        return size;
    };
    for e in dir.flatten() {
        let name = e.file_name().to_string_lossy().to_string();
        if name
            .strip_prefix("node")
            .is_none_or(|n| n.parse::<u32>().is_err())
        {
            continue;
        }
        let text = std::fs::read_to_string(e.path().join("meminfo")).unwrap_or_default();
        if let Some(k) = kib(&text, "MemTotal") {
            size.nodes_kib += k;
            size.nodes += 1;
        }
    }
    size
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn totals_of_the_machine_and_its_nodes() {
        let root = crate::scratch::at("");
        let node = |n: u32, kib: u64| {
            let d = root.join(format!("sys/devices/system/node/node{n}"));
            std::fs::create_dir_all(&d).unwrap();
            let text = format!("Node {n} MemTotal:       {kib} kB\nNode {n} MemFree: 1 kB\n");
            std::fs::write(d.join("meminfo"), text).unwrap();
        };
        std::fs::create_dir_all(root.join("proc")).unwrap();
        std::fs::write(
            root.join("proc/meminfo"),
            "MemTotal:       24684092 kB\nMemFree: 5 kB\n",
        )
        .unwrap();
        node(0, 6_000_000);
        node(1, 2_000_000);
        std::fs::create_dir_all(root.join("sys/devices/system/node/possible")).unwrap();
        let s = read(&root);
        assert_eq!(s.total_kib, Some(24_684_092));
        assert_eq!((s.nodes_kib, s.nodes), (8_000_000, 2));
        assert_eq!(read(&root.join("gone")), MemorySize::default());
    }
}
