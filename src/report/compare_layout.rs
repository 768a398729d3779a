//! The comparison as a document: mmtests-style blocks (seed 001) with
//! signed % changes, p-values and ratio intervals, the ratio table of seed
//! 003, vmstat spread and the metadata differences; plus flat records for
//! CSV and the data for JSON.

use super::export::{Align, Block, Records, Report, Table};
use crate::model::Better;
use crate::stats::comparison::{Cell, Comparison, Group, RatioOf, VmstatCase};
use crate::text::clip;

/// Two decimals as mmtests prints, more for small magnitudes so that
/// about four significant digits survive (0.01740, 0.001193), none from a
/// million on (seven digits are plenty, and two runs still fit 80 columns).
fn num(v: f64) -> String {
    if !v.is_finite() {
        return "-".into();
    }
    let a = v.abs();
    let decimals = if a >= 1e6 {
        0
    } else if a == 0.0 || a >= 10.0 {
        2
    } else {
        (3 - (a * (1.0 + 1e-9)).log10().floor() as i32).clamp(2, 9) as usize
    };
    format!("{v:.decimals$}")
}

/// A change in at most 10 characters: two decimals below ±1000 %, none
/// below ±10^6 %, an exponent beyond (a spread that grew 40-fold).
fn pct(v: f64) -> String {
    if v == 0.0 {
        "(  0.00%)".into()
    } else if v.abs() < 999.995 {
        format!("({v:>+7.2}%)")
    } else if v.abs() < 999_999.5 {
        format!("({v:>+7.0}%)")
    } else if v.is_finite() {
        format!("({v:>+7.0e}%)")
    } else {
        "(      -%)".into()
    }
}

/// An interval's end in at most 7 characters: three decimals near 1, fewer
/// digits for wide intervals of small samples (0.007 .. 224), an exponent
/// beyond.
fn ci_num(v: f64) -> String {
    let a = v.abs();
    if !v.is_finite() {
        "-".into()
    } else if a == 0.0 {
        "0".into()
    } else if !(1e-3..1e5).contains(&a) {
        format!("{v:.1e}")
    } else if a >= 100.0 {
        format!("{v:.0}")
    } else if a >= 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.3}")
    }
}

fn pval(p: f64) -> String {
    if p < 1e-4 {
        format!("{p:.1e}")
    } else {
        format!("{p:.4}")
    }
}

/// The widest run label a column header shows.
const LABEL_WIDTH: usize = 24;

fn header(c: &Comparison) -> Vec<Vec<String>> {
    let mut h1 = vec![String::new(), String::new()];
    let mut h2 = vec![String::new(), String::new()];
    for s in &c.sides {
        h1.push(s.name.clone());
        // Clipped so that two runs fit 80 columns; CSV and JSON keep it whole.
        h2.push(clip(&s.label, LABEL_WIDTH));
    }
    if h2.iter().all(|x| x.is_empty()) {
        vec![h1]
    } else {
        vec![h1, h2]
    }
}

fn row_label(g: &Group, tasks: usize) -> String {
    if g.rows.len() == 1 {
        g.figure.name.clone()
    } else {
        format!("{}-{}", g.figure.name, tasks)
    }
}

type StatFn = fn(&crate::stats::summary::Summary) -> f64;

