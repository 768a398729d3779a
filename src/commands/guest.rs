//! `vmscale guest`: boots each kernel in a QEMU guest, in turn for
//! `--rounds` rounds, runs the plan inside, pools each kernel's runs over
//! its rounds, merges them into the store and prints the comparison with
//! one column per kernel. Everything that can be checked is checked
//! before the first boot; a guest that fails stops the rounds, and what
//! completed is still merged.

use std::path::Path;
use std::time::Instant;

use super::guest_plan::{Budget, appends_to, inner_steps};
pub use super::guest_plan::{check_figure, split_plan};
use super::progress::Bar;
use super::{Error, Result};
use crate::cli::GuestArgs;
use crate::guest::boot::Prepared;
use crate::guest::decide::{Deciding, Settles};
use crate::guest::initramfs::{Userland, step_programs};
use crate::guest::nested;
use crate::guest::pool::{self, Landed, Round};
use crate::guest::qemu;
use crate::guest::rounds::Plan;
use crate::guest::topology::{self, Request};
use crate::guest::{accel, kernel, kernel_config, rounds};
use crate::kconfig;
use crate::report::verdict as shown;
use crate::runner::Progress as _;
use crate::store::Store;
use crate::workdir::WorkDir;

/// `vmscale guest`: boots, then prints the comparison (or `--json`).
pub fn guest(db: &Path, a: &GuestArgs) -> Result<()> {
    crate::cache::cap::configure()?;
    let ran = run(db, a, None)?;
    let verdict = shown::of(&ran.prepared, &ran.deciding, ran.ended_by.clone());
    if a.json.json {
        super::output::data(&format!(
            "{}\n",
            serde_json::to_string_pretty(&crate::report::verdict::json(&verdict))
                .unwrap_or_default()
        ))?;
    } else {
        report(&ran.prepared, &ran.landed, ran.rounds)?;
        if ran.prepared.len() > 1 && (ran.auto || a.boot.decide.is_some()) {
            super::output::text(&crate::report::verdict::text(&verdict))?;
        }
    }
    match ran.failure {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

/// What the boots of one `vmscale guest` left: the kernels as booted, their
/// pooled runs, the rounds' deciding comparison, and the failure that
/// stopped the rounds, if one did (what completed is merged all the same).
pub struct Ran {
    pub prepared: Vec<Prepared>,
    pub landed: Landed,
    pub deciding: Deciding,
    /// What ended `--rounds auto` undecided (`--max-time`, `--max-rounds`).
    pub ended_by: Option<String>,
    pub rounds: u32,
    pub auto: bool,
    pub failure: Option<Error>,
    /// Wall seconds of the boots whose rounds completed (`Round::seconds`).
    pub boot_seconds: f64,
}

/// Checks everything, boots the kernels round by round (`--rounds auto`:
/// until the rule or `settles` decides) and pools and merges their runs;
/// prints nothing but progress and warnings.
pub fn run(db: &Path, a: &GuestArgs, settles: Option<&Settles<'_>>) -> Result<Ran> {
    crate::exec::signals::install();
    let steps = split_plan(&a.plan)?;
    if steps.is_empty() && a.boot.setup.is_empty() {
        return Err(Error::Input(
            "give a plan after `--`, e.g. `vmscale guest --kernel K -- run pft --tasks 1`".into(),
        ));
    }
    if a.labels.len() > a.kernels.len() + a.revs.len() {
        return Err(Error::Input(format!(
            "{} --label for {} --kernel and {} --rev: give at most one label per kernel",
            a.labels.len(),
            a.kernels.len(),
            a.revs.len()
        )));
    }
    let budget = Budget::of(a, &steps)?;
    let appends = appends_to(&a.append_to, a.kernels.len() + a.revs.len())?;
    let mut distances = Vec::new();
    for d in &a.distance {
        distances.extend(topology::parse_distances(d)?);
    }
    let t = Request {
        cpus: a.boot.cpus,
        nodes: a.boot.nodes,
        sockets: a.sockets,
        dies: a.dies,
        threads: a.threads,
        memory_only_nodes: a.memory_only_nodes,
        mem_mib: a.boot.mem_mib,
        distances,
    }
    .check()?;
    accel::check_shape(a.boot.accel, t.shape.cpus)?;
    let mut kernels = a
        .kernels
        .iter()
        .map(|k| kernel::resolve(k, a.boot.modules.as_deref()))
        .collect::<Result<Vec<_>>>()?;
    let shape = kconfig::Shape {
        cpus: t.shape.cpus,
        nodes: t.shape.nodes + t.shape.memory_only_nodes,
    };
    for k in &kernels {
        let checked = kernel_config::check(k, shape)?;
        if let Some(w) = kernel_config::warning(k, &checked) {
            super::output::warn(&w);
        }
    }
    rounds::check_host_memory(t.shape.mem_mib)?;
    qemu::check_installed()?;
    // Labels: the user's, else a tree revision's short commit id, else its release.
    let mut labels: Vec<String> = kernel::default_labels(&kernels);
    for k in super::guest_builds::tree_kernels(a, shape)? {
        labels.push(k.label);
        kernels.push(k.kernel);
    }
    for (l, given) in labels.iter_mut().zip(&a.labels) {
        l.clone_from(given);
    }
    let nested = nested::prepare(&steps, &inner_steps(&steps)?)?;
    let work = WorkDir::new("vmscale-guest")?;
    let room = crate::guest::modules::room_needed(&steps, &a.boot.setup, nested.is_some());
    let user = Userland::prepare(work.path(), room, step_programs(&steps)?)?;
    let mut prepared = rounds::prepare(
        kernels,
        &labels,
        &appends,
        &Plan {
            steps: &steps,
            setup: &a.boot.setup,
            nested: nested.as_ref(),
        },
        &user,
        work.path(),
    )?;
    if let Some(n) = &nested {
        let root = prepared
            .iter()
            .filter_map(|p| std::fs::metadata(&p.initrd).ok())
            .map(|m| m.len())
            .max()
            .unwrap_or(0);
        nested::check_memory(t.shape.mem_mib, n.inner_mem_mib, root)?;
    }

    let choice = accel::choose(
        a.boot.accel,
        Path::new("/sys"),
        Path::new("/dev/kvm"),
        || accel::probe_boot(&prepared[0].kernel.image, &user, work.path()),
    )?;
    if a.boot.entry.pvh(choice.accel) {
        crate::guest::boot::enter_at_pvh(&mut prepared)?;
    }

    if let Some(b) = accel::banner(&choice)
        && !super::output::quiet()
    {
        eprint!("{}", super::output::wrap(&b, super::output::WIDTH));
    }
    let suites = steps
        .iter()
        .filter(|s| s.len() >= 2 && s[0] == "run" && s[1] == crate::cli::QUICK)
        .count();
    if let Some(w) = a.boot.thp_append_ignored() {
        eprint!("{}", super::output::wrap(&w, super::output::WIDTH));
    }
    let append = a.boot.appended();
    let plan = (steps.len(), suites);
    let session = rounds::session(
        &t,
        &choice,
        a.boot.cpu.as_deref(),
        &append,
        a.boot.timeout,
        plan,
    );
    if let Some(out) = &a.out {
        std::fs::create_dir_all(out).map_err(|e| Error::io("cannot create", out, e))?;
    }
    let files = a.out.as_deref().unwrap_or(work.path());

    let rule = budget.rule(choice.accel);
    let mut deciding = Deciding::new(rule, a.boot.figure.clone(), prepared.len());
    let started = Instant::now();
    let mut round_started = Instant::now();
    let mut ended_by = None;
    let mut stop = |round: u32, done: &[Vec<Round>]| -> Result<bool> {
        if prepared.len() < 2 {
            return Ok(false);
        }
        for (i, kernel) in done.iter().enumerate() {
            let store = kernel.iter().find(|r| r.round == round).map(|r| &r.store);
            deciding.record(i, round, store.map(|s| s.as_path()))?;
        }
        if !budget.auto || deciding.decided() || settles.is_some_and(|s| deciding.settled(s)) {
            return Ok(budget.auto);
        }
        let took = round_started.elapsed();
        round_started = Instant::now();
        // Start no round the time left cannot hold.
        if let Some(max) = budget.max_time
            && started.elapsed() + took > max
        {
            let max = crate::parse::format_duration(max);
            ended_by = Some(format!("--max-time {max}"));
            return Ok(true);
        }
        if round == budget.rounds {
            ended_by = Some(format!("--max-rounds {round}"));
        }
        Ok(false)
    };
    let bar = Bar::new("stages").ticking();
    let (done, failure) = rounds::boot_all(
        &session,
        &prepared,
        (budget.rounds, steps.len()),
        files,
        &bar,
        &mut stop,
    );
    bar.finish();

    let boot_seconds = done.iter().flatten().map(|r| r.seconds).sum();
    let landed = pool::pool_and_merge(db, &prepared, &done, files, a.no_merge)?;
    Ok(Ran {
        boot_seconds,
        prepared,
        landed,
        deciding,
        ended_by,
        rounds: budget.rounds,
        auto: budget.auto,
        failure,
    })
}

/// Where the runs went, the kernels compared per plan step, each kernel's
/// between-boot variance, and once (the steps share boots) a busy host.
fn report(prepared: &[Prepared], m: &Landed, rounds: u32) -> Result<()> {
    if m.runs.iter().all(Vec::is_empty) {
        return Ok(());
    }
    let store = Store::open_existing(&m.store)?;
    let mut text = String::new();
    for (p, runs) in prepared.iter().zip(&m.runs) {
        let ids: Vec<String> = runs.iter().map(|r| r.id.to_string()).collect();
        text.push_str(&format!(
            "{} ({}): runs {} in {}\n",
            p.kernel.release,
            p.label,
            if ids.is_empty() {
                "none".into()
            } else {
                ids.join(", ")
            },
            crate::store::display(&m.store)
        ));
    }
    super::output::text(&text)?;
    for step in &m.runs[0] {
        let mut loaded = Vec::new();
        for runs in &m.runs {
            if let Some(r) = runs.iter().find(|r| r.step == step.step) {
                loaded.push(store.load_figures(r.id)?);
            }
        }
        if rounds > 1 {
            for run in &loaded {
                let text = crate::report::centre::between_boots(run)?;
                if !text.is_empty() {
                    super::output::text(&text)?;
                }
            }
        }
        if loaded.len() >= 2 && !loaded[0].meta.figures.is_empty() {
            super::compare::compare_loaded(&loaded)?;
        }
        if step.step == m.runs[0][0].step
            && let Some(line) = crate::guest::host_load::busy_boots(&loaded).and_then(|b| b.line())
        {
            super::output::text(&line)?;
        }
    }
    Ok(())
}
