//! Copying runs from one store into another (`vmscale merge`), by their
//! global identity (uuid): a run already present is left alone, so merging
//! the same files again, or in another order, gives each run once. Each
//! run is copied in one transaction, so a merge killed at any point leaves
//! a run whole or absent. A spool (a run whose PostgreSQL server went
//! away) is merged the same way: its samples not yet stored, then its
//! ending.

use super::backend::Db;
use super::error::{Error, Result};
use super::row::{Row, Value};
use super::{OWNER_COLUMNS, Store, live_status, record, spool};

/// The tables holding a run's rows besides `runs`, each with the order in
/// which its rows are copied. A migration adding a per-run table appends
/// it here.
const RUN_TABLES: &[(&str, &str)] = &[
    ("cases", "position"),
    ("samples", "id"),
    ("profile_cases", "case_key"),
    ("profile_stacks", "case_key, stack"),
    ("lock_rows", "case_key, seq"),
];

/// What merging one run did.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum Merged {
    /// Copied as a new run.
    Copied { from: i64, to: i64 },
    /// Already in the store (merged before).
    Present { from: i64, to: i64 },
    /// Left out: still being written by its process.
    Running { from: i64 },
}

impl Merged {
    /// The id in this store of the run that was `from` in the other, if
    /// it is here now (copied or already present).
    pub fn moved(merged: &[Merged], from: i64) -> Option<i64> {
        merged.iter().find_map(|m| match m {
            Merged::Copied { from: f, to } | Merged::Present { from: f, to } if *f == from => {
                Some(*to)
            }
            _ => None,
        })
    }
}

/// What merging a spool did.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct SpoolMerged {
    /// The run in this store.
    pub run: i64,
    /// Whether the run itself had to be made here.
    pub created: bool,
    /// Samples written, and samples already here.
    pub written: usize,
    pub present: usize,
    /// The run's status now.
    pub status: String,
}

/// An INSERT of `row`'s columns but `id`, with `run_id` set to `run`.
/// On PostgreSQL, the transaction's lock against another merge: two merges
/// of one file at once, one copies and the other finds it.
fn merge_lock(db: &mut Db) -> Result<()> {
    if let Db::Postgres(_) = db {
        db.batch(&format!(
            "SELECT pg_advisory_xact_lock({})",
            super::pg::MERGE_LOCK
        ))?;
    }
    Ok(())
}

fn insert_like(db: &mut Db, table: &str, row: &Row, run: Option<i64>) -> Result<i64> {
    let mut names = Vec::new();
    let mut values = Vec::new();
    for (name, value) in row.columns().iter().zip(row.values()) {
        match name.as_str() {
            "id" => continue,
            "run_id" => values.push(Value::from(run)),
            _ => values.push(value.clone()),
        }
        names.push(name.as_str());
    }
    let marks: Vec<String> = (1..=names.len()).map(|i| format!("?{i}")).collect();
    let sql = format!(
        "INSERT INTO {table} ({}) VALUES ({})",
        names.join(", "),
        marks.join(", ")
    );
    if table == "runs" {
        db.insert(&sql, &values)
    } else {
        db.execute(&sql, &values).map(|_| 0)
    }
}

impl Store {
    /// Copies every run of `src` not yet in this store, with its cases,
    /// samples and machine snapshot; a run still being written is left out.
    pub fn merge_from(&mut self, src: &Store) -> Result<Vec<Merged>> {
        let runs = src.db.borrow_mut().query(
            &format!("SELECT id, uuid, status, {OWNER_COLUMNS} FROM runs ORDER BY id"),
            &[],
        )?;
        let mut done = Vec::new();
        for r in &runs {
            let from = r.int(0)?;
            let uuid = r.opt_text(1)?.ok_or_else(|| {
                Error::corrupt(format!(
                    "run {from} has no uuid: open its store once to upgrade it"
                ))
            })?;
            if live_status(r.text(2)?, r, 3) == "running" {
                done.push(Merged::Running { from });
                continue;
            }
            done.push(self.merge_run(src, from, &uuid)?);
        }
        Ok(done)
    }

