//! Bad input to every subcommand: exit 2, a message naming the option and
//! the fix, and nothing written to the store. Also where the store is.

use crate::common::*;
use std::process::Command;

/// Runs each `(args, needle)`: exit 2, `needle` in stderr.
fn refused(s: &Scratch, cases: &[(&[&str], &str)]) {
    for (args, needle) in cases {
        let o = s.vmscale(args);
        let e = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {e}");
        assert!(e.contains(needle), "{args:?}: wanted {needle:?} in {e}");
        assert!(!e.contains("panicked"), "{args:?}: {e}");
    }
}

/// [`refused`] for each bad option appended to `command`.
fn refused_after(s: &Scratch, command: &[&str], bad: &[(&[&str], &str)]) {
    for (extra, needle) in bad {
        refused(s, &[(&[command, *extra].concat()[..], *needle)]);
    }
}

/// Options the harness gives every workload, tried on each of them.
#[test]
fn harness_options_of_every_workload() {
    let s = Scratch::new("bad-harness");
    let workloads: &[&[&str]] = &[
        &["run", "pft", "--size", "8M"],
        &["run", "numa01"],
        &["run", "numa02-smt"],
        &["run", "fork"],
        &["run", "churn"],
        &["run", "colour"],
        &["run", "c2c"],
        &["run", "atomic"],
        &["run", "lockfan"],
        &["run", "latency"],
        &["run", "quick"],
    ];
    let bad: &[(&[&str], &str)] = &[
        (&["--precision", "0%"], "--precision"),
        (&["--precision", "x"], "e.g. 1%"),
        (&["--max-time", "soon"], "--max-time"),
        (&["--max-time", "0s"], "e.g. 30s"),
        (&["--noise-threshold", "200%"], "--noise-threshold"),
        (&["--reps", "0"], "use 1 or more"),
        (&["--max-reps", "0"], "use 1 or more"),
        (&["--knob", "bogus=1"], "known knobs"),
        (&["--knob", "thp"], "NAME=VALUE"),
        (&["--knob", "thp=bogus"], "use always, madvise, never"),
    ];
    for w in workloads {
        refused_after(&s, w, bad);
    }
    assert!(!s.db().exists(), "a refused run must not create the store");
}

/// Task lists, modes and placement of the workloads that take them.
#[test]
fn tasks_mode_and_pin() {
    let s = Scratch::new("bad-tasks");
    for w in [
        &["run", "pft", "--size", "8M"][..],
        &["run", "fork"],
        &["run", "churn"],
        &["run", "colour"],
        &["run", "atomic"],
        &["run", "lockfan"],
    ] {
        let bad: &[(&[&str], &str)] = &[
            (&["--tasks", "0"], "the smallest is 1"),
            (&["--tasks", "x"], "a range (1-8) or auto"),
            (&["--tasks", "3-1"], "write 1-3"),
            (&["--tasks", "100000"], "beyond 65536"),
            (&["--mode", "fibre"], "possible values: thread, process"),
            (&["--pin", "bogus"], "use compact, spread, none"),
            (&["--pin", "4096"], "not online"),
            (&["--pin", "0-99999999999"], "largest CPU id"),
        ];
        refused_after(&s, w, bad);
    }
    assert!(!s.db().exists(), "a refused run must not create the store");
}

