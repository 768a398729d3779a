//! One module per subcommand. Commands are the only layer that sees the
//! clap definitions; they turn them into validated inputs for the runner,
//! store and report layers.

pub mod bisect;
pub mod cache;
pub mod compare;
pub mod completions;
pub mod conflicts;
pub mod doctor;
pub mod fit;
pub mod guest;
mod guest_builds;
mod guest_plan;
pub mod harness;
pub mod history;
pub mod import;
pub mod list;
pub mod manage;
pub mod merge;
pub mod output;
pub mod pcp;
pub mod plot;
pub mod probes_out;
pub mod progress;
pub mod quick;
pub mod report;
pub mod reproduce;
pub mod rerun_note;
pub mod restore;
pub mod run;
pub mod show;
pub mod suite;
pub mod sysinfo;

pub use crate::error::{Error, Result};

/// Prints a value as pretty JSON on stdout.
pub fn print_json<T: serde::Serialize>(v: &T) -> Result<()> {
    let text = serde_json::to_string_pretty(v).map_err(|e| Error::Failed(format!("json: {e}")))?;
    output::data(&format!("{text}\n"))
}
