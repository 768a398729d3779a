//! Readers of the kernel's own counters, taken around each sample.

pub mod vmstat;
pub mod zoneinfo;
