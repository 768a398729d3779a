//! The lines under every run's table that carry its statistics: the
//! headline figure's robust centre per case (median with its order-
//! statistic 95 % interval, the mean beside it), and the cases whose
//! samples fall into two groups, with what else differed between them.

use super::export::{Align, Block, Layout, Table};
use crate::model::{CaseSamples, Run};
use crate::stats::case_groups::{self, CaseMixture};
use crate::stats::levels::{self, Levels};
use crate::stats::robust::median_ci;
use crate::stats::stopping::sig4;
use crate::stats::summary::summarise;
use crate::text::clip;

/// The first declared figure `case`'s measured samples report.
fn headline<'a>(run: &'a Run, case: &CaseSamples) -> Option<&'a crate::model::Figure> {
    run.meta.figures.iter().find(|f| {
        case.measured()
            .any(|s| s.data.figures.get(&f.name).is_some_and(|v| v.is_finite()))
    })
}

/// A table number in at most 10 characters: four significant digits, an
/// exponent for very large or small magnitudes.
fn short(v: f64) -> String {
    let a = v.abs();
    if a != 0.0 && v.is_finite() && !(1e-4..1e9).contains(&a) {
        format!("{v:.3e}")
    } else {
        sig4(v)
    }
}

/// A relative half-width in at most 7 characters.
fn pct(rel: f64) -> String {
    if rel < 10.0 {
        format!("{:.2}%", rel * 100.0)
    } else {
        ">999%".into()
    }
}

fn values(case: &CaseSamples, figure: &str) -> Vec<f64> {
    case.values(figure).filter(|v| v.is_finite()).collect()
}

/// "08:40:26" from an RFC 3339 time.
fn clock(t: &str) -> &str {
    t.get(11..19).unwrap_or(t)
}

/// The figure's values per invocation, when the samples carry more than one.
fn by_invocation(case: &CaseSamples, figure: &str) -> Vec<Vec<f64>> {
    let mut groups: Vec<(i64, Vec<f64>)> = Vec::new();
    for s in case.measured() {
        let (Some(inv), Some(v)) = (
            s.noise.get(levels::INVOCATION),
            s.data.figures.get(figure).filter(|v| v.is_finite()),
        ) else {
            continue;
        };
        let inv = *inv as i64;
        match groups.iter_mut().find(|(i, _)| *i == inv) {
            Some((_, g)) => g.push(*v),
            None => groups.push((inv, vec![*v])),
        }
    }
    groups.into_iter().map(|(_, g)| g).collect()
}

/// Samples of a `vmscale guest` run pooled over rounds: each round was
/// one boot, taken as the run's invocation.
fn booted_in_rounds(run: &Run) -> bool {
    run.cases.iter().any(|c| {
        c.samples
            .iter()
            .any(|s| s.noise.contains_key(crate::model::GUEST_ROUND))
    })
}

/// One row of the invocation table and the plan for 1 %.
fn levels_row(key: &str, l: &Levels) -> Vec<String> {
    let (k, r) = l.plan(0.01, 1.0);
    vec![
        clip(key, 16),
        l.invocations.to_string(),
        l.per_invocation.to_string(),
        pct(l.within),
        pct(l.between),
        short(l.centre),
        pct(l.relative_half_width()),
        if k >= 1000 {
            "out of reach".to_string()
        } else {
            format!("{k} x {r}")
        },
    ]
}

/// The mixture's lines, indented under a title naming the case.
pub fn mixture_lines(what: &str, m: &CaseMixture) -> String {
    // A long name (a file's path) keeps its end, where it differs.
    let chars: Vec<char> = what.chars().collect();
    let what: String = if chars.len() > 78 {
        format!(
            "...{}",
            chars[chars.len() - 75..].iter().collect::<String>()
        )
    } else {
        what.to_string()
    };
    let mut out = format!(
        "{what}:\n  {}\n",
        clip(
            &format!("{} in two groups (a mean averages them):", m.figure),
            78
        )
    );
    for g in &m.groups {
        let when = if g.first_taken.is_empty() {
            String::new()
        } else {
            format!(
                ", taken {}..{}",
                clock(&g.first_taken),
                clock(&g.last_taken)
            )
        };
        out.push_str(&format!(
            "    {}\n      {}\n",
            clip(
                &format!(
                    "{} near {} ({}..{}){when}",
                    g.n,
                    sig4(g.median),
                    sig4(g.min),
                    sig4(g.max),
                ),
                76
            ),
            clip(&format!("samples {}", case_groups::ranges(&g.seqs)), 74)
        ));
    }
    if !m.differed.is_empty() {
        out.push_str("  also differed (lower vs upper group, medians):\n");
        for d in &m.differed {
            out.push_str(&format!(
                "      {}\n",
                clip(
                    &format!("{} {} vs {}", d.name, sig4(d.low), sig4(d.high)),
                    74
                )
            ));
        }
    }
    out
}

/// A pooled guest run's centre and between-boot tables under a line naming
/// its kernel (`vmscale guest --rounds`: samples carry their round as their
/// invocation); empty when it has none.
pub fn between_boots(run: &Run) -> crate::error::Result<String> {
    let blocks = blocks(run);
    if blocks.is_empty() {
        return Ok(String::new());
    }
    let mut text = format!(
        "\n{} (run {}, {}):",
        run.meta.machine["kernel_release"].as_str().unwrap_or("?"),
        run.meta.id,
        run.meta.label.as_deref().unwrap_or("")
    );
    let report = super::export::Report {
        text: None,
        blocks,
        records: Default::default(),
        data: serde_json::Value::Null,
    };
    text.push_str(&super::export::exporter(super::export::Format::Text).export(&report)?);
    Ok(text)
}

