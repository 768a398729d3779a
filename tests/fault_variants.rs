//! End-to-end tests of pft's mapping variants on a few MiB: each variant's
//! faults (rusage) agree with the kernel's perf page-fault counter
//! (`--perf-faults`) within 2 %, one-fault-per-page variants match the pages touched, file reads
//! report pages per fault, and hostile paths are refused.

use crate::common::*;

/// The measured samples of every case of a pft run.
fn samples(run: &serde_json::Value) -> Vec<(u64, serde_json::Value)> {
    let mut out = Vec::new();
    for c in run["cases"].as_array().unwrap() {
        let tasks = c["case"]["tasks"].as_u64().unwrap();
        for s in c["samples"].as_array().unwrap() {
            if s["warmup"] == false {
                out.push((tasks, s.clone()));
            }
        }
    }
    out
}

fn within(a: f64, b: f64, pct: f64) -> bool {
    b > 0.0 && ((a - b) / b).abs() * 100.0 <= pct
}

fn run_variant(s: &Scratch, extra: &[&str]) -> serde_json::Value {
    let mut args = vec![
        "run",
        "pft",
        "--tasks",
        "1,2",
        "--size",
        "8M",
        "--reps",
        "1",
        "--json",
        "--perf-faults",
    ];
    args.extend_from_slice(extra);
    json(&s.vmscale(&args))
}

#[test]
fn every_variant_agrees_with_the_kernel_counter() {
    let s = Scratch::new("variants");
    let file = s.dir.join("backing");
    let file = file.to_str().unwrap();
    let variants: Vec<(Vec<&str>, bool)> = vec![
        (vec![], true),
        (vec!["--access", "read"], true),
        (vec!["--mode", "process"], true),
        // shm is shared by definition: --shared is implied, and stored.
        (vec!["--backing", "shm"], false),
        (vec!["--backing", "memfd"], false),
        (
            vec!["--backing", "memfd", "--shared", "--mode", "process"],
            false,
        ),
        (vec!["--backing", "file", "--path", file], false),
        (vec!["--backing", "file", "--path", file, "--shared"], false),
        (
            vec!["--backing", "file", "--path", file, "--access", "read"],
            false,
        ),
    ];
    for (extra, one_per_page) in variants {
        let run = run_variant(&s, &extra);
        if extra == ["--backing", "shm"] {
            let config = &run["meta"]["config"];
            assert_eq!(config["shared"], true, "{config}");
        }
        for (tasks, sample) in samples(&run) {
            let faults = fig(&sample, "faults");
            let pages = fig(&sample, "pages");
            assert_eq!(pages, 2048.0, "{extra:?}: 8 MiB is 2048 pages");
            let Some(kernel) = sample["data"]["figures"]["kfaults"].as_f64() else {
                skip("kernel check: no perf page-faults counter here");
                continue;
            };
            assert!(
                within(kernel, faults, 2.0),
                "{extra:?} {tasks} tasks: kernel {kernel} vs rusage {faults}"
            );
            let per = fig(&sample, "pages/fault");
            assert!(
                (per - pages / faults).abs() < 1e-9,
                "pages/fault is measured"
            );
            if one_per_page {
                assert!(
                    within(faults, pages, 2.0),
                    "{extra:?}: {faults} faults for {pages} pages"
                );
            }
        }
        assert!(
            !std::path::Path::new(file).exists(),
            "{extra:?}: the file is removed after the run"
        );
    }
}

#[test]
fn file_reads_report_fault_around() {
    let s = Scratch::new("around");
    let file = s.dir.join("f");
    let run = run_variant(
        &s,
        &[
            "--backing",
            "file",
            "--path",
            file.to_str().unwrap(),
            "--access",
            "read",
        ],
    );
    let out = ok(&s.vmscale(&["show", "last"]));
    assert!(out.contains("pages/fault"), "{out}");
    for (_, sample) in samples(&run) {
        // Fault-around maps several page-cache pages per read fault.
        assert!(fig(&sample, "pages/fault") > 1.0);
    }
}

#[test]
fn hostile_paths_are_refused_before_anything_is_stored() {
    let s = Scratch::new("hostile");
    let existing = s.dir.join("mine");
    std::fs::write(&existing, b"keep").unwrap();
    let link = s.dir.join("link");
    std::os::unix::fs::symlink(&existing, &link).unwrap();
    for p in [&existing, &link] {
        let o = s.vmscale(&[
            "run",
            "pft",
            "--tasks",
            "1",
            "--size",
            "4M",
            "--reps",
            "1",
            "--backing",
            "file",
            "--path",
            p.to_str().unwrap(),
        ]);
        assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
        assert!(stderr(&o).contains("already exists"), "{}", stderr(&o));
    }
    assert_eq!(std::fs::read(&existing).unwrap(), b"keep");
    assert!(!s.db().exists(), "nothing stored for a refused run");
    let o = s.vmscale(&["run", "pft", "--size", "4M", "--backing", "file"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("--path"), "{}", stderr(&o));
}

#[test]
fn hugetlb_is_refused_with_the_numbers_or_reserved_and_restored() {
    let _turn = machine_turn();
    let before = std::fs::read_to_string("/proc/sys/vm/nr_hugepages").unwrap();
    let s = Scratch::new("hugetlb");
    let free: u64 = std::fs::read_to_string("/proc/meminfo")
        .unwrap()
        .lines()
        .find_map(|l| l.strip_prefix("HugePages_Free:"))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(0);
    if free < 4 {
        let o = s.vmscale(&[
            "run", "pft", "--tasks", "1", "--size", "8M", "--pages", "hugetlb",
        ]);
        assert_eq!(o.status.code(), Some(2));
        assert!(stderr(&o).contains("nr_hugepages=4"), "{}", stderr(&o));
    }
    let need = (free + 4).to_string();
    let knob = format!("nr_hugepages={need}");
    let o = s.vmscale(&[
        "run", "pft", "--tasks", "1,2", "--size", "8M", "--reps", "1", "--pages", "hugetlb",
        "--knob", &knob, "--json",
    ]);
    if !o.status.success() && stderr(&o).contains("NOT") {
        panic!("knob not restored: {}", stderr(&o));
    }
    let run = json(&o);
    for (_, sample) in samples(&run) {
        // 8 MiB in 2 MiB pages: one fault per huge page.
        let faults = fig(&sample, "faults");
        assert!(within(faults, fig(&sample, "expected"), 2.0), "{faults}");
    }
    assert_eq!(
        std::fs::read_to_string("/proc/sys/vm/nr_hugepages").unwrap(),
        before,
        "nr_hugepages restored"
    );
}
