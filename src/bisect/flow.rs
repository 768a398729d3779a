//! A whole bisection over entries 0 (good) … n − 1 (bad), apart from how a
//! pair of them is booted: the ends first (the bisection stops with that
//! finding when they do not differ), then each step the search asks for,
//! judged against the ends, then the first bad against its parent,
//! measured again. The `Bench` keeps every round it measures; asked again
//! for a pair it already holds rounds of (an interrupted bisection run
//! again), it starts from them, so the same command continues where it
//! stopped and the search, being deterministic, asks for the same steps.

use serde::Serialize;

use super::search::{Mark, Next, Search};
use super::step::{self, Judged};
use crate::error::{Error, Result};
use crate::guest::host_load::Busy;
use crate::stats::decide::{Decision, Rule, Verdict};

/// What a pair is measured for; rounds of one role are never reused by
/// another (the confirmation measures again what a step may have measured).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    Ends,
    Step,
    Confirm,
}

impl Role {
    pub fn as_str(self) -> &'static str {
        match self {
            Role::Ends => "ends",
            Role::Step => "step",
            Role::Confirm => "confirm",
        }
    }

    pub fn parse(s: &str) -> Option<Role> {
        [Role::Ends, Role::Step, Role::Confirm]
            .into_iter()
            .find(|r| r.as_str() == s)
    }
}

/// What a bisection measures: entry `new` against entry `base`, for
/// `role`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Pair {
    pub role: Role,
    pub base: usize,
    pub new: usize,
}

/// The rounds of one pair: ln(new / base) per round, paired.
#[derive(Debug, Clone, Default)]
pub struct Measured {
    pub logs: Vec<f64>,
    /// How many of them were in the store before this run.
    pub stored: usize,
    /// Seconds of booting in this run.
    pub seconds: f64,
    /// How busy the host was during this run's boots (none: none booted).
    pub host: Option<Busy>,
}

/// Boots pairs of entries in turn, round by round.
pub trait Bench {
    /// Rounds of the pair: those stored, then more until `enough` says
    /// so. An error is a pair that could not be measured (a build or a
    /// boot failed), or an interruption.
    fn measure(&mut self, pair: Pair, enough: Enough) -> Result<Measured>;
}

/// Whether the rounds so far are enough.
pub type Enough<'a> = &'a mut dyn FnMut(&[f64]) -> bool;

/// One pair's measurement and what it said.
#[derive(Debug, Clone, Serialize)]
pub struct Record {
    pub base: usize,
    pub new: usize,
    /// Like good, like bad, or skipped (steps only).
    pub mark: Option<Mark>,
    /// The paired ratio new / base (None: fewer than two rounds).
    pub decision: Option<Decision>,
    pub rounds: usize,
    /// Rounds found in the store (a resumed bisection).
    pub stored: usize,
    pub seconds: f64,
    /// Why the pair could not be measured.
    pub failure: Option<String>,
    /// How busy the host was during the pair's boots in this run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub host: Option<Busy>,
}

impl Record {
    /// The record of `pair` measured as `m`, not judged yet.
    fn of(pair: Pair, m: &Measured) -> Record {
        Record {
            base: pair.base,
            new: pair.new,
            mark: None,
            decision: None,
            rounds: m.logs.len(),
            stored: m.stored,
            seconds: m.seconds,
            failure: None,
            host: m.host,
        }
    }
}

/// How the bisection ended.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Answer {
    /// The ends are not told apart: nothing to bisect.
    EndsAlike,
    /// The first bad entry.
    Found(usize),
    /// The first bad is one of these (the others were skipped).
    Ambiguous(Vec<usize>),
}

/// The whole bisection.
#[derive(Debug, Clone, Serialize)]
pub struct Outcome {
    pub rule: Rule,
    pub ends: Record,
    pub steps: Vec<Record>,
    pub answer: Answer,
    pub confirmation: Option<Record>,
}

