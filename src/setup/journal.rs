//! The set-up journal: one file per [`super::Setup`] in `<state>/setup/`,
//! naming each resource before it is made (written and fsynced first) and
//! dropping it once it is undone, so whatever a killed run left can be
//! undone later. A live Setup holds an flock on its `.lock` file: a journal
//! whose lock can be taken belongs to a run that is gone. The workers a run
//! forks inherit the lock, so a run killed with SIGKILL may be gone while
//! its workers, exiting, still hold it (and the swapped memory and cgroup
//! they are freeing): its journal's pid and start time tell, and the set-up
//! is undone once they have exited.

use serde::{Deserialize, Serialize};
use std::fs::{File, TryLockError};
use std::path::{Component, Path, PathBuf};
use std::time::{Duration, Instant};

use crate::error::{Error, Result};
use crate::state_dir as state;

/// One resource, recorded before it is made; undone in reverse order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Step {
    /// A directory made (mode 0700) in the room.
    Dir { path: PathBuf },
    /// A private tmpfs mounted at `mountpoint`.
    Tmpfs { mountpoint: PathBuf },
    /// A loop device on `image`, found again by its backing file.
    Loop { image: PathBuf },
    /// The image's file system mounted at `mountpoint`.
    Mount { mountpoint: PathBuf },
    /// `+memory` written to a cgroup v2 `cgroup.subtree_control`.
    Controller { file: PathBuf },
    /// A cgroup directory.
    Cgroup { path: PathBuf },
    /// A zram device hot-added: `id` once known; `before` lists the ids
    /// there were, so a device added just before a kill is still found.
    Zram { id: Option<u32>, before: Vec<u32> },
    /// A swap file in the room.
    SwapFile { path: PathBuf },
    /// A swap device or file swapped on.
    SwapOn { device: PathBuf },
    /// /proc/sys/vm/nr_hugepages before it was raised.
    HugePages { original: u64 },
}

/// What the journal file holds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Record {
    /// The vmscale process that made the set-up.
    pub pid: u32,
    /// Its start time (field 22 of /proc/PID/stat), so a reused pid is not
    /// taken for it; absent in journals of older versions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pid_start: Option<i64>,
    pub started_at: String,
    /// The room: every file and mount point of the set-up lies in it.
    pub room: PathBuf,
    pub steps: Vec<Step>,
}

/// A journal and its held lock: a live Setup's, or a dead run's being
/// recovered.
pub struct Journal {
    pub record: Record,
    path: PathBuf,
    lock_path: PathBuf,
    _lock: File,
}

/// `<state>/setup`: journals, locks and rooms.
pub fn setup_dir(state_dir: &Path) -> PathBuf {
    state_dir.join("setup")
}

impl Journal {
    /// A new, empty journal in `dir` (created 0700 and checked), its lock
    /// held; the room it names is not made yet.
    pub fn create(dir: &Path) -> Result<Journal> {
        state::ensure_dir(dir).map_err(|e| e.context("set-up journal"))?;
        let dir = &canonical(dir)?;
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        let id = format!("{}-{now}", std::process::id());
        let lock_path = dir.join(format!("{id}.lock"));
        let lock = state::open_rw(&lock_path)?;
        lock.try_lock()
            .map_err(|e| Error::Failed(format!("set-up lock {}: {e}", lock_path.display())))?;
        let j = Journal {
            record: Record {
                pid: std::process::id(),
                pid_start: crate::machine::proc_stat::start_time(i64::from(std::process::id())),
                started_at: crate::timefmt::now(),
                room: dir.join(&id),
                steps: Vec::new(),
            },
            path: dir.join(format!("{id}.journal")),
            lock_path,
            _lock: lock,
        };
        j.write()?;
        Ok(j)
    }

    /// Records `step` durably; call it before making the resource.
    pub fn push(&mut self, step: Step) -> Result<()> {
        self.record.steps.push(step);
        self.write()
    }

    /// Replaces the last step (a zram id learnt after the device was added).
    pub fn amend_last(&mut self, step: Step) -> Result<()> {
        if let Some(last) = self.record.steps.last_mut() {
            *last = step;
        }
        self.write()
    }

    /// Drops the last step, durably: it was undone at once.
    pub fn pop(&mut self) -> Result<()> {
        self.record.steps.pop();
        self.write()
    }

