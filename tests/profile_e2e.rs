//! End-to-end tests of `run --profile` and `run --lock-stats` on the real
//! binary: the kernel functions the workloads are known to spend time in
//! appear, a comparison names the functions that moved, mmap_lock is
//! counted, and the HTML report draws flame graphs without a script.
//! Under CI=true a missing facility (perf events, tracepoints) fails.

use crate::common::*;

/// Whether the facility a test needs refused the run: fails under CI,
/// otherwise the test is skipped with the reason.
fn refused(o: &std::process::Output, what: &str) -> bool {
    if o.status.code() != Some(2) {
        return false;
    }
    let why = stderr(o);
    skip(&format!("{what} is refused here: {why}"));
    true
}

/// The function names of the top table(s) of a run's text output.
fn top_functions(out: &str) -> Vec<String> {
    out.lines()
        .skip_while(|l| !l.starts_with("# Kernel profile"))
        .filter(|l| !l.starts_with('#') && l.contains('%'))
        .filter_map(|l| l.split_whitespace().nth(3).map(str::to_string))
        .collect()
}

#[test]
fn pft_profile_shows_the_fault_path_and_show_reprints_it() {
    let s = Scratch::new("prof-pft");
    let o = s.vmscale(&[
        "run",
        "pft",
        "--tasks",
        "1",
        "--size",
        "64M",
        "--reps",
        "2",
        "--profile",
        "--label",
        "p",
    ]);
    if refused(&o, "perf events") {
        return;
    }
    let out = ok(&o);
    assert!(out.contains("# Kernel profile, case"), "{out}");
    let top = top_functions(&out);
    let fault_path = ["handle_mm_fault", "__handle_mm_fault", "do_anonymous_page"];
    assert!(
        top.iter()
            .any(|f| fault_path.contains(&f.as_str()) || f.starts_with("clear_page")),
        "{top:?}"
    );
    let shown = ok(&s.vmscale(&["show", "p"]));
    assert_eq!(top_functions(&shown), top);
    // JSON and Markdown carry the same profile: the text's first function
    // leads the JSON's list, with the samples the text shows.
    let j = json(&s.vmscale(&["show", "p", "--json"]));
    let first = &j["profiles"][0]["kernel_functions"][0];
    assert_eq!(
        first["symbol"].as_str(),
        top.first().map(String::as_str),
        "{j}"
    );
    let text_samples: u64 = shown
        .lines()
        .skip_while(|l| !l.starts_with("# Kernel profile"))
        .find(|l| !l.starts_with('#') && l.contains('%'))
        .and_then(|l| l.split_whitespace().nth(2)?.parse().ok())
        .unwrap();
    assert_eq!(first["self_samples"].as_u64(), Some(text_samples));
    assert!(!j["profiles"][0]["folded"].as_object().unwrap().is_empty());
    let md = ok(&s.vmscale(&["show", "p", "--markdown"]));
    assert!(md.contains("Kernel profile, case"), "{md}");
    assert!(md.contains(top[0].as_str()), "{md}");
    let tables = out
        .lines()
        .skip_while(|l| !l.starts_with("# Kernel profile"));
    assert!(tables.clone().count() > 2 && tables.clone().all(|l| l.chars().count() <= 80));
}

#[test]
fn fork_profile_shows_page_table_copy_or_zap() {
    let s = Scratch::new("prof-fork");
    let o = s.vmscale(&[
        "run",
        "fork",
        "--tasks",
        "1",
        "--size",
        "64M",
        "--forks",
        "200",
        "--reps",
        "2",
        "--profile=1999",
    ]);
    if refused(&o, "perf events") {
        return;
    }
    let top = top_functions(&ok(&o));
    assert!(
        top.iter().any(|f| f.starts_with("copy_p")
            || f.starts_with("zap_")
            || f.starts_with("unmap_page_range")),
        "{top:?}"
    );
}

#[test]
fn compare_names_the_functions_whose_share_moved_and_html_draws_flames() {
    let s = Scratch::new("prof-cmp");
    for (cline, label) in [("1", "a"), ("64", "b")] {
        let o = s.vmscale(&[
            "run",
            "pft",
            "--tasks",
            "1",
            "--size",
            "32M",
            "--reps",
            "2",
            "--cline",
            cline,
            "--profile",
            "--label",
            label,
        ]);
        if refused(&o, "perf events") {
            return;
        }
        ok(&o);
    }
    let out = ok(&s.vmscale(&["compare", "a", "b"]));
    let rows: Vec<&str> = out
        .lines()
        .skip_while(|l| !l.starts_with("# Profile shift"))
        .filter(|l| l.contains("pp "))
        .collect();
    assert!(!rows.is_empty(), "{out}");
    let moved = rows[0].split_whitespace().nth(4).unwrap_or("");
    assert!(moved != "+0.00pp" && moved != "-0.00pp", "{out}");
    let html = s.db().with_extension("html");
    ok(&s.vmscale(&["report", "a", "b", "--html", html.to_str().unwrap()]));
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.contains("<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"flame\""));
    assert!(page.contains("Differential flame graph"));
    assert!(page.contains("samples, ") && page.contains("<title>"));
    assert!(!page.contains("<script"), "no script in the report");
}

#[test]
fn locks_count_mmap_lock_acquisitions_of_pft_with_two_tasks() {
    let s = Scratch::new("prof-locks");
    let o = s.vmscale(&[
        "run",
        "pft",
        "--tasks",
        "2",
        "--size",
        "16M",
        "--reps",
        "1",
        "--lock-stats",
    ]);
    if refused(&o, "lock and mmap_lock tracepoints") {
        return;
    }
    let out = ok(&o);
    let acquired: u64 = out
        .lines()
        .filter(|l| l.trim_end().ends_with("mmap_lock-r") || l.trim_end().ends_with("mmap_lock-w"))
        .filter_map(|l| l.split_whitespace().nth(4)?.parse::<u64>().ok())
        .sum();
    assert!(acquired > 0, "{out}");
    let j = json(&s.vmscale(&["show", "1", "--json"]));
    let rows = j["locks"][0]["rows"]
        .as_array()
        .expect("locks in show --json");
    let in_json: u64 = rows
        .iter()
        .filter(|r| {
            r["name"]
                .as_str()
                .is_some_and(|n| n.starts_with("mmap_lock-"))
        })
        .filter_map(|r| r["acquisitions"].as_u64())
        .sum();
    assert_eq!(in_json, acquired, "{j}");
    // Nothing is left mounted by the private tracefs mount.
    let mounts = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
    let before = mounts.matches(" tracefs ").count();
    let again: Vec<&str> = "run pft --tasks 1 --size 4M --reps 1 --lock-stats"
        .split(' ')
        .collect();
    ok(&s.vmscale(&again));
    let after = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
    assert_eq!(after.matches(" tracefs ").count(), before);
}

#[test]
fn a_bad_rate_is_refused_and_nothing_is_stored() {
    let s = Scratch::new("prof-bad");
    for bad in ["--profile=0", "--profile=1000000"] {
        let o = s.vmscale(&[
            "run", "pft", "--tasks", "1", "--size", "4M", "--reps", "1", bad,
        ]);
        assert_eq!(o.status.code(), Some(2), "{bad}: {}", stderr(&o));
        assert!(stderr(&o).contains("--profile="), "{}", stderr(&o));
    }
    let list = s.vmscale(&["list"]);
    assert!(!stdout(&list).contains("pft"), "{}", stdout(&list));
}
