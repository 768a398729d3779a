//! `vmscale import` of pft tables in the shapes mail gives them
//! (tests/fixtures/mail): every stored figure is one printed in the mail,
//! one case per (size, threads, CLine), no column invented, precision kept,
//! and a row that does not parse fails the import unless skipped.

use crate::common::{Scratch, json, ok, stderr};
use serde_json::Value;

fn fixture(name: &str) -> String {
    format!("{}/tests/fixtures/mail/{name}", env!("CARGO_MANIFEST_DIR"))
}

/// Imports a fixture; returns the runs and the file's text.
fn import(s: &Scratch, name: &str) -> (Vec<Value>, String) {
    let path = fixture(name);
    let runs = json(&s.vmscale(&["import", &path, "--json"]));
    let text = std::fs::read_to_string(&path).unwrap();
    (runs.as_array().unwrap().clone(), text)
}

/// Every figure of every sample, as Rust prints the number, is in the text
/// on one line together with the row's thread count (so none was made up
/// or rounded); returns the number of rows.
fn figures_are_in_the_text(run: &Value, text: &str) -> usize {
    let lines: Vec<&str> = text.lines().collect();
    let mut rows = 0;
    for c in run["cases"].as_array().unwrap() {
        let tasks = c["case"]["tasks"].as_u64().unwrap().to_string();
        for smp in c["samples"].as_array().unwrap() {
            rows += 1;
            let figs = smp["data"]["figures"].as_object().unwrap();
            let printed: Vec<String> = [
                "gb",
                "mb",
                "rep",
                "cline",
                "user",
                "system",
                "wall",
                "flt/cpu/s",
                "fault/wsec",
            ]
            .iter()
            .filter_map(|k| figs.get(*k).and_then(Value::as_f64))
            .map(|v| format!("{v}"))
            .collect();
            assert!(printed.len() >= 7, "figures missing: {figs:?}");
            let found = lines.iter().any(|l| {
                let words: Vec<&str> = l.split_whitespace().collect();
                words.contains(&tasks.as_str()) && printed.iter().all(|p| l.contains(p.as_str()))
            });
            // A table on one long line (line breaks lost) holds them all too.
            assert!(
                found || printed.iter().all(|p| text.contains(p.as_str())),
                "row with {tasks} threads and {printed:?} is not in the text"
            );
        }
    }
    rows
}

