//! The machine-wide knob lock: one flock on /run/vmscale/knobs.lock, held
//! by every run that changes knobs, whatever its state directory, so two
//! runs never change knobs at once. The lock file names the holder and its
//! journal, so the next holder can repair the knobs of a holder that was
//! killed, even one that kept its journal in another state directory.

use serde::{Deserialize, Serialize};
use std::fs::TryLockError;
use std::io::{Read, Seek, Write};
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::exec::held::Held;
use crate::state_dir as state;

/// Where the lock lives: fixed, so every vmscale on the machine finds it.
pub const LOCK_DIR: &str = "/run/vmscale";

/// What the lock file says about its holder.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Holder {
    pub pid: u32,
    /// The holder's journal; restored by the next holder if it is still there.
    pub journal: PathBuf,
    pub knobs: Vec<String>,
}

/// The held lock; released when dropped (or when the process dies).
pub struct KnobLock {
    file: Held,
    path: PathBuf,
}

/// Whether to wait for another holder.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Wait {
    /// Wait, saying on stderr for whom.
    Yes,
    /// Refuse at once.
    No,
}

impl KnobLock {
    /// The lock file in the fixed lock directory.
    pub fn path() -> PathBuf {
        Path::new(LOCK_DIR).join("knobs.lock")
    }

    /// Takes the lock at `path` (its directory created 0700 and checked),
    /// waiting for another holder or refusing, as `wait` says.
    pub fn acquire_at(path: &Path, wait: Wait) -> Result<KnobLock> {
        let dir = path.parent().unwrap_or(Path::new("/"));
        state::ensure_dir(dir).map_err(|e| e.context("knob lock"))?;
        let file = Held::new(state::open_rw(path).map_err(|e| e.context("knob lock"))?);
        let mut lock = KnobLock {
            file,
            path: path.to_path_buf(),
        };
        match lock.file.try_lock() {
            Ok(()) => return Ok(lock),
            Err(TryLockError::Error(e)) => {
                return Err(Error::io("knob lock", path, e));
            }
            Err(TryLockError::WouldBlock) => {}
        }
        let who = match lock.holder() {
            Some(h) => format!(
                "vmscale pid {} (changing {}, journal {})",
                h.pid,
                h.knobs.join(", "),
                h.journal.display()
            ),
            None => "another vmscale".to_string(),
        };
        if wait == Wait::No {
            return Err(Error::Refused(format!(
                "{who} holds the knob lock {}; run again when it has ended, or drop --no-wait \
                 to wait for it",
                path.display()
            )));
        }
        eprintln!(
            "vmscale: waiting for {who} to finish: it holds the knob lock {} (--no-wait \
             refuses instead)",
            path.display()
        );
        // Polled rather than blocking, so a SIGINT caught meanwhile ends the wait.
        loop {
            match lock.file.try_lock() {
                Ok(()) => return Ok(lock),
                Err(TryLockError::WouldBlock) => {}
                Err(TryLockError::Error(e)) => {
                    return Err(Error::io("knob lock", path, e));
                }
            }
            if let Some(sig) = crate::exec::signals::caught() {
                return Err(Error::Refused(format!(
                    "{} while waiting for the knob lock; nothing was changed",
                    crate::exec::signals::name(sig)
                )));
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
    }

    /// Takes the machine-wide lock.
    pub fn acquire(wait: Wait) -> Result<KnobLock> {
        Self::acquire_at(&Self::path(), wait)
    }

    /// The holder recorded in the file: the last one, if it did not finish.
    pub fn holder(&mut self) -> Option<Holder> {
        let mut text = String::new();
        self.file.rewind().ok()?;
        self.file.read_to_string(&mut text).ok()?;
        serde_json::from_str(&text).ok()
    }

    /// Records us as the holder (before the first knob changes).
    pub fn record(&mut self, h: &Holder) -> Result<()> {
        let text =
            serde_json::to_string(h).map_err(|e| Error::Failed(format!("knob lock: {e}")))?;
        self.rewrite(text.as_bytes())
    }

    /// Clears the record (after every knob is restored).
    pub fn clear(&mut self) -> Result<()> {
        self.rewrite(b"")
    }

    fn rewrite(&mut self, bytes: &[u8]) -> Result<()> {
        let fail = |e: std::io::Error| Error::io("knob lock", &self.path, e);
        self.file.set_len(0).map_err(fail)?;
        self.file.rewind().map_err(fail)?;
        self.file.write_all(bytes).map_err(fail)?;
        self.file.sync_all().map_err(fail)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn second_holder_is_refused_and_record_survives() {
        let p = crate::scratch::at("run/knobs.lock");
        let mut first = KnobLock::acquire_at(&p, Wait::No).unwrap();
        let h = Holder {
            pid: 7,
            journal: "/x/knobs.journal".into(),
            knobs: vec!["swappiness".into()],
        };
        first.record(&h).unwrap();
        let e = KnobLock::acquire_at(&p, Wait::No).err().unwrap();
        assert!(matches!(e, Error::Refused(_)), "{e:?}");
        let e = e.to_string();
        assert!(e.contains("vmscale pid 7 (changing swappiness"), "{e}");
        drop(first);
        // Waits rather than refuses: a worker another test of this binary
        // forks meanwhile inherits the open lock until it exits.
        let mut second = KnobLock::acquire_at(&p, Wait::Yes).unwrap();
        assert_eq!(second.holder(), Some(h));
        second.clear().unwrap();
        assert_eq!(second.holder(), None);
    }
}
