//! `run --tune`: the reversible fixes `doctor` finds, as one-value knob
//! settings joined to the run's knob plan, so the same session and crash
//! journal that serve `--knob` set, verify and restore them.

use std::collections::BTreeMap;
use std::path::Path;

use crate::knobs::{Plan, registry};

/// The run's knob plan with the tuned knobs added, and the values tuned.
/// Knobs the user varies with `--knob` keep the user's values; knobs the
/// workload measures (its `Spec::measures_knobs`, NUMA balancing for the
/// numa workloads) stay as they are.
pub fn plan(root: &Path, user: &Plan, workload: &str) -> (Plan, BTreeMap<String, String>) {
    let report = super::examine(
        root,
        &super::Context {
            cpus: Vec::new(),
            window: std::time::Duration::ZERO,
            euid: Some(0),
        },
    );
    let mut merged = user.clone();
    let mut tuned = BTreeMap::new();
    for t in report.findings.iter().flat_map(|f| &f.tune) {
        let Some(knob) = registry::find(t.knob) else {
            continue;
        };
        let varied = merged.knobs.iter().any(|(k, _)| k.name == knob.name);
        let measured =
            crate::workload::find(workload).is_some_and(|s| s.measures_knobs.contains(&knob.name));
        if varied || measured || knob.validate(&t.value).is_err() {
            continue;
        }
        merged.knobs.push((knob, vec![t.value.clone()]));
        tuned.insert(knob.name.to_string(), t.value.clone());
    }
    (merged, tuned)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn noisy() -> std::path::PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/doctor-noisy")
    }

    #[test]
    fn tunes_every_reversible_finding_once() {
        let (plan, tuned) = plan(&noisy(), &Plan::default(), "pft");
        for (k, v) in [
            ("page_reporting_order", "10"),
            ("compaction_proactiveness", "0"),
            ("khugepaged_defrag", "0"),
            ("thp", "madvise"),
            ("numa_balancing", "0"),
        ] {
            assert_eq!(tuned.get(k).map(String::as_str), Some(v), "{k}");
        }
        assert_eq!(plan.knobs.len(), tuned.len());
        // One value each: the variants (combos) stay one.
        assert_eq!(plan.combos().len(), 1);
    }

    #[test]
    fn knob_and_numa_workloads_keep_their_settings() {
        let user = Plan::parse(&["compaction_proactiveness=10,20".into()]).unwrap();
        let (plan, tuned) = plan(&noisy(), &user, "numa01");
        assert!(!tuned.contains_key("compaction_proactiveness"));
        assert!(!tuned.contains_key("numa_balancing"));
        let (_, values) = plan
            .knobs
            .iter()
            .find(|(k, _)| k.name == "compaction_proactiveness")
            .unwrap();
        assert_eq!(values, &vec!["10".to_string(), "20".to_string()]);
    }

    #[test]
    fn tuned_knobs_are_restored_after_a_kill() {
        // A copy of the fixture, so the test writes only its own files.
        let root = crate::scratch::at("");
        let rel = "proc/sys/vm/compaction_proactiveness";
        std::fs::create_dir_all(root.join("proc/sys/vm")).unwrap();
        std::fs::copy(noisy().join(rel), root.join(rel)).unwrap();
        let (plan, tuned) = plan(&root, &Plan::default(), "pft");
        assert_eq!(tuned.len(), 1);
        let jp = root.join("knobs.journal");
        let mut s = crate::knobs::Session::begin(&plan, &root, &jp, None).unwrap();
        s.apply(&tuned).unwrap();
        let read = || registry::current(&std::fs::read_to_string(root.join(rel)).unwrap());
        assert_eq!(read(), "0");
        std::mem::forget(s); // as SIGKILL would
        let lines = crate::knobs::session::recover(&jp, &root).unwrap();
        assert_eq!(lines.len(), 1);
        assert_eq!(read(), "20");
    }
}
