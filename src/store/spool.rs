//! The spool: where a run's samples go while its PostgreSQL server is
//! away. One file per run in the state directory's `spool/`, JSON lines
//! appended and fsynced one by one (a crash loses nothing written), locked
//! by its writer with a POSIX lock so two processes never share one. The
//! first line copies the run and its cases (so the run can be made again
//! in any store) under the spool's format version, then one line per
//! sample, then the run's ending. A spool of another format version is
//! refused, naming both versions.

use std::fs::File;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value as Json};

use super::error::{Error, Result};
use super::row::{Row, Value};
use crate::exec::sys;

/// One sample as stored: the columns of its row, and the profile and lock
/// rows recorded beside it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SampleRow {
    pub case_key: String,
    pub seq: i64,
    pub warmup: bool,
    pub taken_at: String,
    pub figures: String,
    pub tasks: String,
    pub vmstat: String,
    pub noise: String,
    pub flagged: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profile: Option<ProfileRow>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub locks: Vec<LockRow>,
}

/// A sample's profile: the `profile_cases` columns and its folded stacks.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProfileRow {
    pub event: String,
    pub hz: i64,
    pub samples: i64,
    pub lost: i64,
    pub folded: Vec<(String, i64)>,
}

/// One `lock_rows` row of a sample.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LockRow {
    pub source: String,
    pub name: String,
    pub acquisitions: i64,
    pub contended: i64,
    pub wait_ns: i64,
    pub max_wait_ns: i64,
}

/// The format of the spools this vmscale writes and reads. A spool
/// without one was written before spools had one, in format 1.
pub const FORMAT: u64 = 1;

fn format_1() -> u64 {
    1
}

/// A line of the spool.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Entry {
    /// The run's row and its cases, as the store held them (column ->
    /// value), and the store they belong to (without password), under
    /// the spool's format version.
    Run {
        #[serde(default = "format_1")]
        format: u64,
        store: String,
        run: Map<String, Json>,
        cases: Vec<Map<String, Json>>,
    },
    Sample(SampleRow),
    /// How the run ended.
    End(Ending),
}

/// How a run ended: the spool's last line, when it ended.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Ending {
    pub status: String,
    pub note: Option<String>,
    pub ended_at: String,
}

/// A row as a JSON object (column -> value); blobs, which runs and cases
/// do not hold, become null.
pub fn row_json(r: &Row) -> Map<String, Json> {
    r.columns()
        .iter()
        .zip(r.values())
        .map(|(c, v)| {
            let j = match v {
                Value::Int(i) => Json::from(*i),
                Value::Real(f) => serde_json::Number::from_f64(*f).map_or(Json::Null, Json::Number),
                Value::Text(t) => Json::from(t.as_str()),
                Value::Null | Value::Blob(_) => Json::Null,
            };
            (c.clone(), j)
        })
        .collect()
}

/// A JSON object as a row. Column names must be plain identifiers: a
/// damaged or planted spool cannot smuggle SQL in.
pub fn json_row(m: &Map<String, Json>) -> Result<Row> {
    let mut names = Vec::new();
    let mut values = Vec::new();
    for (k, v) in m {
        if k.is_empty() || !k.bytes().all(|b| b.is_ascii_lowercase() || b == b'_') {
            return Err(Error::corrupt(format!("the spool names a column {k:?}")));
        }
        names.push(k.clone());
        values.push(match v {
            Json::Null => Value::Null,
            Json::Bool(b) => Value::from(*b),
            Json::Number(n) => n
                .as_i64()
                .map(Value::Int)
                .unwrap_or_else(|| Value::Real(n.as_f64().unwrap_or(f64::NAN))),
            Json::String(s) => Value::Text(s.clone()),
            other => Value::Text(other.to_string()),
        });
    }
    Ok(Row::new(std::rc::Rc::new(names), values))
}

/// The directory spools live in: `spool/` in the state directory
/// (VMSCALE_STATE_DIR, /var/lib/vmscale), beside the knob journal.
pub fn dir() -> PathBuf {
    crate::state_dir::dir().join("spool")
}

/// A spool being written, locked by this process.
pub struct Spool {
    path: PathBuf,
    file: File,
    /// Samples appended.
    pub samples: usize,
}

/// A spool named to be read that cannot be (the user's input).
fn io(what: &str, path: &Path) -> impl FnOnce(std::io::Error) -> Error {
    let what = format!("{what} {}", path.display());
    move |e| Error::Open {
        what,
        message: e.to_string(),
    }
}

/// A spool that cannot be written while a run goes on.
fn write_failed(what: &'static str, path: &Path) -> impl FnOnce(std::io::Error) -> Error {
    let path = path.to_path_buf();
    move |source| Error::Write { what, path, source }
}

