//! `vmscale reproduce REPORT`: reads a kernel test robot report, plans its
//! test on this machine and prints the plan (`--dry-run`, text or JSON);
//! else boots base and head (`--kernel` twice, or built from `--tree`) in
//! turn through `vmscale guest`'s rounds until the interval decides,
//! stores the robot's figures beside the runs, and prints the robot's
//! table with this machine's figures and the verdict. The reading,
//! planning and judging are `crate::reproduce`'s; this file reads the
//! file, the machine and the options, runs and prints.

use std::io::Read;
use std::path::Path;

use super::{Error, Result, output};

mod bisect;
mod commits;
mod robot_runs;
mod run;
use crate::cli::ReproduceArgs;
use crate::reproduce::bisection::Bisection;
use crate::reproduce::planner::{self, Asked, Here, Plan};
use crate::reproduce::report::{Change, Delta, Machine, Report};

/// The most of a report read: a robot mail is some 400 KB at most.
const MAX_REPORT: u64 = 64 << 20;

pub fn reproduce(db: &Path, a: &ReproduceArgs) -> Result<()> {
    crate::cache::cap::configure()?;
    let bytes = read_report(&a.report)?;
    let report = crate::reproduce::read_bytes(&bytes)
        .map_err(|e| Error::from(e).context(a.report.display()))?;
    let host = Here::of(&crate::machine::live());
    // Booting kernels, the plan is for the guest: this machine's CPUs
    // unless --cpus (one under icount, which boots no second vCPU),
    // --mem's memory.
    let booting = a.tree.is_some() || !a.kernels.is_empty();
    let here = if booting {
        Here {
            cpus: guest_cpus(a.boot.cpus, a.boot.accel, host.cpus),
            memory: a.boot.mem_mib << 20,
            nodes: a.boot.nodes,
        }
    } else {
        host
    };
    let asked = Asked {
        runtime_s: a.runtime.map(|d| d.as_secs_f64()),
        budget_s: a.sample_budget.map(|d| d.as_secs_f64()),
    };
    let plan = planner::plan(&report, here, asked)?;
    if !a.dry_run {
        return run::reproduce(db, a, &report, &plan, here);
    }
    let bisection = bisect::planned(a, &report, plan.run_s)?;
    if a.json.json {
        return super::print_json(&serde_json::json!({
            "report": report,
            "here": here,
            "plan": plan,
            "bisect": bisection,
        }));
    }
    output::text(&plan_text(&report, here, &plan, bisection.as_ref()))
}

/// The guest's vCPUs: `--cpus`, else one under `--accel icount` (QEMU's
/// icount brings up no second vCPU, `accel::check_shape`), else this
/// machine's CPUs.
fn guest_cpus(asked: Option<usize>, accel: crate::guest::accel::Asked, host: usize) -> usize {
    match (asked, accel) {
        (Some(n), _) => n,
        (None, crate::guest::accel::Asked::Icount) => 1,
        (None, _) => host,
    }
}

/// The report's bytes: a file, or stdin for `-`.
fn read_report(path: &Path) -> Result<Vec<u8>> {
    let mut bytes = Vec::new();
    let read = if path == Path::new("-") {
        std::io::stdin().take(MAX_REPORT).read_to_end(&mut bytes)
    } else {
        std::fs::File::open(path).and_then(|f| f.take(MAX_REPORT).read_to_end(&mut bytes))
    };
    read.map_err(|e| {
        Error::Input(format!(
            "cannot read the report {}: {e}; give the saved mail or job.yaml (or - for stdin)",
            path.display()
        ))
    })?;
    Ok(bytes)
}

fn change_text(c: &Change) -> String {
    let kind = match c.kind {
        crate::reproduce::report::Kind::Regression => "regression",
        crate::reproduce::report::Kind::Improvement => "improvement",
    };
    format!("{:+}% {kind} of {}", c.percent, c.metric)
}

fn machine_text(m: &Machine) -> String {
    let mut parts = Vec::new();
    if let Some(t) = m.threads {
        parts.push(format!("{t} threads"));
    }
    if let Some(s) = m.sockets {
        parts.push(format!("{s} sockets"));
    }
    if let Some(n) = m.nodes {
        parts.push(format!("{n} nodes"));
    }
    if let Some(mem) = m.memory {
        parts.push(crate::units::size(mem));
    }
    if let Some(c) = &m.cpu {
        parts.push(c.clone());
    }
    let body = parts.join(", ");
    match &m.name {
        Some(n) => format!("{n}: {body}"),
        None => body,
    }
}

