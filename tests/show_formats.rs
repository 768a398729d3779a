//! `show --markdown` carries what `show` prints, for every registered
//! workload: a small run of each (built with `model::build`), with a
//! profile and a lock table attached, is rendered as text, Markdown and
//! CSV, and every table's title and every word of the text must be in the
//! Markdown; the profile and lock figures must be in the CSV.

use std::collections::BTreeMap;

use vmscale::locks::LockRow;
use vmscale::model::Run;
use vmscale::model::build::{CaseBuilder, SampleBuilder, case, run, sample};
use vmscale::profile::CaseProfile;
use vmscale::report::export::{Block, Format, exporter};
use vmscale::report::probes;
use vmscale::workload::{REGISTRY, Spec};

/// Variants and configuration that make each report print all its tables.
fn shape(spec: &Spec) -> (Vec<&'static str>, serde_json::Value) {
    use serde_json::json;
    match spec.name {
        "pft" => (vec!["fault", "populate"], json!({"mode": "thread"})),
        "c2c" => (
            vec!["cas"],
            json!({"cpus": [0, 1, 2], "pairs": [
                {"a": 0, "b": 1, "smt": false, "cross_node": false},
                {"a": 0, "b": 2, "smt": true, "cross_node": false},
                {"a": 1, "b": 2, "smt": false, "cross_node": true}]}),
        ),
        "atomic" => (vec!["shared", "locked"], json!({})),
        "lockfan" => (vec!["spin-1", "spin-4"], json!({})),
        "latency" => (vec!["base/4096", "thp/4096", "base/8192"], json!({})),
        "wis" => (vec!["thread"], json!({"test": "page_fault1"})),
        "mmap-lock" => (vec!["m0", "m1"], json!({})),
        "thp" => (
            vec!["anon", "none"],
            json!({"size": 1 << 30, "fault_size": 1 << 29, "step": 2 << 20}),
        ),
        "colour" => (vec!["parallel"], json!({"colours": 4, "l2_colours": 2})),
        "cmd" => (vec!["cmd"], json!({"argv": ["true"], "device": "vda"})),
        name => (vec![name], json!({})),
    }
}

/// A measured sample with every declared figure, the series and per-task
/// figures some reports read, and a few vmstat counters.
fn full_sample(spec: &Spec, i: usize) -> SampleBuilder {
    let mut s = sample();
    for (k, f) in spec.figures().iter().enumerate() {
        s = s.figure(&f.name, 100.0 + (k * 7 + i) as f64);
    }
    for p in ["pair 0-1 ns", "pair 0-2 ns", "pair 1-2 ns"] {
        s = s.figure(p, 40.0 + i as f64);
    }
    for t in 0..3 {
        s = s
            .figure(&format!("series/{t:03}/t"), t as f64)
            .figure(&format!("series/{t:03}/rate"), 10.0)
            .figure(&format!("series/{t:03}/locality"), 0.5);
    }
    s.task(&[
        ("cpu", 0.0),
        ("pages", 8.0),
        ("llc:0", 2.0),
        ("l2:1", 3.0),
        ("run:2", 4.0),
    ])
    .task(&[("cpu", 1.0), ("pages", 8.0), ("llc:3", 8.0), ("run:1", 8.0)])
    .vmstat("pgfault", 5)
    .vmstat("nr_tlb_remote_flush", 2)
}

fn small_run(spec: &Spec) -> Run {
    let (variants, config) = shape(spec);
    let mut r = run(spec.name).config(config).figures(spec.figures());
    for v in variants {
        for tasks in [1, 2] {
            let c: CaseBuilder = case(tasks, v)
                .sample(full_sample(spec, 0).warmup())
                .samples(3, |i| full_sample(spec, i));
            r = r.case(c);
        }
    }
    r.build()
}

fn profile() -> CaseProfile {
    CaseProfile {
        event: "cpu-clock".into(),
        hz: 999,
        samples: 10,
        lost: 0,
        folded: BTreeMap::from([
            ("main;f_[k];clear_page_erms_[k]".to_string(), 8),
            ("main;f_[k]".to_string(), 2),
        ]),
    }
}

fn locks() -> Vec<LockRow> {
    vec![LockRow {
        source: "mmap_lock".into(),
        name: "mmap_lock-r".into(),
        acquisitions: 40,
        contended: 4,
        wait_ns: 9000,
        max_wait_ns: 3000,
    }]
}

fn squash(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[test]
fn markdown_carries_every_table_and_word_of_the_text_for_every_workload() {
    for spec in REGISTRY {
        let run = small_run(spec);
        let mut report = vmscale::report::show::report(&run);
        let key = run.cases[0].case.key();
        let probes = (vec![(key.clone(), profile())], vec![(key, 3, locks())]);
        probes::add(run.meta.id, &probes.0, &probes.1, &mut report);
        let text = exporter(Format::Text).export(&report).unwrap()
            + &vmscale::report::export::text::blocks(&probes::blocks(&probes.0, &probes.1));
        let md = exporter(Format::Markdown).export(&report).unwrap();
        let csv = exporter(Format::Csv).export(&report).unwrap();
        let name = spec.name;
        let titles: Vec<&str> = report
            .blocks
            .iter()
            .filter_map(|b| match b {
                Block::Table(t) => Some(t.title.as_str()),
                Block::KeyValue(kv) => Some(kv.title.as_str()),
                _ => None,
            })
            .collect();
        assert!(titles.len() >= 4, "{name}: {titles:?}");
        let (text_flat, md_flat) = (squash(&text), squash(&md));
        let mut in_text = 0;
        for t in &titles {
            assert!(!t.is_empty(), "{name}: a table without a title");
            let t = squash(t);
            assert!(md_flat.contains(&format!("### {t}")), "{name}: {t}\n{md}");
            in_text += text_flat.contains(&t) as usize;
        }
        assert!(in_text >= 2, "{name}: the profile and lock titles at least");
        // Words a fixed layout puts between columns (" .. ", " ns at ")
        // are text decoration.
        let decoration: Vec<&str> = Block::tables(&report.blocks)
            .filter_map(|t| t.layout.as_ref())
            .flat_map(|l| l.columns.iter().flat_map(|c| c.0.split_whitespace()))
            .collect();
        // A name text cut to 80 columns ends in `~`: its start is the word.
        for word in text
            .split_whitespace()
            .map(|w| w.trim_end_matches('~'))
            .filter(|w| !decoration.contains(w))
        {
            assert!(
                md.contains(word),
                "{name}: '{word}' of the text:\n{text}\nmarkdown:\n{md}"
            );
        }
        for figure in [
            "profile/self/clear_page_erms",
            "lock/mmap_lock/wait_ns/mmap_lock-r",
        ] {
            assert!(csv.contains(figure), "{name}: {figure}");
        }
    }
}
