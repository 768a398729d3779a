//! A command run as a measured child: started in a process group of its
//! own (killed with anything it started when vmscale lets go of it or
//! dies), a terminal's Ctrl-C forwarded to it, and waited for with wait4,
//! which gives the whole tree's rusage. Shared by cmd and stress-ng.

use std::process::{Command, Stdio};

use crate::error::{Error, Result};
use crate::exec::{children, clock};

/// How a child ended.
pub enum Ended {
    /// It ran: its exit code (128+N when killed by signal N) and the rusage
    /// of its tree.
    Exited(i32, clock::Usage),
    /// It could not be started: the shell's code for that (127 not found,
    /// 126 otherwise) and why.
    NotStarted(i32, std::io::Error),
}

/// Spawns `c` (stdin from /dev/null; stdout and stderr as the caller set
/// them) and waits for it, calling `tick` with the clock between polls.
/// A failure of wait4 itself is `Error::Failed`.
pub fn spawn_wait(mut c: Command, what: &str, tick: &mut dyn FnMut(u64)) -> Result<Ended> {
    c.stdin(Stdio::null());
    // Killed (with anything it started) when this returns or vmscale dies.
    let (child, group) = match crate::exec::group::Group::spawn(&mut c) {
        Ok(started) => started,
        Err(e) => {
            let code = match e.kind() {
                std::io::ErrorKind::NotFound => 127,
                _ => 126,
            };
            return Ok(Ended::NotStarted(code, e));
        }
    };
    let pid = child.id() as libc::pid_t;
    let mut forwarded = false;
    let exit_fd = children::pidfd(pid);
    loop {
        // The command has its own process group, so a terminal's Ctrl-C
        // reaches it only through us.
        if let Some(sig) = crate::exec::signals::caught().filter(|_| !forwarded) {
            group.signal(sig);
            forwarded = true;
        }
        let mut status = 0;
        // SAFETY: rusage is plain data, for which all zeroes is valid.
        let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
        // SAFETY: pid is our child, waited only here; both outputs are ours.
        let r = unsafe { libc::wait4(pid, &mut status, libc::WNOHANG, &mut ru) };
        if r == pid {
            let code = if libc::WIFSIGNALED(status) {
                128 + libc::WTERMSIG(status)
            } else {
                libc::WEXITSTATUS(status)
            };
            return Ok(Ended::Exited(code, clock::from_rusage(&ru)));
        }
        if r < 0 && std::io::Error::last_os_error().raw_os_error() != Some(libc::EINTR) {
            return Err(Error::Failed(format!(
                "wait4 for {what}: {}",
                crate::exec::errno_text()
            )));
        }
        tick(clock::monotonic_ns());
        wait_exit(exit_fd.as_ref(), 10);
    }
}

/// Waits up to `ms` for the child to exit: returns as soon as it does when
/// there is a pidfd, so the measured wall time is not rounded up to the
/// polling interval.
fn wait_exit(fd: Option<&std::os::fd::OwnedFd>, ms: i32) {
    match fd {
        Some(fd) => {
            children::wait_exit(fd, ms);
        }
        None => std::thread::sleep(std::time::Duration::from_millis(ms as u64)),
    }
}
