//! Knobs under attack and under stress: a planted journal never makes root
//! write elsewhere, `restore` needs root, runs killed at random moments
//! leave no knob changed and no process behind, and simultaneous runs with
//! different state directories take turns on the machine-wide knob lock.

use crate::common::*;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// Used by no other test (`--tune` sets compaction_proactiveness): the
/// kill test's knob, harmless for a moment on any machine.
const ZONE_RECLAIM: &str = "/proc/sys/vm/zone_reclaim_mode";
/// Used by no other test: the simultaneous runs' knob.
const WATERMARK: &str = "/proc/sys/vm/watermark_scale_factor";

/// Skips (outside CI) or fails (under CI) when the test cannot run here.
fn needs(ok: bool, what: &str) -> bool {
    if !ok {
        skip(&format!("this test needs {what}"));
    }
    ok
}

/// Root and the knob file `path`: runs, skips or (under CI) fails.
fn root_with(path: &str) -> bool {
    needs(
        is_root() && Path::new(path).exists(),
        &format!("root and {path}"),
    )
}

/// `n` values of `choices` other than the knob's original, comma-separated.
fn others(original: &str, choices: &[&str], n: usize) -> String {
    choices
        .iter()
        .filter(|v| **v != original)
        .take(n)
        .copied()
        .collect::<Vec<_>>()
        .join(",")
}

fn read_knob(path: &str) -> String {
    std::fs::read_to_string(path)
        .expect("read knob")
        .trim()
        .to_string()
}

/// vmscale with its own store and state directory.
fn vmscale(db: &Path, state: &Path, args: &[&str]) -> Command {
    vmscale_state(db, state, args)
}

/// A private state directory, as vmscale would create it.
fn private_dir(p: &Path) -> PathBuf {
    std::fs::create_dir_all(p).unwrap();
    std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o700)).unwrap();
    p.to_path_buf()
}

fn plant(state: &Path, name: &str, path: &Path, original: &str) {
    let j = serde_json::json!({
        "pid": 999_999_999u32,
        "started_at": "planted",
        "entries": [{"name": name, "path": path, "original": original}],
    });
    std::fs::write(state.join("knobs.journal"), j.to_string()).unwrap();
}

#[test]
fn planted_journal_is_refused_and_target_unchanged() {
    if !needs(is_root(), "root") {
        return;
    }
    let s = Scratch::new("planted");
    let victim = s.dir.join("victim");
    std::fs::write(&victim, "secret\n").unwrap();
    std::fs::set_permissions(&victim, std::fs::Permissions::from_mode(0o600)).unwrap();
    // A path that merely ends with the knob's path, and one that is a
    // symbolic link to the victim with the knob's path as its tail.
    let tail = s.dir.join("evil/proc/sys/vm/swappiness");
    std::fs::create_dir_all(tail.parent().unwrap()).unwrap();
    std::os::unix::fs::symlink(&victim, &tail).unwrap();
    let plain = s
        .dir
        .join("plain/sys/kernel/mm/transparent_hugepage/defrag");
    std::fs::create_dir_all(plain.parent().unwrap()).unwrap();
    std::fs::copy(&victim, &plain).unwrap();
    let state = private_dir(&s.dir.join("state"));
    for (name, path, original) in [("swappiness", &tail, "10"), ("thp_defrag", &plain, "never")] {
        plant(&state, name, path, original);
        let o = vmscale(&s.db(), &state, &["restore"]).output().unwrap();
        assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
        let err = stderr(&o);
        assert!(err.contains("refused journal entry"), "{err}");
        assert!(err.contains("not at this path"), "{err}");
        assert!(err.contains("/proc/sys/vm/swappiness") || err.contains("/sys/kernel"));
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "secret\n");
        assert_eq!(std::fs::read_to_string(&plain).unwrap(), "secret\n");
        assert!(state.join("knobs.journal").exists(), "refused journal kept");
    }
    // The same journal in a directory planted by `nobody` is not even read.
    let theirs = private_dir(&s.dir.join("nobody-state"));
    plant(&theirs, "swappiness", &tail, "10");
    std::os::unix::fs::chown(&theirs, Some(65534), Some(65534)).unwrap();
    let o = vmscale(&s.db(), &theirs, &["restore"]).output().unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("belongs to uid 65534"),
        "{}",
        stderr(&o)
    );
    // A world-writable one neither.
    std::os::unix::fs::chown(&theirs, Some(0), Some(0)).unwrap();
    std::fs::set_permissions(&theirs, std::fs::Permissions::from_mode(0o777)).unwrap();
    let o = vmscale(&s.db(), &theirs, &["restore"]).output().unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("writable by other users"),
        "{}",
        stderr(&o)
    );
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "secret\n");
}

