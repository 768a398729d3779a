//! CPU and NUMA topology: online CPUs, their packages, cores, SMT siblings
//! and nodes, the nodes' memory, and the CPU model name.

use super::{cpulist, read_num, read_trimmed, under};
use serde::{Deserialize, Serialize};
use std::path::Path;

/// One online CPU and where it sits.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Cpu {
    pub id: usize,
    pub package: Option<usize>,
    /// core_id: unique only within its die (and cluster) on some kernels,
    /// so a core is named by [`Cpu::core_key`].
    pub core: Option<usize>,
    pub node: Option<usize>,
    /// SMT siblings including this CPU (thread_siblings_list).
    pub siblings: Vec<usize>,
    /// die_id (x86 since Linux 5.2); `None` where the kernel has no dies.
    #[serde(default)]
    pub die: Option<usize>,
    /// cluster_id (Linux 5.16+: CPUs sharing an L2 on x86, a cluster on Arm).
    #[serde(default)]
    pub cluster: Option<usize>,
}

impl Cpu {
    /// The core this CPU is a thread of, unique on the machine: Linux's
    /// core_id repeats per die (x86 before 6.9) and per cluster (Arm), so
    /// it is qualified by package, die and cluster. `None` without a
    /// package or core id.
    pub fn core_key(&self) -> Option<CoreKey> {
        Some((self.package?, self.die, self.cluster, self.core?))
    }
}

/// (package, die, cluster, core_id): see [`Cpu::core_key`].
pub type CoreKey = (usize, Option<usize>, Option<usize>, usize);

/// One NUMA node.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Node {
    pub id: usize,
    pub cpus: Vec<usize>,
    pub mem_total_kib: Option<u64>,
    pub mem_free_kib: Option<u64>,
    /// Distance to every node in `nodes` order (nodeN/distance); empty if
    /// unknown.
    #[serde(default)]
    pub distances: Vec<u32>,
}

/// Reads a CPU-list file; `None` if absent or unparsable.
pub fn read_cpulist(root: &Path, abs: &str) -> Option<Vec<usize>> {
    read_trimmed(root, abs).and_then(|s| cpulist::parse(&s).ok())
}

/// Online CPU ids from /sys/devices/system/cpu/online (empty if unknown).
pub fn online_cpus(root: &Path) -> Vec<usize> {
    read_cpulist(root, "/sys/devices/system/cpu/online").unwrap_or_default()
}

/// Reads one CPU's topology; `nodes` gives its node.
pub fn read_cpu(root: &Path, id: usize, nodes: &[Node]) -> Cpu {
    let topo = format!("/sys/devices/system/cpu/cpu{id}/topology");
    Cpu {
        id,
        package: read_num(root, &format!("{topo}/physical_package_id")),
        core: read_num(root, &format!("{topo}/core_id")),
        node: nodes.iter().find(|n| n.cpus.contains(&id)).map(|n| n.id),
        siblings: read_cpulist(root, &format!("{topo}/thread_siblings_list"))
            .unwrap_or_else(|| vec![id]),
        // -1 (no die or cluster) fails to parse and becomes None.
        die: read_num(root, &format!("{topo}/die_id")),
        cluster: read_num(root, &format!("{topo}/cluster_id")),
    }
}

/// Online NUMA nodes, including memory-only nodes (empty `cpus`). Without
/// a node `online` file, the nodeN directories that exist.
pub fn read_nodes(root: &Path) -> Vec<Node> {
    let online =
        read_cpulist(root, "/sys/devices/system/node/online").unwrap_or_else(|| node_dirs(root));
    online
        .into_iter()
        .map(|id| {
            let dir = format!("/sys/devices/system/node/node{id}");
            let meminfo = super::memory::read_node_meminfo(root, id);
            Node {
                id,
                cpus: read_cpulist(root, &format!("{dir}/cpulist")).unwrap_or_default(),
                mem_total_kib: meminfo.get("MemTotal").copied(),
                mem_free_kib: meminfo.get("MemFree").copied(),
                distances: read_trimmed(root, &format!("{dir}/distance"))
                    .and_then(|d| d.split_whitespace().map(|v| v.parse().ok()).collect())
                    .unwrap_or_default(),
            }
        })
        .collect()
}

/// The N of every nodeN directory under /sys/devices/system/node, ascending.
fn node_dirs(root: &Path) -> Vec<usize> {
    super::numbered(root, "/sys/devices/system/node", "node")
}

/// The CPU model from /proc/cpuinfo ("model name" on x86, with the names
/// other architectures use as fallbacks).
pub fn read_cpu_model(root: &Path) -> Option<String> {
    let text = std::fs::read_to_string(under(root, "/proc/cpuinfo")).ok()?;
    cpu_model_from(&text)
}

fn cpu_model_from(cpuinfo: &str) -> Option<String> {
    ["model name", "Processor", "cpu model", "cpu"]
        .iter()
        .find_map(|key| {
            cpuinfo.lines().find_map(|l| {
                let (k, v) = l.split_once(':')?;
                (k.trim() == *key && !v.trim().is_empty()).then(|| v.trim().to_string())
            })
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_model_prefers_model_name() {
        let x86 = "processor\t: 0\ncpu family\t: 6\nmodel name\t: Xeon X\n";
        assert_eq!(cpu_model_from(x86).as_deref(), Some("Xeon X"));
        let ppc = "processor\t: 0\ncpu\t\t: POWER9 (raw)\n";
        assert_eq!(cpu_model_from(ppc).as_deref(), Some("POWER9 (raw)"));
        assert_eq!(cpu_model_from("processor : 0\n"), None);
    }
}
