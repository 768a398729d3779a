//! `vmscale reproduce --dry-run` on robot reports written for the tests
//! (tests/fixtures/reproduce), against the fake 16-CPU, 128 GiB machine of
//! tests/fixtures/fake-2s4n: the JSON names testcase, test, parameters,
//! base, head, headline and every row, and the plan scaled to the machine;
//! nothing is stored; bad input exits 2 naming the problem.

use crate::common::{Scratch, fixture, stderr, stdout};
use serde_json::Value;
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
            "--reps",
            "3"
        ]
    );
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
            "--reps",
            "3"
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
            "run", "wis", "--test", "mmap1", "--mode", "thread", "--tasks", "2", "--time", "2",
            "--reps", "3"
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
        ["run", "pft", "--tasks", "8", "--size", &size, "--reps", "3"]
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
