//! End-to-end knob A/B: refused input changes nothing; an interrupted run
//! (SIGINT) and a killed one (SIGKILL, then `vmscale restore` or the next
//! start) leave the knob at its original value.

use crate::common;

use crate::common::turn::Turn;
use crate::common::*;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const DEFRAG: &str = "/sys/kernel/mm/transparent_hugepage/defrag";
const STAT_INTERVAL: &str = "/proc/sys/vm/stat_interval";

/// The selected value of a knob file ("a [b] c" -> "b").
/// Tests that change live knobs run one at a time: each takes the
/// machine-wide knob lock, and a left-over journal is repaired at start only
/// while that lock is free, so a neighbour's run would hide the repair.
static LIVE_KNOBS: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn live_knobs() -> (Turn, std::sync::MutexGuard<'static, ()>) {
    let turn = machine_turn();
    (turn, LIVE_KNOBS.lock().unwrap_or_else(|e| e.into_inner()))
}

fn knob(path: &str) -> String {
    let t = std::fs::read_to_string(path).expect("read knob");
    let t = t.trim();
    match (t.find('['), t.find(']')) {
        (Some(a), Some(b)) if a < b => t[a + 1..b].to_string(),
        _ => t.to_string(),
    }
}

fn state_dir(s: &Scratch) -> PathBuf {
    s.dir.join("state")
}

fn journal(s: &Scratch) -> PathBuf {
    state_dir(s).join("knobs.journal")
}

/// vmscale with this scratch's store and knob journal directory.
fn command(s: &Scratch, args: &[&str]) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_vmscale"));
    c.args(args)
        .env("VMSCALE_DB", s.db())
        .env("VMSCALE_STATE_DIR", state_dir(s))
        .env_remove("XDG_DATA_HOME");
    c
}

/// A long knob run that is interrupted (SIGINT) if the test fails early.
struct Running(Child);

impl Drop for Running {
    fn drop(&mut self) {
        if let Ok(None) = self.0.try_wait() {
            signal(&self.0, "INT");
            let _ = self.0.wait();
        }
    }
}

fn signal(c: &Child, sig: &str) {
    let ok = Command::new("kill")
        .args([&format!("-{sig}"), &c.id().to_string()])
        .status()
        .expect("run kill")
        .success();
    assert!(ok, "kill -{sig} failed");
}

fn start_long_run(s: &Scratch, spec: &str) -> Running {
    let child = command(
        s,
        &[
            "run", "pft", "--tasks", "1", "--size", "8M", "--warmup", "0", "--reps", "100000",
            // THP knobs change nothing under pft's default --thp never.
            "--thp", "always", "--knob", spec,
        ],
    )
    .stdout(Stdio::null())
    .stderr(Stdio::piped())
    .spawn()
    .expect("spawn vmscale");
    Running(child)
}

