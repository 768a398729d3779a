//! Writing a run's samples as they are taken, whatever the store does.
//! Each sample goes in with its profile and lock rows in one transaction,
//! guarded by its (run, case, seq) so a replay never stores it twice. On
//! PostgreSQL a lost connection sends samples to the spool until the
//! server answers again, then the spool is drained in order; a server that
//! never returns leaves the run incomplete with the spool's path. A SQLite
//! store whose file system fills or turns read-only stops the run, naming
//! the file and the free space.

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use super::backend::Db;
use super::error::{Error, Result};
use super::spool::{Ending, Entry, LockRow, ProfileRow, SampleRow, Spool};
use super::{Place, Store, pg, sys};
use crate::locks;
use crate::model::{Case, Sample, Status};
use crate::profile::CaseProfile;

/// How often a run whose server is away tries to reach it again.
const RETRY_EVERY: Duration = Duration::from_secs(1);
/// How long a finished run waits for its server before leaving the rest
/// in the spool.
const RETURN_PATIENCE: Duration = Duration::from_secs(10);

/// A PostgreSQL server gone away during a run.
pub(super) struct Away {
    spool: Spool,
    /// Spooled samples not yet in the store, oldest first.
    pending: VecDeque<SampleRow>,
    since: Instant,
    last_try: Instant,
}

/// The run this store writes, copied when it was created so that a spool
/// can make it again in any store.
pub(super) struct Writing {
    pub uuid: String,
    pub run: serde_json::Map<String, serde_json::Value>,
    pub cases: Vec<serde_json::Map<String, serde_json::Value>>,
}

fn json<T: serde::Serialize>(v: &T) -> String {
    serde_json::to_string(v).unwrap_or_else(|_| "null".into())
}

fn int(v: u64) -> i64 {
    i64::try_from(v).unwrap_or(i64::MAX)
}

/// A sample and what was recorded beside it, as rows.
pub fn sample_row(
    case: &Case,
    s: &Sample,
    profile: Option<&CaseProfile>,
    locks: Option<&[locks::LockRow]>,
) -> SampleRow {
    SampleRow {
        case_key: case.key(),
        seq: s.seq,
        warmup: s.warmup,
        taken_at: s.taken_at.clone(),
        figures: json(&s.data.figures),
        tasks: json(&s.data.tasks),
        vmstat: json(&s.vmstat),
        noise: json(&s.noise),
        flagged: s.flagged,
        profile: profile.map(|p| ProfileRow {
            event: p.event.clone(),
            hz: int(p.hz),
            samples: int(p.samples),
            lost: int(p.lost),
            folded: p.folded.iter().map(|(k, n)| (k.clone(), int(*n))).collect(),
        }),
        locks: locks
            .unwrap_or_default()
            .iter()
            .map(|r| LockRow {
                source: r.source.clone(),
                name: r.name.clone(),
                acquisitions: int(r.acquisitions),
                contended: int(r.contended),
                wait_ns: int(r.wait_ns),
                max_wait_ns: int(r.max_wait_ns),
            })
            .collect(),
    }
}

/// Writes one sample with its rows in one transaction, unless the run
/// already has it (a replay); returns whether it was written.
pub(super) fn write_row(db: &mut Db, run_id: i64, r: &SampleRow) -> Result<bool> {
    db.immediate(|db| insert_row(db, run_id, r))
}

/// [`write_row`] inside the caller's transaction.
pub(super) fn insert_row(db: &mut Db, run_id: i64, r: &SampleRow) -> Result<bool> {
    {
        let key = || -> [super::row::Value; 3] {
            [run_id.into(), r.case_key.as_str().into(), r.seq.into()]
        };
        if db
            .query_one(
                "SELECT 1 FROM samples WHERE run_id = ?1 AND case_key = ?2 AND seq = ?3",
                &key(),
            )?
            .is_some()
        {
            return Ok(false);
        }
        db.execute(
            "INSERT INTO samples (run_id, case_key, seq, warmup, taken_at, figures, tasks,
                                  vmstat, noise, flagged)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
            &[
                run_id.into(),
                r.case_key.as_str().into(),
                r.seq.into(),
                r.warmup.into(),
                r.taken_at.as_str().into(),
                r.figures.as_str().into(),
                r.tasks.as_str().into(),
                r.vmstat.as_str().into(),
                r.noise.as_str().into(),
                r.flagged.into(),
            ],
        )?;
        if let Some(p) = &r.profile {
            super::profiles::add_profile(db, run_id, &r.case_key, p)?;
        }
        for l in &r.locks {
            super::profiles::add_lock(db, run_id, &r.case_key, r.seq, l)?;
        }
        Ok(true)
    }
}

