//! The set-up room on the live machine, as root: each resource made, used
//! and undone; refusals before anything is made; a holder of a page-cache
//! file system, a memory cgroup, a swap device and huge pages killed with
//! SIGKILL, after which `vmscale restore` (or the next start) leaves no
//! mount, loop device, cgroup, swap device or file behind; and runs killed
//! at random moments while making them, likewise.
//!
//! The holder is this test binary run again (`helper`, ignored unless
//! asked for), so it links the library as a run does.

use crate::common::room::*;
use crate::common::turn::Turn;
use crate::common::*;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdout, Command, Stdio};
use std::sync::Mutex;
use std::time::Duration;
use vmscale::error::Error;
use vmscale::setup::{self, Needs, Setup};

const MIB: u64 = 1 << 20;

/// The helper's name in the test binary (tests/all.rs), for `--exact`.
const HELPER: &str = "setup_room::helper";

/// The tests share swap, nr_hugepages and the cgroup trees: one at a time.
static ONE: Mutex<()> = Mutex::new(());

fn serial() -> (Turn, std::sync::MutexGuard<'static, ()>) {
    let turn = machine_turn();
    (turn, ONE.lock().unwrap_or_else(|p| p.into_inner()))
}

fn root() -> bool {
    if !is_root() {
        skip("the set-up room needs root");
        return false;
    }
    true
}

/// A sparse file of `bytes` at `path`.
fn sparse(path: &Path, bytes: u64) {
    std::fs::File::create(path).unwrap().set_len(bytes).unwrap();
}

/// A scratch directory, its private state directory, what the machine
/// holds before, and a set-up in that state directory.
fn begin(tag: &str) -> (Scratch, PathBuf, Left, Setup) {
    let s = Scratch::new(tag);
    let state = private_state(&s.dir);
    let before = left(&state, std::process::id());
    let setup = Setup::new_in(&state).unwrap();
    (s, state, before, setup)
}

/// Under CI the machine must have zram: a swap test that got a file
/// instead fails there.
fn expect_zram(kind: &str) {
    if kind != "zram" {
        skip("zram is missing here (swap fell back to a file)");
    }
}

#[test]
fn page_cache_fs_is_made_used_and_undone() {
    let _one = serial();
    if !root() {
        return;
    }
    let (_s, state, before, mut setup) = begin("setup-fs");
    let fs = setup.page_cache_fs(32 * MIB).unwrap();
    assert_eq!(mounts_below(&state).len(), 2, "the tmpfs and the ext4");
    assert_eq!(
        loops_below(&state).len(),
        2,
        "sysfs and losetup see the loop"
    );
    let df = Command::new("stat")
        .args(["-f", "-c", "%T"])
        .arg(&fs)
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&df.stdout).trim(), "ext2/ext3");
    // A sparse file larger than the image reads as zeros, all cached.
    sparse(&fs.join("sparse"), 256 * MIB);
    let bytes = std::fs::read(fs.join("sparse")).unwrap();
    assert_eq!(bytes.len() as u64, 256 * MIB);
    assert!(bytes.iter().all(|b| *b == 0));
    std::fs::write(fs.join("written"), vec![7u8; MIB as usize]).unwrap();
    setup.finish().unwrap();
    assert_clean(&state, std::process::id(), &before);
}

