//! Reads the sysfs topology a real Linux 6.1 guest showed under QEMU
//! (tests/fixtures/qemu-2s2d2c2t-3n, copied out by bench/numa-vm.sh from
//! `-smp sockets=2,dies=2,cores=2,threads=2`, two CPU nodes, a memory-only
//! node 2 and asymmetric distances; `topology.given` is what QEMU was told)
//! and checks the snapshot, sysinfo and `--pin` plans against it.

use crate::common;

use std::path::{Path, PathBuf};
use vmscale::exec::pin::{Pin, plan};
use vmscale::machine::Snapshot;
use vmscale::report::sysinfo;

const TREE: &str = "qemu-2s2d2c2t-3n";

fn guest() -> Snapshot {
    Snapshot::read(&common::fixture(TREE))
}

/// The distance rows QEMU was given ("distance 0: 10 20 40" lines).
fn given_distances() -> Vec<Vec<u32>> {
    let text = std::fs::read_to_string(common::fixture(TREE).join("topology.given")).unwrap();
    text.lines()
        .filter_map(|l| l.strip_prefix("distance "))
        .map(|l| {
            let (_, row) = l.split_once(": ").unwrap();
            row.split_whitespace().map(|v| v.parse().unwrap()).collect()
        })
        .collect()
}

fn order(pin: Pin, s: &Snapshot) -> Vec<usize> {
    plan(&pin, s.cpus.len(), s)
        .unwrap()
        .into_iter()
        .map(|c| c.unwrap())
        .collect()
}

#[test]
fn topology_is_what_qemu_was_given() {
    let s = guest();
    assert_eq!(s.cpus.len(), 16);
    assert_eq!(s.packages(), vec![0, 1]);
    assert_eq!(s.dies().len(), 4, "2 sockets x 2 dies");
    assert_eq!(s.cores().len(), 8, "2 x 2 x 2 cores");
    assert_eq!(s.smt_per_core(), Some(2));
    let ids: Vec<usize> = s.nodes.iter().map(|n| n.id).collect();
    assert_eq!(ids, vec![0, 1, 2]);
    assert_eq!(s.nodes[0].cpus, (0..8).collect::<Vec<_>>());
    assert_eq!(s.nodes[1].cpus, (8..16).collect::<Vec<_>>());
    assert!(s.nodes[2].cpus.is_empty(), "node 2 is memory-only");
    for n in &s.nodes {
        // 256 MiB each; the kernel keeps some for itself.
        let kib = n.mem_total_kib.unwrap();
        assert!(
            (192 * 1024..=256 * 1024).contains(&kib),
            "node {}: {kib} KiB",
            n.id
        );
    }
    let distances: Vec<Vec<u32>> = s.nodes.iter().map(|n| n.distances.clone()).collect();
    assert_eq!(distances, given_distances());
    assert_ne!(distances[0][1], distances[1][0], "asymmetric as given");
}

#[test]
fn sysinfo_shows_dies_and_distances() {
    let text = sysinfo::text(&guest());
    assert!(
        text.contains("16 online, 8 cores, 2 threads/core, 2 packages, 4 dies"),
        "{text}"
    );
    assert!(text.contains("none (memory only)"), "{text}");
    for (node, row) in given_distances().iter().enumerate() {
        let cells: String = row.iter().map(|d| format!("{d:>5}")).collect();
        let line = format!("  {node:>4}  {cells}");
        assert!(
            text.lines().any(|l| l == line),
            "no row {line:?} in\n{text}"
        );
    }
    assert!(text.lines().all(|l| l.chars().count() <= 80));
}

#[test]
fn compact_fills_cores_and_dies_in_turn_and_spread_alternates_nodes() {
    let s = guest();
    // Siblings are (0,1), (2,3), ...; dies hold 4 CPUs each.
    assert_eq!(order(Pin::Compact, &s), (0..16).collect::<Vec<_>>());
    assert_eq!(
        order(Pin::Spread, &s),
        vec![0, 8, 2, 10, 4, 12, 6, 14, 1, 9, 3, 11, 5, 13, 7, 15]
    );
}

/// Copies the fixture to a temp dir, with core_id restarting at 0 in every
/// die (as kernels number cores of multi-die packages, e.g. x86 before 6.9).
fn tree_with_core_ids_per_die() -> PathBuf {
    let dir = std::env::temp_dir().join(format!("vmscale-qemu-tree-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    copy_dir(&common::fixture(TREE), &dir);
    for cpu in 0..16 {
        let core_in_die = (cpu / 2) % 2;
        let path = dir.join(format!("sys/devices/system/cpu/cpu{cpu}/topology/core_id"));
        std::fs::write(path, format!("{core_in_die}\n")).unwrap();
    }
    dir
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let target = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &target);
        } else {
            std::fs::copy(e.path(), target).unwrap();
        }
    }
}

#[test]
fn core_ids_repeating_per_die_still_name_eight_cores() {
    let dir = tree_with_core_ids_per_die();
    let s = Snapshot::read(&dir);
    let _ = std::fs::remove_dir_all(&dir);
    // (package, core_id) alone would give 2 x 2 = 4 cores of 4 threads.
    assert_eq!(s.cores().len(), 8);
    assert_eq!(s.smt_per_core(), Some(2));
    assert_eq!(order(Pin::Compact, &s), (0..16).collect::<Vec<_>>());
}
