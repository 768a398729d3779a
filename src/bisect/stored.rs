//! A bisection's rounds in the store. Every run a bisection stores is
//! labelled `bisect-KEY/LABEL` (LABEL the entry's: a short commit id or a
//! kernel's label), so `vmscale list --label bisect-KEY` and `history
//! --label bisect-KEY --by kernel` show them, and its guest session is
//! `bisect-KEY:ROLE:NONCE`. KEY hashes what makes two bisections the same
//! (the entries, the plan, the figure, the band, the guest's shape): run
//! again, the same command finds its rounds here and goes on from them.

use std::collections::BTreeMap;

use super::flow::Role;
use crate::error::Result;
use crate::model::{GUEST_ROUND, Run};
use crate::store::Store;
use crate::store::manage::ListFilter;

/// The key of a bisection: `bisect-` and 8 hex digits of the hash of
/// `parts`.
pub fn key(parts: &[String]) -> String {
    use sha2::Digest;
    let mut h = sha2::Sha256::new();
    for p in parts {
        h.update(p.as_bytes());
        h.update([0u8]);
    }
    let hex: String = h.finalize().iter().map(|b| format!("{b:02x}")).collect();
    format!("bisect-{}", &hex[..8])
}

/// The label of an entry's runs.
pub fn label(key: &str, entry: &str) -> String {
    format!("{key}/{entry}")
}

/// The guest session of one measurement of a pair.
pub fn session(key: &str, role: Role) -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    format!(
        "{key}:{}:{:x}",
        role.as_str(),
        nanos ^ u128::from(std::process::id())
    )
}

/// One stored run's part: its session's role, its entry's label and its
/// value of the deciding figure by round.
#[derive(Debug, Clone, PartialEq)]
struct Part {
    session: String,
    role: Role,
    entry: String,
    values: BTreeMap<i64, f64>,
}

/// The rounds a bisection has stored.
#[derive(Debug, Default)]
pub struct Stored {
    parts: Vec<Part>,
    /// The deciding figure the first stored run names.
    pub figure: Option<String>,
}

/// The value of `figure` in each round of `run`: each case's geometric
/// mean over the round's measured samples, then their geometric mean (as
/// `guest::decide::round_value` takes one boot's).
pub fn round_values(run: &Run, figure: &str) -> BTreeMap<i64, f64> {
    let mut by_round: BTreeMap<i64, Vec<f64>> = BTreeMap::new();
    for c in &run.cases {
        let mut case: BTreeMap<i64, Vec<f64>> = BTreeMap::new();
        for s in c.measured() {
            let (Some(v), Some(r)) = (s.data.figures.get(figure), s.noise.get(GUEST_ROUND)) else {
                continue;
            };
            if *v > 0.0 && v.is_finite() {
                case.entry(*r as i64).or_default().push(v.ln());
            }
        }
        for (r, logs) in case {
            by_round
                .entry(r)
                .or_default()
                .push(logs.iter().sum::<f64>() / logs.len() as f64);
        }
    }
    by_round
        .into_iter()
        .map(|(r, l)| (r, (l.iter().sum::<f64>() / l.len() as f64).exp()))
        .collect()
}

impl Stored {
    /// Reads the runs of bisection `key` from `store`, taking `figure`
    /// (else the first run's headline) from the first run of each entry
    /// in each session.
    pub fn load(store: &Store, key: &str, figure: Option<&str>) -> Result<Stored> {
        let filter = ListFilter {
            label: Some(key.to_string()),
            ..ListFilter::default()
        };
        let (runs, _) = store.list_filtered(&filter)?;
        let mut out = Stored {
            figure: figure.map(String::from),
            parts: Vec::new(),
        };
        let prefix = format!("{key}/");
        for listing in runs {
            let Some(entry) = listing
                .label
                .as_deref()
                .and_then(|l| l.strip_prefix(&prefix))
                .map(|rest| rest.split('/').next().unwrap_or(rest).to_string())
            else {
                continue;
            };
            let run = store.load(listing.id)?;
            let session = run.meta.machine["guest"]["session"]
                .as_str()
                .unwrap_or("")
                .to_string();
            let mut fields = session.split(':');
            let role = match (fields.next(), fields.next().and_then(Role::parse)) {
                (Some(k), Some(role)) if k == key => role,
                _ => continue,
            };
            // The first run of the entry in its session decides.
            if out
                .parts
                .iter()
                .any(|p| p.session == session && p.entry == entry)
            {
                continue;
            }
            if out.figure.is_none() {
                out.figure = run.meta.figures.first().map(|f| f.name.clone());
            }
            let Some(figure) = out.figure.clone() else {
                continue;
            };
            out.parts.push(Part {
                values: round_values(&run, &figure),
                session,
                role,
                entry,
            });
        }
        Ok(out)
    }

