//! Opening a SQLite store: only vmscale's own files (or empty ones), a busy
//! timeout before the first statement so concurrent writers queue, WAL,
//! and a read-only way in for stores this process cannot write.

use rusqlite::{Connection, OpenFlags};
use std::path::Path;
use std::time::Duration;

use super::backend::Db;
use super::error::{Error, Result};
use super::schema;

/// How long SQLite itself waits for another writer's lock.
const BUSY_TIMEOUT: Duration = Duration::from_secs(60);

fn configure(conn: &Connection) -> Result<()> {
    conn.busy_timeout(BUSY_TIMEOUT)?;
    conn.pragma_update(None, "foreign_keys", "ON")?;
    Ok(())
}

/// Refuses a file that is not a vmscale store: one with another
/// application_id, or tables of its own. An empty database is adopted; a
/// store of an early vmscale (no application_id yet) is recognised by its
/// tables.
fn check_identity(db: &mut Db, path: &Path) -> Result<()> {
    // One snapshot: another process may commit its migration between the
    // reads of the header and of the tables.
    db.batch("BEGIN")?;
    let checked = identity_in_snapshot(db, path);
    let ended = db.batch("COMMIT");
    checked.and(ended)
}

fn identity_in_snapshot(db: &mut Db, path: &Path) -> Result<()> {
    let not_ours = |what: String| {
        Error::Unusable(format!(
            "{} is not a vmscale store ({what}): name another file with --db, \
             or a new one to start a store",
            path.display()
        ))
    };
    let app = db
        .query_one("PRAGMA application_id", &[])
        .map_err(|e| match e {
            Error::Sqlite(e) => not_ours(e.to_string()),
            e => e,
        })?
        .map_or(Ok(0), |r| r.int(0))?;
    if app == schema::APPLICATION_ID {
        return Ok(());
    }
    if app != 0 {
        return Err(not_ours(format!("SQLite application_id {app:#x}")));
    }
    let tables: Vec<String> = db
        .query(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' \
             ORDER BY name",
            &[],
        )?
        .iter()
        .map(|r| r.text(0))
        .collect::<Result<_, _>>()?;
    let early = ["cases", "runs", "samples"];
    let version = schema::version(db)?;
    if tables.is_empty() || (version >= 1 && tables.iter().all(|t| early.contains(&t.as_str()))) {
        return Ok(());
    }
    Err(not_ours(format!("it holds tables {}", tables.join(", "))))
}

/// Opens (creating if needed) a store for writing, migrated to this
/// vmscale's schema.
pub fn open_write(path: &Path) -> Result<Db> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|source| Error::Dir {
            path: dir.to_path_buf(),
            source,
        })?;
    }
    let conn = Connection::open(path).map_err(|e| cannot_open(path, e))?;
    configure(&conn)?;
    let mut db = Db::Sqlite(conn);
    check_identity(&mut db, path)?;
    // A newer vmscale's store is refused before anything is written.
    schema::check_version(&mut db).map_err(|e| named(path, e))?;
    // WAL lets readers go on while a run writes; switching needs the
    // database to itself, which the busy timeout waits for.
    db.query_one("PRAGMA journal_mode = WAL", &[])?;
    db.batch("PRAGMA synchronous = NORMAL")?;
    if let Some(bak) = schema::migrate(&mut db, Some(path)).map_err(|e| named(path, e))? {
        eprintln!(
            "vmscale: {} upgraded to schema version {}; the file before is kept as {}",
            path.display(),
            schema::current(),
            bak.display()
        );
    }
    Ok(db)
}

/// Refuses a store this connection cannot write: a write of the header's
/// own application id in a transaction rolled back (a read-only file,
/// directory or file system fails it; BEGIN alone does not).
pub fn check_writes(db: &mut Db) -> Result<()> {
    db.batch("BEGIN IMMEDIATE")?;
    let wrote = db.batch(&format!(
        "PRAGMA application_id = {}",
        schema::APPLICATION_ID
    ));
    let _ = db.batch("ROLLBACK");
    wrote
}

/// `e` as a refusal of writes when the store at `path` could not be
/// written (else unchanged), naming it and the fix.
pub fn write_refusal(path: &Path, e: Error) -> Error {
    if !matches!(e, Error::Sqlite(_) | Error::Open { .. }) || !read_only_failure(&e) {
        return e;
    }
    let fs = match path.parent().and_then(super::sys::space) {
        Some(s) if s.read_only => "; its file system is read-only",
        _ => "",
    };
    Error::Refuses(format!(
        "the store {} cannot be written ({}{fs}): a run needs a store it may write; \
         fix its permissions, or name another store with --db",
        path.display(),
        e.to_string().trim_start_matches("store: ")
    ))
}

/// A refusal of the store at `path`, naming it.
fn named(path: &Path, e: Error) -> Error {
    match e {
        Error::Unusable(m) => Error::Unusable(format!("{}: {m}", path.display())),
        e => e,
    }
}

fn cannot_open(path: &Path, e: rusqlite::Error) -> Error {
    Error::Open {
        what: format!("cannot open store {}", path.display()),
        message: e.to_string(),
    }
}

/// True when an open failed because the file or its directory cannot be
/// written by this process.
fn read_only_failure(e: &Error) -> bool {
    let e = e.to_string();
    [
        "readonly",
        "read-only",
        "unable to open",
        "Permission denied",
    ]
    .iter()
    .any(|w| e.contains(w))
}

/// Opens an existing store for reading. Writable stores are opened as for
/// writing (migrated, so this vmscale's queries work); others read-only,
/// without any write, not even WAL's shared-memory file if the directory
/// is read-only too. Returns the connection and whether it may write.
pub fn open_read(path: &Path) -> Result<(Db, bool)> {
    if !path.exists() {
        return Err(Error::Missing(path.to_path_buf()));
    }
    if std::fs::OpenOptions::new().write(true).open(path).is_ok() {
        match open_write(path) {
            Ok(db) => return Ok((db, true)),
            Err(e) if read_only_failure(&e) => {}
            Err(e) => return Err(e),
        }
    }
    let mut db = open_read_only(path, false).or_else(|e| {
        if read_only_failure(&e) {
            open_read_only(path, true)
        } else {
            Err(e)
        }
    })?;
    let version = schema::check_version(&mut db).map_err(|e| named(path, e))?;
    if (version as usize) < schema::current() {
        return Err(Error::Unusable(format!(
            "{} has schema version {version}, older than this vmscale's ({}), and is read-only \
             here so it cannot be upgraded: open it once with write access, or copy it",
            path.display(),
            schema::current()
        )));
    }
    Ok((db, false))
}

/// A read-only connection; `immutable` also skips WAL's shared memory
/// (for a store in a directory this process cannot write).
fn open_read_only(path: &Path, immutable: bool) -> Result<Db> {
    let flags = OpenFlags::SQLITE_OPEN_READ_ONLY
        | OpenFlags::SQLITE_OPEN_URI
        | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let abs = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    let mut uri = String::from("file:");
    for &b in std::os::unix::ffi::OsStrExt::as_bytes(abs.as_os_str()) {
        match b {
            b'%' | b'?' | b'#' | 0..=0x20 | 0x7f.. => uri.push_str(&format!("%{b:02X}")),
            _ => uri.push(char::from(b)),
        }
    }
    uri.push_str(if immutable {
        "?immutable=1"
    } else {
        "?mode=ro"
    });
    let conn = Connection::open_with_flags(&uri, flags).map_err(|e| cannot_open(path, e))?;
    configure(&conn)?;
    let mut db = Db::Sqlite(conn);
    check_identity(&mut db, path)?;
    Ok(db)
}
