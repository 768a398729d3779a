//! A bisection's report: the ends, one line a step (its verdict, rounds,
//! ratio to the good end with its interval, time), the first bad with the
//! confirmation against its parent, and the 0-day style summary line
//! (`fault/wsec -52.9% [-59.8%, -44.8%] at a4025621 "subject"`); or all of
//! it as JSON with `first_bad` and `steps`.

use serde_json::{Value, json};

use crate::bisect::flow::{Answer, Outcome, Record};
use crate::stats::decide::Decision;

/// An entry as the report names it.
#[derive(Debug, Clone)]
pub struct Named {
    /// The commit id, or the kernel as given.
    pub name: String,
    pub label: String,
    pub subject: Option<String>,
}

/// What the report shows.
pub struct View<'a> {
    pub key: &'a str,
    /// Revisions of a tree (else kernels).
    pub tree: bool,
    pub figure: Option<&'a str>,
    pub entries: &'a [Named],
    pub outcome: &'a Outcome,
}

fn ratio(d: &Option<Decision>) -> String {
    match d {
        Some(d) => format!("{:6.3} [{:.3}, {:.3}]", d.ratio, d.ci.0, d.ci.1),
        None => "     - (no interval)".into(),
    }
}

fn time(r: &Record) -> String {
    if r.rounds > 0 && r.stored == r.rounds {
        "stored".into()
    } else {
        format!("{:.0} s", r.seconds)
    }
}

fn short(v: &View, i: usize) -> String {
    let e = &v.entries[i];
    match v.tree {
        true => e.name.get(..8).unwrap_or(&e.name).to_string(),
        false => e.label.clone(),
    }
}

fn subject(v: &View, i: usize) -> String {
    v.entries[i]
        .subject
        .as_deref()
        .map(|s| format!(" \"{s}\""))
        .unwrap_or_default()
}

fn pair_line(v: &View, what: &str, r: &Record) -> String {
    let verdict = r.decision.map_or("undecided", |d| d.verdict.as_str());
    format!(
        "{what}: {} / {} = {} {verdict}, {} rounds, {}\n",
        v.entries[r.new].label,
        v.entries[r.base].label,
        ratio(&r.decision).trim_start(),
        r.rounds,
        time(r)
    )
}

/// The summary line: the first bad's step against its parent.
pub fn summary(v: &View) -> Option<String> {
    let Answer::Found(i) = v.outcome.answer else {
        return None;
    };
    let d = v.outcome.confirmation.as_ref()?.decision?;
    let p = |x: f64| format!("{:+.1}%", (x - 1.0) * 100.0);
    Some(format!(
        "{} {} [{}, {}] at {}{}",
        v.figure.unwrap_or("the headline"),
        p(d.ratio),
        p(d.ci.0),
        p(d.ci.1),
        short(v, i),
        subject(v, i)
    ))
}

/// The report as text.
pub fn text(v: &View) -> String {
    let o = v.outcome;
    let what = if v.tree { "revisions" } else { "kernels" };
    let mut out = format!(
        "bisect {}: {} {what}, {} with band 1 ± {:.0}%, {:.2}% intervals\n",
        v.key,
        v.entries.len(),
        v.figure.unwrap_or("the headline"),
        o.rule.threshold * 100.0,
        o.rule.level() * 100.0
    );
    out.push_str(&pair_line(v, "ends", &o.ends));
    if o.answer == Answer::EndsAlike {
        out.push_str(&format!(
            "The ends are not told apart (band 1 ± {:.0}%): nothing to bisect.\n",
            o.rule.threshold * 100.0
        ));
        return out;
    }
    let width = v
        .entries
        .iter()
        .map(|e| e.label.len())
        .max()
        .unwrap_or(8)
        .clamp(8, 24);
    let head = if v.tree { "revision" } else { "kernel" };
    out.push_str(&format!(
        "\nstep  {head:<width$}  verdict  rounds   ratio to good             time\n"
    ));
    for (k, s) in o.steps.iter().enumerate() {
        let label = &v.entries[s.new].label;
        let label = label.get(..width).unwrap_or(label);
        let verdict = s.mark.map_or("-", |m| m.as_str());
        out.push_str(&format!(
            "{:>4}  {label:<width$}  {verdict:<7}  {:>6}  {:<24}  {:>6}\n",
            k + 1,
            s.rounds,
            ratio(&s.decision),
            time(s)
        ));
        if let Some(f) = &s.failure {
            let first = f.lines().next().unwrap_or("");
            out.push_str(&format!("      skipped: {first}\n"));
        }
    }
    match &o.answer {
        Answer::Found(i) => {
            out.push_str(&format!(
                "\nfirst bad: {}{}\n",
                v.entries[*i].name,
                subject(v, *i)
            ));
            if let Some(c) = &o.confirmation {
                out.push_str(&pair_line(v, "confirmation", c));
            }
        }
        Answer::Ambiguous(set) => {
            out.push_str("\nOnly skipped entries are left: the first bad is one of\n");
            for i in set {
                out.push_str(&format!("  {}{}\n", v.entries[*i].name, subject(v, *i)));
            }
        }
        Answer::EndsAlike => {}
    }
    if let Some(s) = summary(v) {
        out.push_str(&format!("\n{s}\n"));
    }
    out
}

fn decision(d: &Option<Decision>) -> Value {
    match d {
        Some(d) => json!({
            "verdict": d.verdict.as_str(),
            "ratio": d.ratio,
            "ci": [d.ci.0, d.ci.1],
            "level": d.level,
        }),
        None => json!({"verdict": "undecided", "ratio": null, "ci": null}),
    }
}

fn entry(v: &View, i: usize) -> Value {
    let e = &v.entries[i];
    let mut out = json!({"label": e.label, "subject": e.subject});
    out[if v.tree { "revision" } else { "kernel" }] = json!(e.name);
    out
}

fn record(v: &View, r: &Record) -> Value {
    let mut out = entry(v, r.new);
    out["against"] = json!(v.entries[r.base].name);
    for (k, x) in decision(&r.decision).as_object().into_iter().flatten() {
        out[k] = x.clone();
    }
    if let Some(m) = r.mark {
        out["verdict"] = json!(m.as_str());
    }
    out["rounds"] = json!(r.rounds);
    out["stored_rounds"] = json!(r.stored);
    out["seconds"] = json!(r.seconds);
    out["failure"] = json!(r.failure);
    out
}

/// The report as JSON.
pub fn json(v: &View) -> Value {
    let o = v.outcome;
    let (answer, first_bad, candidates) = match &o.answer {
        Answer::Found(i) => ("found", json!(v.entries[*i].name), json!([])),
        Answer::Ambiguous(set) => (
            "ambiguous",
            Value::Null,
            set.iter().map(|i| json!(v.entries[*i].name)).collect(),
        ),
        Answer::EndsAlike => ("ends_alike", Value::Null, json!([])),
    };
    json!({
        "key": v.key,
        "figure": v.figure,
        "threshold": o.rule.threshold,
        "level": o.rule.level(),
        "entries": v.entries.len(),
        "answer": answer,
        "first_bad": first_bad,
        "candidates": candidates,
        "ends": record(v, &o.ends),
        "steps": o.steps.iter().map(|s| record(v, s)).collect::<Vec<_>>(),
        "confirmation": o.confirmation.as_ref().map(|c| record(v, c)),
        "summary": summary(v),
    })
}
