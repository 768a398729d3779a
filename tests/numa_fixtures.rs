//! Multi-node code paths against synthetic trees: per-node sizing and
//! first-touch placement on the fake 2-socket, 4+1-node machine, and
//! locality from a synthetic /proc/PID/numa_maps and task stat files.

use std::collections::BTreeMap;

use crate::common::fixture;

use vmscale::machine::Snapshot;
use vmscale::monitor::{numa_maps, thread_locality};
use vmscale::workload::numa::{self, Pattern};

#[test]
fn every_pattern_plans_on_four_nodes_and_skips_the_memory_only_node() {
    let m = Snapshot::read(&fixture("fake-2s4n"));
    for p in [
        Pattern::Numa01,
        Pattern::Numa01Threadlocal,
        Pattern::Numa02,
        Pattern::Numa02Smt,
    ] {
        let c = numa::plan(p, None, None, 1000, 0.9, &m).unwrap();
        assert_eq!(c.first_node, 0, "{}", p.name());
        assert_eq!(c.first_cpus, vec![0, 1, 8, 9]);
        assert!(!c.nodes_with_cpus.contains(&4), "node 4 has no CPUs");
        assert!(c.nodes_with_memory.contains(&4), "node 4 has memory");
        assert_eq!(
            c.size,
            (p.original_size() / numa::DEFAULT_SIZE_DIVISOR).min(8 << 30)
        );
        let share = if p == Pattern::Numa01 {
            c.size
        } else {
            c.size / c.threads as u64
        };
        assert_eq!(c.loops, p.default_loops(share));
        assert!(c.loops <= p.original_loops());
    }
}

#[test]
fn size_is_capped_by_the_first_nodes_memory() {
    let mut m = Snapshot::read(&fixture("fake-2s4n"));
    m.nodes[0].mem_total_kib = Some(1 << 20); // 1 GiB on node 0
    let c = numa::plan(Pattern::Numa01, None, None, 1000, 0.9, &m).unwrap();
    assert_eq!(
        c.size,
        256 << 20,
        "half of node 0 for both processes' regions together"
    );
}

#[test]
fn locality_sampling_reads_pages_per_node_and_thread_placement() {
    let m = Snapshot::read(&fixture("fake-2s4n"));
    let node_of: BTreeMap<usize, usize> = m
        .cpus
        .iter()
        .filter_map(|c| Some((c.id, c.node?)))
        .collect();
    let root = fixture("numa-maps");
    let pages = numa_maps::read_pages(&root, 4242, 0x7f00_0000_1000).unwrap();
    assert_eq!(pages, BTreeMap::from([(0, 512), (2, 192), (4, 64)]));
    // Threads last ran on CPU 1 (node 0) and CPU 4 (node 2).
    let node = |tid| thread_locality::thread_node(&root, 4242, tid, &node_of);
    assert_eq!(
        (node(4242), node(4243), node(4244)),
        (Some(0), Some(2), None)
    );
    // Per thread: both work on the whole region, whose pages move_pages
    // would report as numa_maps counts them (and 32 not present).
    let plan = thread_locality::ProcessPlan::new(
        4242,
        &[
            (0, 0x7f00_0000_1000, 800 * 4096),
            (1, 0x7f00_0000_1000, 800 * 4096),
        ],
        4096,
    );
    assert_eq!(plan.addrs.len(), 800);
    let status: Vec<i32> = [(0, 512), (2, 192), (4, 64), (-libc::ENOENT, 32)]
        .iter()
        .flat_map(|&(n, k)| std::iter::repeat_n(n, k))
        .collect();
    let tids = [4242, 4243];
    let l = thread_locality::process_localities(&plan, &status, |g| node(tids[g]));
    assert_eq!(l, vec![512.0 / 768.0, 192.0 / 768.0]);
    assert_eq!(
        thread_locality::worst_and_mean(&l),
        Some((192.0 / 768.0, 352.0 / 768.0))
    );
}
