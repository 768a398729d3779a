//! What `--profile` and `--lock-stats` stored, laid out: the top-function
//! and lock tables as blocks, their CSV records and JSON, the pairs of
//! profiles to diff, and the flame-graph sections of the HTML report.

use crate::locks::LockRow;
use crate::profile::CaseProfile;
use crate::profile::folded::kernel_shares;
use crate::report::export::{Block, Report};
use crate::report::html::flame;
use crate::report::profile as tables;

/// The profile and lock tables as blocks, each after a blank line.
pub fn blocks(
    profiles: &[(String, CaseProfile)],
    locks: &[(String, u64, Vec<LockRow>)],
) -> Vec<Block> {
    let mut out = Vec::new();
    for (key, p) in profiles {
        out.push(Block::Blank);
        out.extend(tables::top_blocks(key, p, tables::TOP));
    }
    for (key, n, rows) in locks {
        out.push(Block::Blank);
        out.extend(tables::locks_blocks(key, *n, rows));
    }
    out
}

/// Adds the profile and lock tables to a run's report, for the formats
/// that do not print the text: Markdown gets the tables as blocks, CSV one
/// record per kernel function and lock figure, JSON `profiles` (top kernel
/// functions and the folded stacks) and `locks`. Nothing is added for a
/// run that recorded neither.
pub fn add(
    run_id: i64,
    profiles: &[(String, CaseProfile)],
    locks: &[(String, u64, Vec<LockRow>)],
    report: &mut Report,
) {
    if profiles.is_empty() && locks.is_empty() {
        return;
    }
    report.blocks.extend(blocks(profiles, locks));
    let mut profile_data = Vec::new();
    for (key, p) in profiles {
        let (total, shares) = kernel_shares(&p.folded);
        for f in shares.iter().take(JSON_FUNCTIONS) {
            for (what, n) in [("self", f.self_samples), ("children", f.total_samples)] {
                report.records.rows.push(record(
                    run_id,
                    key,
                    format!("profile/{what}/{}", f.name),
                    n,
                ));
            }
        }
        profile_data.push(serde_json::json!({
            "case": key,
            "event": p.event,
            "hz": p.hz,
            "samples": total,
            "lost": p.lost,
            "kernel_functions": shares.iter().take(JSON_FUNCTIONS).map(|f| serde_json::json!({
                "symbol": f.name,
                "self_samples": f.self_samples,
                "total_samples": f.total_samples,
            })).collect::<Vec<_>>(),
            "folded": p.folded,
        }));
    }
    let mut lock_data = Vec::new();
    for (key, n, rows) in locks {
        for r in rows {
            for (what, v) in [
                ("acquired", r.acquisitions),
                ("contended", r.contended),
                ("wait_ns", r.wait_ns),
                ("max_wait_ns", r.max_wait_ns),
            ] {
                report.records.rows.push(record(
                    run_id,
                    key,
                    format!("lock/{}/{what}/{}", r.source, r.name),
                    v,
                ));
            }
        }
        lock_data.push(serde_json::json!({"case": key, "samples": n, "rows": rows}));
    }
    if let Some(obj) = report.data.as_object_mut() {
        obj.insert("profiles".into(), profile_data.into());
        obj.insert("locks".into(), lock_data.into());
    }
}

/// A CSV record of `show`'s columns (run, case, variant, tasks, knobs,
/// seq, warmup, flagged, figure, value) for a figure summed over the
/// case's samples: no sample number, warm-up or flag.
fn record(run_id: i64, key: &str, figure: String, value: u64) -> Vec<String> {
    let mut parts = key.splitn(3, '/');
    let (variant, tasks, knobs) = (
        parts.next().unwrap_or(""),
        parts.next().unwrap_or(""),
        parts.next().unwrap_or(""),
    );
    vec![
        run_id.to_string(),
        key.to_string(),
        variant.to_string(),
        tasks.to_string(),
        knobs.to_string(),
        String::new(),
        String::new(),
        String::new(),
        figure,
        value.to_string(),
    ]
}

/// Kernel functions per case in `--json` (the text shows tables::TOP).
const JSON_FUNCTIONS: usize = 50;

/// The case the variant `key` compares against: the same base case
/// (variant/tasks) without knobs, or the first of its knob variants.
fn base_of(key: &str) -> &str {
    let mut parts = key.splitn(3, '/');
    let (v, t) = (parts.next().unwrap_or(""), parts.next().unwrap_or(""));
    &key[..(v.len() + 1 + t.len()).min(key.len())]
}

