//! The statistics as a user meets them: `show`, its Markdown and the HTML
//! report print the groups of a stored run whose samples fall into two,
//! and what else differed; `--invocations` tags samples and reports the
//! between-invocation level. (Stopping early on a mixture or a drift is
//! tested on seeded sequences in `stats::stopping` and on the note in
//! `runner`: a real run's groups would depend on timing.)

use crate::common::*;
use std::collections::BTreeMap;
use vmscale::model::{Better, Case, Figure, Sample, SampleData, Status};
use vmscale::store::{NewRun, Store};

/// Stores a run of 30 samples of `fault/wsec` in which every third sample
/// is slow, with twice the system time and some compaction.
fn store_mixed_run(s: &Scratch) {
    let mut st = Store::open(&s.db()).unwrap();
    let figures = [
        Figure::new("fault/wsec", "faults/s", Better::Higher, true),
        Figure::new("system", "s", Better::Lower, false),
    ];
    let case = Case::new(2, "fault");
    let id = st
        .create_run(&NewRun {
            label: Some("mixed"),
            workload: "synthetic",
            command_line: "test",
            config: &serde_json::json!({}),
            figures: &figures,
            machine: &serde_json::json!({}),
            knobs: &serde_json::json!({}),
            cases: std::slice::from_ref(&case),
            origin: "measured",
        })
        .unwrap();
    for i in 0..30i64 {
        let slow = i % 3 == 1;
        let wobble = 1.0 + (i % 5) as f64 * 0.003;
        let (rate, system) = if slow { (290e3, 0.74) } else { (620e3, 0.35) };
        let sample = Sample {
            seq: i,
            warmup: false,
            taken_at: format!("2026-01-01T10:00:{i:02}.000Z"),
            data: SampleData {
                figures: BTreeMap::from([
                    ("fault/wsec".to_string(), rate * wobble),
                    ("system".to_string(), system * wobble),
                ]),
                tasks: Vec::new(),
            },
            vmstat: BTreeMap::from([("compact_stall".to_string(), if slow { 40 } else { 0 })]),
            noise: BTreeMap::new(),
            flagged: false,
        };
        st.add_sample(id, &case, &sample).unwrap();
    }
    st.finish_run(id, Status::Complete, None).unwrap();
}

#[test]
fn show_and_the_html_report_list_the_groups_and_what_differed() {
    let s = Scratch::new("st-mix");
    store_mixed_run(&s);
    let shown = ok(&s.vmscale(&["show", "mixed"]));
    let at = shown.find("mixture, fault/2:").expect("the mixture block");
    let block = &shown[at..];
    assert!(block.contains("fault/wsec in two groups"), "{shown}");
    let lines: Vec<&str> = block.lines().collect();
    assert!(lines[2].starts_with("    10 near 29"), "{shown}");
    assert!(
        lines[3].starts_with("      samples 1,4,7,10,13,"),
        "{shown}"
    );
    assert!(lines[4].starts_with("    20 near 62"), "{shown}");
    assert!(
        block.contains("      vmstat compact_stall 40.00 vs 0\n"),
        "{shown}"
    );
    assert!(block.contains("      system 0.74"), "{shown}");
    // The centre table gives the median with its order-statistic interval.
    assert!(shown.contains("Centre of fault/wsec per case"), "{shown}");
    let html = s.dir.join("r.html");
    ok(&s.vmscale(&["report", "mixed", "--html", html.to_str().unwrap()]));
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(
        page.contains("fault/wsec in two groups"),
        "no mixture in the report"
    );
    let md = ok(&s.vmscale(&["show", "mixed", "--markdown"]));
    assert!(md.contains("fault/wsec in two groups"), "{md}");
    // compare: one block per case and side, the other figures named under it.
    let cmp = ok(&s.vmscale(&["compare", "mixed", "mixed"]));
    let mix = &cmp[cmp.find("Mixtures").expect("a Mixtures block")..];
    assert_eq!(mix.matches("fault/wsec in two groups").count(), 2, "{cmp}");
    assert_eq!(
        mix.matches("  also in two groups: system\n").count(),
        2,
        "{cmp}"
    );
}

#[test]
fn invocations_tag_samples_and_report_the_level_between_them() {
    let s = Scratch::new("st-inv");
    let out = ok(&s.vmscale(&[
        "run",
        "pft",
        "--tasks",
        "1",
        "--size",
        "8M",
        "--reps",
        "3",
        "--invocations",
        "2",
    ]));
    assert!(out.contains("Between invocations"), "{out}");
    let j = json(&s.vmscale(&["show", "last", "--json"]));
    let samples = j["cases"][0]["samples"].as_array().unwrap();
    // Per invocation: 1 warm-up and 3 samples; numbered on across both.
    assert_eq!(samples.len(), 8);
    let tags: Vec<(i64, bool, i64)> = samples
        .iter()
        .map(|x| {
            (
                x["seq"].as_i64().unwrap(),
                x["warmup"].as_bool().unwrap(),
                x["noise"]["invocation"].as_f64().unwrap() as i64,
            )
        })
        .collect();
    let want: Vec<(i64, bool, i64)> = (0..8).map(|i| (i, i % 4 == 0, i / 4)).collect();
    assert_eq!(tags, want);
    let bad = s.vmscale(&["run", "pft", "--size", "8M", "--invocations", "0"]);
    assert_eq!(bad.status.code(), Some(2));
}
