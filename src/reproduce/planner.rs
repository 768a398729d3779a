//! The planner: a typed report and this machine into the vmscale plan.
//! Which workload runs the robot's testcase (`run vms --case`, `run wis
//! --test --mode`, `run pft`), the robot's machine scaled to this one
//! (`nr_task` as the same share of the CPUs, a `size` as the same share of
//! the memory), the runtime shortened, and which rows of the robot's table
//! vmscale measures, by the robot's names, and why not the others. Pure.

use serde::Serialize;

use super::report::{Machine, Report, Test};
use crate::error::{Error, Result};
use crate::workload::{pft_args, vms, wis};

/// This machine as the plan scales to it.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Here {
    pub cpus: usize,
    /// Bytes.
    pub memory: u64,
    pub nodes: usize,
}

impl Here {
    pub fn of(m: &crate::machine::Snapshot) -> Here {
        Here {
            cpus: m.cpus.len().max(1),
            memory: m.mem_total_kib.unwrap_or(0).saturating_mul(1024),
            nodes: m.nodes.len().max(1),
        }
    }
}

/// What the user asked of the plan beyond the report.
#[derive(Debug, Clone, Copy, Default)]
pub struct Asked {
    /// Seconds a sample runs (`--runtime`) instead of the shortened default.
    pub runtime_s: Option<f64>,
    /// Seconds of a run's samples (`--sample-budget`) instead of the
    /// harness's default budget.
    pub budget_s: Option<f64>,
}

/// The robot's testcases vmscale runs, and the workload of each.
pub const TESTCASES: &[(&str, &str)] = &[
    ("vm-scalability", vms::SPEC.name),
    ("will-it-scale", wis::SPEC.name),
    ("pft", pft_args::SPEC.name),
];

/// A sample's seconds when `--runtime` is not given: the robot runs 300 s,
/// vmscale repeats short samples and decides by their spread.
pub const SHORT_RUNTIME_S: f64 = 2.0;