/// Rows Min, Median (the headline's centre), Amean/Hmean, Stddev,
/// CoeffVar, Max per task count, then the p-value and ratio rows.
fn group_table(c: &Comparison, g: &Group) -> Table {
    let mean_name = if g.figure.rate { "Hmean" } else { "Amean" };
    let stats: [(&str, StatFn); 6] = [
        ("Min", |s| s.min),
        ("Median", |s| s.median),
        ("", |s| s.mean),
        ("Stddev", |s| s.stddev),
        ("CoeffVar", |s| s.coeff_var),
        ("Max", |s| s.max),
    ];
    let mut rows = Vec::new();
    for (si, (name, get)) in stats.iter().enumerate() {
        let name = if si == 2 { mean_name } else { name };
        for r in &g.rows {
            let mut row = vec![name.to_string(), row_label(g, r.tasks)];
            for cell in &r.cells {
                row.push(match (&cell.summary, &cell.pct) {
                    (Some(s), Some(p)) => {
                        let mark = if si == 2 && cell.significant {
                            " *"
                        } else {
                            "  "
                        };
                        format!("{} {}{mark}", num(get(s)), pct(p[si]))
                    }
                    (Some(s), None) => format!("{}  {:>10}  ", num(get(s)), ""),
                    _ => "-  ".into(),
                });
            }
            rows.push(row);
        }
    }
    for r in &g.rows {
        let mut row = vec!["p-value".to_string(), row_label(g, r.tasks)];
        for (i, cell) in r.cells.iter().enumerate() {
            row.push(p_cell(i, cell));
        }
        rows.push(row);
    }
    for r in &g.rows {
        let mut row = vec!["Ratio".to_string(), row_label(g, r.tasks)];
        for (i, cell) in r.cells.iter().enumerate() {
            row.push(match (i, cell.ratio, cell.ratio_ci) {
                (0, _, _) => "1.000  ".into(),
                (_, Some(x), Some((lo, hi))) => format!(
                    "{x:.3} [{},{}]{}",
                    ci_num(lo),
                    ci_num(hi),
                    match cell.ratio_ci_method.as_str() {
                        "normal" => "n ",
                        "bootstrap" => "b ",
                        "paired" => "p ",
                        _ => "  ",
                    }
                ),
                (_, Some(x), None) => format!("{x:.3}  "),
                _ => "-  ".into(),
            });
        }
        rows.push(row);
    }
    let mut align = vec![Align::Left, Align::Left];
    align.extend(std::iter::repeat_n(Align::Right, g.rows[0].cells.len()));
    Table {
        title: String::new(),
        layout: None,
        header: header(c),
        align,
        rows,
    }
}

fn p_cell(i: usize, cell: &Cell) -> String {
    if i == 0 {
        return "-  ".into();
    }
    match (cell.p, cell.p_adjusted) {
        (Some(p), Some(q)) => format!(
            "{} adj {}{}",
            pval(p),
            pval(q),
            if cell.significant { " *" } else { "  " }
        ),
        _ => "n<2  ".into(),
    }
}

fn better_word(b: Better) -> &'static str {
    match b {
        Better::Higher => "higher is better",
        Better::Lower => "lower is better",
    }
}

fn legend(c: &Comparison) -> String {
    let base = &c.sides[0];
    let tested = || {
        c.groups
            .iter()
            .flat_map(|g| &g.rows)
            .flat_map(|r| r.cells.iter().skip(1))
            .filter(|cell| cell.p.is_some())
    };
    let paired = tested().filter(|c| c.ratio_ci_method == "paired").count();
    let tests_line = format!(
        "adj = Benjamini-Hochberg over all {} tests; * = adj < {}.\n",
        c.tests, c.alpha
    );
    let methods = if paired > 0 && paired == tested().count() {
        format!(
            "p-value: paired t-test against the baseline on the logs of the ratios of\n\
             samples taken in the same round (knob variants, kernel rounds),\n{tests_line}\
             Ratio: geometric mean of those ratios, [95% CI] by t on their logs\n\
             (marked p): the PAIRED interval; slow drifts of the host cancel.\n"
        )
    } else {
        format!(
            "p-value: Welch's t-test against the baseline (on logs for rates, Hmean rows),\n\
             {tests_line}Ratio: mean / baseline mean, [95% CI] by Welch's t on logs.\n{}",
            if paired > 0 {
                "[CI]p: samples taken in the same rounds: ratio, CI and p-value paired\n\
                 (geometric mean of the rounds' ratios, t on their logs).\n"
            } else {
                ""
            }
        )
    };
    format!(
        "Baseline: {}{}.\n\
         % change: positive is better, negative is worse (each title says which way\n\
         the figure is better); Stddev, CoeffVar: less is better.\n{methods}{}{}",
        base.name,
        if base.label.is_empty() {
            String::new()
        } else {
            format!(" ({})", base.label)
        },
        if ci_method_used(c, "bootstrap") {
            format!(
                "[CI]b: seeded bootstrap (seed {}, {} rounds), values not all positive.\n",
                c.seed, c.bootstrap_rounds
            )
        } else {
            String::new()
        },
        if ci_method_used(c, "normal") {
            "[CI]n: normal interval (delta method), over 20000 values not all positive.\n"
        } else {
            ""
        },
    )
}

fn ci_method_used(c: &Comparison, method: &str) -> bool {
    c.groups
        .iter()
        .flat_map(|g| &g.rows)
        .flat_map(|r| &r.cells)
        .any(|cell| cell.ratio_ci_method == method)
}

