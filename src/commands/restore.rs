//! `vmscale restore`: puts back the knobs a run killed with SIGKILL left
//! changed, from its journal; and the same check at every start.

use super::{Error, Result};
use crate::knobs::{journal, session};

/// Restores from the journal, saying what was done.
pub fn restore() -> Result<()> {
    let path = journal::default_path();
    let lines = session::recover(&path).map_err(Error::Input)?;
    if lines.is_empty() {
        println!("nothing to restore: no knob journal at {}", path.display());
    }
    for l in lines {
        println!("{l}");
    }
    Ok(())
}

/// At start: repairs a journal whose run is gone; prints what it restored
/// (or why it could not) on stderr and carries on.
pub fn at_start() {
    let path = journal::default_path();
    if !path.exists() {
        return;
    }
    match session::recover(&path) {
        Ok(lines) => {
            for l in lines {
                eprintln!("vmscale: {l}");
            }
        }
        // A live owner restores its own knobs; anything else is reported.
        Err(e) => {
            if journal::read(&path)
                .ok()
                .flatten()
                .is_some_and(|j| !journal::owner_alive(&j))
            {
                eprintln!("vmscale: a knob journal was left behind but restoring failed: {e}");
            }
        }
    }
}