/// Measures a pair with the deciding rule: until its verdict or the
/// budget.
fn decide(
    bench: &mut dyn Bench,
    rule: &Rule,
    role: Role,
    base: usize,
    new: usize,
) -> Result<Record> {
    let max = rule.max_rounds;
    let pair = Pair { role, base, new };
    let m = bench.measure(pair, &mut |logs| {
        logs.len() >= max
            || rule
                .judge_logs(logs)
                .is_some_and(|d| d.verdict != Verdict::Undecided)
    })?;
    Ok(Record {
        decision: rule.judge_logs(&m.logs),
        ..Record::of(pair, &m)
    })
}

/// Measures step `i` against the good end until it is told or skipped.
fn step(bench: &mut dyn Bench, rule: &Rule, ends: f64, i: usize) -> Result<Record> {
    let max = rule.max_rounds;
    let told = |logs: &[f64]| step::judge(rule, ends, logs, logs.len() >= max);
    let pair = Pair {
        role: Role::Step,
        base: 0,
        new: i,
    };
    let measured = bench.measure(pair, &mut |logs| {
        told(logs).is_some_and(|j| j.mark.is_some())
    });
    let m = match measured {
        Ok(m) => m,
        Err(Error::Interrupted) => return Err(Error::Interrupted),
        Err(e) => {
            return Ok(Record {
                mark: Some(Mark::Skip),
                failure: Some(e.to_string()),
                ..Record::of(pair, &Measured::default())
            });
        }
    };
    let judged: Option<Judged> = told(&m.logs);
    Ok(Record {
        // Rounds that ended early without an answer (none left) skip.
        mark: Some(judged.and_then(|j| j.mark).unwrap_or(Mark::Skip)),
        decision: judged.map(|j| j.decision),
        ..Record::of(pair, &m)
    })
}

/// Bisects `n` entries with `rule`; `on` sees each record as it is made.
pub fn bisect(
    n: usize,
    rule: &Rule,
    bench: &mut dyn Bench,
    on: &mut dyn FnMut(&Record),
) -> Result<Outcome> {
    let mut search = Search::new(n).ok_or_else(|| {
        Error::Input("a bisection needs two entries at least: the good and the bad".into())
    })?;
    let ends = decide(bench, rule, Role::Ends, 0, n - 1)?;
    on(&ends);
    let ratio = match ends.decision {
        Some(d) if step::ends_differ(&d) => d.ratio,
        _ => {
            return Ok(Outcome {
                rule: *rule,
                ends,
                steps: Vec::new(),
                answer: Answer::EndsAlike,
                confirmation: None,
            });
        }
    };
    let mut steps = Vec::new();
    let answer = loop {
        match search.next() {
            Next::Test(i) => {
                let r = step(bench, rule, ratio, i)?;
                on(&r);
                search.mark(i, r.mark.unwrap_or(Mark::Skip));
                steps.push(r);
            }
            Next::Found(i) => break Answer::Found(i),
            Next::Ambiguous(set) => break Answer::Ambiguous(set),
        }
    };
    let confirmation = match &answer {
        Answer::Found(i) => {
            let r = decide(bench, rule, Role::Confirm, i - 1, *i)?;
            on(&r);
            Some(r)
        }
        _ => None,
    };
    Ok(Outcome {
        rule: *rule,
        ends,
        steps,
        answer,
        confirmation,
    })
}

