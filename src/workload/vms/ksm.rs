//! case-ksm: one mapping per node of populated anonymous memory (all of it
//! zero-filled, so identical), advised MADV_MERGEABLE, left to ksmd for the
//! runtime; the figure is what ksmd merged per second, from
//! /sys/kernel/mm/ksm (pages_sharing + pages_shared), KB/s.

use std::collections::BTreeMap;
use std::path::Path;

use crate::error::{Error, Result};
use crate::exec::region::Region;
use crate::exec::{clock, signals};

const KSM: &str = "/sys/kernel/mm/ksm";

/// The ksm counters vmscale reports per sample.
const COUNTERS: &[&str] = &[
    "pages_sharing",
    "pages_shared",
    "pages_scanned",
    "full_scans",
    // Pages merged into the zero page (use_zero_pages=1; Linux 6.10+).
    "ksm_zero_pages",
];

fn read(name: &str) -> u64 {
    std::fs::read_to_string(Path::new(KSM).join(name))
        .ok()
        .and_then(|t| t.trim().parse().ok())
        .unwrap_or(0)
}

/// Refuses when the kernel has no KSM.
fn exists(case: &str) -> Result<()> {
    if !Path::new(KSM).join("run").exists() {
        return Err(Error::Refused(format!(
            "{case}: this kernel has no KSM (/sys/kernel/mm/ksm): use one with CONFIG_KSM"
        )));
    }
    Ok(())
}

/// Refuses when ksmd is not running (it merges nothing then).
pub fn check() -> Result<()> {
    exists("ksm")?;
    if read("run") != 1 {
        return Err(Error::Refused(
            "ksm: ksmd is not running (/sys/kernel/mm/ksm/run is not 1): add --knob \
             ksm_run=1, which vmscale sets and restores"
                .into(),
        ));
    }
    Ok(())
}

/// What case-ksm-hugepages' script writes before its programs start:
/// THP always, ksmd running, scanning 1000 pages every 20 ms, khugepaged
/// scanning without a pause.
pub const HUGE_KNOBS: &[(&str, &str)] = &[
    ("thp", "always"),
    ("ksm_run", "1"),
    ("ksm_pages_to_scan", "1000"),
    ("ksm_sleep_millisecs", "20"),
    ("khugepaged_scan_sleep", "0"),
];

/// Refuses case-ksm-hugepages unless each of `HUGE_KNOBS` is the run's
/// `--knob` value or the machine's now, naming the `--knob`s missing.
pub fn check_huge(knobs: &crate::knobs::Plan) -> Result<()> {
    exists("ksm-hugepages")?;
    let root = crate::knobs::live_root();
    let missing: Vec<String> = HUGE_KNOBS
        .iter()
        .filter(|(name, want)| {
            let set = knobs.values(name).is_some_and(|v| v == [*want]);
            let now = crate::knobs::registry::find(name)
                .and_then(|k| k.read(&root).ok())
                .is_some_and(|v| v == *want);
            !(set || now)
        })
        .map(|(name, want)| format!("--knob {name}={want}"))
        .collect();
    if missing.is_empty() {
        return Ok(());
    }
    Err(Error::Refused(format!(
        "ksm-hugepages: the script runs with THP always and ksmd scanning 1000 pages \
         every 20 ms: add {}, which vmscale sets for the run and restores (after a \
         crash too)",
        missing.join(" ")
    )))
}

/// Pages of this process ksmd has merged (/proc/self/ksm_merging_pages,
/// Linux 6.1 and later), or None.
fn own_merged() -> Option<u64> {
    std::fs::read_to_string("/proc/self/ksm_merging_pages")
        .ok()
        .and_then(|t| t.trim().parse().ok())
}

