//! NUMA for real: boots a 2-node QEMU guest with `vmscale guest` (Debian's
//! kernel, NUMA balancing built in), runs vmscale inside it, brings the
//! guest's store back into a private host store and checks what the guest
//! measured: the topology QEMU was given, the AutoNUMA counters with
//! numa_balancing 0 and 1, per-thread page locality over time, first touch
//! on the node, mmtests' cost on the real deltas, and pft spread over the
//! nodes.
//!
//! Needs QEMU and busybox-static (.ci/run installs them) and apt-get for
//! the kernel package (bench/guest-kernels.sh). Without them the test
//! fails under CI=true and says why it skipped elsewhere. The guest runs
//! under TCG, small sizes, a few minutes at most.

use crate::common;

use crate::common::show;
use serde_json::Value;

const MEM_PER_NODE_MIB: u64 = 256;

fn figure(sample: &Value, name: &str) -> f64 {
    common::fig(sample, name)
}

/// The one measured sample of the case whose knob numa_balancing is `v`.
fn case_with_balancing<'a>(run: &'a Value, v: &str) -> &'a Value {
    let case = run["cases"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["case"]["knobs"]["numa_balancing"] == v)
        .unwrap_or_else(|| panic!("no case with numa_balancing={v}"));
    let samples = case["samples"].as_array().unwrap();
    samples.iter().find(|s| s["warmup"] == false).unwrap()
}

/// The worst thread's locality at each stored point of the series.
fn locality_series(sample: &Value) -> Vec<f64> {
    (0..)
        .map_while(|i| sample["data"]["figures"][format!("series/{i:03}/locality")].as_f64())
        .collect()
}

fn vmstat(sample: &Value, name: &str) -> f64 {
    sample["vmstat"][name].as_f64().unwrap_or(0.0)
}

