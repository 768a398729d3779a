//! The bisection `reproduce --bisect` plans, as `--dry-run` shows it:
//! after which verdicts it runs, over which range, about how many steps
//! (⌈log2⌉ of the commits, `bisect::search::most_steps`) and how long
//! their runs take at the plan's estimate of a kernel and round. Pure.

use serde::Serialize;

use super::report::Commit;
use super::verdict::Verdict;
use crate::bisect::search::most_steps;
use crate::stats::decide::MIN_ROUNDS;

/// The bisection a verdict in [`Verdict::SEEN`] is followed by.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Bisection {
    /// The verdicts after which it runs.
    pub after: Vec<&'static str>,
    /// The range, base (good) to head (bad), as the report names them.
    pub base: String,
    pub head: String,
    /// Commits in base..head along the first-parent line, counted in
    /// `--tree`; unknown without one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub commits: Option<usize>,
    /// The most steps a bisection without skipped commits takes:
    /// ⌈log2 commits⌉ (none for one commit: the head is named).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub steps: Option<usize>,
    /// Pairs of kernels booted: the steps and the first bad commit
    /// measured again against its parent (reproduce's base and head
    /// rounds are the ends, not booted again).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pairs: Option<usize>,
    /// The fewest and the most rounds a pair takes (`--max-rounds`).
    pub rounds: [usize; 2],
    /// Seconds the pairs' runs take at the fewest and at the most rounds:
    /// pairs × 2 kernels × rounds × the plan's seconds a kernel and
    /// round; builds and boots come on top.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub run_s: Option<[f64; 2]>,
}

/// The bisection of `base..head` holding `commits` (when counted), at
/// `run_s` a kernel and round and at most `max_rounds` rounds a pair.
pub fn plan(
    (base, head): (&Commit, &Commit),
    commits: Option<usize>,
    run_s: f64,
    max_rounds: usize,
) -> Bisection {
    let steps = commits.map(|c| most_steps(c + 1));
    let pairs = commits.map(|c| if c <= 1 { 0 } else { most_steps(c + 1) + 1 });
    let rounds = [MIN_ROUNDS, max_rounds.max(MIN_ROUNDS)];
    Bisection {
        after: Verdict::SEEN.iter().map(|v| v.as_str()).collect(),
        base: base.id.clone(),
        head: head.id.clone(),
        commits,
        steps,
        pairs,
        rounds,
        run_s: pairs.map(|p| rounds.map(|r| (p * 2 * r) as f64 * run_s)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn commit(id: &str) -> Commit {
        Commit {
            id: id.into(),
            subject: None,
        }
    }

    fn of(commits: Option<usize>) -> Bisection {
        plan((&commit("a"), &commit("b")), commits, 8.0, 6)
    }

    #[test]
    fn steps_are_the_ceiling_of_log2_of_the_commits() {
        // 4 commits: 2 halvings; 5 to 8: 3; 9: 4.
        for (commits, steps) in [(2, 1), (3, 2), (4, 2), (5, 3), (8, 3), (9, 4), (1000, 10)] {
            let b = of(Some(commits));
            assert_eq!(b.steps, Some(steps), "{commits} commits");
            assert_eq!(b.pairs, Some(steps + 1), "{commits} commits");
        }
    }

    #[test]
    fn the_time_is_the_pairs_boots_at_the_plans_estimate() {
        // 4 commits: 2 steps and the confirmation, 2 kernels a round,
        // 3 to 6 rounds of 8 s.
        let b = of(Some(4));
        assert_eq!(b.rounds, [3, 6]);
        assert_eq!(
            b.run_s,
            Some([3.0 * 2.0 * 3.0 * 8.0, 3.0 * 2.0 * 6.0 * 8.0])
        );
    }

    #[test]
    fn one_commit_boots_nothing_more_and_an_uncounted_range_has_no_time() {
        let one = of(Some(1));
        assert_eq!(
            (one.steps, one.pairs, one.run_s),
            (Some(0), Some(0), Some([0.0; 2]))
        );
        let unknown = of(None);
        assert_eq!((unknown.steps, unknown.run_s), (None, None));
        assert_eq!(unknown.after, ["reproduced", "smaller", "larger"]);
    }
}
