//! One step of a bisection judged against the ends: the candidate is
//! booted in turn with the good end, round by round, and the paired ratio
//! candidate / good is placed against the ends' own step (bad / good,
//! measured first). On the log scale the half-way point between the ends
//! divides "like good" from "like bad": the candidate is like good when
//! the whole interval of its ratio lies on the good side of it, like bad
//! when it lies wholly on the bad side, and not told yet otherwise (more
//! rounds; at the end of the budget it is skipped, as `git bisect skip`).
//! It is the deciding rule of `--rounds auto` with the band set to half
//! the ends' step, so each step's interval carries the rule's Bonferroni
//! share of the error: whenever the rounds stop, the chance that a step
//! is put on the wrong side is at most the rule's alpha.

use crate::stats::decide::{Decision, MIN_ROUNDS, Rule, Verdict};

use super::search::Mark;

/// A step's verdict with the interval it rests on.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct Judged {
    /// Good, bad, or skip (not told within the budget; `None` while
    /// rounds may still tell).
    pub mark: Option<Mark>,
    /// candidate / good, paired by round, with its interval.
    pub decision: Decision,
}

/// The ends measured: whether they differ by the rule (the bisection
/// stops with that finding if not) and the step between them.
pub fn ends_differ(d: &Decision) -> bool {
    d.verdict == Verdict::Different
}

/// Judges the candidate's paired log ratios `logs` (ln candidate / good)
/// against the ends' ratio `ends` (bad / good). `last` says the budget
/// ends with these rounds: what is not told yet then is a skip.
pub fn judge(rule: &Rule, ends: f64, logs: &[f64], last: bool) -> Option<Judged> {
    let decision = rule.judge_logs(logs)?;
    let half = ends.ln() / 2.0;
    // On the ends' axis: 0 is good, 2·half is bad.
    let (lo, hi) = match half >= 0.0 {
        true => (decision.ci.0.ln(), decision.ci.1.ln()),
        false => (-decision.ci.1.ln(), -decision.ci.0.ln()),
    };
    let half = half.abs();
    let mark = if logs.len() < MIN_ROUNDS {
        None
    } else if hi < half {
        Some(Mark::Good)
    } else if lo > half {
        Some(Mark::Bad)
    } else {
        None
    };
    Some(Judged {
        mark: mark.or(last.then_some(Mark::Skip)),
        decision,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bisect::search::{Next, Search};
    use crate::stats::rng::SplitMix64;

    #[test]
    fn a_step_is_placed_by_its_interval_against_the_half_way_point() {
        let rule = Rule::sequential(0.1, 0.05, 20);
        let ends = 0.5; // bad is half as fast as good
        let near = |x: f64| [x.ln(), (x * 1.01).ln(), (x * 0.99).ln()];
        let j = judge(&rule, ends, &near(1.0), false).unwrap();
        assert_eq!(j.mark, Some(Mark::Good));
        let j = judge(&rule, ends, &near(0.5), false).unwrap();
        assert_eq!(j.mark, Some(Mark::Bad));
        // Beyond the bad end is still bad; beyond good still good.
        assert_eq!(
            judge(&rule, ends, &near(0.3), false).unwrap().mark,
            Some(Mark::Bad)
        );
        assert_eq!(
            judge(&rule, ends, &near(1.3), false).unwrap().mark,
            Some(Mark::Good)
        );
        // Half-way: not told, a skip once the budget ends.
        let mid = near(0.5f64.sqrt());
        assert_eq!(judge(&rule, ends, &mid, false).unwrap().mark, None);
        assert_eq!(
            judge(&rule, ends, &mid, true).unwrap().mark,
            Some(Mark::Skip)
        );
        // The other direction: bad is faster.
        assert_eq!(
            judge(&rule, 2.0, &near(1.9), false).unwrap().mark,
            Some(Mark::Bad)
        );
        assert_eq!(
            judge(&rule, 2.0, &near(1.05), false).unwrap().mark,
            Some(Mark::Good)
        );
        // Two rounds never decide; one has no interval.
        assert_eq!(
            judge(&rule, ends, &near(1.0)[..2], false).unwrap().mark,
            None
        );
        assert!(judge(&rule, ends, &[0.0], false).is_none());
    }

    /// A whole bisection with every step measured as the guest does:
    /// rounds of noisy paired log ratios until the step is told or the
    /// budget ends.
    fn simulate(rng: &mut SplitMix64, n: usize, planted: usize, sd: f64) -> (Next, usize, usize) {
        let rule = Rule::sequential(0.1, 0.05, 30);
        let step = (0.7f64).ln(); // a 30 % drop: three thresholds
        let mut s = Search::new(n).unwrap();
        let (mut tests, mut skips) = (0, 0);
        loop {
            let i = match s.next() {
                Next::Test(i) => i,
                end => return (end, tests, skips),
            };
            tests += 1;
            let truth = if i >= planted { step } else { 0.0 };
            let mut logs = Vec::new();
            let mark = loop {
                logs.push(truth + sd * rng.normal());
                let last = logs.len() >= rule.max_rounds;
                if let Some(Judged { mark: Some(m), .. }) = judge(&rule, step.exp(), &logs, last) {
                    break m;
                }
            };
            skips += usize::from(mark == Mark::Skip);
            s.mark(i, mark);
        }
    }

    #[test]
    fn seeded_bisections_find_the_planted_step_within_log2_tests() {
        let mut rng = SplitMix64::new(7);
        let (mut found, mut total) = (0, 0);
        for n in [2, 3, 5, 9, 17, 33] {
            for planted in 1..n {
                // TCG's noise: 13 % a boot, so about 18 % a paired ratio.
                let (end, tests, skips) = simulate(&mut rng, n, planted, 0.18);
                total += 1;
                // Each skip costs a test of a neighbour.
                assert!(
                    tests <= crate::bisect::search::most_steps(n) + skips,
                    "n {n}: {tests} tests, {skips} skipped"
                );
                match end {
                    Next::Found(i) if i == planted => found += 1,
                    Next::Found(i) => panic!("n {n}: planted {planted}, found {i}"),
                    Next::Ambiguous(set) => assert!(set.contains(&planted)),
                    Next::Test(_) => unreachable!(),
                }
            }
        }
        // A step of three thresholds is told within the budget almost
        // always, so skips are rare.
        assert!(
            found * 100 >= total * 95,
            "{found} of {total} found outright"
        );
    }
}
