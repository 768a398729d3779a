//! `vmscale restore`: puts back the knobs a run killed with SIGKILL left
//! changed, from its journal, and undoes the set-up (mounts, loop devices,
//! cgroups, swap, huge pages) it left, from the set-up journals; and the
//! same at every start.

use super::{Error, Result};
use crate::exec::euid;
use crate::knobs::lock::{KnobLock, Wait};
use crate::knobs::{journal, live_root, session};

/// Restores from the journals (the last lock holder's and the state
/// directory's), saying what was done. Needs root; waits for a running
/// knob run unless `no_wait`.
pub fn restore(no_wait: bool) -> Result<()> {
    let uid = euid();
    if uid != 0 {
        return Err(Error::Refused(format!(
            "restore writes kernel knobs and needs root (effective uid is {uid}): run `sudo \
             vmscale restore`"
        )));
    }
    let path = journal::default_path();
    let wait = if no_wait { Wait::No } else { Wait::Yes };
    let mut lock = KnobLock::acquire(wait)?;
    // A set-up that cannot be undone does not keep the knobs from being
    // restored; its error is reported after them.
    let setup = crate::setup::recover();
    let mut lines = setup.as_ref().map_or_else(|_| Vec::new(), Clone::clone);
    lines.extend(session::recover_all(Some(&mut lock), &live_root(), &path)?);
    let setup_dir = crate::setup::journal::setup_dir(&crate::state_dir::dir());
    lines.extend(crate::setup::journal::live(&setup_dir));
    let mut out = String::new();
    if lines.is_empty() && setup.is_ok() {
        out.push_str(&format!(
            "nothing to restore: no knob or set-up journal left by a run (looked at {}, the \
             knob lock {} and {})
",
            path.display(),
            KnobLock::path().display(),
            setup_dir.display()
        ));
    }
    for l in lines {
        out.push_str(&format!("{l}\n"));
    }
    super::output::text(&out)?;
    setup.map(|_| ())
}

/// At start, as root: undoes set-ups whose run is gone (a live run holds
/// its set-up's lock), and repairs knob journals whose run is gone, when
/// the knob lock is free (a live run holds it and restores its own knobs);
/// prints what it did, or why it could not, on stderr and carries on.
pub fn at_start() {
    if euid() != 0 {
        return;
    }
    match crate::setup::recover() {
        Ok(lines) => {
            for l in lines {
                eprintln!("vmscale: {l}");
            }
        }
        Err(e) => eprintln!("vmscale: a set-up journal was left behind but undoing failed: {e}"),
    }
    let path = journal::default_path();
    if !path.exists() && !KnobLock::path().exists() {
        return;
    }
    let Ok(mut lock) = KnobLock::acquire(Wait::No) else {
        return;
    };
    match session::recover_all(Some(&mut lock), &live_root(), &path) {
        Ok(lines) => {
            for l in lines {
                eprintln!("vmscale: {l}");
            }
        }
        Err(e) => eprintln!("vmscale: a knob journal was left behind but restoring failed: {e}"),
    }
}
