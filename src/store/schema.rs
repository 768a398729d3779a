//! Schema and migrations, versioned with SQLite's user_version.

use rusqlite::Connection;

/// Each entry upgrades the schema by one version.
const MIGRATIONS: &[&str] = &[r#"
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
"#];

pub fn migrate(conn: &Connection) -> Result<(), String> {
    let version: i64 = conn
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .map_err(|e| format!("store: {e}"))?;
    if version as usize > MIGRATIONS.len() {
        return Err(format!(
            "the store has schema version {version}, newer than this vmscale knows ({}): upgrade vmscale",
            MIGRATIONS.len()
        ));
    }
    for (i, sql) in MIGRATIONS.iter().enumerate().skip(version as usize) {
        conn.execute_batch(&format!(
            "BEGIN; {sql}; PRAGMA user_version = {}; COMMIT;",
            i + 1
        ))
        .map_err(|e| format!("store migration {}: {e}", i + 1))?;
    }
    Ok(())
}