/// True for SQLite failing to write its files: a full or read-only file
/// system, or the disk failing.
pub(super) fn disk_failure(e: &Error) -> bool {
    use rusqlite::ErrorCode as C;
    matches!(
        e,
        Error::Sqlite(s) if matches!(
            s.sqlite_error_code(),
            Some(C::DiskFull | C::ReadOnly | C::SystemIoFailure | C::CannotOpen)
        )
    )
}

impl Store {
    /// Stores one sample of run `run_id` and what was recorded beside it,
    /// committed at once; on PostgreSQL, spooled while the server is
    /// away. A store that cannot take it any more is an error and
    /// [`Store::stopped`] says why.
    pub fn record(
        &mut self,
        run_id: i64,
        case: &Case,
        s: &Sample,
        profile: Option<&CaseProfile>,
        locks: Option<&[locks::LockRow]>,
    ) -> Result<()> {
        let row = sample_row(case, s, profile, locks);
        if self.away.is_some() {
            self.try_return(run_id)?;
        }
        if let Some(a) = self.away.as_mut() {
            if let Err(e) = a.spool.append(&Entry::Sample(row.clone())) {
                return Err(self.stop_on_spool_failure(e));
            }
            a.pending.push_back(row);
            return Ok(());
        }
        match write_row(self.db.get_mut(), run_id, &row) {
            Ok(_) => {
                self.recorded += 1;
                Ok(())
            }
            Err(e) if e.connection_lost() && self.writing.is_some() => self
                .go_away(&e, Some(row))
                .map_err(|e| self.stop_on_spool_failure(e)),
            Err(e) => Err(self.stop_on_disk_failure(e)),
        }
    }

    /// The spool could not take a sample while the server is away: the
    /// run stops, what was stored (in the store, and in the spool so far)
    /// stays, and the run is left incomplete.
    fn stop_on_spool_failure(&mut self, e: Error) -> Error {
        let spooled = self.away.as_ref().map_or(0, |a| a.spool.samples);
        let msg = format!(
            "{} went away and the spool cannot take the run's samples ({e}): the run stops \
             here; its {} samples stored before and {spooled} in the spool stay readable and it \
             is marked incomplete; free the state directory's file system, then `vmscale merge` \
             the spool once the server is back",
            self.shown(),
            self.recorded
        );
        self.stopped = Some(msg.clone());
        Error::Stopped(msg)
    }

    /// Why this store stopped taking the run's samples, if it did: its
    /// disk failed, or its server did not come back (the spool is named).
    pub fn stopped(&self) -> Option<&str> {
        self.stopped.as_deref()
    }

    /// Lines for the user about the server going and coming back, each
    /// returned once.
    pub fn take_notices(&mut self) -> Vec<String> {
        std::mem::take(&mut self.notices)
    }

    fn shown(&self) -> String {
        match &self.place {
            Place::Postgres(url) => format!("PostgreSQL {}", pg::shown(url)),
            Place::Sqlite(p) => p.display().to_string(),
        }
    }

    /// The server went away: the run goes on into a new spool, which
    /// starts with the run itself.
    pub(super) fn go_away(&mut self, e: &Error, row: Option<SampleRow>) -> Result<()> {
        let w = self
            .writing
            .as_ref()
            .ok_or_else(|| Error::corrupt("no run"))?;
        let mut spool = Spool::create(
            &w.uuid,
            &Entry::Run {
                format: super::spool::FORMAT,
                store: self.shown(),
                run: w.run.clone(),
                cases: w.cases.clone(),
            },
        )?;
        if let Some(row) = &row {
            spool.append(&Entry::Sample(row.clone()))?;
        }
        self.notices.push(format!(
            "{} went away ({}); samples go to {} until it is back",
            self.shown(),
            e.to_string().trim_start_matches("store: "),
            spool.path().display()
        ));
        let now = Instant::now();
        self.away = Some(Away {
            spool,
            pending: row.into_iter().collect(),
            since: now,
            last_try: now,
        });
        Ok(())
    }

