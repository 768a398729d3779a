//! Issue 23 for real: a 32-vCPU, 4-node, 2-socket SMT-2 guest (TCG) boots
//! once; its `sysinfo` matches the shape asked for, c2c's default plan
//! (pairs sampled by topology class) runs inside and its report names the
//! SMT, same-node and cross-node classes with their medians, and numa02
//! runs on its default threads. The in-guest plans are tiny: every vCPU is
//! emulated on a host of 2 CPUs. Under CI=true a missing QEMU fails.

mod common;

use common::fixtures::counts;
use common::guest::{available, guest, kernels, s};
use serde_json::Value;

#[test]
fn a_32_vcpu_guest_runs_c2c_by_class_and_numa02() {
    if !available("guest 32 vCPUs") {
        return;
    }
    let scratch = common::Scratch::new("scale-vm");
    let out = scratch.dir.join("out");
    #[rustfmt::skip]
    let plan = [
        "sysinfo", "--json",
        "---", "run", "c2c", "--variant", "cas", "--rounds", "50", "--batches", "6",
        "--reps", "2", "--warmup", "0",
        "---", "run", "numa02", "--size", "8M", "--loops", "2", "--reps", "1", "--warmup", "0",
    ];
    let mut args = vec![
        "--kernel",
        s(&kernels()[1]),
        "--accel",
        "tcg",
        "--cpus",
        "32",
        "--sockets",
        "2",
        "--nodes",
        "4",
        "--threads",
        "2",
        "--mem",
        "2G",
        "--out",
        s(&out),
        "--",
    ];
    args.extend(plan);
    common::ok(&guest(&scratch.db(), &args));
    let results = out.join("round-1/kernel-1/results");
    let sys: Value =
        serde_json::from_str(&common::guest::read(&results.join("step-1.out"))).unwrap();
    assert_eq!(counts(&sys), [32, 16, 2, 2, 4], "{}", sys["counts"]);
    // c2c: a sample of each class, each named with its median.
    let c2c = common::guest::read(&results.join("step-2.out"));
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
    let numa = common::guest::read(&results.join("step-3.out"));
    assert!(
        numa.contains("numa02") && numa.contains("complete"),
        "{numa}"
    );
}
