//! End-to-end tests of `run colour` and `pcp`: pages read equal pages
//! touched, the refusal without CAP_SYS_ADMIN, the knob A/B rendering from
//! a run built in the store, and the zoneinfo fixture.

use crate::common;

use std::collections::BTreeMap;

use crate::common::{Scratch, ok, stderr, stdout};
use vmscale::model::{Case, Figure, Sample, SampleData, Status};
use vmscale::store::{NewRun, Store};

/// None (with the reason printed) when this machine cannot give PFNs;
/// under CI=true that fails the test.
fn colour_run(s: &Scratch, args: &[&str]) -> Option<serde_json::Value> {
    let mut all = vec!["run", "colour", "--json", "--reps", "1", "--warmup", "0"];
    all.extend_from_slice(args);
    let o = s.vmscale(&all);
    if o.status.code() == Some(2) && stderr(&o).contains("pagemap") {
        common::skip(&format!("pagemap PFNs unavailable here: {}", stderr(&o)));
        return None;
    }
    Some(serde_json::from_str(&ok(&o)).expect("json"))
}

fn check_pages(run: &serde_json::Value, tasks: usize, pages_per_task: f64) {
    for case in run["cases"].as_array().unwrap() {
        for sample in case["samples"].as_array().unwrap() {
            let d = &sample["data"];
            let f = &d["figures"];
            assert_eq!(f["pages"], f["pages_read"], "pages read != touched");
            assert_eq!(f["pages"].as_f64(), Some(pages_per_task * tasks as f64));
            let ts = d["tasks"].as_array().unwrap();
            assert_eq!(ts.len(), tasks);
            for t in ts {
                assert_eq!(t["pages"].as_f64(), Some(pages_per_task));
                assert_eq!(t["pages_read"].as_f64(), Some(pages_per_task));
                // Every base page falls in exactly one colour.
                let hist: f64 = t
                    .as_object()
                    .unwrap()
                    .iter()
                    .filter(|(k, _)| k.starts_with("llc:"))
                    .map(|(_, v)| v.as_f64().unwrap())
                    .sum();
                let thp = t["thp_pages"].as_f64().unwrap();
                assert_eq!(hist + thp, pages_per_task);
                let frac = t["eff_fraction"].as_f64().unwrap();
                assert!(frac > 0.0 && frac <= 1.0 + 1e-9);
            }
            assert_eq!(f["duplicate_frames"].as_f64(), Some(0.0));
        }
    }
}

#[test]
fn threads_pages_read_equal_pages_touched() {
    let s = Scratch::new("colour-threads");
    let Some(run) = colour_run(
        &s,
        &["--tasks", "2", "--size-per-task", "8M", "--colours", "16"],
    ) else {
        return;
    };
    check_pages(&run, 2, 2048.0);
    // The stored run renders the same report, with Steiner's table.
    let text = ok(&s.vmscale(&["show", "last"]));
    assert!(text.contains("LLC colour"), "{text}");
    assert!(text.contains("(equal)"), "{text}");
}

#[test]
fn processes_interleaved_pages_read_equal_pages_touched() {
    let s = Scratch::new("colour-procs");
    let Some(run) = colour_run(
        &s,
        &[
            "--tasks",
            "1,3",
            "--mode",
            "process",
            "--size-per-task",
            "4M",
            "--interleave",
            "4",
        ],
    ) else {
        return;
    };
    assert_eq!(run["cases"].as_array().unwrap().len(), 2);
    let one = &run["cases"][0]["samples"][0]["data"];
    assert_eq!(one["tasks"].as_array().unwrap().len(), 1);
    check_pages(
        &serde_json::json!({"cases": [run["cases"][1].clone()]}),
        3,
        1024.0,
    );
}

#[test]
fn bad_input_is_refused_before_the_store() {
    let s = Scratch::new("colour-bad");
    for args in [
        vec!["--colours", "1"],
        vec!["--interleave", "0"],
        vec!["--size-per-task", "1K"],
        vec!["--tasks", "0"],
    ] {
        let mut all = vec!["run", "colour"];
        all.extend(args.iter());
        let o = s.vmscale(&all);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        assert!(!stderr(&o).is_empty());
    }
    assert!(!s.db().exists(), "a refused run must not create the store");
}

