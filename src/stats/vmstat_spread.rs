//! The spread of /proc/vmstat deltas per sample, side by side for one
//! case of a comparison: mean and standard deviation of the counters that
//! say something about memory management.

use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet, HashMap};

use super::case_data::CaseData;
use super::summary::{mean, stddev};

/// Mean and standard deviation of a vmstat counter's per-sample delta.
#[derive(Debug, Clone, Serialize)]
pub struct Spread {
    pub n: usize,
    pub mean: f64,
    pub stddev: f64,
}

#[derive(Debug, Clone, Serialize)]
pub struct VmstatCase {
    pub key: String,
    /// Counter -> one spread per side (None where the side lacks the case).
    pub counters: BTreeMap<String, Vec<Option<Spread>>>,
}

/// Counters worth a table: faults, THP, NUMA, migration, compaction, reclaim.
pub fn interesting_counter(name: &str) -> bool {
    name == "pgfault"
        || name == "pgmajfault"
        || [
            "thp_",
            "numa_",
            "pgmigrate_",
            "compact_",
            "pgsteal_",
            "pgscan_",
            "pswp",
        ]
        .iter()
        .any(|p| name.starts_with(p))
}

/// A side's measured sample count and its per-sample counter deltas.
type SideCounters<'a> = (usize, HashMap<&'a str, Vec<f64>>);

/// The spread of every interesting counter of case `key` on each side
/// (sides without the case, or without stored samples, get `None`).
pub fn vmstat_case(key: &str, lookup: &[BTreeMap<&str, CaseData>]) -> Option<VmstatCase> {
    // One pass over each side's samples: counter -> per-sample deltas.
    let mut per_side: Vec<Option<SideCounters>> = Vec::new();
    let mut names: BTreeSet<&str> = BTreeSet::new();
    for l in lookup {
        let Some(c) = l.get(key).and_then(|c| c.stored()) else {
            per_side.push(None);
            continue;
        };
        let n = c.measured().count();
        let mut acc: HashMap<&str, Vec<f64>> = HashMap::new();
        for (i, s) in c.measured().enumerate() {
            for (name, v) in &s.vmstat {
                if *v != 0 && interesting_counter(name) {
                    acc.entry(name.as_str()).or_insert_with(|| vec![0.0; n])[i] = *v as f64;
                }
            }
        }
        names.extend(acc.keys().copied());
        per_side.push(Some((n, acc)));
    }
    if names.is_empty() {
        return None;
    }
    let counters = names
        .into_iter()
        .map(|name| {
            let spreads = per_side
                .iter()
                .map(|side| {
                    let (n, acc) = side.as_ref()?;
                    Some(match acc.get(name) {
                        Some(v) => Spread {
                            n: *n,
                            mean: mean(v),
                            stddev: stddev(v),
                        },
                        None => Spread {
                            n: *n,
                            mean: 0.0,
                            stddev: 0.0,
                        },
                    })
                })
                .collect();
            (name.to_string(), spreads)
        })
        .collect();
    Some(VmstatCase {
        key: key.to_string(),
        counters,
    })
}
