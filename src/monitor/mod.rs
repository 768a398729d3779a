//! Readers of the kernel's own counters, taken around each sample.

pub mod autonuma;
pub mod diskstats;
pub mod meminfo;
pub mod memory_size;
pub mod mthp;
pub mod numa_maps;
pub mod stat;
pub mod thread_locality;
pub mod vmstat;
pub mod zoneinfo;
pub mod zswap;

/// /proc/vmstat with the per-size THP counters and zswap's debugfs
/// counters beside it, all read under `root`: what a sample's deltas are
/// taken of.
pub fn counters(root: &std::path::Path) -> vmstat::Vmstat {
    let mut c = vmstat::read(root);
    c.extend(mthp::read(root));
    c.extend(zswap::read(root));
    c
}
