//! `vmscale reproduce --dry-run` on robot reports written for the tests
//! (tests/fixtures/reproduce), against the fake 16-CPU, 128 GiB machine of
//! tests/fixtures/fake-2s4n: the JSON names testcase, test, parameters,
//! base, head, headline and every row, and the plan scaled to the machine;
//! nothing is stored; bad input exits 2 naming the problem. `--bisect`'s
//! plan counts the range in a git tree made for the test.

use crate::common::{Scratch, fixture, git, stderr, stdout};
use serde_json::Value;
use std::path::Path;
use std::process::{Command, Output};

fn report(name: &str) -> String {
    fixture("reproduce").join(name).display().to_string()
}

/// `vmscale reproduce ARGS` on the fake machine, with a scratch store.
fn reproduce(s: &Scratch, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_vmscale"))
        .arg("reproduce")
        .args(args)
        .env("VMSCALE_DB", s.db())
        .env("VMSCALE_MACHINE_ROOT", fixture("fake-2s4n"))
        .env_remove("XDG_DATA_HOME")
        .output()
        .expect("run vmscale")
}

fn plan_json(s: &Scratch, name: &str) -> Value {
    let o = reproduce(s, &[&report(name), "--dry-run", "--json"]);
    assert!(o.status.success(), "{}\n{}", stdout(&o), stderr(&o));
    serde_json::from_str(&stdout(&o)).expect("JSON")
}

fn command(v: &Value) -> Vec<String> {
    v["plan"]["command"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w.as_str().unwrap().to_string())
        .collect()
}

