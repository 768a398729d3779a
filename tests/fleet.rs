//! Many machines, one history: merging SQLite stores, comparing runs of
//! different hosts, and the store on a real PostgreSQL server (the one
//! `.ci/run` starts, named by VMSCALE_TEST_PG).

use crate::common::pg::PgDb;
use crate::common::{Scratch, json, ok, stderr, vmscale_with_db};
use std::path::Path;
use std::process::{Command, Stdio};

const SMALL: &[&str] = &[
    "run", "pft", "--tasks", "1", "--size", "4M", "--reps", "2", "--warmup", "0",
];

fn list(db: &Path) -> Vec<serde_json::Value> {
    json(&vmscale_with_db(db, &["list", "--json"]))
        .as_array()
        .cloned()
        .unwrap_or_default()
}

fn run_labelled(db: &Path, label: &str) {
    let mut args = SMALL.to_vec();
    args.extend(["--label", label]);
    ok(&vmscale_with_db(db, &args));
}

#[test]
fn merging_two_stores_twice_gives_each_run_once() {
    let s = Scratch::new("merge");
    let a = s.dir.join("node-a.db");
    let b = s.dir.join("node-b.db");
    run_labelled(&a, "a1");
    run_labelled(&b, "b1");
    run_labelled(&b, "b2");
    let into = s.db();
    let (a, b) = (a.to_str().unwrap(), b.to_str().unwrap());
    ok(&s.vmscale(&["merge", a, b]));
    ok(&s.vmscale(&["merge", b, a]));
    let merged = list(&into);
    let labels: Vec<&str> = merged
        .iter()
        .map(|r| r["label"].as_str().unwrap())
        .collect();
    assert_eq!(labels, ["a1", "b1", "b2"]);
    // Samples and the machine snapshot came along.
    let src = json(&vmscale_with_db(Path::new(b), &["show", "b2", "--json"]));
    let got = json(&s.vmscale(&["show", "b2", "--json"]));
    assert_eq!(got["meta"]["machine"], src["meta"]["machine"]);
    assert!(got["meta"]["machine"]["hostname"].is_string());
    assert_eq!(got["cases"], src["cases"]);
    assert_eq!(merged[2]["samples"], 2);
    assert_eq!(merged[2]["host"], list(Path::new(b))[1]["host"]);
}

#[test]
fn merge_refuses_a_foreign_file_and_copies_nothing() {
    let s = Scratch::new("merge-bad");
    let good = s.dir.join("good.db");
    run_labelled(&good, "g");
    let bad = s.dir.join("notes.txt");
    std::fs::write(&bad, "not a store").unwrap();
    let out = s.vmscale(&["merge", good.to_str().unwrap(), bad.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("notes.txt"), "{}", stderr(&out));
    assert!(!s.db().exists(), "the target store was written");
}

#[test]
fn compare_across_hosts_says_what_differs() {
    let s = Scratch::new("hosts");
    run_labelled(&s.db(), "here");
    run_labelled(&s.db(), "there");
    // The second run as if measured on another machine.
    rusqlite::Connection::open(s.db())
        .unwrap()
        .execute(
            "UPDATE runs SET host = 'node-b', machine = json_set(machine,
                 '$.hostname', 'node-b', '$.kernel_release', '6.99.0-other',
                 '$.mem_total_kib', 1024, '$.cpu_model', 'Other CPU')
             WHERE label = 'there'",
            [],
        )
        .unwrap();
    let text = ok(&s.vmscale(&["compare", "here", "there"]));
    for what in [
        "hostname",
        "kernel_release",
        "mem_total_kib",
        "cpu_model",
        "node-b",
    ] {
        assert!(text.contains(what), "{what} missing:\n{text}");
    }
    let listed = ok(&s.vmscale(&["list"]));
    assert!(listed.contains("node-b"), "{listed}");
}

