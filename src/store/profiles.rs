//! Profiles and lock rows beside the samples: folded stacks summed per
//! case (one row per distinct stack), and each sample's lock rows. Plain
//! SQL (INSERT ... ON CONFLICT DO UPDATE, portable to PostgreSQL) through
//! the backend interface.

use std::collections::BTreeMap;

use super::Store;
use super::backend::Db;
use super::error::Result;
use super::spool::{self, ProfileRow};
use crate::locks::LockRow;
use crate::profile::CaseProfile;

/// Adds one sample's profile to its case's (inside the sample's
/// transaction, see record.rs).
pub(super) fn add_profile(db: &mut Db, run_id: i64, case_key: &str, p: &ProfileRow) -> Result<()> {
    db.execute(
        "INSERT INTO profile_cases (run_id, case_key, event, hz, samples, lost)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6)
         ON CONFLICT (run_id, case_key) DO UPDATE SET
             samples = profile_cases.samples + excluded.samples,
             lost = profile_cases.lost + excluded.lost",
        &[
            run_id.into(),
            case_key.into(),
            p.event.as_str().into(),
            p.hz.into(),
            p.samples.into(),
            p.lost.into(),
        ],
    )?;
    for (stack, n) in &p.folded {
        db.execute(
            "INSERT INTO profile_stacks (run_id, case_key, stack, samples)
             VALUES (?1, ?2, ?3, ?4)
             ON CONFLICT (run_id, case_key, stack) DO UPDATE SET
                 samples = profile_stacks.samples + excluded.samples",
            &[
                run_id.into(),
                case_key.into(),
                stack.as_str().into(),
                (*n).into(),
            ],
        )?;
    }
    Ok(())
}

/// Stores one of a sample's lock rows.
pub(super) fn add_lock(
    db: &mut Db,
    run_id: i64,
    case_key: &str,
    seq: i64,
    r: &spool::LockRow,
) -> Result<()> {
    db.execute(
        "INSERT INTO lock_rows (run_id, case_key, seq, source, name, acquisitions,
                                contended, wait_ns, max_wait_ns)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)
         ON CONFLICT (run_id, case_key, seq, source, name) DO NOTHING",
        &[
            run_id.into(),
            case_key.into(),
            seq.into(),
            r.source.as_str().into(),
            r.name.as_str().into(),
            r.acquisitions.into(),
            r.contended.into(),
            r.wait_ns.into(),
            r.max_wait_ns.into(),
        ],
    )?;
    Ok(())
}

fn count(v: i64) -> u64 {
    u64::try_from(v).unwrap_or(0)
}

impl Store {
    /// Each profiled case of a run, in the run's case order.
    pub fn load_profiles(&self, run_id: i64) -> Result<Vec<(String, CaseProfile)>> {
        let mut db = self.db.borrow_mut();
        let heads = db.query(
            "SELECT p.case_key, p.event, p.hz, p.samples, p.lost FROM profile_cases p
             LEFT JOIN cases c ON c.run_id = p.run_id AND c.case_key = p.case_key
             WHERE p.run_id = ?1 ORDER BY c.position, p.case_key",
            &[run_id.into()],
        )?;
        let mut out = Vec::new();
        for h in heads {
            let key = h.text(0)?;
            let mut folded = BTreeMap::new();
            for r in db.query(
                "SELECT stack, samples FROM profile_stacks WHERE run_id = ?1 AND case_key = ?2",
                &[run_id.into(), key.as_str().into()],
            )? {
                folded.insert(r.text(0)?, count(r.int(1)?));
            }
            let p = CaseProfile {
                event: h.text(1)?,
                hz: count(h.int(2)?),
                samples: count(h.int(3)?),
                lost: count(h.int(4)?),
                folded,
            };
            out.push((key, p));
        }
        Ok(out)
    }

    /// The lock rows of each case, summed over its samples (the maximum
    /// wait is the largest of any sample), and how many samples had them.
    pub fn load_locks(&self, run_id: i64) -> Result<Vec<(String, u64, Vec<LockRow>)>> {
        let mut db = self.db.borrow_mut();
        let rows = db.query(
            "SELECT l.case_key, l.source, l.name, SUM(l.acquisitions), SUM(l.contended),
                    SUM(l.wait_ns), MAX(l.max_wait_ns), MIN(c.position)
             FROM lock_rows l
             LEFT JOIN cases c ON c.run_id = l.run_id AND c.case_key = l.case_key
             WHERE l.run_id = ?1
             GROUP BY l.case_key, l.source, l.name
             ORDER BY MIN(c.position), l.case_key, SUM(l.wait_ns) DESC, l.name",
            &[run_id.into()],
        )?;
        let mut out: Vec<(String, u64, Vec<LockRow>)> = Vec::new();
        for r in rows {
            let key = r.text(0)?;
            if out.last().is_none_or(|(k, _, _)| *k != key) {
                let n = db
                    .query_one(
                        "SELECT COUNT(DISTINCT seq) FROM lock_rows WHERE run_id = ?1 AND case_key = ?2",
                        &[run_id.into(), key.as_str().into()],
                    )?
                    .map(|x| x.int(0))
                    .transpose()?
                    .unwrap_or(0);
                out.push((key.clone(), count(n), Vec::new()));
            }
            let row = LockRow {
                source: r.text(1)?,
                name: r.text(2)?,
                acquisitions: count(r.int(3)?),
                contended: count(r.int(4)?),
                wait_ns: count(r.int(5)?),
                max_wait_ns: count(r.int(6)?),
            };
            if let Some(last) = out.last_mut() {
                last.2.push(row);
            }
        }
        Ok(out)
    }
}
