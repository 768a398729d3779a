//! The machine snapshot: everything vmscale records about the machine a run
//! was taken on, read from sysfs and procfs under a root path.

use super::caches::{self, Cache, CacheLevel};
use super::topology::{self, CoreKey, Cpu, Node};
use super::{kernel, memory};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

pub use super::kernel::SYSCTLS;
pub use super::memory::read_meminfo;

/// The snapshot stored with every run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct Snapshot {
    pub cpu_model: Option<String>,
    pub cpus: Vec<Cpu>,
    pub nodes: Vec<Node>,
    pub caches: Vec<Cache>,
    /// Base page size in bytes.
    pub page_size: Option<u64>,
    /// hugetlb page sizes in bytes, ascending.
    pub huge_page_sizes: Vec<u64>,
    /// The PMD-sized transparent huge page in bytes.
    pub thp_pmd_size: Option<u64>,
    /// Selected THP modes ("always", "madvise", "never", ...).
    pub thp_enabled: Option<String>,
    pub thp_defrag: Option<String>,
    /// Sizes ("64kB") with per-size THP counters (hugepages-<N>kB/stats/,
    /// Linux 6.10+); empty on a kernel without them.
    #[serde(default)]
    pub thp_stats_sizes: Vec<String>,
    /// zswap's debugfs counters readable: `None` without zswap,
    /// `Some(false)` where debugfs is not mounted.
    #[serde(default)]
    pub zswap_debugfs: Option<bool>,
    pub kernel_release: Option<String>,
    pub kernel_cmdline: Option<String>,
    /// The VM sysctls that change results, by dotted name; `None` = unknown.
    pub sysctls: BTreeMap<String, Option<String>>,
    /// Hypervisor name or vendor ("present" if only its presence is known).
    pub hypervisor: Option<String>,
    /// `Some(false)`: bare metal per the CPU flags; `None`: unknown.
    pub hypervisor_present: Option<bool>,
    pub mem_total_kib: Option<u64>,
    pub mem_available_kib: Option<u64>,
    /// How `vmscale guest` booted this kernel (from its command line);
    /// absent on a machine it did not boot.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub guest: Option<super::guest::GuestInfo>,
}

#[cfg(test)]
impl Snapshot {
    /// A machine for tests: `nodes` nodes of `per_node` CPUs each, one
    /// thread a core, `per_package` CPUs a package; nothing else known.
    pub fn fake(nodes: usize, per_node: usize, per_package: usize) -> Snapshot {
        let cpu = |id| Cpu {
            id,
            package: Some(id / per_package),
            core: Some(id),
            node: Some(id / per_node),
            siblings: vec![id],
            die: None,
            cluster: None,
        };
        let node = |n| Node {
            id: n,
            cpus: (n * per_node..(n + 1) * per_node).collect(),
            mem_total_kib: None,
            mem_free_kib: None,
            distances: Vec::new(),
        };
        Snapshot {
            cpus: (0..nodes * per_node).map(cpu).collect(),
            nodes: (0..nodes).map(node).collect(),
            ..Default::default()
        }
    }
}

