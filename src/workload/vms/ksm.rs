//! case-ksm: one mapping per node of populated anonymous memory (all of it
//! zero-filled, so identical), advised MADV_MERGEABLE, left to ksmd for the
//! runtime; the figure is what ksmd merged per second, from
//! /sys/kernel/mm/ksm (pages_sharing + pages_shared), KB/s.

use std::collections::BTreeMap;
use std::path::Path;

use crate::error::{Error, Result};
use crate::exec::clock;
use crate::exec::region::Region;

const KSM: &str = "/sys/kernel/mm/ksm";

/// The ksm counters vmscale reports per sample.
const COUNTERS: &[&str] = &[
    "pages_sharing",
    "pages_shared",
    "pages_scanned",
    "full_scans",
];

fn read(name: &str) -> u64 {
    std::fs::read_to_string(Path::new(KSM).join(name))
        .ok()
        .and_then(|t| t.trim().parse().ok())
        .unwrap_or(0)
}

/// Refuses when ksmd is not running (it merges nothing then).
pub fn check() -> Result<()> {
    if !Path::new(KSM).join("run").exists() {
        return Err(Error::Refused(
            "ksm: this kernel has no KSM (/sys/kernel/mm/ksm): use one with CONFIG_KSM".into(),
        ));
    }
    if read("run") != 1 {
        return Err(Error::Refused(
            "ksm: ksmd is not running (/sys/kernel/mm/ksm/run is not 1): add --knob \
             ksm_run=1, which vmscale sets and restores"
                .into(),
        ));
    }
    Ok(())
}

/// One sample: `mappings` regions of `bytes`, merged for `runtime_ns`;
/// returns the figures (throughput first) and the counters' deltas.
pub fn sample(mappings: u64, bytes: u64, runtime_ns: u64) -> Result<BTreeMap<String, f64>> {
    let before: Vec<u64> = COUNTERS.iter().map(|c| read(c)).collect();
    let merged0 = before[0] + before[1];
    let mut regions = Vec::new();
    for _ in 0..mappings {
        let r = Region::map(
            bytes as usize,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_POPULATE,
            None,
        )?;
        // SAFETY: the range is our own mapping.
        if unsafe { libc::madvise(r.ptr().cast(), r.len(), libc::MADV_MERGEABLE) } != 0 {
            return Err(Error::Failed(format!(
                "madvise(MADV_MERGEABLE) failed: {}",
                crate::exec::errno_text()
            )));
        }
        regions.push(r);
    }
    let t0 = clock::monotonic_ns();
    std::thread::sleep(std::time::Duration::from_nanos(runtime_ns));
    let secs = (clock::monotonic_ns() - t0) as f64 / 1e9;
    let after: Vec<u64> = COUNTERS.iter().map(|c| read(c)).collect();
    let merged = (after[0] + after[1]).saturating_sub(merged0);
    let page = 4096.0;
    let mut out = BTreeMap::new();
    out.insert("throughput".into(), merged as f64 * page / 1024.0 / secs);
    out.insert("wall".into(), secs);
    for (i, c) in COUNTERS.iter().enumerate() {
        out.insert(format!("ksm.{c}"), after[i] as f64 - before[i] as f64);
    }
    for r in &regions {
        // SAFETY: the range is our own mapping.
        unsafe { libc::madvise(r.ptr().cast(), r.len(), libc::MADV_UNMERGEABLE) };
    }
    Ok(out)
}