/// Waits until the knob has left its original value (the run is sampling).
fn wait_changed(path: &str, original: &str, run: &mut Running) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while knob(path) == original {
        assert!(
            run.0.try_wait().expect("try_wait").is_none(),
            "vmscale ended before changing {path}"
        );
        assert!(Instant::now() < deadline, "{path} never changed");
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Two values of `choices` other than `original`.
fn two_others(original: &str, choices: &[&str]) -> String {
    choices
        .iter()
        .filter(|c| **c != original)
        .take(2)
        .copied()
        .collect::<Vec<_>>()
        .join(",")
}

#[test]
fn refused_knobs_change_nothing_and_store_nothing() {
    let _turn = machine_turn();
    let s = Scratch::new("knob-refused");
    // swappiness: no other test here sets it, so a change would be ours.
    let swappiness = "/proc/sys/vm/swappiness";
    let before = knob(swappiness);
    for (spec, says) in [
        ("nosuch=1,2", "unknown knob 'nosuch'"),
        ("swappiness=10,sometimes", "'sometimes' is not a value"),
        ("vm.swappiness=11,300", "an integer 0..200"),
        ("swappiness", "NAME=VALUE"),
    ] {
        let o = command(
            &s,
            &[
                "run", "pft", "--tasks", "1", "--size", "8M", "--reps", "1", "--knob", spec,
            ],
        )
        .output()
        .expect("run vmscale");
        assert_eq!(o.status.code(), Some(2), "{spec}: {}", stderr(&o));
        assert!(stderr(&o).contains(says), "{spec}: {}", stderr(&o));
        assert_eq!(knob(swappiness), before);
        assert!(!s.db().exists(), "{spec}: a store was written");
        assert!(!journal(&s).exists(), "{spec}: a journal was written");
    }
}

#[test]
fn non_root_is_refused_before_anything() {
    if !is_root() || !Path::new("/usr/bin/setpriv").exists() {
        common::skip("needs root and setpriv to drop privileges");
        return;
    }
    let s = Scratch::new("knob-nonroot");
    let o = Command::new("/usr/bin/setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
        .arg(env!("CARGO_BIN_EXE_vmscale"))
        .args([
            "run",
            "pft",
            "--tasks",
            "1",
            "--size",
            "8M",
            "--thp",
            "always",
            "--knob",
            "thp_defrag=never",
        ])
        .env("VMSCALE_DB", s.db())
        .env("VMSCALE_STATE_DIR", state_dir(&s))
        .output()
        .expect("run setpriv");
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("needs root"), "{}", stderr(&o));
    assert!(!s.db().exists());
}

#[test]
fn sigint_restores_thp_defrag() {
    let _one = live_knobs();
    if !is_root() || !Path::new(DEFRAG).exists() {
        common::skip("needs root and THP");
        return;
    }
    let s = Scratch::new("knob-sigint");
    let original = knob(DEFRAG);
    let values = two_others(&original, &["never", "always", "defer", "madvise"]);
    let mut run = start_long_run(&s, &format!("thp_defrag={values}"));
    wait_changed(DEFRAG, &original, &mut run);
    assert!(
        journal(&s).exists(),
        "journal written before the first change"
    );
    signal(&run.0, "INT");
    let status = run.0.wait().expect("wait");
    assert_eq!(status.code(), Some(130));
    assert_eq!(knob(DEFRAG), original);
    assert!(!journal(&s).exists(), "journal removed after restore");
    // The samples taken are stored, the run is marked incomplete, and the
    // knob values are recorded.
    let shown = json(
        &command(&s, &["show", "last", "--json"])
            .output()
            .expect("show"),
    );
    assert_eq!(shown["meta"]["status"], "incomplete");
    assert_eq!(
        shown["meta"]["knobs"]["original"]["thp_defrag"],
        original.as_str()
    );
    let cases = shown["cases"].as_array().expect("cases");
    assert_eq!(cases.len(), 2);
    assert!(cases[0]["case"]["knobs"]["thp_defrag"].is_string());
}

#[test]
fn sigkill_is_repaired_by_next_start_and_by_restore() {
    let _one = live_knobs();
    if !is_root() || !Path::new(STAT_INTERVAL).exists() {
        common::skip("needs root and vm.stat_interval");
        return;
    }
    let s = Scratch::new("knob-sigkill");
    let original = knob(STAT_INTERVAL);
    let values = two_others(&original, &["1", "2", "3"]);
    let spec = format!("stat_interval={values}");

    // Killed, then repaired by the next start of any command.
    let mut run = start_long_run(&s, &spec);
    wait_changed(STAT_INTERVAL, &original, &mut run);
    run.0.kill().expect("SIGKILL");
    run.0.wait().expect("wait");
    assert_ne!(
        knob(STAT_INTERVAL),
        original,
        "SIGKILL left the knob changed"
    );
    assert!(journal(&s).exists());
    let o = command(&s, &["list"]).output().expect("list");
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("restored knob stat_interval"),
        "{}",
        stderr(&o)
    );
    assert_eq!(knob(STAT_INTERVAL), original);
    assert!(!journal(&s).exists());

    // Killed, then repaired by `vmscale restore`.
    let mut run = start_long_run(&s, &spec);
    wait_changed(STAT_INTERVAL, &original, &mut run);
    run.0.kill().expect("SIGKILL");
    run.0.wait().expect("wait");
    assert_ne!(knob(STAT_INTERVAL), original);
    let o = command(&s, &["restore"]).output().expect("restore");
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stdout(&o).contains(&format!("restored knob stat_interval to '{original}'")),
        "{}",
        stdout(&o)
    );
    assert_eq!(knob(STAT_INTERVAL), original);
    assert!(!journal(&s).exists());
    let o = command(&s, &["restore"]).output().expect("restore");
    assert!(stdout(&o).contains("nothing to restore"));
}

