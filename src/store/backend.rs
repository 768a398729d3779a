//! The database under the store: one small interface (values, rows,
//! statements, immediate transactions) over the SQL engines, so the store's
//! queries are written once in SQLite's dialect with `?N` placeholders.

use std::rc::Rc;
use std::time::{Duration, Instant};

use super::error::{Error, Result};
use super::row::{Row, Value};

/// A connection to one of the engines.
pub enum Db {
    Sqlite(rusqlite::Connection),
    Postgres(Box<postgres::Client>),
}

/// How long a statement keeps retrying while another writer holds the
/// database (on top of SQLite's own busy timeout).
const BUSY_PATIENCE: Duration = Duration::from_secs(120);

fn sqlite_busy(e: &rusqlite::Error) -> bool {
    matches!(
        e.sqlite_error_code(),
        Some(rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked)
    )
}

/// Runs `f` again while SQLite says another connection holds the lock.
fn retry_busy<T>(mut f: impl FnMut() -> rusqlite::Result<T>) -> rusqlite::Result<T> {
    let start = Instant::now();
    let mut pause = Duration::from_millis(5);
    loop {
        match f() {
            Err(e) if sqlite_busy(&e) && start.elapsed() < BUSY_PATIENCE => {
                std::thread::sleep(pause);
                pause = (pause * 2).min(Duration::from_millis(200));
            }
            other => return other,
        }
    }
}

impl rusqlite::ToSql for Value {
    fn to_sql(&self) -> rusqlite::Result<rusqlite::types::ToSqlOutput<'_>> {
        use rusqlite::types::{ToSqlOutput, ValueRef};
        Ok(ToSqlOutput::Borrowed(match self {
            Value::Null => ValueRef::Null,
            Value::Int(v) => ValueRef::Integer(*v),
            Value::Real(v) => ValueRef::Real(*v),
            Value::Text(v) => ValueRef::Text(v.as_bytes()),
            Value::Blob(v) => ValueRef::Blob(v),
        }))
    }
}

fn from_sqlite(v: rusqlite::types::ValueRef) -> Value {
    use rusqlite::types::ValueRef;
    match v {
        ValueRef::Null => Value::Null,
        ValueRef::Integer(i) => Value::Int(i),
        ValueRef::Real(r) => Value::Real(r),
        ValueRef::Text(t) => match std::str::from_utf8(t) {
            Ok(s) => Value::Text(s.to_string()),
            Err(_) => Value::Blob(t.to_vec()),
        },
        ValueRef::Blob(b) => Value::Blob(b.to_vec()),
    }
}

impl Db {
    /// Runs one statement; returns the number of rows it changed.
    pub fn execute(&mut self, sql: &str, params: &[Value]) -> Result<u64> {
        match self {
            Db::Sqlite(c) => retry_busy(|| c.execute(sql, rusqlite::params_from_iter(params)))
                .map(|n| n as u64)
                .map_err(Error::from),
            Db::Postgres(c) => super::pg::execute(c, sql, params),
        }
    }

    /// Runs an INSERT into a table with an `id` key; returns the new id.
    pub fn insert(&mut self, sql: &str, params: &[Value]) -> Result<i64> {
        match self {
            Db::Sqlite(c) => {
                retry_busy(|| c.execute(sql, rusqlite::params_from_iter(params)))
                    .map_err(Error::from)?;
                Ok(c.last_insert_rowid())
            }
            Db::Postgres(c) => super::pg::insert(c, sql, params),
        }
    }

    /// Runs a query and returns all its rows.
    pub fn query(&mut self, sql: &str, params: &[Value]) -> Result<Vec<Row>> {
        match self {
            Db::Sqlite(c) => retry_busy(|| {
                let mut st = c.prepare_cached(sql)?;
                let names: Rc<Vec<String>> =
                    Rc::new(st.column_names().map(str::to_string).collect());
                let width = names.len();
                let mut rows = st.query(rusqlite::params_from_iter(params))?;
                let mut out = Vec::new();
                while let Some(r) = rows.next()? {
                    let values = (0..width)
                        .map(|i| r.get_ref(i).map(from_sqlite))
                        .collect::<rusqlite::Result<_>>()?;
                    out.push(Row::new(names.clone(), values));
                }
                Ok(out)
            })
            .map_err(Error::from),
            Db::Postgres(c) => super::pg::query(c, sql, params),
        }
    }

    /// The first row of a query, if any.
    pub fn query_one(&mut self, sql: &str, params: &[Value]) -> Result<Option<Row>> {
        Ok(self.query(sql, params)?.into_iter().next())
    }

    /// Runs several statements without parameters.
    pub fn batch(&mut self, sql: &str) -> Result<()> {
        match self {
            Db::Sqlite(c) => retry_busy(|| c.execute_batch(sql)).map_err(Error::from),
            Db::Postgres(c) => super::pg::batch(c, sql),
        }
    }

    /// Runs `f` in a transaction that takes the write lock at once (so two
    /// writers queue instead of failing), committed if `f` succeeds.
    pub fn immediate<T>(&mut self, f: impl FnOnce(&mut Db) -> Result<T>) -> Result<T> {
        let begin = match self {
            Db::Sqlite(_) => "BEGIN IMMEDIATE",
            // Rows are locked as they are written; no lock up front.
            Db::Postgres(_) => "BEGIN",
        };
        self.batch(begin)?;
        match f(self) {
            Ok(v) => {
                if let Err(e) = self.batch("COMMIT") {
                    let _ = self.batch("ROLLBACK");
                    return Err(e);
                }
                Ok(v)
            }
            Err(e) => {
                let _ = self.batch("ROLLBACK");
                Err(e)
            }
        }
    }
}
