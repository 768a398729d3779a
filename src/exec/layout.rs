//! Address-space layout: will-it-scale's runner (`runtest.py`) runs every
//! test under `setarch -R`, without address-space randomisation, and a
//! test whose cost depends on where its heap, stack and mappings lie
//! (glibc's malloc fast path in malloc2 moved by 1.3x between layouts
//! here; a mapping spanning one page-table page or two) measures the same
//! layout each run only so. A workload that asks for it has vmscale run
//! itself again with randomisation off before anything is measured.

use crate::error::{Error, Result};

/// The kernel's switch for the whole machine: 0 randomises nothing.
const RANDOMIZE_VA_SPACE: &str = "/proc/sys/kernel/randomize_va_space";

/// Whether this process's address space is laid out at random: the
/// machine randomises (`randomize_va_space` not 0) and the process's
/// personality does not carry `ADDR_NO_RANDOMIZE`.
pub fn randomised() -> bool {
    let machine = std::fs::read_to_string(RANDOMIZE_VA_SPACE)
        .map(|s| s.trim() != "0")
        .unwrap_or(true);
    machine && persona() & libc::ADDR_NO_RANDOMIZE == 0
}

fn persona() -> libc::c_int {
    // 0xffffffff reads the personality without changing it.
    // SAFETY: personality(2) takes a plain value and touches no memory.
    unsafe { libc::personality(0xffff_ffff) }
}

/// Runs vmscale again, with the same arguments, without address-space
/// randomisation, unless it already runs so. Returns only when nothing
/// needed doing; a failed switch is an error, never a run in another
/// layout than the one asked for.
pub fn fix() -> Result<()> {
    use std::os::unix::process::CommandExt;
    if !randomised() {
        return Ok(());
    }
    let was = persona();
    let with = (was | libc::ADDR_NO_RANDOMIZE) as libc::c_ulong;
    // SAFETY: as above; the flag is inherited by the exec below.
    if was == -1 || unsafe { libc::personality(with) } == -1 {
        return Err(Error::Failed(format!(
            "cannot turn address-space randomisation off (personality: {}): \
             run with --aslr on",
            std::io::Error::last_os_error()
        )));
    }
    let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    let what = "running vmscale again without address-space randomisation";
    let e = match super::again::command(&args) {
        Ok(mut again) => again.exec(),
        Err(e) => e,
    };
    Err(Error::io(what, "/proc/self/exe", e))
}
