//! Issue 23 on the big fixtures (tests/common/fixtures.rs): `sysinfo` right
//! to the CPU on 512 and 1024 CPUs, the plans `--dry-run` prints (c2c's
//! pairs by topology class within its budget, `run quick` under a minute,
//! `--tasks auto` at the topology's boundaries), every text in 80 columns,
//! and nothing measured on a tree that is not this machine.

use crate::common::fixtures::{self, BIG512, BIG1024, Machine, counts};
use crate::common::{json, ok, stderr};
use serde_json::Value;

fn big512() -> Machine {
    fixtures::generate(BIG512)
}

fn big1024() -> Machine {
    fixtures::generate(BIG1024)
}

fn narrow(text: &str, what: &str) {
    for l in text.lines() {
        assert!(
            l.chars().count() <= 80,
            "{what}: a line of {} columns:\n{l}",
            l.chars().count()
        );
    }
}

fn cpu(v: &Value, id: u64) -> &Value {
    v["cpus"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["id"] == id)
        .unwrap_or_else(|| panic!("cpu {id} missing"))
}

#[test]
fn sysinfo_is_right_to_the_cpu_on_512_cpus() {
    let m = big512();
    let v = json(&m.vmscale(&["sysinfo", "--json"]));
    let c = &v["counts"];
    assert_eq!(c["online_cpus"], 512, "{c}");
    assert_eq!(c["cores"], 256, "{c}");
    assert_eq!(c["threads_per_core"], 2, "{c}");
    assert_eq!(c["packages"], 2, "{c}");
    assert_eq!(c["nodes"], 16, "{c}");
    assert_eq!(c["nodes_with_cpus"], 16, "{c}");
    assert_eq!(c["mem_total_kib"], 1u64 << 30, "{c}");
    // CPU 300 is thread 1 of core 44: package 0, node 2, L3 complex 5.
    let p = cpu(&v, 300);
    assert_eq!(
        (&p["package"], &p["core"], &p["node"]),
        (&Value::from(0), &Value::from(44), &Value::from(2))
    );
    assert_eq!(p["siblings"], serde_json::json!([44, 300]));
    let q = cpu(&v, 511);
    assert_eq!(
        (&q["package"], &q["node"]),
        (&Value::from(1), &Value::from(15))
    );
    let l3: Vec<&Value> = v["caches"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["level"] == 3)
        .collect();
    assert_eq!(l3.len(), 32, "one L3 per complex of 8 cores");
    assert!(
        l3.iter()
            .all(|c| c["shared_cpus"].as_array().unwrap().len() == 16)
    );
    let node5 = &v["nodes"][5];
    assert_eq!(node5["cpus"].as_array().unwrap().len(), 32);
    let d: Vec<u64> = node5["distances"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d.as_u64().unwrap())
        .collect();
    assert_eq!(&d[..9], &[16, 16, 16, 16, 12, 10, 12, 12, 32]);
    let text = ok(&m.vmscale(&["sysinfo"]));
    assert!(
        text.contains("512 online, 256 cores, 2 threads/core, 2 packages"),
        "{text}"
    );
    narrow(&text, "sysinfo");
}

#[test]
fn sysinfo_is_right_to_the_cpu_on_1024_cpus() {
    let m = big1024();
    let v = json(&m.vmscale(&["sysinfo", "--json"]));
    assert_eq!(counts(&v), [1024, 512, 2, 4, 32], "{}", v["counts"]);
    // CPU 1023 is thread 1 of core 511: the last node of the last package.
    let p = cpu(&v, 1023);
    assert_eq!(
        (&p["package"], &p["node"]),
        (&Value::from(3), &Value::from(31))
    );
    assert_eq!(p["siblings"], serde_json::json!([511, 1023]));
    narrow(&ok(&m.vmscale(&["sysinfo"])), "sysinfo");
}

/// c2c's default plan: a sample of every topology class, a few thousand
/// pairs at most, and an estimate inside --max-time (40 s by default).
fn c2c_plan(m: &Machine, total: u64, classes: &[&str]) {
    let v = json(&m.vmscale(&["run", "c2c", "--dry-run", "--json"]));
    assert_eq!(v["workload"], "c2c");
    assert_eq!(v["pairs_total"], total, "{v}");
    let pairs = v["pairs"].as_u64().unwrap();
    assert!(
        (classes.len() as u64..=3000).contains(&pairs),
        "{pairs} pairs"
    );
    let seen = v["classes"].as_object().unwrap();
    for c in classes {
        let class = seen
            .get(*c)
            .unwrap_or_else(|| panic!("class {c} missing: {v}"));
        let n = class["pairs"].as_u64().unwrap();
        assert_eq!(class["measured"].as_u64().unwrap(), n.min(8), "{c}");
    }
    assert_eq!(seen.len(), classes.len(), "{v}");
    let (est, least, budget) = (
        v["estimate_s"].as_f64().unwrap(),
        v["least_s"].as_f64().unwrap(),
        v["max_time_s"].as_f64().unwrap(),
    );
    assert!(least <= est && est <= budget, "{least} {est} {budget}");
    let text = ok(&m.vmscale(&["run", "c2c", "--dry-run"]));
    assert!(
        text.contains(&format!("measures {pairs} of {total} pairs")),
        "{text}"
    );
    narrow(&text, "c2c --dry-run");
}

#[test]
fn c2c_samples_each_topology_class_on_512_cpus() {
    c2c_plan(
        &big512(),
        512 * 511 / 2,
        &[
            "SMT siblings",
            "same L3",
            "same node",
            "cross-node d=12",
            "cross-node d=16",
            "cross-node d=32 x-pkg",
        ],
    );
}

