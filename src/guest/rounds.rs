//! The rounds of one `vmscale guest`: the bounds of a boot, the record
//! every boot shares, the kernels booted in turn (A B, B A, A B ..) and each
//! boot judged from its console and the files it brought back. A boot that
//! fails stops the rounds; those completed before it are kept.

use std::path::{Path, PathBuf};
use std::time::Duration;

use super::accel::Choice;
use super::boot::{self, Booted, Prepared, Session};
use super::console::{End, TAIL};
use super::files;
use super::init::{self, Marker};
use super::initramfs::{Scripts, Userland};
use super::kernel::Kernel;
use super::nested::Nested;
use super::pool::Round;
use super::qemu::{self, Accel};
use super::topology::Topology;
use crate::error::{Error, Result};
use crate::machine::guest::{GuestInfo, GuestTopology};
use crate::runner::Progress;

/// How long a kernel may take to reach init: a guest still in early boot
/// after it is hung (seen here: a 32-vCPU TCG guest on 2 host CPUs stuck
/// after its first console line for 18 minutes), not slow. icount runs
/// every vCPU on one host thread: a boot took 2.5× (load 13) to 7× (load
/// 22) as long as under TCG here. KVM's bound is stretched where KVM is
/// itself nested in an emulated CPU ([`super::qemu::kvm_pace`]).
fn boot_bound(accel: Accel, cpus: usize) -> Duration {
    Duration::from_secs(match accel {
        Accel::Kvm => 60 * u64::from(super::qemu::kvm_pace()),
        Accel::Tcg => 120 + 5 * cpus as u64,
        Accel::Icount => 240 + 15 * cpus as u64,
    })
}

/// The bound of one boot of a plan of `steps` steps, `suites` of them
/// the quick suite: the boot itself (longer for many vCPUs under TCG) and
/// an allowance per plan step.
fn derived_bound(steps: usize, suites: usize, accel: Accel, cpus: usize) -> Duration {
    let boot = boot_bound(accel, cpus).as_secs();
    let (step, suite) = match accel {
        Accel::Kvm => (600, 1800),
        Accel::Tcg => (1800, 5400),
        Accel::Icount => (3600, 10800),
    };
    let plan = suites as u64 * suite + (steps - suites) as u64 * step;
    Duration::from_secs(boot + plan.max(60))
}

/// Refuses a guest larger than the host's available memory.
pub fn check_host_memory(mib: u64) -> Result<()> {
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

/// The record shared by every boot of this invocation.
fn session_info(choice: &Choice, t: &Topology) -> GuestInfo {
    let kvm = choice.accel == Accel::Kvm;
    // Two files, not a whole snapshot of the host (tens of ms a run).
    let root = crate::machine::root();
    let online = crate::machine::topology::online_cpus(&root);
    GuestInfo {
        accel: choice.accel.as_str().into(),
        icount_shift: (choice.accel == Accel::Icount).then_some(qemu::ICOUNT_SHIFT),
        host_kernel: crate::machine::kernel::release(&root),
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

/// What every guest runs: the plan's steps and the `setup` lines; a plan
/// that boots guests has them `nested` (its steps are then `nested`'s).
pub struct Plan<'a> {
    pub steps: &'a [Vec<String>],
    pub setup: &'a [String],
    pub nested: Option<&'a Nested>,
}

/// Each kernel labelled (its `labels` entry, else its release, with its
/// image's short hash where two kernels share a release) with its own
/// command-line additions (`appends`, by kernel) and its initramfs holding
/// the plan, in `work`.
pub fn prepare(
    kernels: Vec<Kernel>,
    labels: &[String],
    appends: &[String],
    plan: &Plan,
    user: &Userland,
    work: &Path,
) -> Result<Vec<Prepared>> {
    let steps = plan.nested.map_or(plan.steps, |n| &n.steps[..]);
    let (init_s, plan_s) = (init::init_script(), init::plan_script(steps));
    let setup_s = init::setup_script(plan.setup);
    let scripts = Scripts {
        init: &init_s,
        plan: &plan_s,
        setup: &setup_s,
        nested: plan.nested,
    };
    let defaults = super::kernel::default_labels(&kernels);
    kernels
        .into_iter()
        .enumerate()
        .map(|(i, k)| {
            let label = labels.get(i).unwrap_or(&defaults[i]).clone();
            let mut p = boot::prepare(k, label, i, user, &scripts, work)?;
            p.append = appends.get(i).cloned().unwrap_or_default();
            Ok(p)
        })
        .collect()
}

/// How long a TCG guest's console may be silent after init: its init
/// says it is alive every [`init::HEARTBEAT`], so this is a guest stalled
/// (seen: 2 vCPUs, both threads queued on QEMU's global lock and its main
/// loop spinning, no console line for 8 minutes), not a loaded host (the
/// slowest healthy nested_kvm run here at load 12 took 170 s in all).
const SILENCE: Duration = Duration::from_secs(180);

/// What every boot shares. The bound of a boot is the user's `timeout`
/// (which then replaces the bound to init too) or derived from the plan:
/// `steps` steps, `suites` of them the quick suite.
pub fn session<'a>(
    topology: &'a Topology,
    choice: &Choice,
    cpu: Option<&'a str>,
    append: &'a str,
    timeout: Option<Duration>,
    (steps, suites): (usize, usize),
) -> Session<'a> {
    let cpus = topology.shape.cpus;
    Session {
        topology,
        accel: choice.accel,
        cpu,
        append,
        info: session_info(choice, topology),
        bound: timeout.unwrap_or_else(|| derived_bound(steps, suites, choice.accel, cpus)),
        to_init: timeout.is_none().then(|| boot_bound(choice.accel, cpus)),
        silence: (choice.accel == Accel::Tcg).then_some(SILENCE),
    }
}

