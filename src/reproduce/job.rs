//! lkp's job.yaml (the file a robot report's materials link to) into a
//! typed [`Report`]: one test, its parameters, the test box and the one
//! commit it ran. The subset of YAML lkp writes is read line by line: a
//! top-level `key: value`, a testcase section (`will-it-scale:` with
//! `  mode: thread` under it), `#!` comments. The job's own parameters
//! are the keys before `job_origin:`; what follows is lkp's queue and
//! host (`nr_cpu`, `memory`, `model`, `brand`, `nr_node`).

use super::report::{Commit, Machine, ReadError, Report, Source, Test};

/// Keys of the job's head that are not test parameters.
const NOT_PARAMS: &[&str] = &["suite", "testcase", "category"];
/// Keys of lkp's queue and host that the axis line of a mail carries.
const AXES: &[&str] = &[
    "compiler",
    "cpufreq_governor",
    "kconfig",
    "rootfs",
    "tbox_group",
];

/// Whether unquoted lines are a job.yaml: `suite:` and `testcase:` at the
/// top level and no robot headline.
pub(super) fn looks_like_job(lines: &[String]) -> bool {
    let top = |k: &str| lines.iter().any(|l| l.starts_with(k));
    top("suite: ") && top("testcase: ") && !lines.iter().any(|l| l.contains("noticed a"))
}

pub(super) fn read(lines: &[String]) -> Result<Report, ReadError> {
    let mut test = Test::default();
    let mut host: Vec<(String, String)> = Vec::new();
    let mut section: Option<String> = None;
    let mut in_head = true;
    for line in lines {
        let skip = line.trim_start().starts_with(['#', ':']) || line.starts_with("---");
        if skip || line.trim().is_empty() {
            continue;
        }
        let nested = line.starts_with(' ');
        let Some((k, v)) = line.trim().split_once(':') else {
            continue;
        };
        let (k, v) = (k.trim().to_string(), unyaml(v));
        if nested {
            // Only the testcase section's keys are the test's; a monitor's
            // or a role's are not.
            if in_head
                && section
                    .as_deref()
                    .is_some_and(|s| Some(s) == test.testcase.as_deref())
                && !v.is_empty()
            {
                test.params.push((k, v));
            }
            continue;
        }
        section = v.is_empty().then(|| k.clone());
        if k == "job_origin" {
            in_head = false;
        }
        match k.as_str() {
            "testcase" => test.testcase = Some(v),
            _ if in_head && !v.is_empty() && !NOT_PARAMS.contains(&k.as_str()) => {
                test.params.push((k, v));
            }
            _ if !in_head && !v.is_empty() => host.push((k, v)),
            _ => {}
        }
    }
    if test.testcase.is_none() {
        return Err(ReadError::JobWithoutTestcase);
    }
    let get = |k: &str| host.iter().find(|(hk, _)| hk == k).map(|(_, v)| v.as_str());
    let num = |k: &str| get(k).and_then(|v| v.parse::<u64>().ok());
    test.machine = Some(Machine {
        name: get("tbox_group").or(get("testbox")).map(str::to_string),
        threads: num("nr_cpu"),
        sockets: None,
        nodes: num("nr_node"),
        cpu: get("brand").or(get("model")).map(str::to_string),
        memory: get("memory").and_then(|m| crate::parse::size(m).ok()),
    });
    for k in AXES {
        if let Some(v) = get(k).or_else(|| test.param(k)) {
            test.axes.push((k.to_string(), v.to_string()));
        }
    }
    if let Some(tc) = test.testcase.clone() {
        test.axes.push(("testcase".into(), tc));
    }
    let head = get("commit").map(|id| Commit {
        id: id.to_ascii_lowercase(),
        subject: None,
    });
    Ok(Report {
        source: Source::JobYaml,
        headline: None,
        base: None,
        head,
        tests: vec![test],
    })
}

/// A YAML scalar as lkp writes it: plain, or in single or double quotes.
fn unyaml(v: &str) -> String {
    let v = v.trim();
    let q = |c: char| v.len() >= 2 && v.starts_with(c) && v.ends_with(c);
    if q('"') || q('\'') {
        v[1..v.len() - 1].to_string()
    } else {
        v.to_string()
    }
}
