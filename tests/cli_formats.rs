//! `--json`, `--markdown` and `--csv` mean the same on run, show and list:
//! run prints what show prints, list offers all three.

use crate::common::*;

#[test]
fn run_prints_what_show_prints_in_every_format() {
    let s = Scratch::new("formats");
    let run = ["run", "pft", "--tasks", "1", "--size", "8M", "--reps", "1"];
    for (i, flag) in ["--markdown", "--csv", "--json"].iter().enumerate() {
        let printed = ok(&s.vmscale(&[&run[..], &[flag]].concat()));
        let id = (i + 1).to_string();
        assert_eq!(printed, ok(&s.vmscale(&["show", &id, flag])), "{flag}");
    }
    let csv = ok(&s.vmscale(&["show", "1", "--csv"]));
    assert!(csv.starts_with("run,case,variant,tasks,"), "{csv}");
    assert!(ok(&s.vmscale(&["show", "1", "--markdown"])).contains("| case | figure |"));

    let list_csv = ok(&s.vmscale(&["list", "--csv"]));
    let lines: Vec<&str> = list_csv.lines().collect();
    assert_eq!(lines[0], "id,started_at,workload,status,samples,label,host");
    assert_eq!(lines.len(), 4, "{list_csv}");
    assert!(lines[1].starts_with("1,") && lines[1].contains(",pft,complete,1,"));
    let md = ok(&s.vmscale(&["list", "--markdown"]));
    assert_eq!(
        md.lines().filter(|l| l.starts_with("| ")).count(),
        5,
        "{md}"
    );
    assert_eq!(
        json(&s.vmscale(&["list", "--json"]))
            .as_array()
            .unwrap()
            .len(),
        3
    );
    let o = s.vmscale(&["list", "--csv", "--json"]);
    assert_eq!(o.status.code(), Some(2));
}
