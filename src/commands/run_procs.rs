//! `vmscale run` for the process and NUMA workloads: numa01..numa02-smt,
//! fork, churn and cmd. Options become validated configurations here
//! (input errors exit 2 before anything is stored), then the shared
//! `run::run_workload` takes over.

use std::path::Path;

use super::run::{plan, run_workload};
use super::{Error, Result};
use crate::cli::{ChurnArgs, CmdArgs, ForkArgs, NumaArgs};
use crate::exec::{Mode, pin::Pin};
use crate::machine::Snapshot;
use crate::parse;
use crate::workload::{churn, cmd, fork, numa};

use crate::error::input;

/// `--interval` ("1s", "200ms", "0.5") in whole milliseconds, at least 1.
fn interval_ms(text: &str) -> std::result::Result<u64, String> {
    let d = parse::duration(text).map_err(|e| format!("--interval: {e}"))?;
    match u64::try_from(d.as_millis()) {
        Ok(ms) if ms >= 1 => Ok(ms),
        _ => Err(format!(
            "--interval '{text}' is out of range: use 1ms or more, e.g. 1s or 200ms"
        )),
    }
}

pub fn numa_from_args(p: numa::Pattern, a: &NumaArgs, m: &Snapshot) -> Result<numa::Numa> {
    let size = input(
        a.size
            .as_deref()
            .map(|t| parse::size_arg("--size", t))
            .transpose(),
    )?;
    let cfg = input(numa::plan(
        p,
        size,
        a.loops,
        input(interval_ms(&a.interval))?,
        a.threshold,
        m,
    ))?;
    Ok(numa::Numa::new(cfg, m))
}

pub fn fork_from_args(a: &ForkArgs, m: &Snapshot) -> Result<fork::Fork> {
    let cfg = fork::Config {
        tasks: input(parse::tasks(&a.tasks, m.cpus.len().max(1)))?,
        mode: input(a.mode.parse::<Mode>())?,
        size: input(parse::size_arg("--size", &a.size))?,
        backing: if a.shared_file {
            fork::Backing::File(a.file_dir.clone().unwrap_or_else(std::env::temp_dir))
        } else if a.file_dir.is_some() {
            return Err(Error::Input(
                "--file-dir only applies with --shared-file".into(),
            ));
        } else {
            fork::Backing::Anon
        },
        forks: a.forks,
        touch: a.touch,
        pin: input(a.pin.parse::<Pin>())?,
        page_size: m.page_size.unwrap_or(4096),
    };
    input(fork::Fork::new(cfg, m.clone()))
}

pub fn churn_from_args(a: &ChurnArgs, m: &Snapshot) -> Result<churn::Churn> {
    let cfg = churn::Config {
        tasks: input(parse::tasks(&a.tasks, m.cpus.len().max(1)))?,
        mode: input(a.mode.parse::<Mode>())?,
        chunk: input(parse::size_arg("--chunk", &a.chunk))?,
        secs: a.time,
        every: a.every,
        pin: input(a.pin.parse::<Pin>())?,
        page_size: m.page_size.unwrap_or(4096),
    };
    input(churn::Churn::new(cfg, m.clone()))
}

pub fn cmd_from_args(a: &CmdArgs) -> Result<cmd::Cmd> {
    input(cmd::Cmd::new(cmd::Config {
        argv: a.command.clone(),
        setup: a.setup.clone(),
        cleanup: a.cleanup.clone(),
        device: a.device.clone(),
        interval: a.interval,
    }))
}

/// cmd: a failed command makes vmscale exit with the command's own code.
pub fn run_cmd(db: &Path, a: &CmdArgs, m: &Snapshot) -> Result<()> {
    let w = cmd_from_args(a)?;
    let p = plan(&a.harness)?;
    match run_workload(db, &w, &p, &a.harness, m) {
        Ok(run) => {
            super::run::print_run(db, &run, &a.harness)?;
            super::run::print_probes(db, &run, &a.harness)
        }
        Err(Error::Failed(msg)) => match w.exit_code() {
            Some(code) => Err(Error::Exit(code, msg)),
            None => Err(Error::Failed(msg)),
        },
        Err(e) => Err(e),
    }
}
