//! Checks the live snapshot against the sysfs and procfs files themselves.
//! Where the running system lacks a file, the check is skipped (outside
//! CI; under CI=true it fails).

use crate::common;

use std::collections::BTreeSet;
use std::path::Path;
use vmscale::machine::{self, Snapshot, cpulist};
use vmscale::report::sysinfo;

fn read(path: &str) -> Option<String> {
    std::fs::read_to_string(path)
        .ok()
        .map(|s| s.trim().to_string())
}

#[test]
fn online_cpus_match_sysfs() {
    let s = machine::live();
    let Some(online) = read("/sys/devices/system/cpu/online") else {
        return common::skip("no /sys/devices/system/cpu/online");
    };
    let online = cpulist::parse(&online).expect("online is a CPU list");
    assert_eq!(s.cpus.len(), online.len());
    assert_eq!(s.online_cpus(), online);
}

#[test]
fn caches_match_index_files() {
    let s = machine::live();
    let mut seen = BTreeSet::new();
    for cpu in s.online_cpus() {
        let dir = format!("/sys/devices/system/cpu/cpu{cpu}/cache");
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().to_string();
            if !name.starts_with("index") {
                continue;
            }
            let f = |file: &str| read(&format!("{dir}/{name}/{file}"));
            // The reader skips an index without a level and falls back to
            // "Unknown" and this CPU for the other identifying files.
            let Some(level) = f("level").and_then(|l| l.parse::<u32>().ok()) else {
                continue;
            };
            let kind = f("type").unwrap_or_else(|| "Unknown".into());
            let shared = f("shared_cpu_list")
                .and_then(|l| cpulist::parse(&l).ok())
                .filter(|l| !l.is_empty())
                .unwrap_or_else(|| vec![cpu]);
            let cache = s
                .caches
                .iter()
                .find(|c| c.level == level && c.kind == kind && c.shared_cpus == shared)
                .unwrap_or_else(|| panic!("no instance for {dir}/{name}"));
            let size = f("size").and_then(|t| machine::caches::parse_size(&t));
            assert_eq!(cache.size_bytes, size, "{dir}/{name}/size");
            let num = |file: &str| f(file).and_then(|t| t.parse::<u64>().ok());
            assert_eq!(cache.ways, num("ways_of_associativity"));
            assert_eq!(cache.line_size, num("coherency_line_size"));
            assert_eq!(cache.sets, num("number_of_sets"));
            seen.insert((level, kind, shared));
        }
    }
    assert_eq!(
        seen.len(),
        s.caches.len(),
        "one instance per distinct cache"
    );
    let total: usize = s.cache_levels().iter().map(|l| l.instances).sum();
    assert_eq!(total, s.caches.len());
}

#[test]
fn meminfo_matches() {
    let s = machine::live();
    let Some(meminfo) = read("/proc/meminfo") else {
        return common::skip("no /proc/meminfo");
    };
    let total = meminfo.lines().find_map(|l| {
        l.strip_prefix("MemTotal:")?
            .split_whitespace()
            .next()?
            .parse::<u64>()
            .ok()
    });
    assert_eq!(s.mem_total_kib, total);
    assert!(s.mem_total_kib.is_some());
}

#[test]
fn live_page_size_and_topology_are_sane() {
    let s = machine::live();
    assert!(s.page_size.is_some_and(u64::is_power_of_two));
    assert!(!s.cpus.is_empty());
    if let (Some(smt), false) = (s.smt_per_core(), s.cores().is_empty()) {
        assert!(smt >= 1);
        assert!(s.cores().len() <= s.cpus.len());
        assert!(s.packages().len() <= s.cores().len());
    }
    for n in &s.nodes {
        for &cpu in &n.cpus {
            if s.cpu(cpu).is_some() {
                assert_eq!(s.node_of(cpu), Some(n.id));
            }
        }
    }
    // The snapshot round-trips through JSON.
    let json = serde_json::to_string(&s).expect("serialise");
    let back: Snapshot = serde_json::from_str(&json).expect("deserialise");
    assert_eq!(back, s);
}

#[test]
fn text_has_labels_and_unknowns() {
    let live = sysinfo::text(&machine::live());
    for label in [
        "CPUs",
        "CPU model",
        "NUMA nodes",
        "Caches",
        "Pages",
        "THP",
        "Kernel",
        "Command line",
        "Sysctls",
        "Hypervisor",
        "Memory",
        "Page colours",
    ] {
        assert!(
            live.lines().any(|l| l.starts_with(label)),
            "missing {label}:\n{live}"
        );
    }
    let empty_root =
        std::env::temp_dir().join(format!("vmscale-live-empty-{}", std::process::id()));
    std::fs::create_dir_all(&empty_root).expect("mkdir");
    let empty = sysinfo::text(&Snapshot::read(Path::new(&empty_root)));
    assert!(empty.contains("unknown"), "{empty}");
    assert!(empty.contains("CPUs          unknown"), "{empty}");
    let _ = std::fs::remove_dir_all(&empty_root);
}
