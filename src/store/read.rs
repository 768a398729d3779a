//! Reading the store: resolving a run name, listing runs, loading a run
//! with its samples. A damaged row is named (run and column), never read
//! as empty.

use super::error::{Error, Result};
use super::row::Value;
use super::{OWNER_COLUMNS, RunListing, Store, live_status};
use crate::model::{Case, CaseSamples, Run, RunMeta, Sample, SampleData, Status};

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

/// A JSON column of a stored row; text that is not JSON is an error
/// naming the column, never silently read as empty.
fn json_column<T: serde::de::DeserializeOwned>(column: &str, text: &str) -> Result<T> {
    serde_json::from_str(text).map_err(|e| {
        Error::corrupt(format!(
            "its {column} column holds no valid JSON ({e}); was the store changed outside vmscale?"
        ))
    })
}

/// A stored status; an unknown word is a damaged row.
fn status(word: &str) -> Result<Status> {
    Status::parse(word).ok_or_else(|| {
        Error::corrupt(format!(
            "unknown status '{word}' (running, complete, incomplete or failed)"
        ))
    })
}

impl Store {
    fn one_id(&self, sql: &str, param: Value) -> Result<Option<i64>> {
        self.db
            .borrow_mut()
            .query_one(sql, &[param])?
            .map(|r| r.int(0))
            .transpose()
    }

    /// Resolves a run name: an id, `last`, `last~N`, or a label of one run.
    pub fn resolve(&self, spec: &str) -> Result<i64> {
        let nth_last = if spec == "last" {
            Some(0)
        } else {
            spec.strip_prefix("last~")
                .and_then(|n| n.parse::<u32>().ok())
                .map(i64::from)
        };
        let found = if let Some(n) = nth_last {
            self.one_id(
                "SELECT id FROM runs ORDER BY id DESC LIMIT 1 OFFSET ?1",
                n.into(),
            )?
        } else if let Ok(id) = spec.parse::<i64>() {
            self.one_id("SELECT id FROM runs WHERE id = ?1", id.into())?
        } else {
            // A label naming several runs is refused (store/manage.rs).
            self.resolve_label(spec)?
        };
        found.ok_or_else(|| Error::NoRun(spec.to_string()))
    }

    /// The runs that can be read; a damaged row is left out.
    pub fn list(&self) -> Result<Vec<RunListing>> {
        Ok(self.list_checked()?.0)
    }

    /// The runs that can be read, and one message per damaged row naming
    /// the run and what is wrong with it.
    pub fn list_checked(&self) -> Result<(Vec<RunListing>, Vec<String>)> {
        let rows = self.db.borrow_mut().query(
            &format!(
                "SELECT r.id, r.label, r.workload, r.started_at, r.status, r.origin,
                        r.command_line,
                        (SELECT COUNT(*) FROM samples s WHERE s.run_id = r.id AND s.warmup = 0),
                        r.host, {OWNER_COLUMNS}
                 FROM runs r ORDER BY r.id"
            ),
            &[],
        )?;
        let mut good = Vec::new();
        let mut bad = Vec::new();
        for r in &rows {
            let listing = || -> Result<RunListing> {
                Ok(RunListing {
                    id: r.int(0)?,
                    label: r.opt_text(1)?,
                    workload: r.text(2)?,
                    started_at: r.text(3)?,
                    status: live_status(r.text(4)?, r, 9),
                    origin: r.text(5)?,
                    command_line: r.text(6)?,
                    samples: r.int(7)?,
                    host: r.opt_text(8)?,
                })
            };
            match listing() {
                Ok(l) => good.push(l),
                Err(e) => bad.push(match r.int(0) {
                    Ok(id) => format!("run {id} cannot be read: {e}"),
                    Err(_) => format!("a run cannot be read: {e}"),
                }),
            }
        }
        Ok((good, bad))
    }

    /// Loads a run with all its samples.
    pub fn load(&self, id: i64) -> Result<Run> {
        self.load_with(id, true)
    }

    /// Loads a run for statistics: per-task figures and noise are left
    /// empty (they are most of the parsing on large runs), but for the
    /// noise of guest runs, whose rounds pair them.
    pub fn load_figures(&self, id: i64) -> Result<Run> {
        self.load_with(id, false)
    }