fn delta_text(d: Option<Delta>) -> String {
    match d {
        Some(Delta::Percent(p)) => format!("{p:+.1}%"),
        Some(Delta::Absolute(v)) => format!("{v:+}"),
        None => "?".into(),
    }
}

/// The plan as text, 80 columns.
fn plan_text(r: &Report, here: Here, p: &Plan, bisection: Option<&Bisection>) -> String {
    let mut o = String::new();
    let test = &r.tests[0];
    match &r.headline {
        Some(h) => o.push_str(&format!("Report: {}\n", change_text(h))),
        None => o.push_str("Report: lkp job.yaml (no headline)\n"),
    }
    for (label, c) in [("base", &r.base), ("head", &r.head)] {
        let line = match c {
            Some(c) => format!(
                "  {label}  {}  {}",
                c.id,
                c.subject.as_deref().unwrap_or("")
            ),
            None => format!("  {label}  (not in the report)"),
        };
        o.push_str(&crate::text::clip(line.trim_end(), 80));
        o.push('\n');
    }
    let params: Vec<String> = test
        .params
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect();
    o.push_str(&crate::text::fill(
        &format!("{} {}", p.testcase, params.join(" ")),
        80,
        "Test:   ",
        "        ",
    ));
    if let Some(m) = &test.machine {
        o.push_str(&crate::text::fill(
            &machine_text(m),
            80,
            "Robot:  ",
            "        ",
        ));
    }
    o.push_str(&format!(
        "Here:   {} CPUs, {} node{}, {}\n\n",
        here.cpus,
        here.nodes,
        if here.nodes == 1 { "" } else { "s" },
        crate::units::size(here.memory)
    ));
    o.push_str(&crate::text::fill(
        &format!("vmscale {}", crate::parse::shell_words(&p.command)),
        80,
        "Plan:   ",
        "          ",
    ));
    for s in &p.scaling {
        o.push_str(&crate::text::fill(
            &format!("{}: {} -> {} ({})", s.what, s.robot, s.here, s.how),
            80,
            "  ",
            "    ",
        ));
    }
    let rt = &p.runtime;
    o.push_str(&format!(
        "  runtime: {} s -> {} s a sample ({})\n",
        rt.robot_s,
        rt.sample_s,
        if rt.shortened {
            "shortened; --runtime to change"
        } else {
            "--runtime"
        }
    ));
    o.push_str(&format!(
        "  at most about {:.0} s a kernel and round (a warm-up, then samples \
         until precise or --max-time {}s), boots and builds aside\n",
        p.run_s, p.budget_s
    ));
    if let Some(b) = bisection {
        o.push_str(&bisect::plan_text(b));
    }
    let measured = p.rows.iter().filter(|r| r.measured_by.is_some()).count();
    o.push_str(&format!(
        "\nThe robot's rows ({}; {measured} measured here):\n",
        p.rows.len()
    ));
    for (row, plan) in test.rows.iter().zip(&p.rows) {
        let how = match (&plan.measured_by, &plan.not_measured) {
            (Some(crate::reproduce::planner::Measured::Figure(f)), _) => format!("figure {f}"),
            (Some(crate::reproduce::planner::Measured::Vmstat(c)), _) => format!("vmstat {c}"),
            (Some(crate::reproduce::planner::Measured::Meminfo(f)), _) => {
                format!("meminfo {f}, mean")
            }
            (None, Some(why)) => format!("not: {why}"),
            (None, None) => String::new(),
        };
        o.push_str(&format!(
            "  {:<44} {:>9}\n",
            crate::text::clip(&row.name, 44),
            delta_text(row.change)
        ));
        o.push_str(&crate::text::fill(&how, 80, "      ", "        "));
    }
    if test.cut {
        o.push_str("  (the report is cut inside this table)\n");
    }
    for t in &r.tests[1..] {
        let what = t.change.as_ref().map(change_text).unwrap_or_default();
        o.push_str(&crate::text::fill(
            &format!(
                "{} {what}: not planned (reproduce plans the headline's test)",
                t.testcase().unwrap_or("?")
            ),
            80,
            "Also:   ",
            "        ",
        ));
    }
    o
}
