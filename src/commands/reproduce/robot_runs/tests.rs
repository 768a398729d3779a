use super::*;
use crate::model::{Better, CaseSamples, RunMeta};
use crate::reproduce::planner::{self, Asked, Here};

const PFT: &str = include_str!("../../../../tests/fixtures/reproduce/pft.txt");

/// The pft report (with `edit` applied to its text) and its plan.
fn planned(edit: impl Fn(&str) -> String) -> (Report, Plan) {
    let report = crate::reproduce::read(&edit(PFT)).unwrap();
    let here = Here {
        cpus: 2,
        memory: 1 << 30,
        nodes: 1,
    };
    let plan = planner::plan(&report, here, Asked::default()).unwrap();
    (report, plan)
}

/// This machine's base run as reproduce passes it: pft's figures.
fn like() -> Run {
    let mut meta = RunMeta::bare(1, "pft", json!({}));
    meta.figures = vec![
        Figure::new("flt/cpu/s", "faults/s", Better::Higher, true),
        Figure::new("system", "s", Better::Lower, false),
        Figure::new("faults", "", Better::Lower, false),
    ];
    Run {
        meta,
        cases: vec![CaseSamples {
            case: Case::new(1, "pft"),
            samples: Vec::new(),
        }],
    }
}

fn stored(db: &Path, (report, plan): &(Report, Plan)) -> Vec<RobotRun> {
    let (b, h) = (report.base.as_ref().unwrap(), report.head.as_ref().unwrap());
    store(db, report, plan, &like(), [b, h]).unwrap()
}

fn labels(runs: &[RobotRun]) -> Vec<&str> {
    runs.iter().map(|r| r.label.as_str()).collect()
}

#[test]
fn the_same_report_stored_again_finds_its_pair() {
    let db = crate::scratch::at("s.db");
    let report = planned(str::to_string);
    let first = stored(&db, &report);
    assert_eq!(labels(&first), ["robot-66ff77ee88", "robot-77aa88bb99cc"]);
    assert!(first.iter().all(|r| !r.reused));
    let again = stored(&db, &report);
    assert_eq!(
        again.iter().map(|r| (r.id, r.reused)).collect::<Vec<_>>(),
        first.iter().map(|r| (r.id, true)).collect::<Vec<_>>()
    );
    let store = Store::open(&db).unwrap();
    assert_eq!(store.list().unwrap().len(), 2);
    // Each side holds the robot's figure of its column, and the label
    // compare is given names that one run.
    for (r, want) in first.iter().zip([512034.0, 470047.0]) {
        assert_eq!(store.resolve_label(&r.label).unwrap(), Some(r.id));
        let run = store.load(r.id).unwrap();
        assert_eq!(run.cases[0].samples[0].data.figures["flt/cpu/s"], want);
    }
}

#[test]
fn another_report_on_the_same_commits_gets_labels_of_its_own() {
    let db = crate::scratch::at("s.db");
    let report = planned(str::to_string);
    let first = stored(&db, &report);
    // The same commits at another nr_task: the robot's other figures.
    let other = planned(|t| t.replace("nr_task: 50%", "nr_task: 100%"));
    assert_ne!(other.0.tests[0].params, report.0.tests[0].params);
    let second = stored(&db, &other);
    assert_eq!(
        labels(&second),
        ["robot-66ff77ee88-2", "robot-77aa88bb99cc-2"]
    );
    assert!(second.iter().all(|r| !r.reused));
    // Each report finds its own pair again; no label names two runs.
    assert_eq!(stored(&db, &report)[0].id, first[0].id);
    assert_eq!(stored(&db, &other)[1].id, second[1].id);
    let store = Store::open(&db).unwrap();
    assert_eq!(store.list().unwrap().len(), 4);
    for r in first.iter().chain(&second) {
        assert_eq!(store.resolve_label(&r.label).unwrap(), Some(r.id));
    }
}
