//! The KVM path run live: `vmscale guest` as the plan step of a TCG guest
//! whose emulated CPU (`-cpu max`) has AMD's svm and npt, so its own
//! kernel's ordinary kvm_amd (loaded at init) gives it a real /dev/kvm.
//! The inner `vmscale guest --accel kvm` probes KVM, preallocates and
//! checks the inner guest's memory, pins its vCPUs over QMP, enters the
//! kernel at its PVH entry, runs pft, and its runs come back through both
//! levels into the host store.
//! Under CI=true a missing QEMU or kernel fails.

use crate::common;

use crate::common::guest::{available, guest, kernels, read, s};

#[test]
#[ignore = "a heavy guest test (minutes of TCG): .ci/run runs it after `cargo test`"]
fn kvm_runs_live_inside_an_emulated_cpu() {
    if !available("nested KVM") {
        return;
    }
    let scratch = common::Scratch::new("nested-kvm");
    let out = scratch.dir.join("out");
    // The cloud kernel: it boots fastest under TCG.
    let k = s(&kernels()[1]);
    let o = guest(
        &scratch.db(),
        &[
            "--kernel",
            k,
            "--label",
            "outer",
            "--accel",
            "tcg",
            "--cpu",
            "max",
            "--cpus",
            "2",
            "--mem",
            "1G",
            // Bounded: a hung level fails the test rather than the suite.
            // Wide enough for a loaded host: the inner KVM boots at TCG's
            // pace and its own bounds stretch to match (accel::kvm_pace).
            "--timeout",
            "900s",
            "--out",
            s(&out),
            "--setup",
            "cat /sys/module/kvm_amd/parameters/nested; ls /dev/kvm /sys/module",
            "--",
            "guest",
            "--kernel",
            k,
            "--label",
            "inner",
            "--accel",
            "kvm",
            "--cpus",
            "2",
            "--mem",
            "512M",
            // The PVH entry under KVM (the probe boot is the bzImage's):
            // the outer root must carry QEMU's pvh.bin for it.
            "--entry",
            "pvh",
            // Deep enough that a QMP socket beside the boot's files would
            // pass the 108 bytes a unix socket's path may have.
            "--out",
            "/root/a-directory-deep-enough-that-a-socket-in-it-would-be-too-long-for-qemu/inner",
            "--",
            "run",
            "pft",
            "--tasks",
            "1,2",
            "--size",
            "16M",
            "--reps",
            "3",
        ],
    );
    let text = common::ok(&o);
    let results = out.join("round-1/kernel-1/results");
    // The outer guest's own kernel has the ordinary kvm_amd, nested on.
    let setup = read(&results.join("setup.log"));
    assert!(setup.contains("/dev/kvm"), "{setup}");
    assert!(setup.contains("kvm_amd"), "{setup}");
    assert!(!setup.contains("kvm_pvm"), "{setup}");
    assert!(
        setup.lines().any(|l| l.trim() == "1" || l.trim() == "Y"),
        "{setup}"
    );
    // The inner vmscale chose KVM itself (--accel kvm would have refused).
    let inner_err = read(&results.join("step-1.err"));
    assert!(!inner_err.contains("emulated"), "{inner_err}");

    let list = common::json(&common::vmscale_with_db(&scratch.db(), &["list", "--json"]));
    let runs = list.as_array().expect("a list");
    assert_eq!(runs.len(), 1, "{list}\n{text}");
    let id = runs[0]["id"].as_i64().unwrap().to_string();
    let run = common::json(&common::vmscale_with_db(
        &scratch.db(),
        &["show", &id, "--json"],
    ));
    let m = &run["meta"]["machine"];
    let g = &m["guest"];
    // A second boot of either level passes but is on the record
    // (docs/guest.md); said here so that a loop of this test
    // (bench/test-loop.sh) counts the passes that needed one.
    let again = |t: &str| t.contains("booting it once more");
    eprintln!(
        "nested_kvm: second boot: outer {}, inner {} (inner run rebooted: {})",
        again(&common::stderr(&o)),
        again(&inner_err),
        g["rebooted"]
    );
    // And why: vmscale's own line names the cause and the console kept.
    let err = common::stderr(&o);
    for line in err.lines().chain(inner_err.lines()).filter(|l| again(l)) {
        eprintln!("nested_kvm:   {line}");
    }
    assert_eq!(g["accel"], "kvm", "{g}");
    assert_eq!(g["prealloc"], true, "{g}");
    // Two vCPUs pinned, one to each of the outer guest's CPUs.
    assert_eq!(g["pinned"], serde_json::json!([0, 1]), "{g}");
    assert_eq!(g["topology"]["mem_mib"], 512, "{g}");
    // Entered at its PVH entry as asked (by default a KVM guest boots
    // the bzImage).
    assert_eq!(g["pvh"], true, "{g}");
    // The inner guest's host is the outer guest: its kernel, not ours.
    let outer_release = read(&results.join("release")).trim().to_string();
    assert_eq!(g["host_kernel"], outer_release.as_str(), "{g}");
    assert!(
        m["kernel_cmdline"]
            .as_str()
            .unwrap()
            .contains("vmscale.accel=kvm"),
        "{m}"
    );
    assert_eq!(run["meta"]["workload"], "pft");
    let cases = run["cases"].as_array().unwrap();
    assert_eq!(cases.len(), 2, "tasks 1 and 2");
    for c in cases {
        let samples = c["samples"].as_array().unwrap();
        assert!(samples.len() >= 3, "{c}");
        for x in samples {
            // Steal time is accounted (KVM's steal clock, in noise).
            assert!(x["noise"]["steal_s"].as_f64().is_some(), "{x}");
            assert!(
                x["data"]["figures"]["faults"]
                    .as_f64()
                    .is_some_and(|f| f > 0.0),
                "{x}"
            );
        }
    }
    let label = run["meta"]["label"].as_str().unwrap_or("");
    assert!(label.starts_with("outer"), "{label}");
    assert!(!text.is_empty());
}

#[test]
fn a_nested_plan_that_cannot_work_is_refused_before_anything_boots() {
    if !available("nested KVM refusals") {
        return;
    }
    let scratch = common::Scratch::new("nested-bad");
    let k = s(&kernels()[1]);
    let refused = |args: &[&str], says: &str| {
        let o = guest(&scratch.db(), args);
        let err = common::stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{err}");
        assert!(err.contains(says), "{says}: {err}");
    };
    // Too little memory for the inner guest: the numbers named.
    refused(
        &[
            "--kernel", k, "--accel", "tcg", "--mem", "768M", "--", "guest", "--kernel", k,
            "--mem", "512M", "--", "run", "pft",
        ],
        "is too little for a guest whose plan boots a 512 MiB guest",
    );
    // Three levels.
    refused(
        &[
            "--kernel", k, "--", "guest", "--kernel", k, "--", "guest", "--kernel", k, "--",
            "sysinfo",
        ],
        "two levels",
    );
    // A guest step without its own plan.
    refused(
        &["--kernel", k, "--", "guest", "--kernel", k],
        "its own plan",
    );
    assert!(
        !scratch.db().exists() || {
            let l = common::json(&common::vmscale_with_db(&scratch.db(), &["list", "--json"]));
            l.as_array().is_some_and(|a| a.is_empty())
        }
    );
}
