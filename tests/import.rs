//! `vmscale import`: the seed 000 pft tables (one long line, Rep column),
//! the pft 0.12 layout without Rep, will-it-scale CSV; show, fit and report
//! then work on the imported runs.

use crate::common;

use crate::common::{Scratch, fig, json, ok, stdout};

const SEED: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/mail/lameter-2005-one-line.txt"
);

#[test]
fn seed_000_rows_equal_the_text() {
    let text = std::fs::read_to_string(SEED).expect("the seed 000 fixture");
    let s = Scratch::new("import-seed");
    let runs = json(&s.vmscale(&["import", SEED, "--json", "--label", "lameter"]));
    let runs = runs.as_array().unwrap();
    let rows: Vec<usize> = runs
        .iter()
        .map(|r| {
            r["cases"]
                .as_array()
                .unwrap()
                .iter()
                .map(|c| c["samples"].as_array().unwrap().len())
                .sum()
        })
        .collect();
    assert_eq!(rows, vec![10, 7, 4, 4, 3, 3], "tables and rows in seed 000");

    let words: Vec<&str> = text.split_whitespace().collect();
    let joined = words.join(" ");
    for r in runs {
        assert!(
            r["meta"]["origin"]
                .as_str()
                .unwrap()
                .starts_with("imported: ")
        );
        assert!(
            r["meta"]["origin"]
                .as_str()
                .unwrap()
                .contains("lameter-2005-one-line.txt pft-lameter")
        );
        assert_eq!(r["meta"]["workload"], "pft");
        for c in r["cases"].as_array().unwrap() {
            let tasks = c["case"]["tasks"].as_u64().unwrap();
            for smp in c["samples"].as_array().unwrap() {
                // Rebuild the row as Lameter printed it; it must be in the text.
                let line = format!(
                    "{} {} {} {} {:.2}s {:.2}s {:.2}s {:.3} {:.3}",
                    fig(smp, "gb"),
                    fig(smp, "rep"),
                    tasks,
                    fig(smp, "cline"),
                    fig(smp, "user"),
                    fig(smp, "system"),
                    fig(smp, "wall"),
                    fig(smp, "flt/cpu/s"),
                    fig(smp, "fault/wsec"),
                );
                assert!(joined.contains(&line), "row not in the seed: {line}");
                assert_eq!(fig(smp, "bytes"), fig(smp, "gb") * (1u64 << 30) as f64);
            }
        }
    }
    // Two rows checked by hand against the mail.
    let first = &runs[0]["cases"][0]["samples"][0];
    assert_eq!(fig(first, "fault/wsec"), 56576.495);
    assert_eq!(fig(first, "system"), 219.51);
    let last = &runs[5]["cases"][2]["samples"][0];
    assert_eq!(runs[5]["cases"][2]["case"]["tasks"], 32);
    assert_eq!(fig(last, "flt/cpu/s"), 19063.949);
    assert_eq!(fig(last, "wall"), 129.37);

    // show reprints the table; fit and report work on the imported run.
    let shown = ok(&s.vmscale(&["show", "lameter/1"]));
    assert!(
        shown.contains(
            "   64   3  512     1    104.45s   1137.74s     15.09s    10129.571   833348.748"
        ),
        "{shown}"
    );
    let fit = json(&s.vmscale(&["fit", "1", "--json", "--extrapolate", "1024"]));
    assert_eq!(fit["fit"]["points"], 10);
    assert_eq!(fit["extrapolation"][0]["beyond_data"], true);
    let html = s.dir.join("r.html");
    ok(&s.vmscale(&["report", "1", "2", "--html", html.to_str().unwrap()]));
    assert!(
        std::fs::read_to_string(&html)
            .unwrap()
            .contains("no machine snapshot recorded")
    );
}

#[test]
fn pft_012_layout_and_will_it_scale() {
    let s = Scratch::new("import-other");
    let pft = s.dir.join("pft012.txt");
    std::fs::write(
        &pft,
        "pft 0.12\n  Gb Thr CLine   User     System     Wall    flt/cpu/s fault/wsec\n\
         \x20  1   1   1    0.05s      0.22s   0.27s  94017.236  93990.393\n\
         \x20  1   2   1    0.06s      0.30s   0.19s  70000.000 130000.500\n",
    )
    .unwrap();
    let runs = json(&s.vmscale(&["import", pft.to_str().unwrap(), "--json"]));
    let r = &runs[0];
    assert!(
        r["meta"]["origin"]
            .as_str()
            .unwrap()
            .ends_with("pft012.txt pft-0.12")
    );
    assert_eq!(fig(&r["cases"][1]["samples"][0], "fault/wsec"), 130000.5);
    // No Rep column in pft 0.12: none is invented.
    assert!(r["cases"][0]["samples"][0]["data"]["figures"]["rep"].is_null());

    let wis = s.dir.join("page_fault1.csv");
    std::fs::write(
        &wis,
        "tasks,processes,processes_idle,threads,threads_idle,linear\n\
         1,500000,49.9,498000,49.8,500000\n2,990000,0.4,700000,0.5,1000000\n\
         3,1400000,0.2,650000,0.3,1500000\n",
    )
    .unwrap();
    let runs = json(&s.vmscale(&["import", wis.to_str().unwrap(), "--json"]));
    let r = &runs[0];
    // A file named after a test vmscale runs itself joins its `wis` runs.
    assert_eq!(r["meta"]["workload"], "wis");
    assert_eq!(r["meta"]["config"]["test"], "page_fault1");
    assert_eq!(r["cases"].as_array().unwrap().len(), 6);
    let fit = ok(&s.vmscale(&["fit", "last", "--variant", "thread"]));
    assert!(
        fit.contains("ops/s") && fit.contains("3 distinct N"),
        "{fit}"
    );
}

#[test]
fn bad_files_are_refused_and_nothing_stored() {
    let s = Scratch::new("import-bad");
    let f = s.dir.join("prose.txt");
    std::fs::write(&f, "no tables here\n").unwrap();
    let o = s.vmscale(&["import", f.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(common::stderr(&o).contains("no table found"));
    assert!(!s.db().exists(), "nothing written to the store");
    let o = s.vmscale(&["import", s.dir.join("missing").to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    let pairs = s.dir.join("pairs.txt");
    std::fs::write(&pairs, "1 100\n2 190\n4 340\n8 520\n").unwrap();
    let out = stdout(&s.vmscale(&["fit", "--file", pairs.to_str().unwrap()]));
    assert!(
        out.contains("4 distinct N") && out.contains("extrapolated"),
        "{out}"
    );
}
