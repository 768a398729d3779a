//! SIGINT, SIGTERM and SIGHUP (a closed terminal) become a flag the runner
//! checks between samples, so an interrupted run keeps its samples and is
//! marked incomplete; what waits for a sample's forked tasks or commands
//! checks it too and stops them (`children::Forked::reap`, `cmd_child`),
//! and timed loops in threads end on it ([`past`], [`sleep`]).

use std::sync::atomic::{AtomicI32, Ordering};

static CAUGHT: AtomicI32 = AtomicI32::new(0);

extern "C" fn on_signal(sig: libc::c_int) {
    CAUGHT.store(sig, Ordering::SeqCst);
}

/// Installs the handlers (idempotent).
pub fn install() {
    for sig in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
        // SAFETY: the handler only stores to an atomic, which is async-signal-safe;
        // sigaction is zeroed plain data with the handler address filled in.
        unsafe {
            let mut sa: libc::sigaction = std::mem::zeroed();
            sa.sa_sigaction = on_signal as *const () as usize;
            // Blocking calls (wait4 on a task, a read) carry on; the flag is
            // what ends the run.
            sa.sa_flags = libc::SA_RESTART;
            libc::sigemptyset(&mut sa.sa_mask);
            libc::sigaction(sig, &sa, std::ptr::null_mut());
        }
    }
}

/// The signal caught so far, if any.
pub fn caught() -> Option<i32> {
    match CAUGHT.load(Ordering::SeqCst) {
        0 => None,
        s => Some(s),
    }
}

/// Whether a timed loop should end: its `deadline` (monotonic ns) has
/// passed, or vmscale caught a stop signal. Threads cannot be killed as
/// forked tasks are, so their loops end here; the runner drops the
/// sample a signal cut short.
pub fn past(deadline: u64) -> bool {
    super::clock::monotonic_ns() > deadline || caught().is_some()
}

/// Sleeps `ns`, or until vmscale catches a stop signal (checked every
/// 50 ms: `std::thread::sleep` carries on past a signal).
pub fn sleep(ns: u64) {
    let deadline = super::clock::monotonic_ns().saturating_add(ns);
    loop {
        let now = super::clock::monotonic_ns();
        if now >= deadline || caught().is_some() {
            return;
        }
        let step = (deadline - now).min(50_000_000);
        std::thread::sleep(std::time::Duration::from_nanos(step));
    }
}

pub fn name(sig: i32) -> &'static str {
    match sig {
        libc::SIGINT => "SIGINT",
        libc::SIGTERM => "SIGTERM",
        libc::SIGHUP => "SIGHUP",
        _ => "a signal",
    }
}