/// Every side's mixtures, as `show` prints them: one block per case and
/// side, for the first figure found in two groups; the other figures of
/// that case and side in two groups are named under it.
fn mixtures(c: &Comparison) -> String {
    // (case key, side) -> (first block, other figures in two groups)
    let mut found: Vec<((String, usize), String, Vec<String>)> = Vec::new();
    for g in &c.groups {
        for r in &g.rows {
            for (i, (side, cell)) in c.sides.iter().zip(&r.cells).enumerate() {
                let Some(m) = &cell.mixture else {
                    continue;
                };
                let at = (r.key.clone(), i);
                match found.iter_mut().find(|(k, _, _)| *k == at) {
                    Some((_, _, others)) => others.push(m.figure.clone()),
                    None => {
                        let what = format!("{}, {}", side.name, r.key);
                        found.push((at, super::centre::mixture_lines(&what, m), Vec::new()));
                    }
                }
            }
        }
    }
    let mut out = String::new();
    for (_, block, others) in found {
        out.push_str(&block);
        if !others.is_empty() {
            out.push_str(&format!(
                "  also in two groups: {}\n",
                clip(&others.join(", "), 58)
            ));
        }
    }
    out
}

fn vmstat_table(c: &Comparison, v: &VmstatCase) -> Table {
    let mut h = header(c);
    for line in &mut h {
        line.remove(1);
    }
    h[0][0] = "vmstat delta/sample".into();
    let mut rows = Vec::new();
    for (name, spreads) in &v.counters {
        let mut row = vec![name.clone()];
        for s in spreads {
            row.push(match s {
                Some(s) if s.mean != 0.0 => {
                    format!("{:.0} ±{:.1}%", s.mean, s.stddev / s.mean.abs() * 100.0)
                }
                Some(s) => format!("{:.0} ±{:.0}", s.mean, s.stddev),
                None => "-".into(),
            });
        }
        rows.push(row);
    }
    let mut align = vec![Align::Left];
    align.extend(std::iter::repeat_n(Align::Right, c.sides.len()));
    Table {
        title: String::new(),
        layout: None,
        header: h,
        align,
        rows,
    }
}

fn ratio_block(c: &Comparison) -> Option<Table> {
    let r = c.ratio.as_ref()?;
    let a = c.sides.first()?;
    let b = c.sides.get(1)?;
    let mut rows = Vec::new();
    let mut last = None;
    for row in &r.rows {
        if last.as_ref() != Some(&row.case) {
            if last.is_some() {
                rows.push(vec![String::new()]);
            }
            rows.push(vec![row.case.to_uppercase()]);
            last = Some(row.case.clone());
        }
        rows.push(vec![
            format!("{:>8}", format!("{}P", row.tasks)),
            num(row.a),
            num(row.b),
            format!("{:.2}", row.ratio),
            row.paired.map_or("-".into(), |p| {
                format!("{:.3} [{:.3},{:.3}]", p.ratio, p.ci95.0, p.ci95.1)
            }),
        ]);
    }
    Some(Table {
        title: String::new(),
        layout: None,
        header: vec![vec![
            "TESTCASE".into(),
            format!("A: {}", a.label),
            format!("B: {}", b.label),
            match r.ratio_of {
                RatioOf::B => "RATIO B/A".into(),
                RatioOf::A => "RATIO A/B".into(),
            },
            "PAIRED [95% CI]".into(),
        ]],
        align: vec![
            Align::Left,
            Align::Right,
            Align::Right,
            Align::Right,
            Align::Right,
        ],
        rows,
    })
}

fn blocks(c: &Comparison) -> Vec<Block> {
    let mut b = Vec::new();
    if let (Some(t), Some(r)) = (ratio_block(c), &c.ratio) {
        b.push(Block::Title(format!(
            "{} ({}, {}), mean by task count",
            r.figure.name,
            r.figure.unit,
            better_word(r.figure.better)
        )));
        b.push(Block::Table(t));
        b.push(Block::Paragraph(format!(
            "PAIRED: geometric mean of the ratios of neighbouring A/B samples (same\n\
             round), t interval on their logs: slow drifts of the host cancel.{}\n",
            if r.ratio_of == RatioOf::B {
                " The\nRatio rows below give the same interval."
            } else {
                ""
            }
        )));
    }
    for g in &c.groups {
        let unit = if g.figure.unit.is_empty() {
            String::new()
        } else {
            format!("{}, ", g.figure.unit)
        };
        b.push(Block::Title(format!(
            "{}: {} ({unit}{})",
            g.case,
            g.figure.name,
            better_word(g.figure.better)
        )));
        b.push(Block::Table(group_table(c, g)));
    }
    let mix = mixtures(c);
    if !mix.is_empty() {
        b.push(Block::Title("Mixtures".into()));
        b.push(Block::Paragraph(mix));
    }
    b.push(Block::Title("Legend".into()));
    b.push(Block::Paragraph(legend(c)));
    for v in &c.vmstat {
        b.push(Block::Title(format!("vmstat: {} (mean ±CoeffVar)", v.key)));
        b.push(Block::Table(vmstat_table(c, v)));
    }
    if !c.unmatched.is_empty() {
        b.push(Block::Title("Not compared".into()));
        b.push(Block::Paragraph(format!(
            "cases the baseline lacks: {}\n",
            c.unmatched.join(", ")
        )));
    }
    if !c.differences.is_empty() {
        b.push(Block::Title("These runs also differ in:".into()));
        let mut h = vec!["what".to_string()];
        h.extend(c.sides.iter().map(|s| s.name.clone()));
        b.push(Block::Table(Table {
            title: String::new(),
            layout: None,
            header: vec![h],
            align: vec![Align::Left; c.sides.len() + 1],
            rows: c
                .differences
                .iter()
                .map(|d| {
                    let mut r = vec![d.what.clone()];
                    r.extend(d.values.iter().map(|v| clip(v, 40)));
                    r
                })
                .collect(),
        }));
    }
    b
}