#[test]
fn restore_as_non_root_exits_2_naming_root() {
    if !needs(
        is_root() && Path::new("/usr/bin/setpriv").exists(),
        "root and setpriv",
    ) {
        return;
    }
    let s = Scratch::new("restore-nonroot");
    let o = Command::new("/usr/bin/setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
        .arg(env!("CARGO_BIN_EXE_vmscale"))
        .arg("restore")
        .env("VMSCALE_DB", s.db())
        .env("VMSCALE_STATE_DIR", s.dir.join("state"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("needs root"), "{}", stderr(&o));
}

/// Processes whose command line contains `marker` (forked workers keep
/// their parent's), zombies excepted.
fn alive_with(marker: &str) -> Vec<u32> {
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let cmdline = std::fs::read(e.path().join("cmdline")).unwrap_or_default();
        if String::from_utf8_lossy(&cmdline).contains(marker) {
            out.push(pid);
        }
    }
    out
}

/// Waits up to 5 s (a bound for a loaded machine, not a timing) for every
/// process carrying `marker` to end; describes those left.
fn orphans_after_5s(marker: &str) -> Vec<String> {
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let left = alive_with(marker);
        if left.is_empty() || Instant::now() > deadline {
            return left.into_iter().map(describe).collect();
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// A process as a failure message needs it: pid, state, parent, where it waits.
fn describe(pid: u32) -> String {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find(|l| l.starts_with(name))
            .map(|l| l[name.len()..].trim().to_string())
            .unwrap_or_default()
    };
    let wchan = std::fs::read_to_string(format!("/proc/{pid}/wchan")).unwrap_or_default();
    format!(
        "pid {pid} state {} ppid {} wchan {wchan}",
        field("State:"),
        field("PPid:")
    )
}

/// A small pseudo-random sequence (no dependency needed for kill times).
struct Lcg(u64);

impl Lcg {
    fn below(&mut self, n: u64) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 33) % n
    }
}

