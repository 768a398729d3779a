//! The verdict of a deciding comparison (`vmscale guest --rounds auto`,
//! `--decide`): one line per kernel against the baseline, as text, or as
//! JSON with `verdict`, `ratio`, `ci` and `rounds` at the top (the second
//! kernel's; every later one under `comparisons`).

use serde_json::{Value, json};

use crate::guest::boot::Prepared;
use crate::guest::decide::Deciding;
use crate::stats::decide::{Decision, Rule};

/// One kernel of the comparison.
#[derive(Debug, Clone, PartialEq)]
pub struct Kernel {
    pub label: String,
    /// As given to `--kernel`.
    pub given: String,
    pub release: String,
    pub sha256: String,
}

/// Everything the verdict says.
#[derive(Debug, Clone)]
pub struct Verdict {
    /// The deciding figure, once a boot reported it.
    pub figure: Option<String>,
    pub rule: Rule,
    pub base: Kernel,
    /// Each later kernel with its decision (`None`: fewer than two rounds).
    pub others: Vec<(Kernel, Option<Decision>)>,
    /// What ended the rounds before a verdict (`--max-rounds 30`).
    pub ended_by: Option<String>,
}

fn pct(f: f64) -> String {
    let p = f * 100.0;
    if (p - p.round()).abs() < 1e-9 {
        format!("{p:.0}")
    } else {
        format!("{p}")
    }
}

/// The text: a heading with the band and the intervals' level, a line a
/// kernel.
pub fn text(v: &Verdict) -> String {
    let figure = v.figure.as_deref().unwrap_or("the headline");
    let looks = if v.rule.looks > 1 {
        "one look a round"
    } else {
        "one look"
    };
    let mut out = format!(
        "\nVerdict on {figure} against {}\n  (band 1 ± {}%, {:.2}% intervals, {looks}):\n",
        v.base.label,
        pct(v.rule.threshold),
        v.rule.level() * 100.0
    );
    for (k, d) in &v.others {
        out.push_str(&match d {
            Some(d) => format!(
                "  {}: {}, ratio {:.3} [{:.3}, {:.3}] after {} rounds\n",
                k.label,
                d.verdict.as_str(),
                d.ratio,
                d.ci.0,
                d.ci.1,
                d.rounds
            ),
            None => format!(
                "  {}: undecided, fewer than 2 rounds with {figure}\n",
                k.label
            ),
        });
    }
    if let Some(why) = &v.ended_by {
        out.push_str(&format!("  ended by {why}\n"));
    }
    out
}

fn kernel(k: &Kernel) -> Value {
    json!({"label": k.label, "kernel": k.given, "release": k.release, "sha256": k.sha256})
}

fn decision(k: &Kernel, d: &Option<Decision>) -> Value {
    let mut o = kernel(k);
    if let Some(m) = o.as_object_mut() {
        m.insert(
            "verdict".into(),
            json!(d.map_or("undecided", |d| d.verdict.as_str())),
        );
        m.insert("ratio".into(), json!(d.map(|d| d.ratio)));
        m.insert("ci".into(), json!(d.map(|d| [d.ci.0, d.ci.1])));
        m.insert("rounds".into(), json!(d.map_or(0, |d| d.rounds)));
    }
    o
}

/// The JSON document.
pub fn json(v: &Verdict) -> Value {
    let all: Vec<Value> = v.others.iter().map(|(k, d)| decision(k, d)).collect();
    let mut top = all
        .first()
        .cloned()
        .unwrap_or_else(|| json!({"verdict": "undecided", "rounds": 0}));
    if let Some(o) = top.as_object_mut() {
        o.insert("figure".into(), json!(v.figure));
        o.insert("threshold".into(), json!(v.rule.threshold));
        o.insert("level".into(), json!(v.rule.level()));
        o.insert("ended_by".into(), json!(v.ended_by));
        o.insert("base".into(), kernel(&v.base));
        if all.len() > 1 {
            o.insert("comparisons".into(), Value::Array(all));
        }
    }
    top
}

/// The verdict of `vmscale guest`'s deciding rounds, as it is rendered.
pub fn of(prepared: &[Prepared], d: &Deciding, ended_by: Option<String>) -> Verdict {
    let kernel = |p: &Prepared| Kernel {
        label: p.label.clone(),
        given: p.kernel.given.display().to_string(),
        release: p.kernel.release.clone(),
        sha256: p.kernel.sha256.clone(),
    };
    Verdict {
        figure: d.figure.clone(),
        rule: d.rule,
        base: kernel(&prepared[0]),
        others: prepared[1..]
            .iter()
            .map(kernel)
            .zip(d.decisions())
            .collect(),
        ended_by: ended_by.filter(|_| !d.decided()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::decide::Verdict as V;

    fn k(label: &str) -> Kernel {
        Kernel {
            label: label.into(),
            given: format!("/k/{label}.deb"),
            release: "6.1.0-56-cloud-amd64".into(),
            sha256: "ab".repeat(32),
        }
    }

    #[test]
    fn text_and_json_say_the_same() {
        let d = Decision {
            verdict: V::Different,
            ratio: 0.471,
            ci: (0.348, 0.639),
            rounds: 6,
            level: 0.9972,
        };
        let v = Verdict {
            figure: Some("fault/wsec".into()),
            rule: Rule::sequential(0.1, 0.05, 30),
            base: k("a"),
            others: vec![(k("b"), Some(d)), (k("c"), None)],
            ended_by: Some("--max-rounds 30".into()),
        };
        let t = text(&v);
        assert!(
            t.contains("Verdict on fault/wsec against a\n  (band 1 ± 10%"),
            "{t}"
        );
        assert!(
            t.contains("b: different, ratio 0.471 [0.348, 0.639] after 6 rounds"),
            "{t}"
        );
        assert!(t.contains("c: undecided") && t.contains("ended by --max-rounds 30"));
        assert!(t.lines().all(|l| l.chars().count() <= 80), "{t}");
        let j = json(&v);
        assert_eq!(j["verdict"], "different");
        assert_eq!(j["rounds"], 6);
        assert_eq!(j["ci"][1], 0.639);
        assert_eq!(j["base"]["label"], "a");
        assert_eq!(j["comparisons"][1]["verdict"], "undecided");
        assert_eq!(j["comparisons"][1]["ratio"], Value::Null);
    }
}