/// What decides after a round whether the rounds end: the round, and
/// every kernel's completed rounds so far.
pub type Stop<'a> = dyn FnMut(u32, &[Vec<Round>]) -> Result<bool> + 'a;

/// Boots each of `prepared` in turn for at most `rounds` rounds of a plan
/// of `steps` steps, with each boot's files under `files`/round-R/kernel-K;
/// after each round `stop` sees every kernel's completed rounds and may end
/// them (`Ok(true)`: decided). Gives each kernel's completed rounds and, if
/// a boot failed, `stop` failed or the run was interrupted, why (the rounds
/// stop there). `bar` advances once per boot and per plan step.
pub fn boot_all(
    session: &Session,
    prepared: &[Prepared],
    (rounds, steps): (u32, usize),
    files: &Path,
    bar: &dyn Progress,
    stop: &mut Stop,
) -> (Vec<Vec<Round>>, Option<Error>) {
    let mut done: Vec<Vec<Round>> = vec![Vec::new(); prepared.len()];
    bar.start(u64::from(rounds) * prepared.len() as u64 * (steps as u64 + 1));
    for round in 1..=rounds {
        for i in boot_order(round, prepared.len()) {
            let p = &prepared[i];
            if crate::exec::signals::caught().is_some() {
                return (done, Some(Error::Interrupted));
            }
            let what = format!("round {round}/{rounds} {}", p.label);
            bar.note(&format!("{what}: booting"));
            let mut on_marker = |m: &Marker| match m {
                Marker::Up(_) => bar.step(&format!("{what}: up")),
                Marker::StepStart(k, s) => bar.note(&format!("{what}: step {k}/{s}")),
                Marker::StepExit(k, s, _) => bar.step(&format!("{what}: step {k}/{s} done")),
                _ => {}
            };
            let dir = files
                .join(format!("round-{round}"))
                .join(format!("kernel-{}", i + 1));
            let given = &session.topology.shape;
            let started = std::time::Instant::now();
            let host = super::host_load::mark();
            let booted = boot_again_if_stalled(session, p, round, &dir, &mut on_marker);
            let seconds = started.elapsed().as_secs_f64();
            let host_other_share = host.others_share(seconds);
            let verdict = booted.and_then(|b| judge(&b, p, round, steps, given));
            match verdict {
                Ok(Some(store)) => done[i].push(Round {
                    round,
                    store,
                    seconds,
                    host_other_share,
                }),
                Ok(None) => {}
                Err(e) => return (done, Some(e)),
            }
        }
        match stop(round, &done) {
            Ok(false) => {}
            Ok(true) => break,
            Err(e) => return (done, Some(e)),
        }
    }
    (done, None)
}

/// The order the kernels boot in, in `round` (from 1): as given in odd
/// rounds, reversed in even ones (A B, B A, A B ..). Whatever drifts on
/// the host from boot to boot (load coming and going, memory the host
/// backs lazily, its page cache) then falls on the later boot of a pair
/// in one round and on the earlier one in the next: it adds to the spread
/// of the rounds' paired ratios, which the interval counts, instead of
/// shifting their mean, which it cannot see (seeded simulation below).
pub fn boot_order(round: u32, kernels: usize) -> Vec<usize> {
    let mut order: Vec<usize> = (0..kernels).collect();
    if round.is_multiple_of(2) {
        order.reverse();
    }
    order
}