#[test]
fn memcg_limits_a_process_and_is_undone() {
    let _one = serial();
    if !root() {
        return;
    }
    let (_s, state, before, mut setup) = begin("setup-memcg");
    let fs = setup.page_cache_fs(16 * MIB).unwrap();
    let file = fs.join("sparse");
    sparse(&file, 128 * MIB);
    let cg = setup.memcg(16 * MIB).unwrap();
    assert!(cg.path().is_dir());
    // Reading 128 MiB of page cache inside a 16 MiB cgroup hits the limit.
    let script = format!(
        "echo $$ > {}/cgroup.procs && exec dd if={} of=/dev/null bs=1M",
        cg.path().display(),
        file.display()
    );
    let out = Command::new("sh").args(["-c", &script]).output().unwrap();
    assert!(out.status.success(), "{out:?}");
    let stat = cg.stat().unwrap();
    assert!(
        stat.contains_key("file") && stat.contains_key("anon"),
        "{stat:?}"
    );
    let events = cg.events().unwrap();
    assert!(
        events["max"] > 0,
        "128 MiB read under a 16 MiB limit: {events:?}"
    );
    // A process still inside is moved out, not killed, when undone.
    let mut sleeper = Command::new("sleep").arg("30").spawn().unwrap();
    cg.add_pid(sleeper.id()).unwrap();
    assert!(read(cg.path().join("cgroup.procs")).contains(&sleeper.id().to_string()));
    setup.finish().unwrap();
    assert!(!cg.path().exists());
    assert!(
        sleeper.try_wait().unwrap().is_none(),
        "the process lives on"
    );
    sleeper.kill().unwrap();
    sleeper.wait().unwrap();
    assert_clean(&state, std::process::id(), &before);
}

#[test]
fn swap_device_and_swap_file_are_made_and_undone() {
    let _one = serial();
    if !root() {
        return;
    }
    let (_s, state, before, mut setup) = begin("setup-swap");
    let zram = setup.swap(16 * MIB).unwrap();
    let file = setup.swap_file(8 * MIB).unwrap();
    assert_eq!(file.kind, "file");
    assert!(file.device.starts_with(&state));
    let on = swaps();
    for d in [&zram.device, &file.device] {
        assert!(on.contains(&d.display().to_string()), "{d:?} not in {on:?}");
    }
    setup.finish().unwrap();
    assert!(!file.device.exists());
    assert_clean(&state, std::process::id(), &before);
    expect_zram(zram.kind);
}

#[test]
fn huge_pages_are_raised_and_restored() {
    let _one = serial();
    if !root() {
        return;
    }
    let s = Scratch::new("setup-huge");
    let state = private_state(&s.dir);
    let original = hugepages();
    let mut setup = Setup::new_in(&state).unwrap();
    setup.hugetlb_pages(2).unwrap();
    assert_eq!(hugepages(), original + 2);
    drop(setup); // as on an error: drop undoes too
    assert_eq!(hugepages(), original);
}

#[test]
fn refusals_come_before_anything_is_made() {
    let _one = serial();
    if !root() {
        return;
    }
    let (_s, state, before, mut setup) = begin("setup-refuse");
    let exit2 = |e: Error, says: &str| {
        assert!(
            matches!(e, Error::Input(_) | Error::Refused(_)),
            "not exit 2: {e:?}"
        );
        assert!(e.to_string().contains(says), "{e}");
    };
    exit2(setup.page_cache_fs(MIB).unwrap_err(), "too small");
    exit2(setup.page_cache_fs(1 << 50).unwrap_err(), "MemAvailable");
    exit2(setup.memcg(4096).unwrap_err(), "out of range");
    exit2(setup.memcg(1 << 50).unwrap_err(), "MemTotal");
    exit2(setup.swap(1 << 50).unwrap_err(), "MemAvailable");
    exit2(setup.swap_file(1 << 50).unwrap_err(), "does not fit");
    exit2(setup.hugetlb_pages(1 << 40).unwrap_err(), "MemAvailable");
    exit2(setup.hugetlb_pages(0).unwrap_err(), "0 huge pages");
    let together = Needs {
        page_cache_bytes: Some(1 << 30),
        swap_bytes: Some(1 << 40),
        ..Needs::default()
    };
    exit2(setup::check(&together).unwrap_err(), "MemAvailable");
    // Nothing was made: no room, only the journal and its lock.
    let files = left(&state, std::process::id()).files;
    assert_eq!(files.len(), 2, "{files:?}");
    assert!(
        files
            .iter()
            .all(|f| f.ends_with(".journal") || f.ends_with(".lock"))
    );
    setup.finish().unwrap();
    assert_clean(&state, std::process::id(), &before);
}

