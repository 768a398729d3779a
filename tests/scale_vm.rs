//! Issue 23 for real: a 32-vCPU, 4-node, 2-socket SMT-2 guest (TCG) boots
//! once; its `sysinfo` matches the shape asked for, c2c's default plan
//! (pairs sampled by topology class) runs inside and its report names the
//! SMT, same-node and cross-node classes with their medians, and numa02
//! runs on its default threads. The in-guest plans are tiny: every vCPU is
//! emulated on a host of 2 CPUs. Under CI=true a missing QEMU fails.

use crate::common;

use crate::common::fixtures::counts;
use crate::common::guest::{GuestRun, available, kernels, results, step_out};
use serde_json::Value;

#[test]
#[ignore = "a heavy guest test (minutes of TCG): .ci/run runs it after `cargo test`"]
fn a_32_vcpu_guest_runs_c2c_by_class_and_numa02() {
    if !available("guest 32 vCPUs") {
        return;
    }
    let scratch = common::Scratch::new("scale-vm");
    let out = scratch.dir.join("out");
    #[rustfmt::skip]
    let run = GuestRun::tcg(&kernels()[1], "2G")
        .opt("--cpus", "32")
        .opt("--sockets", "2")
        .opt("--nodes", "4")
        .opt("--threads", "2")
        .out(&out)
        .step(&["sysinfo", "--json"])
        .step(&["run", "c2c", "--variant", "cas", "--rounds", "50", "--batches", "6",
                "--reps", "2", "--warmup", "0"])
        .step(&["run", "numa02", "--size", "8M", "--loops", "2", "--reps", "1",
                "--warmup", "0"]);
    common::ok(&run.run(&scratch.db()));
    let results = results(&out, 1, 1);
    let sys: Value = serde_json::from_str(&step_out(&results, 1)).unwrap();
    assert_eq!(counts(&sys), [32, 16, 2, 2, 4], "{}", sys["counts"]);
    // c2c: a sample of each class, each named with its median.
    let c2c = step_out(&results, 2);
    assert!(c2c.contains("of 496 pairs measured"), "{c2c}");
    for class in [
        "SMT siblings",
        "same node",
        "cross-node d=20",
        "cross-node d=30 x-pkg",
    ] {
        let line = c2c
            .lines()
            .find(|l| l.starts_with(class))
            .unwrap_or_else(|| panic!("no {class} line:\n{c2c}"));
        let cells: Vec<&str> = line[class.len()..].split_whitespace().collect();
        assert!(cells[0].starts_with("8/"), "{line}");
        let median: f64 = cells[1].parse().unwrap_or_else(|_| panic!("{line}"));
        assert!(median > 0.0, "{line}");
    }
    // numa02 on the guest's nodes, measured.
    let numa = step_out(&results, 3);
    assert!(
        numa.contains("numa02") && numa.contains("complete"),
        "{numa}"
    );
}