/// The harness's budget for a run's samples (warm-ups included) when
/// `--sample-budget` is not given: its own default (`--max-time`). With
/// no `--reps` it samples until the headline's interval is within
/// `--precision` or this is spent (a TCG boot of pft here: 86-149
/// samples, 35-53 s).
pub fn default_budget_s() -> f64 {
    crate::runner::default_max_time().as_secs_f64()
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Plan {
    pub testcase: String,
    pub workload: &'static str,
    /// The vmscale command line each kernel runs (after `vmscale`).
    pub command: Vec<String>,
    /// How the robot's machine and parameters became the command's.
    pub scaling: Vec<Scaled>,
    /// The robot's runtime and the one here.
    pub runtime: Runtime,
    pub rows: Vec<RowPlan>,
    /// Seconds of the run's samples (its `--max-time`).
    pub budget_s: f64,
    /// Seconds one kernel's run of the command takes at most.
    pub run_s: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Scaled {
    pub what: String,
    pub robot: String,
    pub here: String,
    pub how: String,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Runtime {
    pub robot_s: f64,
    pub sample_s: f64,
    /// Shortened by default rather than asked with `--runtime`.
    pub shortened: bool,
}

/// One row of the robot's table: what vmscale measures it by, or why not.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RowPlan {
    pub name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub measured_by: Option<Measured>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub not_measured: Option<String>,
}

/// Where vmscale keeps a row's figure: a workload figure of each sample,
/// a counter of the sample's /proc/vmstat delta, or a /proc/meminfo
/// field's mean over the sample (`run --meminfo`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Measured {
    Figure(String),
    Vmstat(String),
    Meminfo(String),
}

/// The /proc/meminfo fields every kernel vmscale boots prints: those of
/// every Linux since 4.20, and those of the options its guests require
/// (THP, hugetlbfs, swap: `kconfig::REQUIRED`). A field outside (Zswap,
/// SecPageTables, DirectMap4k) would make a guest without it refuse the
/// run, so its row is not planned.
const MEMINFO_FIELDS: &[&str] = &[
    "MemTotal",
    "MemFree",
    "MemAvailable",
    "Buffers",
    "Cached",
    "SwapCached",
    "Active",
    "Inactive",
    "Active(anon)",
    "Inactive(anon)",
    "Active(file)",
    "Inactive(file)",
    "Unevictable",
    "Mlocked",
    "SwapTotal",
    "SwapFree",
    "Dirty",
    "Writeback",
    "AnonPages",
    "Mapped",
    "Shmem",
    "KReclaimable",
    "Slab",
    "SReclaimable",
    "SUnreclaim",
    "KernelStack",
    "PageTables",
    "Bounce",
    "WritebackTmp",
    "CommitLimit",
    "Committed_AS",
    "VmallocTotal",
    "VmallocUsed",
    "VmallocChunk",
    "Percpu",
    "AnonHugePages",
    "ShmemHugePages",
    "ShmemPmdMapped",
    "HugePages_Total",
    "HugePages_Free",
    "HugePages_Rsvd",
    "HugePages_Surp",
    "Hugepagesize",
];

/// Whether every kernel vmscale boots prints `field` in a node's meminfo
/// (/sys/devices/system/node/nodeN/meminfo, lkp's numa-meminfo): the
/// machine's fields that are counted per node, and two of its own.
fn node_has(field: &str) -> bool {
    let machine_only = ["Swap", "Commit", "Vmalloc"]
        .iter()
        .any(|p| field.starts_with(p))
        || matches!(
            field,
            "MemAvailable" | "Buffers" | "Cached" | "Percpu" | "HugePages_Rsvd" | "Hugepagesize"
        );
    matches!(field, "MemUsed" | "FilePages") || (MEMINFO_FIELDS.contains(&field) && !machine_only)
}

/// The plan of the report's first test (the one its headline names).
pub fn plan(report: &Report, here: Here, asked: Asked) -> Result<Plan> {
    let test = report
        .tests
        .first()
        .ok_or_else(|| Error::Input("the report holds no test".into()))?;
    let testcase = test.testcase().unwrap_or_default().to_string();
    let Some(&(_, workload)) = TESTCASES.iter().find(|(t, _)| *t == testcase) else {
        return Err(Error::Input(format!(
            "the report's testcase '{testcase}' is not one vmscale runs: it runs {}",
            runs_list()
        )));
    };
    let robot = test.machine.clone().unwrap_or_default();
    let mut scaling = Vec::new();
    let tasks = scale_tasks(test, &robot, here, &mut scaling)?;
    if let Some(size) = test.param("size") {
        scaling.push(scale_size(size, &robot, here)?);
    }
    let robot_s = test
        .param("runtime")
        .and_then(|r| crate::parse::duration(r).ok())
        .map_or(300.0, |d| d.as_secs_f64());
    let runtime = Runtime {
        robot_s,
        sample_s: asked.runtime_s.unwrap_or(SHORT_RUNTIME_S),
        shortened: asked.runtime_s.is_none(),
    };
    let secs = format!("{}", runtime.sample_s);
    let t = tasks.to_string();
    let mut command: Vec<String> = vec!["run".into(), workload.into()];
    match workload {
        "vms" => {
            let case = required(test, "test", &vms::cases::names())?;
            command.extend(["--case", case, "--tasks", &t, "--runtime", &secs].map(String::from));
        }
        "wis" => {
            let names = wis_tests();
            let name = required(
                test,
                "test",
                &names.iter().map(String::as_str).collect::<Vec<_>>(),
            )?;
            let mode = wis_mode(test)?;
            command.extend(
                [
                    "--test", name, "--mode", mode, "--tasks", &t, "--time", &secs,
                ]
                .map(String::from),
            );
        }
        _ => {
            // pft is sized, not timed: a sixteenth of the memory here, as
            // vms's model sizes its cases, rounded down to MiB.
            let mib = ((here.memory / 16) >> 20).max(16);
            scaling.push(Scaled {
                what: "size".into(),
                robot: test.param("size").unwrap_or("pft's own").to_string(),
                here: format!("{mib}M"),
                how: "a sixteenth of the memory here, split among the tasks".into(),
            });
            let size = format!("{mib}M");
            command.extend(["--tasks", &t, "--size", &size].map(String::from));
        }
    }
    command.extend(thp_knobs(test, workload, &mut scaling)?);
    // Given to the run so that the estimate and the run agree.
    let budget_s = asked.budget_s.unwrap_or_else(default_budget_s);
    command.extend(["--max-time".into(), format!("{budget_s}s")]);
    let rows = test
        .rows
        .iter()
        .map(|r| row_plan(&r.name, &testcase, test, here))
        .collect::<Vec<RowPlan>>();
    let fields: Vec<&str> = rows
        .iter()
        .filter_map(|r| match &r.measured_by {
            Some(Measured::Meminfo(f)) => Some(f.as_str()),
            _ => None,
        })
        .collect();
    if !fields.is_empty() {
        command.extend(["--meminfo".into(), fields.join(",")]);
    }
    // At most: the warm-up, the budget, and the sample under way when it
    // ends. pft's samples are sized, not timed: a second each is their
    // order.
    let sample_s = if workload == "pft" {
        1.0
    } else {
        runtime.sample_s
    };
    let run_s = budget_s + 2.0 * sample_s;
    Ok(Plan {
        testcase,
        workload,
        command,
        scaling,
        runtime,
        rows,
        budget_s,
        run_s,
    })
}

/// "vm-scalability (cases: ...), will-it-scale (tests: ...), pft", from
/// the workloads' own tables.
fn runs_list() -> String {
    format!(
        "vm-scalability (its cases: {}), will-it-scale (its tests: {}) and pft",
        vms::cases::names().join(", "),
        wis_tests().join(", ")
    )
}

/// will-it-scale's tests as `run wis --test` names them.
fn wis_tests() -> Vec<String> {
    use clap::ValueEnum;
    wis::Test::value_variants()
        .iter()
        .filter_map(|t| t.to_possible_value().map(|p| p.get_name().to_string()))
        .collect()
}

/// lkp's THP parameters and the knob each becomes, with the values the
/// kernel's files take.
const THP_PARAMS: &[(&str, &str, &[&str])] = &[
    ("thp_enabled", "thp", &["always", "madvise", "never"]),
    (
        "thp_defrag",
        "thp_defrag",
        &["always", "defer", "defer+madvise", "madvise", "never"],
    ),
];

/// The robot's `thp_enabled:` and `thp_defrag:` as the run's knobs, set
/// where it runs (in the guest) as the robot's machine had them; pft sets
/// THP by its own `--thp`, so there they are named, not applied.
fn thp_knobs(test: &Test, workload: &str, scaling: &mut Vec<Scaled>) -> Result<Vec<String>> {
    let mut args = Vec::new();
    for (param, knob, known) in THP_PARAMS {
        let Some(v) = test.param(param) else { continue };
        if !known.contains(&v) {
            return Err(Error::Input(format!(
                "the report's {param} '{v}' is not a value the kernel takes: {}",
                known.join(", ")
            )));
        }
        let how = if workload == pft_args::SPEC.name {
            "not applied: pft sets THP by its own --thp".to_string()
        } else {
            args.extend(["--knob".to_string(), format!("{knob}={v}")]);
            format!("--knob {knob}={v} where the test runs, as the robot's machine had it")
        };
        scaling.push(Scaled {
            what: (*param).to_string(),
            robot: v.to_string(),
            here: v.to_string(),
            how,
        });
    }
    Ok(args)
}

/// The report's `key` parameter, which must be one of `known`.
fn required<'a>(test: &'a Test, key: &str, known: &[&str]) -> Result<&'a str> {
    let tc = test.testcase().unwrap_or_default();
    let v = test.param(key).ok_or_else(|| {
        Error::Input(format!(
            "the report's {tc} test has no `{key}:` parameter; give the whole report"
        ))
    })?;
    if !known.contains(&v) {
        return Err(Error::Input(format!(
            "{tc}'s {key} '{v}' is not one vmscale runs: it runs {}",
            known.join(", ")
        )));
    }
    Ok(v)
}