#[test]
fn knob_run_prints_one_block_per_value() {
    let _one = live_knobs();
    if !is_root() || !Path::new(DEFRAG).exists() {
        common::skip("needs root and THP");
        return;
    }
    // Uses khugepaged_defrag, which the other tests here leave alone.
    let path = "/sys/kernel/mm/transparent_hugepage/khugepaged/defrag";
    let s = Scratch::new("knob-blocks");
    let original = knob(path);
    let o = command(
        &s,
        &[
            "run",
            "pft",
            "--tasks",
            "1",
            "--size",
            "8M",
            "--reps",
            "2",
            "--thp",
            "always",
            "--knob",
            "khugepaged_defrag=0,1",
        ],
    )
    .output()
    .expect("run");
    let out = ok(&o);
    assert_eq!(knob(path), original);
    assert!(out.contains("[khugepaged_defrag=0]\n"), "{out}");
    assert!(out.contains("[khugepaged_defrag=1]\n"), "{out}");
    assert!(out.contains(&format!(
        "knob khugepaged_defrag: 0, 1 (original {original})"
    )));
    // The header is wrapped to 80 columns: compare words, not line breaks.
    let words = out.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(words.contains("2 knob variants interleaved"), "{out}");
    // A B A B: with times of millisecond resolution, the variants' samples
    // of each repetition satisfy A0 <= B0 <= A1 <= B1 <= A2 <= B2.
    let shown = json(
        &command(&s, &["show", "last", "--json"])
            .output()
            .expect("show"),
    );
    let cases = shown["cases"].as_array().expect("cases");
    assert_eq!(cases.len(), 2);
    let times = |c: &serde_json::Value| -> Vec<String> {
        c["samples"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|s| s["taken_at"].as_str().unwrap_or("").to_string())
            .collect()
    };
    let (a, b) = (times(&cases[0]), times(&cases[1]));
    assert_eq!((a.len(), b.len()), (3, 3), "1 warm-up + 2 samples each");
    for i in 0..3 {
        assert!(a[i] <= b[i], "{a:?} {b:?}");
        if i + 1 < 3 {
            assert!(b[i] <= a[i + 1], "not interleaved: {a:?} {b:?}");
        }
    }
}

#[test]
fn adaptive_stopping_says_why_and_noise_is_stored() {
    let s = Scratch::new("adaptive");
    // A precision no real measurement reaches: stops at --max-reps.
    let o = command(
        &s,
        &[
            "run",
            "pft",
            "--tasks",
            "1",
            "--size",
            "8M",
            "--precision",
            "0.0001%",
            "--max-reps",
            "4",
            "--json",
        ],
    )
    .output()
    .expect("run");
    let r = json(&o);
    let note = r["meta"]["note"].as_str().unwrap_or("");
    assert!(note.contains("max-reps 4 stopped 1 (fault/1)"), "{note}");
    let samples = r["cases"][0]["samples"].as_array().expect("samples");
    assert_eq!(samples.len(), 5, "1 warm-up + 4");
    for smp in samples {
        let n = &smp["noise"];
        assert!(n["other_cpu_s"].as_f64().is_some_and(|v| v >= 0.0), "{n}");
        assert!(n["capacity_s"].as_f64().is_some_and(|v| v > 0.0), "{n}");
        assert!(n["steal_s"].as_f64().is_some(), "{n}");
    }
    // --reps still forces a fixed count.
    let out = ok(&command(
        &s,
        &["run", "pft", "--tasks", "1", "--size", "8M", "--reps", "2"],
    )
    .output()
    .expect("run"));
    assert!(
        out.contains("fixed count: 2 samples per case after 1 warm-up"),
        "{out}"
    );
    // Bad stopping options are input errors.
    for (flag, val) in [
        ("--precision", "0%"),
        ("--max-time", "soon"),
        ("--max-reps", "0"),
        ("--noise-threshold", "150%"),
    ] {
        let o = command(
            &s,
            &["run", "pft", "--tasks", "1", "--size", "8M", flag, val],
        )
        .output()
        .expect("run");
        assert_eq!(o.status.code(), Some(2), "{flag} {val}: {}", stderr(&o));
        assert!(stderr(&o).contains(flag), "{flag}: {}", stderr(&o));
    }
}

#[test]
fn a_knob_value_given_twice_is_an_a_a_comparison() {
    let _one = live_knobs();
    if !is_root() {
        common::skip("needs root");
        return;
    }
    // The current value twice: nothing changes, yet the chain is whole.
    let swappiness = "/proc/sys/vm/swappiness";
    let v = knob(swappiness);
    let s = Scratch::new("knob-aa");
    let spec = format!("swappiness={v},{v}");
    let args = [
        "run", "pft", "--tasks", "1", "--size", "8M", "--reps", "4", "--knob", &spec,
    ];
    let out = ok(&command(&s, &args).output().expect("run"));
    assert_eq!(knob(swappiness), v);
    assert!(out.contains(&format!("[swappiness={v}#2]\n")), "{out}");
    let cmp = command(&s, &["compare", "last", "--json"])
        .output()
        .expect("compare");
    let j = json(&cmp);
    assert_eq!(j["kind"], "variants");
    assert_eq!(j["sides"][1]["label"], format!("swappiness={v}#2"));
    let paired = &j["ratio"]["rows"][0]["paired"];
    assert_eq!(paired["pairs"], 4, "{paired}");
    let (lo, hi) = (
        paired["ci95"][0].as_f64().unwrap(),
        paired["ci95"][1].as_f64().unwrap(),
    );
    let r = paired["ratio"].as_f64().unwrap();
    assert!(lo <= r && r <= hi && lo > 0.0, "{paired}");
    let text = ok(&command(&s, &["compare", "last"]).output().expect("compare"));
    assert!(text.contains("PAIRED [95% CI]"), "{text}");
}