/// Boots `p`; a boot lost for a cause outside the kernel under test is
/// booted once more, the lost one's files kept beside as
/// `kernel-K.stalled`, and the second boot's record says why
/// (`machine.guest.reboot_cause`). Two causes are taken for such:
///
/// - A TCG boot that never reached init, or whose kernel reported a CPU
///   stuck past [`console::WEDGED`]: QEMU's multi-threaded TCG (7.2 here)
///   now and then stalls a guest, a many-vCPU one in early boot with
///   nearly every vCPU thread queued on QEMU's global lock (seen: 32 vCPUs
///   on 2 host CPUs, 1 boot in 10, after "sched_clock: Marking stable", 29
///   of 32 vCPU threads waiting on the lock); a 2-vCPU one running a
///   nested KVM guest with one CPU's timers never firing and the other
///   stuck in KVM (RCU stall, then "soft lockup - CPU#0 stuck for 49s"
///   rising; 1 run in 11 of tests/nested_kvm.rs).
/// - A guest that reset itself before writing its results, without a
///   panic ([`qemu::ExitCause::Reset`]): vmscale's init never reboots,
///   and a kernel's own reboot or panic prints on the console first.
///
/// A kernel that hangs or resets by itself does so twice and fails.
fn boot_again_if_stalled(
    session: &Session,
    p: &Prepared,
    round: u32,
    dir: &Path,
    on_marker: &mut dyn FnMut(&Marker),
) -> Result<Booted> {
    let first = boot::boot(session, p, (round, None), dir, on_marker)?;
    // Why, for a person, and the cause in a word or two for the record.
    let (why, cause) = match (&first.outcome.end, session.accel) {
        (End::NoInit(after), Accel::Tcg) => (
            format!("no init after {} s", after.as_secs()),
            "stalled: no init",
        ),
        (End::Wedged(why), Accel::Tcg) => (why.clone(), "stalled: wedged"),
        (End::Exited(code), _) if first.results.is_none() => {
            match qemu::ExitCause::of(*code, &dir.join(files::QEMU_STDERR)) {
                c @ qemu::ExitCause::Reset { triple_fault } => (
                    c.describe(),
                    if triple_fault {
                        "reset: triple fault"
                    } else {
                        "reset"
                    },
                ),
                _ => return Ok(first),
            }
        }
        _ => return Ok(first),
    };
    let stalled = dir.with_extension("stalled");
    std::fs::rename(dir, &stalled).map_err(|e| Error::io("cannot rename", dir, e))?;
    eprintln!(
        "vmscale guest: kernel {} ({}), round {round}: {why} under {} (console: {}); \
         booting it once more",
        p.kernel.release,
        p.label,
        session.accel.as_str().to_uppercase(),
        stalled.join(files::CONSOLE_LOG).display()
    );
    boot::boot(session, p, (round, Some(cause)), dir, on_marker)
}

