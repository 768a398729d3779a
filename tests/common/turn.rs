//! Turns on the machine for the tests that change its knobs or set-up
//! room (swap, zram, cgroups, huge pages) or read them as their baseline.
//! When each tests/NAME.rs was its own binary, cargo ran the files one
//! after another, and each file arranged its own tests (some share a
//! mutex). In one binary (tests/all.rs) tests of different files run side
//! by side, so these take turns by file: any number of one file's tests at
//! once, as before, but never two files' (a --tune run would otherwise read
//! knobs.rs's variant as its original, or a vms_e2e swap device show up in
//! setup_room's count of what was left).

use std::panic::Location;
use std::sync::{Condvar, Mutex};

/// The file whose tests hold the machine, and how many of them.
static HOLDER: Mutex<Option<(&'static str, usize)>> = Mutex::new(None);
static FREED: Condvar = Condvar::new();

/// One test's share of its file's turn; dropping it (also when the test
/// panics) gives the machine back once the file's last holder is done.
pub struct Turn {
    file: &'static str,
}

/// Waits until no other test file holds the machine, then joins the
/// calling file's turn (the file is the caller's, so a test need not name
/// it).
#[track_caller]
pub fn machine_turn() -> Turn {
    let file = Location::caller().file();
    let mut holder = HOLDER.lock().unwrap_or_else(|e| e.into_inner());
    loop {
        match holder.as_mut() {
            None => {
                *holder = Some((file, 1));
                break;
            }
            Some((f, n)) if *f == file => {
                *n += 1;
                break;
            }
            Some(_) => holder = FREED.wait(holder).unwrap_or_else(|e| e.into_inner()),
        }
    }
    Turn { file }
}

impl Drop for Turn {
    fn drop(&mut self) {
        let mut holder = HOLDER.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((_, n)) = holder.as_mut().filter(|(f, _)| *f == self.file) {
            *n -= 1;
            if *n == 0 {
                *holder = None;
                FREED.notify_all();
            }
        }
    }
}
