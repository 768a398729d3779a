//! One module per subcommand. Commands are the only layer that sees the
//! clap definitions; they turn them into validated inputs for the runner,
//! store and report layers.

pub mod compare;
pub mod completions;
pub mod conflicts;
pub mod doctor;
pub mod fit;
pub mod import;
pub mod list;
pub mod manage;
pub mod merge;
pub mod micro;
pub mod output;
pub mod pcp;
pub mod plot;
pub mod probes_out;
pub mod progress;
pub mod quick;
pub mod report;
pub mod rerun_note;
pub mod restore;
pub mod run;
pub mod run_faults;
pub mod run_procs;
pub mod samplefile;
pub mod show;
pub mod suite;
pub mod sysinfo;

/// Why a command failed, which decides the exit code.
#[derive(Debug)]
pub enum Error {
    /// Bad input or a refused run: exit 2, nothing stored.
    Input(String),
    /// A run or I/O that failed: exit 1.
    Failed(String),
    /// Interrupted by a signal after storing what was measured: exit 130.
    Interrupted,
    /// A measured command failed: exit with its own code (see docs/cmd.md).
    Exit(i32, String),
}

impl Error {
    pub fn exit_code(&self) -> i32 {
        match self {
            Error::Input(_) => 2,
            Error::Failed(_) => 1,
            Error::Interrupted => 130,
            Error::Exit(code, _) => *code,
        }
    }
}

pub type Result<T> = std::result::Result<T, Error>;

/// Prints a value as pretty JSON on stdout.
pub fn print_json<T: serde::Serialize>(v: &T) -> Result<()> {
    let text = serde_json::to_string_pretty(v).map_err(|e| Error::Failed(format!("json: {e}")))?;
    output::data(&format!("{text}\n"))
}