#[test]
fn c2c_samples_each_topology_class_on_1024_cpus() {
    c2c_plan(
        &big1024(),
        1024 * 1023 / 2,
        &[
            "SMT siblings",
            "same L3",
            "same node",
            "cross-node d=12",
            "cross-node d=16",
            "cross-node d=32 x-pkg",
        ],
    );
}

#[test]
fn every_pair_is_planned_and_refused_over_the_budget_unless_asked() {
    let m = big512();
    let v = json(&m.vmscale(&["run", "c2c", "--pairs", "all", "--dry-run", "--json"]));
    assert_eq!(v["pairs"], v["pairs_total"]);
    assert!(v["least_s"].as_f64().unwrap() > 3600.0, "{v}");
    // Over --max-time: refused with the numbers and the way to ask.
    let o = m.vmscale(&["run", "c2c", "--pairs", "all"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(
        e.contains("130816") && e.contains("over --max-time 40s") && e.contains("--max-time"),
        "{e}"
    );
    // Asked for (a budget that holds it): then only the fake tree refuses.
    let o = m.vmscale(&["run", "c2c", "--pairs", "all", "--max-time", "100h"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("describes another machine"),
        "{}",
        stderr(&o)
    );
    let o = m.vmscale(&["run", "c2c", "--pairs", "0", "--dry-run"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("--pairs '0'"), "{}", stderr(&o));
}

#[test]
fn run_quick_plans_under_a_minute_on_512_and_1024_cpus() {
    for m in [big512(), big1024()] {
        let v = json(&m.vmscale(&["run", "quick", "--dry-run", "--json"]));
        let est = v["estimate_s"].as_f64().unwrap();
        assert!(est < 60.0, "quick plan {est} s: {v:#}");
        let runs = v["runs"].as_array().unwrap();
        assert!(runs.len() >= 14, "{}", runs.len());
        let sum: f64 = runs.iter().map(|r| r["estimate_s"].as_f64().unwrap()).sum();
        assert!((sum - est).abs() < 1e-3, "{sum} {est}");
        let text = ok(&m.vmscale(&["run", "quick", "--dry-run"]));
        narrow(&text, "run quick --dry-run");
    }
}

#[test]
fn tasks_auto_stops_at_the_topology_boundaries() {
    let big = big1024();
    let v = json(&big.vmscale(&[
        "run",
        "atomic",
        "--variant",
        "shared",
        "--dry-run",
        "--json",
    ]));
    let tasks: Vec<u64> = v["cases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["tasks"].as_u64().unwrap())
        .collect();
    assert_eq!(tasks, [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024]);
    // A machine whose node holds 6 CPUs: boundaries between the powers.
    let m = fixtures::generate(("six", 2, 2, 3, 2, 3, 1));
    let v = json(&m.vmscale(&[
        "run",
        "atomic",
        "--variant",
        "shared",
        "--dry-run",
        "--json",
    ]));
    let tasks: Vec<u64> = v["cases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["tasks"].as_u64().unwrap())
        .collect();
    assert_eq!(tasks, [1, 2, 4, 6, 8, 12, 16, 24]);
}

#[test]
fn every_plan_and_machine_text_fits_80_columns_on_512_cpus() {
    let m = big512();
    let o = m.vmscale(&["run", "pft", "--size", "1G", "--dry-run"]);
    narrow(&ok(&o), "pft");
    for spec in [
        "numa01",
        "numa02",
        "fork",
        "churn",
        "colour",
        "atomic",
        "lockfan",
        "latency",
        "mmap-lock",
        "thp",
    ] {
        let o = m.vmscale(&["run", spec, "--dry-run"]);
        narrow(&ok(&o), spec);
    }
    let o = m.vmscale(&["run", "wis", "--test", "page_fault1", "--dry-run"]);
    narrow(&ok(&o), "wis");
    narrow(&ok(&m.vmscale(&["pcp"])), "pcp");
    narrow(&ok(&m.vmscale(&["doctor", "--window", "0s"])), "doctor");
}

#[test]
fn nothing_is_measured_on_another_machine_tree() {
    let m = big512();
    let o = m.vmscale(&["run", "pft", "--tasks", "1", "--size", "1M", "--reps", "1"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("VMSCALE_MACHINE_ROOT"),
        "{}",
        stderr(&o)
    );
    assert!(!m.scratch.db().exists(), "a refused run stored nothing");
    let o = m.vmscale(&["run", "quick"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    // A root that is no machine tree: named, exit 2.
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_vmscale"))
        .args(["sysinfo"])
        .env("VMSCALE_MACHINE_ROOT", m.scratch.dir.join("nowhere"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("holds no sys/ or proc/"),
        "{}",
        stderr(&o)
    );
}

/// latency's default `--max` is twice the L3 (32 MiB on these machines)
/// where a default run of the sizes up to it fits `--max-time`'s default,
/// and then the plan has no note of a cut (the cut itself: the unit tests
/// of `latency::default_max`).
#[test]
fn latency_defaults_to_twice_the_l3_where_its_plan_fits() {
    let m = big512();
    let plan = json(&m.vmscale(&["run", "latency", "--dry-run", "--json"]));
    let cases = plan["cases"].as_array().unwrap();
    assert_eq!(cases.last().unwrap()["variant"], "thp/67108864", "{plan}");
    assert!(plan["least_s"].as_f64().unwrap() <= 40.0, "{plan}");
    let text = ok(&m.vmscale(&["run", "latency", "--dry-run"]));
    assert!(!text.contains("by default, not twice"), "{text}");
}
