//! What can go wrong with the store, decided where it is known: a store or
//! run the user named that is not there, or a store that cannot be used or
//! written here, found before a run begins (bad input, exit 2); a damaged
//! row, the database engine failing, or a write failing once samples are
//! stored (exit 1). [`From`] into [`crate::error::Error`] picks the exit code, so
//! commands just write `?`.

use std::path::PathBuf;

/// A store failure.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// No store at the path (reading commands never create one).
    #[error(
        "no store at {}: run `vmscale run quick` first, or name one with --db",
        .0.display()
    )]
    Missing(PathBuf),
    /// A file or database that is not a vmscale store, or one this vmscale
    /// cannot use (a newer schema; an older one it may not upgrade). The
    /// message names the store and the fix.
    #[error("{0}")]
    Unusable(String),
    /// The store could not be opened or reached (`what` names it).
    #[error("{what}: {message}")]
    Open { what: String, message: String },
    /// The store does not take writes (a read-only file or file system, a
    /// role without the rights, a read-only server): found when it is
    /// opened to write, before anything is measured. The message names
    /// the store and the fix.
    #[error("{0}")]
    Refuses(String),
    /// A file of the store's own (the spool) could not be written once a
    /// run had begun.
    #[error("{what} {}: {source}", path.display())]
    Write {
        what: &'static str,
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// No run of that name (an id, `last`, `last~N` or a label).
    #[error(
        "no run '{0}' in the store: `vmscale list` shows the runs (ids, labels, last, \
         last~N)"
    )]
    NoRun(String),
    /// A label naming several runs; the message lists them.
    #[error("{0}")]
    Ambiguous(String),
    /// A stored row that cannot be read, named with its run and column.
    #[error("{0}")]
    Corrupt(String),
    /// SQLite failed.
    #[error("store: {0}")]
    Sqlite(#[from] rusqlite::Error),
    /// PostgreSQL failed.
    #[error("store: {}", pg_message(.0))]
    Postgres(#[from] postgres::Error),
    /// A migration of the schema failed.
    #[error("store migration {step}: {source}")]
    Migration {
        step: usize,
        #[source]
        source: Box<Error>,
    },
    /// The store stopped taking a run's samples: its disk filled or
    /// turned read-only, or its server did not come back (the message
    /// names the file, the free space or the spool, and what to do).
    #[error("{0}")]
    Stopped(String),
    /// A file beside the store (its directory) could not be made.
    #[error("cannot create {}: {source}", path.display())]
    Dir {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

impl Error {
    /// A damaged value: `message` says which column holds what.
    pub fn corrupt(message: impl Into<String>) -> Error {
        Error::Corrupt(message.into())
    }

    /// The same error with `context` before a damaged row's message
    /// ("run 7 cannot be read: ..."); other kinds are returned unchanged.
    pub fn in_row(self, context: impl std::fmt::Display) -> Error {
        match self {
            Error::Corrupt(m) => Error::Corrupt(format!("{context}: {m}")),
            e => e,
        }
    }

    /// True for what the user named wrongly (exit 2, nothing stored).
    pub fn is_input(&self) -> bool {
        match self {
            Error::Missing(_)
            | Error::Unusable(_)
            | Error::Open { .. }
            | Error::Refuses(_)
            | Error::NoRun(_)
            | Error::Ambiguous(_) => true,
            Error::Migration { source, .. } => source.is_input(),
            Error::Corrupt(_)
            | Error::Sqlite(_)
            | Error::Postgres(_)
            | Error::Stopped(_)
            | Error::Write { .. }
            | Error::Dir { .. } => false,
        }
    }

    /// True when PostgreSQL's connection was lost (the server stopped or
    /// restarted, the network failed), not when it refused a statement.
    pub fn connection_lost(&self) -> bool {
        match self {
            Error::Postgres(e) => pg_lost(e),
            Error::Migration { source, .. } => source.connection_lost(),
            _ => false,
        }
    }
}

/// True when a failure means the connection is gone (the server stopped,
/// restarted or cannot be reached), not that a statement was refused.
fn pg_lost(e: &postgres::Error) -> bool {
    if e.is_closed() {
        return true;
    }
    if let Some(d) = e.as_db_error() {
        let code = d.code().code();
        // connection_exception, admin/crash shutdown, cannot_connect_now.
        return code.starts_with("08") || matches!(code, "57P01" | "57P02" | "57P03");
    }
    std::error::Error::source(e).is_some_and(|s| s.downcast_ref::<std::io::Error>().is_some())
        || e.to_string().contains("timed out")
}

/// PostgreSQL's message: the server's severity and text, else the
/// client's.
pub(super) fn pg_message(e: &postgres::Error) -> String {
    match e.as_db_error() {
        Some(d) => format!("{}: {}", d.severity(), d.message()),
        None => e.to_string(),
    }
}

impl From<Error> for crate::error::Error {
    fn from(e: Error) -> crate::error::Error {
        match e {
            Error::Dir { path, source } => crate::error::Error::io("cannot create", path, source),
            e if e.is_input() => crate::error::Error::Input(e.to_string()),
            e => crate::error::Error::Store(e.to_string()),
        }
    }
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_the_user_named_is_input_and_damage_is_a_store_failure() {
        let missing: crate::error::Error = Error::Missing("/x/s.db".into()).into();
        assert!(missing.is_input());
        assert!(missing.to_string().starts_with("no store at /x/s.db: "));
        let unknown: crate::error::Error = Error::NoRun("last~9".into()).into();
        assert!(unknown.is_input());
        let damaged = Error::corrupt("column x holds text, not an integer").in_row("run 2");
        let damaged: crate::error::Error = damaged.into();
        assert!(matches!(damaged, crate::error::Error::Store(_)));
        assert_eq!(
            damaged.to_string(),
            "run 2: column x holds text, not an integer"
        );
        let engine = Error::Sqlite(rusqlite::Error::InvalidQuery);
        let engine: crate::error::Error = engine.into();
        assert!(!engine.is_input());
        assert!(engine.to_string().starts_with("store: "), "{engine}");
    }

    #[test]
    fn a_write_failing_mid_run_is_a_failure_and_a_refusal_at_start_is_input() {
        let io = std::io::Error::from_raw_os_error(libc::EIO);
        let spool = Error::Write {
            what: "cannot sync the spool",
            path: "/s/x.spool".into(),
            source: io,
        };
        assert!(!spool.is_input());
        let spool: crate::error::Error = spool.into();
        assert!(matches!(spool, crate::error::Error::Store(_)));
        assert!(
            spool
                .to_string()
                .starts_with("cannot sync the spool /s/x.spool: "),
            "{spool}"
        );
        let refused: crate::error::Error = Error::Refuses("read-only".into()).into();
        assert!(refused.is_input());
    }
}
