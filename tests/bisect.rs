//! `vmscale bisect` end to end. Bad input is refused before anything is
//! built or booted, with nothing stored (in the ordinary run). A bisection
//! over two real Debian kernels (cloud and generic 6.1, whose anonymous
//! fault rates differ by far more than TCG's noise) names the second as
//! the first bad, confirms it against the first, stores its runs under
//! its key (history shows them), and run again boots nothing; `bisect
//! judge` then reuses the stored ends and exits as `git bisect run`
//! wants. The boots take minutes under TCG, so that test is `#[ignore]`d
//! and run by hand (`cargo test --test all -- --ignored bisect::`); it is
//! not in .ci/run, for it has not yet run to its end here (TCG's
//! between-boot spread on a loaded host left the ends undecided,
//! docs/bisect.md).
//! Under CI=true a missing component fails it.

use crate::common;

use std::path::Path;
use std::process::{Command, Output};

fn bisect(db: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_vmscale"))
        .arg("--db")
        .arg(db)
        .arg("bisect")
        .args(args)
        .env("VMSCALE_CACHE_DIR", db.with_extension("cache"))
        .output()
        .expect("run vmscale bisect")
}

fn sh(dir: &Path, script: &str) {
    let o = Command::new("sh")
        .arg("-c")
        .arg(script)
        .current_dir(dir)
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@localhost")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@localhost")
        .output()
        .unwrap();
    assert!(o.status.success(), "{script}: {}", common::stderr(&o));
}

const PLAN: [&str; 9] = [
    "--", "run", "pft", "--tasks", "1", "--size", "16M", "--reps", "3",
];

#[test]
fn bad_input_is_refused_before_anything_boots_and_nothing_is_stored() {
    if !common::guest::available("bisect bad input") {
        return;
    }
    let k = common::guest::kernels();
    let (a, b) = (common::guest::s(&k[0]), common::guest::s(&k[1]));
    let scratch = common::Scratch::new("bisect-bad");
    let db = scratch.db();
    let repo = scratch.dir.join("repo");
    std::fs::create_dir_all(repo.join("arch/x86")).unwrap();
    std::fs::write(repo.join("Makefile"), "all:\n").unwrap();
    sh(
        &repo,
        "git init -q . && git add -A && git commit -qm one && echo x > f && git add f \
         && git commit -qm two",
    );
    let repo = common::guest::s(&repo);
    let pft = &PLAN[..];
    let cases: Vec<(Vec<&str>, &[&str], &str)> = vec![
        (vec![], pft, "at least two"),
        (vec!["--kernel", a], pft, "at least two"),
        (vec!["--kernel", a, "--kernel", a], pft, "same image"),
        (
            vec!["--kernel", a, "--kernel", "/nonexistent/k"],
            pft,
            "/nonexistent/k",
        ),
        (vec!["--kernel", a, "--kernel", b], &[], "give a plan"),
        (
            vec!["--kernel", a, "--kernel", b],
            &["--", "sysinfo"],
            "runs a workload",
        ),
        (
            vec!["--kernel", a, "--kernel", b, "--decide", "150%"],
            pft,
            "'150%' for '--decide",
        ),
        (
            vec!["--kernel", a, "--kernel", b, "--max-rounds", "2"],
            pft,
            "'2' for '--max-rounds",
        ),
        (
            vec!["--kernel", a, "--kernel", b, "--figure", "bogus"],
            pft,
            "--figure bogus",
        ),
        (
            vec!["--tree", repo, "--good", "HEAD", "--bad", "HEAD~1"],
            pft,
            "not an ancestor",
        ),
        (
            vec!["--tree", repo, "--good", "HEAD", "--bad", "HEAD"],
            pft,
            "same commit",
        ),
        (
            vec!["--tree", repo, "--good", "nope", "--bad", "HEAD"],
            pft,
            "--good nope",
        ),
        (vec!["--tree", repo, "--good", "HEAD~1"], pft, "--bad"),
        (
            vec![
                "--kernel", a, "--tree", repo, "--good", "HEAD~1", "--bad", "HEAD",
            ],
            pft,
            "--tree",
        ),
    ];
    for (mut args, plan, why) in cases {
        args.extend(plan);
        let o = bisect(&db, &args);
        let err = common::stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(why), "{args:?}: {err}");
        assert!(!db.exists(), "{args:?} wrote a store");
    }
    // judge's errors stop `git bisect run`: 128, not 2 (which git takes for bad).
    let mut args = vec![
        "judge",
        "--good",
        a,
        "--bad",
        b,
        "--kernel",
        "/nonexistent/k",
    ];
    args.extend(pft);
    let o = bisect(&db, &args);
    assert_eq!(o.status.code(), Some(128), "{}", common::stderr(&o));
    assert!(common::stderr(&o).contains("/nonexistent/k"));
    assert!(!db.exists());
}

