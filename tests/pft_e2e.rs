//! End-to-end tests of `run pft`, `show` and `list` on the real binary,
//! with tens of MiB: measured counts, store contents, reproduction.

use crate::common::*;

fn figure(case: &serde_json::Value, sample: usize, name: &str) -> f64 {
    case["samples"][sample]["data"]["figures"][name]
        .as_f64()
        .unwrap_or(f64::NAN)
}

/// Measured faults (rusage) equal pages touched within 2 %, in both modes.
#[test]
fn measured_faults_match_pages_touched_in_both_modes() {
    let s = Scratch::new("faults");
    for mode in ["thread", "process"] {
        let run = json(&s.vmscale(&[
            "run", "pft", "--tasks", "1,2", "--size", "32M", "--mode", mode, "--reps", "2",
            "--json",
        ]));
        assert_eq!(run["meta"]["status"], "complete");
        let cases = run["cases"].as_array().unwrap();
        assert_eq!(cases.len(), 2);
        for c in cases {
            let tasks = c["case"]["tasks"].as_u64().unwrap() as usize;
            let samples = c["samples"].as_array().unwrap();
            assert_eq!(samples.len(), 3, "one warm-up and two measured samples");
            for (i, sample) in samples.iter().enumerate() {
                let pages = figure(c, i, "pages");
                let faults = figure(c, i, "faults");
                assert_eq!(
                    pages,
                    (32u64 << 20) as f64 / 4096.0 / tasks as f64 * tasks as f64
                );
                assert!(
                    (faults - pages).abs() / pages <= 0.02,
                    "{mode}: {faults} faults for {pages} pages"
                );
                let per_task = sample["data"]["tasks"].as_array().unwrap();
                assert_eq!(per_task.len(), tasks);
                let pgfault = sample["vmstat"]["pgfault"].as_i64().unwrap_or(0) as f64;
                assert!(
                    pgfault >= faults,
                    "vmstat pgfault {pgfault} < rusage {faults}"
                );
                // vmscale's own faults (its and its children's rusage
                // across the sample) include the tasks'; the perf counter
                // is not opened without --perf-faults.
                let own = sample["noise"]["own_faults"].as_f64().unwrap_or(0.0);
                assert!(own >= faults, "{mode}: own faults {own} < tasks' {faults}");
                assert!(sample["data"]["figures"]["kfaults"].is_null(), "{sample}");
            }
        }
    }
}

/// `show` reprints exactly what `run` printed.
#[test]
fn show_reproduces_the_run_output() {
    let s = Scratch::new("show");
    let printed = ok(&s.vmscale(&[
        "run",
        "pft",
        "--tasks",
        "1-2",
        "--size",
        "16M",
        "--reps",
        "2",
        "--populate",
        "--label",
        "t1",
    ]));
    assert!(printed.contains("Gb Rep  Thr CLine"), "{printed}");
    assert!(printed.contains("Populate limit"), "{printed}");
    for name in ["last", "t1", "1"] {
        assert_eq!(ok(&s.vmscale(&["show", name])), printed, "show {name}");
    }
}

/// What the store holds after a run: the run row, every sample with its
/// vmstat delta, the machine snapshot and the command line.
#[test]
fn store_holds_run_samples_and_snapshot() {
    let s = Scratch::new("store");
    ok(&s.vmscale(&[
        "run", "pft", "--tasks", "2", "--size", "16M", "--reps", "3", "--mode", "process",
    ]));
    let list = json(&s.vmscale(&["list", "--json"]));
    let runs = list.as_array().unwrap();
    assert_eq!(runs.len(), 1);
    assert_eq!(runs[0]["status"], "complete");
    assert_eq!(runs[0]["samples"], 3);
    assert!(
        runs[0]["command_line"]
            .as_str()
            .unwrap()
            .contains("--size 16M")
    );

    let run = json(&s.vmscale(&["show", "last", "--json"]));
    let meta = &run["meta"];
    assert_eq!(meta["workload"], "pft");
    assert_eq!(meta["config"]["mode"], "process");
    assert!(!meta["machine"]["cpus"].as_array().unwrap().is_empty());
    assert!(meta["ended_at"].is_string());
    let samples = run["cases"][0]["samples"].as_array().unwrap();
    assert_eq!(samples.iter().filter(|s| s["warmup"] == true).count(), 1);
    for smp in samples {
        assert!(smp["vmstat"]["pgfault"].as_i64().unwrap() > 0);
        assert!(smp["data"]["figures"]["wall"].as_f64().unwrap() > 0.0);
    }
}

/// The kernel-only populate path makes resident exactly the pages asked.
#[test]
fn populate_variant_counts_resident_pages() {
    let s = Scratch::new("populate");
    let run = json(&s.vmscale(&[
        "run",
        "pft",
        "--tasks",
        "1",
        "--size",
        "8M",
        "--reps",
        "1",
        "--populate",
        "--json",
    ]));
    let pop = run["cases"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["case"]["variant"] == "populate")
        .expect("populate case");
    assert_eq!(figure(pop, 1, "pages"), 2048.0);
}

