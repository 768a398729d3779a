//! `vmscale run`: validates a workload's options, refuses what cannot be
//! run safely, then runs it into the store and prints the stored result.

use std::path::Path;

use super::{Error, Result};
use crate::cli::{Harness, PftArgs, QuickArgs, RunArgs, RunWhat};
use crate::exec::{Mode, pin::Pin, signals};
use crate::machine::{self, Snapshot};
use crate::model::{Run, Status};
use crate::parse;
use crate::runner::{self, Plan, Reps};
use crate::store::{NewRun, Store};
use crate::workload::{Workload, pft};

pub fn run(db: &Path, args: RunArgs) -> Result<()> {
    let machine = machine::live();
    match args.what {
        RunWhat::Pft(a) => {
            let plan = plan(&a.harness)?;
            let w = pft_from_args(&a, &machine)?;
            let run = run_workload(db, &w, &plan, &a.harness, &machine)?;
            print_runs(&[run], a.harness.json)
        }
        RunWhat::Quick(a) => quick(db, &a, &machine),
        RunWhat::C2c(a) => {
            let plan = plan(&a.harness)?;
            let w = super::micro::c2c_from_args(&a, &machine)?;
            let run = run_workload(db, &w, &plan, &a.harness, &machine)?;
            print_runs(&[run], a.harness.json)
        }
        RunWhat::Atomic(a) => {
            let plan = plan(&a.harness)?;
            let w = super::micro::atomic_from_args(&a, &machine)?;
            let run = run_workload(db, &w, &plan, &a.harness, &machine)?;
            print_runs(&[run], a.harness.json)
        }
        RunWhat::Lockfan(a) => {
            let plan = plan(&a.harness)?;
            let w = super::micro::lockfan_from_args(&a, &machine)?;
            let run = run_workload(db, &w, &plan, &a.harness, &machine)?;
            print_runs(&[run], a.harness.json)
        }
        RunWhat::Latency(a) => {
            let plan = plan(&a.harness)?;
            let w = super::micro::latency_from_args(&a, &machine)?;
            let run = run_workload(db, &w, &plan, &a.harness, &machine)?;
            print_runs(&[run], a.harness.json)
        }
    }
}

fn input<T>(r: std::result::Result<T, String>) -> Result<T> {
    r.map_err(Error::Input)
}

fn plan(h: &Harness) -> Result<Plan> {
    if h.reps == 0 {
        return Err(Error::Input(
            "--reps 0 takes no samples: use 1 or more".into(),
        ));
    }
    Ok(Plan {
        warmup: h.warmup,
        reps: Reps::Fixed(h.reps),
    })
}

fn page_size(m: &Snapshot) -> u64 {
    m.page_size.unwrap_or(4096)
}

/// The coherency line size of the first-level data cache (64 if unknown).
fn line_size(m: &Snapshot) -> u64 {
    m.caches
        .iter()
        .filter(|c| c.level == 1 && c.kind != "Instruction")
        .find_map(|c| c.line_size)
        .unwrap_or(64)
}

pub fn pft_from_args(a: &PftArgs, m: &Snapshot) -> Result<pft::Pft> {
    let online = m.cpus.len().max(1);
    let size = |s: &Option<String>| s.as_deref().map(parse::size).transpose();
    let cfg = pft::Config {
        tasks: input(parse::tasks(&a.tasks, online))?,
        mode: input(a.mode.parse::<Mode>())?,
        size_total: input(size(&a.size))?,
        size_per_task: input(size(&a.size_per_task))?,
        cline: a.cline,
        pin: input(a.pin.parse::<Pin>())?,
        thp: input(a.thp.parse())?,
        populate: a.populate,
        page_size: page_size(m),
        line_size: line_size(m),
    };
    input(pft::Pft::new(cfg, m.clone()))
}

