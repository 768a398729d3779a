//! What a user meets first: every text output within 80 columns, help
//! within 100, warnings on stderr, suite labels and ambiguous names,
//! `-o`/`-q`, housekeeping commands, completions and the man page.

use crate::common::{Scratch, json, ok, stderr, stdout};

/// Runs one workload at a small size, quietly, into the scratch store.
fn small_run(s: &Scratch, args: &[&str]) {
    let mut all = vec!["run"];
    all.extend_from_slice(args);
    all.extend_from_slice(&["--reps", "2", "--warmup", "0", "-q"]);
    let o = s.vmscale(&all);
    assert!(
        o.status.success(),
        "{args:?} failed: {}{}",
        stdout(&o),
        stderr(&o)
    );
}

fn assert_fits(what: &str, text: &str, width: usize) {
    assert!(!text.trim().is_empty(), "{what}: no output");
    for line in text.lines() {
        assert!(
            line.chars().count() <= width,
            "{what}: a line of {} columns (> {width}):\n{line}\n--- whole output:\n{text}",
            line.chars().count()
        );
    }
}

/// Every workload's report, `compare`, `sysinfo` and `list` fit 80 columns,
/// and no warning is mixed into stdout.
#[test]
fn every_text_output_fits_80_columns() {
    let s = Scratch::new("ux-width");
    let runs: &[&[&str]] = &[
        &["pft", "--tasks", "1,2", "--size", "8M", "--populate"],
        &["pft", "--tasks", "1,2", "--size", "8M", "--label", "b"],
        &["numa01", "--size", "8M", "--loops", "2"],
        &["numa01-threadlocal", "--size", "8M", "--loops", "2"],
        &["numa02", "--size", "8M", "--loops", "2"],
        &["numa02-smt", "--size", "8M", "--loops", "2"],
        &["fork", "--tasks", "1,2", "--size", "4M", "--forks", "5"],
        &["churn", "--tasks", "1,2", "--time", "0.2", "--every", "0.1"],
        &["cmd", "--", "true"],
        &["c2c", "--rounds", "100", "--batches", "5"],
        &["atomic", "--ops", "20000"],
        &["lockfan", "--ops", "2000", "--locks", "1,4"],
        &["latency", "--max", "256K", "--loads", "20000"],
    ];
    for r in runs {
        small_run(&s, r);
    }
    let colour = s.vmscale(&[
        "run", "colour", "--size", "8M", "--reps", "1", "--warmup", "0", "-q",
    ]);
    let mut ids = runs.len();
    if colour.status.success() {
        ids += 1;
    } else {
        // Reading PFNs needs root; every other report is still checked.
        assert!(stderr(&colour).contains("pagemap"), "{}", stderr(&colour));
        println!("colour not checked: {}", stderr(&colour));
    }
    for id in 1..=ids {
        let o = s.vmscale(&["show", &id.to_string()]);
        let text = ok(&o);
        assert_fits(&format!("show {id}"), &text, 80);
        assert!(!text.contains("warning:"), "a warning on stdout:\n{text}");
    }
    assert_fits("compare", &ok(&s.vmscale(&["compare", "1", "b"])), 80);
    assert_fits("sysinfo", &ok(&s.vmscale(&["sysinfo"])), 80);
    assert_fits("list", &ok(&s.vmscale(&["list"])), 80);
    assert_fits("doctor", &ok(&s.vmscale(&["doctor"])), 80);
    assert_fits("show --plot", &ok(&s.vmscale(&["show", "1", "--plot"])), 80);
}

/// Without a terminal, help is wrapped at 100 columns and names no seed.
#[test]
fn help_fits_100_columns_without_a_terminal() {
    let s = Scratch::new("ux-help");
    let mut helps = vec![vec!["--help"], vec!["run", "--help"]];
    for sub in [
        "show", "list", "compare", "sysinfo", "report", "fit", "delete",
    ] {
        helps.push(vec![sub, "--help"]);
    }
    for w in ["quick", "pft", "numa01", "fork", "churn", "cmd", "colour"] {
        helps.push(vec!["run", w, "--help"]);
    }
    for w in ["c2c", "atomic", "lockfan", "latency"] {
        helps.push(vec!["run", w, "--help"]);
    }
    for args in helps {
        let text = ok(&s.vmscale(&args));
        assert_fits(&format!("{args:?}"), &text, 100);
        assert!(!text.contains("seed 0"), "{args:?} cites a seed:\n{text}");
    }
}

