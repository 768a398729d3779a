//! `vmscale guest`: boots each kernel in a QEMU guest, in turn for
//! `--rounds` rounds, runs the plan inside, pools each kernel's runs over
//! its rounds, merges them into the store and prints the comparison with
//! one column per kernel. Everything that can be checked is checked
//! before the first boot; a guest that fails stops the rounds, and what
//! completed is still merged.

use clap::Parser;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::{Error, Result};
use crate::cli::{Cli, Command, GuestArgs};
use crate::guest::boot::{self, Booted, Prepared, Session};
use crate::guest::console::{End, TAIL};
use crate::guest::init::{self, Marker};
use crate::guest::initramfs::{Scripts, Userland};
use crate::guest::pool::{self, Pooled, Round};
use crate::guest::qemu::{self, Accel};
use crate::guest::topology::{self, Request, Topology};
use crate::guest::tree::TreeKernel;
use crate::guest::{accel, kernel};
use crate::kbuild::Note;
use crate::machine::guest::GuestInfo;
use crate::store::Store;

/// Commands a plan may run inside a guest.
const PLAN_COMMANDS: &str = "run, sysinfo, show, list, compare, doctor, pcp or fit";

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
        );
        if !fits {
            return Err(Error::Input(format!(
                "plan step {k} (`{}`): a guest's plan runs {PLAN_COMMANDS}",
                step[0]
            )));
        }
    }
    Ok(steps)
}

/// How long a kernel may take to reach init: a guest still in early boot
/// after it is hung (seen here: a 32-vCPU TCG guest on 2 host CPUs stuck
/// after its first console line for 18 minutes), not slow.
pub fn boot_bound(accel: Accel, cpus: usize) -> Duration {
    Duration::from_secs(match accel {
        Accel::Kvm => 60,
        Accel::Tcg => 120 + 5 * cpus as u64,
    })
}

/// The bound of one boot: the boot itself (longer for many vCPUs under
/// TCG) and an allowance per plan step (`run quick` is a suite).
pub fn derived_bound(steps: &[Vec<String>], accel: Accel, cpus: usize) -> Duration {
    let boot = boot_bound(accel, cpus).as_secs();
    let (step, suite) = match accel {
        Accel::Kvm => (600, 1800),
        Accel::Tcg => (1800, 5400),
    };
    let plan: u64 = steps
        .iter()
        .map(|s| {
            if s.len() >= 2 && s[0] == "run" && s[1] == crate::cli::QUICK {
                suite
            } else {
                step
            }
        })
        .sum();
    Duration::from_secs(boot + plan.max(60))
}

fn mem_mib(text: &str) -> Result<u64> {
    let bytes = crate::parse::size_arg("--mem", text)?;
    if bytes % (1 << 20) != 0 {
        return Err(Error::Input(format!(
            "--mem {text}: give whole MiB, e.g. 1G or 768M"
        )));
    }
    Ok(bytes >> 20)
}

/// Refuses a guest larger than the host's available memory.
fn check_host_memory(mib: u64) -> Result<()> {
    let info = crate::machine::snapshot::read_meminfo(Path::new("/"));
    let Some(avail) = info.get("MemAvailable").copied() else {
        return Ok(());
    };
    if mib * 1024 > avail {
        return Err(Error::Refused(format!(
            "--mem {mib}M is more than the host has available ({} MiB): give at most {}M",
            avail / 1024,
            avail / 1024
        )));
    }
    Ok(())
}

/// A private temporary directory, removed when dropped; those of earlier
/// `vmscale guest` processes that were killed are removed first.
struct WorkDir(PathBuf);

impl WorkDir {
    fn new() -> Result<WorkDir> {
        let tmp = std::env::temp_dir();
        remove_stale(&tmp);
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        let dir = tmp.join(format!("vmscale-guest-{}-{nanos}", std::process::id()));
        std::os::unix::fs::DirBuilderExt::mode(&mut std::fs::DirBuilder::new(), 0o700)
            .create(&dir)
            .map_err(|e| Error::io("cannot create", &dir, e))?;
        Ok(WorkDir(dir))
    }
}