fn from_crate(e: crate::error::Error) -> Error {
    Error::Unusable(e.to_string())
}

impl Spool {
    /// Creates the spool of run `uuid` with its first line. An existing
    /// spool of the run (a drained one never removed) is an error.
    pub fn create(uuid: &str, header: &Entry) -> Result<Spool> {
        if uuid.is_empty() || !uuid.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-') {
            return Err(Error::corrupt(format!("run uuid {uuid:?}")));
        }
        let d = dir();
        crate::state_dir::ensure_dir(&d).map_err(from_crate)?;
        let path = d.join(format!("{uuid}.spool"));
        let file = crate::state_dir::create_new(&path).map_err(from_crate)?;
        // The new name itself must survive a crash.
        File::open(&d)
            .and_then(|dir| dir.sync_all())
            .map_err(write_failed("cannot sync", &d))?;
        if !sys::try_lock(&file).map_err(write_failed("cannot lock", &path))? {
            return Err(Error::Unusable(format!(
                "{} is locked by another process",
                path.display()
            )));
        }
        let mut s = Spool {
            path,
            file,
            samples: 0,
        };
        s.append(header)?;
        Ok(s)
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Appends one line and waits until it is on disk.
    pub fn append(&mut self, e: &Entry) -> Result<()> {
        let mut line = serde_json::to_string(e).map_err(|e| Error::corrupt(e.to_string()))?;
        line.push('\n');
        let path = self.path.clone();
        self.file
            .write_all(line.as_bytes())
            .map_err(write_failed("cannot write the spool", &path))?;
        self.file
            .sync_data()
            .map_err(write_failed("cannot sync the spool", &path))?;
        if matches!(e, Entry::Sample(_)) {
            self.samples += 1;
        }
        Ok(())
    }

    /// Removes the spool once everything in it is in the store.
    pub fn remove(self) -> Result<()> {
        std::fs::remove_file(&self.path).map_err(write_failed("cannot remove", &self.path))
    }
}

/// A spool read back, still locked (so no running vmscale writes it
/// meanwhile): its run, its samples in order, and its ending if the run
/// ended.
pub struct ReadSpool {
    pub path: PathBuf,
    _file: File,
    pub store: String,
    pub run: Map<String, Json>,
    pub cases: Vec<Map<String, Json>>,
    pub samples: Vec<SampleRow>,
    pub end: Option<Ending>,
}

/// True when the file at `path` starts like a spool (a store is SQLite).
pub fn looks_like(path: &Path) -> bool {
    let mut head = [0u8; 8];
    File::open(path)
        .and_then(|mut f| f.read_exact(&mut head))
        .is_ok_and(|()| head.starts_with(b"{\"run\":"))
}

/// Reads the spool at `path`, taking its lock: a spool still being
/// written by a running vmscale is refused. A torn last line (a crash
/// while appending) is ignored; damage anywhere else is an error.
pub fn read(path: &Path) -> Result<ReadSpool> {
    use std::os::unix::fs::OpenOptionsExt;
    let mut file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(path)
        .map_err(io("cannot open the spool", path))?;
    if !file.metadata().is_ok_and(|m| m.is_file()) {
        return Err(Error::Unusable(format!(
            "{} is not a plain file",
            path.display()
        )));
    }
    if !sys::try_lock(&file).map_err(io("cannot lock", path))? {
        return Err(Error::Unusable(format!(
            "{} is being written by a running vmscale: merge it when that run has ended",
            path.display()
        )));
    }
    let mut text = Vec::new();
    file.read_to_end(&mut text)
        .map_err(io("cannot read the spool", path))?;
    let whole = match text.iter().rposition(|&b| b == b'\n') {
        Some(i) => &text[..=i],
        None => &[][..],
    };
    let damaged = |n: usize, why: String| {
        Error::Unusable(format!(
            "{} line {n} is damaged ({why}): it is not a spool vmscale wrote",
            path.display()
        ))
    };
    let mut lines = whole.split(|&b| b == b'\n').filter(|l| !l.is_empty());
    let first = lines.next().unwrap_or_default();
    check_format(path, first)?;
    let (store, run, cases) = match serde_json::from_slice::<Entry>(first) {
        Ok(Entry::Run {
            store, run, cases, ..
        }) => (store, run, cases),
        Err(e) if !first.is_empty() => return Err(damaged(1, e.to_string())),
        _ => return Err(damaged(1, "it does not start with the run".into())),
    };
    let mut out = ReadSpool {
        path: path.to_path_buf(),
        _file: file,
        store,
        run,
        cases,
        samples: Vec::new(),
        end: None,
    };
    for (i, l) in lines.enumerate() {
        match serde_json::from_slice::<Entry>(l) {
            Ok(Entry::Sample(s)) if out.end.is_none() => out.samples.push(s),
            Ok(Entry::End(e)) if out.end.is_none() => out.end = Some(e),
            Ok(_) => return Err(damaged(i + 2, "a line out of place".into())),
            Err(e) => return Err(damaged(i + 2, e.to_string())),
        }
    }
    Ok(out)
}

