//! End-to-end: vm-scalability's cases by name through the real binary, at
//! small sizes: case selection, refusals, and per family a few cases whose
//! kernel counters show the path was taken. Counts, never timings.

use crate::common;
use crate::common::turn::Turn;
use crate::common::{Scratch, is_root, json, ok, stderr};
use vmscale::setup::journal::{Record, Step};

/// The tests that make set-up rooms (swap, cgroups, zram ids) run one
/// at a time.
static ROOM: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn room() -> (Turn, std::sync::MutexGuard<'static, ()>) {
    let turn = common::machine_turn();
    (turn, ROOM.lock().unwrap_or_else(|p| p.into_inner()))
}

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

/// Bytes the case's first task reports it touched.
fn task_bytes(v: &serde_json::Value, case: usize) -> f64 {
    sample(v, case)["data"]["tasks"][0]["bytes"]
        .as_f64()
        .unwrap_or_else(|| panic!("no task bytes: {}", sample(v, case)))
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
            "anon-w-rand-hugetlb/1",
            "anon-w-rand-hugetlb/2",
            "anon-w-rand-mt/1",
            "anon-w-rand-mt/2",
            "anon-w-seq/1",
            "anon-w-seq/2",
            "anon-w-seq-hugetlb/1",
            "anon-w-seq-hugetlb/2",
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
    for case in ["migrate", "mbind", "migrate-across-nodes"] {
        for dry in [&[][..], &["--dry-run"]] {
            let mut args = vec!["run", "vms", "--case", case];
            args.extend_from_slice(dry);
            let o = s.vmscale(&args);
            let e = stderr(&o);
            assert_eq!(o.status.code(), Some(2), "{case}: {e}");
            // The numbers (the size a task, the nodes here) and the fix.
            assert!(e.contains("has 1 node") && e.contains(" a task)"), "{e}");
            let fix = format!("vmscale guest --nodes 2 ... -- run vms --case {case}");
            assert!(e.contains(&fix), "{e}");
        }
    }
    assert!(!s.db().exists());
}

