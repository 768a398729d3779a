//! `vmscale compare` end to end: synthetic runs built in a private store
//! (truth known), real small pft runs in every format, sample files, and
//! refusals with exit code 2.

use crate::common::{Scratch, json, ok, stderr, stdout};
use std::collections::BTreeMap;
use vmscale::model::{Better, Case, Figure, Sample, SampleData, Status};
use vmscale::stats::rng::SplitMix64;
use vmscale::store::{NewRun, Store};

fn sample(seq: i64, value: f64, vm: &[(&str, i64)]) -> Sample {
    Sample {
        seq,
        warmup: false,
        taken_at: "2025-01-01T00:00:00Z".into(),
        data: SampleData {
            figures: BTreeMap::from([("time".to_string(), value)]),
            tasks: Vec::new(),
        },
        vmstat: vm.iter().map(|(k, v)| (k.to_string(), *v)).collect(),
        noise: BTreeMap::new(),
        flagged: false,
    }
}

/// Stores one run whose cases carry `values` for the figure "time".
fn store_run(
    s: &Scratch,
    label: &str,
    machine: serde_json::Value,
    cases: &[(Case, Vec<f64>)],
) -> i64 {
    let mut st = Store::open(&s.db()).unwrap();
    let figures = [Figure::new("time", "s", Better::Lower, false)];
    let cs: Vec<Case> = cases.iter().map(|(c, _)| c.clone()).collect();
    let id = st
        .create_run(&NewRun {
            label: Some(label),
            workload: "synthetic",
            command_line: "test",
            config: &serde_json::json!({}),
            figures: &figures,
            machine: &machine,
            knobs: &serde_json::json!({}),
            cases: &cs,
            origin: "measured",
        })
        .unwrap();
    for (c, vals) in cases {
        for (i, v) in vals.iter().enumerate() {
            st.add_sample(
                id,
                c,
                &sample(i as i64, *v, &[("pgfault", 1000 + i as i64)]),
            )
            .unwrap();
        }
    }
    st.finish_run(id, Status::Complete, None).unwrap();
    id
}

fn machine(release: &str) -> serde_json::Value {
    serde_json::json!({ "kernel_release": release, "cpus": [], "mem_available_kib": 1 })
}

#[test]
fn three_percent_shift_is_marked_significant() {
    let s = Scratch::new("cmp-sig");
    // Means 100 and 103, sd about 0.8, n = 5: "better" means lower time.
    let a = vec![99.0, 99.6, 100.0, 100.4, 101.0];
    let b = vec![102.0, 102.6, 103.0, 103.4, 104.0];
    store_run(&s, "a", machine("6.1.0"), &[(Case::new(1, "x"), a.clone())]);
    store_run(&s, "b", machine("6.1.0"), &[(Case::new(1, "x"), b)]);
    let j = json(&s.vmscale(&["compare", "a", "b", "--json"]));
    let cell = &j["groups"][0]["rows"][0]["cells"][1];
    assert_eq!(cell["significant"], true, "{cell}");
    assert!(cell["p"].as_f64().unwrap() < 1e-3);
    // Lower is better for time: 3 % slower is -3 % (the mean's change).
    assert!((cell["pct"][2].as_f64().unwrap() + 3.0).abs() < 1e-9);
    let text = ok(&s.vmscale(&["compare", "a", "b"]));
    assert!(text.contains("(  -3.00%) *"), "{text}");
    // Long labels are clipped in the text, whole in JSON.
    let long = "kernel-6.8.0-rc3-with-pcp-high-fraction-patch-v2";
    store_run(
        &s,
        long,
        machine("6.1.0"),
        &[(Case::new(1, "x"), a.clone())],
    );
    let wide = ok(&s.vmscale(&["compare", long, "b"]));
    for line in wide.lines() {
        assert!(line.chars().count() <= 80, "too wide: {line}");
    }
    let j = json(&s.vmscale(&["compare", long, "b", "--json"]));
    assert_eq!(j["sides"][0]["label"], long);
    assert!(text.contains("p-value"));
    // Identical machines: no difference section.
    assert!(!text.contains("also differ"), "{text}");
    for line in text.lines() {
        assert!(line.chars().count() <= 80, "too wide: {line}");
    }
}