struct Killed(Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn fifty_sigkills_leave_no_knob_changed_and_no_orphan() {
    let _turn = machine_turn();
    if !root_with(ZONE_RECLAIM) {
        return;
    }
    let s = Scratch::new("sigkill50");
    let state = s.dir.join("state");
    let original = read_knob(ZONE_RECLAIM);
    let values = others(&original, &["0", "1", "2"], 2);
    let spec = format!("zone_reclaim={values}");
    let seed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos() as u64;
    let mut rng = Lcg(seed);
    let mut orphans = Vec::new();
    for i in 0..50 {
        let marker = format!("kill50-{}-{i}", std::process::id());
        let child = vmscale(
            &s.db(),
            &state,
            &[
                "run", "pft", "--mode", "process", "--tasks", "2", "--size", "2M", "--warmup", "0",
                "--reps", "100000", "--label", &marker, "--knob", &spec,
            ],
        )
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
        let mut run = Killed(child);
        std::thread::sleep(Duration::from_millis(rng.below(400)));
        run.0.kill().unwrap();
        run.0.wait().unwrap();
        orphans.extend(orphans_after_5s(&marker));
        // Every other kill is repaired by `restore`, the rest by the next run.
        if i % 2 == 1 {
            let o = vmscale(&s.db(), &state, &["restore"]).output().unwrap();
            assert!(o.status.success(), "{}", stderr(&o));
            assert_eq!(read_knob(ZONE_RECLAIM), original, "after kill {i}");
        }
    }
    let o = vmscale(&s.db(), &state, &["restore"]).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(read_knob(ZONE_RECLAIM), original);
    assert!(orphans.is_empty(), "alive 5 s after SIGKILL: {orphans:?}");
    // Every killed run that got as far as the store is listed incomplete.
    let listed = json(
        &vmscale(&s.db(), &state, &["list", "--json"])
            .output()
            .unwrap(),
    );
    let runs = listed.as_array().unwrap();
    assert!(!runs.is_empty(), "no kill came after the run was stored");
    for r in runs {
        assert_eq!(r["status"], "incomplete", "{r}");
    }
}

#[test]
fn sixteen_runs_with_different_state_dirs_take_turns() {
    let _turn = machine_turn();
    if !root_with(WATERMARK) {
        return;
    }
    let s = Scratch::new("sixteen");
    let original = read_knob(WATERMARK);
    let values = others(&original, &["11", "12", "13"], 2);
    let spec = format!("watermark_scale_factor={values}");
    let runs: Vec<(Child, PathBuf)> = (0..16)
        .map(|i| {
            let db = s.dir.join(format!("{i}.db"));
            let child = vmscale(
                &db,
                &s.dir.join(format!("state-{i}")),
                &[
                    "run", "pft", "--tasks", "1", "--size", "1M", "--warmup", "0", "--reps", "1",
                    "--knob", &spec, "--json",
                ],
            )
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
            (child, db)
        })
        .collect();
    for (child, _) in runs {
        let o = child.wait_with_output().unwrap();
        let shown = json(&o);
        // Had another run's change been under way, this run would have
        // found a changed value and recorded it as the original.
        assert_eq!(
            shown["meta"]["knobs"]["original"]["watermark_scale_factor"],
            original.as_str(),
            "{}",
            stderr(&o)
        );
    }
    assert_eq!(read_knob(WATERMARK), original);
}

#[test]
fn no_wait_is_refused_while_another_run_holds_the_lock() {
    let _turn = machine_turn();
    if !root_with(WATERMARK) {
        return;
    }
    let s = Scratch::new("nowait");
    let original = read_knob(WATERMARK);
    let other = others(&original, &["14", "15"], 1);
    let spec = format!("watermark_scale_factor={other}");
    let long = vmscale(
        &s.db(),
        &s.dir.join("a"),
        &[
            "run", "pft", "--tasks", "1", "--size", "2M", "--warmup", "0", "--reps", "100000",
            "--knob", &spec,
        ],
    )
    .stdout(Stdio::null())
    .stderr(Stdio::null())
    .spawn()
    .unwrap();
    let mut long = Killed(long);
    let deadline = Instant::now() + Duration::from_secs(60);
    while read_knob(WATERMARK) != other {
        assert!(long.0.try_wait().unwrap().is_none(), "the long run ended");
        assert!(Instant::now() < deadline, "the long run never set the knob");
        std::thread::sleep(Duration::from_millis(5));
    }
    let o = vmscale(
        &s.dir.join("b.db"),
        &s.dir.join("b"),
        &[
            "run",
            "pft",
            "--tasks",
            "1",
            "--size",
            "1M",
            "--reps",
            "1",
            "--knob",
            &spec,
            "--no-wait",
        ],
    )
    .output()
    .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("holds the knob lock"), "{}", stderr(&o));
    let o = vmscale(&s.db(), &s.dir.join("b"), &["restore", "--no-wait"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    Command::new("kill")
        .args(["-INT", &long.0.id().to_string()])
        .status()
        .unwrap();
    long.0.wait().unwrap();
    assert_eq!(read_knob(WATERMARK), original);
}

/// Processes whose argv is exactly `argv`.
fn alive_exact(argv: &[&str]) -> Vec<u32> {
    let want: Vec<u8> = argv
        .iter()
        .flat_map(|a| [a.as_bytes(), b"\0"].concat())
        .collect();
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| {
            let pid = e.file_name().to_string_lossy().parse::<u32>().ok()?;
            (std::fs::read(e.path().join("cmdline")).ok()? == want).then_some(pid)
        })
        .collect()
}

#[test]
fn run_cmd_children_die_with_vmscale() {
    let s = Scratch::new("cmd-orphan");
    let marker = format!("cmdorphan{}", std::process::id());
    // The shell starts a background child, which a plain kill of the shell
    // would leave behind.
    // Sleep lengths no other test or engineer's copy of this test uses.
    let (a, b) = (
        (100_000 + 2 * std::process::id()).to_string(),
        (100_001 + 2 * std::process::id()).to_string(),
    );
    let script = format!("sleep {a} & sleep {b}; : {marker}");
    let child = Command::new(env!("CARGO_BIN_EXE_vmscale"))
        .args([
            "run", "cmd", "--warmup", "0", "--reps", "1", "--", "sh", "-c", &script,
        ])
        .env("VMSCALE_DB", s.db())
        .env("VMSCALE_STATE_DIR", s.dir.join("state"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut run = Killed(child);
    let deadline = Instant::now() + Duration::from_secs(30);
    while alive_exact(&["sleep", &a]).is_empty() || alive_exact(&["sleep", &b]).is_empty() {
        assert!(Instant::now() < deadline, "the command never started");
        std::thread::sleep(Duration::from_millis(10));
    }
    run.0.kill().unwrap();
    run.0.wait().unwrap();
    let left = orphans_after_5s(&marker);
    assert!(
        left.is_empty(),
        "the shell is alive 5 s after SIGKILL: {left:?}"
    );
    let sleepers: Vec<String> = [alive_exact(&["sleep", &a]), alive_exact(&["sleep", &b])]
        .concat()
        .into_iter()
        .map(describe)
        .collect();
    assert!(sleepers.is_empty(), "alive 5 s after SIGKILL: {sleepers:?}");
}