/// A suite's runs are told apart by label; a name for several runs is
/// refused with the matches listed; so are runs of different workloads.
#[test]
fn ambiguous_names_and_cross_workload_compares_are_refused() {
    let s = Scratch::new("ux-labels");
    small_run(
        &s,
        &["pft", "--tasks", "1", "--size", "4M", "--label", "S/pft"],
    );
    small_run(
        &s,
        &[
            "fork", "--tasks", "1", "--size", "4M", "--forks", "5", "--label", "S/fork",
        ],
    );
    small_run(
        &s,
        &["pft", "--tasks", "1", "--size", "4M", "--label", "twice"],
    );
    small_run(
        &s,
        &["pft", "--tasks", "1", "--size", "4M", "--label", "twice"],
    );

    let suite = s.vmscale(&["show", "S"]);
    assert_eq!(suite.status.code(), Some(2), "{}", stdout(&suite));
    let e = stderr(&suite);
    assert!(
        e.contains("ambiguous") && e.contains("S/pft (run 1)") && e.contains("S/fork (run 2)"),
        "{e}"
    );
    assert!(stdout(&suite).is_empty());
    assert!(ok(&s.vmscale(&["show", "S/pft"])).starts_with("run 1 [S/pft]: pft"));

    let twice = s.vmscale(&["compare", "twice", "1"]);
    assert_eq!(twice.status.code(), Some(2));
    assert!(
        stderr(&twice).contains("  3 (pft)\n  4 (pft)\n"),
        "{}",
        stderr(&twice)
    );

    let cross = s.vmscale(&["compare", "S/pft", "S/fork"]);
    assert_eq!(cross.status.code(), Some(2));
    assert!(
        stderr(&cross).contains("--cross-workload"),
        "{}",
        stderr(&cross)
    );
    ok(&s.vmscale(&["compare", "S/pft", "S/fork", "--cross-workload"]));

    // The suite is one filter away; rename ends the ambiguity.
    let listed = ok(&s.vmscale(&["list", "--label", "S"]));
    assert_eq!(listed.lines().count(), 3, "{listed}");
    let refused = s.vmscale(&["rename", "4", "S/pft"]);
    assert_eq!(refused.status.code(), Some(2), "{}", stderr(&refused));
    ok(&s.vmscale(&["rename", "4", "again"]));
    assert!(ok(&s.vmscale(&["show", "twice"])).starts_with("run 3 [twice]"));
}

#[test]
fn list_filters_and_delete() {
    let s = Scratch::new("ux-list");
    small_run(&s, &["pft", "--tasks", "1", "--size", "4M", "--label", "a"]);
    small_run(
        &s,
        &["fork", "--tasks", "1", "--size", "4M", "--forks", "5"],
    );
    let ids = |args: &[&str]| -> Vec<i64> {
        let mut all = vec!["list", "--json"];
        all.extend_from_slice(args);
        json(&s.vmscale(&all))
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["id"].as_i64().unwrap())
            .collect()
    };
    assert_eq!(ids(&[]), [1, 2]);
    assert_eq!(ids(&["--workload", "fork"]), [2]);
    assert_eq!(ids(&["--label", "a"]), [1]);
    assert_eq!(ids(&["--since", "2000-01-01"]), [1, 2]);
    assert_eq!(ids(&["--until", "2000-01-01"]), Vec::<i64>::new());
    let release = json(&s.vmscale(&["sysinfo", "--json"]))["kernel_release"]
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(ids(&["--kernel", &release]), [1, 2]);
    assert_eq!(ids(&["--kernel", "no-such-kernel"]), Vec::<i64>::new());
    let bad = s.vmscale(&["list", "--since", "yesterday"]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(stderr(&bad).contains("YYYY-MM-DD"));

    // A typo deletes nothing; then both go.
    let typo = s.vmscale(&["delete", "1", "nosuch"]);
    assert_eq!(typo.status.code(), Some(2));
    assert_eq!(ids(&[]), [1, 2]);
    ok(&s.vmscale(&["delete", "a", "2"]));
    assert_eq!(ids(&[]), Vec::<i64>::new());
}