#[test]
fn the_median_row_shows_the_centre_an_outlier_cannot_move() {
    let s = Scratch::new("cmp-median");
    store_run(
        &s,
        "a",
        machine("6.1.0"),
        &[(Case::new(1, "x"), vec![1.0, 2.0, 3.0, 4.0, 100.0])],
    );
    store_run(
        &s,
        "b",
        machine("6.1.0"),
        &[(Case::new(1, "x"), vec![2.0, 4.0, 6.0, 8.0, 10.0])],
    );
    let text = ok(&s.vmscale(&["compare", "a", "b"]));
    let row = |name: &str| {
        text.lines()
            .find(|l| l.starts_with(name))
            .unwrap_or_else(|| panic!("no {name} row:\n{text}"))
            .to_string()
    };
    // Median 3 -> 6 (lower is better: -100 %), means 22 -> 6 (+72.73 %).
    assert!(row("Median").contains("3.000 (  0.00%)"), "{text}");
    assert!(row("Median").contains("6.000 (-100.00%)"), "{text}");
    assert!(row("Amean").contains("22.00"), "{text}");
    let j = json(&s.vmscale(&["compare", "a", "b", "--json"]));
    let pct = &j["groups"][0]["rows"][0]["cells"][1]["pct"];
    assert!((pct[1].as_f64().unwrap() + 100.0).abs() < 1e-9, "{pct}");
}

#[test]
fn null_pairs_are_rarely_marked() {
    // 200 cases drawn from one distribution in both runs: BH across all
    // 200 rows must mark at most 5 % of them plus a tolerance of 3 sd of
    // the binomial (10 + 3 * 3.1 = 19); in practice BH under a true null
    // marks about alpha of the families, so 0 or 1.
    let s = Scratch::new("cmp-null");
    let mut rng = SplitMix64::new(99);
    let mut draw = || {
        (0..5)
            .map(|_| 100.0 + 0.8 * rng.normal())
            .collect::<Vec<_>>()
    };
    let ca: Vec<(Case, Vec<f64>)> = (1..=200).map(|t| (Case::new(t, "x"), draw())).collect();
    let cb: Vec<(Case, Vec<f64>)> = (1..=200).map(|t| (Case::new(t, "x"), draw())).collect();
    store_run(&s, "a", machine("6.1.0"), &ca);
    store_run(&s, "b", machine("6.1.0"), &cb);
    let j = json(&s.vmscale(&["compare", "a", "b", "--json"]));
    assert_eq!(j["tests"], 200);
    let rows = j["groups"][0]["rows"].as_array().unwrap();
    let marked = rows
        .iter()
        .filter(|r| r["cells"][1]["significant"] == true)
        .count();
    assert!(marked <= 19, "{marked} of 200 marked");
}

#[test]
fn kernel_release_difference_is_reported() {
    let s = Scratch::new("cmp-diff");
    let v = vec![1.0, 1.1, 1.2];
    store_run(
        &s,
        "old",
        machine("6.1.0-rc1"),
        &[(Case::new(1, "x"), v.clone())],
    );
    store_run(
        &s,
        "new",
        machine("6.8.0-vmscale"),
        &[(Case::new(1, "x"), v)],
    );
    let text = ok(&s.vmscale(&["compare", "old", "new"]));
    assert!(text.contains("These runs also differ in:"), "{text}");
    let line = text
        .lines()
        .find(|l| l.starts_with("kernel_release"))
        .expect("kernel_release line");
    assert!(
        line.contains("6.1.0-rc1") && line.contains("6.8.0-vmscale"),
        "{line}"
    );
    // mem_available_kib changes between any two runs; it is not a difference.
    let j = json(&s.vmscale(&["compare", "old", "new", "--json"]));
    let whats: Vec<&str> = j["differences"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["what"].as_str().unwrap())
        .collect();
    assert_eq!(whats, ["kernel_release"]);
}

