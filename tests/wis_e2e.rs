//! End-to-end tests of `run wis` (will-it-scale's VM tests) and
//! `run mmap-lock` on small sizes: operations and faults counted, faults
//! per operation as each test's kernel path dictates, TLB shootdowns seen
//! when threads share an address space, both mmap-lock rates printed.

use crate::common::*;

fn cases(run: &serde_json::Value) -> Vec<serde_json::Value> {
    run["cases"].as_array().unwrap().clone()
}

fn wis(s: &Scratch, test: &str, extra: &[&str]) -> serde_json::Value {
    let mut args = vec![
        "run", "wis", "--test", test, "--time", "0.2", "--every", "0.05", "--reps", "1",
        "--warmup", "0", "--json",
    ];
    args.extend_from_slice(extra);
    json(&s.vmscale(&args))
}

#[test]
fn tlb_flush_counts_two_faults_per_op_and_shootdowns_between_threads() {
    let s = Scratch::new("wis-tlb");
    let run = wis(&s, "tlb_flush2", &["--tasks", "2", "--mode", "thread"]);
    let c = &cases(&run)[0];
    assert_eq!(c["case"]["variant"], "thread");
    for sample in measured(c) {
        // A write fault, then MADV_DONTNEED, then a read fault of the zero page.
        let per_op = fig(&sample, "faults/op");
        assert!((per_op - 2.0).abs() <= 0.04, "{per_op} faults per op");
        assert!(fig(&sample, "ops") > 0.0);
        assert!(sample["data"]["figures"]["series/001/t"].as_f64().unwrap() > 0.0);
        match sample["data"]["figures"]["shootdowns"].as_f64() {
            Some(n) => assert!(n > 0.0, "no TLB shootdowns between two threads"),
            None => eprintln!("no TLB line in /proc/interrupts on this kernel"),
        }
    }
}

#[test]
fn page_faults_and_mmap_take_the_faults_their_paths_take() {
    let s = Scratch::new("wis-pf");
    let thp =
        std::fs::read_to_string("/sys/kernel/mm/transparent_hugepage/enabled").unwrap_or_default();
    for test in ["page_fault1", "page_fault2", "page_fault3"] {
        let run = wis(
            &s,
            test,
            &["--tasks", "1", "--size", "4M", "--mode", "process"],
        );
        for c in cases(&run) {
            for sample in measured(&c) {
                let per_op = fig(&sample, "faults/op");
                if test == "page_fault1" && thp.contains("[always]") {
                    assert!(per_op < 1.0, "THP always: fewer faults than pages");
                } else {
                    assert!((per_op - 1.0).abs() <= 0.02, "{test}: {per_op}");
                }
            }
        }
    }
    let run = wis(&s, "mmap1", &["--tasks", "1,2", "--size", "4M"]);
    assert_eq!(cases(&run).len(), 4, "process and thread, 1 and 2 tasks");
    for c in cases(&run) {
        for sample in measured(&c) {
            // mmap1 touches nothing: a touch would be a fault per op. The
            // task's own few faults (its stack, the shared report block
            // after a fork) are a fixed count, spread over fewer ops when
            // the machine is loaded.
            let (ops, faults) = (fig(&sample, "ops"), fig(&sample, "faults"));
            assert!(ops >= 256.0);
            assert!(faults < 0.1 * ops, "mmap1: {faults} faults in {ops} ops");
        }
    }
    let out = ok(&s.vmscale(&["show", "last"]));
    assert!(
        out.contains("wis mmap1") && out.contains("shootdn/s"),
        "{out}"
    );
    assert!(out.lines().all(|l| l.chars().count() <= 80), "{out}");
}

#[test]
fn brk_tests_move_the_break_in_rounds_of_two_without_faults() {
    let s = Scratch::new("wis-brk");
    // brk2 without --mode: its default (auto) is processes alone, and the
    // plan says so.
    let plan = ok(&s.vmscale(&["run", "wis", "--test", "brk2", "--dry-run"]));
    assert!(plan.contains("brk2 in processes alone"), "{plan}");
    for (test, mode) in [("brk1", &["--mode", "process"][..]), ("brk2", &[])] {
        let run = wis(&s, test, &[&["--tasks", "1,2"][..], mode].concat());
        assert_eq!(cases(&run).len(), 2, "{test}: 1 and 2 tasks");
        for c in cases(&run) {
            assert_eq!(c["case"]["variant"], "process", "{test}");
            for sample in measured(&c) {
                // Whole passes of 256 rounds, up and down: 512 ops each.
                let (ops, faults) = (fig(&sample, "ops"), fig(&sample, "faults"));
                assert!(ops >= 512.0 && ops % 512.0 == 0.0, "{test}: {ops} ops");
                assert!(faults < 0.1 * ops, "{test}: {faults} faults in {ops} ops");
            }
        }
    }
}

