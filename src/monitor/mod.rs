//! Readers of the kernel's own counters, taken around each sample.

pub mod autonuma;
pub mod diskstats;
pub mod memory_size;
pub mod numa_maps;
pub mod stat;
pub mod thread_locality;
pub mod vmstat;
pub mod zoneinfo;