/// Each workload's own options.
#[test]
fn workload_options() {
    let s = Scratch::new("bad-workload");
    refused(
        &s,
        &[
            (&["run", "pft"], "or --size-per-task, e.g. --size 1G"),
            (&["run", "pft", "--size", "0"], "--size: size '0'"),
            (&["run", "pft", "--size-per-task", "x"], "--size-per-task:"),
            (
                &["run", "pft", "--size", "8M", "--thp", "maybe"],
                "possible values: never, always",
            ),
            (&["run", "numa01", "--size", "0"], "--size: size '0'"),
            (&["run", "numa01", "--loops", "0"], "use 1 or more"),
            (&["run", "numa02", "--interval", "x"], "--interval:"),
            (&["run", "numa02", "--interval", "0.1ms"], "--interval"),
            (&["run", "numa02", "--threshold", "2"], "e.g. 0.9"),
            (&["run", "fork", "--size", "0"], "--size: size '0'"),
            (&["run", "fork", "--forks", "0"], "use 1 or more"),
            (&["run", "fork", "--touch", "100000"], "lower --touch"),
            (&["run", "fork", "--file-dir", "/tmp"], "--shared-file"),
            (
                &["run", "fork", "--shared-file", "--file-dir", "/nonexistent"],
                "name an existing directory",
            ),
            (&["run", "fork", "--size", "64T"], "use a smaller --size"),
            (&["run", "churn", "--chunk", "0"], "--chunk: size '0'"),
            (&["run", "churn", "--time", "0"], "use 0.1 to 3600"),
            (&["run", "churn", "--every", "0"], "use 0.01 to"),
            (&["run", "churn", "--every", "inf"], "use 0.01 to"),
            (&["run", "churn", "--every", "2e10"], "use 0.01 to"),
            (&["run", "pft", "--tasks", "70000"], "beyond 65536"),
            (&["run", "latency", "--max", "200G"], "use a smaller --max"),
            (&["run", "colour", "--colours", "1"], "--colours between 2"),
            (&["run", "colour", "--interleave", "0"], "use 1 or more"),
            (
                &["run", "colour", "--size-per-task", "0"],
                "--size-per-task:",
            ),
            (&["run", "c2c", "--cpus", "x"], "a CPU list like 0-3,8"),
            (&["run", "c2c", "--cpus", "0"], "widen --cpus"),
            (&["run", "c2c", "--cpus", "4096"], "not online"),
            (
                &["run", "c2c", "--variant", "foo"],
                "possible values: cas, cas-nopause, storeload",
            ),
            (&["run", "c2c", "--rounds", "0"], "at least 1"),
            (
                &["run", "atomic", "--variant", "foo"],
                "possible values: shared, folded",
            ),
            (&["run", "atomic", "--fold", "0"], "at least 1"),
            (&["run", "atomic", "--ops", "0"], "at least 1"),
            (&["run", "lockfan", "--locks", "0"], "the smallest is 1"),
            (&["run", "lockfan", "--locks", "x"], "cannot parse --locks"),
            (
                &["run", "lockfan", "--kind", "foo"],
                "possible values: spin, mutex",
            ),
            (&["run", "lockfan", "--lines", "0"], "use 1 to 64"),
            (&["run", "latency", "--min", "0"], "--min: size '0'"),
            (&["run", "latency", "--max", "x"], "--max: cannot parse"),
            (
                &["run", "latency", "--min", "1M", "--max", "4K"],
                "raise --max",
            ),
            (
                &["run", "latency", "--pages", "thp", "--max", "1M"],
                "at least one huge page",
            ),
            (
                &["run", "latency", "--pages", "foo"],
                "possible values: base, thp",
            ),
            (
                &["run", "pft", "--size", "8M", "--backing", "disk"],
                "anon, memfd",
            ),
            (
                &["run", "pft", "--size", "8M", "--access", "x"],
                "write, read",
            ),
            (
                &["run", "pft", "--size", "8M", "--pages", "x"],
                "base, thp, hugetlb",
            ),
            (&["run", "colour", "--thp", "x"], "never, always"),
            (&["run", "latency", "--loads", "0"], "at least 1"),
            (
                &["run", "cmd", "--interval", "0", "--", "true"],
                "--interval",
            ),
            (
                &["run", "cmd", "--interval", "inf", "--", "true"],
                "use 0.05 to 3600",
            ),
            (
                &["run", "cmd", "--device", "nosuch", "--", "true"],
                "devices:",
            ),
        ],
    );
    assert!(!s.db().exists(), "a refused run must not create the store");
}