#[test]
fn anon_cases_write_fault_and_copy_on_write() {
    let s = Scratch::new("vms-anon");
    let v = run(
        &s,
        "anon-w-seq,anon-cow-seq,anon-r-seq-mt,anon-cow-seq-mt",
        &["--tasks", "2"],
    );
    for c in 0..4 {
        assert!(fig(&v, c, "throughput") > 0.0, "{c}: {v}");
    }
    let per_fault = if thp_always() { 512.0 } else { 1.0 };
    // Pages the tasks of case `c` wrote: each task's bytes less usemem's
    // credit of an eighth of its mapping (the runtime may cut a pass
    // short on a loaded host).
    let touched = |c| -> f64 {
        let tasks = sample(&v, c)["data"]["tasks"].as_array().unwrap();
        assert_eq!(tasks.len(), 2);
        tasks
            .iter()
            .map(|t| (t["bytes"].as_f64().unwrap() - per_task(&v, c) / 8.0) / page())
            .sum()
    };
    // anon-w-seq: each of 2 tasks write-faults its own mapping.
    assert!(fig(&v, 0, "minflt") >= touched(0) / per_fault * 0.95, "{v}");
    // anon-cow-seq: the mapping is prefaulted before the fork, so each
    // child's writes are copy-on-write faults on pages it shares.
    assert!(fig(&v, 1, "minflt") >= touched(1) / per_fault * 0.95, "{v}");
    // anon-r-seq-mt: reads of /dev/zero map the zero page, a fault a page.
    let tasks = sample(&v, 2)["data"]["tasks"].as_array().unwrap();
    let read: f64 = tasks.iter().map(|t| t["bytes"].as_f64().unwrap()).sum();
    assert!(read > 0.0 && fig(&v, 2, "minflt") > 0.0, "{v}");
    // anon-cow-seq-mt: usemem's threads run in a child forked after the
    // prefault, so every page the threads write is copied once, whichever
    // thread comes first (both write the one mapping).
    let tasks = sample(&v, 3)["data"]["tasks"].as_array().unwrap();
    let most = tasks
        .iter()
        .map(|t| (t["bytes"].as_f64().unwrap() - per_task(&v, 3) / 8.0) / page())
        .fold(0.0, f64::max);
    assert!(most > 0.0, "{v}");
    assert!(fig(&v, 3, "minflt") >= most / per_fault * 0.95, "{v}");
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

/// Every case that needs the set-up room (page cache, memcg, swap,
/// msync, truncate), run as nobody: exit 2 naming root, nothing stored,
/// nothing made.
#[test]
fn room_cases_as_a_user_exit_2_naming_root() {
    if !is_root() {
        common::skip("needs root to run vmscale as another user");
        return;
    }
    let s = Scratch::new("vms-user");
    let state = s.dir.join("state");
    for case in [
        "lru-file-readonce",
        "lru-memcg",
        "swap-w-seq",
        "swapin",
        "msync",
        "truncate",
        "mmap-xread-seq-mt",
        "anon-cow-seq-hugetlb",
        "truncate-seq",
        "posix-fadvise",
        "hugetlb",
        "direct-write",
        "mincore",
        "mincore-hugepages",
        "remap",
    ] {
        let o = std::process::Command::new("setpriv")
            .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
            .arg(env!("CARGO_BIN_EXE_vmscale"))
            .args(["run", "vms", "--case", case])
            .env("VMSCALE_DB", s.db())
            .env("VMSCALE_STATE_DIR", &state)
            .env("HOME", "/nonexistent")
            .output()
            .unwrap();
        let e = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{case}: {e}");
        assert!(e.contains(case) && e.contains("needs root"), "{case}: {e}");
    }
    assert!(!s.db().exists(), "nothing stored");
    assert!(!state.exists(), "nothing made");
}

/// Sizes no machine of this one's memory can give the room: refused
/// before anything is made, the message naming the memory, nothing
/// stored; and sizes that are no size at all.
#[test]
fn impossible_sizes_exit_2_with_the_reason_and_store_nothing() {
    let s = Scratch::new("vms-sizes");
    let bad = [
        ("anon-w-seq", "0", "--size"),
        ("anon-w-seq", "1/0", "--size"),
        ("anon-w-seq", "-1/4", "--size"),
        ("anon-w-seq", "200%", "--size"),
        ("anon-w-seq", "100T", "--size"),
        ("anon-w-seq", "lots", "--size"),
    ];
    for (case, size, says) in bad {
        let size_arg = format!("--size={size}");
        let o = s.vmscale(&["run", "vms", "--case", case, &size_arg]);
        let e = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "--size {size}: {e}");
        assert!(e.contains(says), "--size {size}: {e}");
    }
    if is_root() {
        // The whole machine: a tmpfs image or swap of MemTotal is more than
        // half of MemAvailable.
        let state = common::room::private_state(&s.dir);
        // anon-w-seq-hugetlb: a pool of mem/2 in huge pages.
        for case in ["lru-file-readonce", "swap-w-seq", "anon-w-seq-hugetlb"] {
            let o = std::process::Command::new(env!("CARGO_BIN_EXE_vmscale"))
                .args(["run", "vms", "--case", case, "--size", "1"])
                .env("VMSCALE_DB", s.db())
                .env("VMSCALE_STATE_DIR", &state)
                .output()
                .unwrap();
            let e = stderr(&o);
            assert_eq!(o.status.code(), Some(2), "{case}: {e}");
            assert!(
                e.contains(case) && e.contains("MemAvailable"),
                "{case}: {e}"
            );
            assert!(common::room::mounts_below(&state).is_empty());
        }
    }
    for o in [
        s.vmscale(&["run", "vms", "--case", "anon-w-seq", "--runtime", "0"]),
        s.vmscale(&["run", "vms", "--case", "anon-w-seq", "--tasks", "0"]),
    ] {
        assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    }
    assert!(!s.db().exists(), "nothing stored");
}

