//! `vmscale guest`: boots each kernel in a QEMU guest, in turn for
//! `--rounds` rounds, runs the plan inside, pools each kernel's runs over
//! its rounds, merges them into the store and prints the comparison with
//! one column per kernel. Everything that can be checked is checked
//! before the first boot; a guest that fails stops the rounds, and what
//! completed is still merged.

use clap::Parser;
use std::path::Path;
use std::time::{Duration, Instant};

use super::progress::Bar;
use super::{Error, Result};
use crate::cli::{Cli, Command, GuestArgs, Rounds};
use crate::guest::boot::Prepared;
use crate::guest::decide::Deciding;
use crate::guest::initramfs::Userland;
use crate::guest::nested::{self, InnerStep};
use crate::guest::pool::{self, Landed, Round};
use crate::guest::qemu::{self, Accel};
use crate::guest::rounds::Plan;
use crate::guest::topology::{self, Request};
use crate::guest::tree::TreeKernel;
use crate::guest::workdir::WorkDir;
use crate::guest::{accel, kernel, kernel_config, rounds};
use crate::kbuild::Note;
use crate::kconfig;
use crate::report::verdict::{self as shown, Verdict};
use crate::runner::Progress as _;
use crate::stats::decide::{self as rule, Rule};
use crate::store::Store;

/// Commands a plan may run inside a guest.
const PLAN_COMMANDS: &str = "run, sysinfo, show, list, compare, doctor, pcp, fit or guest";

/// Splits the words after `--` at `---` and checks each step parses as a
/// vmscale command line that makes sense inside a guest.
pub fn split_plan(words: &[String]) -> Result<Vec<Vec<String>>> {
    let mut steps: Vec<Vec<String>> = vec![Vec::new()];
    for w in words {
        if w == "---" {
            steps.push(Vec::new());
        } else if let Some(last) = steps.last_mut() {
            last.push(w.clone());
        }
    }
    if steps.len() == 1 && steps[0].is_empty() {
        return Ok(Vec::new());
    }
    for (i, step) in steps.iter().enumerate() {
        let k = i + 1;
        if step.is_empty() {
            return Err(Error::Input(format!(
                "plan step {k} is empty: put a vmscale command line between `---`s"
            )));
        }
        let argv = std::iter::once("vmscale".to_string()).chain(step.iter().cloned());
        let cli = Cli::try_parse_from(argv).map_err(|e| {
            let e = e.to_string();
            Error::Input(format!(
                "plan step {k} (`{}`): {}",
                step.join(" "),
                e.lines().next().unwrap_or("").trim_start_matches("error: ")
            ))
        })?;
        if cli.db.is_some() || cli.output.is_some() {
            return Err(Error::Input(format!(
                "plan step {k}: --db and -o have no place in a plan: the guest's store \
                 comes back by itself"
            )));
        }
        let fits = matches!(
            cli.command,
            Command::Run(_)
                | Command::Sysinfo(_)
                | Command::Show(_)
                | Command::List(_)
                | Command::Compare(_)
                | Command::Doctor(_)
                | Command::Pcp(_)
                | Command::Fit(_)
                | Command::Guest(_)
        );
        if !fits {
            return Err(Error::Input(format!(
                "plan step {k} (`{}`): a guest's plan runs {PLAN_COMMANDS}",
                step[0]
            )));
        }
        if let Command::Guest(g) = &cli.command {
            check_nested(k, g)?;
        }
    }
    Ok(steps)
}

/// A `guest` step: its kernels are files (a tree would be built inside an
/// emulated CPU) and its own plan boots no guest (a third level).
fn check_nested(k: usize, g: &GuestArgs) -> Result<()> {
    if g.tree.is_some() {
        return Err(Error::Input(format!(
            "plan step {k}: a guest step boots --kernel files; build --tree on the host \
             (vmscale guest --tree caches the bzImage) and give it as --kernel"
        )));
    }
    let inner = split_plan(&g.plan)?;
    if inner.is_empty() {
        return Err(Error::Input(format!(
            "plan step {k}: the guest step needs its own plan after its `--`"
        )));
    }
    if inner.iter().any(|s| s[0] == "guest") {
        return Err(Error::Input(format!(
            "plan step {k}: a guest inside a guest runs no guests of its own (two levels \
             at most)"
        )));
    }
    Ok(())
}

