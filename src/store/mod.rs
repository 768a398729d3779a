//! The results store: SQLite in WAL mode, each sample committed as it is
//! taken so a killed run keeps what it measured. The SQL is written once
//! against `backend::Db`; each run records its writer so runs whose
//! process is gone are shown (and, where the store is writable, marked)
//! incomplete. Samples outlive the store's failures (record.rs): a
//! PostgreSQL server away is bridged by a spool, a full disk stops the
//! run cleanly.

pub mod backend;
pub mod error;
pub mod history;
pub mod liveness;
pub mod manage;
pub mod merge;
mod pg;
mod profiles;
mod read;
mod record;
mod row;
mod schema;
pub mod spool;
mod sqlite;
mod sys;

pub use error::{Error, Result};
pub use pg::{hide_password, keep_password_from_children};

use std::cell::RefCell;
use std::path::{Path, PathBuf};

use crate::model::{Case, Figure, Sample, Status};
use backend::Db;
use liveness::Owner;
use row::Row;

pub struct Store {
    db: RefCell<Db>,
    /// False for a store opened read-only: nothing is written to it.
    writable: bool,
    place: Place,
    /// The run being written (PostgreSQL only), for a spool to copy.
    writing: Option<record::Writing>,
    /// The server while it is away, and the spool meanwhile.
    away: Option<record::Away>,
    /// Lines for the user (the server went, came back).
    notices: Vec<String>,
    /// Why the store stopped taking samples, if it did.
    stopped: Option<String>,
    /// Samples this process has stored.
    recorded: usize,
}

/// Where a store is.
enum Place {
    Sqlite(PathBuf),
    /// The URL, password included: never shown (`pg::shown`).
    Postgres(String),
}

/// A run as `list` shows it.
#[derive(Debug, Clone, serde::Serialize)]
pub struct RunListing {
    pub id: i64,
    pub label: Option<String>,
    pub workload: String,
    pub started_at: String,
    pub status: String,
    pub samples: i64,
    pub origin: String,
    pub command_line: String,
    /// The machine that measured the run (none for imported runs).
    pub host: Option<String>,
}

/// What a new run records before its first sample.
pub struct NewRun<'a> {
    pub label: Option<&'a str>,
    pub workload: &'a str,
    pub command_line: &'a str,
    pub config: &'a serde_json::Value,
    pub figures: &'a [Figure],
    pub machine: &'a serde_json::Value,
    pub knobs: &'a serde_json::Value,
    pub cases: &'a [Case],
    pub origin: &'a str,
}

/// The default store: $VMSCALE_DB, else $XDG_DATA_HOME/vmscale/vmscale.db,
/// else ~/.local/share/vmscale/vmscale.db.
pub fn default_path() -> PathBuf {
    if let Some(p) = std::env::var_os("VMSCALE_DB").filter(|p| !p.is_empty()) {
        return PathBuf::from(p);
    }
    let data = std::env::var_os("XDG_DATA_HOME")
        .filter(|p| Path::new(p).is_absolute()) // the XDG spec ignores relative paths
        .map(PathBuf::from)
        .or_else(|| {
            std::env::var_os("HOME")
                .filter(|h| !h.is_empty())
                .map(|h| PathBuf::from(h).join(".local/share"))
        })
        .unwrap_or_else(|| PathBuf::from("."));
    data.join("vmscale").join("vmscale.db")
}

fn json<T: serde::Serialize>(v: &T) -> String {
    serde_json::to_string(v).unwrap_or_else(|_| "null".into())
}

/// The columns naming a run's writer, in the order `owner` reads them.
const OWNER_COLUMNS: &str = "pid, pid_start, boot_id, writer";

/// The writer of a run from four columns starting at `at`; None for runs
/// stored before runs had one.
fn owner(r: &Row, at: usize) -> Option<Owner> {
    Some(Owner {
        pid: r.opt_int(at).ok()??,
        start: r.opt_int(at + 1).ok()??,
        boot_id: r.opt_text(at + 2).ok()??,
        host: r.opt_text(at + 3).ok()??,
    })
}

/// A run's status as it stands: `running` whose writer is gone is
/// incomplete.
fn live_status(status: String, r: &Row, at: usize) -> String {
    if status == Status::Running.as_str() && owner(r, at).is_some_and(|o| liveness::gone(&o)) {
        return Status::Incomplete.as_str().to_string();
    }
    status
}

impl Store {
    fn wrap(db: Db, writable: bool, place: Place) -> Result<Store> {
        let store = Store {
            db: RefCell::new(db),
            writable,
            place,
            writing: None,
            away: None,
            notices: Vec::new(),
            stopped: None,
            recorded: 0,
        };
        if writable {
            match store.mark_gone() {
                // A full disk: the runs are still shown as they are.
                Err(e) if record::disk_failure(&e) => {}
                other => drop(other?),
            }
        }
        Ok(store)
    }

