//! One guest's life as its serial console shows it: QEMU started in its
//! own process group (killed with vmscale, as `run cmd` does), each
//! console line kept in a log and the last 40 in memory, init's markers
//! passed on for progress, and the guest stopped at a bound, at a panic,
//! when its kernel reports a CPU stuck, or when vmscale is asked to stop.

use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::Command;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use super::init::{Marker, marker};
use crate::error::{Error, Result};
use crate::exec::{group::Group, signals};

/// Console lines shown when a guest fails.
pub const TAIL: usize = 40;

/// How a guest ended.
#[derive(Debug, Clone, PartialEq)]
pub enum End {
    /// QEMU exited by itself (the guest powered off, or QEMU failed).
    Exited(Option<i32>),
    /// The kernel panicked.
    Panicked,
    /// Still running at the bound: stopped.
    TimedOut(Duration),
    /// Init printed no marker by the boot bound (`Watch::to_init`): stopped
    /// as hung in early boot.
    NoInit(Duration),
    /// Stopped as wedged, and why: the kernel's soft-lockup watchdog
    /// reported a CPU stuck for at least [`WEDGED`], or a console with a
    /// heartbeat was silent for `Watch::silence`. Such a guest does not
    /// come back within any bound worth waiting for.
    Wedged(String),
    /// vmscale got this signal: stopped.
    Interrupted(i32),
    /// Stopped on purpose once the wanted marker came (the probe; a boot
    /// once its results are written).
    Stopped,
}

/// A guest's end and what its console said last.
#[derive(Debug)]
pub struct Outcome {
    pub end: End,
    pub tail: Vec<String>,
    pub elapsed: Duration,
    /// Whether the console printed anything at all.
    pub spoke: bool,
    /// The kernel's panic line, which a long trace may push out of `tail`.
    pub panic: Option<String>,
}

/// What to watch for.
pub struct Watch<'a> {
    pub bound: Duration,
    /// A guest whose init has printed no marker this long after the start
    /// is stopped as hung in boot, without waiting for the plan's bound.
    pub to_init: Option<Duration>,
    /// A guest whose init has spoken and whose console then stays silent
    /// this long is stopped as wedged (for a guest with a heartbeat).
    pub silence: Option<Duration>,
    /// The console log written as lines come.
    pub log: &'a Path,
    /// Stop the guest when this marker comes.
    pub stop_at: Option<Marker>,
    pub on_marker: &'a mut dyn FnMut(&Marker),
    /// Called while QEMU still runs, before a guest that hung (no init by
    /// its bound, wedged, or still running at the bound) is stopped: what
    /// only a live QEMU can tell (its vCPUs' registers) is kept then.
    pub on_hang: &'a mut dyn FnMut(),
}

const PANIC: &str = "Kernel panic - not syncing";
/// How long the soft-lockup watchdog must have seen one CPU stuck before
/// the guest counts as wedged: the watchdog's threshold is 20 s and it
/// repeats its report every ~25–30 s (seen: 49, 75, 104, 130, 164 s), so
/// this is its second or third report, well past a host that only
/// descheduled a vCPU for a while.
pub const WEDGED: Duration = Duration::from_secs(60);

/// The seconds of a soft-lockup report ("watchdog: BUG: soft lockup -
/// CPU#0 stuck for 49s! [comm:pid]").
fn stuck_for(line: &str) -> Option<u64> {
    let (_, rest) = line.split_once("soft lockup - CPU#")?;
    let (_, rest) = rest.split_once(" stuck for ")?;
    rest.split_once("s!")?.0.parse().ok()
}
/// After a panic QEMU exits by itself (panic=-1, -no-reboot); this long at
/// most.
const AFTER_PANIC: Duration = Duration::from_secs(5);

