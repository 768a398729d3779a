//! The machine snapshot: everything vmscale records about the machine a run
//! was taken on, read from sysfs and procfs under a root path.

use super::{cpulist, read_num, read_trimmed, under};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::Path;

/// One online CPU and where it sits.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Cpu {
    pub id: usize,
    pub package: Option<usize>,
    pub core: Option<usize>,
    pub node: Option<usize>,
    /// SMT siblings including this CPU (thread_siblings_list).
    pub siblings: Vec<usize>,
}

/// One NUMA node.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Node {
    pub id: usize,
    pub cpus: Vec<usize>,
    pub mem_total_kib: Option<u64>,
    pub mem_free_kib: Option<u64>,
}

/// One cache instance, de-duplicated across the CPUs that share it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Cache {
    pub level: u32,
    /// "Data", "Instruction" or "Unified".
    pub kind: String,
    pub size_bytes: Option<u64>,
    pub ways: Option<u64>,
    pub line_size: Option<u64>,
    pub sets: Option<u64>,
    pub shared_cpus: Vec<usize>,
}

/// The snapshot stored with every run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct Snapshot {
    pub cpu_model: Option<String>,
    pub cpus: Vec<Cpu>,
    pub nodes: Vec<Node>,
    pub caches: Vec<Cache>,
    pub page_size: Option<u64>,
    pub huge_page_sizes: Vec<u64>,
    pub thp_enabled: Option<String>,
    pub thp_defrag: Option<String>,
    pub kernel_release: Option<String>,
    pub kernel_cmdline: Option<String>,
    /// The VM sysctls that change results, by dotted name; `None` = unknown.
    pub sysctls: BTreeMap<String, Option<String>>,
    pub hypervisor: Option<String>,
    pub mem_total_kib: Option<u64>,
    pub mem_available_kib: Option<u64>,
}

/// Sysctls recorded in every snapshot, as dotted names.
pub const SYSCTLS: &[&str] = &[
    "kernel.numa_balancing",
    "vm.percpu_pagelist_high_fraction",
    "vm.overcommit_memory",
    "vm.zone_reclaim_mode",
    "vm.max_map_count",
];

impl Snapshot {
    /// Reads the machine under `root` ("/" for the live machine).
    pub fn read(root: &Path) -> Snapshot {
        let online = read_trimmed(root, "/sys/devices/system/cpu/online")
            .and_then(|s| cpulist::parse(&s).ok())
            .unwrap_or_default();
        let nodes = read_nodes(root);
        let cpus = online
            .iter()
            .map(|&id| read_cpu(root, id, &nodes))
            .collect();
        let meminfo = read_meminfo(root);
        Snapshot {
            cpu_model: read_cpu_model(root),
            cpus,
            nodes,
            caches: Vec::new(),
            page_size: None,
            huge_page_sizes: Vec::new(),
            thp_enabled: None,
            thp_defrag: None,
            kernel_release: read_trimmed(root, "/proc/sys/kernel/osrelease"),
            kernel_cmdline: read_trimmed(root, "/proc/cmdline"),
            sysctls: SYSCTLS
                .iter()
                .map(|name| {
                    let path = format!("/proc/sys/{}", name.replace('.', "/"));
                    (name.to_string(), read_trimmed(root, &path))
                })
                .collect(),
            hypervisor: None,
            mem_total_kib: meminfo.get("MemTotal").copied(),
            mem_available_kib: meminfo.get("MemAvailable").copied(),
        }
    }

    /// Online CPU ids in ascending order.
    pub fn online_cpus(&self) -> Vec<usize> {
        self.cpus.iter().map(|c| c.id).collect()
    }
}

fn read_cpu(root: &Path, id: usize, nodes: &[Node]) -> Cpu {
    let topo = format!("/sys/devices/system/cpu/cpu{id}/topology");
    Cpu {
        id,
        package: read_num(root, &format!("{topo}/physical_package_id")),
        core: read_num(root, &format!("{topo}/core_id")),
        node: nodes.iter().find(|n| n.cpus.contains(&id)).map(|n| n.id),
        siblings: read_trimmed(root, &format!("{topo}/thread_siblings_list"))
            .and_then(|s| cpulist::parse(&s).ok())
            .unwrap_or_else(|| vec![id]),
    }
}

fn read_nodes(root: &Path) -> Vec<Node> {
    let online = read_trimmed(root, "/sys/devices/system/node/online")
        .and_then(|s| cpulist::parse(&s).ok())
        .unwrap_or_default();
    online
        .into_iter()
        .map(|id| {
            let dir = format!("/sys/devices/system/node/node{id}");
            let meminfo =
                std::fs::read_to_string(under(root, &format!("{dir}/meminfo"))).unwrap_or_default();
            let field = |name: &str| {
                meminfo.lines().find_map(|l| {
                    let rest = l.split_once(&format!(" {name}:"))?.1;
                    rest.split_whitespace().next()?.parse().ok()
                })
            };
            Node {
                id,
                cpus: read_trimmed(root, &format!("{dir}/cpulist"))
                    .and_then(|s| cpulist::parse(&s).ok())
                    .unwrap_or_default(),
                mem_total_kib: field("MemTotal"),
                mem_free_kib: field("MemFree"),
            }
        })
        .collect()
}

/// /proc/meminfo as name -> kB.
pub fn read_meminfo(root: &Path) -> BTreeMap<String, u64> {
    std::fs::read_to_string(under(root, "/proc/meminfo"))
        .unwrap_or_default()
        .lines()
        .filter_map(|l| {
            let (name, rest) = l.split_once(':')?;
            Some((
                name.to_string(),
                rest.split_whitespace().next()?.parse().ok()?,
            ))
        })
        .collect()
}

fn read_cpu_model(root: &Path) -> Option<String> {
    std::fs::read_to_string(under(root, "/proc/cpuinfo"))
        .ok()?
        .lines()
        .find_map(|l| {
            let (k, v) = l.split_once(':')?;
            (k.trim() == "model name").then(|| v.trim().to_string())
        })
}