/// A run of cases that need root's set-up room, holding the room until
/// the test is done with what the run left (its store, the mounts).
struct RoomRun {
    _one: (Turn, std::sync::MutexGuard<'static, ()>),
    s: Scratch,
    v: serde_json::Value,
}

/// `cases` with one task at 1/512 for 3 s, one sample, as root; None
/// (the test skipped, which fails under CI) when not root. One task,
/// so its memory alone exceeds its case's cgroup however much memory
/// the host has and however the tasks are scheduled (two tasks of half
/// the size each fit when a loaded host runs them one after the other:
/// that was seen with no swap-out at all).
fn run_in_room(cases: &str, needs: &str) -> Option<RoomRun> {
    run_in_room_with(cases, needs, &[])
}

/// `run_in_room` with `extra` options.
fn run_in_room_with(cases: &str, needs: &str, extra: &[&str]) -> Option<RoomRun> {
    if !is_root() {
        common::skip(&format!("needs root: {needs}"));
        return None;
    }
    let one = room();
    let s = Scratch::new("vms-room");
    let mut args = vec![
        "run",
        "vms",
        "--case",
        cases,
        "--tasks",
        "1",
        "--size",
        "1/512",
        "--runtime",
        "3",
        "--reps",
        "1",
        "--warmup",
        "0",
        "--json",
    ];
    args.extend_from_slice(extra);
    let v = json(&s.vmscale(&args));
    Some(RoomRun { _one: one, s, v })
}

/// lru-file-readonce reads more than its cgroup holds, swap-w-seq writes
/// more (than mem_avail, swap-w-seq's cgroup): reclaim and swap-out,
/// shown by the kernel's counters.
#[test]
fn reclaim_under_the_case_cgroup_and_swap_out_are_shown() {
    let Some(RoomRun { _one, s, v }) = run_in_room(
        "lru-file-readonce,swap-w-seq",
        "a page-cache file system, a memory cgroup, swap",
    ) else {
        return;
    };
    // lru-file-readonce: the cgroup's limit is hit and its pages
    // reclaimed (memory.events max, pages uncharged), and reclaim scanned
    // and stole file pages (system-wide counters, which count a cgroup's
    // reclaim at its limit too).
    let read: f64 = sample(&v, 0)["data"]["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["bytes"].as_f64().unwrap())
        .sum();
    let limit = v["meta"]["config"]["sizes"]["mem"].as_f64().unwrap();
    assert!(read > limit, "read {read} bytes, not more than {limit}");
    assert!(fig(&v, 0, "memcg.events.max") > 0.0, "{}", sample(&v, 0));
    assert!(fig(&v, 0, "memcg.pgpgout") > 0.0, "{}", sample(&v, 0));
    assert!(vmstat(&v, 0, "pgscan_file") > 0, "{}", sample(&v, 0));
    assert!(vmstat(&v, 0, "pgsteal_file") > 0, "{}", sample(&v, 0));
    // swap-w-seq: pages go to swap.
    assert!(vmstat(&v, 1, "pswpout") > 0, "{}", sample(&v, 1));
    assert!(fig(&v, 1, "memcg.events.max") > 0.0, "{}", sample(&v, 1));
    // The text report shows reclaim efficiency and swap-out.
    let text = ok(&s.vmscale(&["show", "last"]));
    assert!(text.contains("reclaim efficiency %"), "{text}");
    assert!(text.contains("pswpout"), "{text}");
    // Nothing left: no mount, no swap device of the set-up.
    let mounts = std::fs::read_to_string("/proc/mounts").unwrap();
    assert!(!mounts.contains("vmscale-setup"), "{mounts}");
}

/// swapin: the task's written memory goes out to swap before the timed
/// read (paged out by the task, or pushed where the kernel cannot), and
/// the read brings it back in: pswpout covers at least half of what was
/// written, and the read swapped pages in, major faults of its cgroup.
#[test]
fn swapin_pages_its_memory_out_and_reads_it_back_in() {
    let Some(run) = run_in_room("swapin", "a memory cgroup and swap") else {
        return;
    };
    let v = &run.v;
    let written = per_task(v, 0) / page();
    let out = vmstat(v, 0, "pswpout") as f64;
    assert!(out >= written / 2.0, "{out} of {written}: {}", sample(v, 0));
    assert!(vmstat(v, 0, "pswpin") > 0, "{}", sample(v, 0));
    assert!(fig(v, 0, "memcg.pgmajfault") > 0.0, "{}", sample(v, 0));
    assert!(fig(v, 0, "throughput") > 0.0, "{}", sample(v, 0));
}

fn meminfo(key: &str) -> u64 {
    std::fs::read_to_string("/proc/meminfo")
        .unwrap()
        .lines()
        .find_map(|l| l.strip_prefix(key)?.strip_prefix(':'))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .unwrap()
}

/// `run_in_room`, and the hugetlb pool after it as it was before.
fn run_giving_the_pool_back(cases: &str, needs: &str) -> Option<RoomRun> {
    let pool = meminfo("HugePages_Total");
    let run = run_in_room(cases, needs)?;
    assert_eq!(meminfo("HugePages_Total"), pool, "the pool is as it was");
    Some(run)
}

/// The -hugetlb cases write hugetlb pages from a pool the run adds to
/// nr_hugepages and gives back: a fault a huge page, not a base page,
/// and the pool as it was after the run. shm-lock-unlock's segment is
/// faulted before its tasks and credited as usemem credits it, as is
/// mremap-xread-rand-mt's grown mapping.
#[test]
fn hugetlb_shm_lock_and_mremap_cases() {
    let Some(RoomRun { _one, s: _s, v }) = run_giving_the_pool_back(
        "anon-w-seq-hugetlb,anon-cow-rand-hugetlb,shm-lock-unlock,mremap-xread-rand-mt",
        "a hugetlb pool, a page-cache file system",
    ) else {
        return;
    };
    let huge = meminfo("Hugepagesize") * 1024;
    for c in 0..2 {
        let bytes = task_bytes(&v, c);
        let written = bytes - per_task(&v, c) / 8.0;
        assert!(written > 0.0, "{}", sample(&v, c));
        // One fault a huge page written (and a few of the task's own);
        // base pages would take written / 4096.
        let faults = fig(&v, c, "minflt");
        let huge_pages = (written / huge as f64).ceil() + (per_task(&v, c) / huge as f64);
        assert!(
            faults <= huge_pages * 2.0 + 64.0,
            "{faults}: {}",
            sample(&v, c)
        );
    }
    // The pool was raised inside the run: huge pages taken from the buddy
    // allocator.
    assert!(
        vmstat(&v, 0, "htlb_buddy_alloc_success") > 0,
        "{}",
        sample(&v, 0)
    );
    // shm-lock-unlock: the segment (per_task) touched a page at a time
    // before the tasks, so more faults than the task's own writes.
    let seg_pages = per_task(&v, 2) / page();
    assert!(
        task_bytes(&v, 2) >= per_task(&v, 2) / 4.0,
        "{}",
        sample(&v, 2)
    );
    assert!(
        vmstat(&v, 2, "pgfault") as f64 >= seg_pages,
        "{}",
        sample(&v, 2)
    );
    // mremap-xread-rand-mt: usemem credits the mapping and its growth.
    assert!(
        task_bytes(&v, 3) >= per_task(&v, 3) / 4.0,
        "{}",
        sample(&v, 3)
    );
    assert!(fig(&v, 3, "throughput") > 0.0);
}

/// mincore asks about every page of a sparse file it never touches:
/// none resident, next to no faults. mincore-hugepages writes a byte to
/// each huge page of its segment, from the pool the run adds and gives
/// back: a fault a huge page, taken from the buddy allocator.
#[test]
fn mincore_cases() {
    let Some(RoomRun { _one, s: _s, v }) = run_giving_the_pool_back(
        "mincore,mincore-hugepages",
        "a page-cache file system, a hugetlb pool",
    ) else {
        return;
    };
    let pages = per_task(&v, 0) / page();
    assert!(pages > 1000.0, "{}", sample(&v, 0));
    assert_eq!(
        sample(&v, 0)["data"]["tasks"][0]["bytes"].as_f64(),
        Some(per_task(&v, 0))
    );
    assert_eq!(fig(&v, 0, "mincore.resident"), 0.0, "{}", sample(&v, 0));
    assert!(fig(&v, 0, "minflt") < pages / 10.0, "{}", sample(&v, 0));
    assert!(fig(&v, 0, "throughput") > 0.0);
    let huge = meminfo("Hugepagesize") as f64 * 1024.0;
    let written = (per_task(&v, 1) / huge).floor();
    assert!(written >= 1.0, "{}", sample(&v, 1));
    assert_eq!(sample(&v, 1)["data"]["tasks"].as_array().unwrap().len(), 1);
    let faults = fig(&v, 1, "minflt");
    assert!(
        faults <= written * 2.0 + 64.0,
        "{faults}: {}",
        sample(&v, 1)
    );
    assert!(
        vmstat(&v, 1, "htlb_buddy_alloc_success") as f64 >= written,
        "{}",
        sample(&v, 1)
    );
}

/// remap reverses every page of its file with remap_file_pages(2): a
/// call a page, each populating its page again (a fault each).
#[test]
fn remap_remaps_every_page_in_reverse() {
    let Some(RoomRun { _one, s: _s, v }) = run_in_room("remap", "a page-cache file system") else {
        return;
    };
    let pages = per_task(&v, 0) / page();
    assert!(pages > 1000.0, "{}", sample(&v, 0));
    assert_eq!(fig(&v, 0, "remap.calls"), pages, "{}", sample(&v, 0));
    assert_eq!(
        sample(&v, 0)["data"]["tasks"][0]["bytes"].as_f64(),
        Some(per_task(&v, 0))
    );
    assert!(fig(&v, 0, "minflt") >= pages, "{}", sample(&v, 0));
    assert!(fig(&v, 0, "throughput") > 0.0);
}

/// ksm-hugepages needs the script's knobs: without them it is refused
/// naming each `--knob`; with them its mappings are backed by huge pages
/// when ksmd starts on them, ksmd scans, and every knob is as it was
/// after the run.
#[test]
fn ksm_hugepages_sets_the_scripts_knobs_and_restores_them() {
    const KNOBS: [(&str, &str); 5] = [
        ("thp", "/sys/kernel/mm/transparent_hugepage/enabled"),
        ("ksm_run", "/sys/kernel/mm/ksm/run"),
        ("ksm_pages_to_scan", "/sys/kernel/mm/ksm/pages_to_scan"),
        ("ksm_sleep_millisecs", "/sys/kernel/mm/ksm/sleep_millisecs"),
        (
            "khugepaged_scan_sleep",
            "/sys/kernel/mm/transparent_hugepage/khugepaged/scan_sleep_millisecs",
        ),
    ];
    if !is_root() || !std::path::Path::new(KNOBS[1].1).exists() {
        common::skip("needs root and KSM: the script's knobs");
        return;
    }
    let _one = room();
    let s = Scratch::new("vms-ksm-huge");
    let read = || -> Vec<String> {
        KNOBS
            .iter()
            .map(|(_, f)| std::fs::read_to_string(f).unwrap_or_default())
            .collect()
    };
    let before = read();
    let o = s.vmscale(&["run", "vms", "--case", "ksm-hugepages", "--size", "1/512"]);
    let e = stderr(&o);
    // Refused unless THP is always and ksmd runs already.
    if !(before[0].contains("[always]") && before[1].trim() == "1") {
        assert_eq!(o.status.code(), Some(2), "{e}");
        assert!(
            e.contains("--knob thp=always") || e.contains("--knob ksm_run=1"),
            "{e}"
        );
        assert!(!s.db().exists());
    }
    let knobs = [
        "thp=always",
        "ksm_run=1",
        "ksm_pages_to_scan=1000",
        "ksm_sleep_millisecs=20",
        "khugepaged_scan_sleep=0",
    ];
    let mut args = vec!["--case", "ksm-hugepages", "--tasks", "2"];
    for k in &knobs {
        args.extend(["--knob", k]);
    }
    let mut all = vec!["run", "vms"];
    all.extend(args);
    all.extend(["--size", "1/512", "--runtime", "2", "--reps", "1"]);
    all.extend(["--warmup", "0", "--json"]);
    let v = json(&s.vmscale(&all));
    assert!(fig(&v, 0, "ksm.huge_bytes") > 0.0, "{}", sample(&v, 0));
    assert!(fig(&v, 0, "ksm.pages_scanned") > 0.0, "{}", sample(&v, 0));
    assert!(fig(&v, 0, "throughput") >= 0.0);
    assert_eq!(read(), before, "the knobs are as they were");
}

/// lkp's -swap variants under THP always and never: one run with the
/// knob varied, each variant swapping out in its cgroup (the case's
/// workers forked by the set-up's child once opened /dev/zero under the
/// number of the knob lock the child had closed, and closed it again:
/// mmap failed with EBADF).
#[test]
fn swap_cases_run_under_the_thp_knob() {
    let Some(RoomRun { _one, s: _s, v }) = run_in_room_with(
        "swap-w-seq",
        "the set-up room and the THP knob",
        &["--knob", "thp=always,never"],
    ) else {
        return;
    };
    let mut seen = Vec::new();
    for (c, case) in v["cases"].as_array().unwrap().iter().enumerate() {
        seen.push(case["case"]["knobs"]["thp"].as_str().unwrap().to_string());
        assert!(vmstat(&v, c, "pswpout") > 0, "{}", sample(&v, c));
    }
    seen.sort();
    assert_eq!(seen, ["always", "never"]);
}

/// fork and fork-sleep fork the script's 20000 children scaled by
/// --size, all reaped; each child faults in what it writes of its copy.
#[test]
fn fork_cases_fork_the_scaled_count() {
    let s = Scratch::new("vms-fork");
    let v = run(&s, "fork,fork-sleep", &["--tasks", "1"]);
    let scale = v["meta"]["config"]["sizes"]["scale"].as_f64().unwrap();
    let want = (20000.0 * scale).round();
    for c in 0..2 {
        assert_eq!(fig(&v, c, "fork.children"), want, "{}", sample(&v, c));
        assert!(fig(&v, c, "minflt") >= want, "{}", sample(&v, c));
        assert!(fig(&v, c, "fork.per_s") > 0.0);
    }
}

/// truncate-seq: one task truncates every file it read in; posix-fadvise:
/// WILLNEED reads pages in (the cgroup charged), DONTNEED drops them.
#[test]
fn truncate_seq_and_posix_fadvise() {
    let Some(RoomRun { _one, s: _s, v }) = run_in_room(
        "truncate-seq,posix-fadvise",
        "a page-cache file system, a memory cgroup",
    ) else {
        return;
    };
    let tasks = sample(&v, 0)["data"]["tasks"].as_array().unwrap();
    assert_eq!(tasks.len(), 1, "one task truncates them all");
    let file = v["meta"]["config"]["plans"][0]["amount"]["file"]
        .as_f64()
        .unwrap();
    let files = v["meta"]["config"]["plans"][0]["tasks"].as_f64().unwrap();
    assert_eq!(tasks[0]["bytes"].as_f64().unwrap(), file * files);
    assert!(fig(&v, 0, "throughput") > 0.0);
    let read = fig(&v, 1, "memcg.pgpgin");
    assert!(read > 0.0, "{}", sample(&v, 1));
    assert!(
        fig(&v, 1, "memcg.pgpgout") >= read * 0.9,
        "{}",
        sample(&v, 1)
    );
}

/// hugetlb grows the pool by mem/3 in huge pages and gives it back (the
/// kernel's allocations counted, the pool as it was after); direct-write's
/// O_DIRECT writes reach the block device (pgpgout, KiB) without dirtying
/// the page cache a page each.
#[test]
fn hugetlb_pool_and_direct_write() {
    let Some(RoomRun { _one, s: _s, v }) = run_giving_the_pool_back(
        "hugetlb,direct-write",
        "the hugetlb pool, a page-cache file system",
    ) else {
        return;
    };
    let sizes = &v["meta"]["config"]["sizes"];
    let (mem, huge) = (
        sizes["mem"].as_f64().unwrap(),
        sizes["huge_page"].as_f64().unwrap(),
    );
    assert_eq!(
        fig(&v, 0, "hugetlb.asked"),
        (mem / 3.0 / huge).floor().max(1.0)
    );
    let got = fig(&v, 0, "hugetlb.got");
    assert!(got <= fig(&v, 0, "hugetlb.asked"), "{}", sample(&v, 0));
    assert!(
        vmstat(&v, 0, "htlb_buddy_alloc_success") as f64 >= got,
        "{}",
        sample(&v, 0)
    );
    let written = task_bytes(&v, 1);
    assert!(written > 0.0, "{}", sample(&v, 1));
    let out = vmstat(&v, 1, "pgpgout") as f64 * 1024.0;
    assert!(
        out >= written * 0.9,
        "{out} of {written}: {}",
        sample(&v, 1)
    );
    let dirtied = vmstat(&v, 1, "nr_dirtied") as f64;
    assert!(dirtied < written / page() / 2.0, "{}", sample(&v, 1));
}

/// The journal of the one set-up a run in `state` made so far.
fn journal(state: &std::path::Path) -> Option<Record> {
    let dir = state.join("setup");
    let file = std::fs::read_dir(dir)
        .ok()?
        .flatten()
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|x| x == "journal"))?;
    serde_json::from_str(&std::fs::read_to_string(file).ok()?).ok()
}