/// Runs `cmd` to its end; `started` runs once QEMU is up (KVM pinning),
/// and its error stops the guest.
pub fn supervise(
    mut cmd: Command,
    watch: Watch,
    started: impl FnOnce() -> Result<()>,
) -> Result<Outcome> {
    signals::install();
    let begun = Instant::now();
    let (mut child, group) = Group::spawn(&mut cmd)
        .map_err(|e| Error::Refused(format!("cannot start {}: {e}", super::qemu::QEMU)))?;
    let stdout = child.stdout.take();
    let log =
        std::fs::File::create(watch.log).map_err(|e| Error::io("cannot create", watch.log, e))?;
    let (tx, rx) = mpsc::channel::<String>();
    let reader = std::thread::spawn(move || {
        let Some(out) = stdout else { return };
        let mut log = std::io::BufWriter::new(log);
        let mut r = BufReader::new(out);
        let mut buf = Vec::new();
        while r.read_until(b'\n', &mut buf).is_ok_and(|n| n > 0) {
            let line = String::from_utf8_lossy(&buf)
                .trim_end_matches(['\r', '\n'])
                .to_string();
            let _ = writeln!(log, "{line}");
            let _ = log.flush();
            if tx.send(line).is_err() {
                break;
            }
            buf.clear();
        }
    });
    if let Err(e) = started() {
        drop(group);
        let _ = child.wait();
        let _ = reader.join();
        return Err(e);
    }
    let mut tail: VecDeque<String> = VecDeque::with_capacity(TAIL);
    let mut deadline = begun + watch.bound;
    let mut panic: Option<String> = None;
    let mut spoke = false;
    let mut init_seen = false;
    let mut last_line = begun;
    let mut take = |line: String, tail: &mut VecDeque<String>| -> Option<Marker> {
        spoke = true;
        let m = marker(&line);
        if m != Some(Marker::Alive) {
            if tail.len() == TAIL {
                tail.pop_front();
            }
            tail.push_back(line);
        }
        m
    };
    // QEMU's exit status once seen, and when: its last console lines are
    // still read (for at most a second) before deciding.
    let mut exited: Option<(Option<i32>, Instant)> = None;
    let mut closed = false;
    let end = loop {
        match rx.recv_timeout(Duration::from_millis(100)) {
            Ok(line) => {
                if line.contains(PANIC) && panic.is_none() {
                    panic = Some(line.trim().to_string());
                    deadline = deadline.min(Instant::now() + AFTER_PANIC);
                }
                last_line = Instant::now();
                let wedged = stuck_for(&line)
                    .is_some_and(|s| s >= WEDGED.as_secs())
                    .then(|| format!("its kernel reported \"{}\"", line.trim()));
                if let Some(m) = take(line, &mut tail) {
                    init_seen = true;
                    (watch.on_marker)(&m);
                    if watch.stop_at.as_ref() == Some(&m) {
                        break End::Stopped;
                    }
                }
                if let Some(why) = wedged {
                    break End::Wedged(why);
                }
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                closed = true;
                // QEMU closes its console as it exits: its exit is seen
                // within a few ms (each boot waited for it).
                std::thread::sleep(Duration::from_millis(2));
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {}
        }
        if let Some(sig) = signals::caught() {
            break End::Interrupted(sig);
        }
        if exited.is_none()
            && let Ok(Some(status)) = child.try_wait()
        {
            exited = Some((status.code(), Instant::now()));
        }
        if let Some((code, at)) = exited
            && (closed || at.elapsed() > Duration::from_secs(1))
        {
            break if panic.is_some() {
                End::Panicked
            } else {
                End::Exited(code)
            };
        }
        if let Some(b) = watch
            .to_init
            .filter(|b| !init_seen && begun.elapsed() >= *b)
        {
            break End::NoInit(b);
        }
        if let Some(s) = watch
            .silence
            .filter(|s| init_seen && last_line.elapsed() >= *s)
        {
            break End::Wedged(format!(
                "its console was silent for {} s after init",
                s.as_secs()
            ));
        }
        if Instant::now() >= deadline {
            break if panic.is_some() {
                End::Panicked
            } else {
                End::TimedOut(watch.bound)
            };
        }
    };
    if matches!(end, End::TimedOut(_) | End::NoInit(_) | End::Wedged(_)) && exited.is_none() {
        (watch.on_hang)();
    }
    drop(group);
    let _ = child.wait();
    let _ = reader.join();
    while let Ok(line) = rx.try_recv() {
        take(line, &mut tail);
    }
    Ok(Outcome {
        end,
        tail: tail.into_iter().collect(),
        elapsed: begun.elapsed(),
        spoke,
        panic,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn watch_sh(script: &str, bound: Duration, stop_at: Option<Marker>) -> (Outcome, Vec<Marker>) {
        watch_sh_bounded(script, bound, (None, None), stop_at)
    }

    /// `(to_init, silence)` as in [`Watch`].
    fn watch_sh_bounded(
        script: &str,
        bound: Duration,
        (to_init, silence): (Option<Duration>, Option<Duration>),
        stop_at: Option<Marker>,
    ) -> (Outcome, Vec<Marker>) {
        let tmp = tempfile::tempdir().unwrap();
        let mut c = Command::new("sh");
        c.args(["-c", script])
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::piped());
        let mut seen = Vec::new();
        let mut on = |m: &Marker| seen.push(m.clone());
        let out = supervise(
            c,
            Watch {
                bound,
                to_init,
                silence,
                log: &tmp.path().join("console.log"),
                stop_at,
                on_marker: &mut on,
                on_hang: &mut || {},
            },
            || Ok(()),
        )
        .unwrap();
        let log = std::fs::read_to_string(tmp.path().join("console.log")).unwrap();
        assert!(log.lines().count() >= out.tail.len());
        (out, seen)
    }

    #[test]
    fn markers_the_tail_and_the_end() {
        let (out, seen) = watch_sh(
            "for i in $(seq 1 60); do echo line $i; done; echo 'vmscale-guest: step 1/1 exit 0'",
            Duration::from_secs(20),
            None,
        );
        assert_eq!(out.end, End::Exited(Some(0)));
        assert_eq!(out.tail.len(), TAIL);
        assert_eq!(out.tail[0], "line 22"); // 61 lines, the last 40
        assert_eq!(seen, vec![Marker::StepExit(1, 1, 0)]);
    }

    #[test]
    fn a_cpu_stuck_past_the_bound_wedges_the_guest_and_a_short_stall_does_not() {
        let first = "[   96.667042] watchdog: BUG: soft lockup - CPU#0 stuck for 49s! [qemu:138]";
        let second = "[  124.664805] watchdog: BUG: soft lockup - CPU#0 stuck for 75s! [qemu:138]";
        assert_eq!(stuck_for(first), Some(49));
        assert_eq!(
            stuck_for("rcu: INFO: rcu_preempt self-detected stall on CPU"),
            None
        );
        let (out, _) = watch_sh(
            &format!(
                "echo '{first}'; echo 'vmscale-guest: step 1/1 start'; echo '{second}'; sleep 30"
            ),
            Duration::from_secs(60),
            None,
        );
        assert_eq!(
            out.end,
            End::Wedged(format!("its kernel reported \"{}\"", second.trim()))
        );
        let (out, _) = watch_sh(
            &format!("echo '{first}'; echo 'vmscale-guest: step 1/1 exit 0'"),
            Duration::from_secs(20),
            None,
        );
        assert_eq!(out.end, End::Exited(Some(0)));
    }

    #[test]
    fn a_console_silent_after_init_wedges_the_guest_and_a_heartbeat_keeps_it() {
        let silence = Some(Duration::from_secs(1));
        let (out, _) = watch_sh_bounded(
            "echo 'vmscale-guest: step 1/1 start'; sleep 30",
            Duration::from_secs(60),
            (None, silence),
            None,
        );
        assert_eq!(
            out.end,
            End::Wedged("its console was silent for 1 s after init".into())
        );
        // Heartbeats every 0.3 s for 3 s: alive, and kept out of the tail.
        let (out, seen) = watch_sh_bounded(
            "echo 'vmscale-guest: step 1/1 start'; \
             for i in 1 2 3 4 5 6 7 8 9 10; do sleep 0.3; echo 'vmscale-guest: alive'; done; \
             echo 'vmscale-guest: step 1/1 exit 0'",
            Duration::from_secs(60),
            (None, silence),
            None,
        );
        assert_eq!(out.end, End::Exited(Some(0)));
        assert_eq!(seen.iter().filter(|m| **m == Marker::Alive).count(), 10);
        assert_eq!(out.tail.len(), 2, "{:?}", out.tail);
        // Before init only the boot bound applies.
        let (out, _) = watch_sh_bounded(
            "sleep 2; echo 'vmscale-guest: step 1/1 exit 0'",
            Duration::from_secs(60),
            (None, silence),
            None,
        );
        assert_eq!(out.end, End::Exited(Some(0)));
    }

    #[test]
    fn a_kernel_that_never_reaches_init_is_stopped_at_the_boot_bound() {
        // Speaks (an early boot line) but never prints init's marker: stopped
        // at the boot bound, not at the plan's.
        let (out, seen) = watch_sh_bounded(
            "echo 'RETBleed: WARNING'; sleep 30",
            Duration::from_secs(60),
            (Some(Duration::from_millis(300)), None),
            None,
        );
        assert_eq!(out.end, End::NoInit(Duration::from_millis(300)));
        assert!(out.spoke && seen.is_empty());
        // Once init has spoken, only the plan's bound applies.
        let (out, seen) = watch_sh_bounded(
            "echo 'vmscale-guest: step 1/1 start'; sleep 1; echo 'vmscale-guest: step 1/1 exit 0'",
            Duration::from_secs(20),
            (Some(Duration::from_millis(300)), None),
            None,
        );
        assert_eq!(out.end, End::Exited(Some(0)), "{seen:?}");
    }

    #[test]
    fn a_silent_guest_is_stopped_at_the_bound_and_a_panic_is_seen() {
        let (out, _) = watch_sh("sleep 30", Duration::from_millis(300), None);
        assert!(matches!(out.end, End::TimedOut(_)), "{:?}", out.end);
        assert!(!out.spoke);
        assert!(out.elapsed < Duration::from_secs(10));
        let (out, _) = watch_sh(
            "echo 'Kernel panic - not syncing: VFS: Unable to mount root fs'; exit 0",
            Duration::from_secs(20),
            None,
        );
        assert_eq!(out.end, End::Panicked);
        let (out, seen) = watch_sh(
            "echo 'vmscale-guest: probe ok'; sleep 30",
            Duration::from_secs(20),
            Some(Marker::ProbeOk),
        );
        assert_eq!(out.end, End::Stopped);
        assert_eq!(seen, vec![Marker::ProbeOk]);
    }
}