/// will-it-scale's `mode:` (`process` or `thread`; lkp's default `both`
/// is refused: the robot's figure is one mode's).
fn wis_mode(test: &Test) -> Result<&'static str> {
    match test.param("mode") {
        Some("process") => Ok("process"),
        Some("thread") | Some("threads") => Ok("thread"),
        other => Err(Error::Input(format!(
            "will-it-scale's mode {}: vmscale reproduces one mode, process or thread; the \
             robot's headline names which (per_process_ops or per_thread_ops)",
            other.map_or("is not given".to_string(), |m| format!("'{m}'"))
        ))),
    }
}

/// `nr_task` as the same share of this machine's CPUs: a percentage of
/// the robot's threads, or a count of them. Without `nr_task`, every CPU
/// (the suites' default).
fn scale_tasks(test: &Test, robot: &Machine, here: Here, out: &mut Vec<Scaled>) -> Result<usize> {
    let Some(n) = test.param("nr_task").or_else(|| test.param("nr_threads")) else {
        out.push(Scaled {
            what: "nr_task".into(),
            robot: "not given (every CPU)".into(),
            here: here.cpus.to_string(),
            how: "every CPU here, as the suite".into(),
        });
        return Ok(here.cpus);
    };
    let bad = || {
        Error::Input(format!(
            "nr_task '{n}' cannot be scaled to this machine: it is neither a count nor a \
             percentage of the robot's CPUs"
        ))
    };
    let share = if let Some(p) = n.strip_suffix('%') {
        p.trim().parse::<f64>().map_err(|_| bad())? / 100.0
    } else {
        let count: f64 = n.trim().parse().map_err(|_| bad())?;
        match robot.threads {
            Some(t) if t > 0 => count / t as f64,
            _ => {
                return Err(Error::Input(format!(
                    "nr_task {n} cannot be scaled to this machine: the report names no test \
                     machine's thread count to take it as a share of"
                )));
            }
        }
    };
    if !(share.is_finite() && share > 0.0) {
        return Err(bad());
    }
    let tasks = ((share * here.cpus as f64).round() as usize).clamp(1, here.cpus);
    let robot_text = match robot.threads {
        Some(t) => format!("{n} of {t} threads"),
        None => n.to_string(),
    };
    out.push(Scaled {
        what: "nr_task".into(),
        robot: robot_text,
        here: format!("{tasks} of {} CPUs", here.cpus),
        how: format!("the same share, {:.1}%, at least 1", share * 100.0),
    });
    Ok(tasks)
}