/// Pairs of profiles to diff: across runs, each case of the first run with
/// the same case of every other run (by key, else by position); within one
/// run, each knob variant with the first variant of its case.
pub fn pairs(
    runs: &[(i64, Vec<(String, CaseProfile)>)],
) -> Vec<(String, CaseProfile, CaseProfile)> {
    let mut out = Vec::new();
    if let [(id, only)] = runs {
        let mut firsts: Vec<(&str, &(String, CaseProfile))> = Vec::new();
        for c in only {
            let b = base_of(&c.0);
            match firsts.iter().find(|(k, _)| *k == b) {
                Some((_, first)) => out.push((
                    format!("run {id}, {} -> {}", first.0, c.0),
                    first.1.clone(),
                    c.1.clone(),
                )),
                None => firsts.push((b, c)),
            }
        }
        return out;
    }
    let Some((base_id, base)) = runs.first() else {
        return out;
    };
    for (id, other) in &runs[1..] {
        for (i, (key, p)) in base.iter().enumerate() {
            let o = other
                .iter()
                .find(|(k, _)| k == key)
                .or_else(|| other.get(i));
            if let Some((okey, op)) = o {
                let title = if okey == key {
                    format!("run {base_id} -> run {id}, case {key}")
                } else {
                    format!("run {base_id} {key} -> run {id} {okey}")
                };
                out.push((title, p.clone(), op.clone()));
            }
        }
    }
    out
}

/// The profile shifts of [`pairs`] as text tables.
pub fn diff_text(runs: &[(i64, Vec<(String, CaseProfile)>)]) -> String {
    let mut out = String::new();
    for (title, a, b) in pairs(runs) {
        out.push('\n');
        out.push_str(&tables::diff_table(&title, &a, &b, tables::TOP));
    }
    out
}

/// HTML sections: a flame graph per profiled case of each run, and a
/// differential one per compared pair when there are several runs.
pub fn html(loaded: &[(i64, Vec<(String, CaseProfile)>)]) -> String {
    if loaded.iter().all(|(_, p)| p.is_empty()) {
        return String::new();
    }
    let esc = crate::report::html::svg::escape;
    let mut out = String::from("<section>\n<h2>Kernel profiles</h2>\n");
    for (id, cases) in loaded {
        for (key, p) in cases {
            let caption = format!(
                "run {id}, case {key}: {} at {} Hz, {} samples ({} lost)",
                p.event, p.hz, p.samples, p.lost
            );
            out.push_str(&format!(
                "<figure>\n{}<figcaption>Flame graph, {}</figcaption>\n</figure>\n",
                flame::svg(&p.folded, &caption),
                esc(&caption)
            ));
        }
    }
    let diffs: Vec<_> = if loaded.len() > 1 {
        pairs(loaded)
    } else {
        Vec::new()
    };
    for (title, a, b) in diffs {
        out.push_str(&format!(
            "<figure>\n{}<figcaption>Differential flame graph, {} (red: larger share, \
             blue: smaller)</figcaption>\n</figure>\n",
            flame::diff_svg(&a.folded, &b.folded, &title),
            esc(&title)
        ));
    }
    out.push_str("</section>\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(n: u64) -> CaseProfile {
        CaseProfile {
            samples: n,
            ..CaseProfile::default()
        }
    }

    #[test]
    fn variants_pair_with_the_first_of_their_case_and_runs_by_key() {
        let one = vec![(
            7,
            vec![
                ("anon/2/thp=never".to_string(), p(1)),
                ("anon/2/thp=always".to_string(), p(2)),
                ("anon/4/thp=never".to_string(), p(3)),
            ],
        )];
        let v = pairs(&one);
        assert_eq!(v.len(), 1);
        assert_eq!((v[0].1.samples, v[0].2.samples), (1, 2));
        let two = vec![
            (
                1,
                vec![("a/1".to_string(), p(1)), ("a/2".to_string(), p(2))],
            ),
            (
                2,
                vec![("a/2".to_string(), p(4)), ("b/9".to_string(), p(3))],
            ),
        ];
        let v = pairs(&two);
        assert_eq!(v.len(), 2);
        assert_eq!(
            (v[0].1.samples, v[0].2.samples),
            (1, 4),
            "a/1 has no match: by position"
        );
        assert_eq!(
            (v[1].1.samples, v[1].2.samples),
            (2, 4),
            "a/2 matched by key"
        );
    }
}
