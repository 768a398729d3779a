//! vmscale's one error type. Every layer returns [`Error`] (or a narrower
//! error of its own that converts into it with `?`); the variant says what
//! kind of failure it is, and `main.rs` alone turns that into an exit code:
//! bad input or a refused run 2, a failed run or I/O 1, an interrupted run
//! 130, a measured command's own code for `run cmd` (a closed stdout is
//! not an error: `pipe::run` exits 0).

use std::path::{Path, PathBuf};

/// What went wrong. The message of each variant is complete and names the
/// fix where there is one; callers add context with [`Error::context`].
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Bad input the user can fix: an option, a value, a file given on the
    /// command line, a run that does not exist. Nothing is stored.
    #[error("{0}")]
    Input(String),
    /// A run that cannot be done safely or at all here (memory, privileges,
    /// a missing kernel feature), refused before it starts. Nothing is
    /// stored.
    #[error("{0}")]
    Refused(String),
    /// A file or system call that failed.
    #[error("{what} {}: {source}", path.display())]
    Io {
        what: String,
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// The store could not be read or written, or holds a damaged row
    /// (`store::Error` says which; its message is complete).
    #[error("{0}")]
    Store(String),
    /// A run, a measurement or a report that failed.
    #[error("{0}")]
    Failed(String),
    /// Interrupted by a signal after storing what was measured.
    #[error("interrupted; samples taken so far are stored, run marked incomplete")]
    Interrupted,
    /// A measured command failed: vmscale exits with its code (docs/cmd.md).
    #[error("{1}")]
    Exit(i32, String),
}

impl Error {
    /// An I/O error on `path` while doing `what` ("cannot read", ...).
    pub fn io(what: impl Into<String>, path: impl AsRef<Path>, source: std::io::Error) -> Error {
        Error::Io {
            what: what.into(),
            path: path.as_ref().to_path_buf(),
            source,
        }
    }

    /// The same kind of error with `context` before its message
    /// ("run 7: ..."), so the exit code is kept.
    pub fn context(self, context: impl std::fmt::Display) -> Error {
        match self {
            Error::Input(m) => Error::Input(format!("{context}: {m}")),
            Error::Refused(m) => Error::Refused(format!("{context}: {m}")),
            Error::Store(m) => Error::Store(format!("{context}: {m}")),
            Error::Failed(m) => Error::Failed(format!("{context}: {m}")),
            Error::Exit(c, m) => Error::Exit(c, format!("{context}: {m}")),
            e @ Error::Io { .. } => Error::Failed(format!("{context}: {e}")),
            Error::Interrupted => Error::Interrupted,
        }
    }

    /// The same message as a refusal (exit 2), for checks made before a
    /// run starts, where any failure means it cannot be done here.
    /// Interrupted and a command's exit code are kept.
    pub fn refusal(self) -> Error {
        match self {
            e @ (Error::Interrupted | Error::Exit(..) | Error::Input(_) | Error::Refused(_)) => e,
            e => Error::Refused(e.to_string()),
        }
    }

    /// Bad input or a refusal: exit 2, and nothing may have been stored.
    pub fn is_input(&self) -> bool {
        matches!(self, Error::Input(_) | Error::Refused(_))
    }
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

/// For tests: panics unless `r` is bad input (`Error::Input`, exit 2),
/// showing what it was instead.
#[cfg(test)]
#[track_caller]
pub fn assert_input<T>(r: Result<T>) {
    match r {
        Err(Error::Input(_)) => {}
        Err(e) => panic!("expected bad input (Error::Input), got {e:?}"),
        Ok(_) => panic!("expected bad input (Error::Input), got Ok"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cannot_read(path: &str, kind: std::io::ErrorKind) -> Error {
        Error::io("cannot read", path, std::io::Error::from(kind))
    }

    #[test]
    fn context_keeps_the_kind_of_error() {
        let e = Error::Input("--tasks 0".into()).context("run pft");
        assert!(e.is_input());
        assert_eq!(e.to_string(), "run pft: --tasks 0");
        let e = Error::Exit(3, "cmd failed".into()).context("case 1");
        assert!(matches!(e, Error::Exit(3, _)));
        assert!(!Error::Failed("x".into()).context("y").is_input());
    }

    #[test]
    fn a_refusal_keeps_the_message_and_exits_2() {
        let io = cannot_read("/k", std::io::ErrorKind::PermissionDenied);
        let m = io.to_string();
        let r = io.refusal();
        assert!(matches!(r, Error::Refused(_)));
        assert_eq!(r.to_string(), m);
        assert!(matches!(Error::Interrupted.refusal(), Error::Interrupted));
    }

    #[test]
    fn io_errors_name_the_path_and_the_cause() {
        let e = cannot_read("/x/y", std::io::ErrorKind::NotFound);
        let m = e.to_string();
        assert!(m.starts_with("cannot read /x/y: "), "{m}");
        assert!(m.contains("not found"), "{m}");
    }
}
