//! vmscale: a Linux memory-management scalability laboratory.
//!
//! Imports flow one way: `commands -> (runner | report | store | stats)`,
//! `runner -> (workload, monitor, knobs, machine)`, `workload -> exec`.

pub mod machine;
pub mod report;
