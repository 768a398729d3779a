//! The queries of `vmscale history`: every run's identity and setup
//! without its samples, then one figure of one case for many runs at once.
//! Plain SQL that SQLite and PostgreSQL read alike; JSON is parsed here,
//! never by the engine, so both stores give the same series.

use super::error::{Error, Result};
use super::{RunListing, Store};
use crate::model::Figure;
use std::collections::HashMap;

/// A run as a history selects it: what identifies it and how it was set up.
#[derive(Debug, Clone)]
pub struct HistoryRun {
    pub listing: RunListing,
    pub config: serde_json::Value,
    pub knobs: serde_json::Value,
    pub machine: serde_json::Value,
    pub figures: Vec<Figure>,
    /// The keys of its cases, in order.
    pub cases: Vec<String>,
}

/// Ids per query: long enough to make few round trips, short enough for
/// any engine's statement limits.
const CHUNK: usize = 500;

fn json<T: serde::de::DeserializeOwned>(id: i64, column: &str, text: &str) -> Result<T> {
    serde_json::from_str(text).map_err(|e| {
        Error::corrupt(format!(
            "run {id} cannot be read: its {column} column holds no valid JSON ({e})"
        ))
    })
}

impl Store {
    /// The runs `listings` names, with their setup and case keys, in the
    /// order given.
    pub fn history_runs(&self, listings: Vec<RunListing>) -> Result<Vec<HistoryRun>> {
        let mut setup: HashMap<i64, (String, String, String, String)> = HashMap::new();
        let mut cases: HashMap<i64, Vec<String>> = HashMap::new();
        for chunk in listings.chunks(CHUNK) {
            let ids = id_list(chunk.iter().map(|l| l.id));
            let mut db = self.db.borrow_mut();
            for r in db.query(
                &format!(
                    "SELECT id, config, knobs, machine, figures FROM runs WHERE id IN ({ids})"
                ),
                &[],
            )? {
                setup.insert(r.int(0)?, (r.text(1)?, r.text(2)?, r.text(3)?, r.text(4)?));
            }
            for r in db.query(
                &format!(
                    "SELECT run_id, case_key FROM cases WHERE run_id IN ({ids})
                     ORDER BY run_id, position"
                ),
                &[],
            )? {
                cases.entry(r.int(0)?).or_default().push(r.text(1)?);
            }
        }
        listings
            .into_iter()
            .filter_map(|l| {
                let (config, knobs, machine, figures) = setup.remove(&l.id)?;
                let id = l.id;
                Some((|| {
                    Ok(HistoryRun {
                        config: json(id, "config", &config)?,
                        knobs: json(id, "knobs", &knobs)?,
                        machine: json(id, "machine", &machine)?,
                        figures: json(id, "figures", &figures)?,
                        cases: cases.remove(&id).unwrap_or_default(),
                        listing: l,
                    })
                })())
            })
            .collect()
    }

    /// The finite values of `figure` in the measured samples of case
    /// `case_key` of each run in `ids`, in the order taken.
    pub fn history_values(
        &self,
        ids: &[i64],
        case_key: &str,
        figure: &str,
    ) -> Result<HashMap<i64, Vec<f64>>> {
        let mut out: HashMap<i64, Vec<f64>> = HashMap::new();
        for chunk in ids.chunks(CHUNK) {
            let rows = self.db.borrow_mut().query(
                &format!(
                    "SELECT run_id, figures FROM samples
                     WHERE case_key = ?1 AND warmup = 0 AND run_id IN ({})
                     ORDER BY run_id, id",
                    id_list(chunk.iter().copied())
                ),
                &[case_key.into()],
            )?;
            for r in rows {
                let id = r.int(0)?;
                let figures: HashMap<String, serde_json::Value> =
                    json(id, "sample figures", &r.text(1)?)?;
                if let Some(v) = figures.get(figure).and_then(|v| v.as_f64())
                    && v.is_finite()
                {
                    out.entry(id).or_default().push(v);
                }
            }
        }
        Ok(out)
    }
}

/// "1,2,3": ids are integers, so they are written into the statement.
fn id_list(ids: impl Iterator<Item = i64>) -> String {
    ids.map(|i| i.to_string()).collect::<Vec<_>>().join(",")
}
