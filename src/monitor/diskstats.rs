//! /proc/diskstats for one device: snapshots, deltas, and the iostat-like
//! figures seed 001 prints (await, r_await, w_await, avgqu-sz, avgrq-sz,
//! svctm, rrqm, wrqm), all from counter deltas over a measured interval.

use std::collections::BTreeMap;
use std::path::Path;

/// The counters of one device line (fields 4..14 of /proc/diskstats).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Disk {
    pub reads: u64,
    pub reads_merged: u64,
    pub sectors_read: u64,
    pub read_ms: u64,
    pub writes: u64,
    pub writes_merged: u64,
    pub sectors_written: u64,
    pub write_ms: u64,
    pub in_flight: u64,
    pub io_ms: u64,
    pub queue_ms: u64,
}

/// Every device in the file, by name.
pub fn parse(text: &str) -> BTreeMap<String, Disk> {
    text.lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            if f.len() < 14 {
                return None;
            }
            let n = |i: usize| f[i].parse::<u64>().ok();
            Some((
                f[2].to_string(),
                Disk {
                    reads: n(3)?,
                    reads_merged: n(4)?,
                    sectors_read: n(5)?,
                    read_ms: n(6)?,
                    writes: n(7)?,
                    writes_merged: n(8)?,
                    sectors_written: n(9)?,
                    write_ms: n(10)?,
                    in_flight: n(11)?,
                    io_ms: n(12)?,
                    queue_ms: n(13)?,
                },
            ))
        })
        .collect()
}

/// Reads `<root>/proc/diskstats`; absent file gives an empty map.
pub fn read(root: &Path) -> BTreeMap<String, Disk> {
    parse(&std::fs::read_to_string(root.join("proc/diskstats")).unwrap_or_default())
}

/// One device now, or None if it is not listed.
pub fn read_device(root: &Path, device: &str) -> Option<Disk> {
    read(root).remove(device)
}

/// Device names listed, for error messages.
pub fn devices(root: &Path) -> Vec<String> {
    read(root).into_keys().collect()
}

/// iostat-like figures over `secs` seconds from two snapshots. Times in ms,
/// request sizes in 512-byte sectors, merges per second.
pub fn figures(before: &Disk, after: &Disk, secs: f64) -> BTreeMap<String, f64> {
    let d = |a: u64, b: u64| a.saturating_sub(b) as f64;
    let reads = d(after.reads, before.reads);
    let writes = d(after.writes, before.writes);
    let rms = d(after.read_ms, before.read_ms);
    let wms = d(after.write_ms, before.write_ms);
    let ios = reads + writes;
    let ratio = |a: f64, b: f64| if b > 0.0 { a / b } else { 0.0 };
    let ms = secs * 1000.0;
    let sectors = d(after.sectors_read, before.sectors_read)
        + d(after.sectors_written, before.sectors_written);
    let mut f = BTreeMap::new();
    f.insert("reads".into(), reads);
    f.insert("writes".into(), writes);
    f.insert(
        "read_kib".into(),
        d(after.sectors_read, before.sectors_read) / 2.0,
    );
    f.insert(
        "write_kib".into(),
        d(after.sectors_written, before.sectors_written) / 2.0,
    );
    f.insert("await".into(), ratio(rms + wms, ios));
    f.insert("r_await".into(), ratio(rms, reads));
    f.insert("w_await".into(), ratio(wms, writes));
    f.insert(
        "avgqu-sz".into(),
        ratio(d(after.queue_ms, before.queue_ms), ms),
    );
    f.insert("avgrq-sz".into(), ratio(sectors, ios));
    f.insert("svctm".into(), ratio(d(after.io_ms, before.io_ms), ios));
    f.insert(
        "util%".into(),
        ratio(d(after.io_ms, before.io_ms), ms) * 100.0,
    );
    f.insert(
        "rrqm".into(),
        ratio(d(after.reads_merged, before.reads_merged), secs),
    );
    f.insert(
        "wrqm".into(),
        ratio(d(after.writes_merged, before.writes_merged), secs),
    );
    f
}

/// The iostat figures shown, in seed 001's order.
pub const SHOWN: &[&str] = &[
    "avgqu-sz", "avgrq-sz", "await", "r_await", "w_await", "svctm", "rrqm", "wrqm",
];

#[cfg(test)]
mod tests {
    use super::*;

    const A: &str = " 254       0 vda 100 10 800 50 200 20 1600 300 0 120 400 0 0 0 0\n";
    const B: &str = " 254       0 vda 110 12 880 70 230 26 1900 360 1 150 500 0 0 0 0\n";

    #[test]
    fn deltas_give_iostat_figures() {
        let (a, b) = (parse(A)["vda"], parse(B)["vda"]);
        let f = figures(&a, &b, 2.0);
        assert_eq!(f["reads"], 10.0);
        assert_eq!(f["writes"], 30.0);
        assert_eq!(f["r_await"], 2.0);
        assert_eq!(f["w_await"], 2.0);
        assert_eq!(f["await"], 2.0);
        assert_eq!(f["avgqu-sz"], 0.05);
        assert_eq!(f["avgrq-sz"], 380.0 / 40.0);
        assert_eq!(f["svctm"], 30.0 / 40.0);
        assert_eq!(f["rrqm"], 1.0);
        assert_eq!(f["wrqm"], 3.0);
    }

    #[test]
    fn no_io_gives_zeros_not_nan() {
        let a = parse(A)["vda"];
        let f = figures(&a, &a, 1.0);
        assert!(f.values().all(|v| *v == 0.0));
    }

    #[test]
    fn parses_this_machines_devices() {
        let all = read(Path::new("/"));
        assert!(!all.is_empty(), "no devices parsed from /proc/diskstats");
        let text = std::fs::read_to_string("/proc/diskstats").unwrap_or_default();
        let lines = text.lines().filter(|l| !l.trim().is_empty()).count();
        assert_eq!(all.len(), lines, "every device line parses");
    }
}