#[test]
fn knob_variants_of_one_run_give_the_ratio_table() {
    let s = Scratch::new("cmp-var");
    let on = BTreeMap::from([("vm.knob".to_string(), "1".to_string())]);
    let off = BTreeMap::from([("vm.knob".to_string(), "0".to_string())]);
    let mut cases = Vec::new();
    for t in [1usize, 2] {
        let c = Case::new(t, "x");
        cases.push((c.with_knobs(on.clone()), vec![10.0, 10.1, 9.9]));
        cases.push((c.with_knobs(off.clone()), vec![5.0, 5.1, 4.9]));
    }
    store_run(&s, "ab", machine("6.1.0"), &cases);
    let text = ok(&s.vmscale(&["compare", "ab"]));
    assert!(text.contains("TESTCASE"), "{text}");
    assert!(
        text.contains("A: vm.knob=1") && text.contains("B: vm.knob=0"),
        "{text}"
    );
    assert!(text.contains("RATIO B/A"));
    let row = text
        .lines()
        .find(|l| l.trim_start().starts_with("2P"))
        .unwrap();
    // Ratio of the means, then the paired ratio of the rounds with its CI
    // (every round's B/A is near 0.5: 5/10, 5.1/10.1, 4.9/9.9).
    let cols: Vec<&str> = row.split_whitespace().collect();
    assert_eq!(cols[3], "0.50", "{row}");
    assert!(cols[4] == "0.500" && cols[5].starts_with("[0.4"), "{row}");
    // Then the comparison of the variants, which is significant.
    assert!(text.contains("Amean") && text.contains(" *"), "{text}");
    let a = ok(&s.vmscale(&["compare", "ab", "--ratio-of", "A"]));
    assert!(a.contains("RATIO A/B"));
    let row = a
        .lines()
        .find(|l| l.trim_start().starts_with("1P"))
        .unwrap();
    let cols: Vec<&str> = row.split_whitespace().collect();
    assert_eq!((cols[3], cols[4]), ("2.00", "2.000"), "{row}");
    let j = json(&s.vmscale(&["compare", "ab", "--json"]));
    assert_eq!(j["kind"], "variants");
    assert_eq!(j["ratio"]["rows"].as_array().unwrap().len(), 2);
    let paired = &j["ratio"]["rows"][0]["paired"];
    assert_eq!(paired["pairs"], 3, "{paired}");
    let (lo, hi) = (
        paired["ci95"][0].as_f64().unwrap(),
        paired["ci95"][1].as_f64().unwrap(),
    );
    assert!(lo < 0.5 && 0.5 < hi && hi - lo < 0.05, "{paired}");
}