#[test]
fn without_root_the_set_up_is_refused_naming_root() {
    let _one = serial();
    if !root() {
        return;
    }
    let s = Scratch::new("setup-nobody");
    let out = Command::new("setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
        .arg(std::env::current_exe().unwrap())
        .args(["--ignored", "--exact", HELPER, "--nocapture"])
        .env("VMSCALE_SETUP_HELPER", "new")
        .env("VMSCALE_STATE_DIR", s.dir.join("state"))
        .output()
        .unwrap();
    let text = stdout(&out);
    assert!(
        text.contains("refused (exit 2):") && text.contains("needs root"),
        "{text}{}",
        stderr(&out)
    );
    assert!(!s.dir.join("state").exists(), "nothing made");
}

/// The helper the kill tests start: VMSCALE_SETUP_HELPER says what to do.
/// `hold`: make a page-cache file system (a file held open in it), a
/// memory cgroup with a process left in it, a zram swap device and huge
/// pages, print them and wait to be killed. `churn`: make and undo such
/// set-ups over and over. `new`: try Setup::new and print the refusal.
#[test]
#[ignore = "run by the kill tests as a separate process"]
fn helper() {
    let Ok(mode) = std::env::var("VMSCALE_SETUP_HELPER") else {
        return;
    };
    let state = PathBuf::from(std::env::var("VMSCALE_STATE_DIR").unwrap());
    match mode.as_str() {
        "new" => match Setup::new_in(&state) {
            Err(e @ (Error::Input(_) | Error::Refused(_))) => println!("refused (exit 2): {e}"),
            Err(e) => println!("failed: {e}"),
            Ok(_) => println!("made a set-up"),
        },
        "hold" | "hold-forked" => {
            let mut setup = Setup::new_in(&state).unwrap();
            let fs = setup.page_cache_fs(24 * MIB).unwrap();
            let f = std::fs::File::create(fs.join("held")).unwrap();
            f.set_len(64 * MIB).unwrap();
            let cg = setup.memcg(32 * MIB).unwrap();
            let orphan = Command::new("sleep").arg("120").spawn().unwrap();
            cg.add_pid(orphan.id()).unwrap();
            let swap = setup.swap(16 * MIB).unwrap();
            setup.hugetlb_pages(1).unwrap();
            println!("orphan={}", orphan.id());
            println!("cgroup={}", cg.path().display());
            println!("swap={} {}", swap.kind, swap.device.display());
            if mode == "hold-forked" {
                // A worker as a run forks it: it inherits the set-up's lock
                // and outlives its parent's SIGKILL for a while, as workers
                // freeing swapped memory do (20-30 s seen).
                // SAFETY: the child only sleeps and exits.
                let worker = unsafe { libc::fork() };
                if worker == 0 {
                    std::thread::sleep(Duration::from_secs(3));
                    // SAFETY: leave the forked child at once.
                    unsafe { libc::_exit(0) };
                }
                println!("worker={worker}");
            }
            println!("ready");
            std::mem::forget(orphan);
            std::thread::sleep(Duration::from_secs(120));
            drop((f, setup));
        }
        "churn" => {
            println!("ready");
            // Each stage reached is announced, so the test can kill in
            // the middle of the next.
            for _ in 0..200 {
                let mut setup = Setup::new_in(&state).unwrap();
                println!("new");
                setup.page_cache_fs(16 * MIB).unwrap();
                println!("fs");
                setup.memcg(16 * MIB).unwrap();
                println!("memcg");
                setup.swap(8 * MIB).unwrap();
                println!("swap");
                setup.hugetlb_pages(1).unwrap();
                println!("huge");
                setup.finish().unwrap();
                println!("finish");
            }
        }
        m => panic!("unknown helper mode {m}"),
    }
}

/// Starts the helper in `mode` with state directory `state`; its stdout
/// lines up to "ready" and the rest of its stdout.
fn start_helper(mode: &str, state: &Path) -> (Child, Vec<String>, BufReader<ChildStdout>) {
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args(["--ignored", "--exact", HELPER, "--nocapture"])
        .env("VMSCALE_SETUP_HELPER", mode)
        .env("VMSCALE_STATE_DIR", state)
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let mut lines = Vec::new();
    let mut out = BufReader::new(child.stdout.take().unwrap());
    loop {
        let mut l = String::new();
        assert!(
            out.read_line(&mut l).unwrap() > 0,
            "helper ended: {lines:?}"
        );
        if l.trim() == "ready" {
            break;
        }
        lines.push(l.trim().to_string());
    }
    (child, lines, out)
}

/// On a failed assertion, kills the helper and undoes its set-up before
/// the scratch directory (which holds the journal) is removed, so a
/// failing test leaves nothing on the machine either.
struct UndoOnPanic<'a> {
    helper: u32,
    state: &'a Path,
    db: PathBuf,
}