/// Refuses a spool whose first line names a format this vmscale does not
/// read (a newer vmscale's), before its lines are taken for anything.
fn check_format(path: &Path, first: &[u8]) -> Result<()> {
    let Ok(head) = serde_json::from_slice::<Json>(first) else {
        return Ok(());
    };
    let format = &head["run"]["format"];
    match format.as_u64() {
        None if format.is_null() => Ok(()),
        Some(FORMAT) => Ok(()),
        _ => Err(Error::Unusable(format!(
            "{} is a spool of format version {format}; this vmscale reads version {FORMAT}: \
             merge it with the vmscale that wrote it, or a newer one",
            path.display()
        ))),
    }
}

impl ReadSpool {
    /// Removes the spool once merged (the lock goes with it).
    pub fn remove(self) -> Result<()> {
        std::fs::remove_file(&self.path).map_err(write_failed("cannot remove", &self.path))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(seq: i64) -> SampleRow {
        SampleRow {
            case_key: "thread/1".into(),
            seq,
            warmup: seq == 0,
            taken_at: "t".into(),
            figures: "{}".into(),
            tasks: "[]".into(),
            vmstat: "{}".into(),
            noise: "{}".into(),
            flagged: false,
            profile: None,
            locks: Vec::new(),
        }
    }

    #[test]
    fn an_ending_line_keeps_the_format_spools_were_written_in() {
        let old = r#"{"end":{"status":"complete","note":null,"ended_at":"t"}}"#;
        let e = Entry::End(Ending {
            status: "complete".into(),
            note: None,
            ended_at: "t".into(),
        });
        assert_eq!(serde_json::to_string(&e).unwrap(), old);
        assert_eq!(serde_json::from_str::<Entry>(old).unwrap(), e);
    }

    #[test]
    fn a_spool_reads_back_in_order_and_a_torn_tail_is_ignored() {
        let path = crate::scratch::at("x.spool");
        let mut run = Map::new();
        run.insert("uuid".into(), "u-1".into());
        run.insert("pid".into(), 7.into());
        let lines = [
            Entry::Run {
                format: FORMAT,
                store: "postgres://u@h/db".into(),
                run: run.clone(),
                cases: Vec::new(),
            },
            Entry::Sample(sample(0)),
            Entry::Sample(sample(1)),
        ];
        let mut text = String::new();
        for l in &lines {
            text.push_str(&serde_json::to_string(l).unwrap());
            text.push('\n');
        }
        text.push_str("{\"sample\":{\"case_k"); // a crash while appending
        std::fs::write(&path, text).unwrap();
        assert!(looks_like(&path));
        let r = read(&path).unwrap();
        assert_eq!(r.run, run);
        let seqs: Vec<i64> = r.samples.iter().map(|s| s.seq).collect();
        assert_eq!(seqs, [0, 1]);
        assert!(r.end.is_none());
        let row = json_row(&r.run).unwrap();
        assert_eq!(row_json(&row), run);
        // A column name that is not an identifier is refused.
        let mut bad = Map::new();
        bad.insert("x); DROP TABLE runs; --".into(), 1.into());
        assert!(json_row(&bad).is_err());
    }

    #[test]
    fn the_format_version_is_written_and_another_refused_naming_both() {
        let path = crate::scratch::at("v.spool");
        let head = Entry::Run {
            format: FORMAT,
            store: "postgres://u@h/db".into(),
            run: Map::new(),
            cases: Vec::new(),
        };
        let line = serde_json::to_string(&head).unwrap();
        assert!(line.starts_with("{\"run\":{\"format\":1,"), "{line}");
        // Written before spools had a version: format 1.
        let old = line.replacen("\"format\":1,", "", 1);
        std::fs::write(&path, format!("{old}\n")).unwrap();
        assert!(looks_like(&path));
        assert!(read(&path).is_ok());
        // A newer vmscale's spool is refused, both versions named.
        let newer = line.replacen("\"format\":1,", "\"format\":7,\"extra\":[],", 1);
        std::fs::write(&path, format!("{newer}\n")).unwrap();
        let e = read(&path).err().expect("refused").to_string();
        assert!(
            e.contains("format version 7") && e.contains("reads version 1"),
            "{e}"
        );
    }
}