    /// Drops step `i`, durably: it is undone.
    pub fn remove_step(&mut self, i: usize) -> Result<()> {
        self.record.steps.remove(i);
        self.write()
    }

    fn write(&self) -> Result<()> {
        let text = serde_json::to_string_pretty(&self.record)
            .map_err(|e| Error::Failed(format!("set-up journal: {e}")))?;
        state::write_durably(&self.path, text.as_bytes(), "set-up journal")
    }

    /// Removes the journal, then its lock file: everything is undone.
    pub fn close(self) -> Result<()> {
        state::remove_durably(&self.path, "set-up journal")?;
        state::remove_durably(&self.lock_path, "set-up lock")
    }

    pub fn path(&self) -> &Path {
        &self.path
    }
}

/// The journals in `dir` whose runs are gone, each with its lock now held;
/// a live Setup's journal is left alone. Lock files without a journal (a
/// run killed while closing) and temporary files are removed.
pub fn dead(dir: &Path) -> Result<Vec<Journal>> {
    if std::fs::symlink_metadata(dir).is_err() {
        return Ok(Vec::new());
    }
    state::check_dir(dir).map_err(|e| e.context("refusing the set-up journals"))?;
    let dir = &canonical(dir)?;
    let entries = std::fs::read_dir(dir).map_err(|e| Error::io("cannot list", dir, e))?;
    // Every run named by a lock or a journal (a journal whose lock file is
    // gone has no live owner either).
    let mut ids: Vec<String> = entries
        .filter_map(|e| {
            let name = e.ok()?.file_name().into_string().ok()?;
            let id = name
                .strip_suffix(".lock")
                .or(name.strip_suffix(".journal"))?;
            Some(id.to_string())
        })
        .collect();
    ids.sort();
    ids.dedup();
    let mut out = Vec::new();
    for id in &ids {
        let lock_path = dir.join(format!("{id}.lock"));
        let lock = state::open_rw(&lock_path)?;
        match lock.try_lock() {
            Ok(()) => {}
            Err(TryLockError::WouldBlock) => match read(&dir.join(format!("{id}.journal")))? {
                Some(r) if run_gone(&r) => wait_for_workers(&lock, &lock_path, &r)?,
                _ => continue,
            },
            Err(TryLockError::Error(e)) => return Err(Error::io("set-up lock", &lock_path, e)),
        }
        // A run killed while writing its journal left the temporary file.
        let path = dir.join(format!("{id}.journal"));
        crate::atomic_file::remove_leftovers(&path)?;
        let Some(record) = read(&path)? else {
            state::remove_durably(&lock_path, "set-up lock")?;
            continue;
        };
        check_room(&record, &dir.join(id), &path)?;
        out.push(Journal {
            record,
            path,
            lock_path,
            _lock: lock,
        });
    }
    Ok(out)
}

/// Whether the run that wrote `r` is gone (its pid absent, or now another
/// process's). A journal without the start time is never judged gone
/// while its lock is held.
fn run_gone(r: &Record) -> bool {
    r.pid_start
        .is_some_and(|s| crate::machine::proc_stat::start_time(i64::from(r.pid)) != Some(s))
}

/// How long a start or `vmscale restore` waits for the exiting workers of
/// a gone run: freeing a swapped-out gigabyte took them 20–30 s here.
const WORKERS_EXIT: Duration = Duration::from_secs(300);

/// Takes `lock` once the exiting workers of the gone run that wrote `r`
/// have let it go, saying on stderr what they still hold meanwhile.
fn wait_for_workers(lock: &File, lock_path: &Path, r: &Record) -> Result<()> {
    let start = Instant::now();
    eprintln!(
        "vmscale: run pid {} (started {}) is gone, but processes it forked still hold its \
         set-up as they exit ({}); waiting for them before undoing it (at most {} s)",
        r.pid,
        r.started_at,
        super::holding(&r.steps),
        WORKERS_EXIT.as_secs()
    );
    loop {
        std::thread::sleep(Duration::from_millis(100));
        match lock.try_lock() {
            Ok(()) => return Ok(()),
            Err(TryLockError::WouldBlock) => {}
            Err(TryLockError::Error(e)) => return Err(Error::io("set-up lock", lock_path, e)),
        }
        let left = || {
            format!(
                "the set-up of run pid {} is left ({}): run `vmscale restore` once its \
                 processes are gone",
                r.pid,
                super::holding(&r.steps)
            )
        };
        if let Some(sig) = crate::exec::signals::caught() {
            return Err(Error::Refused(format!(
                "{} while waiting; {}",
                crate::exec::signals::name(sig),
                left()
            )));
        }
        if start.elapsed() > WORKERS_EXIT {
            return Err(Error::Failed(format!(
                "processes of run pid {} still held its set-up after {} s; {}",
                r.pid,
                WORKERS_EXIT.as_secs(),
                left()
            )));
        }
    }
}