    /// Opens (creating if needed) the store at `path` for writing: a
    /// SQLite file, or a PostgreSQL database named by a postgres:// URL.
    /// A store that does not take writes is refused here
    /// ([`Error::Refuses`]), before anything is measured.
    pub fn open(path: &Path) -> Result<Store> {
        if let Some(url) = pg::url(path) {
            let store = Store::open_pg(url).map_err(|e| pg::write_refusal(url, e))?;
            if let Db::Postgres(c) = &mut *store.db.borrow_mut() {
                pg::check_writes(c, url)?;
            }
            return Ok(store);
        }
        let db = sqlite::open_write(path)
            .and_then(|mut db| sqlite::check_writes(&mut db).map(|()| db))
            .map_err(|e| sqlite::write_refusal(path, e))?;
        Store::wrap(db, true, Place::Sqlite(path.into()))
    }

    /// Opens an existing store for reading; a missing file is an input
    /// error. A store this process cannot write is opened read-only.
    pub fn open_existing(path: &Path) -> Result<Store> {
        if let Some(url) = pg::url(path) {
            return Store::open_pg(url);
        }
        let (db, writable) = sqlite::open_read(path)?;
        Store::wrap(db, writable, Place::Sqlite(path.into()))
    }

    fn open_pg(url: &str) -> Result<Store> {
        let mut client = pg::connect(url)?;
        pg::check_identity(&mut client, url)?;
        let mut db = Db::Postgres(Box::new(client));
        schema::migrate(&mut db, None).map_err(|e| match e {
            Error::Unusable(m) => Error::Unusable(format!("{}: {m}", pg::shown(url))),
            e => e,
        })?;
        Store::wrap(db, true, Place::Postgres(url.to_string()))
    }

    /// True for a store on PostgreSQL.
    pub fn is_postgres(&self) -> bool {
        matches!(*self.db.borrow(), Db::Postgres(_))
    }

    /// True unless the store was opened read-only.
    pub fn writable(&self) -> bool {
        self.writable
    }

    /// Marks runs whose process is gone as incomplete, keeping their
    /// samples; returns their ids.
    pub fn mark_gone(&self) -> Result<Vec<i64>> {
        let mut db = self.db.borrow_mut();
        let running = db.query(
            &format!("SELECT id, {OWNER_COLUMNS} FROM runs WHERE status = 'running'"),
            &[],
        )?;
        let mut marked = Vec::new();
        for r in &running {
            let Some(o) = owner(r, 1).filter(liveness::gone) else {
                continue;
            };
            let id = r.int(0)?;
            db.execute(
                "UPDATE runs SET status = 'incomplete', ended_at = ?2,
                        note = ?3 WHERE id = ?1 AND status = 'running'",
                &[
                    id.into(),
                    crate::timefmt::now().into(),
                    format!(
                        "its process ({} pid {}) is gone: killed or crashed; the samples \
                         taken are kept",
                        o.host, o.pid
                    )
                    .into(),
                ],
            )?;
            marked.push(id);
        }
        Ok(marked)
    }

