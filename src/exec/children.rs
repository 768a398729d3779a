//! Forked children: noticing one that exited too early, reaping with its
//! usage, and killing the rest after a failure.

use super::clock;
use crate::error::{Error, Result};

/// The first child (index, pid) that has already exited, without reaping
/// it: such a child can never arrive at a barrier.
pub fn exited_early(pids: &[libc::pid_t]) -> Option<(usize, libc::pid_t)> {
    pids.iter().enumerate().find_map(|(i, &pid)| {
        // SAFETY: siginfo_t is plain data; waitid with WNOWAIT only peeks at
        // our own child and leaves it to be reaped later.
        let exited = unsafe {
            let mut info: libc::siginfo_t = std::mem::zeroed();
            libc::waitid(
                libc::P_PID,
                pid as libc::id_t,
                &mut info,
                libc::WEXITED | libc::WNOHANG | libc::WNOWAIT,
            ) == 0
                && info.si_pid() == pid
        };
        exited.then_some((i, pid))
    })
}

/// Waits for a child with wait4 and returns its usage; an error when it was
/// killed by a signal or exited with a non-zero status.
pub fn reap(pid: libc::pid_t) -> Result<clock::Usage> {
    let mut status = 0;
    // SAFETY: rusage is plain data.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    loop {
        // SAFETY: pid is our child; status and ru are writable.
        let r = unsafe { libc::wait4(pid, &mut status, 0, &mut ru) };
        if r == pid {
            break;
        }
        if std::io::Error::last_os_error().raw_os_error() != Some(libc::EINTR) {
            return Err(Error::Failed(format!(
                "wait4 for pid {pid}: {}",
                super::errno_text()
            )));
        }
    }
    if libc::WIFSIGNALED(status) {
        return Err(Error::Failed(format!(
            "killed by signal {}",
            libc::WTERMSIG(status)
        )));
    }
    if libc::WIFEXITED(status) && libc::WEXITSTATUS(status) != 0 {
        return Err(Error::Failed(format!(
            "exited with status {}",
            libc::WEXITSTATUS(status)
        )));
    }
    Ok(clock::from_rusage(&ru))
}

/// Kills and reaps every child (after a failure).
pub fn kill_all(pids: &[libc::pid_t]) {
    for &pid in pids {
        // SAFETY: pids are our own children.
        unsafe {
            libc::kill(pid, libc::SIGKILL);
            libc::waitpid(pid, std::ptr::null_mut(), 0);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fork_exit(code: i32) -> libc::pid_t {
        // SAFETY: the child only calls _exit.
        let pid = unsafe { libc::fork() };
        if pid == 0 {
            // SAFETY: leave the child at once.
            unsafe { libc::_exit(code) };
        }
        assert!(pid > 0);
        pid
    }

    #[test]
    fn reaps_and_reports_exit_status() {
        let ok = fork_exit(0);
        let bad = fork_exit(3);
        assert!(reap(ok).is_ok());
        assert_eq!(reap(bad).unwrap_err().to_string(), "exited with status 3");
    }

    #[test]
    fn sees_a_child_that_exited_without_reaping_it() {
        let pid = fork_exit(0);
        let mut seen = None;
        for _ in 0..2000 {
            seen = exited_early(&[pid]);
            if seen.is_some() {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
        assert_eq!(seen, Some((0, pid)));
        // Still there to reap.
        assert!(reap(pid).is_ok());
    }
}