impl Drop for UndoOnPanic<'_> {
    fn drop(&mut self) {
        if !std::thread::panicking() {
            return;
        }
        // SAFETY: kill(2) on our own child's pid.
        unsafe { libc::kill(self.helper as i32, libc::SIGKILL) };
        let _ = Command::new(env!("CARGO_BIN_EXE_vmscale"))
            .arg("restore")
            .env("VMSCALE_STATE_DIR", self.state)
            .env("VMSCALE_DB", &self.db)
            .output();
    }
}

fn sigkill(child: &mut Child) {
    // SAFETY: kill(2) on our own child's pid.
    assert_eq!(unsafe { libc::kill(child.id() as i32, libc::SIGKILL) }, 0);
    child.wait().unwrap();
}

/// vmscale `args` with this state directory and a private store.
fn vmscale_in(s: &Scratch, state: &Path, args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_vmscale"))
        .args(args)
        .env("VMSCALE_STATE_DIR", state)
        .env("VMSCALE_DB", s.db())
        .output()
        .unwrap()
}

/// Kills a holder of every resource (`mode` hold, or hold-forked: with a
/// forked worker that outlives it), checks they outlived it, then runs
/// `args` (restore, or any command: the start-up check) and checks that
/// nothing is left.
fn killed_holder_then(mode: &str, args: &[&str]) {
    let s = Scratch::new("setup-kill");
    let state = private_state(&s.dir);
    let before = left(&state, 0);
    let (mut child, lines, _out) = start_helper(mode, &state);
    let pid = child.id();
    let _undo = UndoOnPanic {
        helper: pid,
        state: &state,
        db: s.db(),
    };
    let value = |k: &str| {
        lines
            .iter()
            .find_map(|l| l.strip_prefix(&format!("{k}=")))
            .unwrap()
            .to_string()
    };
    let orphan: i32 = value("orphan").parse().unwrap();
    let swap = value("swap");
    let (kind, device) = swap.split_once(' ').unwrap();
    // A live run's set-up is not touched by restore (or a start).
    let early = vmscale_in(&s, &state, &["restore"]);
    assert!(early.status.success(), "{}", stderr(&early));
    assert!(
        stdout(&early).contains(&format!(
            "left alone: the set-up of running vmscale pid {pid}"
        )),
        "{}",
        stdout(&early)
    );
    assert_eq!(mounts_below(&state).len(), 2);
    sigkill(&mut child);
    let worker = lines.iter().find_map(|l| l.strip_prefix("worker="));
    // Running or exiting, not a zombie waiting to be reaped by init.
    let worker_alive = || {
        worker.is_some_and(|w| {
            std::fs::read_to_string(format!("/proc/{w}/stat")).is_ok_and(|st| {
                st.rsplit_once(')')
                    .is_some_and(|(_, r)| !r.trim_start().starts_with('Z'))
            })
        })
    };
    assert_eq!(
        worker.is_some(),
        worker_alive(),
        "the worker outlives its parent"
    );
    // All of it outlives the kill.
    assert_eq!(mounts_below(&state).len(), 2);
    assert_eq!(cgroups_of(pid), vec![PathBuf::from(value("cgroup"))]);
    assert!(swaps().contains(&device.to_string()));
    assert_eq!(hugepages(), before.hugepages + 1);
    let out = vmscale_in(&s, &state, args);
    let said = format!("{}{}", stdout(&out), stderr(&out));
    if worker.is_some() {
        // Waited for, said so, and gone before the set-up was undone.
        assert!(
            said.contains("waiting for them before undoing it"),
            "{said}"
        );
        assert!(!worker_alive(), "{said}");
    }
    for what in [
        "unmounted",
        "detached loop device",
        "removed cgroup",
        "swapped off",
    ] {
        assert!(said.contains(what), "'{what}' not in: {said}");
    }
    assert_clean(&state, pid, &before);
    // SAFETY: signal 0 only checks that the process exists.
    let orphan_lives = unsafe { libc::kill(orphan, 0) } == 0;
    // SAFETY: the helper's sleep, now orphaned, is ours to kill.
    unsafe { libc::kill(orphan, libc::SIGKILL) };
    assert!(
        orphan_lives,
        "the process left in the cgroup was moved, not killed"
    );
    expect_zram(kind);
}