/// A `size` as the same share of this machine's memory.
fn scale_size(size: &str, robot: &Machine, here: Here) -> Result<Scaled> {
    let bytes = crate::parse::size(size).map_err(|_| {
        Error::Input(format!(
            "size '{size}' cannot be scaled to this machine: it is not a size (e.g. 512G)"
        ))
    })?;
    let Some(mem) = robot.memory.filter(|m| *m > 0) else {
        return Err(Error::Input(format!(
            "size {size} cannot be scaled to this machine: the report names no test \
             machine memory to take it as a share of"
        )));
    };
    let share = bytes as f64 / mem as f64;
    let scaled = (share * here.memory as f64) as u64;
    Ok(Scaled {
        what: "size".into(),
        robot: format!("{size} of {}", crate::units::size(mem)),
        here: format!(
            "{} of {}",
            crate::units::size(scaled.max(1)),
            crate::units::size(here.memory)
        ),
        how: format!(
            "the same share, {:.2}x the memory; lkp streams it in repeats of the case, vmscale \
             sizes each sample by the case's own rule and repeats samples",
            share
        ),
    })
}

/// A row measured by a stored figure or counter, or the reason it is not.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Mapped {
    By(Measured),
    Not(String),
}

/// What vmscale measures a row of the robot's table by, or why it cannot.
fn row_plan(name: &str, testcase: &str, test: &Test, here: Here) -> RowPlan {
    let (measured_by, not_measured) = match measure(name, testcase, test, here) {
        Mapped::By(m) => (Some(m), None),
        Mapped::Not(why) => (None, Some(why)),
    };
    RowPlan {
        name: name.to_string(),
        measured_by,
        not_measured,
    }
}