fn rows(v: &Value) -> Vec<&str> {
    v["report"]["tests"][0]["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["name"].as_str().unwrap())
        .collect()
}

/// The row names of a report's first table, as its text has them.
fn rows_in_text(name: &str) -> Vec<String> {
    let text = std::fs::read_to_string(report(name)).unwrap();
    text.lines()
        .skip_while(|l| !l.contains("%change"))
        .skip(2)
        .take_while(|l| !l.trim().is_empty())
        .map(|l| l.split_whitespace().last().unwrap().to_string())
        .collect()
}

#[test]
fn a_vm_scalability_report_plans_its_case_on_every_cpu() {
    let s = Scratch::new("repro-vms");
    let v = plan_json(&s, "vms-anon-w-seq.txt");
    let r = &v["report"];
    assert_eq!(r["headline"]["metric"], "vm-scalability.throughput");
    assert_eq!(r["headline"]["percent"], -21.4);
    assert_eq!(r["headline"]["kind"], "regression");
    assert_eq!(r["base"]["id"], "0f1e2d3c4b");
    assert_eq!(r["head"]["id"], "5a1b2c3d4e5f60718293a4b5c6d7e8f901234567");
    let t = &r["tests"][0];
    assert_eq!(t["testcase"], "vm-scalability");
    assert_eq!(t["machine"]["threads"], 224);
    assert_eq!(v["plan"]["testcase"], "vm-scalability");
    assert_eq!(v["here"]["cpus"], 16);
    // No nr_task: every CPU, as the suite.
    assert_eq!(
        command(&v),
        [
            "run",
            "vms",
            "--case",
            "anon-w-seq",
            "--tasks",
            "16",
            "--runtime",
            "2",
            "--max-time",
            "40s",
            "--meminfo",
            "Active(anon)"
        ]
    );
    // The samples' budget is `run`'s own default, as its dry run says.
    let run = Command::new(env!("CARGO_BIN_EXE_vmscale"))
        .args(["run", "pft", "--size", "16M", "--dry-run", "--json"])
        .output()
        .unwrap();
    let run: Value = serde_json::from_str(&stdout(&run)).expect("JSON");
    assert_eq!(v["plan"]["budget_s"], run["max_time_s"]);
    assert_eq!(rows(&v), rows_in_text("vms-anon-w-seq.txt"));
    let planned = v["plan"]["rows"].as_array().unwrap();
    assert_eq!(planned.len(), rows(&v).len());
    // The box's test is read with its own table.
    assert_eq!(r["tests"][1]["testcase"], "will-it-scale");
    // Nothing was stored: a dry run never opens the store.
    assert!(!s.db().exists());
}

#[test]
fn will_it_scale_reports_keep_mode_and_scale_nr_task() {
    let s = Scratch::new("repro-wis");
    let v = plan_json(&s, "wis-process.txt");
    // 100% of 104 threads: all 16 CPUs here.
    assert_eq!(
        command(&v),
        [
            "run",
            "wis",
            "--test",
            "page_fault2",
            "--mode",
            "process",
            "--tasks",
            "16",
            "--time",
            "2",
            "--max-time",
            "40s"
        ]
    );
    assert_eq!(v["report"]["headline"]["percent"], 11.7);
    assert_eq!(
        v["report"]["tests"][0]["params"][1],
        serde_json::json!(["mode", "process"])
    );
    assert_eq!(rows(&v), rows_in_text("wis-process.txt"));
    let per_op = &v["plan"]["rows"][0];
    assert_eq!(per_op["name"], "will-it-scale.per_process_ops");
    assert_eq!(per_op["measured_by"]["figure"], "ops/s/task");

    // Threads, quoted twice in a reply: 16 of 144 threads is 2 of 16 here.
    let v = plan_json(&s, "wis-thread-quoted.txt");
    assert_eq!(
        command(&v),
        [
            "run",
            "wis",
            "--test",
            "mmap1",
            "--mode",
            "thread",
            "--tasks",
            "2",
            "--time",
            "2",
            "--max-time",
            "40s"
        ]
    );
    assert_eq!(v["report"]["base"]["subject"], "mm: split the vma walk");
    assert_eq!(rows(&v).len(), 4);
}

#[test]
fn a_pft_report_plans_run_pft_at_the_same_share() {
    let s = Scratch::new("repro-pft");
    let v = plan_json(&s, "pft.txt");
    // 50% of 96 threads: 8 of 16; sized a sixteenth of the memory here.
    let mem = v["here"]["memory"].as_u64().unwrap();
    let size = format!("{}M", (mem / 16) >> 20);
    assert_eq!(
        command(&v),
        [
            "run",
            "pft",
            "--tasks",
            "8",
            "--size",
            &size,
            "--max-time",
            "40s"
        ]
    );
    assert_eq!(
        v["report"]["headline"]["metric"],
        "pft.faults_per_sec_per_cpu"
    );
    assert_eq!(rows(&v), rows_in_text("pft.txt"));
    assert_eq!(v["plan"]["rows"][0]["measured_by"]["figure"], "flt/cpu/s");
}

#[test]
fn the_text_plan_fits_80_columns_and_says_the_runtime_was_shortened() {
    let s = Scratch::new("repro-text");
    let o = reproduce(&s, &[&report("vms-anon-w-seq.txt"), "--dry-run"]);
    let out = stdout(&o);
    assert!(o.status.success(), "{out}{}", stderr(&o));
    assert!(out.lines().all(|l| l.chars().count() <= 80), "{out}");
    assert!(out.contains("vmscale run vms --case anon-w-seq"), "{out}");
    assert!(out.contains("shortened"), "{out}");
    assert!(out.contains("turbostat.IPC"), "{out}");
    // The report from stdin reads the same.
    let o = Command::new(env!("CARGO_BIN_EXE_vmscale"))
        .args(["reproduce", "-", "--dry-run"])
        .env("VMSCALE_DB", s.db())
        .env("VMSCALE_MACHINE_ROOT", fixture("fake-2s4n"))
        .stdin(std::fs::File::open(report("vms-anon-w-seq.txt")).unwrap())
        .output()
        .unwrap();
    assert_eq!(stdout(&o), out);
}

#[test]
fn bad_reports_exit_2_naming_the_problem() {
    let s = Scratch::new("repro-bad");
    let not = s.dir.join("not-a-report.txt");
    std::fs::write(&not, "Hello,\n\nplease pull.\n").unwrap();
    let o = reproduce(&s, &[not.to_str().unwrap(), "--dry-run"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("not a kernel test robot report"),
        "{}",
        stderr(&o)
    );

    let text = std::fs::read_to_string(report("wis-process.txt")).unwrap();
    let other = s.dir.join("stress-ng.txt");
    std::fs::write(&other, text.replace("will-it-scale", "stress-ng")).unwrap();
    let o = reproduce(&s, &[other.to_str().unwrap(), "--dry-run", "--json"]);
    assert_eq!(o.status.code(), Some(2));
    let e = stderr(&o);
    assert!(e.contains("'stress-ng'") && e.contains("pft"), "{e}");

    let cut = s.dir.join("cut.txt");
    std::fs::write(&cut, &text[..text.find("testcase:").unwrap()]).unwrap();
    let o = reproduce(&s, &[cut.to_str().unwrap(), "--dry-run"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("cut before"), "{}", stderr(&o));

    let o = reproduce(&s, &["/nonexistent/report.txt", "--dry-run"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(!s.db().exists());
}

/// A tree with a Linux tree's top (Makefile, arch/x86) and `commits`
/// commits after its first; gives the first's and the last's ids.
fn tree(dir: &Path, commits: usize) -> (String, String) {
    std::fs::create_dir_all(dir.join("arch/x86")).unwrap();
    std::fs::write(dir.join("Makefile"), "all:\n").unwrap();
    git(dir, &["init", "-q", "."]);
    for i in 0..=commits {
        std::fs::write(dir.join("f"), i.to_string()).unwrap();
        git(dir, &["add", "-A"]);
        git(dir, &["commit", "-qm", &format!("commit {i}")]);
    }
    let base = git(dir, &["rev-parse", &format!("HEAD~{commits}")]);
    (base, git(dir, &["rev-parse", "HEAD"]))
}

/// pft.txt with its base and head commits replaced by `base` and `head`.
fn pft_report(s: &Scratch, name: &str, (base, head): (&str, &str)) -> String {
    let text = std::fs::read_to_string(report("pft.txt"))
        .unwrap()
        .replace("77aa88bb99cc00dd11ee22ff33aa44bb55cc66dd", head)
        .replace("66ff77ee88", &base[..10])
        .replace("77aa88bb99", &head[..10]);
    let path = s.dir.join(name);
    std::fs::write(&path, text).unwrap();
    path.display().to_string()
}

#[test]
fn the_dry_run_plans_the_bisection_over_the_trees_range() {
    let s = Scratch::new("repro-bisect-plan");
    let linux = s.dir.join("linux");
    for commits in [4, 9] {
        let _ = std::fs::remove_dir_all(&linux);
        let ends = tree(&linux, commits);
        let r = pft_report(&s, "range.txt", (&ends.0, &ends.1));
        let args = [
            &r,
            "--dry-run",
            "--bisect",
            "--tree",
            linux.to_str().unwrap(),
        ];
        let o = reproduce(&s, &[&args[..], &["--max-rounds", "6", "--json"]].concat());
        assert!(o.status.success(), "{}", stderr(&o));
        let v: Value = serde_json::from_str(&stdout(&o)).unwrap();
        let b = &v["bisect"];
        assert_eq!(
            b["after"],
            serde_json::json!(["reproduced", "smaller", "larger"])
        );
        assert_eq!(b["base"].as_str().unwrap(), &ends.0[..10]);
        assert_eq!(b["head"].as_str().unwrap(), ends.1);
        assert_eq!(b["commits"], commits);
        // ⌈log2 commits⌉ steps, then the first bad against its parent.
        let steps = (commits as f64).log2().ceil() as u64;
        assert_eq!(b["steps"], steps);
        assert_eq!(b["pairs"], steps + 1);
        assert_eq!(b["rounds"], serde_json::json!([3, 6]));
        // Each pair boots two kernels a round at the plan's estimate.
        let run_s = v["plan"]["run_s"].as_f64().unwrap();
        let per_pair = |rounds: f64| (steps + 1) as f64 * 2.0 * rounds * run_s;
        assert_eq!(
            b["run_s"],
            serde_json::json!([per_pair(3.0), per_pair(6.0)])
        );

        let o = reproduce(&s, &args);
        let out = stdout(&o);
        assert!(o.status.success(), "{}", stderr(&o));
        assert!(out.lines().all(|l| l.chars().count() <= 80), "{out}");
        let words = out.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(
            words.contains(&format!("Bisect: {}..{}", &ends.0[..10], &ends.1[..12])),
            "{out}"
        );
        assert!(
            words.contains(&format!("{commits} commits, at most {steps} steps")),
            "{out}"
        );
    }
    // Without --tree the range is named, not counted; without --bisect
    // there is no plan of one.
    let v = plan_json(&s, "pft.txt");
    assert!(v["bisect"].is_null());
    let o = reproduce(&s, &[&report("pft.txt"), "--dry-run", "--bisect", "--json"]);
    let v: Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v["bisect"]["base"], "66ff77ee88");
    assert!(v["bisect"]["commits"].is_null() && v["bisect"]["run_s"].is_null());
    assert!(!s.db().exists());
}

#[test]
fn a_bisection_that_cannot_run_is_refused_by_the_dry_run() {
    let s = Scratch::new("repro-bisect-bad");
    let linux = s.dir.join("linux");
    let (base, head) = tree(&linux, 3);
    let dir = linux.to_str().unwrap();
    let swapped = pft_report(&s, "swapped.txt", (&head, &base));
    let absent = report("pft.txt");
    let job = report("will-it-scale.job.yaml");
    let cases: [(&[&str], &str); 4] = [
        (&[&swapped, "--tree", dir], "not an ancestor"),
        (&[&absent, "--tree", dir], "is not in --tree"),
        (
            &[&absent, "--kernel", "/a", "--kernel", "/b"],
            "needs --tree",
        ),
        (&[&job], "base and head"),
    ];
    for (args, says) in cases {
        let o = reproduce(&s, &[args, &["--dry-run", "--bisect"]].concat());
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        assert!(stderr(&o).contains(says), "{args:?}: {}", stderr(&o));
        assert!(stdout(&o).is_empty(), "{args:?}");
    }
    assert!(!s.db().exists());
}

/// Booting kernels, the plan is for the guest: one vCPU under icount
/// unless --cpus says otherwise (QEMU's icount brings up no second one,
/// and a plan for two was refused at the boot), this machine's CPUs (the
/// fake's 16) under TCG.
#[test]
fn a_guest_under_icount_is_planned_on_one_vcpu() {
    let s = Scratch::new("repro-icount");
    let wis = report("wis-process.txt");
    let plan = |extra: &[&str]| -> Value {
        let mut args = vec![&wis[..], "--kernel", "/a", "--kernel", "/b"];
        args.extend(["--dry-run", "--json"]);
        args.extend(extra);
        let o = reproduce(&s, &args);
        assert!(o.status.success(), "{}\n{}", stdout(&o), stderr(&o));
        serde_json::from_str(&stdout(&o)).expect("JSON")
    };
    let icount = plan(&["--accel", "icount"]);
    assert_eq!(icount["here"]["cpus"], 1, "{icount}");
    // nr_task 100%: one task on the one vCPU.
    assert!(command(&icount).windows(2).any(|w| w == ["--tasks", "1"]));
    assert_eq!(plan(&["--accel", "tcg"])["here"]["cpus"], 16);
    assert_eq!(
        plan(&["--accel", "icount", "--cpus", "3"])["here"]["cpus"],
        3
    );
}
