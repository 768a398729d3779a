//! `vmscale doctor` on fixture trees (every finding with its evidence; a
//! clean tree gives none) and on this machine; `run --tune` restores what
//! it set, also after SIGKILL and `vmscale restore`.

use crate::common;

use crate::common::*;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn doctor_json(s: &Scratch, root: &Path) -> serde_json::Value {
    let r = root.to_str().unwrap();
    json(&s.vmscale(&["doctor", "--root", r, "--window", "0s", "--json"]))
}

fn checks(v: &serde_json::Value) -> Vec<String> {
    v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["check"].as_str().unwrap().to_string())
        .collect()
}

/// The two --tune tests change the same live knobs: one at a time, or one
/// would read the other's tuned values as originals.
static LIVE_KNOBS: std::sync::Mutex<()> = std::sync::Mutex::new(());

#[test]
fn noisy_tree_shows_every_finding_with_its_evidence() {
    let s = Scratch::new("doctor-noisy");
    let root = fixture("doctor-noisy");
    let v = doctor_json(&s, &root);
    let mut want = vec![
        "virtualisation",
        "steal",
        "page-reporting",
        "balloon",
        "cpu-governor",
        "cpu-boost",
        "other-load",
        "thp",
        "khugepaged",
        "compaction",
        "numa-balancing",
        "swap",
        "aslr",
        "interrupts",
    ];
    if !is_root() {
        want.push("perf-paranoid");
    }
    let mut got = checks(&v);
    got.sort();
    want.sort();
    assert_eq!(got, want);
    for f in v["findings"].as_array().unwrap() {
        assert!(!f["fix"].as_str().unwrap().is_empty());
        let ev = f["evidence"].as_array().unwrap();
        assert!(!ev.is_empty(), "{} has no evidence", f["check"]);
        // Each piece of evidence names a file of the tree and what it held.
        for e in ev {
            let path = e["path"].as_str().unwrap();
            let file = path.split_whitespace().next().unwrap();
            assert!(
                root.join(file.trim_start_matches('/')).exists(),
                "{file} is not in the tree"
            );
            assert!(!e["value"].as_str().unwrap().is_empty());
        }
    }
    let page = &v["findings"].as_array().unwrap()[2];
    assert_eq!(page["check"], "page-reporting");
    assert_eq!(page["evidence"][0]["value"], "9");
    assert_eq!(page["tune"][0]["knob"], "page_reporting_order");
    // The text names the same findings and fits 80 columns.
    let r = root.to_str().unwrap();
    let text = ok(&s.vmscale(&["doctor", "--root", r, "--window", "0s"]));
    for c in &want {
        assert!(text.contains(&format!("[{c}]")), "{c} missing:\n{text}");
    }
    assert!(text.lines().all(|l| l.chars().count() <= 80), "{text}");
}

#[test]
fn clean_tree_gives_no_finding() {
    let s = Scratch::new("doctor-clean");
    let v = doctor_json(&s, &fixture("doctor-clean"));
    assert_eq!(checks(&v), Vec::<String>::new());
    let clear = v["clear"].as_array().unwrap();
    assert!(
        clear
            .iter()
            .any(|c| c["check"] == "swap" && c["state"] == "fine")
    );
}

