//! The robot-shaped table: per measured row the robot's base, head and
//! %change, then this machine's base, head, %change and its interval, in
//! the robot's column order and 80 columns (the row's name on its own line
//! when it does not fit beside the numbers). `--json` serialises the same
//! [`Line`]s. Pure: the figures come in, text comes out.

use serde::Serialize;

use super::report::{Delta, Row};
use crate::units::signed;

/// This machine's side of a row: base and head (geometric means over the
/// rounds) and the paired interval of head / base − 1.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Here {
    pub base: f64,
    pub head: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ci: Option<(f64, f64)>,
}

/// One row of the table.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Line {
    pub name: String,
    pub robot_base: f64,
    pub robot_head: f64,
    pub robot_change: Option<Delta>,
    pub here: Here,
}

impl Line {
    pub fn of(row: &Row, here: Here) -> Line {
        Line {
            name: row.name.clone(),
            robot_base: row.base,
            robot_head: row.head,
            robot_change: row.change,
            here,
        }
    }
}

/// The table as text, each line at most 80 columns.
pub fn render(lines: &[Line]) -> String {
    let mut o = format!(
        "{:>10} {:>10} {:>8}  {:>10} {:>10} {:>8} {:>16}\n",
        "robot base", "head", "%change", "here base", "head", "%change", "interval"
    );
    for l in lines {
        let here_change = if l.here.base != 0.0 {
            format!("{}%", signed((l.here.head / l.here.base - 1.0) * 100.0))
        } else {
            "-".into()
        };
        let ci = l.here.ci.map_or("-".into(), |(lo, hi)| {
            format!("{}..{}%", signed(lo * 100.0), signed(hi * 100.0))
        });
        let numbers = format!(
            "{:>10} {:>10} {:>8}  {:>10} {:>10} {:>8} {:>16}",
            num(l.robot_base),
            num(l.robot_head),
            delta(l.robot_change),
            num(l.here.base),
            num(l.here.head),
            here_change,
            ci
        );
        o.push_str(&format!("  {}\n", crate::text::clip(&l.name, 78)));
        o.push_str(&crate::text::clip(&numbers, 80));
        o.push('\n');
    }
    o
}

/// A figure in at most 10 columns, as the robot prints its (4 significant
/// digits, an exponent past 10^9).
fn num(v: f64) -> String {
    if v.abs() >= 1e9 {
        format!("{v:.3e}")
    } else if v.abs() >= 1000.0 || v == v.trunc() {
        format!("{v:.0}")
    } else {
        format!("{v:.2}")
    }
}

fn delta(d: Option<Delta>) -> String {
    match d {
        Some(Delta::Percent(p)) => format!("{p:+.1}%"),
        Some(Delta::Absolute(v)) => format!("{v:+.1}"),
        None => "?".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(name: &str, base: f64, head: f64, change: Delta) -> Row {
        Row {
            name: name.into(),
            base,
            base_stddev: None,
            change: Some(change),
            head,
            head_stddev: None,
        }
    }

    #[test]
    fn each_row_shows_both_sides_in_80_columns() {
        let lines = [
            Line::of(
                &row(
                    "vm-scalability.throughput",
                    71022154.0,
                    55823414.0,
                    Delta::Percent(-21.4),
                ),
                Here {
                    base: 1.5e6,
                    head: 0.9e6,
                    ci: Some((-0.45, -0.35)),
                },
            ),
            Line::of(
                &row(
                    "proc-vmstat.pgalloc_normal.with.a.name.longer.than.the.line.itself.is.wide.x",
                    2.382e9,
                    1.931e9,
                    Delta::Percent(-18.9),
                ),
                Here {
                    base: 4.0e9,
                    head: 3.0e9,
                    ci: None,
                },
            ),
        ];
        let t = render(&lines);
        assert!(t.lines().all(|l| l.chars().count() <= 80), "{t}");
        let first: Vec<&str> = t.lines().nth(2).unwrap().split_whitespace().collect();
        assert_eq!(
            first,
            [
                "71022154",
                "55823414",
                "-21.4%",
                "1500000",
                "900000",
                "-40.0%",
                "-45.0..-35.0%"
            ]
        );
        assert!(t.contains("2.382e9"), "{t}");
        assert_eq!(t.lines().count(), 1 + 2 * lines.len());
        let json = serde_json::to_value(&lines).unwrap();
        assert_eq!(json[0]["robot_change"]["percent"], -21.4);
        assert_eq!(json[0]["here"]["ci"][1], -0.35);
    }
}
