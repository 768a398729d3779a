//! Reads the fake 2-socket, 4-node tree in tests/fixtures/fake-2s4n (made by
//! gen-fake-2s4n.sh), a 512-CPU 16-node tree made at test time, and empty
//! and partial trees, and checks what the snapshot says.

use crate::common;

use std::path::PathBuf;
use vmscale::machine::Snapshot;
use vmscale::report::sysinfo;

/// (level, kind, size, ways, instances) of one cache level.
type LevelRow<'a> = (u32, &'a str, Option<u64>, Option<u64>, usize);

fn fake() -> Snapshot {
    Snapshot::read(&common::fixture("fake-2s4n"))
}

/// A fresh empty directory under the system temp dir.
fn empty_dir(tag: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("vmscale-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("create temp dir");
    dir
}

#[test]
fn topology_counts() {
    let s = fake();
    assert_eq!(s.online_cpus(), (0..16).collect::<Vec<_>>());
    assert_eq!(s.packages(), vec![0, 1]);
    // Core ids repeat per package: 4 per package, 8 in all.
    assert_eq!(s.cores().len(), 8);
    assert_eq!(s.smt_per_core(), Some(2));
    let cpu9 = s.cpu(9).expect("cpu 9");
    assert_eq!((cpu9.package, cpu9.core), (Some(0), Some(1)));
    assert_eq!(cpu9.siblings, vec![1, 9]);
    assert!(s.cpu(16).is_none());
}

#[test]
fn nodes_including_memory_only() {
    let s = fake();
    let ids: Vec<usize> = s.nodes.iter().map(|n| n.id).collect();
    assert_eq!(ids, vec![0, 1, 2, 3, 4]);
    assert_eq!(s.nodes[0].cpus, vec![0, 1, 8, 9]);
    assert_eq!(s.nodes[3].cpus, vec![6, 7, 14, 15]);
    assert!(s.nodes[4].cpus.is_empty(), "node 4 is memory-only");
    assert_eq!(s.nodes[4].mem_total_kib, Some(64 << 20));
    assert_eq!(s.nodes[1].mem_total_kib, Some(16 << 20));
    assert_eq!(s.nodes[1].mem_free_kib, Some(15 << 20));
    assert_eq!(s.node_of(10), Some(1));
    assert_eq!(s.node_of(13), Some(2));
    assert_eq!(s.node_of(99), None);
    assert!(s.cpus.iter().all(|c| c.node.is_some_and(|n| n < 4)));
}

#[test]
fn cache_instances_and_levels() {
    let s = fake();
    // 8 cores x (L1d, L1i, L2) + 2 packages x L3.
    assert_eq!(s.caches.len(), 8 * 3 + 2);
    let levels = s.cache_levels();
    let summary: Vec<LevelRow> = levels
        .iter()
        .map(|l| {
            let f = &l.first;
            (f.level, f.kind.as_str(), f.size_bytes, f.ways, l.instances)
        })
        .collect();
    assert_eq!(
        summary,
        vec![
            (1, "Data", Some(32 << 10), Some(8), 8),
            (1, "Instruction", Some(32 << 10), Some(8), 8),
            (2, "Unified", Some(1 << 20), Some(16), 8),
            (3, "Unified", Some(16 << 20), Some(16), 2),
        ]
    );
    assert!(
        levels
            .iter()
            .all(|l| l.uniform && l.first.line_size == Some(64))
    );
    assert_eq!(levels[2].first.sets, Some(1024));
    assert_eq!(levels[3].first.shared_cpus, vec![0, 1, 2, 3, 8, 9, 10, 11]);
    let l3: Vec<&Vec<usize>> = s
        .caches
        .iter()
        .filter(|c| c.level == 3)
        .map(|c| &c.shared_cpus)
        .collect();
    assert_eq!(l3[1], &vec![4, 5, 6, 7, 12, 13, 14, 15]);
}

#[test]
fn llc_and_page_colours() {
    let s = fake();
    assert_eq!(s.page_size, Some(4096));
    let llc = s.llc().expect("an LLC");
    assert_eq!((llc.level, llc.kind.as_str()), (3, "Unified"));
    assert_eq!(s.llc_colours(), Some(256)); // 16M / (16 x 4K)
    assert_eq!(s.l2().map(|c| c.level), Some(2));
    assert_eq!(s.l2_colours(), Some(16)); // 1M / (16 x 4K)
}

#[test]
fn memory_and_kernel_facts() {
    let s = fake();
    assert_eq!(s.huge_page_sizes, vec![2 << 20, 1 << 30]);
    assert_eq!(s.thp_pmd_size, Some(2 << 20));
    assert_eq!(s.thp_enabled.as_deref(), Some("madvise"));
    assert_eq!(s.thp_defrag.as_deref(), Some("defer+madvise"));
    assert_eq!(s.mem_total_kib, Some(128 << 20));
    assert_eq!(s.mem_available_kib, Some(125 << 20));
    assert_eq!(
        s.cpu_model.as_deref(),
        Some("Fake Xeon(R) Gold 1234 @ 2.00GHz")
    );
    assert_eq!(s.kernel_release.as_deref(), Some("6.8.0-fake"));
    assert!(
        s.kernel_cmdline
            .as_deref()
            .is_some_and(|c| c.contains("transparent_hugepage=madvise"))
    );
    assert_eq!(s.sysctls["kernel.numa_balancing"].as_deref(), Some("1"));
    assert_eq!(s.sysctls["vm.max_map_count"].as_deref(), Some("65530"));
    assert_eq!(s.sysctls["vm.percpu_pagelist_high_fraction"], None);
    // The CPU flags lack "hypervisor": known bare metal, not unknown.
    assert_eq!(
        (s.hypervisor.as_deref(), s.hypervisor_present),
        (None, Some(false))
    );
}

#[test]
fn text_report_of_fake_tree() {
    let t = sysinfo::text(&fake());
    for want in [
        "16 online, 8 cores, 2 threads/core, 2 packages",
        "none (memory only)",
        "0-3,8-11",
        "16M",
        "base 4K; hugetlb 2M, 1G; THP PMD 2M",
        "enabled madvise, defrag defer+madvise",
        "6.8.0-fake",
        "vm.percpu_pagelist_high_fraction = unknown",
        "Hypervisor    none",
        "128.0 GiB total",
        "LLC (L3) 256, L2 16",
    ] {
        assert!(t.contains(want), "missing {want:?} in:\n{t}");
    }
    assert!(t.lines().all(|l| l.len() <= 80), "{t}");
}

#[test]
fn empty_tree_is_all_unknown() {
    let dir = empty_dir("empty");
    let s = Snapshot::read(&dir);
    assert!(s.cpus.is_empty() && s.nodes.is_empty() && s.caches.is_empty());
    assert_eq!(s.page_size, None);
    assert!(s.huge_page_sizes.is_empty());
    assert_eq!(s.thp_pmd_size, None);
    assert_eq!((s.thp_enabled.clone(), s.thp_defrag.clone()), (None, None));
    assert_eq!(
        (s.kernel_release.clone(), s.kernel_cmdline.clone()),
        (None, None)
    );
    assert!(s.sysctls.values().all(Option::is_none));
    assert_eq!((s.hypervisor.clone(), s.hypervisor_present), (None, None));
    assert_eq!((s.mem_total_kib, s.mem_available_kib), (None, None));
    assert_eq!(s.cpu_model, None);
    assert!(s.packages().is_empty() && s.cores().is_empty());
    assert_eq!(s.smt_per_core(), None);
    assert!(s.llc().is_none());
    assert_eq!((s.llc_colours(), s.l2_colours()), (None, None));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn partial_tree_keeps_what_is_there() {
    // Online CPUs but no topology, caches or nodes: CPUs are listed, the
    // rest is unknown.
    let dir = empty_dir("partial");
    let cpu = dir.join("sys/devices/system/cpu");
    std::fs::create_dir_all(cpu.join("cpu1/cache/index0")).expect("mkdir");
    std::fs::write(cpu.join("online"), "0-1\n").expect("write");
    // A cache index with a level and nothing else.
    std::fs::write(cpu.join("cpu1/cache/index0/level"), "2\n").expect("write");
    let s = Snapshot::read(&dir);
    assert_eq!(s.online_cpus(), vec![0, 1]);
    assert!(
        s.cpus
            .iter()
            .all(|c| c.package.is_none() && c.node.is_none())
    );
    assert!(s.cores().is_empty());
    assert_eq!(s.caches.len(), 1);
    assert_eq!(s.caches[0].shared_cpus, vec![1]);
    assert_eq!(s.caches[0].size_bytes, None);
    assert_eq!(s.l2_colours(), None);
    let t = sysinfo::text(&s);
    assert!(t.contains("2 online, unknown cores"), "{t}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Writes `text` to `root/rel`, creating directories.
fn put(root: &std::path::Path, rel: &str, text: &str) {
    let p = root.join(rel);
    std::fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
    std::fs::write(p, format!("{text}\n")).expect("write");
}

/// A 512-CPU, 16-node tree, made at test time: 2 packages x 4 nodes x 32
/// cores x 2 threads (CPU c and c+256 are siblings), nodes 8-15 memory only
/// (as HBM in flat mode). CPUs 5 and 300 are offline: they have no topology
/// or cache directories and, as on some architectures, node 0 and node 1
/// still list them. Node 15 has no meminfo; CPU 511 has no cache directory.
fn big_tree() -> PathBuf {
    let root = empty_dir("big-512");
    let offline = [5usize, 300];
    let online: Vec<usize> = (0..512).filter(|c| !offline.contains(c)).collect();
    let cpu = "sys/devices/system/cpu";
    put(
        &root,
        &format!("{cpu}/online"),
        &vmscale::machine::cpulist::format(&online),
    );
    put(&root, &format!("{cpu}/possible"), "0-511");
    // Core k (0..256) has threads k and k+256; node = k / 32; package = k / 128.
    let threads = |k: usize| [k, k + 256];
    for &c in &online {
        let k = c % 256;
        let t = format!("{cpu}/cpu{c}/topology");
        put(
            &root,
            &format!("{t}/physical_package_id"),
            &(k / 128).to_string(),
        );
        put(&root, &format!("{t}/core_id"), &(k % 128).to_string());
        let sib: Vec<usize> = threads(k)
            .into_iter()
            .filter(|s| !offline.contains(s))
            .collect();
        put(
            &root,
            &format!("{t}/thread_siblings_list"),
            &vmscale::machine::cpulist::format(&sib),
        );
        if c == 511 {
            continue;
        }
        let pkg: Vec<usize> = online
            .iter()
            .copied()
            .filter(|&o| (o % 256) / 128 == k / 128)
            .collect();
        for (i, (level, kind, size, ways, shared)) in [
            (1, "Data", "48K", 12, sib.clone()),
            (3, "Unified", "105M", 15, pkg),
        ]
        .into_iter()
        .enumerate()
        {
            let d = format!("{cpu}/cpu{c}/cache/index{i}");
            put(&root, &format!("{d}/level"), &level.to_string());
            put(&root, &format!("{d}/type"), kind);
            put(&root, &format!("{d}/size"), size);
            put(
                &root,
                &format!("{d}/ways_of_associativity"),
                &ways.to_string(),
            );
            put(&root, &format!("{d}/coherency_line_size"), "64");
            put(
                &root,
                &format!("{d}/shared_cpu_list"),
                &vmscale::machine::cpulist::format(&shared),
            );
        }
    }
    put(&root, "proc/self/smaps", "KernelPageSize:        4 kB");
    let node = "sys/devices/system/node";
    put(&root, &format!("{node}/online"), "0-15");
    for n in 0..16 {
        let cpus: Vec<usize> = if n < 8 {
            (n * 32..n * 32 + 32).flat_map(threads).collect()
        } else {
            Vec::new()
        };
        put(
            &root,
            &format!("{node}/node{n}/cpulist"),
            &vmscale::machine::cpulist::format(&cpus),
        );
        if n != 15 {
            put(
                &root,
                &format!("{node}/node{n}/meminfo"),
                &format!(
                    "Node {n} MemTotal:       67108864 kB\nNode {n} MemFree:        66060288 kB"
                ),
            );
        }
    }
    root
}

#[test]
fn big_machine_with_offline_cpus_and_memory_only_nodes() {
    let root = big_tree();
    let s = Snapshot::read(&root);
    assert_eq!(s.cpus.len(), 510);
    assert!(s.cpu(5).is_none() && s.cpu(300).is_none());
    assert_eq!(s.packages(), vec![0, 1]);
    assert_eq!(
        s.cores().len(),
        256,
        "a core with one thread offline still counts"
    );
    assert_eq!(s.smt_per_core(), Some(2));
    assert_eq!(s.nodes.len(), 16);
    // Nodes list online CPUs only, and every online CPU is in one node.
    let in_nodes: usize = s.nodes.iter().map(|n| n.cpus.len()).sum();
    assert_eq!(in_nodes, 510);
    assert!(!s.nodes[0].cpus.contains(&5) && !s.nodes[1].cpus.contains(&300));
    assert_eq!(s.nodes[0].cpus.len(), 63);
    assert!(s.nodes[8..].iter().all(|n| n.cpus.is_empty()));
    assert_eq!(s.nodes[14].mem_total_kib, Some(64 << 20));
    assert_eq!(
        s.nodes[15].mem_total_kib, None,
        "missing meminfo is unknown"
    );
    assert_eq!(s.node_of(261), Some(0));
    assert_eq!(s.node_of(511), Some(7));
    assert!(s.cpus.iter().all(|c| c.node.is_some()));
    // CPU 5 offline: its sibling 261 is a core of one.
    assert_eq!(s.cpu(261).map(|c| c.siblings.clone()), Some(vec![261]));
    // Two L3 instances (one per package) and 256 L1d; CPU 511's missing
    // cache directory loses nothing, its sibling 255 reports the same L1d.
    let levels = s.cache_levels();
    let l3 = levels.iter().find(|l| l.first.level == 3).expect("L3");
    assert_eq!((l3.instances, l3.first.size_bytes), (2, Some(105 << 20)));
    assert_eq!(
        levels
            .iter()
            .find(|l| l.first.level == 1)
            .map(|l| l.instances),
        Some(256)
    );
    assert_eq!(s.llc_colours(), Some((105 << 20) / (15 * 4096)));
    let t = sysinfo::text(&s);
    assert!(
        t.contains("510 online, 256 cores, 2 threads/core, 2 packages"),
        "{t}"
    );
    assert!(t.contains("NUMA nodes    16"), "{t}");
    assert_eq!(t.matches("none (memory only)").count(), 8, "{t}");
    assert!(t.lines().all(|l| l.len() <= 80), "{t}");
    let _ = std::fs::remove_dir_all(&root);
}

#[test]
fn nodes_without_an_online_file_come_from_the_node_directories() {
    let root = empty_dir("no-node-online");
    put(&root, "sys/devices/system/cpu/online", "0-1");
    put(&root, "sys/devices/system/node/node0/cpulist", "0-1");
    put(&root, "sys/devices/system/node/node2/cpulist", "");
    let s = Snapshot::read(&root);
    assert_eq!(s.nodes.iter().map(|n| n.id).collect::<Vec<_>>(), vec![0, 2]);
    assert_eq!(s.node_of(1), Some(0));
    let _ = std::fs::remove_dir_all(&root);
}