#[test]
fn unprivileged_run_is_refused_clearly() {
    let s = Scratch::new("colour-unpriv");
    let bin = s.dir.join("vmscale");
    std::fs::copy(env!("CARGO_BIN_EXE_vmscale"), &bin).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&s.dir, std::fs::Permissions::from_mode(0o777)).unwrap();
    std::fs::set_permissions(&bin, std::fs::Permissions::from_mode(0o755)).unwrap();
    let db = s.dir.join("nobody.db");
    let o = std::process::Command::new("setpriv")
        .args([
            "--reuid=65534",
            "--regid=65534",
            "--clear-groups",
            "--inh-caps=-all",
        ])
        .arg(&bin)
        .args(["run", "colour", "--tasks", "1", "--size-per-task", "1M"])
        .env("VMSCALE_DB", &db)
        .output();
    let o = match o {
        Ok(o) if !stderr(&o).contains("setpriv:") => o,
        Ok(o) => return common::skip(&format!("setpriv cannot drop privilege: {}", stderr(&o))),
        Err(e) => return common::skip(&format!("no setpriv: {e}")),
    };
    assert_eq!(o.status.code(), Some(2), "{}{}", stdout(&o), stderr(&o));
    let err = stderr(&o);
    assert!(err.contains("CAP_SYS_ADMIN"), "{err}");
    assert!(!stdout(&o).contains("colour  "), "no histograms of zeros");
    assert!(!db.exists(), "nothing stored for a refused run");
}

fn sample(eff: f64, cov: f64) -> Sample {
    let mut data = SampleData::default();
    for (k, v) in [
        ("eff_fraction", eff / 16.0),
        ("eff_colours", eff),
        ("cov_max", cov),
        ("pages", 1000.0),
        ("pages_read", 1000.0),
    ] {
        data.figures.insert(k.into(), v);
    }
    let mut t = BTreeMap::new();
    t.insert("eff".into(), eff);
    t.insert("llc:0".into(), 1000.0);
    data.tasks = vec![t];
    Sample {
        seq: 0,
        warmup: false,
        taken_at: "2025-01-01T00:00:00Z".into(),
        data,
        vmstat: BTreeMap::new(),
        noise: BTreeMap::new(),
        flagged: false,
    }
}

#[test]
fn knob_variants_render_side_by_side() {
    let s = Scratch::new("colour-knobs");
    let base = Case::new(2, "parallel");
    let knob = |v: &str| base.with_knobs(BTreeMap::from([("pcp_high_fraction".into(), v.into())]));
    let (a, b) = (knob("0"), knob("8"));
    {
        let mut store = Store::open(&s.db()).unwrap();
        let config = serde_json::json!({"colours": 16, "colours_from": "--colours",
            "page_size": 4096, "size_per_task": 1048576, "mode": "thread", "thp": "never"});
        let id = store
            .create_run(&NewRun {
                label: None,
                workload: "colour",
                command_line: "vmscale run colour --knob pcp_high_fraction=0,8",
                config: &config,
                figures: &[Figure::new(
                    "eff_fraction",
                    "fraction",
                    vmscale::model::Better::Higher,
                    false,
                )],
                machine: &serde_json::json!({}),
                knobs: &serde_json::json!({}),
                cases: &[a.clone(), b.clone()],
                origin: "measured",
            })
            .unwrap();
        store.add_sample(id, &a, &sample(8.0, 90.0)).unwrap();
        store.add_sample(id, &b, &sample(12.0, 45.0)).unwrap();
        store
            .finish_run(id, Status::Complete, Some("test"))
            .unwrap();
    }
    let text = ok(&s.vmscale(&["show", "last"]));
    assert!(
        text.contains("case parallel, 2 tasks, pcp_high_fraction=0"),
        "{text}"
    );
    assert!(
        text.contains("case parallel, 2 tasks, pcp_high_fraction=8"),
        "{text}"
    );
    assert!(text.contains("knob A/B"), "{text}");
    let eff = text
        .lines()
        .skip_while(|l| !l.starts_with("effective colours"))
        .nth(2)
        .unwrap();
    assert!(eff.contains("8.0") && eff.contains("12.0"), "{eff}");
    assert!(eff.contains("+50.0% better"), "{eff}");
    let skew = text
        .lines()
        .skip_while(|l| !l.starts_with("colour skew"))
        .nth(2)
        .unwrap();
    assert!(skew.contains("-50.0% better"), "{skew}");
}

#[test]
fn pcp_reads_a_two_node_fixture() {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/zoneinfo-2node");
    let s = Scratch::new("pcp");
    let text = ok(&s.vmscale(&["pcp", "--root", root]));
    assert!(text.contains("11172 pages"), "{text}");
    let lines: Vec<&str> = text.lines().filter(|l| l.contains("Normal")).collect();
    assert_eq!(lines.len(), 2, "{text}");
    let j: serde_json::Value =
        serde_json::from_str(&ok(&s.vmscale(&["pcp", "--root", root, "--json"]))).unwrap();
    assert_eq!(j["held_pages"], 11172);
    assert_eq!(j["high_pages"], 38232);
    assert_eq!(j["batch_max"], 63);
    let per_cpu = ok(&s.vmscale(&["pcp", "--root", root, "--per-cpu"]));
    assert!(
        per_cpu.contains("   1 Normal       2     4590     4590      63"),
        "{per_cpu}"
    );
    let missing = s.vmscale(&["pcp", "--root", "/nonexistent"]);
    assert_eq!(missing.status.code(), Some(1));
}
