//! Schema and migrations: an append-only list, each entry upgrading the
//! schema by one version, applied in one immediate transaction by both
//! engines. SQLite keeps the version in user_version and marks the file as
//! vmscale's with application_id; PostgreSQL keeps it in a table.

use std::path::{Path, PathBuf};

use super::backend::Db;
use super::error::{Error, Result};
use super::pg;

/// "vmsc": the SQLite application_id of a vmscale store.
pub const APPLICATION_ID: i64 = 0x766d_7363;

/// Each entry upgrades the schema by one version. Append only; written
/// in SQLite's dialect, in the subset `pg::ddl` translates (INTEGER
/// columns become BIGINT, INTEGER PRIMARY KEY becomes BIGSERIAL).
const MIGRATIONS: &[&str] = &[
    r#"
CREATE TABLE runs (
    id           INTEGER PRIMARY KEY,
    label        TEXT,
    workload     TEXT NOT NULL,
    command_line TEXT NOT NULL,
    version      TEXT NOT NULL,
    config       TEXT NOT NULL,
    figures      TEXT NOT NULL,
    machine      TEXT NOT NULL,
    knobs        TEXT NOT NULL,
    started_at   TEXT NOT NULL,
    ended_at     TEXT,
    status       TEXT NOT NULL,
    note         TEXT,
    origin       TEXT NOT NULL
);
CREATE INDEX runs_label ON runs(label);
CREATE TABLE cases (
    run_id   INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    case_key TEXT NOT NULL,
    position INTEGER NOT NULL,
    tasks    INTEGER NOT NULL,
    variant  TEXT NOT NULL,
    knobs    TEXT NOT NULL DEFAULT '{}',
    PRIMARY KEY (run_id, case_key)
);
CREATE TABLE samples (
    id       INTEGER PRIMARY KEY,
    run_id   INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    case_key TEXT NOT NULL,
    seq      INTEGER NOT NULL,
    warmup   INTEGER NOT NULL,
    taken_at TEXT NOT NULL,
    figures  TEXT NOT NULL,
    tasks    TEXT NOT NULL,
    vmstat   TEXT NOT NULL,
    noise    TEXT NOT NULL,
    flagged  INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX samples_run ON samples(run_id, case_key);
"#,
    // Liveness (who writes the run) and a global identity for `merge`.
    r#"
ALTER TABLE runs ADD COLUMN uuid TEXT;
ALTER TABLE runs ADD COLUMN host TEXT;
ALTER TABLE runs ADD COLUMN pid INTEGER;
ALTER TABLE runs ADD COLUMN pid_start INTEGER;
ALTER TABLE runs ADD COLUMN boot_id TEXT;
ALTER TABLE runs ADD COLUMN writer TEXT;
CREATE UNIQUE INDEX runs_uuid ON runs(uuid);
"#,
    // Profiles (run --profile) and lock rows (run --locks).
    r#"
CREATE TABLE profile_cases (
    run_id   INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    case_key TEXT NOT NULL,
    event    TEXT NOT NULL,
    hz       INTEGER NOT NULL,
    samples  INTEGER NOT NULL,
    lost     INTEGER NOT NULL,
    PRIMARY KEY (run_id, case_key)
);
CREATE TABLE profile_stacks (
    run_id   INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    case_key TEXT NOT NULL,
    stack    TEXT NOT NULL,
    samples  INTEGER NOT NULL,
    PRIMARY KEY (run_id, case_key, stack)
);
CREATE TABLE lock_rows (
    run_id       INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    case_key     TEXT NOT NULL,
    seq          INTEGER NOT NULL,
    source       TEXT NOT NULL,
    name         TEXT NOT NULL,
    acquisitions INTEGER NOT NULL,
    contended    INTEGER NOT NULL,
    wait_ns      INTEGER NOT NULL,
    max_wait_ns  INTEGER NOT NULL,
    PRIMARY KEY (run_id, case_key, seq, source, name)
);
"#,
];

/// The first schema, to build stores of an early vmscale in tests.
#[cfg(test)]
pub fn first_for_tests() -> &'static str {
    MIGRATIONS[0]
}

/// The schema version this vmscale writes.
pub fn current() -> usize {
    MIGRATIONS.len()
}

fn newer(version: i64) -> Error {
    Error::Unusable(format!(
        "the store has schema version {version}, newer than this vmscale's {} (vmscale {}): \
         a newer vmscale wrote it, so this one leaves it alone; use that newer vmscale with \
         this store, or name another store with --db",
        MIGRATIONS.len(),
        env!("CARGO_PKG_VERSION")
    ))
}