    fn merge_run(&mut self, src: &Store, from: i64, uuid: &str) -> Result<Merged> {
        let mut source = src.db.borrow_mut();
        let run = source
            .query_one("SELECT * FROM runs WHERE id = ?1", &[from.into()])?
            .ok_or_else(|| Error::corrupt(format!("run {from} vanished while merging")))?;
        let mut children = Vec::new();
        for (table, order) in RUN_TABLES {
            children.push((
                *table,
                source.query(
                    &format!("SELECT * FROM {table} WHERE run_id = ?1 ORDER BY {order}"),
                    &[from.into()],
                )?,
            ));
        }
        let status = live_status(
            run.text(run_column(&run, "status")?)?,
            &run,
            run_column(&run, "pid")?,
        );
        self.db.get_mut().immediate(|db| {
            merge_lock(db)?;
            if let Some(to) = db
                .query_one("SELECT id FROM runs WHERE uuid = ?1", &[uuid.into()])?
                .map(|r| r.int(0))
                .transpose()?
            {
                return Ok(Merged::Present { from, to });
            }
            let to = insert_like(db, "runs", &run, None)?;
            // A run whose writer died is stored as what it is: incomplete.
            db.execute(
                "UPDATE runs SET status = ?2 WHERE id = ?1",
                &[to.into(), status.as_str().into()],
            )?;
            for (table, rows) in &children {
                for row in rows {
                    insert_like(db, table, row, Some(to))?;
                }
            }
            Ok(Merged::Copied { from, to })
        })
    }
}

impl Store {
    /// Writes what a spool holds into this store, in one transaction: the
    /// run (unless it is here), each sample it does not have yet, in
    /// order, then the run's ending (incomplete when its process died
    /// before the end).
    pub fn merge_spool(&mut self, sp: &spool::ReadSpool) -> Result<SpoolMerged> {
        let uuid = sp
            .run
            .get("uuid")
            .and_then(|u| u.as_str())
            .ok_or_else(|| Error::corrupt(format!("{} names no run uuid", sp.path.display())))?
            .to_string();
        let run = spool::json_row(&sp.run)?;
        let cases = sp
            .cases
            .iter()
            .map(spool::json_row)
            .collect::<Result<Vec<_>>>()?;
        let spool::Ending {
            status,
            note,
            ended_at,
        } = sp.end.clone().unwrap_or_else(|| spool::Ending {
            status: "incomplete".into(),
            note: Some("its process ended while its store was away".into()),
            ended_at: crate::timefmt::now(),
        });
        let note = format!(
            "{}{}the samples taken while the store was away were merged from {}",
            note.as_deref().unwrap_or(""),
            if note.is_some() { "; " } else { "" },
            sp.path.display()
        );
        self.db.get_mut().immediate(|db| {
            merge_lock(db)?;
            let here = db
                .query_one(
                    "SELECT id FROM runs WHERE uuid = ?1",
                    &[uuid.as_str().into()],
                )?
                .map(|r| r.int(0))
                .transpose()?;
            let to = match here {
                Some(to) => to,
                None => {
                    let to = insert_like(db, "runs", &run, None)?;
                    for c in &cases {
                        insert_like(db, "cases", c, Some(to))?;
                    }
                    to
                }
            };
            let mut written = 0;
            for s in &sp.samples {
                if record::insert_row(db, to, s)? {
                    written += 1;
                }
            }
            db.execute(
                "UPDATE runs SET status = ?2, note = ?3, ended_at = ?4 WHERE id = ?1",
                &[
                    to.into(),
                    status.as_str().into(),
                    note.as_str().into(),
                    ended_at.as_str().into(),
                ],
            )?;
            Ok(SpoolMerged {
                run: to,
                created: here.is_none(),
                written,
                present: sp.samples.len() - written,
                status: status.clone(),
            })
        })
    }
}

impl Store {
    /// Merges the spools that earlier runs into this PostgreSQL store left
    /// behind (their server was away when they ended) and removes them;
    /// returns a line for each. Spools of other stores, still locked by
    /// their runs, or damaged, are left alone.
    pub fn merge_left_spools(&mut self) -> Vec<String> {
        let name = match &self.place {
            super::Place::Postgres(url) => format!("PostgreSQL {}", super::pg::shown(url)),
            super::Place::Sqlite(_) => return Vec::new(),
        };
        let dir = spool::dir();
        let Ok(entries) = crate::state_dir::check_dir(&dir).map(|()| std::fs::read_dir(&dir))
        else {
            return Vec::new();
        };
        let mut said = Vec::new();
        for path in entries.into_iter().flatten().flatten().map(|e| e.path()) {
            if path.extension().is_none_or(|x| x != "spool") {
                continue;
            }
            let Some(sp) = spool::read(&path).ok().filter(|sp| sp.store == name) else {
                continue;
            };
            said.push(
                match self.merge_spool(&sp).and_then(|m| sp.remove().map(|()| m)) {
                    Ok(m) => format!(
                        "run {} finished from {}, left by its run when the store was away: {} \
                     samples written, {} already here",
                        m.run,
                        path.display(),
                        m.written,
                        m.present
                    ),
                    Err(e) => format!("{} not merged: {e}", path.display()),
                },
            );
        }
        said
    }
}

fn run_column(row: &Row, name: &str) -> Result<usize> {
    row.columns()
        .iter()
        .position(|c| c == name)
        .ok_or_else(|| Error::corrupt(format!("the runs table has no column {name}")))
}