fn variants(run: &Value) -> Vec<String> {
    run["cases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["case"]["variant"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn quoted_reply_at_two_depths() {
    let s = Scratch::new("mail-quoted");
    let (runs, text) = import(&s, "quoted-reply.txt");
    assert_eq!(runs.len(), 2);
    assert_eq!(figures_are_in_the_text(&runs[0], &text), 3);
    assert_eq!(figures_are_in_the_text(&runs[1], &text), 2);
    assert_eq!(runs[1]["cases"][1]["case"]["tasks"], 128);
}

#[test]
fn eight_columns_without_cline_invent_nothing() {
    let s = Scratch::new("mail-8col");
    let (runs, text) = import(&s, "eight-columns-threads.txt");
    assert_eq!(runs.len(), 1);
    assert_eq!(figures_are_in_the_text(&runs[0], &text), 3);
    let first = &runs[0]["cases"][0]["samples"][0]["data"]["figures"];
    assert!(first["cline"].is_null(), "CLine invented: {first}");
    assert_eq!(first["rep"], 3.0);
    let shown = ok(&s.vmscale(&["show", "last"]));
    let header = shown.lines().find(|l| l.contains("Threads")).unwrap();
    assert!(!header.contains("CLine"), "{shown}");
    assert!(shown.contains("     1      2.58s"), "aligned: {shown}");
}

#[test]
fn megabytes_and_precision_kept() {
    let s = Scratch::new("mail-mb");
    let (runs, text) = import(&s, "megabytes.txt");
    assert_eq!(figures_are_in_the_text(&runs[0], &text), 2);
    let first = &runs[0]["cases"][0]["samples"][0]["data"]["figures"];
    assert_eq!(first["mb"], 512.0);
    assert_eq!(first["bytes"], 512.0 * 1048576.0);
    let shown = ok(&s.vmscale(&["show", "last"]));
    assert!(shown.contains("Mb"), "{shown}");
    assert!(
        shown.contains("231.58s") && shown.contains("53723.537"),
        "{shown}"
    );
}

#[test]
fn run_together_columns_are_split() {
    let s = Scratch::new("mail-together");
    let (runs, text) = import(&s, "run-together.txt");
    assert_eq!(figures_are_in_the_text(&runs[0], &text), 2);
    let f = |i: usize, k: &str| runs[0]["cases"][i]["samples"][0]["data"]["figures"][k].clone();
    assert_eq!(f(0, "system"), 13003.28);
    assert_eq!(f(0, "wall"), 159.25);
    assert_eq!(f(1, "flt/cpu/s"), 14084.866);
    assert_eq!(f(1, "fault/wsec"), 1208616.196);
}

#[test]
fn prose_between_rows_of_two_sizes() {
    let s = Scratch::new("mail-sizes");
    let (runs, text) = import(&s, "sizes-and-prose.txt");
    assert_eq!(runs.len(), 1, "prose does not end the table");
    assert_eq!(figures_are_in_the_text(&runs[0], &text), 4);
    // One case per (size, threads): four, not two pooled ones.
    assert_eq!(variants(&runs[0]), ["64Gb", "64Gb", "256Gb", "256Gb"]);
}

#[test]
fn lameter_one_line_archive() {
    let s = Scratch::new("mail-oneline");
    let (runs, text) = import(&s, "lameter-2005-one-line.txt");
    assert_eq!(runs.len(), 6);
    let rows: usize = runs.iter().map(|r| figures_are_in_the_text(r, &text)).sum();
    assert_eq!(rows, 31);
    // Dated by the Date header flattened into the one line: Tue, 6 Sep
    // 2005 11:31:44 -0700 (PDT).
    for r in &runs {
        assert_eq!(
            r["meta"]["started_at"], "2005-09-06T18:31:44.000Z",
            "{}",
            r["meta"]
        );
    }
}

#[test]
fn every_seed_is_dated_by_its_mail() {
    // Seed 000 whole; the heads of the others as their archives show
    // them (title, author, date).
    for (file, date) in [
        ("lameter-2005-one-line.txt", "2005-09-06T18:31:44.000Z"),
        ("numa-gorman-2015-head.txt", "2015-03-23T12:24:00.000Z"),
        ("rmap-morton-2002-head.txt", "2002-08-03T21:40:41.000Z"),
        ("pcp-steiner-2005-head.txt", "2005-04-05T05:28:27.000Z"),
        ("vmq-dillon-2011-head.txt", "2011-10-28T16:49:04.000Z"),
    ] {
        let text = std::fs::read_to_string(fixture(file)).unwrap();
        assert_eq!(
            vmscale::import::mail_date(&text).as_deref(),
            Some(date),
            "{file}"
        );
    }
}

#[test]
fn a_bad_row_fails_the_import_with_its_line_unless_skipped() {
    let s = Scratch::new("mail-bad");
    let path = fixture("bad-row.txt");
    let o = s.vmscale(&["import", &path]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("line 3:"), "{}", stderr(&o));
    assert!(stderr(&o).contains("--skip-bad-rows"), "{}", stderr(&o));
    assert!(!s.db().exists(), "nothing stored");
    let o = s.vmscale(&["import", &path, "--skip-bad-rows", "--json"]);
    assert!(stderr(&o).contains("left out line 3"), "{}", stderr(&o));
    let runs = json(&o);
    let text = std::fs::read_to_string(&path).unwrap();
    assert_eq!(figures_are_in_the_text(&runs[0], &text), 2);
}

#[test]
fn a_mail_is_dated_by_its_date_header() {
    // Its Date: Tue, 6 Sep 2005 14:48:31 -0700 (PDT); a file without
    // headers is dated by the import.
    let s = Scratch::new("mail-date");
    let (runs, _) = import(&s, "with-headers.eml");
    let meta = &runs[0]["meta"];
    assert_eq!(meta["started_at"], "2005-09-06T21:48:31.000Z", "{meta}");
    assert_eq!(meta["ended_at"], "2005-09-06T21:48:31.000Z", "{meta}");
    let sample = &runs[0]["cases"][0]["samples"][0];
    assert_eq!(sample["taken_at"], "2005-09-06T21:48:31.000Z");
    let listed = ok(&s.vmscale(&["list"]));
    assert!(listed.contains("2005-09-06 21:48"), "{listed}");
    let (runs, _) = import(&s, "sizes-and-prose.txt");
    let started = runs[0]["meta"]["started_at"].as_str().unwrap();
    assert!(started > "2026", "{started}");
}
