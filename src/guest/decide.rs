//! What one boot says for a deciding comparison (`--rounds auto`): the
//! headline figure of the plan's first stored run, as one number for the
//! round: the geometric mean over its cases of each case's geometric mean
//! over its measured samples. Kernels run the same plan, so they have the
//! same cases, and the ratio of two such numbers is the geometric mean of
//! the cases' ratios.

use std::path::Path;

use crate::error::{Error, Result};
use crate::stats::decide::{Decision, Rule, Verdict};
use crate::store::Store;

/// A boot's value of the deciding figure.
#[derive(Debug, Clone, PartialEq)]
pub struct RoundValue {
    pub figure: String,
    pub value: f64,
}

/// The deciding figure's value in the guest store at `path`: `figure`, or
/// the first run's headline (its first declared figure). `None` when the
/// plan stored no run with that figure.
pub fn round_value(path: &Path, figure: Option<&str>) -> Result<Option<RoundValue>> {
    let store = Store::open_existing(path)?;
    let Some(first) = store.list()?.into_iter().min_by_key(|r| r.id) else {
        return Ok(None);
    };
    let run = store.load(first.id)?;
    let name = match figure {
        Some(f) => {
            if !run.meta.figures.iter().any(|x| x.name == f) {
                let known: Vec<&str> = run.meta.figures.iter().map(|x| x.name.as_str()).collect();
                return Err(Error::Input(format!(
                    "--figure {f}: the plan's first run ({}) reports {}",
                    run.meta.workload,
                    known.join(", ")
                )));
            }
            f.to_string()
        }
        None => match run.meta.figures.first() {
            Some(f) => f.name.clone(),
            None => return Ok(None),
        },
    };
    let logs: Vec<f64> = run
        .cases
        .iter()
        .filter_map(|c| {
            let v: Vec<f64> = c
                .values(&name)
                .filter(|v| *v > 0.0 && v.is_finite())
                .map(f64::ln)
                .collect();
            (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
        })
        .collect();
    if logs.is_empty() {
        return Ok(None);
    }
    Ok(Some(RoundValue {
        figure: name,
        value: (logs.iter().sum::<f64>() / logs.len() as f64).exp(),
    }))
}

/// The deciding comparisons of a `vmscale guest` session: every kernel
/// after the first against the first, round by round.
#[derive(Debug, Clone)]
pub struct Deciding {
    pub rule: Rule,
    /// `--figure`, else the first run's headline once a boot named it.
    pub figure: Option<String>,
    /// Each kernel's value, by round.
    values: Vec<Vec<(i64, f64)>>,
}

impl Deciding {
    pub fn new(rule: Rule, figure: Option<String>, kernels: usize) -> Deciding {
        Deciding {
            rule,
            figure,
            values: vec![Vec::new(); kernels],
        }
    }

    /// Records kernel `i`'s boot of `round` from the store it brought.
    pub fn record(&mut self, i: usize, round: u32, store: Option<&Path>) -> Result<()> {
        let Some(store) = store else {
            return Ok(());
        };
        if let Some(v) = round_value(store, self.figure.as_deref())? {
            self.figure.get_or_insert(v.figure);
            self.values[i].push((i64::from(round), v.value));
        }
        Ok(())
    }

    /// Each kernel after the first against the first (`None`: fewer than
    /// two rounds with the figure).
    pub fn decisions(&self) -> Vec<Option<Decision>> {
        self.values[1..]
            .iter()
            .map(|new| self.rule.judge(&self.values[0], new))
            .collect()
    }

    /// ln(new / first) of kernel `i`'s rounds paired with the first's, in
    /// round order: the numbers `decisions` judges (a bisection over the
    /// same pair starts from them).
    pub fn logs(&self, i: usize) -> Vec<f64> {
        match (self.values.first(), self.values.get(i)) {
            (Some(base), Some(new)) => crate::stats::paired::round_log_ratios(base, new),
            _ => Vec::new(),
        }
    }

    /// Whether every comparison has its verdict.
    pub fn decided(&self) -> bool {
        let d = self.decisions();
        !d.is_empty()
            && d.iter()
                .all(|k| k.is_some_and(|k| k.verdict != Verdict::Undecided))
    }
}