    /// Rounds of the pair `base`, `new` measured elsewhere (`vmscale
    /// reproduce`'s base and head, booted by the same plan and rule), as
    /// ln(new / base) by round, given to `role` as if stored.
    pub fn seed(&mut self, role: Role, base: &str, new: &str, logs: &[f64]) {
        let session = format!("given:{}:{base}:{new}", role.as_str());
        let rounds = (1..).zip(logs);
        for (entry, values) in [
            (base, rounds.clone().map(|(r, _)| (r, 1.0)).collect()),
            (new, rounds.map(|(r, l)| (r, l.exp())).collect()),
        ] {
            self.parts.push(Part {
                session: session.clone(),
                role,
                entry: entry.to_string(),
                values,
            });
        }
    }

    /// ln(new / base) of every stored round of the pair, session by
    /// session, paired by round.
    pub fn logs(&self, role: Role, base: &str, new: &str) -> Vec<f64> {
        let mut out = Vec::new();
        for b in self
            .parts
            .iter()
            .filter(|p| p.role == role && p.entry == base)
        {
            let Some(n) = self
                .parts
                .iter()
                .find(|p| p.session == b.session && p.entry == new)
            else {
                continue;
            };
            for (r, vb) in &b.values {
                if let Some(vn) = n.values.get(r) {
                    out.push((vn / vb).ln());
                }
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn part(session: &str, role: Role, entry: &str, values: &[(i64, f64)]) -> Part {
        Part {
            session: session.into(),
            role,
            entry: entry.into(),
            values: values.iter().copied().collect(),
        }
    }

    #[test]
    fn pairs_are_made_within_a_session_and_a_role_by_round() {
        let s = Stored {
            figure: Some("fault/wsec".into()),
            parts: vec![
                part("k:step:1", Role::Step, "good", &[(1, 100.0), (2, 100.0)]),
                part("k:step:1", Role::Step, "c3", &[(1, 50.0), (2, 200.0)]),
                part("k:step:2", Role::Step, "good", &[(1, 10.0), (3, 10.0)]),
                part("k:step:2", Role::Step, "c3", &[(1, 5.0)]),
                part("k:confirm:3", Role::Confirm, "good", &[(1, 1.0)]),
                part("k:confirm:3", Role::Confirm, "c3", &[(1, 7.0)]),
            ],
        };
        let logs = s.logs(Role::Step, "good", "c3");
        let want = [0.5f64.ln(), 2f64.ln(), 0.5f64.ln()];
        assert_eq!(logs.len(), 3);
        for (a, b) in logs.iter().zip(want) {
            assert!((a - b).abs() < 1e-12);
        }
        assert_eq!(s.logs(Role::Confirm, "good", "c3"), vec![7f64.ln()]);
        assert!(s.logs(Role::Ends, "good", "c3").is_empty());
        assert!(s.logs(Role::Step, "c3", "other").is_empty());
    }

    #[test]
    fn seeded_rounds_pair_as_given_and_only_for_their_role() {
        let mut s = Stored::default();
        let logs = [0.5f64.ln(), 0.6f64.ln(), 0.55f64.ln()];
        s.seed(Role::Ends, "base", "head", &logs);
        let got = s.logs(Role::Ends, "base", "head");
        assert_eq!(got.len(), 3);
        for (a, b) in got.iter().zip(logs) {
            assert!((a - b).abs() < 1e-12, "{got:?}");
        }
        assert!(s.logs(Role::Step, "base", "head").is_empty());
        assert!(s.logs(Role::Ends, "base", "step").is_empty());
    }

    #[test]
    fn the_key_names_its_inputs_and_labels_carry_it() {
        let a = key(&["tree".into(), "abc".into()]);
        assert!(a.starts_with("bisect-") && a.len() == 15, "{a}");
        assert_eq!(a, key(&["tree".into(), "abc".into()]));
        assert_ne!(a, key(&["treeabc".into()]));
        assert_eq!(label(&a, "1a2b3c"), format!("{a}/1a2b3c"));
        let s = session(&a, Role::Confirm);
        assert!(s.starts_with(&format!("{a}:confirm:")), "{s}");
    }
}