/// The section printed under a run's table: the centre table, the
/// invocation table and the mixtures; nothing for a run without measured
/// samples.
pub fn blocks(run: &Run) -> Vec<Block> {
    let mut rows = Vec::new();
    let mut mixtures = String::new();
    let mut invocations = Vec::new();
    let mut widened = false;
    let mut grouped = false;
    let mut names: Vec<&str> = Vec::new();
    for c in &run.cases {
        let Some(f) = headline(run, c) else {
            continue;
        };
        if !names.contains(&f.name.as_str()) {
            names.push(&f.name);
        }
        let v = values(c, &f.name);
        let Some(s) = summarise(&v, f.rate) else {
            continue;
        };
        let lv = levels::analyse(&by_invocation(c, &f.name));
        if let Some(l) = &lv {
            invocations.push(levels_row(&c.case.key(), l));
        }
        let (ci, pm) = match (median_ci(&v), &lv) {
            // The invocation level dominates: its interval is the honest one.
            (_, Some(l)) if l.between_dominates => {
                widened = true;
                (
                    format!("[{}, {}]", short(l.ci95.0), short(l.ci95.1)),
                    format!("{}*", pct(l.relative_half_width())),
                )
            }
            (Some(ci), _) => (
                format!("[{}, {}]", short(ci.lo), short(ci.hi)),
                pct(ci.relative_half_width()),
            ),
            (None, _) => ("n<5".to_string(), "-".to_string()),
        };
        let mixture = case_groups::find(c, &f.name, 4);
        // Beside the interval: the samples form groups (g), clustered in
        // time (t), so the interval spans a change of the machine.
        let mark = match &mixture {
            Some(m) if case_groups::clustered_in_time(m) => " gt",
            Some(_) => " g",
            None => "",
        };
        grouped |= mixture.is_some();
        rows.push(vec![
            clip(&c.case.key(), 16),
            s.n.to_string(),
            short(s.median),
            ci,
            format!("{pm}{mark}"),
            short(s.mean),
            if s.harmonic { "H" } else { "A" }.to_string(),
        ]);
        if let Some(m) = mixture {
            mixtures.push_str(&mixture_lines(&format!("mixture, {}", c.case.key()), &m));
        }
    }
    if rows.is_empty() {
        return Vec::new();
    }
    let right = |n| Align::runs(&[(Align::Left, 1), (Align::Right, n), (Align::Left, 1)]);
    let mut out = vec![
        Block::Blank,
        Block::Table(Table {
            title: format!(
                "Centre of {} per case: median, 95% CI by order statistics:",
                names.join(", ")
            ),
            header: vec![super::cells::names(&[
                "case", "n", "median", "95% CI", "±", "mean",
            ])],
            align: right(5),
            rows,
            layout: Some(Layout::spaced(&[16, 4, 10, 23, 10, 10, 0])),
        }),
    ];
    if widened {
        out.push(Block::Paragraph(
            "  * varies more between invocations than within: the interval is the\n    \
             invocations' (geometric mean of their means, t on invocations - 1 df)\n"
                .into(),
        ));
    }
    if grouped {
        out.push(Block::Paragraph(
            "  g: the samples fall into two groups (below); t: the groups are clustered\n    \
             in time, a stretch of the machine rather than the case\n"
                .into(),
        ));
    }
    if !invocations.is_empty() {
        out.push(Block::Blank);
        out.push(Block::Table(Table {
            title: if booted_in_rounds(run) {
                "Between boots (guest rounds; relative sd; interval from the boot means):".into()
            } else {
                "Between invocations (relative sd; interval from the invocation means):".into()
            },
            header: vec![super::cells::names(&[
                "case",
                "inv",
                "n/inv",
                "within",
                "between",
                "centre",
                "±",
                "±1%: k x n",
            ])],
            align: right(6),
            rows: invocations,
            layout: Some(Layout::spaced(&[16, 3, 5, 8, 8, 10, 8, 0]).sep(7, "  ")),
        }));
    }
    if !mixtures.is_empty() {
        out.push(Block::Paragraph(mixtures));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Better;
    use crate::model::build::{case, run, sample};
    use crate::report::export::text;

    /// Samples 10-20 of 31 slow: a stretch of the machine, marked `gt`
    /// beside the interval, with the legend, in 80 columns.
    #[test]
    fn groups_clustered_in_time_are_marked_beside_the_interval() {
        let r = run("pft")
            .figure("fault/wsec", "faults/s", Better::Higher, true)
            .case(case(1, "fault").samples(31, |i| {
                let slow = (10..=20).contains(&i);
                let wobble = 1.0 + (i % 5) as f64 * 0.002;
                sample()
                    .seq(i as i64)
                    .figure("fault/wsec", if slow { 3e5 } else { 6e5 } * wobble)
            }))
            .build();
        let out = text::blocks(&blocks(&r));
        let row = out.lines().find(|l| l.starts_with("fault/1")).unwrap();
        assert!(row.contains("% gt "), "{out}");
        assert!(out.contains("t: the groups are clustered"), "{out}");
        assert!(out.lines().all(|l| l.chars().count() <= 80), "{out}");
    }
}