/// Unknown runs and bad files for show, compare, fit, report and import:
/// exit 2, and the store keeps exactly the runs it had.
#[test]
fn runs_and_files() {
    let s = Scratch::new("bad-files");
    let write = |name: &str, text: &str| {
        let p = s.dir.join(name);
        std::fs::write(&p, text).expect("write");
        p.to_str().expect("utf-8 path").to_string()
    };
    let nums = write("a.txt", "1\n2\n3\n");
    let words = write("bad.txt", "x\ny\n");
    let empty = write("empty.txt", "");
    let two = write("pairs.txt", "1 10\n2 19\n");
    let negative = write("neg.txt", "-1\n-2\n-3\n");
    let huge_n = write("hugen.txt", "1 10\n2 19\n1e308 20\n");
    let wis_nan = write(
        "nan.csv",
        "tasks,processes,processes_idle,threads,threads_idle,linear\n1,NaN,0,1,0,1\n",
    );
    let wis_inf = write(
        "inf.csv",
        "tasks,processes,processes_idle,threads,threads_idle,linear\n1,inf,0,1,0,1\n",
    );
    let wis_neg = write(
        "neg.csv",
        "tasks,processes,processes_idle,threads,threads_idle,linear\n1,-5,0,1,0,1\n",
    );
    let thr = write(
        "thr.txt",
        "Gb Rep Thr CLine User System Wall flt/cpu/s fault/wsec\n\
         1 1 1e30 1 1.00s 1.00s 1.00s 1.000 1.000\n",
    );
    let html = s.dir.join("r.html");
    let html = html.to_str().expect("utf-8 path");
    let missing = s.dir.join("missing.txt");
    let missing = missing.to_str().expect("utf-8 path");

    // No store yet: the message says how to get one, and none is created.
    refused(&s, &[(&["show", "last"], "vmscale run quick")]);
    refused(&s, &[(&["list"], "name one with --db")]);
    assert!(!s.db().exists());

    ok(&s.vmscale(&[
        "run", "pft", "--tasks", "1", "--size", "8M", "--reps", "1", "--warmup", "0",
    ]));
    let count = || {
        json(&s.vmscale(&["list", "--json"]))
            .as_array()
            .unwrap()
            .len()
    };
    assert_eq!(count(), 1);
    refused(
        &s,
        &[
            (&["show", "9"], "vmscale list"),
            (&["show", "last~3"], "vmscale list"),
            (&["show", "nosuch"], "vmscale list"),
            (&["compare", "1", "9"], "vmscale list"),
            (&["compare"], "name the runs to compare"),
            (&["compare", "last"], "name two or more runs"),
            (&["compare", "1", "1", "--figure", "nosuch"], "reports"),
            (&["compare", "1", "1", "--alpha", "2"], "such as 0.05"),
            (
                &["compare", "1", "1", "--better", "lower"],
                "sample files only",
            ),
            (&["compare", "1", "1", "--rate"], "sample files only"),
            (&["compare", "1", "--files", &nums], "not both"),
            (&["compare", "--files", &nums], "two or more sample files"),
            (&["compare", "--files", &nums, missing], "cannot read"),
            (&["compare", "--files", &nums, &words], "one number a line"),
            (&["compare", "--files", &nums, &empty], "no numbers found"),
            (
                &["compare", "--files", &nums, &nums, "--better", "up"],
                "possible values: higher, lower",
            ),
            (
                &["compare", "--files", &nums, &nums, "--ratio-of", "C"],
                "possible values: B, A",
            ),
            (&["fit", "9"], "vmscale list"),
            (&["fit", "1", "--figure", "nosuch"], "use one of"),
            (&["fit", "1", "--variant", "nosuch"], "use one of"),
            (&["fit", "1", "--extrapolate", "0"], "like 16,64,512"),
            (&["fit", "--file", missing], "cannot read"),
            (&["fit", "--file", &words], "two numbers `N X`"),
            (&["fit", "--file", &two], "at least 3 points"),
            (&["fit", "1", "--file", &two], "not both"),
            (&["report", "9", "--html", html], "vmscale list"),
            (
                &["report", "1", "--html", html, "--figure", "nosuch"],
                "use one of",
            ),
            (&["import", missing], "cannot read"),
            (&["import", &words], "no table found"),
            (&["import", &empty], "no table found"),
            (&["import", &wis_nan], "line 2"),
            (&["import", &wis_inf], "line 2"),
            (&["import", &wis_neg], "not a finite number >= 0"),
            (&["import", &thr], "line 2"),
            (
                &["compare", "--files", &nums, &negative, "--rate"],
                "--rate needs values above 0",
            ),
            (&["fit", "--file", &huge_n], "N must be 1 to"),
        ],
    );
    assert_eq!(count(), 1, "a refused command must not add a run");
    assert!(!html.is_empty() && !std::path::Path::new(html).exists());
}

fn list_with_env(env: &[(&str, &str)]) -> String {
    let mut c = Command::new(env!("CARGO_BIN_EXE_vmscale"));
    c.arg("list")
        .env_remove("VMSCALE_DB")
        .env_remove("XDG_DATA_HOME");
    for (k, v) in env {
        c.env(k, v);
    }
    let o = c.output().expect("run vmscale");
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    stderr(&o)
}

/// The store is $VMSCALE_DB, else under $XDG_DATA_HOME (absolute only),
/// else ~/.local/share; `--db` wins over all. An empty variable is unset.
#[test]
fn store_path_resolution() {
    let s = Scratch::new("store-path");
    let home = s.dir.join("home");
    let home = home.to_str().expect("utf-8 path");
    let xdg = s.dir.join("xdg");
    let xdg = xdg.to_str().expect("utf-8 path");
    let db = s.db();
    let db = db.to_str().expect("utf-8 path");
    let at = |p: String| format!("no store at {p}:");

    let e = list_with_env(&[("HOME", home)]);
    assert!(
        e.contains(&at(format!("{home}/.local/share/vmscale/vmscale.db"))),
        "{e}"
    );
    let e = list_with_env(&[("HOME", home), ("XDG_DATA_HOME", xdg)]);
    assert!(e.contains(&at(format!("{xdg}/vmscale/vmscale.db"))), "{e}");
    let e = list_with_env(&[("HOME", home), ("XDG_DATA_HOME", "relative")]);
    assert!(
        e.contains(&at(format!("{home}/.local/share/vmscale/vmscale.db"))),
        "{e}"
    );
    let e = list_with_env(&[("HOME", home), ("XDG_DATA_HOME", xdg), ("VMSCALE_DB", db)]);
    assert!(e.contains(&at(db.to_string())), "{e}");
    let e = list_with_env(&[("HOME", home), ("VMSCALE_DB", "")]);
    assert!(
        e.contains(&at(format!("{home}/.local/share/vmscale/vmscale.db"))),
        "{e}"
    );

    let o = Command::new(env!("CARGO_BIN_EXE_vmscale"))
        .args(["--db", db, "list"])
        .env("VMSCALE_DB", s.dir.join("other.db"))
        .output()
        .expect("run vmscale");
    assert!(stderr(&o).contains(&at(db.to_string())), "{}", stderr(&o));
    assert!(!s.db().exists());
}