#[test]
fn bad_names_and_options_exit_2() {
    let s = Scratch::new("cmp-bad");
    store_run(
        &s,
        "solo",
        machine("6.1.0"),
        &[(Case::new(1, "x"), vec![1.0, 2.0])],
    );
    for args in [
        vec!["compare", "solo", "nosuch"],
        vec!["compare", "last~7", "solo"],
        vec!["compare", "solo"],
        vec!["compare", "solo", "solo", "--alpha", "1.5"],
        vec!["compare", "solo", "solo", "--figure", "nope"],
        vec!["compare", "solo", "solo", "--ratio-of", "C"],
        vec!["compare"],
    ] {
        let o = s.vmscale(&args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        assert!(stdout(&o).is_empty());
        assert!(!stderr(&o).contains("panicked"));
    }
    // A missing store is bad input too, and is not created.
    let other = Scratch::new("cmp-nostore");
    let o = other.vmscale(&["compare", "1", "2"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(!other.db().exists());
}

#[test]
fn sample_files_like_ministat() {
    let s = Scratch::new("cmp-files");
    let a = s.dir.join("a.txt");
    let b = s.dir.join("b.csv");
    let c = s.dir.join("c.json");
    std::fs::write(&a, "# base\n100\n100.5\n99.5\n100.2\n99.8\n").unwrap();
    std::fs::write(
        &b,
        "host,value\nx,110\ny,110.5\nz,109.5\nw,110.2\nv,109.8\n",
    )
    .unwrap();
    std::fs::write(&c, "[100, 100.4, 99.6, 100.1, 99.9]").unwrap();
    let (a, b, c) = (
        a.to_str().unwrap(),
        b.to_str().unwrap(),
        c.to_str().unwrap(),
    );
    let j = json(&s.vmscale(&["compare", "--files", a, b, c, "--json"]));
    assert_eq!(j["sides"].as_array().unwrap().len(), 3);
    let cells = &j["groups"][0]["rows"][0]["cells"];
    assert_eq!(cells[1]["significant"], true);
    assert_eq!(cells[2]["significant"], false);
    assert!((cells[1]["pct"][1].as_f64().unwrap() - 10.0).abs() < 1e-9);
    // Paths given without --files are detected; no store is needed.
    let text = ok(&s.vmscale(&["compare", a, b, "--better", "lower"]));
    assert!(text.contains("( -10.00%) *"), "{text}");
    assert!(!s.db().exists());
    let bad = s.dir.join("bad.txt");
    std::fs::write(&bad, "1\nnot-a-number\n").unwrap();
    let o = s.vmscale(&["compare", "--files", a, bad.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains(":2:"), "{}", stderr(&o));
}

#[test]
fn a_bimodal_sample_file_is_reported_as_a_mixture() {
    let s = Scratch::new("cmp-mix");
    let (plain, mixed) = (s.dir.join("plain.txt"), s.dir.join("mixed.txt"));
    // 30 values near 590; then 20 near 600 and 10 near 300, interleaved.
    let near = |c: f64, i: usize| c * (1.0 + 0.004 * ((i * 7 % 11) as f64 - 5.0) / 5.0);
    let p: Vec<String> = (0..30).map(|i| format!("{}", near(590.0, i))).collect();
    let m: Vec<String> = (0..30)
        .map(|i| format!("{}", near(if i % 3 == 1 { 300.0 } else { 600.0 }, i)))
        .collect();
    std::fs::write(&plain, p.join("\n")).unwrap();
    std::fs::write(&mixed, m.join("\n")).unwrap();
    let (a, b) = (plain.to_str().unwrap(), mixed.to_str().unwrap());
    let text = ok(&s.vmscale(&["compare", a, b]));
    let at = text.find("Mixtures").expect("a Mixtures block");
    let block = &text[at..text.find("Legend").expect("a legend")];
    assert!(
        block.contains("mixed.txt, file/1:\n  value in two groups"),
        "{text}"
    );
    let centre = |n: &str| -> f64 {
        let line = block
            .lines()
            .find(|l| l.starts_with(&format!("    {n} near ")))
            .unwrap_or_else(|| panic!("no group of {n}: {text}"));
        line.split_whitespace().nth(2).unwrap().parse().unwrap()
    };
    assert!((centre("10") - 300.0).abs() < 3.0 && (centre("20") - 600.0).abs() < 6.0);
    assert!(!block.contains("plain.txt"), "{text}");
    let j = json(&s.vmscale(&["compare", a, b, "--json"]));
    let cells = &j["groups"][0]["rows"][0]["cells"];
    assert!(cells[0]["mixture"].is_null());
    assert_eq!(cells[1]["mixture"]["groups"][0]["n"], 10);
    assert_eq!(cells[1]["mixture"]["groups"][1]["n"], 20);
    assert_eq!(cells[1]["ratio_ci_method"], "welch-log");
    let ci = cells[1]["ratio_ci"].as_array().expect("ratio_ci");
    let r = cells[1]["ratio"].as_f64().unwrap();
    assert!(
        ci[0].as_f64().unwrap() < r && r < ci[1].as_f64().unwrap(),
        "{ci:?} {r}"
    );
}

#[test]
fn real_pft_runs_in_every_format() {
    let s = Scratch::new("cmp-pft");
    for label in ["one", "two"] {
        ok(&s.vmscale(&[
            "run", "pft", "--tasks", "1", "--size", "16M", "--reps", "3", "--label", label,
        ]));
    }
    let text = ok(&s.vmscale(&["compare", "last~1", "last"]));
    assert!(text.contains("Hmean     fault/wsec"), "{text}");
    assert!(text.contains("Amean     wall"), "{text}");
    assert!(text.contains("vmstat: fault/1"), "{text}");
    assert!(text.contains("pgfault"), "{text}");
    for line in text.lines() {
        assert!(line.chars().count() <= 80, "too wide: {line}");
    }
    let md = ok(&s.vmscale(&["compare", "one", "two", "--markdown"]));
    assert!(md.contains("| --- | --- | ---: | ---: |"), "{md}");
    assert!(md.contains("### fault: fault/wsec"), "{md}");
    let csv = ok(&s.vmscale(&["compare", "one", "two", "--csv"]));
    let mut lines = csv.lines();
    let head: Vec<&str> = lines.next().unwrap().split(',').collect();
    assert_eq!(head[0], "case");
    // pft's 7 figures x 1 case x 2 runs, every row as wide as the header.
    let rows: Vec<&str> = lines.collect();
    assert_eq!(rows.len(), 14);
    assert!(rows.iter().all(|r| r.split(',').count() == head.len()));
    let j = json(&s.vmscale(&["compare", "one", "two", "--json"]));
    assert_eq!(j["kind"], "runs");
    assert_eq!(j["groups"].as_array().unwrap().len(), 7);
    assert_eq!(j["groups"][0]["rows"][0]["cells"][0]["summary"]["n"], 3);

    // show: text unchanged, plus Markdown and CSV through the exporters.
    let shown = ok(&s.vmscale(&["show", "one"]));
    assert!(shown.starts_with("run 1 [one]: pft"), "{shown}");
    let md = ok(&s.vmscale(&["show", "one", "--markdown"]));
    assert!(md.contains("| case | figure | n | Min |"), "{md}");
    let csv = ok(&s.vmscale(&["show", "one", "--csv"]));
    // 1 warm-up + 3 samples, each with several figures.
    assert!(csv.starts_with("run,case,variant,tasks,knobs,seq,warmup,flagged,figure,value\n"));
    assert!(
        csv.lines().filter(|l| l.contains(",fault/wsec,")).count() == 4,
        "{csv}"
    );
    let j = json(&s.vmscale(&["show", "one", "--json"]));
    assert_eq!(j["meta"]["label"], "one");
}