fn run_json(db: &Path, args: &[&str]) -> serde_json::Value {
    let o = bisect(db, args);
    assert_eq!(o.status.code(), Some(0), "{}", common::stderr(&o));
    serde_json::from_slice(&o.stdout).expect("bisect --json")
}

#[test]
#[ignore = "boots 18 TCG guests (minutes): run by hand with --ignored, not in .ci/run"]
fn a_list_bisection_names_and_confirms_the_bad_kernel_and_resumes_from_the_store() {
    if !common::guest::available("bisect over kernels") {
        return;
    }
    let k = common::guest::kernels();
    let (generic, cloud) = (common::guest::s(&k[0]), common::guest::s(&k[1]));
    let scratch = common::Scratch::new("bisect-list");
    let db = scratch.db();
    let mut args = vec![
        "--kernel", cloud, "--kernel", generic, "--accel", "tcg", "--mem", "512M", "--json",
    ];
    args.extend(PLAN);
    let j = run_json(&db, &args);
    assert_eq!(j["answer"], "found", "{j:#}");
    assert_eq!(j["first_bad"], generic);
    assert_eq!(
        j["steps"].as_array().map(Vec::len),
        Some(0),
        "two entries: no step"
    );
    assert_eq!(j["ends"]["verdict"], "different");
    let c = &j["confirmation"];
    assert_eq!(
        (c["kernel"].as_str(), c["against"].as_str()),
        (Some(generic), Some(cloud))
    );
    assert_eq!(c["verdict"], "different", "{c:#}");
    assert!(c["rounds"].as_u64().unwrap() >= 3);
    assert_eq!(c["stored_rounds"], 0);
    let (lo, hi) = (c["ci"][0].as_f64().unwrap(), c["ci"][1].as_f64().unwrap());
    let r = c["ratio"].as_f64().unwrap();
    assert!(lo < r && r < hi && (hi < 0.9 || lo > 1.1), "{c:#}");
    let key = j["key"].as_str().unwrap().to_string();
    assert!(
        j["summary"].as_str().unwrap().starts_with("fault/wsec "),
        "{j:#}"
    );

    // Stored under the key: ends and confirmation, two kernels each.
    let list = common::vmscale_with_db(&db, &["list", "--label", &key, "--json"]);
    let runs = common::json(&list);
    assert_eq!(runs.as_array().map(Vec::len), Some(4), "{runs:#}");
    let h = common::vmscale_with_db(&db, &["history", "--label", &key, "--by", "kernel"]);
    assert_eq!(h.status.code(), Some(0), "{}", common::stderr(&h));
    assert!(common::stdout(&h).contains(&format!("{key}/")));

    // Run again: every pair is in the store, nothing boots.
    let again = run_json(&db, &args);
    assert_eq!(again["first_bad"], generic);
    assert_eq!(again["key"], key.as_str());
    for r in [&again["ends"], &again["confirmation"]] {
        assert_eq!(r["stored_rounds"], r["rounds"], "{r:#}");
        assert_eq!(r["seconds"].as_f64(), Some(0.0));
    }
    let runs = common::json(&common::vmscale_with_db(
        &db,
        &["list", "--label", &key, "--json"],
    ));
    assert_eq!(runs.as_array().map(Vec::len), Some(4));

    // judge: the ends are found in the store (same key), the candidate
    // (the bad image) is measured against good: exit 1, like bad.
    let mut judge = vec![
        "judge", "--good", cloud, "--bad", generic, "--kernel", generic, "--accel", "tcg", "--mem",
        "512M",
    ];
    judge.extend(PLAN);
    let o = bisect(&db, &judge);
    assert_eq!(o.status.code(), Some(1), "{}", common::stderr(&o));
    assert!(
        common::stderr(&o).contains("like bad"),
        "{}",
        common::stderr(&o)
    );
    let runs = common::json(&common::vmscale_with_db(
        &db,
        &["list", "--label", &key, "--json"],
    ));
    assert_eq!(
        runs.as_array().map(Vec::len),
        Some(6),
        "judge added its step's two runs"
    );
}