    fn load_with(&self, id: i64, full: bool) -> Result<Run> {
        let damaged = |e: Error| e.in_row(format!("run {id} cannot be read"));
        let mut db = self.db.borrow_mut();
        let r = db
            .query_one(
                &format!(
                    "SELECT id, label, workload, command_line, version, config, figures, machine,
                            knobs, started_at, ended_at, status, note, origin, {OWNER_COLUMNS}
                     FROM runs WHERE id = ?1"
                ),
                &[id.into()],
            )?
            .ok_or_else(|| Error::NoRun(id.to_string()))?;
        let meta = (|| -> Result<RunMeta> {
            Ok(RunMeta {
                id: r.int(0)?,
                label: r.opt_text(1)?,
                workload: r.text(2)?,
                command_line: r.text(3)?,
                version: r.text(4)?,
                config: json_column("config", &r.text(5)?)?,
                figures: json_column("figures", &r.text(6)?)?,
                machine: json_column("machine", &r.text(7)?)?,
                knobs: json_column("knobs", &r.text(8)?)?,
                started_at: r.text(9)?,
                ended_at: r.opt_text(10)?,
                status: status(&live_status(r.text(11)?, &r, 14))?,
                note: r.opt_text(12)?,
                origin: r.text(13)?,
            })
        })()
        .map_err(damaged)?;
        let mut cases: Vec<CaseSamples> = db
            .query(
                "SELECT tasks, variant, knobs FROM cases WHERE run_id = ?1 ORDER BY position",
                &[id.into()],
            )?
            .iter()
            .map(|r| {
                Ok(CaseSamples {
                    case: Case {
                        tasks: r.int(0)? as usize,
                        variant: r.text(1)?,
                        knobs: json_column("case knobs", &r.text(2)?)?,
                    },
                    samples: Vec::new(),
                })
            })
            .collect::<Result<_>>()
            .map_err(damaged)?;
        let index: std::collections::HashMap<String, usize> = cases
            .iter()
            .enumerate()
            .map(|(i, c)| (c.case.key(), i))
            .collect();
        let rows = db.query(
            if full {
                "SELECT case_key, seq, warmup, taken_at, figures, tasks, vmstat, noise, flagged
                 FROM samples WHERE run_id = ?1 ORDER BY id"
            } else {
                // Noise only where it pairs samples: the round of a
                // `vmscale guest` boot (statistics pair kernels by it).
                "SELECT case_key, seq, warmup, taken_at, figures, '[]', vmstat,
                        CASE WHEN noise LIKE '%guest_round%' THEN noise ELSE '{}' END, flagged
                 FROM samples WHERE run_id = ?1 ORDER BY id"
            },
            &[id.into()],
        )?;
        for r in rows {
            let sample = (|| -> Result<Sample> {
                let value = |i: usize, column: &str| -> Result<serde_json::Value> {
                    json_column(column, &r.text(i)?)
                };
                Ok(Sample {
                    seq: r.int(1)?,
                    warmup: r.bool(2)?,
                    taken_at: r.text(3)?,
                    data: SampleData {
                        figures: number_map(&value(4, "sample figures")?),
                        tasks: match value(5, "sample tasks")? {
                            serde_json::Value::Array(a) => a.iter().map(number_map).collect(),
                            _ => Vec::new(),
                        },
                    },
                    vmstat: json_column("sample vmstat", &r.text(6)?)?,
                    noise: number_map(&value(7, "sample noise")?),
                    flagged: r.bool(8)?,
                })
            })()
            .map_err(damaged)?;
            if let Some(&i) = index.get(&r.text(0).map_err(damaged)?) {
                cases[i].samples.push(sample);
            }
        }
        Ok(Run { meta, cases })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Better, Figure};
    use crate::store::NewRun;
    use std::collections::BTreeMap;

    fn one_run(st: &mut Store, case: &Case) -> i64 {
        st.create_run(&NewRun {
            label: Some("a"),
            workload: "synthetic",
            command_line: "test",
            config: &serde_json::json!({}),
            figures: &[Figure::new("rate", "1/s", Better::Higher, true)],
            machine: &serde_json::json!({}),
            knobs: &serde_json::json!({}),
            cases: std::slice::from_ref(case),
            origin: "measured",
        })
        .unwrap()
    }

    #[test]
    fn an_unknown_run_is_input_and_a_damaged_column_a_store_failure() {
        let path = crate::scratch::at("s.db");
        let mut st = Store::open(&path).unwrap();
        let id = one_run(&mut st, &Case::new(1, "x"));
        st.batch("UPDATE runs SET config = '{\"thp\": ' WHERE id = 1")
            .unwrap();
        let unknown = st.resolve("last~3").unwrap_err();
        let damaged = st.load(id).unwrap_err();
        let status = {
            st.batch("UPDATE runs SET config = '{}', status = 'paused'")
                .unwrap();
            st.load(id).unwrap_err()
        };
        assert!(matches!(unknown, Error::NoRun(ref s) if s == "last~3"));
        assert!(crate::error::Error::from(unknown).is_input());
        let Error::Corrupt(m) = &damaged else {
            panic!("not a damaged row: {damaged:?}")
        };
        assert!(
            m.starts_with("run 1 cannot be read: its config column"),
            "{m}"
        );
        let damaged = crate::error::Error::from(damaged);
        assert!(matches!(damaged, crate::error::Error::Store(_)));
        assert!(matches!(status, Error::Corrupt(ref m) if m.contains("'paused'")));
    }

    #[test]
    fn a_missing_store_is_input_and_is_not_created() {
        let path = crate::scratch::at("none/s.db");
        let Err(e) = Store::open_existing(&path) else {
            panic!("opened a store that is not there")
        };
        assert!(matches!(e, Error::Missing(_)), "{e:?}");
        assert!(crate::error::Error::from(e).is_input());
        assert!(!path.exists());
    }

    #[test]
    fn a_non_finite_figure_keeps_the_others() {
        let path = crate::scratch::at("s.db");
        let mut st = Store::open(&path).unwrap();
        let case = Case::new(1, "x");
        let id = one_run(&mut st, &case);
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
        assert_eq!(got.data.figures["wall"], 2.0);
        assert!(got.data.figures["rate"].is_nan());
        assert_eq!(got.data.tasks[0]["user"], 0.5);
        assert!(got.data.tasks[0]["rate"].is_nan());
        assert_eq!(got.noise["other"], 0.1);
        assert_eq!(got.vmstat["pgfault"], 7);
    }
}