/// Refuses a run whose peak memory exceeds MemAvailable less a reserve.
fn check_memory(w: &dyn Workload, m: &Snapshot) -> Result<()> {
    let need = w.memory_need();
    let avail = m.mem_available_kib.unwrap_or(0) * 1024;
    let total = m.mem_total_kib.unwrap_or(0) * 1024;
    let reserve = (total / 16).max(256 << 20);
    let usable = avail.saturating_sub(reserve);
    if need > usable {
        return Err(Error::Input(format!(
            "{} needs {} but only {} can be used safely (MemAvailable {} less a reserve of {}): \
             use a smaller --size",
            w.name(),
            parse::format_size(need),
            parse::format_size(usable),
            parse::format_size(avail),
            parse::format_size(reserve),
        )));
    }
    Ok(())
}

fn command_line() -> String {
    std::env::args()
        .map(|a| {
            if a.is_empty() || a.contains(|c: char| c.is_whitespace() || "'\"$\\".contains(c)) {
                format!("'{}'", a.replace('\'', "'\\''"))
            } else {
                a
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// Checks, stores and runs one workload; returns the stored run.
pub fn run_workload(
    db: &Path,
    w: &dyn Workload,
    plan: &Plan,
    h: &Harness,
    m: &Snapshot,
) -> Result<Run> {
    check_memory(w, m)?;
    let mut store = Store::open(db).map_err(Error::Failed)?;
    let machine_json = serde_json::to_value(m).unwrap_or_default();
    let config = w.config();
    let cases = w.cases();
    let figures = w.figures();
    let id = store
        .create_run(&NewRun {
            label: h.label.as_deref(),
            workload: w.name(),
            command_line: &command_line(),
            config: &config,
            figures: &figures,
            machine: &machine_json,
            knobs: &serde_json::json!({}),
            cases: &cases,
            origin: "measured",
        })
        .map_err(Error::Failed)?;
    signals::install();
    let bar = super::progress::Bar::new();
    let outcome = runner::execute(&mut store, id, w, plan, &bar);
    let (status, note, error) = match outcome {
        Ok(end) => (end.status, end.note, None),
        Err(e) => (Status::Failed, e.clone(), Some(e)),
    };
    store
        .finish_run(id, status, Some(&note))
        .map_err(Error::Failed)?;
    let run = store.load(id).map_err(Error::Failed)?;
    if let Some(e) = error {
        return Err(Error::Failed(format!("run {id} failed: {e}")));
    }
    Ok(run)
}

fn print_runs(runs: &[Run], json: bool) -> Result<()> {
    if json {
        if let [one] = runs {
            super::print_json(one)?;
        } else {
            super::print_json(&runs)?;
        }
    } else {
        for (i, r) in runs.iter().enumerate() {
            if i > 0 {
                println!();
            }
            print!("{}", crate::report::text(r));
        }
    }
    if runs.iter().any(|r| r.meta.status == Status::Incomplete) {
        return Err(Error::Interrupted);
    }
    Ok(())
}

/// The quick suite: sysinfo, then pft in threads and processes.
fn quick(db: &Path, a: &QuickArgs, m: &Snapshot) -> Result<()> {
    let plan = plan(&a.harness)?;
    let mut suite: Vec<Box<dyn Workload>> = ["thread", "process"]
        .iter()
        .map(|mode| {
            pft_from_args(
                &PftArgs {
                    tasks: "auto".into(),
                    mode: mode.to_string(),
                    size: Some("256M".into()),
                    size_per_task: None,
                    cline: 1,
                    pin: "compact".into(),
                    thp: "never".into(),
                    populate: true,
                    harness: a.harness.clone(),
                },
                m,
            )
            .map(|w| Box::new(w) as Box<dyn Workload>)
        })
        .collect::<Result<_>>()?;
    suite.extend(super::micro::quick_suite(&a.harness, m)?);
    for w in &suite {
        check_memory(w.as_ref(), m)?;
    }
    if !a.harness.json {
        print!("{}", crate::report::sysinfo::text(m));
        println!();
    }
    let mut runs = Vec::new();
    for w in &suite {
        let run = run_workload(db, w.as_ref(), &plan, &a.harness, m)?;
        let interrupted = run.meta.status == Status::Incomplete;
        if !a.harness.json {
            print!("{}", crate::report::text(&run));
            println!();
        }
        runs.push(run);
        if interrupted {
            return Err(Error::Interrupted);
        }
    }
    if a.harness.json {
        super::print_json(&serde_json::json!({ "machine": m, "runs": runs }))?;
    }
    Ok(())
}