#[test]
fn bad_options_are_refused() {
    let s = Scratch::new("doctor-bad");
    for args in [
        &["doctor", "--cpus", "x"][..],
        &["doctor", "--cpus", "100000"],
        &["doctor", "--window", "forever"],
    ] {
        let o = s.vmscale(args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
    }
}

#[test]
fn this_machine_names_its_hypervisor_and_page_reporting() {
    // Not beside the --tune tests: taking the knob lock below repairs a
    // killed holder's knobs, which the SIGKILL test leaves for `restore`.
    let _turn = machine_turn();
    let _one = LIVE_KNOBS.lock().unwrap_or_else(|e| e.into_inner());
    let s = Scratch::new("doctor-live");
    let order = "/sys/module/page_reporting/parameters/page_reporting_order";
    // A --tune run (beside this test, or any on the machine) sets the
    // order to 10 for a while: holding the machine-wide knob lock keeps
    // every vmscale from changing it until doctor has read it. Without
    // root, judge only when it read the same before and after doctor.
    let _lock = is_root().then(|| {
        vmscale::knobs::lock::KnobLock::acquire(vmscale::knobs::lock::Wait::Yes)
            .expect("the knob lock")
    });
    let before = std::fs::read_to_string(order).unwrap_or_default();
    let v = json(&s.vmscale(&["doctor", "--window", "100ms", "--json"]));
    let found = checks(&v);
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    if cpuinfo.split_whitespace().any(|w| w == "hypervisor") {
        assert!(found.contains(&"virtualisation".to_string()), "{found:?}");
    }
    let balloon_reports = std::fs::read_dir("/sys/bus/virtio/devices")
        .into_iter()
        .flatten()
        .flatten()
        .any(|d| {
            let r = |f: &str| std::fs::read_to_string(d.path().join(f)).unwrap_or_default();
            r("device").trim() == "0x0005" && r("features").as_bytes().get(5) == Some(&b'1')
        });
    let value = std::fs::read_to_string(order).unwrap_or_default();
    if balloon_reports && value == before && !value.trim().is_empty() && value.trim() != "10" {
        assert!(found.contains(&"page-reporting".to_string()), "{found:?}");
    }
}

/// What `--tune` would set here, from doctor: knob -> value.
fn tunes(s: &Scratch) -> Vec<(String, String)> {
    let v = json(&s.vmscale(&["doctor", "--window", "0s", "--json"]));
    v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|f| f["tune"].as_array().unwrap().clone())
        .map(|t| {
            (
                t["knob"].as_str().unwrap().to_string(),
                t["value"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

fn read_knob(path: &str) -> String {
    vmscale::knobs::registry::current(&std::fs::read_to_string(path).unwrap())
}

fn state(s: &Scratch) -> PathBuf {
    s.dir.join("state")
}

fn command(s: &Scratch, args: &[&str]) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_vmscale"));
    c.args(args)
        .env("VMSCALE_DB", s.db())
        .env("VMSCALE_STATE_DIR", state(s));
    c
}

#[test]
fn tune_sets_records_and_restores() {
    let _turn = machine_turn();
    let _one = LIVE_KNOBS.lock().unwrap_or_else(|e| e.into_inner());
    let s = Scratch::new("tune-run");
    if !is_root() {
        let o = command(
            &s,
            &["run", "pft", "--tasks", "1", "--size", "8M", "--tune"],
        )
        .output()
        .unwrap();
        assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
        assert!(stderr(&o).contains("needs root"));
        return;
    }
    let want = tunes(&s);
    if want.is_empty() {
        common::skip("doctor finds nothing --tune could set on this machine");
        return;
    }
    let files: Vec<String> = want
        .iter()
        .map(|(k, _)| format!("/{}", vmscale::knobs::registry::find(k).unwrap().path))
        .collect();
    let before: Vec<String> = files.iter().map(|f| read_knob(f)).collect();
    let o = command(
        &s,
        &[
            "run", "pft", "--tasks", "1", "--size", "8M", "--reps", "2", "--warmup", "0", "--tune",
            "--json",
        ],
    )
    .output()
    .unwrap();
    let v = json(&o);
    let after: Vec<String> = files.iter().map(|f| read_knob(f)).collect();
    assert_eq!(before, after, "knobs not restored");
    for (k, val) in &want {
        assert_eq!(v["meta"]["knobs"]["tuned"][k], val.as_str(), "{k}");
    }
    assert!(v["meta"]["note"].as_str().unwrap().contains("--tune set"));
}

#[test]
fn tune_is_restored_after_sigkill() {
    let _turn = machine_turn();
    let _one = LIVE_KNOBS.lock().unwrap_or_else(|e| e.into_inner());
    let s = Scratch::new("tune-kill");
    if !is_root() {
        common::skip("--tune needs root");
        return;
    }
    let Some((knob, value)) = tunes(&s).into_iter().next() else {
        common::skip("doctor finds nothing --tune could set on this machine");
        return;
    };
    let file = format!("/{}", vmscale::knobs::registry::find(&knob).unwrap().path);
    let original = read_knob(&file);
    let mut child = command(
        &s,
        &[
            "run", "pft", "--tasks", "1", "--size", "8M", "--warmup", "0", "--reps", "100000",
            "--tune",
        ],
    )
    .stdout(Stdio::null())
    .stderr(Stdio::null())
    .spawn()
    .unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    while read_knob(&file) != value {
        if Instant::now() > deadline || child.try_wait().unwrap().is_some() {
            let _ = child.kill();
            let _ = child.wait();
            let _ = command(&s, &["restore"]).output();
            panic!("{knob} never became {value}");
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    assert_eq!(read_knob(&file), value, "SIGKILL left {knob} as tuned");
    let o = command(&s, &["restore"]).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stdout(&o).contains(&format!("restored knob {knob}")),
        "{}",
        stdout(&o)
    );
    assert_eq!(read_knob(&file), original);
}