/// Every bad input: exit 2, a message naming the fix, nothing stored.
#[test]
fn bad_input_exits_2_and_stores_nothing() {
    let s = Scratch::new("bad");
    let cases: &[(&[&str], &str)] = &[
        (
            &["run", "pft", "--tasks", "0", "--size", "8M"],
            "smallest is 1",
        ),
        (
            &["run", "pft", "--mode", "fibre", "--size", "8M"],
            "possible values: thread, process",
        ),
        (&["run", "pft", "--cline", "0", "--size", "8M"], "use 1 to"),
        (
            &["run", "pft", "--cline", "65", "--size", "8M"],
            "use 1 to 64",
        ),
        (&["run", "pft", "--size", "lots"], "cannot parse size"),
        (&["run", "pft", "--size", "8X"], "unknown unit"),
        (&["run", "pft", "--size", "64T"], "can be used safely"),
        (
            &["run", "pft", "--size", "8M", "--pin", "4096"],
            "not online",
        ),
        (&["run", "pft", "--size", "8M", "--reps", "0"], "--reps 0"),
    ];
    for (args, needle) in cases {
        let o = s.vmscale(args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        assert!(stderr(&o).contains(needle), "{args:?}: {}", stderr(&o));
    }
    assert!(!s.db().exists(), "a refused run must not create the store");
    // With a store present, refused runs still add nothing, and an unknown run id is exit 2.
    ok(&s.vmscale(&["run", "pft", "--tasks", "1", "--size", "8M", "--reps", "1"]));
    let o = s.vmscale(&["run", "pft", "--size", "64T"]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        json(&s.vmscale(&["list", "--json"]))
            .as_array()
            .unwrap()
            .len(),
        1
    );
    for bad in ["42", "last~5", "nosuchlabel"] {
        let o = s.vmscale(&["show", bad]);
        assert_eq!(o.status.code(), Some(2), "show {bad}");
        assert!(stderr(&o).contains("vmscale list"), "{}", stderr(&o));
    }
}

/// The size-refusal message carries both numbers.
#[test]
fn memory_refusal_names_the_numbers() {
    let s = Scratch::new("mem");
    let o = s.vmscale(&["run", "pft", "--size-per-task", "16T", "--tasks", "1"]);
    assert_eq!(o.status.code(), Some(2));
    let e = stderr(&o);
    assert!(
        e.contains("needs 16 TiB") && e.contains("MemAvailable"),
        "{e}"
    );
}

/// Starts a long pft run, waits (bounded) until `min_samples` are in the
/// store, sends `signal` with kill(1), and returns the output and the count
/// of samples stored before the signal.
fn interrupt_long_run(
    s: &Scratch,
    size: &str,
    min_samples: i64,
    signal: &str,
) -> (std::process::Output, i64) {
    let child = std::process::Command::new(env!("CARGO_BIN_EXE_vmscale"))
        .args([
            "run", "pft", "--tasks", "1", "--size", size, "--reps", "100000",
        ])
        .env("VMSCALE_DB", s.db())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stored = 0;
    for _ in 0..600 {
        std::thread::sleep(std::time::Duration::from_millis(50));
        if let Ok(conn) = rusqlite::Connection::open(s.db()) {
            stored = conn
                .query_row("SELECT COUNT(*) FROM samples", [], |r| r.get::<_, i64>(0))
                .unwrap_or(0);
            if stored >= min_samples {
                break;
            }
        }
    }
    assert!(stored >= min_samples, "no samples appeared");
    let sent = std::process::Command::new("kill")
        .args([signal, &child.id().to_string()])
        .status()
        .unwrap();
    assert!(sent.success());
    (child.wait_with_output().unwrap(), stored)
}

/// SIGINT mid-run keeps the samples taken and marks the run incomplete.
#[test]
fn sigint_keeps_samples_and_marks_incomplete() {
    let s = Scratch::new("sigint");
    let (out, stored) = interrupt_long_run(&s, "16M", 3, "-INT");
    assert_eq!(out.status.code(), Some(130), "{}", stderr(&out));
    let run = json(&s.vmscale(&["show", "last", "--json"]));
    assert_eq!(run["meta"]["status"], "incomplete");
    assert!(run["meta"]["note"].as_str().unwrap().contains("SIGINT"));
    let kept = run["cases"][0]["samples"].as_array().unwrap().len() as i64;
    assert!(kept >= stored, "kept {kept} of {stored}");
    assert!(stdout(&out).contains("incomplete"));
}

/// A closed terminal (SIGHUP) ends the run like Ctrl-C: samples kept, run
/// incomplete, and (with --knob) the knobs restored by the same path.
#[test]
fn sighup_marks_incomplete_instead_of_killing() {
    let s = Scratch::new("sighup");
    let (out, _) = interrupt_long_run(&s, "8M", 1, "-HUP");
    assert_eq!(out.status.code(), Some(130), "{}", stderr(&out));
    let run = json(&s.vmscale(&["show", "last", "--json"]));
    assert_eq!(run["meta"]["status"], "incomplete");
    assert!(run["meta"]["note"].as_str().unwrap().contains("SIGHUP"));
}

/// `last~N` takes a count of runs back, never a negative one.
#[test]
fn negative_last_offset_is_refused() {
    let s = Scratch::new("lastneg");
    ok(&s.vmscale(&["run", "pft", "--tasks", "1", "--size", "8M", "--reps", "1"]));
    let o = s.vmscale(&["show", "last~-1"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(!ok(&s.vmscale(&["show", "last~0"])).is_empty());
}
