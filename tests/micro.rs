//! End-to-end tests of the micro-benchmarks: invariants, not timings.

use crate::common;

use crate::common::{Scratch, fig, json, ok};
use serde_json::Value;

fn online_cpus() -> usize {
    std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
}

fn measured(case: &Value) -> Vec<&Value> {
    case["samples"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["warmup"] == false)
        .collect()
}

#[test]
fn c2c_has_every_requested_pair_with_positive_latency() {
    if online_cpus() < 2 {
        return common::skip("c2c needs two online CPUs");
    }
    let s = Scratch::new("c2c");
    let run = json(&s.vmscale(&[
        "run",
        "c2c",
        "--cpus",
        "0,1",
        "--rounds",
        "50",
        "--batches",
        "5",
        "--reps",
        "2",
        "--warmup",
        "0",
        "--json",
    ]));
    let cases = run["cases"].as_array().unwrap();
    assert_eq!(
        cases.len(),
        3,
        "one case per variant: cas, cas-nopause, storeload"
    );
    for c in cases {
        for smp in measured(c) {
            assert!(fig(smp, "pair 0-1 ns") > 0.0);
            assert!(fig(smp, "clock res ns") > 0.0);
            assert!(fig(smp, "clock read ns") > 0.0);
            let tasks = smp["data"]["tasks"].as_array().unwrap();
            assert_eq!(tasks.len(), 1, "one entry per pair");
            assert_eq!(tasks[0]["hand-offs"].as_f64(), Some(2.0 * 50.0 * 5.0));
        }
    }
    // The stored run renders the matrix, plain (stdout is not a terminal).
    let text = ok(&s.vmscale(&["show", "last"]));
    assert!(
        text.contains("cas (compare-and-swap ping-pong, PAUSE between retries)"),
        "{text}"
    );
    assert!(text.contains(" 0-1 "), "{text}");
    assert!(text.contains("clock: CLOCK_MONOTONIC resolution"), "{text}");
    assert!(!text.contains('\x1b'), "no colour codes off a terminal");
}