/// Bytes charged to a cgroup (v2 memory.current, v1 memory.usage_in_bytes).
fn charged(cg: &std::path::Path) -> u64 {
    ["memory.current", "memory.usage_in_bytes"]
        .iter()
        .find_map(|f| std::fs::read_to_string(cg.join(f)).ok())
        .and_then(|t| t.trim().parse().ok())
        .unwrap_or(0)
}

/// Starts `vmscale run vms --case CASE` for many samples in the private
/// state directory `state`, waits until the case is running (its set-up
/// journaled with every step `wanted`, a process of the case in the
/// cgroup with memory charged to it) and kills vmscale with SIGKILL.
/// Returns the journal as it was then and the pids the cgroup held.
fn kill_mid_case(
    s: &Scratch,
    state: &std::path::Path,
    case: &str,
    wanted: &[&str],
) -> (Record, Vec<u32>) {
    use std::process::{Command, Stdio};
    let mut child = Command::new(env!("CARGO_BIN_EXE_vmscale"))
        .args([
            "run", "vms", "--case", case, "--tasks", "2", "--size", "1/256",
        ])
        .args(["--runtime", "30", "--reps", "1000", "--warmup", "0"])
        .env("VMSCALE_STATE_DIR", state)
        .env("VMSCALE_DB", s.db())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let kind = |st: &Step| {
        serde_json::to_value(st).unwrap()["kind"]
            .as_str()
            .unwrap()
            .to_string()
    };
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(180);
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            let mut err = String::new();
            std::io::Read::read_to_string(child.stderr.as_mut().unwrap(), &mut err).unwrap();
            panic!("{case}: vmscale ended ({status}) before it was killed: {err}");
        }
        assert!(
            std::time::Instant::now() < deadline,
            "{case}: not running after 180 s: {:?}",
            journal(state)
        );
        if let Some(rec) = journal(state) {
            let kinds: Vec<String> = rec.steps.iter().map(kind).collect();
            let cg = rec.steps.iter().find_map(|st| match st {
                Step::Cgroup { path } => Some(path.clone()),
                _ => None,
            });
            if let Some(cg) = cg
                && wanted.iter().all(|w| kinds.iter().any(|k| k == w))
            {
                let pids: Vec<u32> = std::fs::read_to_string(cg.join("cgroup.procs"))
                    .unwrap_or_default()
                    .lines()
                    .filter_map(|l| l.trim().parse().ok())
                    .collect();
                if !pids.is_empty() && charged(&cg) > 1 << 20 {
                    // SAFETY: kill(2) on our own child's pid.
                    assert_eq!(unsafe { libc::kill(child.id() as i32, libc::SIGKILL) }, 0);
                    child.wait().unwrap();
                    return (rec, pids);
                }
            }
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// SIGKILL in the middle of a memcg, a swap and a page-cache case of
/// `vmscale run vms`: after `vmscale restore`, or the next start of any
/// command, no mount, loop device, cgroup, swap device, zram device, file
/// in the state directory or process of the run is left.
#[test]
fn killed_mid_case_leaves_nothing_after_restore_or_the_next_start() {
    use crate::common::room::*;
    if !is_root() {
        common::skip("needs root: the cases' set-up room");
        return;
    }
    let _one = room();
    let cases: [(&str, &[&str], &str); 3] = [
        ("lru-memcg", &["mount", "cgroup"], "restore"),
        ("swap-w-seq", &["cgroup", "swap_on"], "list"),
        ("lru-file-readonce", &["mount", "cgroup"], "restore"),
    ];
    for (case, wanted, then) in cases {
        let s = Scratch::new("vms-kill");
        let state = private_state(&s.dir);
        let (rec, pids) = kill_mid_case(&s, &state, case, wanted);
        // The case's processes die with vmscale (PR_SET_PDEATHSIG).
        let gone = |pid: &u32| {
            std::fs::read_to_string(format!("/proc/{pid}/stat"))
                .map_or(true, |t| t.contains(") Z "))
        };
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
        while !pids.iter().all(gone) {
            assert!(
                std::time::Instant::now() < deadline,
                "{case}: the case's processes {pids:?} outlived the run"
            );
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        // The kill left the set-up: its journal names what to undo.
        assert!(
            journal(&state).is_some(),
            "{case}: no journal after the kill"
        );
        if wanted.contains(&"mount") {
            assert_eq!(
                mounts_below(&state).len(),
                2,
                "{case}: the tmpfs and the ext4"
            );
        }
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_vmscale"))
            .arg(then)
            .env("VMSCALE_STATE_DIR", &state)
            .env("VMSCALE_DB", s.db())
            .output()
            .unwrap();
        let said = format!("{}{}", common::stdout(&out), stderr(&out));
        assert!(out.status.success(), "{case}: {then}: {said}");
        assert!(said.contains("removed cgroup"), "{case}: {said}");
        assert!(mounts_below(&state).is_empty(), "{case}: {said}");
        assert!(loops_below(&state).is_empty(), "{case}: {said}");
        for st in &rec.steps {
            match st {
                Step::Cgroup { path } => assert!(!path.exists(), "{case}: {path:?} left"),
                Step::SwapOn { device } => {
                    let d = device.display().to_string();
                    assert!(!swaps().contains(&d), "{case}: {d} still swapped on");
                }
                Step::Zram { id: Some(id), .. } => {
                    let dev = format!("/sys/block/zram{id}");
                    assert!(!std::path::Path::new(&dev).exists(), "{case}: {dev} left");
                }
                _ => {}
            }
        }
        let files: Vec<_> = std::fs::read_dir(state.join("setup"))
            .map(|d| d.flatten().map(|e| e.file_name()).collect())
            .unwrap_or_default();
        assert!(files.is_empty(), "{case}: {files:?} left in the state dir");
    }
}

/// The one measured sample of the guest's run labelled `label`.
fn guest_sample(db: &std::path::Path, label: &str) -> serde_json::Value {
    let v = json(&common::vmscale_with_db(db, &["show", label, "--json"]));
    let case = &v["cases"][0];
    case["samples"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["warmup"] == false)
        .unwrap_or_else(|| panic!("{label}: no measured sample: {v}"))
        .clone()
}

/// In a 2 GiB TCG guest of two nodes (Debian's cloud kernel: the set-up
/// room's loop, zram and cgroup v2 inside, vmscale's own machinery): a
/// page-cache case under its cgroup's memory.max reclaims (the cgroup's
/// own pgscan and pgsteal), a swap case swaps out, and migrate, which
/// needs two nodes, moves pages between them. One boot for all three.
#[test]
fn in_a_two_node_guest_page_cache_reclaims_swap_swaps_out_and_migrate_moves() {
    use crate::common::guest::{available, guest, kernels, s};
    if !available("vms in a guest") {
        return;
    }
    let sc = Scratch::new("vms-guest");
    let out = sc.dir.join("out");
    let mut args = vec![
        "--kernel",
        s(&kernels()[1]),
        "--accel",
        "tcg",
        "--cpus",
        "2",
        "--nodes",
        "2",
        "--mem",
        "2G",
        // One bound for the whole boot, not the 130 s to init a loaded
        // host's starved TCG guest can exceed.
        "--timeout",
        "20m",
        "--label",
        "vm",
        "--out",
        s(&out),
        "--",
    ];
    // Pressure that does not depend on the guest's speed (under TCG a task
    // read 50 MB/s on a quiet host and 3.4 MB/s on a loaded one, where
    // QEMU runs at the test's nice 19): swap-w-seq's one pass ends when
    // it has written (avail + swap) * 3/4, 21 MB at 1/128, more than its
    // cgroup (mem_avail, ~13 MiB), so its runtime only bounds a hang; the
    // page-cache case reads until its runtime, and 15 s exceeds its ~7.5
    // MiB cgroup (the modelled mem at 1/256) down to 0.5 MB/s.
    for (i, (case, label, size, runtime)) in [
        ("lru-file-readonce", "pc", "1/256", "15"),
        ("swap-w-seq", "swap", "1/128", "600"),
        ("migrate", "migrate", "1/16", "3"),
        ("mbind", "mbind", "1/16", "3"),
        ("migrate-across-nodes", "across", "1/16", "3"),
    ]
    .iter()
    .enumerate()
    {
        if i > 0 {
            args.push("---");
        }
        args.extend(["run", "vms", "--case", case, "--label", label]);
        args.extend(["--tasks", "1", "--size", size, "--runtime", runtime]);
        args.extend(["--reps", "1", "--warmup", "0"]);
        // NUMA balancing moves a page back to its task's node when
        // get_mempolicy looks it up (seen: every page of
        // migrate-across-nodes found off its node, numa_pages_migrated
        // as many): these two check where the pages were sent.
        if ["mbind", "migrate-across-nodes"].contains(case) {
            args.extend(["--knob", "numa_balancing=0"]);
        }
    }
    let o = guest(&sc.db(), &args);
    ok(&o);
    let results = out.join("round-1/kernel-1/results");
    for k in 1..=5 {
        let read = |f: &str| std::fs::read_to_string(results.join(f)).unwrap_or_default();
        let err = read(&format!("step-{k}.err"));
        assert_eq!(
            read(&format!("step-{k}.status")).trim(),
            "0",
            "step {k}: {err}"
        );
    }
    // The page-cache case: its cgroup (v2 in the guest) hit memory.max
    // and its own reclaim scanned and stole pages.
    let pc = guest_sample(&sc.db(), "vm/pc");
    for k in ["memcg.events.max", "memcg.pgscan", "memcg.pgsteal"] {
        assert!(common::fig(&pc, k) > 0.0, "{k}: {pc}");
    }
    assert!(
        pc["vmstat"]["pgscan_file"].as_i64().unwrap_or(0) > 0,
        "{pc}"
    );
    // The swap case: pages written to swap.
    let sw = guest_sample(&sc.db(), "vm/swap");
    assert!(sw["vmstat"]["pswpout"].as_i64().unwrap_or(0) > 0, "{sw}");
    assert!(common::fig(&sw, "memcg.events.max") > 0.0, "{sw}");
    // migrate: pages moved between the two nodes.
    // migrate: pages moved between the two nodes, as the kernel counted
    // them within the sample's own vmstat window.
    let mg = guest_sample(&sc.db(), "vm/migrate");
    assert!(common::fig(&mg, "migrate.calls") > 0.0, "{mg}");
    let moved = common::fig(&mg, "migrate.pages");
    assert!(moved > 0.0, "{mg}");
    let counted = mg["vmstat"]["pgmigrate_success"].as_i64().unwrap_or(0) as f64;
    assert!(moved <= counted, "{moved} pages > pgmigrate_success: {mg}");
    assert!(common::fig(&mg, "throughput") > 0.0, "{mg}");
    // mbind binds its task's pages to node 1, moving every one of them;
    // migrate-across-nodes moves each page to node 1 and back; each page
    // is found where it was sent, holding its byte (NUMA balancing off).
    for label in ["vm/mbind", "vm/across"] {
        let v = json(&common::vmscale_with_db(
            &sc.db(),
            &["show", label, "--json"],
        ));
        let per_task = v["meta"]["config"]["plans"][0]["amount"]["per_task"]
            .as_f64()
            .unwrap();
        let m = guest_sample(&sc.db(), label);
        assert_eq!(common::fig(&m, "nodes.misplaced"), 0.0, "{m}");
        let moved = m["vmstat"]["pgmigrate_success"].as_i64().unwrap_or(0) as f64;
        assert!(per_task > 0.0 && moved >= per_task / page(), "{m}");
    }
}
