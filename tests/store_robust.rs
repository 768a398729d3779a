//! The SQLite store under stress and abuse: many writers on a new store,
//! read-only stores, foreign files, damaged rows, killed runs, and runs
//! that fail before their first sample.

use crate::common;

use crate::common::{Scratch, json, ok, stderr, stdout};
use std::process::{Command, Stdio};

/// A small fixed run: one task, 4 MiB, 2 samples, no warm-up.
const SMALL: &[&str] = &[
    "run", "pft", "--tasks", "1", "--size", "4M", "--reps", "2", "--warmup", "0",
];

fn runs(s: &Scratch) -> Vec<serde_json::Value> {
    json(&s.vmscale(&["list", "--json"]))
        .as_array()
        .cloned()
        .unwrap_or_default()
}

fn raw(s: &Scratch) -> rusqlite::Connection {
    rusqlite::Connection::open(s.db()).unwrap()
}

#[test]
fn eight_runs_at_once_on_a_new_store_all_succeed() {
    let s = Scratch::new("eight");
    let children: Vec<_> = (0..8)
        .map(|_| {
            Command::new(env!("CARGO_BIN_EXE_vmscale"))
                .args(SMALL)
                .env("VMSCALE_DB", s.db())
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for c in children {
        let out = c.wait_with_output().unwrap();
        assert!(out.status.success(), "a run failed: {}", stderr(&out));
    }
    let listed = runs(&s);
    assert_eq!(listed.len(), 8);
    for r in &listed {
        assert_eq!(r["status"], "complete");
        assert_eq!(r["samples"], 2);
    }
    // Every run has its own global identity.
    let uuids: std::collections::BTreeSet<String> = raw(&s)
        .prepare("SELECT uuid FROM runs")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(uuids.len(), 8);
}

/// Runs vmscale as the user nobody (to meet a store it cannot write).
fn as_nobody(s: &Scratch, args: &[&str]) -> std::process::Output {
    Command::new("setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
        .arg(env!("CARGO_BIN_EXE_vmscale"))
        .args(args)
        .env("VMSCALE_DB", s.db())
        .env("HOME", "/nonexistent")
        .output()
        .unwrap()
}

fn files(s: &Scratch) -> Vec<(String, Vec<u8>)> {
    let mut all: Vec<_> = std::fs::read_dir(&s.dir)
        .unwrap()
        .map(|e| {
            let p = e.unwrap().path();
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            let bytes = std::fs::read(&p).unwrap_or_default();
            (name, bytes)
        })
        .collect();
    all.sort();
    all
}

#[test]
fn a_read_only_store_is_readable_by_every_reading_command() {
    if !common::is_root() {
        common::skip("needs root to run a command as another user");
        return;
    }
    let s = Scratch::new("readonly");
    ok(&s.vmscale(&[
        "run", "pft", "--tasks", "1,2", "--size", "4M", "--reps", "2",
    ]));
    ok(&s.vmscale(SMALL));
    // A run killed long ago, shown incomplete though it cannot be marked.
    raw(&s)
        .execute(
            "UPDATE runs SET status = 'running', boot_id = 'an-earlier-boot' WHERE id = 2",
            [],
        )
        .unwrap();
    let before = files(&s);
    assert_eq!(before.len(), 1, "only the store file: {before:?}");
    let out_dir = Scratch::new("readonly-out");
    std::fs::set_permissions(
        &out_dir.dir,
        std::os::unix::fs::PermissionsExt::from_mode(0o777),
    )
    .unwrap();
    let html = out_dir.dir.join("r.html");
    let html = html.to_str().unwrap();
    for args in [
        &["list"][..],
        &["list", "--json"],
        &["show", "1"],
        &["show", "last", "--csv"],
        &["compare", "1", "2"],
        &["report", "1", "--html", html],
        &["fit", "1"],
    ] {
        let out = as_nobody(&s, args);
        assert!(
            out.status.success(),
            "{args:?} failed on a read-only store: {}",
            stderr(&out)
        );
        assert!(!stderr(&out).contains("readonly"), "{}", stderr(&out));
    }
    let listed = stdout(&as_nobody(&s, &["list"]));
    assert!(listed.contains("incomplete"), "{listed}");
    assert_eq!(files(&s), before, "a reading command changed the store");
}

#[test]
fn a_foreign_sqlite_file_is_refused_and_left_alone() {
    let s = Scratch::new("foreign");
    rusqlite::Connection::open(s.db())
        .unwrap()
        .execute_batch("CREATE TABLE contacts (name TEXT); INSERT INTO contacts VALUES ('x');")
        .unwrap();
    let before = files(&s);
    for args in [&["list"][..], SMALL] {
        let out = s.vmscale(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
        assert!(
            stderr(&out).contains("is not a vmscale store"),
            "{}",
            stderr(&out)
        );
        assert!(stderr(&out).contains("contacts"), "{}", stderr(&out));
    }
    assert_eq!(files(&s), before, "the foreign file was changed");
    // An empty file is adopted as a new store.
    let empty = Scratch::new("empty");
    std::fs::write(empty.db(), b"").unwrap();
    ok(&empty.vmscale(SMALL));
    assert_eq!(runs(&empty).len(), 1);
    let app: i64 = raw(&empty)
        .query_row("PRAGMA application_id", [], |r| r.get(0))
        .unwrap();
    assert_ne!(app, 0, "the store is not marked as vmscale's");
}

#[test]
fn a_damaged_row_is_named_and_the_others_listed() {
    let s = Scratch::new("damaged");
    for _ in 0..3 {
        ok(&s.vmscale(SMALL));
    }
    raw(&s)
        .execute("UPDATE runs SET started_at = x'00ff' WHERE id = 2", [])
        .unwrap();
    let out = s.vmscale(&["list"]);
    let text = ok(&out);
    let ids: Vec<&str> = text
        .lines()
        .skip(1)
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    assert_eq!(ids, ["1", "3"], "{text}");
    assert!(stderr(&out).contains("run 2"), "{}", stderr(&out));
    assert!(stderr(&out).contains("started_at"), "{}", stderr(&out));
    // `show` of the damaged run says which run and column, exit 1, no panic.
    let shown = s.vmscale(&["show", "2"]);
    assert_eq!(shown.status.code(), Some(1), "{}", stderr(&shown));
    assert!(stderr(&shown).contains("run 2"), "{}", stderr(&shown));
}

#[test]
fn corrupt_json_and_unknown_status_are_named_not_read_as_empty() {
    let s = Scratch::new("corrupt-json");
    for _ in 0..4 {
        ok(&s.vmscale(SMALL));
    }
    let db = raw(&s);
    db.execute("UPDATE runs SET config = '{\"thp\": ' WHERE id = 1", [])
        .unwrap();
    db.execute("UPDATE runs SET status = 'paused' WHERE id = 2", [])
        .unwrap();
    db.execute(
        "UPDATE samples SET vmstat = 'not json' WHERE run_id = 3 AND id = \
         (SELECT MIN(id) FROM samples WHERE run_id = 3)",
        [],
    )
    .unwrap();
    for (id, names) in [
        ("1", "config column"),
        ("2", "unknown status 'paused'"),
        ("3", "sample vmstat column"),
    ] {
        let shown = s.vmscale(&["show", id]);
        let err = stderr(&shown);
        assert_eq!(shown.status.code(), Some(1), "{err}");
        assert!(err.contains(&format!("run {id}")), "{err}");
        assert!(err.contains(names), "{err}");
    }
    // The undamaged run still shows.
    ok(&s.vmscale(&["show", "4"]));
}

fn sample_count(s: &Scratch) -> i64 {
    rusqlite::Connection::open(s.db())
        .ok()
        .and_then(|c| {
            c.query_row("SELECT COUNT(*) FROM samples WHERE warmup = 0", [], |r| {
                r.get(0)
            })
            .ok()
        })
        .unwrap_or(0)
}

#[test]
fn a_killed_run_is_marked_incomplete_with_its_samples() {
    let s = Scratch::new("killed");
    ok(&s.vmscale(SMALL)); // the store exists before the child opens it
    let mut child = Command::new(env!("CARGO_BIN_EXE_vmscale"))
        .args([
            "run", "pft", "--tasks", "1", "--size", "4M", "--reps", "100000",
        ])
        .env("VMSCALE_DB", s.db())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stored = 0;
    for _ in 0..600 {
        std::thread::sleep(std::time::Duration::from_millis(50));
        stored = sample_count(&s) - 2;
        if stored >= 2 {
            break;
        }
    }
    assert!(stored >= 2, "no samples appeared");
    // While it runs, it is listed as running.
    assert_eq!(runs(&s)[1]["status"], "running");
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    let listed = runs(&s);
    assert_eq!(listed[1]["status"], "incomplete");
    assert!(listed[1]["samples"].as_i64().unwrap() >= stored);
    // `list` marked it in the store, with a note.
    let (status, note): (String, String) = raw(&s)
        .query_row("SELECT status, note FROM runs WHERE id = 2", [], |r| {
            Ok((r.get(0)?, r.get(1)?))
        })
        .unwrap();
    assert_eq!(status, "incomplete");
    assert!(note.contains("gone"), "{note}");
}

#[test]
fn restore_marks_runs_of_an_earlier_boot() {
    let s = Scratch::new("reboot");
    ok(&s.vmscale(SMALL));
    raw(&s)
        .execute(
            "UPDATE runs SET status = 'running', boot_id = 'an-earlier-boot'",
            [],
        )
        .unwrap();
    let state = s.dir.join("state");
    // Whether knobs are restored (or the knob lock is busy with another
    // test's run) is not this test's business: the store is marked anyway.
    Command::new(env!("CARGO_BIN_EXE_vmscale"))
        .args(["restore", "--no-wait"])
        .env("VMSCALE_DB", s.db())
        .env("VMSCALE_STATE_DIR", &state)
        .output()
        .unwrap();
    let status: String = raw(&s)
        .query_row("SELECT status FROM runs", [], |r| r.get(0))
        .unwrap();
    assert_eq!(status, "incomplete");
}

#[test]
fn a_run_failing_before_its_first_sample_leaves_nothing() {
    let s = Scratch::new("nosample");
    ok(&s.vmscale(SMALL));
    // The store refuses samples, as a full disk would.
    raw(&s)
        .execute_batch(
            "CREATE TRIGGER full BEFORE INSERT ON samples
             BEGIN SELECT RAISE(FAIL, 'database or disk is full'); END;",
        )
        .unwrap();
    let out = s.vmscale(SMALL);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(stderr(&out).contains("nothing stored"), "{}", stderr(&out));
    let (runs, cases): (i64, i64) = raw(&s)
        .query_row(
            "SELECT (SELECT COUNT(*) FROM runs), (SELECT COUNT(*) FROM cases)",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    assert_eq!((runs, cases), (1, 1), "the failed run left rows behind");
}
