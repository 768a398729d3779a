//! `vmscale sysinfo` against the sysfs/procfs files it reads, and against
//! the fake 2-socket, 4-node tree.

use crate::common::*;

fn read(path: &str) -> String {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .trim()
        .to_string()
}

#[test]
fn json_matches_sysfs_on_this_machine() {
    let s = Scratch::new("sysinfo");
    let j = json(&s.vmscale(&["sysinfo", "--json"]));
    let online = vmscale::machine::cpulist::parse(&read("/sys/devices/system/cpu/online")).unwrap();
    let cpus: Vec<u64> = j["cpus"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["id"].as_u64().unwrap())
        .collect();
    assert_eq!(cpus, online.iter().map(|&c| c as u64).collect::<Vec<_>>());
    assert_eq!(j["kernel_release"], read("/proc/sys/kernel/osrelease"));
    assert_eq!(
        j["sysctls"]["vm.max_map_count"].as_str(),
        Some(read("/proc/sys/vm/max_map_count").as_str())
    );
    let l1 = read("/sys/devices/system/cpu/cpu0/cache/index0/coherency_line_size");
    if !l1.is_empty() {
        let line = j["caches"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["level"] == 1)
            .unwrap()["line_size"]
            .as_u64()
            .unwrap();
        assert_eq!(line.to_string(), l1);
    }
}

#[test]
fn text_reports_the_fake_four_node_machine() {
    let s = Scratch::new("sysinfo-fake");
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/fake-2s4n");
    let text = ok(&s.vmscale(&["sysinfo", "--root", root]));
    assert!(text.contains("16 online"), "{text}");
    assert!(text.contains("2 packages"), "{text}");
    let j = json(&s.vmscale(&["sysinfo", "--root", root, "--json"]));
    assert_eq!(j["nodes"].as_array().unwrap().len(), 5);
    // A missing file is "unknown", not an error.
    let empty = Scratch::new("sysinfo-empty");
    let text = ok(&s.vmscale(&["sysinfo", "--root", empty.dir.to_str().unwrap()]));
    assert!(text.contains("unknown"), "{text}");
}