    pub fn create_run(&mut self, r: &NewRun) -> Result<i64> {
        let me = liveness::me();
        let host = (r.origin == "measured").then(|| me.host.clone());
        // The snapshot names its machine, so `compare` across hosts says so.
        let mut machine = r.machine.clone();
        if let (Some(h), Some(m)) = (&host, machine.as_object_mut()) {
            m.entry("hostname").or_insert_with(|| h.as_str().into());
        }
        let id = self.db.get_mut().immediate(|db| {
            let id = db.insert(
                "INSERT INTO runs (label, workload, command_line, version, config, figures,
                                   machine, knobs, started_at, status, origin, uuid, host,
                                   pid, pid_start, boot_id, writer)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, 'running', ?10, ?11, ?12,
                         ?13, ?14, ?15, ?16)",
                &[
                    r.label.into(),
                    r.workload.into(),
                    r.command_line.into(),
                    env!("CARGO_PKG_VERSION").into(),
                    json(r.config).into(),
                    json(&r.figures).into(),
                    json(&machine).into(),
                    json(r.knobs).into(),
                    crate::timefmt::now().into(),
                    r.origin.into(),
                    liveness::new_uuid().into(),
                    host.into(),
                    me.pid.into(),
                    me.start.into(),
                    me.boot_id.as_str().into(),
                    me.host.as_str().into(),
                ],
            )?;
            for (pos, c) in r.cases.iter().enumerate() {
                db.execute(
                    "INSERT INTO cases (run_id, case_key, position, tasks, variant, knobs)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                    &[
                        id.into(),
                        c.key().into(),
                        (pos as i64).into(),
                        (c.tasks as i64).into(),
                        c.variant.as_str().into(),
                        json(&c.knobs).into(),
                    ],
                )?;
            }
            Ok(id)
        })?;
        if let Place::Postgres(_) = self.place {
            self.writing = Some(self.copy_run(id)?);
        }
        Ok(id)
    }

    /// The run's row and cases as they are stored, for a spool.
    fn copy_run(&self, id: i64) -> Result<record::Writing> {
        let mut db = self.db.borrow_mut();
        let run = db
            .query_one("SELECT * FROM runs WHERE id = ?1", &[id.into()])?
            .ok_or_else(|| Error::corrupt(format!("run {id} vanished")))?;
        let cases = db.query(
            "SELECT * FROM cases WHERE run_id = ?1 ORDER BY position",
            &[id.into()],
        )?;
        let run = spool::row_json(&run);
        Ok(record::Writing {
            uuid: run
                .get("uuid")
                .and_then(|u| u.as_str())
                .unwrap_or_default()
                .to_string(),
            run,
            cases: cases.iter().map(spool::row_json).collect(),
        })
    }

    /// Stores one sample, committed at once.
    pub fn add_sample(&mut self, run_id: i64, case: &Case, s: &Sample) -> Result<()> {
        self.db.get_mut().execute(
            "INSERT INTO samples (run_id, case_key, seq, warmup, taken_at, figures, tasks, vmstat, noise, flagged)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
            &[
                run_id.into(),
                case.key().into(),
                s.seq.into(),
                s.warmup.into(),
                s.taken_at.as_str().into(),
                json(&s.data.figures).into(),
                json(&s.data.tasks).into(),
                json(&s.vmstat).into(),
                json(&s.noise).into(),
                s.flagged.into(),
            ],
        )?;
        Ok(())
    }

    /// Dates a finished run by when it was measured rather than stored (an
    /// import of a mail dated by its `Date:` header): its start and end.
    pub fn set_dates(&mut self, run_id: i64, at: &str) -> Result<()> {
        self.db.get_mut().execute(
            "UPDATE runs SET started_at = ?2, ended_at = ?2 WHERE id = ?1",
            &[run_id.into(), at.into()],
        )?;
        Ok(())
    }

    /// Removes a run that has no sample (one refused or failed before its
    /// first sample leaves nothing behind); returns whether it did.
    pub fn discard_if_empty(&mut self, run_id: i64) -> Result<bool> {
        self.db.get_mut().immediate(|db| {
            let samples = db
                .query_one(
                    "SELECT COUNT(*) FROM samples WHERE run_id = ?1",
                    &[run_id.into()],
                )?
                .map_or(Ok(0), |r| r.int(0))?;
            if samples > 0 {
                return Ok(false);
            }
            db.execute("DELETE FROM cases WHERE run_id = ?1", &[run_id.into()])?;
            db.execute("DELETE FROM runs WHERE id = ?1", &[run_id.into()])?;
            Ok(true)
        })
    }

    /// Runs statements without parameters (for tests and benches, e.g.
    /// BEGIN and COMMIT around many inserts).
    pub fn batch(&self, sql: &str) -> Result<()> {
        self.db.borrow_mut().batch(sql)
    }
}

/// A store's name for messages: the path, or the URL without password.
pub fn display(path: &Path) -> String {
    match pg::url(path) {
        Some(url) => pg::shown(url),
        None => path.display().to_string(),
    }
}

/// Marks the runs of the store at `path` whose process is gone, if the
/// store exists and can be written (for commands that do not otherwise
/// open it, such as `restore`).
pub fn mark_gone_at(path: &Path) -> Result<Vec<i64>> {
    if pg::url(path).is_none() && !path.exists() {
        return Ok(Vec::new());
    }
    let store = Store::open_existing(path)?;
    if !store.writable {
        return Ok(Vec::new());
    }
    store.mark_gone()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_store_of_schema_1_is_upgraded_once_and_keeps_its_runs() {
        let path = crate::scratch::at("s.db");
        {
            let c = rusqlite::Connection::open(&path).unwrap();
            c.execute_batch(schema::first_for_tests()).unwrap();
            c.execute_batch(
                "PRAGMA user_version = 1;
                 INSERT INTO runs (workload, command_line, version, config, figures, machine,
                                   knobs, started_at, status, origin)
                 VALUES ('pft', 'x', '0', '{}', '[]', '{}', '{}', 't', 'complete', 'measured');",
            )
            .unwrap();
        }
        let uuid = |st: &Store| {
            st.db
                .borrow_mut()
                .query_one("SELECT uuid FROM runs", &[])
                .unwrap()
                .unwrap()
                .text(0)
                .unwrap()
        };
        let first = uuid(&Store::open(&path).unwrap());
        let again = Store::open(&path).unwrap();
        let version = schema::version(&mut again.db.borrow_mut()).unwrap();
        let listed = again.list().unwrap();
        let second = uuid(&again);
        assert_eq!(version as usize, schema::current());
        assert_eq!(first, second, "the second open migrated again");
        assert_eq!(listed.len(), 1);
        assert_eq!(listed[0].workload, "pft");
    }
}