/// `-o FILE` takes what stdout would have had; `-q` leaves one line a run.
#[test]
fn output_file_and_quiet() {
    let s = Scratch::new("ux-output");
    let file = s.dir.join("out.txt");
    let o = s.vmscale(&[
        "run",
        "pft",
        "--tasks",
        "1",
        "--size",
        "4M",
        "--reps",
        "2",
        "--warmup",
        "0",
        "-o",
        file.to_str().unwrap(),
    ]);
    assert!(ok(&o).is_empty(), "-o left output on stdout");
    let written = std::fs::read_to_string(&file).unwrap();
    assert_eq!(written, ok(&s.vmscale(&["show", "1"])));

    let quiet = ok(&s.vmscale(&[
        "run", "pft", "--tasks", "1", "--size", "4M", "--reps", "2", "--warmup", "0", "-q",
    ]));
    assert_eq!(quiet.lines().count(), 1, "{quiet}");
    assert_eq!(quiet, "run 2: pft (complete)\n");
}

#[test]
fn sysinfo_json_has_the_page_colours_the_text_shows() {
    let s = Scratch::new("ux-sysinfo");
    let j = json(&s.vmscale(&["sysinfo", "--json"]));
    let text = ok(&s.vmscale(&["sysinfo"]));
    let colours = &j["page_colours"];
    assert!(colours.is_object(), "{j}");
    let line = text
        .lines()
        .find(|l| l.starts_with("Page colours"))
        .expect("a page-colours line");
    match colours["llc"].as_u64() {
        Some(n) => assert!(line.contains(&n.to_string()), "{line} vs {colours}"),
        None => assert!(line.contains('-') || line.contains("unknown"), "{line}"),
    }
}

#[test]
fn colour_takes_a_total_size() {
    let s = Scratch::new("ux-colour");
    let o = s.vmscale(&[
        "run", "colour", "--tasks", "2", "--size", "8M", "--reps", "1", "--warmup", "0", "--json",
    ]);
    if o.status.code() == Some(2) && stderr(&o).contains("pagemap") {
        return crate::common::skip(&format!("pagemap PFNs unavailable here: {}", stderr(&o)));
    }
    let run = json(&o);
    assert_eq!(run["meta"]["config"]["size_per_task"], 4 << 20);
    let both = s.vmscale(&["run", "colour", "--size", "8M", "--size-per-task", "4M"]);
    assert_eq!(both.status.code(), Some(2));
}

/// `fit FILE` detects a file as `compare FILE` does, with no store at all.
#[test]
fn fit_of_a_file_needs_no_store() {
    let s = Scratch::new("ux-fit");
    let pairs = s.dir.join("pairs.txt");
    std::fs::write(&pairs, "1 100\n2 190\n4 340\n8 520\n16 610\n").unwrap();
    let out = ok(&s.vmscale(&["fit", pairs.to_str().unwrap()]));
    assert!(out.contains("sigma"), "{out}");
    assert!(!s.db().exists(), "fit of a file created a store");
}

#[test]
fn completions_and_man_page() {
    let s = Scratch::new("ux-complete");
    let bash = ok(&s.vmscale(&["completions", "bash"]));
    assert!(
        bash.contains("complete -F") && bash.contains("sysinfo"),
        "{bash}"
    );
    // The options of each command are built for the script (they are
    // deferred when parsing), and so is the `help` tree.
    assert!(bash.contains("--size-per-task"), "{bash}");
    assert!(bash.contains("help__subcmd__run__subcmd__pft"), "{bash}");
    let zsh = ok(&s.vmscale(&["completions", "zsh"]));
    assert!(zsh.starts_with("#compdef vmscale"), "{zsh}");
    let man = ok(&s.vmscale(&["man"]));
    assert!(
        man.starts_with(".ie") || man.contains(".TH vmscale"),
        "{man}"
    );
    // Every subcommand and a workload's own options are on the page.
    for needle in ["VMSCALE RUN PFT", "VMSCALE COMPARE", "size\\-per\\-task"] {
        assert!(man.contains(needle), "man page lacks {needle}");
    }
    let bad = s.vmscale(&["completions", "tcsh"]);
    assert_eq!(bad.status.code(), Some(2));
}