#[test]
fn file_tests_time_passes_over_a_file_already_in_the_page_cache() {
    // Each task's file is kept for the run and its first pass (the one
    // that allocates and dirties the page cache) made before any sample,
    // as will-it-scale's warm-up makes it: the timed passes dirty no page
    // of it anew. The 2-task case adds a second file to the first.
    let s = Scratch::new("wis-file");
    // SAFETY: sysconf only reads a configuration value.
    let pages = (4 << 20) as f64 / unsafe { libc::sysconf(libc::_SC_PAGESIZE) } as f64;
    for mode in ["thread", "process"] {
        let run = wis(
            &s,
            "page_fault3",
            &["--tasks", "1,2", "--size", "4M", "--mode", mode],
        );
        for c in cases(&run) {
            let tasks = c["case"]["tasks"].as_f64().unwrap();
            for sample in measured(&c) {
                assert!(fig(&sample, "ops") >= pages * tasks, "a pass per task");
                let dirtied = fig(&sample, "dirtied");
                assert!(dirtied < pages / 2.0, "{mode}: {dirtied} pages dirtied");
            }
        }
    }
}

#[test]
fn tasks_run_without_address_space_randomisation_unless_asked() {
    // will-it-scale's runtest.py runs its tests under `setarch -R`: vmscale
    // runs itself again without randomisation, and the run says what its
    // tasks had. `--aslr on` keeps the machine's setting.
    let s = Scratch::new("wis-aslr");
    let machine = std::fs::read_to_string("/proc/sys/kernel/randomize_va_space")
        .is_ok_and(|v| v.trim() != "0");
    let plan = ok(&s.vmscale(&["run", "wis", "--test", "malloc2", "--dry-run"]));
    assert!(plan.contains("setarch -R"), "{plan}");
    let args = ["--tasks", "1", "--mode", "process"];
    let fixed = wis(&s, "malloc2", &args);
    assert_eq!(fixed["meta"]["config"]["randomised"], false, "{fixed}");
    assert_eq!(fixed["meta"]["config"]["aslr"], "off");
    let out = ok(&s.vmscale(&["show", "last"]));
    assert!(out.contains("no address-space randomisation"), "{out}");
    let as_is = wis(&s, "malloc2", &[&args[..], &["--aslr", "on"]].concat());
    assert_eq!(as_is["meta"]["config"]["randomised"], machine, "{as_is}");
    for run in [fixed, as_is] {
        assert!(
            measured(&cases(&run)[0])
                .iter()
                .all(|s| fig(s, "ops") > 0.0)
        );
    }
}

#[test]
fn bad_wis_input_is_refused() {
    let s = Scratch::new("wis-bad");
    for (args, says) in [
        (
            vec!["--test", "futex1"],
            "invalid value 'futex1' for '--test",
        ),
        (vec!["--test", "brk1", "--mode", "thread"], "--mode process"),
        (
            vec!["--test", "brk2", "--mode", "thread"],
            "brk2 in threads",
        ),
        (
            vec!["--test", "brk1", "--mode", "process,thread"],
            "brk1 in threads",
        ),
        (
            vec!["--test", "mmap1", "--mode", "auto,thread"],
            "--mode auto stands alone",
        ),
        (vec!["--test", "mmap1", "--time", "0"], "--time"),
    ] {
        let mut a = vec!["run", "wis"];
        a.extend(args);
        let o = s.vmscale(&a);
        assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
        assert!(stderr(&o).contains(says), "{}", stderr(&o));
    }
    assert!(!s.db().exists());
}

#[test]
fn mmap_lock_reports_both_rates_with_and_without_changers() {
    let s = Scratch::new("mmap-lock");
    let run = json(&s.vmscale(&[
        "run",
        "mmap-lock",
        "--tasks",
        "1",
        "--changers",
        "0,1",
        "--size",
        "2M",
        "--time",
        "0.2",
        "--reps",
        "1",
        "--warmup",
        "0",
        "--json",
    ]));
    let cs = cases(&run);
    assert_eq!(cs.len(), 2);
    for c in &cs {
        let m0 = c["case"]["variant"] == "m0";
        for sample in measured(c) {
            let faults = fig(&sample, "faults");
            let pages = fig(&sample, "pages");
            assert!(
                pages > 0.0 && ((faults - pages) / pages).abs() <= 0.02,
                "{faults} faults for {pages} pages"
            );
            assert!(fig(&sample, "fault/s") > 0.0);
            let changes = fig(&sample, "changes");
            if m0 {
                assert_eq!(changes, 0.0);
            } else {
                assert!(changes >= 3.0 && changes % 3.0 == 0.0, "{changes}");
                assert!(fig(&sample, "changes/s") > 0.0);
            }
        }
    }
    let out = ok(&s.vmscale(&["show", "last"]));
    assert!(
        out.contains("fault/s") && out.contains("changes/s"),
        "{out}"
    );
}