impl Drop for WorkDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn remove_stale(tmp: &Path) {
    let Ok(entries) = std::fs::read_dir(tmp) else {
        return;
    };
    // Only directories owned by whoever runs this (the owner of /proc/self).
    let me = std::fs::metadata("/proc/self").map(|m| std::os::unix::fs::MetadataExt::uid(&m));
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let Some(pid) = name
            .strip_prefix("vmscale-guest-")
            .and_then(|r| r.split('-').next())
            .and_then(|p| p.parse::<u32>().ok())
        else {
            continue;
        };
        let Ok(meta) = std::fs::symlink_metadata(e.path()) else {
            continue;
        };
        let ours = me
            .as_ref()
            .is_ok_and(|u| *u == std::os::unix::fs::MetadataExt::uid(&meta));
        if meta.is_dir() && ours && !Path::new(&format!("/proc/{pid}")).exists() {
            let _ = std::fs::remove_dir_all(e.path());
        }
    }
}

/// Progress on stderr when it is a terminal: one unit per boot and per
/// plan step, with an estimate.
fn progress(total: u64) -> indicatif::ProgressBar {
    if !std::io::stderr().is_terminal() || super::output::quiet() {
        return indicatif::ProgressBar::hidden();
    }
    let b = indicatif::ProgressBar::with_draw_target(
        Some(total),
        indicatif::ProgressDrawTarget::stderr(),
    );
    let template = "{elapsed:>4} {bar:20} {pos}/{len} stages, ~{eta} left {wide_msg}";
    if let Ok(style) = indicatif::ProgressStyle::with_template(template) {
        b.set_style(style);
    }
    b.enable_steady_tick(Duration::from_millis(500));
    b
}

fn tail_text(lines: &[String]) -> String {
    let mut s = format!("last {} console lines:\n", lines.len().min(TAIL));
    for l in lines {
        s.push_str("  | ");
        s.push_str(l);
        s.push('\n');
    }
    s
}

/// What a finished boot means: the guest store it brought (None when
/// the plan stores nothing), or why it failed.
fn judge(b: &Booted, p: &Prepared, round: u32, steps: usize) -> Result<Option<PathBuf>> {
    let who = format!("kernel {} ({}), round {round}", p.kernel.release, p.label);
    let fail = |why: String| {
        Err(Error::Failed(format!(
            "{who}: {why}\n{}  (console log: {})",
            tail_text(&b.outcome.tail),
            b.dir.join("console.log").display()
        )))
    };
    match &b.outcome.end {
        End::Interrupted(_) => return Err(Error::Interrupted),
        End::Panicked => {
            return fail(format!(
                "the kernel panicked: {}",
                b.outcome.panic.as_deref().unwrap_or("")
            ));
        }
        End::TimedOut(d) => {
            return fail(format!(
                "still running after {} s: stopped (raise --timeout if the plan needs longer)",
                d.as_secs()
            ));
        }
        End::Stopped | End::Exited(_) => {}
    }
    let Some(r) = &b.results else {
        let qemu_err = std::fs::read_to_string(b.dir.join("qemu.stderr")).unwrap_or_default();
        let shown = qemu::stderr_worth_showing(&qemu_err).join("\n  ");
        return fail(format!(
            "the guest wrote no results{}",
            if shown.is_empty() {
                String::new()
            } else {
                format!(" (QEMU: {shown})")
            }
        ));
    };
    if let Some(rel) = r.text("release").filter(|rel| *rel != p.kernel.release) {
        return fail(format!(
            "the guest runs {rel}, not the {} the image names",
            p.kernel.release
        ));
    }
    if let Some(s) = r.text("setup.status").filter(|s| s != "0") {
        return fail(format!(
            "the setup lines failed (status {s}):\n  {}",
            r.tail("setup.log", 10).join("\n  ")
        ));
    }
    for k in 1..=steps {
        match r.step_status(k) {
            Some(0) => {}
            Some(rc) => {
                return fail(format!(
                    "plan step {k} exited {rc} in the guest:\n  {}",
                    r.tail(&format!("step-{k}.err"), 10).join("\n  ")
                ));
            }
            None => return fail(format!("plan step {k} did not finish")),
        }
    }
    Ok(r.store())
}

