//! `run --meminfo`: /proc/meminfo levels, and each node's, read while the
//! work runs (not at the sample's edges), kept per sample, shown by
//! `show`; a field the kernel lacks, a node it does not have, or a name
//! that is not a field's, refused with exit 2 and nothing stored.

use crate::common::*;

/// Shmem of a meminfo file's text, in kB ("Shmem:" or "Node 0 Shmem:").
fn shmem_of(text: &str) -> f64 {
    text.lines()
        .find_map(|l| l.split_once("Shmem:"))
        .and_then(|(_, v)| v.split_whitespace().next()?.parse().ok())
        .unwrap()
}

/// Shmem now, in kB.
fn shmem_kb() -> f64 {
    shmem_of(&std::fs::read_to_string("/proc/meminfo").unwrap())
}

/// The machine's nodes (the N of each nodeN directory).
fn nodes() -> Vec<usize> {
    let mut n: Vec<usize> = std::fs::read_dir("/sys/devices/system/node")
        .unwrap()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.strip_prefix("node")?.parse().ok())
        .collect();
    n.sort_unstable();
    n
}

#[test]
fn a_level_held_only_inside_the_sample_is_seen() {
    let s = Scratch::new("meminfo");
    // Each sample puts 64 MiB in /dev/shm, holds it 1.8 s (the readings
    // at 0.5 s and 1.5 s) and removes it before it ends: readings at the
    // sample's edges would see none of it. Half of it allows for a write
    // slowed by load past the first reading.
    let shm = format!("/dev/shm/vmscale-test-meminfo-{}", std::process::id());
    let script = format!("head -c 64M /dev/zero > {shm}; sleep 1.8; rm -f {shm}");
    let before = shmem_kb();
    // Each node's Shmem too: together they are the machine's.
    let per_node: Vec<String> = nodes().iter().map(|n| format!("node{n}.Shmem")).collect();
    let fields = format!("Shmem,MemTotal,{}", per_node.join(","));
    let o = s.vmscale(&[
        "run",
        "cmd",
        "--reps",
        "2",
        "--warmup",
        "0",
        "--meminfo",
        &fields,
        "--json",
        "--",
        "sh",
        "-c",
        &script,
    ]);
    let run = json(&o);
    // Other processes (other tests) may add shared memory meanwhile: the
    // lower of the levels around the run is the one this run's own 64 MiB
    // stand above.
    let around = before.min(shmem_kb());
    let samples = measured(&run["cases"][0]);
    assert_eq!(samples.len(), 2);
    for sample in &samples {
        let during = fig(sample, "meminfo.Shmem");
        assert!(
            during - around >= 32.0 * 1024.0,
            "Shmem {during} kB during, {around} kB around the run: {sample}"
        );
        assert!(fig(sample, "meminfo.MemTotal") > 0.0, "{sample}");
        // The nodes' readings are taken with the machine's, each file once.
        let nodes: f64 = per_node
            .iter()
            .map(|f| fig(sample, &format!("meminfo.{f}")))
            .sum();
        assert!(
            nodes - around >= 32.0 * 1024.0,
            "the nodes' Shmem {nodes} kB during, {around} kB around the run: {sample}"
        );
    }
    let text = ok(&s.vmscale(&["show", "last"]));
    let line = text.lines().find(|l| l.contains(" Shmem ")).expect(&text);
    assert_eq!(line.split_whitespace().last(), Some("2"), "{text}");
}

#[test]
fn a_field_the_kernel_lacks_or_a_bad_name_exits_2_storing_nothing() {
    let s = Scratch::new("meminfo-bad");
    for (field, says) in [
        ("NoSuchField", "has no NoSuchField: it has"),
        ("Active file", "is not a meminfo field name"),
        ("node4096.Shmem", "node 4096's meminfo has no Shmem"),
    ] {
        let o = s.vmscale(&["run", "cmd", "--meminfo", field, "--", "true"]);
        assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
        assert!(stderr(&o).contains(says), "{}", stderr(&o));
        assert!(!s.db().exists(), "a refused run must not create the store");
    }
}