/// The plan's `guest` steps as the host must prepare them.
fn inner_steps(steps: &[Vec<String>]) -> Result<Vec<InnerStep>> {
    let mut out = Vec::new();
    for (index, step) in steps.iter().enumerate() {
        let argv = std::iter::once("vmscale".to_string()).chain(step.iter().cloned());
        if let Ok(Cli {
            command: Command::Guest(g),
            ..
        }) = Cli::try_parse_from(argv)
        {
            out.push(InnerStep {
                index,
                kernels: g.kernels.clone(),
                modules: g.modules.clone(),
                mem_mib: mem_mib(&g.mem)?,
            });
        }
    }
    Ok(out)
}

pub fn mem_mib(text: &str) -> Result<u64> {
    let bytes = crate::parse::size_arg("--mem", text)?;
    if bytes % (1 << 20) != 0 {
        return Err(Error::Input(format!(
            "--mem {text}: give whole MiB, e.g. 1G or 768M"
        )));
    }
    Ok(bytes >> 20)
}

pub fn guest(db: &Path, a: &GuestArgs) -> Result<()> {
    crate::exec::signals::install();
    let steps = split_plan(&a.plan)?;
    if steps.is_empty() && a.setup.is_empty() {
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
        cpus: a.cpus,
        nodes: a.nodes,
        sockets: a.sockets,
        dies: a.dies,
        threads: a.threads,
        memory_only_nodes: a.memory_only_nodes,
        mem_mib: mem_mib(&a.mem)?,
        distances,
    }
    .check()?;
    let timeout = a
        .timeout
        .as_deref()
        .map(crate::parse::duration)
        .transpose()?;
    let mut kernels = a
        .kernels
        .iter()
        .map(|k| kernel::resolve(k, a.modules.as_deref()))
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
    // Labels: the user's, else a tree revision's short commit id, else
    // the release.
    let mut labels: Vec<String> = kernel::default_labels(&kernels);
    for k in tree_kernels(a)? {
        labels.push(k.label);
        kernels.push(k.kernel);
    }
    for (l, given) in labels.iter_mut().zip(&a.labels) {
        l.clone_from(given);
    }
    let nested = nested::prepare(&steps, &inner_steps(&steps)?)?;
    let work = WorkDir::new("vmscale-guest")?;
    let user = Userland::prepare(work.path())?;
    let prepared = rounds::prepare(
        kernels,
        &labels,
        &appends,
        &Plan {
            steps: &steps,
            setup: &a.setup,
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

    let choice = accel::choose(a.accel, Path::new("/sys"), Path::new("/dev/kvm"), || {
        accel::probe_boot(&prepared[0].kernel.image, &user, work.path())
    })?;
    if choice.accel == Accel::Tcg && !super::output::quiet() {
        eprint!(
            "{}",
            super::output::wrap(&accel::tcg_banner(&choice.why), super::output::WIDTH)
        );
    }
    let suites = steps
        .iter()
        .filter(|s| s.len() >= 2 && s[0] == "run" && s[1] == crate::cli::QUICK)
        .count();
    let append = a.append.join(" ");
    let plan = (steps.len(), suites);
    let session = rounds::session(&t, &choice, a.cpu.as_deref(), &append, timeout, plan);
    if let Some(out) = &a.out {
        std::fs::create_dir_all(out).map_err(|e| Error::io("cannot create", out, e))?;
    }
    let files = a.out.as_deref().unwrap_or(work.path());

    let rule = budget.rule(choice.accel);
    let mut deciding = Deciding::new(rule, a.figure.clone(), prepared.len());
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
        if !budget.auto || deciding.decided() {
            return Ok(budget.auto);
        }
        let took = round_started.elapsed();
        round_started = Instant::now();
        // Start no round the time left cannot hold.
        if let Some(max) = budget.max_time
            && started.elapsed() + took > max
        {
            ended_by = Some(format!("--max-time {}", budget.max_time_text));
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

    let landed = pool::pool_and_merge(db, &prepared, &done, files, a.no_merge)?;
    let verdict = verdict_of(&prepared, &deciding, ended_by);
    if a.json {
        super::output::data(&format!(
            "{}\n",
            serde_json::to_string_pretty(&crate::report::verdict::json(&verdict))
                .unwrap_or_default()
        ))?;
    } else {
        report(&prepared, &landed, budget.rounds)?;
        if prepared.len() > 1 && (budget.auto || a.decide.is_some()) {
            super::output::text(&crate::report::verdict::text(&verdict))?;
        }
    }
    match failure {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

/// The kernels of `--tree`'s revisions, built or found in the cache; the
/// plan (which are cached) and the config's differences from its base on
/// stderr, and the build's stage with its time on the progress bar.
fn tree_kernels(a: &GuestArgs) -> Result<Vec<TreeKernel>> {
    let Some(tree) = &a.tree else {
        return Ok(Vec::new());
    };
    let quiet = super::output::quiet();
    let bar = Bar::new("builds").ticking();
    let say = |text: &str| {
        if !quiet {
            bar.say_raw(&super::output::wrap(text, super::output::WIDTH));
        }
    };
    let (mut stage, mut since) = (String::new(), std::time::Instant::now());
    let built =
        crate::guest::tree::kernels(tree, &a.revs, &a.config, &a.config_items, &mut |note| {
            match note {
                Note::Plan(line) => say(&format!("kernel build: {line}\n")),
                Note::Config(text) => say(text),
                Note::Warn(text) => say(&format!("warning: {text}\n")),
                Note::Stage(s) => {
                    (stage, since) = (s, std::time::Instant::now());
                    bar.note(&format!("building {stage}"));
                }
                Note::Tick => bar.note(&format!(
                    "building {stage} ({} s)",
                    since.elapsed().as_secs()
                )),
            }
        });
    bar.finish();
    built
}

/// Where the runs went, the comparison of the kernels per plan step, and
/// each kernel's between-boot variance.
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
                between_boots(run)?;
            }
        }
        if loaded.len() >= 2 && !loaded[0].meta.figures.is_empty() {
            super::compare::compare_loaded(&loaded)?;
        }
    }
    Ok(())
}

/// A pooled run's centre and between-boot tables (samples carry their
/// round as their invocation).
fn between_boots(run: &crate::model::Run) -> Result<()> {
    let blocks = crate::report::centre::blocks(run);
    if blocks.is_empty() {
        return Ok(());
    }
    let mut text = format!(
        "\n{} (run {}, {}):",
        run.meta.machine["kernel_release"].as_str().unwrap_or("?"),
        run.meta.id,
        run.meta.label.as_deref().unwrap_or("")
    );
    let report = crate::report::export::Report {
        text: None,
        blocks,
        records: Default::default(),
        data: serde_json::Value::Null,
    };
    text.push_str(
        &crate::report::export::exporter(crate::report::export::Format::Text).export(&report)?,
    );
    super::output::text(&text)
}

/// How many rounds, and what ends them: `--rounds N` fixed, or `--rounds
/// auto` until the verdict, `--max-rounds` or `--max-time`.
struct Budget {
    auto: bool,
    /// The most rounds.
    rounds: u32,
    /// `--decide` as a fraction; None: the accelerator's default.
    threshold: Option<f64>,
    max_time: Option<Duration>,
    max_time_text: String,
}

/// `--rounds auto`'s budget when `--max-rounds` is not given.
const DEFAULT_MAX_ROUNDS: u32 = 30;
/// The error of the whole sequence of intervals.
const ALPHA: f64 = 0.05;

impl Budget {
    fn of(a: &GuestArgs, steps: &[Vec<String>]) -> Result<Budget> {
        let kernels = a.kernels.len() + a.revs.len();
        let auto = a.rounds == Rounds::Auto;
        if !auto && (a.max_rounds.is_some() || a.max_time.is_some()) {
            return Err(Error::Input(
                "--max-rounds and --max-time bound --rounds auto: give --rounds auto, or \
                 leave them out"
                    .into(),
            ));
        }
        if auto && kernels < 2 {
            return Err(Error::Input(
                "--rounds auto decides between kernels: give two --kernel (the same \
                 file twice for an A/A check)"
                    .into(),
            ));
        }
        let rounds = match a.rounds {
            Rounds::Fixed(n) => n,
            Rounds::Auto => a.max_rounds.unwrap_or(DEFAULT_MAX_ROUNDS),
        };
        let what = if auto { "--max-rounds" } else { "--rounds" };
        if !(1..=100).contains(&rounds) || (auto && (rounds as usize) < rule::MIN_ROUNDS) {
            return Err(Error::Input(format!(
                "{what} {rounds}: give {} to 100",
                if auto { rule::MIN_ROUNDS } else { 1 }
            )));
        }
        let threshold = a.decide.as_deref().map(parse_threshold).transpose()?;
        let max_time = a
            .max_time
            .as_deref()
            .map(crate::parse::duration)
            .transpose()?;
        if let Some(f) = &a.figure {
            check_figure(f, steps)?;
        }
        Ok(Budget {
            auto,
            rounds,
            threshold,
            max_time,
            max_time_text: a.max_time.clone().unwrap_or_default(),
        })
    }

    /// The rule: under TCG a round's ratio scatters by some 13 % (two
    /// boots of 9 %), so a band of 10 % is what 20 rounds can decide;
    /// under KVM 3 %.
    fn rule(&self, accel: Accel) -> Rule {
        let t = self.threshold.unwrap_or(match accel {
            Accel::Tcg => 0.10,
            Accel::Kvm => 0.03,
        });
        if self.auto {
            Rule::sequential(t, ALPHA, self.rounds as usize)
        } else {
            Rule::fixed(t, ALPHA, self.rounds as usize)
        }
    }
}

/// "10%", "10 %" or "0.1" as a fraction in (0, 1).
pub fn parse_threshold(s: &str) -> Result<f64> {
    let t = s.trim();
    let v = match t.strip_suffix('%') {
        Some(p) => p.trim().parse::<f64>().map(|p| p / 100.0),
        None => t.parse::<f64>(),
    };
    match v {
        Ok(v) if v > 0.0 && v < 1.0 => Ok(v),
        _ => Err(Error::Input(format!(
            "--decide {s}: give the band around a ratio of 1 as a percentage between 0 and \
             100, e.g. 10%"
        ))),
    }
}

/// Refuses a `--figure` the plan's first run cannot report.
pub fn check_figure(figure: &str, steps: &[Vec<String>]) -> Result<()> {
    let Some(spec) = steps
        .iter()
        .find(|s| s.first().is_some_and(|w| w == "run"))
        .and_then(|s| s.get(1))
        .and_then(|w| crate::workload::find(w))
    else {
        return Ok(());
    };
    let names: Vec<String> = (spec.figures)().into_iter().map(|f| f.name).collect();
    // c2c adds a figure per CPU pair to those it declares.
    if names.iter().any(|n| n == figure) || spec.name == "c2c" {
        return Ok(());
    }
    Err(Error::Input(format!(
        "--figure {figure}: {} reports {}",
        spec.name,
        names.join(", ")
    )))
}

/// `--append-to N=ARGS` as each kernel's own additions.
fn appends_to(given: &[String], kernels: usize) -> Result<Vec<String>> {
    let mut out = vec![String::new(); kernels];
    for g in given {
        let bad = || {
            Error::Input(format!(
                "--append-to {g}: give N=ARGS with N from 1 to {kernels} (the kernel's place \
                 among the --kernel options)"
            ))
        };
        let (k, args) = g.split_once('=').ok_or_else(bad)?;
        let k: usize = k.trim().parse().map_err(|_| bad())?;
        let slot = out.get_mut(k.wrapping_sub(1)).ok_or_else(bad)?;
        slot.push(' ');
        slot.push_str(args.trim());
    }
    Ok(out.into_iter().map(|s| s.trim().to_string()).collect())
}

/// The verdict as the report renders it.
fn verdict_of(prepared: &[Prepared], d: &Deciding, ended_by: Option<String>) -> Verdict {
    let kernel = |p: &Prepared| shown::Kernel {
        label: p.label.clone(),
        given: p.kernel.given.display().to_string(),
        release: p.kernel.release.clone(),
        sha256: p.kernel.sha256.clone(),
    };
    Verdict {
        figure: d.figure.clone(),
        rule: d.rule,
        base: kernel(&prepared[0]),
        others: prepared[1..]
            .iter()
            .map(kernel)
            .zip(d.decisions())
            .collect(),
        ended_by: ended_by.filter(|_| !d.decided()),
    }
}