#[test]
fn killed_holder_leaves_nothing_after_restore() {
    let _one = serial();
    if !root() {
        return;
    }
    killed_holder_then("hold", &["restore"]);
}

#[test]
fn killed_holder_leaves_nothing_after_the_next_start() {
    let _one = serial();
    if !root() {
        return;
    }
    killed_holder_then("hold", &["list"]);
}

/// The workers a run forks inherit its set-up's lock; killed with it, they
/// may take a while to exit. The next start waits for them, then undoes
/// everything (before, it took their lock for a live run's and left all).
#[test]
fn killed_holder_with_an_exiting_worker_leaves_nothing_after_the_next_start() {
    let _one = serial();
    if !root() {
        return;
    }
    killed_holder_then("hold-forked", &["list"]);
}

/// Reads the helper's stdout until `line`.
fn wait_for(out: &mut impl BufRead, line: &str) {
    let mut l = String::new();
    while l.trim() != line {
        l.clear();
        assert!(
            out.read_line(&mut l).unwrap() > 0,
            "helper ended before {line}"
        );
    }
}

#[test]
fn runs_killed_at_any_moment_leave_nothing() {
    let _one = serial();
    if !root() {
        return;
    }
    let s = Scratch::new("setup-churn");
    let state = private_state(&s.dir);
    let before = left(&state, 0);
    // Killed a moment after each stage of making and undoing a set-up was
    // reached, i.e. in the middle of the next; the page-cache file system
    // (the longest stage, ~200 ms here) also at several times into it.
    let kills = [
        ("new", 0),
        ("new", 30),
        ("new", 80),
        ("new", 150),
        ("fs", 0),
        ("fs", 2),
        ("memcg", 0),
        ("memcg", 3),
        ("swap", 0),
        ("swap", 1),
        ("huge", 0),
        ("finish", 0),
        ("finish", 40),
    ];
    for (stage, delay_ms) in kills {
        let (mut child, _, mut out) = start_helper("churn", &state);
        let pid = child.id();
        let _undo = UndoOnPanic {
            helper: pid,
            state: &state,
            db: s.db(),
        };
        wait_for(&mut out, stage);
        std::thread::sleep(Duration::from_millis(delay_ms));
        sigkill(&mut child);
        let restore = vmscale_in(&s, &state, &["restore"]);
        assert!(
            restore.status.success(),
            "killed {delay_ms} ms after {stage}: {}{}",
            stdout(&restore),
            stderr(&restore)
        );
        eprintln!(
            "killed {delay_ms} ms after {stage}; restore said:\n{}",
            stdout(&restore)
        );
        assert_clean(&state, pid, &before);
    }
}

