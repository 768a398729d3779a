//! vmscale: a Linux memory-management scalability laboratory.
//!
//! Imports flow one way: `commands -> (runner | report | store | stats)`,
//! `runner -> (workload, monitor, machine, profile, locks)`, `workload -> exec`. `model`
//! (the shared data types), `options` (options several rooms' commands share),
//! `parse`, `text`, `timefmt`, `units` and `atomic_file` are leaves anyone may
//! use.

/// The identity of the sources this binary was built from (build.rs).
pub const SOURCE_ID: &str = env!("VMSCALE_SOURCE_ID");

/// `vmscale --version`: the version and the sources' identity.
pub const VERSION: &str = concat!(
    env!("CARGO_PKG_VERSION"),
    " (source ",
    env!("VMSCALE_SOURCE_ID"),
    ")"
);

pub mod atomic_file;
pub mod bisect;
pub mod cache;
pub mod cli;
pub mod commands;
pub mod deferred;
pub mod doctor;
pub mod error;
pub mod exec;
pub mod guest;
pub mod history;
pub mod import;
pub mod kbuild;
pub mod kconfig;
pub mod knobs;
pub mod limits;
pub mod locks;
pub mod machine;
pub mod model;
pub mod monitor;
pub mod options;
pub mod parse;
pub mod pipe;
pub mod probes;
pub mod profile;
pub mod report;
pub mod reproduce;
pub mod runner;
#[cfg(test)]
pub mod scratch;
pub mod setup;
pub mod state_dir;
pub mod stats;
pub mod store;
pub mod text;
pub mod timefmt;
pub mod units;
pub mod workdir;
pub mod workload;