/// The kernels of `--tree`'s revisions, built or found in the cache; the
/// plan (which are cached), the config's differences from its base and
/// the stage with its time on stderr.
fn tree_kernels(a: &GuestArgs) -> Result<Vec<TreeKernel>> {
    let Some(tree) = &a.tree else {
        return Ok(Vec::new());
    };
    let quiet = super::output::quiet();
    let bar = if !std::io::stderr().is_terminal() || quiet {
        indicatif::ProgressBar::hidden()
    } else {
        let b = indicatif::ProgressBar::new_spinner();
        b.enable_steady_tick(Duration::from_millis(500));
        b
    };
    let say = |text: &str| {
        if !quiet {
            bar.suspend(|| eprint!("{}", super::output::wrap(text, super::output::WIDTH)));
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
                    bar.set_message(format!("building {stage}"));
                }
                Note::Tick => bar.set_message(format!(
                    "building {stage} ({} s)",
                    since.elapsed().as_secs()
                )),
            }
        });
    bar.finish_and_clear();
    built
}

/// The record shared by every boot of this invocation.
fn session_info(choice: &accel::Choice, t: &Topology) -> GuestInfo {
    let kvm = choice.accel == Accel::Kvm;
    let host = crate::machine::live();
    let online = host.online_cpus();
    GuestInfo {
        accel: choice.accel.as_str().into(),
        host_kernel: host.kernel_release.clone(),
        session: Some(format!(
            "{:x}",
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos())
                ^ u128::from(std::process::id())
        )),
        topology: Some(t.shape.clone()),
        prealloc: kvm,
        pinned: if kvm && !online.is_empty() {
            (0..t.shape.cpus)
                .map(|i| online[i % online.len()])
                .collect()
        } else {
            Vec::new()
        },
        ..GuestInfo::default()
    }
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
    if !(1..=100).contains(&a.rounds) {
        return Err(Error::Input(format!(
            "--rounds {}: give 1 to 100",
            a.rounds
        )));
    }
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
    let mut kernels: Vec<(kernel::Kernel, Option<String>)> = a
        .kernels
        .iter()
        .map(|k| kernel::resolve(k, a.modules.as_deref()).map(|k| (k, None)))
        .collect::<Result<Vec<_>>>()?;
    check_host_memory(t.shape.mem_mib)?;
    qemu::check_installed()?;
    for k in tree_kernels(a)? {
        kernels.push((k.kernel, Some(k.label)));
    }
    let work = WorkDir::new()?;
    let user = Userland::prepare(&work.0)?;
    let (init_s, plan_s) = (init::init_script(), init::plan_script(&steps));
    let setup_s = init::setup_script(&a.setup);
    let scripts = Scripts {
        init: &init_s,
        plan: &plan_s,
        setup: &setup_s,
    };
    let prepared = kernels
        .into_iter()
        .enumerate()
        .map(|(i, (k, default))| {
            let label = a
                .labels
                .get(i)
                .cloned()
                .or(default)
                .unwrap_or_else(|| k.release.clone());
            boot::prepare(k, label, i, &user, &scripts, &work.0)
        })
        .collect::<Result<Vec<_>>>()?;

    let choice = accel::choose(&a.accel, Path::new("/sys"), Path::new("/dev/kvm"), || {
        let probe_s = init::probe_script();
        let probe = Scripts {
            init: &probe_s,
            plan: "",
            setup: "",
        };
        let initrd = work.0.join("initrd-probe");
        crate::guest::initramfs::write(&initrd, &user, &[], &probe)?;
        let one = Request {
            cpus: Some(1),
            nodes: 1,
            sockets: 1,
            dies: 1,
            threads: 1,
            memory_only_nodes: 0,
            mem_mib: 512,
            distances: Vec::new(),
        }
        .check()?;
        accel::probe(&prepared[0].kernel.image, &initrd, &one, &work.0)
    })?;
    if choice.accel == Accel::Tcg && !super::output::quiet() {
        eprint!(
            "{}",
            super::output::wrap(&accel::tcg_banner(&choice.why), super::output::WIDTH)
        );
    }
    let append = a.append.join(" ");
    let session = Session {
        topology: &t,
        accel: choice.accel,
        cpu: a.cpu.as_deref(),
        append: &append,
        info: session_info(&choice, &t),
        bound: timeout.unwrap_or_else(|| derived_bound(&steps, choice.accel, t.shape.cpus)),
        // A --timeout of the user's replaces both bounds.
        to_init: timeout
            .is_none()
            .then(|| boot_bound(choice.accel, t.shape.cpus)),
    };
    if let Some(out) = &a.out {
        std::fs::create_dir_all(out).map_err(|e| Error::io("cannot create", out, e))?;
    }
    let files = a.out.clone().unwrap_or_else(|| work.0.clone());

    // Boots in turn: A B A B ..
    let n = prepared.len();
    let bar = progress(u64::from(a.rounds) * n as u64 * (steps.len() as u64 + 1));
    let mut done: Vec<Vec<Round>> = vec![Vec::new(); n];
    let mut failure = None;
    'rounds: for round in 1..=a.rounds {
        for (i, p) in prepared.iter().enumerate() {
            if crate::exec::signals::caught().is_some() {
                failure = Some(Error::Interrupted);
                break 'rounds;
            }
            let what = format!("round {round}/{} {}", a.rounds, p.label);
            bar.set_message(format!("{what}: booting"));
            let mut on_marker = |m: &Marker| match m {
                Marker::Up(_) => bar.inc(1),
                Marker::StepStart(k, s) => bar.set_message(format!("{what}: step {k}/{s}")),
                Marker::StepExit(..) => bar.inc(1),
                _ => {}
            };
            let dir = files
                .join(format!("round-{round}"))
                .join(format!("kernel-{}", i + 1));
            let verdict = boot::boot(&session, p, round, &dir, &mut on_marker)
                .and_then(|b| judge(&b, p, round, steps.len()));
            match verdict {
                Ok(store) => {
                    if let Some(store) = store {
                        done[i].push(Round { round, store });
                    }
                }
                Err(e) => {
                    failure = Some(e);
                    break 'rounds;
                }
            }
        }
    }
    bar.finish_and_clear();

    let merged = pool_and_merge(db, &prepared, &done, &files, a.no_merge)?;
    report(&prepared, &merged, a.rounds)?;
    match failure {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

/// Each kernel's pooled runs as (step, run id in `store`), and that store.
struct Merged {
    store: PathBuf,
    runs: Vec<Vec<Pooled>>,
}

fn pool_and_merge(
    db: &Path,
    prepared: &[Prepared],
    done: &[Vec<Round>],
    files: &Path,
    no_merge: bool,
) -> Result<Merged> {
    let pooled_path = files.join("pooled.db");
    let _ = std::fs::remove_file(&pooled_path);
    let mut pooled = Store::open(&pooled_path)?;
    let mut runs = Vec::new();
    for (p, rounds) in prepared.iter().zip(done) {
        runs.push(if rounds.is_empty() {
            Vec::new()
        } else {
            pool::pool(&p.label, rounds, &mut pooled)?
        });
    }
    if no_merge || runs.iter().all(Vec::is_empty) {
        return Ok(Merged {
            store: pooled_path,
            runs,
        });
    }
    let mut host = Store::open(db)?;
    let copied = host.merge_from(&pooled)?;
    let to = |from: i64| {
        copied.iter().find_map(|m| match m {
            crate::store::merge::Merged::Copied { from: f, to }
            | crate::store::merge::Merged::Present { from: f, to }
                if *f == from =>
            {
                Some(*to)
            }
            _ => None,
        })
    };
    for kernel in &mut runs {
        for r in kernel.iter_mut() {
            r.id = to(r.id).unwrap_or(r.id);
        }
    }
    Ok(Merged {
        store: db.to_path_buf(),
        runs,
    })
}

/// Where the runs went, the comparison of the kernels per plan step, and
/// each kernel's between-boot variance.
fn report(prepared: &[Prepared], m: &Merged, rounds: u32) -> Result<()> {
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