fn opt(v: Option<f64>) -> String {
    v.filter(|x| x.is_finite())
        .map(|x| format!("{x}"))
        .unwrap_or_default()
}

/// One record per (case, figure, side).
fn records(c: &Comparison) -> Records {
    let columns = [
        "case",
        "tasks",
        "figure",
        "unit",
        "better",
        "side",
        "label",
        "n",
        "min",
        "median",
        "mean",
        "mean_kind",
        "stddev",
        "coeff_var",
        "max",
        "ci95",
        "pct_mean",
        "p",
        "p_adjusted",
        "significant",
        "ratio",
        "ratio_ci_low",
        "ratio_ci_high",
    ];
    let mut rows = Vec::new();
    for g in &c.groups {
        for r in &g.rows {
            for (side, cell) in c.sides.iter().zip(&r.cells) {
                let s = cell.summary.as_ref();
                rows.push(vec![
                    g.case.clone(),
                    r.tasks.to_string(),
                    g.figure.name.clone(),
                    g.figure.unit.clone(),
                    match g.figure.better {
                        Better::Higher => "higher".into(),
                        Better::Lower => "lower".into(),
                    },
                    side.name.clone(),
                    side.label.clone(),
                    s.map(|s| s.n.to_string()).unwrap_or_default(),
                    opt(s.map(|s| s.min)),
                    opt(s.map(|s| s.median)),
                    opt(s.map(|s| s.mean)),
                    match s {
                        Some(s) if s.harmonic => "harmonic",
                        Some(_) => "arithmetic",
                        None => "",
                    }
                    .into(),
                    opt(s.map(|s| s.stddev)),
                    opt(s.map(|s| s.coeff_var)),
                    opt(s.map(|s| s.max)),
                    opt(s.map(|s| s.ci95)),
                    opt(cell.pct.map(|p| p[2])),
                    opt(cell.p),
                    opt(cell.p_adjusted),
                    cell.significant.to_string(),
                    opt(cell.ratio),
                    opt(cell.ratio_ci.map(|c| c.0)),
                    opt(cell.ratio_ci.map(|c| c.1)),
                ]);
            }
        }
    }
    Records {
        columns: columns.iter().map(|s| s.to_string()).collect(),
        rows,
    }
}

pub fn report(c: &Comparison) -> Report {
    Report {
        text: None,
        blocks: blocks(c),
        records: records(c),
        data: serde_json::to_value(c).unwrap_or_default(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn changes_keep_their_column_width_at_any_magnitude() {
        for v in [
            0.004, -0.5, 99.99, -999.99, 1234.56, -56789.0, 999_999.0, 3.4e6, -7.7e12,
        ] {
            let s = pct(v);
            assert_eq!(s.chars().count(), 10, "{v} -> {s:?}");
            let sign = if v < 0.0 { '-' } else { '+' };
            assert!(s.contains(sign), "{v} -> {s:?}");
        }
    }

    #[test]
    fn values_below_ten_billion_fit_ten_characters() {
        for v in [0.001193, 12.5, 99_999.99, 1_069_451.7, -9_999_999.0, 9.9e9] {
            let s = num(v);
            assert!(s.len() <= 10, "{v} -> {s}");
            let back: f64 = s.parse().unwrap();
            assert!((back - v).abs() <= v.abs() * 1e-3, "{v} -> {s}");
        }
    }
}