/// The hung guest's vCPUs where QEMU could be asked (KVM), a line each,
/// and the file with all their registers; empty otherwise.
fn hang_registers(dir: &Path) -> String {
    let path = dir.join(files::QEMU_REGISTERS);
    let Ok(text) = std::fs::read_to_string(&path) else {
        return String::new();
    };
    let mut s = String::from("\nwhere its vCPUs were when stopped:\n");
    for l in qemu::registers_summary(&text) {
        s.push_str("  ");
        s.push_str(&l);
        s.push('\n');
    }
    s.push_str(&format!("  (all registers: {})", path.display()));
    s
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
fn judge(
    b: &Booted,
    p: &Prepared,
    round: u32,
    steps: usize,
    given: &GuestTopology,
) -> Result<Option<PathBuf>> {
    let who = format!("kernel {} ({}), round {round}", p.kernel.release, p.label);
    let fail = |why: String| {
        Err(Error::Failed(format!(
            "{who}: {why}\n{}  (console log: {}){}",
            tail_text(&b.outcome.tail),
            b.dir.join(files::CONSOLE_LOG).display(),
            hang_registers(&b.dir)
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
        End::NoInit(d) => {
            return fail(format!(
                "no init after {} s: stopped as hung in early boot (raise --timeout if \
                 this kernel boots slower)",
                d.as_secs()
            ));
        }
        End::Wedged(why) => return fail(format!("stopped as wedged: {why}")),
        End::Stopped | End::Exited(_) => {}
    }
    let Some(r) = &b.results else {
        let stderr = b.dir.join(files::QEMU_STDERR);
        let qemu_err = std::fs::read_to_string(&stderr).unwrap_or_default();
        let shown = qemu::stderr_worth_showing(&qemu_err).join("\n  ");
        let ended = match b.outcome.end {
            End::Exited(code) => format!(": {}", qemu::ExitCause::of(code, &stderr).describe()),
            _ => String::new(),
        };
        return fail(format!(
            "the guest wrote no results{ended}{}",
            if shown.is_empty() {
                String::new()
            } else {
                format!(" (QEMU: {shown})")
            }
        ));
    };
    if let Some(rel) = r
        .text(files::RELEASE)
        .filter(|rel| *rel != p.kernel.release)
    {
        return fail(format!(
            "the guest runs {rel}, not the {} the image names",
            p.kernel.release
        ));
    }
    if let Some(why) = r
        .text(files::SHAPE)
        .and_then(|shape| super::topology::mismatch(&shape, given))
    {
        return fail(why);
    }
    if let Some(s) = r.text(files::SETUP_STATUS).filter(|s| s != "0") {
        return fail(format!(
            "the setup lines failed (status {s}):\n  {}",
            r.tail(files::SETUP_LOG, 10).join("\n  ")
        ));
    }
    for k in 1..=steps {
        match r.step_status(k) {
            Some(0) => {}
            Some(rc) => {
                let err = r.tail(&files::step_err(k), 10);
                let cause = crate::kconfig::option_for_guest_error(&err.join("\n"))
                    .map(|o| format!(" (the kernel was built without CONFIG_{o})"))
                    .unwrap_or_default();
                return fail(format!(
                    "plan step {k} exited {rc} in the guest{cause}:\n  {}",
                    err.join("\n  ")
                ));
            }
            None => return fail(format!("plan step {k} did not finish")),
        }
    }
    Ok(r.store())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::decide::Rule;
    use crate::stats::rng::SplitMix64;

    /// How often the 95 % interval of the paired ratio B / A of two equal
    /// kernels covers 1 over `rounds` rounds, when every boot's log
    /// figure drifts by `drift` from the boot before (a linear trend) plus
    /// noise of standard deviation `sd`, the kernels booted as `order`
    /// says.
    fn coverage(order: fn(u32, usize) -> Vec<usize>, rounds: u32, drift: f64, sd: f64) -> f64 {
        let rule = Rule::fixed(0.10, 0.05, rounds as usize);
        let mut rng = SplitMix64::new(7 + rounds as u64);
        let trials = 4000;
        let mut covered = 0;
        for _ in 0..trials {
            let mut boot = 0.0;
            let logs: Vec<f64> = (1..=rounds)
                .map(|r| {
                    let mut v = [0.0; 2];
                    for k in order(r, 2) {
                        boot += 1.0;
                        v[k] = drift * boot + sd * rng.normal();
                    }
                    v[1] - v[0]
                })
                .collect();
            let d = rule.judge_logs(&logs).expect("two rounds or more");
            covered += usize::from(d.ci.0 <= 1.0 && 1.0 <= d.ci.1);
        }
        covered as f64 / trials as f64
    }

    #[test]
    fn alternating_the_order_keeps_a_drifting_host_out_of_the_ratio() {
        assert_eq!(boot_order(1, 3), [0, 1, 2]);
        assert_eq!(boot_order(2, 3), [2, 1, 0]);
        assert_eq!(boot_order(3, 2), [0, 1]);
        fn fixed(_: u32, k: usize) -> Vec<usize> {
            (0..k).collect()
        }
        // A drift of a quarter to once the boot noise a boot, 3 to 10
        // rounds.
        for drift in [0.005, 0.01, 0.02] {
            for rounds in [3, 4, 5, 6, 10] {
                let alternating = coverage(boot_order, rounds, drift, 0.02);
                let in_turn = coverage(fixed, rounds, drift, 0.02);
                println!(
                    "drift {drift} {rounds} rounds: covered {alternating:.3} alternating, \
                     {in_turn:.3} A B A B"
                );
                assert!(
                    alternating >= 0.94,
                    "{drift} {rounds} rounds: {alternating}"
                );
            }
        }
        // The simulation can tell: the fixed order misses.
        assert!(coverage(fixed, 6, 0.01, 0.02) < 0.90);
    }

    #[test]
    fn a_suite_step_gets_the_suite_s_allowance() {
        let one = derived_bound(1, 0, Accel::Kvm, 2);
        let suite = derived_bound(1, 1, Accel::Kvm, 2);
        assert_eq!(one, Duration::from_secs(60 + 600));
        assert_eq!(suite, Duration::from_secs(60 + 1800));
        assert_eq!(
            derived_bound(0, 0, Accel::Tcg, 32),
            Duration::from_secs(120 + 5 * 32 + 60)
        );
    }
}
