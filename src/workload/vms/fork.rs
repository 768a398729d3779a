//! case-fork and case-fork-sleep: usemem -n 20000 with no memory, a fork
//! bomb: every child is forked, waits until all exist (usemem's start
//! pipe), then exits, or sleeps first (fork-sleep's `--sleep 10`); timed
//! from the first fork to the last child reaped. The count is the
//! script's 20000 scaled by `--size`, as the memory of the other cases.

use std::collections::BTreeMap;

use crate::error::{Error, Result};
use crate::exec::clock::{self, Who};

/// The script's count of processes.
pub const SUITE_FORKS: u64 = 20_000;

/// The children the case forks on a machine of `scale` times this one.
pub fn count(scale: f64) -> u64 {
    ((SUITE_FORKS as f64 * scale).round() as u64).max(1)
}

/// A child: waits for the start pipe's end (all forked), sleeps, exits.
/// Only async-signal-safe calls: the parent may have threads.
fn child(go: libc::c_int, stop: libc::c_int, sleep_ns: u64) -> ! {
    // SAFETY: closing and reading descriptors this process owns, a
    // sleep, and _exit; no allocation after fork.
    unsafe {
        libc::close(stop);
        let mut b = 0u8;
        while libc::read(go, (&mut b as *mut u8).cast(), 1) < 0 {}
        if sleep_ns > 0 {
            let ts = libc::timespec {
                tv_sec: (sleep_ns / 1_000_000_000) as libc::time_t,
                tv_nsec: (sleep_ns % 1_000_000_000) as libc::c_long,
            };
            libc::nanosleep(&ts, std::ptr::null_mut());
        }
        libc::_exit(0)
    }
}

/// One sample: `count` children, each sleeping `sleep_ns` once all are
/// forked; the figures and the children's faults.
pub fn sample(count: u64, sleep_ns: u64) -> Result<BTreeMap<String, f64>> {
    let mut fds = [0 as libc::c_int; 2];
    // SAFETY: fds is a writable pair.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(Error::Failed(format!(
            "pipe failed: {}",
            crate::exec::errno_text()
        )));
    }
    let (go, stop) = (fds[0], fds[1]);
    let before = clock::usage(Who::Children);
    let t0 = clock::monotonic_ns();
    let mut pids = Vec::with_capacity(count as usize);
    let mut failed = None;
    for _ in 0..count {
        // SAFETY: the child runs `child` only, which never returns.
        match unsafe { libc::fork() } {
            0 => child(go, stop, sleep_ns),
            pid if pid < 0 => {
                failed = Some(crate::exec::errno_text());
                break;
            }
            pid => pids.push(pid),
        }
    }
    // SAFETY: our own descriptors; closing the write end starts them all.
    unsafe {
        libc::close(stop);
        libc::close(go);
    }
    for pid in &pids {
        let mut status = 0;
        // SAFETY: reaping a child of ours.
        while unsafe { libc::waitpid(*pid, &mut status, 0) } < 0
            && std::io::Error::last_os_error().raw_os_error() == Some(libc::EINTR)
        {}
    }
    let secs = (clock::monotonic_ns() - t0) as f64 / 1e9;
    if let Some(e) = failed {
        return Err(Error::Refused(format!(
            "fork failed after {} of {count} children: {e}: use a smaller --size \
             (the count is 20000 times it) or raise the process limit (ulimit -u)",
            pids.len()
        )));
    }
    let u = clock::usage(Who::Children).since(&before);
    let mut out = BTreeMap::new();
    out.insert("wall".into(), secs);
    out.insert("minflt".into(), u.minflt as f64);
    out.insert("majflt".into(), u.majflt as f64);
    out.insert("fork.children".into(), pids.len() as f64);
    out.insert("fork.per_s".into(), pids.len() as f64 / secs.max(1e-9));
    Ok(out)
}
