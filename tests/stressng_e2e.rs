//! End-to-end tests of `run stress-ng` with the real stress-ng (Debian's
//! package; .ci/run installs it, and under CI=true these tests fail
//! without it): stress-ng's own bogo-ops figures stored per instance
//! count with the child tree's rusage and the vmstat deltas beside them,
//! and bad input (an unknown or non-VM stressor, stress-ng missing, a
//! harness option among the stressor's) refused with exit 2, nothing stored.

use crate::common::*;

/// Whether stress-ng is on PATH; skips (fails under CI) when it is not.
fn have_stress_ng() -> bool {
    let found = std::env::var_os("PATH")
        .is_some_and(|p| std::env::split_paths(&p).any(|d| d.join("stress-ng").is_file()));
    if !found {
        skip("stress-ng is not installed (apt-get install stress-ng)");
    }
    found
}

#[test]
fn fault_runs_per_instance_count_with_stress_ng_s_figures_and_the_tree_s_faults() {
    if !have_stress_ng() {
        return;
    }
    let s = Scratch::new("stressng-fault");
    let run = json(&s.vmscale(&[
        "run",
        "stress-ng",
        "--stressor",
        "fault",
        "--instances",
        "1,2",
        "--timeout",
        "1",
        "--reps",
        "2",
        "--warmup",
        "0",
        "--json",
    ]));
    let cases = run["cases"].as_array().unwrap();
    let shape: Vec<(String, u64)> = cases
        .iter()
        .map(|c| {
            let case = &c["case"];
            (
                case["variant"].as_str().unwrap().to_string(),
                case["tasks"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(shape, [("fault".to_string(), 1), ("fault".to_string(), 2)]);
    let version = std::process::Command::new("stress-ng")
        .arg("--version")
        .output()
        .unwrap();
    let version = String::from_utf8_lossy(&version.stdout).into_owned();
    let config = &run["meta"]["config"];
    assert!(
        version.contains(&format!("version {} ", config["version"].as_str().unwrap())),
        "{config} against {version}"
    );
    for c in cases {
        let samples = measured(c);
        assert_eq!(samples.len(), 2);
        for sample in samples {
            let ops = fig(&sample, "bogo_ops");
            assert!(ops > 0.0 && fig(&sample, "ops_per_sec") > 0.0, "{sample}");
            assert!(fig(&sample, "ops_per_cpu_sec") > 0.0);
            // The workers are stress-ng's children: their faults reach the
            // rusage of the tree, which the system-wide count includes.
            // stress-ng's fault stressor takes more than one fault an op.
            let minflt = fig(&sample, "minflt");
            assert!(minflt >= ops, "{minflt} faults for {ops} ops");
            let pgfault = sample["vmstat"]["pgfault"].as_f64().unwrap();
            assert!(pgfault >= minflt, "vmstat pgfault {pgfault} < {minflt}");
            assert!(fig(&sample, "system") > 0.0);
        }
    }
    let out = ok(&s.vmscale(&["show", "last"]));
    assert!(out.contains("ops_per_sec"), "{out}");
    assert!(out.lines().all(|l| l.chars().count() <= 80), "{out}");
}

#[test]
fn the_plan_shows_the_command_each_sample_runs() {
    if !have_stress_ng() {
        return;
    }
    let s = Scratch::new("stressng-plan");
    let out = ok(&s.vmscale(&[
        "run",
        "stress-ng",
        "--stressor",
        "vm",
        "--timeout",
        "2s",
        "--dry-run",
        "--",
        "--vm-bytes",
        "16M",
    ]));
    assert!(
        out.contains("--vm 1 --timeout 2 --metrics --yaml DIR/metrics.yaml")
            && out.contains("--vm-bytes 16M"),
        "{out}"
    );
    assert!(!s.db().exists());
}

#[test]
fn bad_stress_ng_input_is_refused_and_nothing_stored() {
    if !have_stress_ng() {
        return;
    }
    let s = Scratch::new("stressng-bad");
    for (args, says) in [
        (vec!["--stressor", "cpu"], "not one of its VM stressors"),
        (vec!["--stressor", "nosuch"], "no stressor nosuch"),
        (vec!["--stressor", "mlockmany"], "--pathological"),
        (vec!["--stressor", "mmap", "--timeout", "0"], "--timeout"),
        (
            vec!["--stressor", "mmap", "--timeout", "1.5"],
            "whole number",
        ),
        (
            vec!["--stressor", "mmap", "--instances", "0"],
            "--instances",
        ),
        (vec!["--stressor", "mmap", "--", "--yaml", "/x"], "`--yaml`"),
        (vec!["--stressor", "vm", "--", "--vm-rw", "1"], "`--vm-rw`"),
    ] {
        let mut a = vec!["run", "stress-ng"];
        a.extend(&args);
        let o = s.vmscale(&a);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        assert!(stderr(&o).contains(says), "{args:?}: {}", stderr(&o));
        if args[1] == "cpu" {
            // The refusal lists the VM stressors to choose from.
            assert!(stderr(&o).contains("madvise") && stderr(&o).contains("mremap"));
        }
    }
    assert!(!s.db().exists());
}

#[test]
fn without_stress_ng_the_refusal_names_the_package() {
    let s = Scratch::new("stressng-missing");
    let empty = s.dir.join("bin");
    std::fs::create_dir_all(&empty).unwrap();
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_vmscale"))
        .args(["run", "stress-ng", "--stressor", "mmap"])
        .env("VMSCALE_DB", s.db())
        .env("PATH", &empty)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("apt-get install stress-ng"),
        "{}",
        stderr(&o)
    );
    assert!(!s.db().exists());
}
