//! The embedded results store: SQLite in WAL mode, each sample committed as
//! it is taken so a killed run keeps what it measured.

mod schema;

use rusqlite::{Connection, OptionalExtension, params};
use std::path::{Path, PathBuf};

use crate::model::{Case, CaseSamples, Figure, Run, RunMeta, Sample, SampleData, Status};

pub struct Store {
    conn: Connection,
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

fn err(e: rusqlite::Error) -> String {
    format!("store: {e}")
}

fn json<T: serde::Serialize>(v: &T) -> String {
    serde_json::to_string(v).unwrap_or_else(|_| "null".into())
}

/// A stored map of figures. JSON has no NaN or infinity, so serde writes
/// a non-finite figure as `null`; it is read back as NaN rather than
/// failing the whole map (which would drop every figure of the sample).
fn number_map(v: &serde_json::Value) -> std::collections::BTreeMap<String, f64> {
    v.as_object()
        .into_iter()
        .flatten()
        .map(|(k, x)| (k.clone(), x.as_f64().unwrap_or(f64::NAN)))
        .collect()
}

impl Store {
    /// Opens (creating if needed) the store at `path`.
    pub fn open(path: &Path) -> Result<Store, String> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir)
                .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        }
        let conn = Connection::open(path)
            .map_err(|e| format!("cannot open store {}: {e}", path.display()))?;
        conn.pragma_update(None, "journal_mode", "WAL")
            .map_err(err)?;
        conn.pragma_update(None, "synchronous", "NORMAL")
            .map_err(err)?;
        conn.pragma_update(None, "foreign_keys", "ON")
            .map_err(err)?;
        conn.busy_timeout(std::time::Duration::from_secs(5))
            .map_err(err)?;
        schema::migrate(&conn)?;
        Ok(Store { conn })
    }

    /// Opens an existing store read-mostly; a missing file is an input error.
    pub fn open_existing(path: &Path) -> Result<Store, String> {
        if !path.exists() {
            return Err(format!(
                "no store at {}: run `vmscale run quick` first, or name one with --db",
                path.display()
            ));
        }
        Store::open(path)
    }

    pub fn create_run(&mut self, r: &NewRun) -> Result<i64, String> {
        let tx = self.conn.transaction().map_err(err)?;
        tx.execute(
            "INSERT INTO runs (label, workload, command_line, version, config, figures, machine,
                               knobs, started_at, status, origin)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, 'running', ?10)",
            params![
                r.label,
                r.workload,
                r.command_line,
                env!("CARGO_PKG_VERSION"),
                json(r.config),
                json(&r.figures),
                json(r.machine),
                json(r.knobs),
                crate::timefmt::now(),
                r.origin,
            ],
        )
        .map_err(err)?;
        let id = tx.last_insert_rowid();
        for (pos, c) in r.cases.iter().enumerate() {
            tx.execute(
                "INSERT INTO cases (run_id, case_key, position, tasks, variant, knobs)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                params![
                    id,
                    c.key(),
                    pos as i64,
                    c.tasks as i64,
                    c.variant,
                    json(&c.knobs)
                ],
            )
            .map_err(err)?;
        }
        tx.commit().map_err(err)?;
        Ok(id)
    }

    /// Stores one sample, committed at once.
    pub fn add_sample(&mut self, run_id: i64, case: &Case, s: &Sample) -> Result<(), String> {
        self.conn
            .execute(
                "INSERT INTO samples (run_id, case_key, seq, warmup, taken_at, figures, tasks, vmstat, noise, flagged)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
                params![
                    run_id,
                    case.key(),
                    s.seq,
                    s.warmup,
                    s.taken_at,
                    json(&s.data.figures),
                    json(&s.data.tasks),
                    json(&s.vmstat),
                    json(&s.noise),
                    s.flagged,
                ],
            )
            .map_err(err)?;
        Ok(())
    }

    pub fn finish_run(
        &mut self,
        run_id: i64,
        status: Status,
        note: Option<&str>,
    ) -> Result<(), String> {
        self.conn
            .execute(
                "UPDATE runs SET status = ?2, note = ?3, ended_at = ?4 WHERE id = ?1",
                params![run_id, status.as_str(), note, crate::timefmt::now()],
            )
            .map_err(err)?;
        Ok(())
    }

    /// Resolves a run name: an id, `last`, `last~N`, or a label (newest first).
    pub fn resolve(&self, spec: &str) -> Result<i64, String> {
        let unknown = || {
            format!(
                "no run '{spec}' in the store: `vmscale list` shows the runs (ids, labels, last, last~N)"
            )
        };
        let nth_last = if spec == "last" {
            Some(0)
        } else {
            spec.strip_prefix("last~")
                .and_then(|n| n.parse::<u32>().ok())
                .map(i64::from)
        };
        let found: Option<i64> = if let Some(n) = nth_last {
            self.conn
                .query_row(
                    "SELECT id FROM runs ORDER BY id DESC LIMIT 1 OFFSET ?1",
                    [n],
                    |r| r.get(0),
                )
                .optional()
                .map_err(err)?
        } else if let Ok(id) = spec.parse::<i64>() {
            self.conn
                .query_row("SELECT id FROM runs WHERE id = ?1", [id], |r| r.get(0))
                .optional()
                .map_err(err)?
        } else {
            self.conn
                .query_row(
                    "SELECT id FROM runs WHERE label = ?1 ORDER BY id DESC LIMIT 1",
                    [spec],
                    |r| r.get(0),
                )
                .optional()
                .map_err(err)?
        };
        found.ok_or_else(unknown)
    }

    pub fn list(&self) -> Result<Vec<RunListing>, String> {
        let mut st = self
            .conn
            .prepare(
                "SELECT r.id, r.label, r.workload, r.started_at, r.status, r.origin, r.command_line,
                        (SELECT COUNT(*) FROM samples s WHERE s.run_id = r.id AND s.warmup = 0)
                 FROM runs r ORDER BY r.id",
            )
            .map_err(err)?;
        let rows = st
            .query_map([], |r| {
                Ok(RunListing {
                    id: r.get(0)?,
                    label: r.get(1)?,
                    workload: r.get(2)?,
                    started_at: r.get(3)?,
                    status: r.get(4)?,
                    origin: r.get(5)?,
                    command_line: r.get(6)?,
                    samples: r.get(7)?,
                })
            })
            .map_err(err)?;
        rows.collect::<Result<_, _>>().map_err(err)
    }

    /// Loads a run with all its samples.
    pub fn load(&self, id: i64) -> Result<Run, String> {
        self.load_with(id, true)
    }

    /// Loads a run for statistics: per-task figures and noise are left
    /// empty (they are most of the parsing on large runs).
    pub fn load_figures(&self, id: i64) -> Result<Run, String> {
        self.load_with(id, false)
    }

    fn load_with(&self, id: i64, full: bool) -> Result<Run, String> {
        let parse = |s: String| serde_json::from_str(&s).unwrap_or(serde_json::Value::Null);
        let meta = self
            .conn
            .query_row(
                "SELECT id, label, workload, command_line, version, config, figures, machine, knobs,
                        started_at, ended_at, status, note, origin
                 FROM runs WHERE id = ?1",
                [id],
                |r| {
                    Ok(RunMeta {
                        id: r.get(0)?,
                        label: r.get(1)?,
                        workload: r.get(2)?,
                        command_line: r.get(3)?,
                        version: r.get(4)?,
                        config: parse(r.get(5)?),
                        figures: serde_json::from_str(&r.get::<_, String>(6)?).unwrap_or_default(),
                        machine: parse(r.get(7)?),
                        knobs: parse(r.get(8)?),
                        started_at: r.get(9)?,
                        ended_at: r.get(10)?,
                        status: Status::parse(&r.get::<_, String>(11)?),
                        note: r.get(12)?,
                        origin: r.get(13)?,
                    })
                },
            )
            .optional()
            .map_err(err)?
            .ok_or_else(|| format!("no run {id} in the store"))?;
        let mut cases: Vec<CaseSamples> = {
            let mut st = self
                .conn
                .prepare(
                    "SELECT tasks, variant, knobs FROM cases WHERE run_id = ?1 ORDER BY position",
                )
                .map_err(err)?;
            st.query_map([id], |r| {
                Ok(CaseSamples {
                    case: Case {
                        tasks: r.get::<_, i64>(0)? as usize,
                        variant: r.get(1)?,
                        knobs: serde_json::from_str(&r.get::<_, String>(2)?).unwrap_or_default(),
                    },
                    samples: Vec::new(),
                })
            })
            .map_err(err)?
            .collect::<Result<_, _>>()
            .map_err(err)?
        };
        let index: std::collections::HashMap<String, usize> = cases
            .iter()
            .enumerate()
            .map(|(i, c)| (c.case.key(), i))
            .collect();
        let mut st = self
            .conn
            .prepare(if full {
                "SELECT case_key, seq, warmup, taken_at, figures, tasks, vmstat, noise, flagged
                 FROM samples WHERE run_id = ?1 ORDER BY id"
            } else {
                "SELECT case_key, seq, warmup, taken_at, figures, '[]', vmstat, '{}', flagged
                 FROM samples WHERE run_id = ?1 ORDER BY id"
            })
            .map_err(err)?;
        let rows = st
            .query_map([id], |r| {
                let figures: String = r.get(4)?;
                let tasks: String = r.get(5)?;
                let vmstat: String = r.get(6)?;
                let noise: String = r.get(7)?;
                Ok((
                    r.get::<_, String>(0)?,
                    Sample {
                        seq: r.get(1)?,
                        warmup: r.get(2)?,
                        taken_at: r.get(3)?,
                        data: SampleData {
                            figures: number_map(&parse(figures)),
                            tasks: match parse(tasks) {
                                serde_json::Value::Array(a) => a.iter().map(number_map).collect(),
                                _ => Vec::new(),
                            },
                        },
                        vmstat: serde_json::from_str(&vmstat).unwrap_or_default(),
                        noise: number_map(&parse(noise)),
                        flagged: r.get(8)?,
                    },
                ))
            })
            .map_err(err)?;
        for row in rows {
            let (key, sample) = row.map_err(err)?;
            if let Some(&i) = index.get(&key) {
                cases[i].samples.push(sample);
            }
        }
        Ok(Run { meta, cases })
    }

    /// Direct access for tests and the import/export commands.
    pub fn connection(&self) -> &Connection {
        &self.conn
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Better;
    use std::collections::BTreeMap;

    #[test]
    fn a_non_finite_figure_keeps_the_others() {
        let dir = std::env::temp_dir().join(format!("vmscale-store-nan-{}", std::process::id()));
        let path = dir.join("s.db");
        let mut st = Store::open(&path).unwrap();
        let case = Case::new(1, "x");
        let id = st
            .create_run(&NewRun {
                label: None,
                workload: "synthetic",
                command_line: "test",
                config: &serde_json::json!({}),
                figures: &[Figure::new("rate", "1/s", Better::Higher, true)],
                machine: &serde_json::json!({}),
                knobs: &serde_json::json!({}),
                cases: std::slice::from_ref(&case),
                origin: "measured",
            })
            .unwrap();
        let task = BTreeMap::from([("user".to_string(), 0.5), ("rate".to_string(), f64::NAN)]);
        let sample = Sample {
            seq: 0,
            warmup: false,
            taken_at: String::new(),
            data: SampleData {
                figures: BTreeMap::from([
                    ("rate".to_string(), f64::INFINITY),
                    ("wall".to_string(), 2.0),
                ]),
                tasks: vec![task],
            },
            vmstat: BTreeMap::from([("pgfault".to_string(), 7)]),
            noise: BTreeMap::from([("steal".to_string(), f64::NAN), ("other".to_string(), 0.1)]),
            flagged: false,
        };
        st.add_sample(id, &case, &sample).unwrap();
        let got = &st.load(id).unwrap().cases[0].samples[0];
        let _ = std::fs::remove_dir_all(&dir);
        assert_eq!(got.data.figures["wall"], 2.0);
        assert!(got.data.figures["rate"].is_nan());
        assert_eq!(got.data.tasks[0]["user"], 0.5);
        assert!(got.data.tasks[0]["rate"].is_nan());
        assert_eq!(got.noise["other"], 0.1);
        assert_eq!(got.vmstat["pgfault"], 7);
    }
}