/// `count` populated anonymous mappings of `bytes` (all zero, so all
/// identical), advised MADV_HUGEPAGE when `huge`.
fn mapped(count: u64, bytes: u64, huge: bool) -> Result<Vec<Region>> {
    let mut regions = Vec::new();
    for _ in 0..count {
        let r = Region::map(
            bytes as usize,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_POPULATE,
            None,
        )?;
        if huge {
            advise(&r, libc::MADV_HUGEPAGE, "MADV_HUGEPAGE")?;
        }
        regions.push(r);
    }
    Ok(regions)
}

fn advise(r: &Region, advice: i32, what: &str) -> Result<()> {
    // SAFETY: the range is our own mapping.
    if unsafe { libc::madvise(r.ptr().cast(), r.len(), advice) } != 0 {
        return Err(Error::Failed(format!(
            "madvise({what}) failed: {}",
            crate::exec::errno_text()
        )));
    }
    Ok(())
}

/// The regions advised MADV_MERGEABLE and left to ksmd for `runtime_ns`,
/// then MADV_UNMERGEABLE (timed: `ksm.unmerge_s`); the figures
/// (throughput: KB merged a second, of this process's pages where the
/// kernel counts them, `ksm.merging_pages`) and ksmd's counters' deltas.
fn merged(regions: &[Region], runtime_ns: u64) -> Result<BTreeMap<String, f64>> {
    let before: Vec<u64> = COUNTERS.iter().map(|c| read(c)).collect();
    for r in regions {
        advise(r, libc::MADV_MERGEABLE, "MADV_MERGEABLE")?;
    }
    let t0 = clock::monotonic_ns();
    signals::sleep(runtime_ns);
    let secs = (clock::monotonic_ns() - t0) as f64 / 1e9;
    let after: Vec<u64> = COUNTERS.iter().map(|c| read(c)).collect();
    let own = own_merged();
    // ksmd's counters are the machine's (a guest's memory is mergeable
    // too): this process's own count where the kernel has it.
    let sum = |v: &[u64]| v[0] + v[1] + v[4];
    let merged = own.unwrap_or_else(|| sum(&after).saturating_sub(sum(&before)));
    let page = 4096.0;
    let mut out = BTreeMap::new();
    if let Some(own) = own {
        out.insert("ksm.merging_pages".into(), own as f64);
    }
    out.insert("throughput".into(), merged as f64 * page / 1024.0 / secs);
    out.insert("wall".into(), secs);
    for (i, c) in COUNTERS.iter().enumerate() {
        out.insert(format!("ksm.{c}"), after[i] as f64 - before[i] as f64);
    }
    let t1 = clock::monotonic_ns();
    for r in regions {
        advise(r, libc::MADV_UNMERGEABLE, "MADV_UNMERGEABLE")?;
    }
    out.insert(
        "ksm.unmerge_s".into(),
        (clock::monotonic_ns() - t1) as f64 / 1e9,
    );
    Ok(out)
}

/// One sample of case-ksm: `mappings` regions of `bytes`, merged for
/// `runtime_ns`.
pub fn sample(mappings: u64, bytes: u64, runtime_ns: u64) -> Result<BTreeMap<String, f64>> {
    merged(&mapped(mappings, bytes, false)?, runtime_ns)
}

/// One sample of case-ksm-hugepages (usemem_ksm_hugepages, its 30 s
/// waits each half the runtime): `tasks` regions of `bytes` advised
/// MADV_HUGEPAGE, left to khugepaged, then merged by ksmd (which splits
/// the huge pages it merges). `ksm.huge_bytes` is what huge pages backed
/// when the merging began.
pub fn sample_huge(tasks: u64, bytes: u64, runtime_ns: u64) -> Result<BTreeMap<String, f64>> {
    let regions = mapped(tasks, bytes, true)?;
    signals::sleep(runtime_ns / 2);
    let huge: u64 = regions.iter().filter_map(Region::huge_bytes).sum();
    let mut out = merged(&regions, runtime_ns / 2)?;
    out.insert("ksm.huge_bytes".into(), huge as f64);
    Ok(out)
}