/// A journal is data, not a licence: steps naming things that are not the
/// set-up's own are refused (exit 2), the things left alone, the journal
/// kept for a person to look at.
#[test]
fn planted_journals_are_refused_and_kept() {
    use vmscale::setup::journal::{self, Journal, Step};
    let _one = serial();
    if !root() {
        return;
    }
    let s = Scratch::new("setup-planted");
    let state = private_state(&s.dir);
    let victim = s.dir.join("vmscale-setup-victim");
    std::fs::create_dir(&victim).unwrap();
    let planted = [
        Step::Cgroup {
            path: victim.clone(),
        },
        Step::Controller {
            file: victim.join("cgroup.subtree_control"),
        },
        Step::SwapOn {
            device: PathBuf::from("/dev/vda"),
        },
    ];
    for step in planted {
        let mut j = Journal::create(&journal::setup_dir(&state)).unwrap();
        j.push(step.clone()).unwrap();
        let kept = j.path().to_path_buf();
        drop(j); // its run is gone
        let e = setup::recover_in(&state).unwrap_err();
        assert!(matches!(e, Error::Refused(_)), "{step:?}: {e:?}");
        assert!(e.to_string().contains("refused"), "{e}");
        assert!(kept.exists(), "{step:?}: the journal is kept");
        let out = vmscale_in(&s, &state, &["restore"]);
        assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
        std::fs::remove_file(&kept).unwrap();
        let _ = std::fs::remove_file(kept.with_extension("lock"));
    }
    assert!(victim.is_dir(), "the planted cgroup path was not removed");
}

/// A state directory reached through a symbolic link higher up (as
/// /var/run is /run) or given as a relative path: the journal names the
/// mounts as the kernel does, so they are found and undone.
#[test]
fn a_state_dir_behind_a_symbolic_link_is_undone_too() {
    let _one = serial();
    if !root() {
        return;
    }
    let s = Scratch::new("setup-link");
    let state = private_state(&s.dir);
    let link = s.dir.join("link");
    std::os::unix::fs::symlink(&s.dir, &link).unwrap();
    let before = left(&state, std::process::id());
    let mut setup = Setup::new_in(&link.join("state")).unwrap();
    let fs = setup.page_cache_fs(16 * MIB).unwrap();
    assert!(fs.starts_with(&state), "{} is not canonical", fs.display());
    assert_eq!(mounts_below(&state).len(), 2);
    setup.finish().unwrap();
    assert_clean(&state, std::process::id(), &before);
}

/// `vmscale run vms` killed with SIGKILL mid-sample in a swap, a memory
/// cgroup and a page-cache case: the next start (`vmscale list`, at once)
/// undoes its set-up, waiting for workers still exiting, and leaves no
/// swap device, zram device, loop device, mount or cgroup behind.
#[test]
fn killed_vms_runs_leave_nothing_after_the_next_start() {
    let _one = serial();
    if !root() {
        return;
    }
    for case in ["swap-w-seq", "lru-memcg", "lru-file-readonce"] {
        let s = Scratch::new("setup-vms-kill");
        let state = private_state(&s.dir);
        let before = left(&state, 0);
        let mut run = Command::new(env!("CARGO_BIN_EXE_vmscale"))
            .args(["run", "vms", "--case", case, "--max-time", "30s"])
            .env("VMSCALE_STATE_DIR", &state)
            .env("VMSCALE_DB", s.db())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let pid = run.id();
        let _undo = UndoOnPanic {
            helper: pid,
            state: &state,
            db: s.db(),
        };
        // Its set-up made (a journal), then well into a sample.
        let setup = state.join("setup");
        let started = std::time::Instant::now();
        while !std::fs::read_dir(&setup).is_ok_and(|mut d| {
            d.any(|e| e.is_ok_and(|e| e.file_name().to_string_lossy().ends_with(".journal")))
        }) {
            assert!(
                run.try_wait().unwrap().is_none(),
                "{case}: the run ended first"
            );
            assert!(
                started.elapsed() < Duration::from_secs(60),
                "{case}: no set-up"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        std::thread::sleep(Duration::from_millis(1500));
        assert!(
            run.try_wait().unwrap().is_none(),
            "{case}: the run ended first"
        );
        sigkill(&mut run);
        let out = vmscale_in(&s, &state, &["list"]);
        assert!(out.status.success(), "{case}: {}", stderr(&out));
        assert!(
            stderr(&out).contains(&format!("undid the set-up of run pid {pid}")),
            "{case}: {}",
            stderr(&out)
        );
        assert_clean(&state, pid, &before);
    }
}