/// More tasks than CPUs is measured, and said on stderr.
#[test]
fn oversubscription_is_warned_on_stderr() {
    let s = Scratch::new("ux-oversub");
    let cpus = json(&s.vmscale(&["sysinfo", "--json"]))["cpus"]
        .as_array()
        .unwrap()
        .len();
    let tasks = (cpus + 1).to_string();
    let o = s.vmscale(&[
        "run", "pft", "--tasks", &tasks, "--size", "4M", "--reps", "1", "--warmup", "0",
    ]);
    let out = ok(&o);
    let e = stderr(&o);
    assert!(
        e.contains(&format!("{tasks} tasks on {cpus} online CPUs")),
        "{e}"
    );
    assert!(!out.contains("online CPUs"), "{out}");
    let fits = s.vmscale(&[
        "run", "pft", "--tasks", "1", "--size", "4M", "--reps", "1", "--warmup", "0",
    ]);
    assert!(!stderr(&fits).contains("online CPUs"), "{}", stderr(&fits));
}

/// A knob the workload's own option makes powerless is refused, not run.
#[test]
fn a_thp_knob_under_thp_never_is_refused() {
    let s = Scratch::new("ux-conflict");
    let o = s.vmscale(&[
        "run",
        "pft",
        "--tasks",
        "1",
        "--size",
        "4M",
        "--knob",
        "thp=never,always",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("--thp always"), "{}", stderr(&o));
    assert!(!s.db().exists(), "a refused run wrote the store");
}

/// A command that works only once (a build, then up to date) is said to
/// need --setup; with one, nothing is said.
#[test]
fn cmd_that_works_only_once_is_warned() {
    let s = Scratch::new("ux-cmd-once");
    let flag = s.dir.join("built");
    // A wide margin: the warm-up sleeps 2 s, the samples need only be 5x
    // faster (0.4 s) even on a loaded machine.
    let script = format!("test -e {0} || sleep 2; touch {0}", flag.display());
    let once = s.vmscale(&["run", "cmd", "--reps", "2", "--", "sh", "-c", &script]);
    let out = ok(&once);
    assert!(stderr(&once).contains("--setup"), "{}", stderr(&once));
    assert!(!out.contains("warning"), "{out}");
    let setup = format!("rm -f {}", flag.display());
    let reset = s.vmscale(&[
        "run", "cmd", "--reps", "1", "--setup", &setup, "--", "sh", "-c", &script,
    ]);
    ok(&reset);
    assert!(!stderr(&reset).contains("--setup"), "{}", stderr(&reset));
}

/// Options a fixed count would ignore are refused with it.
#[test]
fn fixed_reps_refuse_the_adaptive_options() {
    let s = Scratch::new("ux-reps");
    for flag in [["--max-reps", "4"], ["--precision", "2%"]] {
        let o = s.vmscale(&[
            "run", "pft", "--tasks", "1", "--size", "4M", "--reps", "2", flag[0], flag[1],
        ]);
        assert_eq!(o.status.code(), Some(2), "{flag:?}");
        assert!(stderr(&o).contains("cannot be used with"), "{}", stderr(&o));
        assert!(!s.db().exists());
    }
}

/// `--case list` and `--test list` print the choices on stdout, exit 0,
/// one a line starting with its name, each within 80 columns, nothing
/// stored; the names are the code's own tables.
#[test]
fn listings_are_on_stdout_one_choice_a_line() {
    use clap::ValueEnum as _;
    let s = Scratch::new("ux-listings");
    let tests: Vec<String> = vmscale::workload::wis::Test::value_variants()
        .iter()
        .filter_map(|t| t.to_possible_value())
        .map(|p| p.get_name().to_string())
        .collect();
    let cases: Vec<String> = vmscale::workload::vms::cases::names()
        .into_iter()
        .map(str::to_string)
        .collect();
    for (args, names) in [
        (&["run", "vms", "--case", "list"][..], &cases),
        (
            &["run", "vms", "--case", "anon-w-seq", "--case", "list"],
            &cases,
        ),
        (&["run", "wis", "--test", "list"], &tests),
    ] {
        let o = s.vmscale(args);
        assert_eq!(o.status.code(), Some(0), "{args:?}: {}", stderr(&o));
        assert!(stderr(&o).is_empty(), "{args:?}: {}", stderr(&o));
        let out = stdout(&o);
        assert_fits(&args.join(" "), &out, 80);
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines.len(), names.len(), "{args:?}:\n{out}");
        for (line, name) in lines.iter().zip(names) {
            assert_eq!(line.split_whitespace().next(), Some(name.as_str()), "{out}");
        }
        assert!(!s.db().exists(), "{args:?} wrote a store");
    }
}