#[test]
fn c2c_fresh_line_and_bad_cpus() {
    if online_cpus() < 2 {
        return common::skip("c2c needs two online CPUs");
    }
    let s = Scratch::new("c2c-bad");
    let o = s.vmscale(&["run", "c2c", "--cpus", "0,4096"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(common::stderr(&o).contains("not online"));
    let o = s.vmscale(&["run", "c2c", "--cpus", "0"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(common::stderr(&o).contains("at least two CPUs"));
    let o = s.vmscale(&["run", "c2c", "--variant", "xchg"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(!s.db().exists(), "a refused run stores nothing");
    let run = json(&s.vmscale(&[
        "run",
        "c2c",
        "--fresh-line",
        "--variant",
        "storeload",
        "--rounds",
        "20",
        "--batches",
        "3",
        "--reps",
        "1",
        "--json",
    ]));
    assert!(fig(measured(&run["cases"][0])[0], "median ns") > 0.0);
}

#[test]
fn c2c_measures_cas_with_and_without_pause_by_default() {
    if online_cpus() < 2 {
        return common::skip("c2c needs two online CPUs");
    }
    let s = Scratch::new("c2c-pause");
    let run = json(&s.vmscale(&[
        "run",
        "c2c",
        "--cpus",
        "0,1",
        "--rounds",
        "20",
        "--batches",
        "3",
        "--reps",
        "1",
        "--json",
    ]));
    let variants: Vec<&str> = run["cases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["case"]["variant"].as_str().unwrap())
        .collect();
    assert_eq!(variants, ["cas", "cas-nopause", "storeload"]);
    for c in run["cases"].as_array().unwrap() {
        let smp = measured(c)[0];
        // Every hand-off happened: the line counted them all.
        assert_eq!(smp["data"]["tasks"][0]["hand-offs"], 2.0 * 20.0 * 3.0);
        assert!(fig(smp, "median ns") > 0.0);
    }
    let text = ok(&s.vmscale(&["show", "last"]));
    assert!(text.contains("retried without PAUSE"), "{text}");
    assert!(text.contains("PAUSE between retries"), "{text}");
}

#[test]
fn atomic_counters_equal_the_increments() {
    let s = Scratch::new("atomic");
    let run = json(&s.vmscale(&[
        "run", "atomic", "--tasks", "1,2", "--ops", "30001", "--fold", "64", "--reps", "1",
        "--mode", "process", "--json",
    ]));
    let cases = run["cases"].as_array().unwrap();
    assert_eq!(cases.len(), 10);
    for c in cases {
        let tasks = c["case"]["tasks"].as_f64().unwrap();
        for smp in c["samples"].as_array().unwrap() {
            assert_eq!(fig(smp, "counted"), tasks * 30001.0, "{}", c["case"]);
            assert_eq!(fig(smp, "lost"), 0.0);
        }
    }
    let text = ok(&s.vmscale(&["show", "last"]));
    assert!(
        text.contains("count check: every counter read back equals"),
        "{text}"
    );
}

#[test]
fn lockfan_loses_no_updates_in_threads_and_processes() {
    let s = Scratch::new("lockfan");
    for mode in ["thread", "process"] {
        let run = json(&s.vmscale(&[
            "run",
            "lockfan",
            "--tasks",
            "2,3",
            "--locks",
            "1,4,256",
            "--kind",
            "spin,mutex",
            "--ops",
            "20000",
            "--lines",
            "3",
            "--reps",
            "1",
            "--warmup",
            "0",
            "--mode",
            mode,
            "--json",
        ]));
        let cases = run["cases"].as_array().unwrap();
        assert_eq!(cases.len(), 2 * 3 * 2);
        for c in cases {
            let tasks = c["case"]["tasks"].as_f64().unwrap();
            for smp in measured(c) {
                assert_eq!(fig(smp, "counted"), tasks * 20000.0, "{mode} {}", c["case"]);
                assert_eq!(fig(smp, "lost"), 0.0);
                assert_eq!(fig(smp, "torn locks"), 0.0);
            }
        }
    }
    let text = ok(&s.vmscale(&["show", "last"]));
    assert!(text.contains("lock check: no lost updates"), "{text}");
    let o = s.vmscale(&["run", "lockfan", "--locks", "0"]);
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn latency_measures_each_size_and_page_kind() {
    let s = Scratch::new("latency");
    let thp = std::fs::read_to_string("/sys/kernel/mm/transparent_hugepage/enabled")
        .map(|t| !t.contains("[never]"))
        .unwrap_or(false);
    let pages = if thp { "base,thp" } else { "base" };
    let pmd: f64 = std::fs::read_to_string("/sys/kernel/mm/transparent_hugepage/hpage_pmd_size")
        .ok()
        .and_then(|t| t.trim().parse().ok())
        .unwrap_or(2.0 * 1048576.0);
    let run = json(&s.vmscale(&[
        "run", "latency", "--min", "1M", "--max", "2M", "--pages", pages, "--loads", "10000",
        "--reps", "1", "--warmup", "0", "--json",
    ]));
    let cases = run["cases"].as_array().unwrap();
    // THP from one huge page up: a smaller region cannot hold one.
    let sizes = [1048576.0, 2.0 * 1048576.0];
    let huge_sizes = sizes.iter().filter(|&&b| b >= pmd).count();
    assert_eq!(cases.len(), 2 + if thp { huge_sizes } else { 0 });
    for c in cases {
        let smp = measured(c)[0];
        assert!(fig(smp, "ns/load") > 0.0);
        let size: f64 = c["case"]["variant"]
            .as_str()
            .unwrap()
            .split('/')
            .nth(1)
            .unwrap()
            .parse()
            .unwrap();
        assert_eq!(fig(smp, "nodes"), size / 64.0);
        let kind = c["case"]["variant"].as_str().unwrap();
        assert!(!kind.starts_with("thp/") || size >= pmd, "{kind}");
        assert!(fig(smp, "loads") >= 2.0 * fig(smp, "nodes"));
    }
    let o = s.vmscale(&["run", "latency", "--min", "1M", "--max", "4K"]);
    assert_eq!(o.status.code(), Some(2));
}
