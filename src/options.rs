//! Options that commands of several rooms share (clap `Args`, no
//! behaviour): `--json`, declared once here so a room that owns its
//! command's options (`bisect`) flattens the same one `cli` does.

use clap::Args;

/// `--json`: every command with a machine-readable output has it; a
/// command words its help for what it prints (`mut_arg("json", ..)`).
#[derive(Args, Debug, Clone, Copy, Default)]
pub struct Json {
    /// JSON instead of text
    #[arg(long = "json")]
    pub json: bool,
}
