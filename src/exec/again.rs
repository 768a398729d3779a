//! Running vmscale again in place: the command for the running binary
//! (`/proc/self/exe`) with the arguments given, the first as its name.
//! main.rs uses it to move a password off the command line, and
//! `exec::layout` to start without address-space randomisation.

use std::ffi::OsString;
use std::os::unix::process::CommandExt;
use std::process::Command;

/// The running vmscale with `args` (argv[0] first); the caller adds what
/// differs (environment, personality) and execs it.
pub fn command(args: &[OsString]) -> std::io::Result<Command> {
    let mut again = Command::new(std::env::current_exe()?);
    if let Some((arg0, rest)) = args.split_first() {
        again.arg0(arg0).args(rest);
    }
    Ok(again)
}
