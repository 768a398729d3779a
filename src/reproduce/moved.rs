//! When the change is seen, the rows that moved most on either side,
//! shown together so the user sees whether the same counters moved: the
//! robot's rows with the largest %change beside this machine's change of
//! the same row where it is measured, and this machine's vmstat counters
//! that moved most beside the robot's change of the same counter where
//! its report has one. Pure: the figures come in, rows come out.

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;

use super::report::{Delta, Row};
use super::table::Line;
use crate::model::Run;
use crate::stats::summary::median;
use crate::units::signed;

/// Rows listed on each side.
pub const TOP: usize = 5;

/// A counter whose median is below this many events a sample on both
/// sides is left out: a few events move by large shares by chance.
pub const MIN_EVENTS: f64 = 100.0;

/// One row that moved: its change on each side, percent.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Moved {
    pub name: String,
    pub robot: Option<f64>,
    pub here: Option<f64>,
}

/// Both lists.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MovedMost {
    /// The robot's rows with the largest %change.
    pub robot: Vec<Moved>,
    /// This machine's vmstat counters with the largest change.
    pub here: Vec<Moved>,
}

/// The robot's `rows` by the size of their %change, each with this
/// machine's change where a measured line (`lines`) has the row; and the
/// vmstat counters that moved most between the medians `base` and
/// `head` (counter -> events a sample), each with the robot's change of
/// `proc-vmstat.COUNTER`.
pub fn moved_most(
    rows: &[Row],
    lines: &[Line],
    (base, head): (&BTreeMap<String, f64>, &BTreeMap<String, f64>),
) -> MovedMost {
    let robot_pct = |name: &str| {
        rows.iter()
            .find(|r| r.name == name)
            .and_then(|r| match r.change {
                Some(Delta::Percent(p)) => Some(p),
                _ => None,
            })
    };
    let here_pct = |name: &str| {
        lines
            .iter()
            .find(|l| l.name == name && l.here.base != 0.0)
            .map(|l| (l.here.head / l.here.base - 1.0) * 100.0)
    };
    let mut robot: Vec<Moved> = rows
        .iter()
        .filter_map(|r| match r.change {
            Some(Delta::Percent(p)) if p.is_finite() => Some(Moved {
                name: r.name.clone(),
                robot: Some(p),
                here: here_pct(&r.name),
            }),
            _ => None,
        })
        .collect();
    robot.sort_by(|a, b| size(b.robot).total_cmp(&size(a.robot)));
    robot.truncate(TOP);

    let names: BTreeSet<&String> = base.keys().chain(head.keys()).collect();
    let mut here: Vec<(f64, Moved)> = names
        .into_iter()
        .filter_map(|c| {
            let (b, h) = (*base.get(c)?, *head.get(c)?);
            if b < 1.0 || h < 1.0 || b.max(h) < MIN_EVENTS {
                return None;
            }
            let name = format!("proc-vmstat.{c}");
            Some((
                (h / b).ln().abs(),
                Moved {
                    robot: robot_pct(&name),
                    here: Some((h / b - 1.0) * 100.0),
                    name,
                },
            ))
        })
        .collect();
    here.sort_by(|a, b| b.0.total_cmp(&a.0));
    let here = here.into_iter().take(TOP).map(|(_, m)| m).collect();
    MovedMost { robot, here }
}

fn size(p: Option<f64>) -> f64 {
    p.map_or(0.0, f64::abs)
}

/// Each vmstat counter's median over `run`'s measured samples (a sample
/// without the counter counts 0), events a sample.
pub fn vmstat_medians(run: &Run) -> BTreeMap<String, f64> {
    let samples: Vec<_> = run.cases.iter().flat_map(|c| c.measured()).collect();
    let names: BTreeSet<&String> = samples.iter().flat_map(|s| s.vmstat.keys()).collect();
    names
        .into_iter()
        .map(|c| {
            let v: Vec<f64> = samples
                .iter()
                .map(|s| s.vmstat.get(c).copied().unwrap_or(0) as f64)
                .collect();
            (c.clone(), median(&v))
        })
        .collect()
}

/// Both lists as text, 80 columns.
pub fn render(m: &MovedMost) -> String {
    let pct = |p: Option<f64>| p.map_or("-".to_string(), |p| format!("{}%", signed(p)));
    let mut o = format!("\nMoved most{:>59}{:>11}\n", "robot", "here");
    for (title, rows) in [
        ("the robot's rows", &m.robot),
        ("this machine's vmstat counters", &m.here),
    ] {
        if rows.is_empty() {
            continue;
        }
        o.push_str(&format!("  {title}\n"));
        for r in rows {
            o.push_str(&format!(
                "    {:<54}{:>10}{:>11}\n",
                crate::text::clip(&r.name, 54),
                pct(r.robot),
                pct(r.here)
            ));
        }
    }
    o
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reproduce::table::Here;

    fn row(name: &str, change: Option<Delta>) -> Row {
        Row {
            name: name.into(),
            base: 100.0,
            base_stddev: None,
            change,
            head: 60.0,
            head_stddev: None,
        }
    }

    fn map(pairs: &[(&str, f64)]) -> BTreeMap<String, f64> {
        pairs.iter().map(|(k, v)| (k.to_string(), *v)).collect()
    }

    #[test]
    fn each_side_lists_its_largest_changes_with_the_others_beside_them() {
        let rows = vec![
            row("will-it-scale.per_process_ops", Some(Delta::Percent(-40.0))),
            row("proc-vmstat.pgfault", Some(Delta::Percent(-39.0))),
            row("perf-stat.i.ipc", Some(Delta::Absolute(-0.5))),
            row("meminfo.Shmem", Some(Delta::Percent(2.0))),
            row("proc-vmstat.numa_hit", Some(Delta::Percent(55.0))),
            row("turbostat.Busy%", None),
        ];
        let lines = vec![Line::of(
            &rows[0],
            Here {
                base: 1000.0,
                head: 500.0,
                ci: None,
            },
        )];
        let base = map(&[
            ("pgfault", 10_000.0),
            ("pgfree", 5_000.0),
            ("oom_kill", 2.0),
        ]);
        let head = map(&[("pgfault", 4_000.0), ("pgfree", 5_100.0), ("oom_kill", 9.0)]);
        let m = moved_most(&rows, &lines, (&base, &head));
        let names: Vec<&str> = m.robot.iter().map(|r| r.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "proc-vmstat.numa_hit",
                "will-it-scale.per_process_ops",
                "proc-vmstat.pgfault",
                "meminfo.Shmem"
            ]
        );
        assert_eq!(m.robot[1].here, Some(-50.0));
        assert_eq!(m.robot[0].here, None);
        // Few events are left out; the largest move first, with the
        // robot's change of the same counter.
        let names: Vec<&str> = m.here.iter().map(|r| r.name.as_str()).collect();
        assert_eq!(names, ["proc-vmstat.pgfault", "proc-vmstat.pgfree"]);
        assert_eq!(m.here[0].robot, Some(-39.0));
        assert_eq!(m.here[0].here, Some(-60.0));
        assert_eq!(m.here[1].robot, None);
        let text = render(&m);
        assert!(text.lines().all(|l| l.chars().count() <= 80), "{text}");
        assert!(text.contains("-39.0%") && text.contains("-60.0%"), "{text}");
    }

    #[test]
    fn a_side_with_nothing_to_list_is_left_out() {
        let m = moved_most(&[], &[], (&map(&[]), &map(&[])));
        assert!(m.robot.is_empty() && m.here.is_empty());
        assert!(!render(&m).contains("the robot's rows"));
    }
}
