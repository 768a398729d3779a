//! End-to-end: vm-scalability's cases by name through the real binary, at
//! small sizes: case selection, refusals, and per family a few cases whose
//! kernel counters show the path was taken. Counts, never timings.

mod common;
use common::{Scratch, is_root, json, ok, stderr};

/// Small and short: 1/256 of the machine, half a second per sample.
const SMALL: &[&str] = &[
    "--size",
    "1/256",
    "--runtime",
    "0.5",
    "--reps",
    "1",
    "--warmup",
    "0",
    "--json",
];

fn run(s: &Scratch, case: &str, extra: &[&str]) -> serde_json::Value {
    let mut args = vec!["run", "vms", "--case", case];
    args.extend_from_slice(extra);
    args.extend_from_slice(SMALL);
    json(&s.vmscale(&args))
}

fn sample(v: &serde_json::Value, case: usize) -> &serde_json::Value {
    &v["cases"][case]["samples"][0]
}

fn fig(v: &serde_json::Value, case: usize, name: &str) -> f64 {
    sample(v, case)["data"]["figures"][name]
        .as_f64()
        .unwrap_or_else(|| panic!("no figure {name}: {v}"))
}

fn vmstat(v: &serde_json::Value, case: usize, name: &str) -> i64 {
    sample(v, case)["vmstat"][name].as_i64().unwrap_or(0)
}

/// Bytes the tasks touched: each task's count less usemem's allocation
/// credit of an eighth of its mapping.
fn per_task(v: &serde_json::Value, case: usize) -> f64 {
    v["meta"]["config"]["plans"][case]["amount"]["per_task"]
        .as_f64()
        .unwrap()
}

fn page() -> f64 {
    4096.0
}

fn thp_always() -> bool {
    std::fs::read_to_string("/sys/kernel/mm/transparent_hugepage/enabled")
        .is_ok_and(|t| t.contains("[always]"))
}