/// One step for `git bisect run`: the ends (0 good, `bad`) measured or
/// found in the store, then `candidate` against the good end. `None` for
/// the step when the ends are not told apart.
pub fn judge_one(
    rule: &Rule,
    bench: &mut dyn Bench,
    bad: usize,
    candidate: usize,
) -> Result<(Record, Option<Record>)> {
    let ends = decide(bench, rule, Role::Ends, 0, bad)?;
    match ends.decision {
        Some(d) if step::ends_differ(&d) => {
            let r = step(bench, rule, d.ratio, candidate)?;
            Ok((ends, Some(r)))
        }
        _ => Ok((ends, None)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::rng::SplitMix64;
    use std::collections::BTreeMap;

    /// A bench whose entries from `planted` on are `step` slower, with
    /// noise, keeping its rounds as a store would.
    struct Fake {
        planted: usize,
        step: f64,
        rng: SplitMix64,
        kept: BTreeMap<Pair, Vec<f64>>,
        booted: usize,
        fails: Vec<usize>,
        stop_after: Option<usize>,
    }

    impl Bench for Fake {
        fn measure(&mut self, pair: Pair, enough: Enough) -> Result<Measured> {
            let Pair { base, new, .. } = pair;
            if self.fails.contains(&new) {
                return Err(Error::Failed("the kernel panicked".into()));
            }
            let level = |i: usize| if i >= self.planted { self.step } else { 0.0 };
            let mut logs = self.kept.get(&pair).cloned().unwrap_or_default();
            let stored = logs.len();
            while !enough(&logs) {
                if self.stop_after.is_some_and(|k| self.booted >= k) {
                    self.kept.insert(pair, logs);
                    return Err(Error::Interrupted);
                }
                self.booted += 1;
                logs.push(level(new) - level(base) + 0.05 * self.rng.normal());
            }
            self.kept.insert(pair, logs.clone());
            Ok(Measured {
                logs,
                stored,
                seconds: 1.0,
                host: None,
            })
        }
    }

    fn fake(planted: usize, step: f64) -> Fake {
        Fake {
            planted,
            step,
            rng: SplitMix64::new(planted as u64),
            kept: BTreeMap::new(),
            booted: 0,
            fails: Vec::new(),
            stop_after: None,
        }
    }

    fn rule() -> Rule {
        Rule::sequential(0.1, 0.05, 12)
    }

    #[test]
    fn finds_the_planted_entry_and_confirms_it_against_its_parent() {
        for planted in 1..9 {
            let mut f = fake(planted, 0.7f64.ln());
            let o = bisect(9, &rule(), &mut f, &mut |_| {}).unwrap();
            assert_eq!(o.answer, Answer::Found(planted));
            assert!(o.steps.len() <= 3, "{} steps", o.steps.len());
            let c = o.confirmation.unwrap();
            assert_eq!((c.base, c.new), (planted - 1, planted));
            let d = c.decision.unwrap();
            assert_eq!(d.verdict, Verdict::Different);
            assert!(d.ci.0 < 0.7 && 0.7 < d.ci.1, "{d:?}");
        }
    }

    #[test]
    fn ends_that_do_not_differ_stop_the_bisection() {
        let mut f = fake(4, 0.0);
        let o = bisect(9, &rule(), &mut f, &mut |_| {}).unwrap();
        assert_eq!(o.answer, Answer::EndsAlike);
        assert!(o.steps.is_empty() && o.confirmation.is_none());
        assert_ne!(o.ends.decision.unwrap().verdict, Verdict::Different);
    }

    #[test]
    fn a_step_that_fails_is_skipped_with_its_reason() {
        let mut f = fake(5, 0.7f64.ln());
        f.fails = vec![4];
        let o = bisect(9, &rule(), &mut f, &mut |_| {}).unwrap();
        let skipped = o.steps.iter().find(|s| s.new == 4).unwrap();
        assert_eq!(skipped.mark, Some(Mark::Skip));
        assert!(skipped.failure.as_deref().unwrap().contains("panicked"));
        // 3 is good and 5 bad: the skipped 4 could be the first bad.
        assert_eq!(o.answer, Answer::Ambiguous(vec![4, 5]));
        assert!(o.confirmation.is_none());
    }

    #[test]
    fn an_interrupted_bisection_continues_from_its_stored_rounds() {
        let mut f = fake(6, 0.7f64.ln());
        f.stop_after = Some(7);
        assert!(matches!(
            bisect(9, &rule(), &mut f, &mut |_| {}),
            Err(Error::Interrupted)
        ));
        let before = f.booted;
        f.stop_after = None;
        let o = bisect(9, &rule(), &mut f, &mut |_| {}).unwrap();
        assert_eq!(o.answer, Answer::Found(6));
        assert!(o.ends.stored >= 3, "{:?}", o.ends);
        // The whole run again after that boots nothing more.
        let after = f.booted;
        assert!(after > before);
        let again = bisect(9, &rule(), &mut f, &mut |_| {}).unwrap();
        assert_eq!(f.booted, after);
        assert_eq!(again.answer, o.answer);
        assert!(again.steps.iter().all(|s| s.stored == s.rounds));
    }
}
