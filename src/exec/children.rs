//! Forked children: forking N workers that die with vmscale, noticing one
//! that exited too early, reaping them with their usage, and killing the
//! rest after a failure, a stop signal (Ctrl-C, `kill`) or an early return.

use super::clock;
use crate::error::{Error, Result};

/// Worker processes forked by [`Forked::spawn`]; every one still running
/// is killed and reaped when this is dropped, so no early return leaves
/// a worker behind.
pub struct Forked {
    pids: Vec<libc::pid_t>,
    /// "task" or "process": how errors name a worker.
    what: &'static str,
}

impl Forked {
    /// Forks `n` children; child `i` runs `body(i)` and exits with status 0
    /// (a failure is reported through shared memory, not the status). Each
    /// child dies with vmscale (`group::die_with_parent`).
    ///
    /// The caller must make sure the children may run Rust code: tasks of
    /// earlier samples joined, and the only other threads vmscale's
    /// monitors (--profile's drain thread, the numa_maps and lock
    /// readers), which hold no lock a child takes except the allocator's;
    /// glibc's malloc is made safe across fork by its own fork handlers.
    pub fn spawn(n: usize, what: &'static str, body: impl Fn(usize)) -> Result<Forked> {
        let mut forked = Forked {
            pids: Vec::with_capacity(n),
            what,
        };
        let parent = std::process::id() as libc::pid_t;
        for i in 0..n {
            // SAFETY: see the contract above: the child may run Rust code.
            let pid = unsafe { libc::fork() };
            if pid == 0 {
                super::group::die_with_parent(parent);
                super::held::close_in_child();
                body(i);
                // SAFETY: leave the child without running the parent's destructors.
                unsafe { libc::_exit(0) };
            }
            if pid < 0 {
                // Drop kills and reaps the children forked so far.
                return Err(Error::Failed(format!(
                    "fork of {what} {i} failed: {}",
                    super::errno_text()
                )));
            }
            forked.pids.push(pid);
        }
        Ok(forked)
    }

    pub fn pids(&self) -> &[libc::pid_t] {
        &self.pids
    }

    /// An error naming the first child that already exited (it can never
    /// arrive at a barrier), without reaping it.
    pub fn exited_early(&self, before: &str) -> Option<String> {
        exited_early(&self.pids)
            .map(|(i, pid)| format!("{} {i} (pid {pid}) exited {before}", self.what))
    }

    /// Waits for every child and returns their usage summed; the first
    /// failure (killed, non-zero status) after all are reaped, so none is
    /// left a zombie. A stop signal vmscale catches while it waits (a
    /// terminal's Ctrl-C, which the children's inherited handler only
    /// notes, or a `kill` of vmscale alone) kills and reaps them all at
    /// once: a long sample ends when asked, not when its tasks are done.
    pub fn reap(mut self) -> Result<clock::Usage> {
        for &pid in &self.pids {
            if let Some(sig) = exit_or_stop(pid) {
                kill_all(&std::mem::take(&mut self.pids));
                return Err(Error::Failed(format!(
                    "stopped by {}",
                    super::signals::name(sig)
                )));
            }
        }
        let mut total = clock::Usage::default();
        let mut failure = None;
        for (i, pid) in std::mem::take(&mut self.pids).into_iter().enumerate() {
            match reap(pid) {
                Ok(u) => {
                    total.user_ns += u.user_ns;
                    total.sys_ns += u.sys_ns;
                }
                Err(e) => {
                    failure = failure.or(Some(e.context(format!("{} {i} (pid {pid})", self.what))))
                }
            }
        }
        failure.map_or(Ok(total), Err)
    }
}

impl Drop for Forked {
    fn drop(&mut self) {
        kill_all(&self.pids);
    }
}

/// The first child (index, pid) that has already exited, without reaping
/// it: such a child can never arrive at a barrier.
pub fn exited_early(pids: &[libc::pid_t]) -> Option<(usize, libc::pid_t)> {
    pids.iter()
        .enumerate()
        .find_map(|(i, &pid)| (peek(pid) == Some(pid)).then_some((i, pid)))
}