impl Snapshot {
    /// Reads the machine under `root` ("/" for the live machine). Absent
    /// files leave their fields `None` or empty; this never fails.
    pub fn read(root: &Path) -> Snapshot {
        let online = topology::online_cpus(root);
        let mut nodes = topology::read_nodes(root);
        // A node's cpulist may still name CPUs taken offline (it does on
        // some architectures); only online CPUs can run or be pinned to.
        for n in &mut nodes {
            n.cpus.retain(|c| online.binary_search(c).is_ok());
        }
        let cpus = online
            .iter()
            .map(|&id| topology::read_cpu(root, id, &nodes))
            .collect();
        let meminfo = memory::read_meminfo(root);
        let hypervisor = kernel::hypervisor(root);
        let kernel_cmdline = kernel::cmdline(root);
        Snapshot {
            guest: kernel_cmdline
                .as_deref()
                .and_then(super::guest::GuestInfo::from_cmdline)
                .map(|g| super::guest::GuestInfo {
                    static_binary: cfg!(target_feature = "crt-static"),
                    ..g
                }),
            cpu_model: topology::read_cpu_model(root),
            cpus,
            nodes,
            caches: caches::read_caches(root, &online),
            page_size: memory::page_size(root),
            huge_page_sizes: memory::huge_page_sizes(root),
            thp_pmd_size: memory::thp_pmd_size(root),
            thp_enabled: memory::thp_setting(root, "enabled"),
            thp_defrag: memory::thp_setting(root, "defrag"),
            thp_stats_sizes: memory::thp_stats_sizes(root),
            zswap_debugfs: memory::zswap_debugfs(root),
            kernel_release: kernel::release(root),
            kernel_cmdline,
            sysctls: kernel::sysctls(root),
            hypervisor: hypervisor.name,
            hypervisor_present: hypervisor.present,
            mem_total_kib: meminfo.get("MemTotal").copied(),
            mem_available_kib: meminfo.get("MemAvailable").copied(),
        }
    }

    /// Online CPU ids in ascending order.
    pub fn online_cpus(&self) -> Vec<usize> {
        self.cpus.iter().map(|c| c.id).collect()
    }

    /// One online CPU by id.
    pub fn cpu(&self, id: usize) -> Option<&Cpu> {
        self.cpus.iter().find(|c| c.id == id)
    }

    /// The NUMA node of an online CPU.
    pub fn node_of(&self, cpu: usize) -> Option<usize> {
        self.cpu(cpu)?.node
    }

    /// Distinct package ids of the online CPUs, ascending.
    pub fn packages(&self) -> Vec<usize> {
        let set: BTreeSet<usize> = self.cpus.iter().filter_map(|c| c.package).collect();
        set.into_iter().collect()
    }

    /// Distinct cores of the online CPUs (see [`Cpu::core_key`]), ascending.
    pub fn cores(&self) -> Vec<CoreKey> {
        let set: BTreeSet<CoreKey> = self.cpus.iter().filter_map(Cpu::core_key).collect();
        set.into_iter().collect()
    }

    /// Distinct (package, die) pairs of the online CPUs; empty when the
    /// kernel reports no dies.
    pub fn dies(&self) -> Vec<(usize, usize)> {
        let set: BTreeSet<(usize, usize)> = self
            .cpus
            .iter()
            .filter_map(|c| Some((c.package?, c.die?)))
            .collect();
        set.into_iter().collect()
    }

    /// Online hardware threads per core: the most any core has (`None` if
    /// the topology is unknown).
    pub fn smt_per_core(&self) -> Option<usize> {
        let mut per_core: BTreeMap<CoreKey, usize> = BTreeMap::new();
        for key in self.cpus.iter().filter_map(Cpu::core_key) {
            *per_core.entry(key).or_default() += 1;
        }
        per_core.into_values().max()
    }

    /// The caches summarised per (level, kind), in level order.
    pub fn cache_levels(&self) -> Vec<CacheLevel> {
        caches::levels(&self.caches)
    }

    /// The last-level cache: an instance of the highest-level unified (else
    /// data) cache.
    pub fn llc(&self) -> Option<&Cache> {
        caches::last_level(&self.caches)
    }

    /// An instance of the unified (else data) level-2 cache.
    pub fn l2(&self) -> Option<&Cache> {
        caches::data_cache_at(&self.caches, 2)
    }

    /// Page colours of the LLC: size / (ways x page size).
    pub fn llc_colours(&self) -> Option<u64> {
        caches::colours(self.llc()?, self.page_size)
    }

    /// Page colours of the L2: size / (ways x page size).
    pub fn l2_colours(&self) -> Option<u64> {
        caches::colours(self.l2()?, self.page_size)
    }
}
