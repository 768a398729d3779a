//! What one boot says for a deciding comparison (`--rounds auto`): the
//! headline figure of the plan's first stored run, as one number for the
//! round: the geometric mean over its cases of each case's geometric mean
//! over its measured samples. Kernels run the same plan, so they have the
//! same cases, and the ratio of two such numbers is the geometric mean of
//! the cases' ratios.

use std::path::Path;

use crate::error::{Error, Result};
use crate::model::Better;
use crate::stats::decide::{Decision, Rule, Verdict};
use crate::store::Store;

/// A boot's value of the deciding figure.
#[derive(Debug, Clone, PartialEq)]
pub struct RoundValue {
    pub figure: String,
    pub value: f64,
    pub better: Better,
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
    let declared = match figure {
        Some(f) => match run.meta.figures.iter().find(|x| x.name == f) {
            Some(declared) => declared,
            None => {
                let known: Vec<&str> = run.meta.figures.iter().map(|x| x.name.as_str()).collect();
                return Err(Error::Input(format!(
                    "--figure {f}: the plan's first run ({}) reports {}",
                    run.meta.workload,
                    known.join(", ")
                )));
            }
        },
        None => match run.meta.figures.first() {
            Some(f) => f,
            None => return Ok(None),
        },
    };
    let name = &declared.name;
    let logs: Vec<f64> = run
        .cases
        .iter()
        .filter_map(|c| {
            let v: Vec<f64> = c
                .values(name)
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
        figure: name.clone(),
        better: declared.better,
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
    /// Whether the figure is better higher or lower, once a boot said.
    pub better: Option<Better>,
    /// Each kernel's value, by round.
    values: Vec<Vec<(i64, f64)>>,
}

/// A caller's own end of `--rounds auto` besides the rule's band
/// (reproduce's: the interval tells no change from the robot's figure):
/// whether one comparison's decision, its figure better higher or lower
/// when known, settles it.
pub type Settles<'a> = dyn Fn(&Decision, Option<Better>) -> bool + 'a;

impl Deciding {
    pub fn new(rule: Rule, figure: Option<String>, kernels: usize) -> Deciding {
        Deciding {
            rule,
            figure,
            better: None,
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
            self.better.get_or_insert(v.better);
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
        self.settled(&|k, _| k.verdict != Verdict::Undecided)
    }

    /// Whether `settles` says so of every comparison.
    pub fn settled(&self, settles: &Settles<'_>) -> bool {
        let d = self.decisions();
        !d.is_empty()
            && d.iter()
                .all(|k| k.as_ref().is_some_and(|k| settles(k, self.better)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two kernels whose rounds differ by about -3 % with a 12 % scatter
    /// (the band's rule cannot call that "same" at 10 % in 6 rounds).
    fn scattered() -> Deciding {
        let mut d = Deciding::new(Rule::sequential(0.1, 0.05, 8), None, 2);
        let base = [100.0, 104.0, 96.0, 101.0, 99.0, 100.0];
        let new = [90.0, 112.0, 86.0, 103.0, 95.0, 93.0];
        for (r, (a, b)) in base.iter().zip(new).enumerate() {
            d.values[0].push((r as i64, *a));
            d.values[1].push((r as i64, b));
        }
        d.better = Some(Better::Higher);
        d
    }

    #[test]
    fn a_callers_end_settles_what_the_band_leaves_undecided() {
        let d = scattered();
        assert!(!d.decided(), "{:?}", d.decisions());
        // Reproduce's kind of end: the interval excludes a 40 % drop.
        let excludes_drop = |k: &Decision, b: Option<Better>| k.ci.0 > 0.6 && b.is_some();
        assert!(d.settled(&excludes_drop), "{:?}", d.decisions());
        // The figure's direction reaches the caller.
        assert!(!d.settled(&|_, b| b == Some(Better::Lower)));
        // A change it cannot yet tell apart does not end the rounds.
        assert!(!d.settled(&|k, _| k.ci.0 > 0.99 || k.ci.1 < 0.99));
    }

    #[test]
    fn nothing_is_settled_before_any_round() {
        let d = Deciding::new(Rule::sequential(0.1, 0.05, 8), None, 2);
        assert!(!d.settled(&|_, _| true));
        assert!(!d.decided());
    }
}
