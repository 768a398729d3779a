//! The verdict: the paired rounds' interval of head / base (the statistic
//! `guest --rounds auto` decides by, `stats::decide`) against the robot's
//! headline change. Both are changes of the same metric, so "the same
//! direction" is the same sign of head / base − 1, whether the metric is
//! better higher (throughput, ops) or lower (time). Pure.

use serde::Serialize;

use super::report::{Change, Kind};
use crate::stats::decide::{Decision, MIN_ROUNDS, Verdict as Rule};

/// What this machine says of the robot's change.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// Same direction, the interval excludes no change and holds the
    /// robot's.
    Reproduced,
    /// Same direction, the interval lies wholly nearer no change than
    /// the robot's figure and not wholly inside the deciding band.
    Smaller,
    /// Same direction, the interval lies wholly beyond the robot's figure.
    Larger,
    /// The interval excludes the robot's change and shows no change of
    /// the size the rounds ask about: it holds no change, lies wholly
    /// inside the deciding band (the rule's "same": two builds of one
    /// source have read a few percent apart either way here), or lies on
    /// the other side but not wholly beyond the band.
    NotReproduced,
    /// The interval lies on the other side, wholly beyond the deciding
    /// band (the rule's "different").
    Opposite,
    /// The interval holds both no change and the robot's.
    Undecided,
}

impl Verdict {
    /// The verdicts that see the robot's change, in its direction (any
    /// size): only after one of them is there a first bad commit to look
    /// for, or rows that moved with it to show.
    pub const SEEN: [Verdict; 3] = [Verdict::Reproduced, Verdict::Smaller, Verdict::Larger];

    /// Whether this verdict is one of [`Verdict::SEEN`].
    pub fn sees_the_change(self) -> bool {
        Self::SEEN.contains(&self)
    }

    /// Every verdict, in the order of docs/reproduce.md's table.
    pub const ALL: [Verdict; 6] = [
        Verdict::Reproduced,
        Verdict::Smaller,
        Verdict::Larger,
        Verdict::NotReproduced,
        Verdict::Opposite,
        Verdict::Undecided,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Reproduced => "reproduced",
            Verdict::Smaller => "smaller",
            Verdict::Larger => "larger",
            Verdict::NotReproduced => "not reproduced",
            Verdict::Opposite => "opposite",
            Verdict::Undecided => "undecided",
        }
    }

    /// `vmscale reproduce`'s exit code (1 and 2 are a failed run and bad
    /// input): 0 reproduced, 3 smaller, 4 larger, 5 not reproduced, 6
    /// opposite, 7 undecided.
    pub fn exit_code(self) -> i32 {
        match self {
            Verdict::Reproduced => 0,
            Verdict::Smaller => 3,
            Verdict::Larger => 4,
            Verdict::NotReproduced => 5,
            Verdict::Opposite => 6,
            Verdict::Undecided => 7,
        }
    }
}

/// The verdict with what it was made of.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Judged {
    pub verdict: Verdict,
    /// The robot's change, head / base − 1.
    pub robot: f64,
    /// This machine's change and its interval, head / base − 1.
    pub change: f64,
    pub ci: (f64, f64),
    /// The interval's confidence level.
    pub level: f64,
    pub rounds: usize,
    /// For `Undecided`: about how many rounds would separate no change
    /// from the robot's figure at this spread.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rounds_needed: Option<usize>,
}

/// The robot's change of its headline metric as a fraction, signed by what
/// a regression means for it: a regression lowers a metric that is better
/// higher and raises one that is better lower. `higher_is_better` unknown:
/// the sign the report printed.
pub fn robot_change(c: &Change, higher_is_better: Option<bool>) -> f64 {
    let size = c.percent.abs() / 100.0;
    match (higher_is_better, c.kind) {
        (Some(true), Kind::Regression) | (Some(false), Kind::Improvement) => -size,
        (Some(true), Kind::Improvement) | (Some(false), Kind::Regression) => size,
        (None, _) => c.percent / 100.0,
    }
}

/// Judges the paired interval `d` of head / base against the robot's
/// change `robot` (a fraction, head / base − 1); `d.verdict` is the
/// deciding rule's reading of the interval against its band.
pub fn judge(d: &Decision, robot: f64) -> Judged {
    let (lo, hi) = (d.ci.0 - 1.0, d.ci.1 - 1.0);
    let holds = |x: f64| lo <= x && x <= hi;
    let verdict = if d.rounds < MIN_ROUNDS || !(lo.is_finite() && hi.is_finite()) {
        Verdict::Undecided
    } else if holds(0.0) {
        if holds(robot) || robot == 0.0 {
            Verdict::Undecided
        } else {
            Verdict::NotReproduced
        }
    } else if holds(robot) {
        Verdict::Reproduced
    } else if d.verdict == Rule::Same {
        // Wholly inside the band: no change of the size asked about.
        Verdict::NotReproduced
    } else if (lo > 0.0) != (robot > 0.0) {
        match d.verdict {
            Rule::Different => Verdict::Opposite,
            _ => Verdict::NotReproduced,
        }
    } else if hi.abs().max(lo.abs()) < robot.abs() {
        Verdict::Smaller
    } else {
        Verdict::Larger
    };
    let rounds_needed = (verdict == Verdict::Undecided).then(|| needed(d, robot));
    Judged {
        verdict,
        robot,
        change: d.ratio - 1.0,
        ci: (lo, hi),
        level: d.level,
        rounds: d.rounds,
        rounds_needed,
    }
}

/// Whether `d` is enough for a verdict against the robot's change
/// `robot`: reproduce's rounds end there (or where the rule's band
/// decides first).
pub fn settles(d: &Decision, robot: f64) -> bool {
    judge(d, robot).verdict != Verdict::Undecided
}

/// Rounds at which the interval's half-width (in logs, shrinking as one
/// over the root of the rounds) is half the distance from no change to
/// the robot's figure, so that it cannot hold both.
fn needed(d: &Decision, robot: f64) -> usize {
    let h = (d.ci.1.ln() - d.ci.0.ln()) / 2.0;
    let target = (1.0 + robot).max(f64::MIN_POSITIVE).ln().abs() / 2.0;
    let n = d.rounds.max(2) as f64;
    if !(h.is_finite() && target > 0.0) {
        return MIN_ROUNDS.max(d.rounds + 1);
    }
    let want = (n * (h / target).powi(2)).ceil();
    (want.min(1e6) as usize).max(MIN_ROUNDS).max(d.rounds + 1)
}

#[cfg(test)]
mod tests;