/// The set-ups of live runs in `dir`, one line each (for `vmscale
/// restore`, which leaves them alone).
pub fn live(dir: &Path) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().to_string();
        let Some(id) = name.strip_suffix(".journal") else {
            continue;
        };
        let held = state::open_rw(&dir.join(format!("{id}.lock")))
            .is_ok_and(|l| matches!(l.try_lock(), Err(TryLockError::WouldBlock)));
        if let (true, Ok(Some(r))) = (held, read(&e.path())) {
            out.push(format!(
                "left alone: the set-up of running vmscale pid {} (started {}; {})",
                r.pid,
                r.started_at,
                super::holding(&r.steps)
            ));
        }
    }
    out.sort();
    out
}

/// `dir` as the kernel names it (absolute, no symbolic link on the way):
/// mount points in the journal must match /proc/self/mountinfo.
fn canonical(dir: &Path) -> Result<PathBuf> {
    dir.canonicalize()
        .map_err(|e| Error::io("cannot resolve", dir, e))
}

fn read(path: &Path) -> Result<Option<Record>> {
    state::read_json(
        path,
        "the set-up journal",
        "inspect it, undo its mounts, loop devices, cgroups and swap by hand and delete it",
    )
}

/// The journal is data, not a licence: its room must be the one its name
/// gives, and every path it names must lie in that room.
fn check_room(r: &Record, room: &Path, journal: &Path) -> Result<()> {
    let refused = |why: String| {
        Err(Error::Refused(format!(
            "refused the set-up journal {}: {why}; inspect it and delete it",
            journal.display()
        )))
    };
    if r.room != room {
        return refused(format!(
            "its room {} is not {}",
            r.room.display(),
            room.display()
        ));
    }
    for s in &r.steps {
        let path = match s {
            Step::Dir { path } | Step::SwapFile { path } => path,
            Step::Tmpfs { mountpoint } | Step::Mount { mountpoint } => mountpoint,
            Step::Loop { image } => image,
            _ => continue,
        };
        if !in_room(room, path) {
            return refused(format!("{} lies outside its room", path.display()));
        }
    }
    Ok(())
}

/// Whether `path` is `room` or below it, by plain components.
pub fn in_room(room: &Path, path: &Path) -> bool {
    path.starts_with(room)
        && path
            .components()
            .all(|c| matches!(c, Component::RootDir | Component::Normal(_)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn live_journals_are_not_dead_and_dropped_ones_are() {
        let d = crate::scratch::at("setup");
        let mut j = Journal::create(&d).unwrap();
        let room = j.record.room.clone();
        j.push(Step::Dir { path: room.clone() }).unwrap();
        assert!(dead(&d).unwrap().is_empty(), "a held journal is live");
        drop(j); // as a kill would: the lock goes, the journal stays
        let found = dead(&d).unwrap();
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].record.steps, vec![Step::Dir { path: room }]);
        for j in found {
            j.close().unwrap();
        }
        assert_eq!(std::fs::read_dir(&d).unwrap().count(), 0);
    }

    #[test]
    fn paths_outside_the_room_are_refused() {
        let d = crate::scratch::at("setup");
        let mut j = Journal::create(&d).unwrap();
        let room = j.record.room.clone();
        j.push(Step::Mount {
            mountpoint: room.join("../../etc"),
        })
        .unwrap();
        drop(j);
        let e = dead(&d).err().unwrap();
        assert!(matches!(e, Error::Refused(_)), "{e:?}");
        assert!(e.to_string().contains("outside its room"), "{e}");
        assert!(in_room(&room, &room.join("fs0")));
        assert!(!in_room(&room, Path::new("/etc")));
    }
}