fn measure(name: &str, testcase: &str, test: &Test, here: Here) -> Mapped {
    let fig = |f: &str| Mapped::By(Measured::Figure(f.to_string()));
    if let Some(own) = name
        .strip_prefix(testcase)
        .and_then(|r| r.strip_prefix('.'))
    {
        return match (testcase, own) {
            ("vm-scalability", "throughput") => fig("throughput"),
            ("vm-scalability", "time.minor_page_faults") => fig("minflt"),
            ("vm-scalability", "time.major_page_faults") => fig("majflt"),
            ("vm-scalability", "time.elapsed_time" | "time.elapsed_time.max") => fig("wall"),
            ("will-it-scale", "per_process_ops") if test.param("mode") == Some("process") => {
                fig("ops/s/task")
            }
            ("will-it-scale", "per_thread_ops")
                if matches!(test.param("mode"), Some("thread" | "threads")) =>
            {
                fig("ops/s/task")
            }
            ("will-it-scale", "workload") => fig("ops/s"),
            ("will-it-scale" | "pft", "time.system_time") => fig("system"),
            ("will-it-scale" | "pft", "time.user_time") => fig("user"),
            ("will-it-scale", "time.minor_page_faults") => fig("faults"),
            ("pft", "faults_per_sec_per_cpu") => fig("flt/cpu/s"),
            ("pft", "time.minor_page_faults") => fig("faults"),
            (_, "time.system_time" | "time.user_time") => Mapped::Not(format!(
                "vmscale's {testcase} does not record its tasks' CPU time"
            )),
            (_, t) if t.starts_with("time.") => Mapped::Not(
                "lkp's /usr/bin/time figure; vmscale's tasks record CPU time and faults only"
                    .into(),
            ),
            _ => Mapped::Not(format!("not a figure vmscale's {testcase} reports")),
        };
    }
    let (monitor, rest) = name.split_once('.').unwrap_or((name, ""));
    match monitor {
        "proc-vmstat" if rest.starts_with("nr_") => Mapped::Not(
            "a level of /proc/vmstat; vmscale stores each sample's counter deltas".into(),
        ),
        "proc-vmstat" => Mapped::By(Measured::Vmstat(rest.to_string())),
        "meminfo" if MEMINFO_FIELDS.contains(&rest) => {
            Mapped::By(Measured::Meminfo(rest.to_string()))
        }
        "meminfo" => Mapped::Not(format!(
            "'{rest}' is not a /proc/meminfo field every kernel vmscale boots has \
             (lkp derives some: Memused, max_used_kB)"
        )),
        "numa-meminfo" => node_meminfo(rest, here),
        "numa-vmstat" => Mapped::Not(
            "a level of each node's vmstat; vmscale stores /proc/vmstat counter deltas".into(),
        ),
        "numa-numastat" => numastat(rest, here),
        "turbostat" => Mapped::Not(
            "turbostat reads model-specific registers vmscale does not sample (a guest has none)"
                .into(),
        ),
        "perf-stat" => Mapped::Not(
            "hardware event counts: vmscale records none (a TCG guest has no PMU)".into(),
        ),
        "perf-profile" => Mapped::Not(
            "a share of profile samples: add --profile for kernel stacks, not compared row by row"
                .into(),
        ),
        _ => Mapped::Not(format!(
            "lkp's {monitor} monitor, which vmscale does not run"
        )),
    }
}

/// Node N of `rest` ("node1.numa_hit"), or why it is none here.
fn node_of<'a>(
    rest: &'a str,
    here: Here,
    what: &str,
) -> std::result::Result<(usize, &'a str), Mapped> {
    let (node, field) = rest.split_once('.').unwrap_or((rest, ""));
    let Some(n) = node
        .strip_prefix("node")
        .and_then(|n| n.parse::<usize>().ok())
    else {
        return Err(Mapped::Not(format!("{what} of '{node}', not a node")));
    };
    if n >= here.nodes {
        return Err(Mapped::Not(format!(
            "node {n} does not exist here ({} node{})",
            here.nodes,
            if here.nodes == 1 { "" } else { "s" }
        )));
    }
    Ok((n, field))
}

/// `numa-meminfo.nodeN.FIELD`: node N's meminfo read during each sample
/// (`run --meminfo nodeN.FIELD`), where node N exists here.
fn node_meminfo(rest: &str, here: Here) -> Mapped {
    match node_of(rest, here, "meminfo") {
        Ok((_, field)) if node_has(field) => Mapped::By(Measured::Meminfo(rest.to_string())),
        Ok((n, field)) => Mapped::Not(format!(
            "'{field}' is not a field every guest kernel's node {n} meminfo has"
        )),
        Err(not) => not,
    }
}

/// `numa-numastat.nodeN.numa_hit`: the machine's total in /proc/vmstat
/// stands for node 0 of a one-node machine only.
fn numastat(rest: &str, here: Here) -> Mapped {
    let counter = match node_of(rest, here, "numastat") {
        Ok((_, counter)) => counter,
        Err(not) => return not,
    };
    if here.nodes > 1 {
        return Mapped::Not(
            "per-node numastat; vmscale stores the machine's /proc/vmstat totals".into(),
        );
    }
    let total = match counter {
        "numa_hit" | "numa_miss" | "numa_foreign" => counter,
        "local_node" => "numa_local",
        "other_node" => "numa_other",
        "interleave_hit" => "numa_interleave",
        _ => {
            return Mapped::Not(format!(
                "numastat's {counter}, which /proc/vmstat does not total"
            ));
        }
    };
    Mapped::By(Measured::Vmstat(total.to_string()))
}

#[cfg(test)]
mod tests;
