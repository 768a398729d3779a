//! `vmscale doctor`: what on this machine can bias or scatter a
//! measurement, each with the evidence read and the fix (see docs/noise.md).

use super::{Error, Result};
use crate::cli::DoctorArgs;
use std::collections::BTreeMap;

use crate::doctor::{self, Context};

pub fn doctor(a: &DoctorArgs) -> Result<()> {
    let cpus = a.cpus.clone().unwrap_or_default().0;
    let online = crate::machine::topology::online_cpus(&a.machine.root);
    if let Some(c) = cpus
        .iter()
        .find(|c| !online.is_empty() && !online.contains(c))
    {
        return Err(Error::Input(format!(
            "--cpus: cpu{c} is not online here (online: {})",
            crate::machine::cpulist::format(&online)
        )));
    }
    let ctx = Context {
        cpus,
        window: a.window,
        euid: Some(crate::exec::euid()),
    };
    let report = doctor::examine(&a.machine.root, &ctx);
    if a.json.json {
        super::print_json(&report)
    } else {
        super::output::text(&doctor::text(&report))
    }
}

/// The run's knob plan and the values `--tune` sets (none without it);
/// `--tune` needs root, as `--knob` does.
pub(crate) fn tuned_plan(
    tune: bool,
    user: &crate::knobs::Plan,
    workload: &str,
    root: &std::path::Path,
) -> Result<(crate::knobs::Plan, BTreeMap<String, String>)> {
    if !tune {
        return Ok((user.clone(), BTreeMap::new()));
    }
    if crate::exec::euid() != 0 {
        return Err(Error::Input(
            "--tune changes kernel settings and needs root: run vmscale as root, or drop \
             --tune (`vmscale doctor` lists the fixes)"
                .into(),
        ));
    }
    let (plan, tuned) = doctor::tune::plan(root, user, workload);
    if tuned.is_empty() {
        eprintln!("vmscale: --tune: nothing to tune (`vmscale doctor` lists what it sees)");
    }
    Ok((plan, tuned))
}