fn spawn(db: &Path, args: &[&str]) -> std::process::Child {
    Command::new(env!("CARGO_BIN_EXE_vmscale"))
        .args(args)
        .env("VMSCALE_DB", db)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

#[test]
fn postgres_two_concurrent_runs_then_compare() {
    let Some(pg) = PgDb::new("two") else { return };
    let mut a = SMALL.to_vec();
    a[3] = "1,2";
    a.extend(["--label", "a"]);
    let mut b = a.clone();
    *b.last_mut().unwrap() = "b";
    let children = [spawn(pg.db(), &a), spawn(pg.db(), &b)];
    for c in children {
        let out = c.wait_with_output().unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
    }
    let runs = list(pg.db());
    assert_eq!(runs.len(), 2);
    for r in &runs {
        assert_eq!(r["status"], "complete");
        assert_eq!(r["samples"], 4);
        assert!(r["host"].is_string());
    }
    let text = ok(&vmscale_with_db(pg.db(), &["compare", "a", "b"]));
    assert!(text.contains("fault/wsec"), "{text}");
}

#[test]
fn postgres_eight_runs_at_once_on_a_new_database() {
    let Some(pg) = PgDb::new("eight") else { return };
    let children: Vec<_> = (0..8).map(|_| spawn(pg.db(), SMALL)).collect();
    for c in children {
        let out = c.wait_with_output().unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
    }
    let runs = list(pg.db());
    assert_eq!(runs.len(), 8);
    assert!(runs.iter().all(|r| r["samples"] == 2));
}

#[test]
fn postgres_takes_merges_and_refuses_a_foreign_database() {
    let Some(pg) = PgDb::new("merge") else { return };
    let s = Scratch::new("pg-merge");
    let a = s.dir.join("a.db");
    run_labelled(&a, "from-a");
    run_labelled(&a, "again-a");
    let a = a.to_str().unwrap();
    for _ in 0..2 {
        ok(&vmscale_with_db(pg.db(), &["merge", a]));
    }
    let runs = list(pg.db());
    let labels: Vec<&str> = runs.iter().map(|r| r["label"].as_str().unwrap()).collect();
    assert_eq!(labels, ["from-a", "again-a"]);
    let src = json(&vmscale_with_db(
        Path::new(a),
        &["show", "from-a", "--json"],
    ));
    let got = json(&vmscale_with_db(pg.db(), &["show", "from-a", "--json"]));
    assert_eq!(got["cases"], src["cases"]);
    assert_eq!(got["meta"]["machine"], src["meta"]["machine"]);

    let other = PgDb::new("foreign").unwrap();
    postgres::Client::connect(other.db().to_str().unwrap(), postgres::NoTls)
        .unwrap()
        .batch_execute("CREATE TABLE contacts (name TEXT)")
        .unwrap();
    let out = vmscale_with_db(other.db(), &["list"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("not a vmscale store"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn postgres_marks_a_killed_run_incomplete_and_keeps_its_samples() {
    let Some(pg) = PgDb::new("killed") else {
        return;
    };
    ok(&vmscale_with_db(pg.db(), SMALL)); // the schema exists before the child
    let mut child = spawn(
        pg.db(),
        &[
            "run", "pft", "--tasks", "1", "--size", "4M", "--reps", "100000",
        ],
    );
    let mut samples = 0;
    for _ in 0..600 {
        std::thread::sleep(std::time::Duration::from_millis(50));
        samples = list(pg.db())
            .get(1)
            .map_or(0, |r| r["samples"].as_i64().unwrap_or(0));
        if samples >= 2 {
            break;
        }
    }
    assert!(samples >= 2, "no samples appeared");
    assert_eq!(list(pg.db())[1]["status"], "running");
    child.kill().unwrap();
    child.wait().unwrap();
    let after = &list(pg.db())[1];
    assert_eq!(after["status"], "incomplete");
    assert!(after["samples"].as_i64().unwrap() >= samples);
}