#[test]
fn globs_pick_families_and_the_plan_shows_sizes() {
    let s = Scratch::new("vms-glob");
    let v = json(&s.vmscale(&[
        "run",
        "vms",
        "--case",
        "anon-w-*",
        "--case",
        "lru-shm",
        "--tasks",
        "1,2",
        "--dry-run",
        "--json",
    ]));
    let cases: Vec<String> = v["cases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| format!("{}/{}", c["variant"].as_str().unwrap(), c["tasks"]))
        .collect();
    assert_eq!(
        cases,
        [
            "anon-w-rand/1",
            "anon-w-rand/2",
            "anon-w-rand-mt/1",
            "anon-w-rand-mt/2",
            "anon-w-seq/1",
            "anon-w-seq/2",
            "anon-w-seq-mt/1",
            "anon-w-seq-mt/2",
            "lru-shm/1",
            "lru-shm/2"
        ]
    );
    // anon-w-seq: mem/2/n per task of the modelled machine.
    let mem = v["sizes"]["mem"].as_u64().unwrap();
    let sizes = v["case_sizes"].as_array().unwrap();
    let seq2 = sizes
        .iter()
        .find(|p| p["case"] == "anon-w-seq" && p["tasks"] == 2)
        .unwrap();
    assert_eq!(seq2["amount"]["per_task"].as_u64().unwrap(), mem / 2 / 2);
    assert!(!s.db().exists(), "a dry run stores nothing");
}

#[test]
fn bad_case_names_exit_2_listing_the_cases_and_store_nothing() {
    let s = Scratch::new("vms-bad");
    for bad in ["lru-file-readthrice", "nothing-*"] {
        let o = s.vmscale(&["run", "vms", "--case", bad]);
        assert_eq!(o.status.code(), Some(2), "{bad}");
        let e = stderr(&o);
        assert!(e.contains(bad) && e.contains("lru-file-readtwice"), "{e}");
    }
    let o = s.vmscale(&["run", "vms", "--case", "anon-w-seq", "--size", "3"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("--size"), "{}", stderr(&o));
    assert!(!s.db().exists(), "nothing stored");
}

#[test]
fn migrate_on_one_node_is_refused_with_the_reason() {
    let nodes = std::fs::read_dir("/sys/devices/system/node")
        .map(|d| {
            d.filter(|e| {
                e.as_ref()
                    .is_ok_and(|e| e.file_name().to_string_lossy().starts_with("node"))
            })
            .count()
        })
        .unwrap_or(1);
    if nodes > 1 {
        common::skip("this machine has two nodes: migrate runs (tests/numa_vm.rs covers it)");
        return;
    }
    let s = Scratch::new("vms-migrate");
    let o = s.vmscale(&["run", "vms", "--case", "migrate"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("node"), "{}", stderr(&o));
    assert!(!s.db().exists());
}

#[test]
fn anon_cases_write_fault_and_copy_on_write() {
    let s = Scratch::new("vms-anon");
    let v = run(
        &s,
        "anon-w-seq,anon-cow-seq,anon-r-seq-mt",
        &["--tasks", "2"],
    );
    for c in 0..3 {
        assert!(fig(&v, c, "throughput") > 0.0, "{c}: {v}");
    }
    let pages = |c| per_task(&v, c) / page();
    let per_fault = if thp_always() { 512.0 } else { 1.0 };
    // anon-w-seq: each of 2 tasks write-faults its own mapping, unless the
    // runtime cut it short: faults follow the bytes each task counted.
    let tasks = sample(&v, 0)["data"]["tasks"].as_array().unwrap();
    assert_eq!(tasks.len(), 2);
    let touched: f64 = tasks
        .iter()
        .map(|t| (t["bytes"].as_f64().unwrap() - per_task(&v, 0) / 8.0) / page())
        .sum();
    assert!(fig(&v, 0, "minflt") >= touched / per_fault * 0.95, "{v}");
    // anon-cow-seq: the mapping is prefaulted before the fork, so each
    // child's writes are copy-on-write faults on pages it shares.
    assert!(fig(&v, 1, "minflt") >= pages(1) / per_fault, "{v}");
    // anon-r-seq-mt: reads of /dev/zero map the zero page, a fault a page.
    let tasks = sample(&v, 2)["data"]["tasks"].as_array().unwrap();
    let read: f64 = tasks.iter().map(|t| t["bytes"].as_f64().unwrap()).sum();
    assert!(read > 0.0 && fig(&v, 2, "minflt") > 0.0, "{v}");
}

#[test]
fn shm_cases_fault_shmem_pages() {
    let s = Scratch::new("vms-shm");
    let v = run(&s, "lru-shm,shm-xread-seq-mt", &["--tasks", "2"]);
    for c in 0..2 {
        assert!(fig(&v, c, "throughput") > 0.0);
    }
    // lru-shm: each task reads its own file; shmem allocates a page for
    // every hole read (no zero page on shmem).
    let tasks = sample(&v, 0)["data"]["tasks"].as_array().unwrap();
    let touched: f64 = tasks
        .iter()
        .map(|t| (t["bytes"].as_f64().unwrap() - per_task(&v, 0) / 8.0) / page())
        .sum();
    assert!(fig(&v, 0, "minflt") >= touched * 0.95, "{v}");
    assert!(vmstat(&v, 0, "pgfault") as f64 >= touched * 0.95);
}

#[test]
fn small_allocs_and_mlock() {
    let s = Scratch::new("vms-small");
    let v = run(&s, "small-allocs,mlock", &["--tasks", "1"]);
    // small-allocs: 10-page mappings, each read through: one fault a page.
    let bytes = fig(&v, 0, "minflt");
    assert!(bytes > 0.0, "{v}");
    assert!(fig(&v, 0, "throughput") > 0.0);
    if is_root() {
        // mlock: every page written is then locked.
        let locked = vmstat(&v, 1, "unevictable_pgs_mlocked") as f64;
        assert!(locked >= per_task(&v, 1) / page() * 0.99, "{v}");
    }
}

#[test]
fn a_page_cache_case_as_a_user_exits_2_naming_root() {
    if !is_root() {
        common::skip("needs root to run vmscale as another user");
        return;
    }
    let s = Scratch::new("vms-user");
    let o = std::process::Command::new("setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
        .arg(env!("CARGO_BIN_EXE_vmscale"))
        .args(["run", "vms", "--case", "lru-file-readonce"])
        .env("VMSCALE_DB", s.db())
        .env("HOME", "/nonexistent")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("root"), "{}", stderr(&o));
    assert!(!s.db().exists());
    let _ = ok;
}

#[test]
fn reclaim_under_the_case_cgroup_and_swap_out_are_shown() {
    if !is_root() {
        common::skip("needs root: a page-cache file system, a memory cgroup, swap");
        return;
    }
    let s = Scratch::new("vms-room");
    let v = json(&s.vmscale(&[
        "run",
        "vms",
        "--case",
        "lru-file-readonce,swap-w-seq",
        "--tasks",
        "2",
        "--size",
        "1/512",
        "--runtime",
        "3",
        "--reps",
        "1",
        "--warmup",
        "0",
        "--json",
    ]));
    // lru-file-readonce reads more than its cgroup holds: the cgroup's
    // limit is hit and its pages reclaimed (memory.events max, pages
    // uncharged; the system-wide pgscan/pgsteal also count other work).
    let read = fig(&v, 0, "throughput") * fig(&v, 0, "wall");
    assert!(read > 0.0);
    assert!(fig(&v, 0, "memcg.events.max") > 0.0, "{}", sample(&v, 0));
    assert!(fig(&v, 0, "memcg.pgpgout") > 0.0, "{}", sample(&v, 0));
    // swap-w-seq writes more than its cgroup holds: pages go to swap.
    assert!(vmstat(&v, 1, "pswpout") > 0, "{v}");
    // Nothing left: no mount, no swap device of the set-up.
    let mounts = std::fs::read_to_string("/proc/mounts").unwrap();
    assert!(!mounts.contains("vmscale-setup"), "{mounts}");
}