/// The schema version of a store (0 for an empty one).
pub fn version(db: &mut Db) -> Result<i64> {
    let sql = match db {
        Db::Sqlite(_) => "PRAGMA user_version",
        Db::Postgres(_) => {
            let exists = db
                .query_one("SELECT to_regclass('vmscale_schema')::text", &[])?
                .is_some_and(|r| r.opt_text(0).ok().flatten().is_some());
            if !exists {
                return Ok(0);
            }
            "SELECT MAX(version) FROM vmscale_schema"
        }
    };
    db.query_one(sql, &[])?
        .map_or(Ok(None), |r| r.opt_int(0))
        .map(|v| v.unwrap_or(0))
}

/// Fails on a store written by a newer vmscale.
pub fn check_version(db: &mut Db) -> Result<i64> {
    let v = version(db)?;
    if v as usize > MIGRATIONS.len() {
        return Err(newer(v));
    }
    Ok(v)
}

/// Brings the schema up to date. Safe to run by many processes at once:
/// the version is read again inside the write transaction. A SQLite
/// `file` that is upgraded is first copied to FILE.schema-N.bak; returns
/// that copy's path when one was made.
pub fn migrate(db: &mut Db, file: Option<&Path>) -> Result<Option<PathBuf>> {
    let seen = check_version(db)? as usize;
    if seen == MIGRATIONS.len() {
        return Ok(None);
    }
    // The copy is taken before the write lock (VACUUM cannot run inside a
    // transaction) and kept only if the schema is still the one copied.
    let copy = match file {
        Some(f) if seen >= 1 => Some(snapshot(db, f)?),
        _ => None,
    };
    let kept = db.immediate(|db| {
        if let Db::Postgres(_) = db {
            // One migrating process at a time; the others wait, then find
            // the schema up to date.
            db.batch(&format!(
                "SELECT pg_advisory_xact_lock({}); \
                 CREATE TABLE IF NOT EXISTS {} (version BIGINT NOT NULL)",
                pg::MIGRATION_LOCK,
                pg::SCHEMA_TABLE
            ))?;
        }
        let from = check_version(db)? as usize;
        let kept = match (&copy, file) {
            (Some(tmp), Some(f)) if from == seen && from < MIGRATIONS.len() => {
                let bak = PathBuf::from(format!("{}.schema-{from}.bak", f.display()));
                std::fs::rename(tmp, &bak).map_err(|source| Error::Dir {
                    path: bak.clone(),
                    source,
                })?;
                Some(bak)
            }
            _ => None,
        };
        for (i, sql) in MIGRATIONS.iter().enumerate().skip(from) {
            let sql = match db {
                Db::Sqlite(_) => sql.to_string(),
                Db::Postgres(_) => pg::ddl(sql),
            };
            db.batch(&sql).map_err(|e| Error::Migration {
                step: i + 1,
                source: Box::new(e),
            })?;
        }
        if from < MIGRATIONS.len() {
            backfill_uuids(db)?;
        }
        match db {
            Db::Sqlite(_) => db.batch(&format!(
                "PRAGMA user_version = {}; PRAGMA application_id = {APPLICATION_ID};",
                MIGRATIONS.len()
            ))?,
            Db::Postgres(_) => db.batch(&format!(
                "DELETE FROM {0}; INSERT INTO {0} (version) VALUES ({1})",
                pg::SCHEMA_TABLE,
                MIGRATIONS.len()
            ))?,
        }
        Ok(kept)
    });
    if let Some(tmp) = &copy {
        let _ = std::fs::remove_file(tmp);
    }
    kept
}

/// A consistent copy of the SQLite store `file` in a private temporary
/// file beside it.
fn snapshot(db: &mut Db, file: &Path) -> Result<PathBuf> {
    let tmp = PathBuf::from(format!(
        "{}.migrating-{}",
        file.display(),
        std::process::id()
    ));
    let _ = std::fs::remove_file(&tmp);
    let name = tmp.to_str().ok_or_else(|| {
        Error::Unusable(format!(
            "{} cannot be copied before its upgrade (its name is not UTF-8): rename it",
            file.display()
        ))
    })?;
    db.batch(&format!("VACUUM INTO '{}'", name.replace('\'', "''")))?;
    Ok(tmp)
}

/// Runs stored before runs had a uuid get one.
fn backfill_uuids(db: &mut Db) -> Result<()> {
    for r in db.query("SELECT id FROM runs WHERE uuid IS NULL", &[])? {
        db.execute(
            "UPDATE runs SET uuid = ?1 WHERE id = ?2",
            &[super::liveness::new_uuid().into(), r.int(0)?.into()],
        )?;
    }
    Ok(())
}