#[test]
#[ignore = "a heavy guest test (minutes of TCG): .ci/run runs it after `cargo test`"]
fn two_node_guest_runs_numa_for_real() {
    if !common::guest::available("numa_vm") {
        return;
    }
    let scratch = common::Scratch::new("numa-vm");
    let out = scratch.dir.join("guest");
    // A host run first, so the guest's runs are added to a store that has
    // runs of its own.
    common::ok(&scratch.vmscale(&[
        "run", "pft", "--tasks", "1", "--size", "1M", "--reps", "1", "--warmup", "0", "--label",
        "host-pft",
    ]));
    // The cloud flavour: NUMA balancing and sched debugfs as the generic
    // kernel, and half its boot time under TCG (fewer drivers probe).
    let kernel = &common::guest::kernels()[1];
    let mem = format!("{}M", 2 * MEM_PER_NODE_MIB);
    let plan = [
        "sysinfo",
        "--json",
        "---",
        "run",
        "numa01",
        "--size",
        "16M",
        "--loops",
        "120",
        "--reps",
        "1",
        "--warmup",
        "0",
        "--interval",
        "200ms",
        "--knob",
        "numa_balancing=0,1",
        "--label",
        "numa01",
        "---",
        "run",
        "numa02",
        "--size",
        "16M",
        "--loops",
        "200",
        "--reps",
        "1",
        "--warmup",
        "0",
        // Every 50 ms: a run of about 2 s still gives a series of dozens
        // of points.
        "--interval",
        "50ms",
        "--label",
        "numa02",
        "---",
        "run",
        "pft",
        "--tasks",
        "2",
        "--size",
        "16M",
        "--pin",
        "spread",
        "--reps",
        "1",
        "--warmup",
        "0",
        "--label",
        "pft",
    ];
    let mut args = vec![
        "--kernel",
        common::guest::s(kernel),
        "--label",
        "vm",
        "--accel",
        "tcg",
        "--nodes",
        "2",
        "--cpus",
        "2",
        "--mem",
        &mem,
        "--out",
        common::guest::s(&out),
        // The scanner starts after scan_delay_ms (1 s by default) and
        // rescans at most every scan_period_min_ms (1 s); shorter ones let
        // a short run see it work (at 1 s, numa02 once saw 73 PTEs
        // updated in 3.8 s and none of its region moved). Written by
        // --setup lines before the plan.
        "--setup",
        "echo 100 > /sys/kernel/debug/sched/numa_balancing/scan_delay_ms",
        "--setup",
        "echo 100 > /sys/kernel/debug/sched/numa_balancing/scan_period_min_ms",
        "--",
    ];
    args.extend(plan);
    let o = common::guest::guest(&scratch.db(), &args);
    common::ok(&o);
    let results = out.join("round-1/kernel-1/results");

    // The topology QEMU was told: 2 nodes, one CPU and 256 MiB each, 10/20.
    let sys: Value =
        serde_json::from_str(&std::fs::read_to_string(results.join("step-1.out")).unwrap())
            .unwrap();
    let nodes = sys["nodes"].as_array().unwrap();
    assert_eq!(nodes.len(), 2, "{sys}");
    for (i, n) in nodes.iter().enumerate() {
        assert_eq!(n["cpus"], serde_json::json!([i]), "node {i}");
        let kib = n["mem_total_kib"].as_u64().unwrap();
        let given = MEM_PER_NODE_MIB * 1024;
        assert!(
            (given * 3 / 4..=given).contains(&kib),
            "node {i}: {kib} KiB of {given}"
        );
    }
    assert_eq!(nodes[0]["distances"], serde_json::json!([10, 20]));
    assert_eq!(nodes[1]["distances"], serde_json::json!([20, 10]));

    // The runs came back into the host store beside its own run and say
    // they ran in the guest.
    let host = show(&scratch.db(), "host-pft");
    assert_eq!(host["meta"]["id"], 1);
    let numa01 = show(&scratch.db(), "vm/numa01");
    assert!(numa01["meta"]["id"].as_i64().unwrap() > 1);
    let guest = &numa01["meta"]["machine"]["guest"];
    assert_eq!(guest["topology"]["nodes"], 2, "{guest}");
    assert_eq!(guest["label"], "vm");
    assert_eq!(
        numa01["meta"]["machine"]["nodes"].as_array().unwrap().len(),
        2
    );

    let off = case_with_balancing(&numa01, "0");
    let on = case_with_balancing(&numa01, "1");
    assert_eq!(figure(off, "numa_balancing"), 0.0);
    assert_eq!(figure(on, "numa_balancing"), 1.0);
    for k in [
        "numa_hint_faults",
        "numa_pages_migrated",
        "numa_pte_updates",
    ] {
        assert_eq!(figure(off, k), 0.0, "{k} with balancing off");
    }
    assert!(figure(on, "numa_hint_faults") > 0.0, "{on}");
    assert!(figure(on, "numa_pages_migrated") > 0.0, "{on}");
    // mmtests' cost on the kernel's counters over the timed section, which
    // lies inside the sample's whole vmstat window.
    for k in [
        "numa_pte_updates",
        "numa_hint_faults",
        "numa_pages_migrated",
    ] {
        assert!(
            figure(on, k) <= vmstat(on, k),
            "{k}: timed section beyond the sample"
        );
    }
    let cost = (7.0 * figure(on, "numa_pte_updates")
        + 5000.0 * figure(on, "numa_hint_faults")
        + 19.0 * figure(on, "numa_pages_migrated"))
        / 1e6;
    assert!(cost > 0.0);
    assert!((figure(on, "autonuma_cost") - cost).abs() < 1e-9);
    // Each process's own region was first touched on node 0, all of it;
    // without balancing it stays there; with it, no more pages left node 0
    // than the kernel says it migrated.
    for s in [off, on] {
        assert_eq!(figure(s, "first_touch_local"), 1.0);
    }
    assert_eq!(figure(off, "end_on_first_node"), 1.0);
    let region_pages = (16 << 20) as f64 / 4096.0;
    let moved_off = ((1.0 - figure(on, "end_on_first_node")) * 2.0 * region_pages).round();
    assert!(
        moved_off <= figure(on, "numa_pages_migrated"),
        "{moved_off} pages left node 0, {} migrated",
        figure(on, "numa_pages_migrated")
    );
    // Per-thread locality over time was sampled through the run, for both
    // threads (one per process) and every page of each process's 16 MiB
    // region (4096 pages, the sampling budget).
    for s in [off, on] {
        assert!(figure(s, "locality_samples") >= 3.0, "{s}");
        assert_eq!(figure(s, "locality_threads"), 2.0);
        assert_eq!(figure(s, "pages_sampled"), 2.0 * region_pages);
        assert!(locality_series(s).iter().all(|l| (0.0..=1.0).contains(l)));
    }
    // Without balancing nothing moves the pages or pulls a thread back to
    // them, and the scheduler spreads the two busy processes over the two
    // CPUs: one thread works on node 1 against a region on node 0 for the
    // whole run, and the sampler sees it remote.
    assert!(
        figure(off, "locality_min") < 1.0,
        "no remote thread seen without balancing: {:?}",
        locality_series(off)
    );
    // numa02 with balancing on (the guest's default): its private region
    // moves to the thread working on it, and the figure moves with it.
    let numa02 = show(&scratch.db(), "vm/numa02");
    let s = &numa02["cases"][0]["samples"][0];
    assert_eq!(figure(s, "numa_balancing"), 1.0);
    assert_eq!(figure(s, "locality_threads"), 2.0);
    assert!(figure(s, "numa_pages_migrated") > 0.0, "{s}");
    assert!(figure(s, "end_on_first_node") < 1.0, "{s}");
    // Whether the worst-thread series catches numa02's region on its way
    // is a race: on a fast host the pages followed their thread within one
    // 50 ms interval and every sample read 1.0 (CI, 2026-11-27). That the
    // sampler sees remote pages is asserted on numa01 without balancing.
    assert!(figure(s, "locality_samples") >= 3.0, "{s}");
    assert!(locality_series(s).iter().all(|l| (0.0..=1.0).contains(l)));

    // The host's pft beside the guest's: compare warns that one ran on the
    // host and one under an emulated (or KVM) CPU.
    let mixed = scratch.vmscale(&["compare", "host-pft", "vm/pft"]);
    let warned = common::stderr(&mixed);
    assert!(mixed.status.success(), "{warned}");
    assert!(warned.contains("different accelerators"), "{warned}");
    assert!(
        warned.contains("host") && warned.contains("tcg"),
        "{warned}"
    );

    // pft spread over the nodes: one task per node, pages faulted locally.
    let pft = show(&scratch.db(), "vm/pft");
    let sample = &pft["cases"][0]["samples"][0];
    let mut cpus: Vec<f64> = sample["data"]["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["cpu"].as_f64().unwrap())
        .collect();
    cpus.sort_by(f64::total_cmp);
    assert_eq!(cpus, vec![0.0, 1.0]);
    let pages = figure(sample, "pages");
    let local = vmstat(sample, "numa_local");
    let other = vmstat(sample, "numa_other");
    assert!(local >= pages, "numa_local {local} < {pages} pages touched");
    assert!(other < pages / 10.0, "numa_other {other} of {pages} pages");
}