    /// Tries to reach the server again (at most once a second) and drain
    /// the spool into it in order; returns whether the store is back.
    fn try_return(&mut self, run_id: i64) -> Result<bool> {
        let Place::Postgres(url) = &self.place else {
            return Ok(self.away.is_none());
        };
        let Some(a) = self.away.as_mut() else {
            return Ok(true);
        };
        if a.last_try.elapsed() < RETRY_EVERY {
            return Ok(false);
        }
        a.last_try = Instant::now();
        let Ok(client) = pg::connect_quick(url) else {
            return Ok(false);
        };
        let db = self.db.get_mut();
        *db = Db::Postgres(Box::new(client));
        while let Some(row) = a.pending.front() {
            match write_row(db, run_id, row) {
                Ok(_) => {
                    a.pending.pop_front();
                    self.recorded += 1;
                }
                Err(e) if e.connection_lost() => return Ok(false),
                Err(e) => return Err(e),
            }
        }
        let Some(a) = self.away.take() else {
            return Ok(true);
        };
        let (n, secs) = (a.spool.samples, a.since.elapsed().as_secs());
        a.spool.remove()?;
        self.notices.push(format!(
            "{} is back after {secs} s: the {n} samples taken meanwhile are stored",
            self.shown()
        ));
        Ok(true)
    }

    /// Ends a run's row with its status. A PostgreSQL server away (or
    /// lost at this very moment) is waited for a little, then the run's
    /// ending goes to the spool and the run stays incomplete in the store
    /// ([`Error::Stopped`]).
    pub fn finish_run(&mut self, run_id: i64, status: Status, note: Option<&str>) -> Result<()> {
        self.before_finish(run_id, status, note)?;
        let end = |db: &mut Db| {
            db.execute(
                "UPDATE runs SET status = ?2, note = ?3, ended_at = ?4 WHERE id = ?1",
                &[
                    run_id.into(),
                    status.as_str().into(),
                    note.into(),
                    crate::timefmt::now().into(),
                ],
            )
        };
        match end(self.db.get_mut()) {
            Err(e) if e.connection_lost() && self.writing.is_some() => {
                self.go_away(&e, None)?;
                self.before_finish(run_id, status, note)?;
                end(self.db.get_mut()).map(drop)
            }
            other => other.map(drop),
        }
    }

    fn before_finish(&mut self, run_id: i64, status: Status, note: Option<&str>) -> Result<()> {
        if self.away.is_none() {
            return Ok(());
        }
        let deadline = Instant::now() + RETURN_PATIENCE;
        while !self.try_return(run_id)? && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(200));
        }
        let Some(mut a) = self.away.take() else {
            return Ok(());
        };
        a.spool.append(&Entry::End(Ending {
            status: status.as_str().into(),
            note: note.map(str::to_string),
            ended_at: crate::timefmt::now(),
        }))?;
        let path = a.spool.path().display().to_string();
        let msg = format!(
            "{} did not come back: run {run_id} stays incomplete there, and the {} samples \
             taken since it went away are in {path}: run `vmscale merge {path}` with this \
             --db once the server is back",
            self.shown(),
            a.pending.len()
        );
        self.stopped = Some(msg.clone());
        Err(Error::Stopped(msg))
    }

    /// A SQLite store whose disk failed becomes a stop naming the file, the
    /// free space and the samples kept; other errors pass unchanged.
    fn stop_on_disk_failure(&mut self, e: Error) -> Error {
        let Place::Sqlite(path) = &self.place else {
            return e;
        };
        if !disk_failure(&e) {
            return e;
        }
        let dir = path
            .parent()
            .filter(|d| !d.as_os_str().is_empty())
            .unwrap_or(std::path::Path::new("."));
        let errno = match &*self.db.borrow() {
            Db::Sqlite(c) => sys::sqlite_errno(c),
            Db::Postgres(_) => None,
        };
        let failed = "see the kernel's log (dmesg) for the disk or file system, and name \
                      another store with --db";
        let full = "free space, or name another store with --db";
        let (fs, fix) = match (sys::space(dir), errno) {
            (_, Some(e)) if e.raw_os_error() == Some(libc::EROFS) => {
                (format!("{e}: its file system turned read-only"), failed)
            }
            (_, Some(e)) if e.raw_os_error() == Some(libc::EIO) => {
                (format!("{e}: its disk or file system failed"), failed)
            }
            (Some(s), _) if s.read_only => ("its file system is now read-only".to_string(), failed),
            (Some(s), e) => (
                format!(
                    "{}{} free of {} on its file system",
                    e.map_or(String::new(), |e| format!("{e}; ")),
                    crate::parse::format_size(s.free),
                    crate::parse::format_size(s.total)
                ),
                full,
            ),
            (None, _) => ("the free space cannot be read".to_string(), full),
        };
        let msg = format!(
            "cannot write the store {} ({}; {fs}): the run stops here; its {} samples stored \
             so far stay readable and it is marked incomplete; {fix}",
            path.display(),
            e.to_string().trim_start_matches("store: "),
            self.recorded
        );
        self.stopped = Some(msg.clone());
        Error::Stopped(msg)
    }
}