/// Peeks at a child without reaping it: `Some(pid)` once it has exited,
/// `Some(0)` while it runs, `None` when it is no child to wait for (one
/// already reaped).
pub fn peek(pid: libc::pid_t) -> Option<libc::pid_t> {
    // SAFETY: siginfo_t is plain data; waitid with WNOWAIT only peeks at
    // our own child and leaves it to be reaped later.
    unsafe {
        let mut info: libc::siginfo_t = std::mem::zeroed();
        let r = libc::waitid(
            libc::P_PID,
            pid as libc::id_t,
            &mut info,
            libc::WEXITED | libc::WNOHANG | libc::WNOWAIT,
        );
        (r == 0).then(|| info.si_pid())
    }
}

/// Blocks until child `pid` has exited (left to be reaped) or vmscale has
/// caught a stop signal, which it returns. A signal's handler interrupts
/// poll(2) whatever SA_RESTART says; a signal that lands between the check
/// and the poll is seen at the child's exit, as without this. Without a
/// pidfd (Linux before 5.3) it returns at once and the reap waits.
fn exit_or_stop(pid: libc::pid_t) -> Option<i32> {
    let fd = pidfd(pid)?;
    loop {
        if let Some(sig) = super::signals::caught() {
            return Some(sig);
        }
        if wait_exit(&fd, -1) {
            return None;
        }
    }
}

/// A pidfd of child `pid`, readable once it exits (None before Linux 5.3).
pub fn pidfd(pid: libc::pid_t) -> Option<std::os::fd::OwnedFd> {
    use std::os::fd::FromRawFd;
    // SAFETY: pidfd_open takes a pid and flags and returns a new descriptor or -1.
    let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) };
    // SAFETY: a non-negative result is a descriptor we now own.
    (fd >= 0).then(|| unsafe { std::os::fd::OwnedFd::from_raw_fd(fd as i32) })
}

/// Waits up to `ms` (-1: without end) for the child of pidfd `fd` to
/// exit; true once it has, false on the timeout or a signal.
pub fn wait_exit(fd: &std::os::fd::OwnedFd, ms: i32) -> bool {
    use std::os::fd::AsRawFd;
    let mut p = libc::pollfd {
        fd: fd.as_raw_fd(),
        events: libc::POLLIN,
        revents: 0,
    };
    // SAFETY: p is one valid pollfd.
    unsafe { libc::poll(&mut p, 1, ms) > 0 }
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

    /// Whether `pid` is still a child of ours to wait for (or a zombie).
    fn is_child(pid: libc::pid_t) -> bool {
        // SAFETY: kill with signal 0 only checks that the process exists.
        unsafe { libc::kill(pid, 0) == 0 }
    }

    #[test]
    fn forked_children_run_their_index_and_are_reaped_with_usage() {
        let f = Forked::spawn(3, "task", |i| {
            // SAFETY: ends this forked child with its index as status.
            unsafe { libc::_exit(i as i32) }
        })
        .unwrap();
        let pids = f.pids().to_vec();
        let e = f.reap().unwrap_err().to_string();
        // Child 0 exited 0; the first failure is child 1's status 1.
        assert!(e.starts_with("task 1 (pid "), "{e}");
        assert!(e.ends_with("exited with status 1"), "{e}");
        assert!(pids.iter().all(|&p| !is_child(p)), "left unreaped");
    }

    #[test]
    fn dropping_forked_children_kills_and_reaps_them() {
        let f = Forked::spawn(2, "process", |_| {
            loop {
                std::thread::sleep(std::time::Duration::from_secs(1));
            }
        })
        .unwrap();
        let pids = f.pids().to_vec();
        assert_eq!(f.exited_early("before the start"), None);
        drop(f);
        assert!(pids.iter().all(|&p| !is_child(p)), "left running");
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
