//! End-to-end: fork, churn, cmd and the NUMA patterns through the real
//! binary at small sizes. Counts are asserted, never timings.

use crate::common;
use crate::common::{Scratch, json, ok, stdout};

fn figures(v: &serde_json::Value, case: usize) -> &serde_json::Value {
    &v["cases"][case]["samples"][0]["data"]["figures"]
}

#[test]
fn fork_counts_every_fork() {
    let s = Scratch::new("fork");
    let v = json(&s.vmscale(&[
        "run", "fork", "--tasks", "1,2", "--size", "4M", "--forks", "7", "--touch", "3", "--reps",
        "1", "--warmup", "0", "--json",
    ]));
    assert_eq!(figures(&v, 0)["forks"], 7.0);
    assert_eq!(figures(&v, 1)["forks"], 14.0);
    assert_eq!(figures(&v, 0)["pages_populated"], 1024.0);
    // Each child writes 3 pages: at least 3 faults per fork.
    assert!(figures(&v, 0)["child_minflt"].as_f64().unwrap() >= 21.0);
}

#[test]
fn fork_over_a_shared_file() {
    let s = Scratch::new("forkfile");
    let dir = s.dir.to_string_lossy().to_string();
    let v = json(&s.vmscale(&[
        "run",
        "fork",
        "--tasks",
        "1",
        "--size",
        "1M",
        "--forks",
        "5",
        "--shared-file",
        "--file-dir",
        &dir,
        "--reps",
        "1",
        "--warmup",
        "0",
        "--json",
    ]));
    assert_eq!(figures(&v, 0)["forks"], 5.0);
    assert_eq!(v["cases"][0]["case"]["variant"], "file");
}

#[test]
fn churn_counts_loops_and_pages_exactly() {
    let s = Scratch::new("churn");
    let v = json(&s.vmscale(&[
        "run", "churn", "--tasks", "2", "--chunk", "256K", "--time", "0.3", "--every", "0.1",
        "--reps", "1", "--warmup", "0", "--json",
    ]));
    let f = figures(&v, 0);
    let loops = f["loops"].as_f64().unwrap();
    assert!(loops >= 2.0);
    let page = v["meta"]["config"]["page_size"].as_f64().unwrap();
    let per_loop = 256.0 * 1024.0 / page;
    assert_eq!(f["pages"].as_f64().unwrap(), loops * per_loop);
    // One zero-fill fault per page touched (THP off for the chunks).
    assert!(f["faults"].as_f64().unwrap() >= loops * per_loop * 0.98);
    let tasks = v["cases"][0]["samples"][0]["data"]["tasks"]
        .as_array()
        .unwrap();
    assert_eq!(tasks.len(), 2);
    assert!(f["task_min"].as_f64().unwrap() <= f["task_max"].as_f64().unwrap());
    assert!(
        f.get("series/001/rate").is_some(),
        "per-interval series stored"
    );
}

#[test]
fn cmd_measures_and_propagates_exit_codes() {
    let s = Scratch::new("cmd");
    let v = json(&s.vmscale(&[
        "run", "cmd", "--reps", "2", "--warmup", "0", "--json", "--", "sh", "-c", "echo hi",
    ]));
    assert_eq!(v["cases"][0]["samples"].as_array().unwrap().len(), 2);
    assert!(figures(&v, 0)["minflt"].as_f64().unwrap() > 0.0);

    let o = s.vmscale(&["run", "cmd", "--", "sh", "-c", "exit 7"]);
    assert_eq!(o.status.code(), Some(7));
    assert!(common::stderr(&o).contains("exited with status 7"));
    let o = s.vmscale(&["run", "cmd", "--", "sh", "-c", "kill -9 $$"]);
    assert_eq!(o.status.code(), Some(128 + 9));
    let o = s.vmscale(&["run", "cmd", "--", "/nonexistent/vmscale-command"]);
    assert_eq!(o.status.code(), Some(127));
    let o = s.vmscale(&["run", "cmd", "--setup", "exit 4", "--", "true"]);
    assert_eq!(o.status.code(), Some(4));
}

#[test]
fn cmd_bad_device_is_input_error_and_stores_nothing() {
    let s = Scratch::new("cmddev");
    let o = s.vmscale(&["run", "cmd", "--device", "nosuchdisk", "--", "true"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(common::stderr(&o).contains("not in /proc/diskstats"));
    if s.db().exists() {
        let list = ok(&s.vmscale(&["list", "--json"]));
        assert!(!list.contains("\"cmd\""), "nothing stored: {list}");
    }
}

#[test]
fn cmd_reports_disk_figures_for_a_real_device() {
    let text = std::fs::read_to_string("/proc/diskstats").unwrap_or_default();
    let Some(dev) = text
        .lines()
        .filter_map(|l| l.split_whitespace().nth(2))
        .find(|d| !d.starts_with("loop") && !d.starts_with("ram"))
    else {
        return common::skip("no block device in /proc/diskstats");
    };
    let s = Scratch::new("cmddisk");
    let o = s.vmscale(&[
        "run", "cmd", "--device", dev, "--reps", "1", "--warmup", "0", "--", "true",
    ]);
    let out = ok(&o);
    assert!(out.contains(&format!("{dev}-await")), "{out}");
}

#[test]
fn numa_patterns_count_passes_and_report_counters() {
    let s = Scratch::new("numa");
    for (w, loops) in [("numa01", 2), ("numa02-smt", 3)] {
        let v = json(&s.vmscale(&[
            "run",
            w,
            "--size",
            "8M",
            "--loops",
            &loops.to_string(),
            "--interval",
            "20ms",
            "--reps",
            "1",
            "--warmup",
            "0",
            "--json",
        ]));
        let c = &v["meta"]["config"];
        let tasks = c["processes"].as_u64().unwrap() * c["threads"].as_u64().unwrap();
        let f = figures(&v, 0);
        assert_eq!(f["passes"], (tasks * loops) as f64, "{w}");
        for k in [
            "numa_hint_faults",
            "numa_hint_faults_local",
            "numa_pte_updates",
            "numa_huge_pte_updates",
            "numa_pages_migrated",
            "pgmigrate_success",
            "pgmigrate_fail",
            "numa_hint_local%",
            "autonuma_cost",
            "elapsed",
            "user",
            "system",
        ] {
            assert!(f.get(k).is_some(), "{w}: {k} missing");
        }
    }
    let out = stdout(&s.vmscale(&["show", "last"]));
    assert!(out.contains("AutoNUMA cost"));
    let nodes = c_nodes();
    if nodes <= 1 {
        assert!(out.contains("NUMA balancing has nothing to move"), "{out}");
    }
}

fn c_nodes() -> usize {
    std::fs::read_dir("/sys/devices/system/node")
        .map(|d| {
            d.filter_map(|e| e.ok())
                .filter(|e| e.file_name().to_string_lossy().starts_with("node"))
                .count()
        })
        .unwrap_or(1)
}

#[test]
fn numa_too_small_is_input_error() {
    let s = Scratch::new("numabad");
    let o = s.vmscale(&["run", "numa02", "--size", "4K"]);
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn cmd_measures_a_tiny_parallel_build() {
    let have = |tool: &str| {
        std::process::Command::new("sh")
            .args(["-c", &format!("command -v {tool}")])
            .output()
            .map(|o| o.status.success())
            .unwrap_or(false)
    };
    if !have("cc") || !have("make") {
        return common::skip("cc or make is not installed");
    }
    let s = Scratch::new("build");
    let tree = s.dir.join("tree");
    let tree_s = tree.to_string_lossy().to_string();
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/bench/gen-ctree.sh");
    let g = std::process::Command::new("sh")
        .args([script, &tree_s, "3", "2"])
        .output()
        .expect("run gen-ctree.sh");
    assert!(g.status.success());
    let clean = format!("make -s -C {tree_s} clean");
    let v = json(&s.vmscale(&[
        "run", "cmd", "--setup", &clean, "--reps", "2", "--warmup", "0", "--json", "--", "make",
        "-s", "-C", &tree_s, "-j2",
    ]));
    let samples = v["cases"][0]["samples"].as_array().unwrap();
    assert_eq!(samples.len(), 2);
    for smp in samples {
        let f = &smp["data"]["figures"];
        // The compilers ran as grandchildren: their CPU time and faults are in the tree's rusage.
        assert!(f["user"].as_f64().unwrap() + f["system"].as_f64().unwrap() > 0.0);
        assert!(f["minflt"].as_f64().unwrap() > 100.0);
    }
    assert!(tree.join("libtree.a").exists());
}

/// Ctrl-C reaches vmscale's process group and vmscale passes it on to the
/// command's own group: the command dies of SIGINT mid-sample, and the run
/// is marked interrupted (exit 130), not failed.
#[test]
fn ctrl_c_during_cmd_marks_the_run_incomplete() {
    use std::os::unix::process::CommandExt;
    let s = Scratch::new("cmdint");
    let child = std::process::Command::new(env!("CARGO_BIN_EXE_vmscale"))
        .args([
            "run", "cmd", "--warmup", "0", "--reps", "3", "--", "sleep", "20",
        ])
        .env("VMSCALE_DB", s.db())
        .process_group(0)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Bounded wait for the sleep to be running under vmscale.
    let pgid = child.id().to_string();
    let mut started = false;
    for _ in 0..400 {
        std::thread::sleep(std::time::Duration::from_millis(25));
        let o = std::process::Command::new("pgrep")
            .args(["-P", &pgid, "-x", "sleep"])
            .output()
            .unwrap();
        if o.status.success() {
            started = true;
            break;
        }
    }
    assert!(started, "the command never started");
    let killed = std::process::Command::new("kill")
        .args(["-INT", "--", &format!("-{pgid}")])
        .status()
        .unwrap();
    assert!(killed.success());
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130), "{}", common::stderr(&out));
    let run = json(&s.vmscale(&["show", "last", "--json"]));
    assert_eq!(run["meta"]["status"], "incomplete");
    assert!(run["meta"]["note"].as_str().unwrap().contains("SIGINT"));
}

/// A need too large to count in 64 bits is refused like any other, not a
/// panic (sizes times task counts saturate).
#[test]
fn huge_memory_need_is_refused_for_every_workload() {
    let s = Scratch::new("hugeneed");
    let runs: &[&[&str]] = &[
        &["run", "pft", "--size-per-task", "4000000T", "--tasks", "8"],
        &["run", "churn", "--chunk", "4000000T", "--tasks", "8"],
        &["run", "fork", "--size", "4000000T", "--tasks", "8"],
        &[
            "run",
            "colour",
            "--size-per-task",
            "4000000T",
            "--tasks",
            "8",
        ],
        &["run", "numa02", "--size", "4000000T"],
    ];
    for args in runs {
        let o = s.vmscale(args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", common::stderr(&o));
        assert!(
            common::stderr(&o).contains("can be used safely"),
            "{args:?}: {}",
            common::stderr(&o)
        );
    }
    assert!(!s.db().exists(), "a refused run must not create the store");
}

/// Processes whose command line holds `marker` (forked workers keep
/// vmscale's), zombies excepted (their command line reads empty).
fn holding(marker: &str) -> Vec<u32> {
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| {
            let pid = e.file_name().to_string_lossy().parse::<u32>().ok()?;
            let cmdline = std::fs::read(e.path().join("cmdline")).ok()?;
            String::from_utf8_lossy(&cmdline)
                .contains(marker)
                .then_some(pid)
        })
        .collect()
}

#[test]
fn sigint_stops_a_numa_sample_and_its_workers() {
    stop_mid_sample(
        "numa-sigint",
        &[
            "run",
            "numa02",
            "--size",
            "8M",
            "--loops",
            "100000000",
            "--reps",
            "1",
            "--warmup",
            "0",
        ],
        libc::SIGINT,
        Tasks::Forked,
    );
}

/// The tasks of any workload forked as processes: a SIGTERM to vmscale
/// alone (a job scheduler's, `timeout`'s) kills them at once, where the
/// parent used to wait in wait4 for the sample's end (600 s here).
#[test]
fn sigterm_stops_a_sample_of_forked_tasks() {
    stop_mid_sample(
        "wis-sigterm",
        &[
            "run",
            "wis",
            "--test",
            "page_fault1",
            "--mode",
            "process",
            "--tasks",
            "1",
            "--size",
            "8M",
            "--time",
            "600",
            "--reps",
            "1",
            "--warmup",
            "0",
        ],
        libc::SIGTERM,
        Tasks::Forked,
    );
}

/// Tasks that are threads end their timed loop on the signal, and the
/// sample they cut short is not kept.
#[test]
fn sigterm_stops_a_sample_of_thread_tasks() {
    let args = "run wis --test page_fault1 --mode thread --tasks 1 --size 8M --time 600 \
                --reps 1 --warmup 0";
    let args: Vec<&str> = args.split_whitespace().collect();
    stop_mid_sample("wis-threads", &args, libc::SIGTERM, Tasks::Threads);
}

/// vms's usemem threads (the -mt cases) end their pass on the signal:
/// anon-r-rand-mt reads a sparse mapping of hundreds of GiB at random,
/// a pass far longer than the test.
#[test]
fn sigterm_stops_a_sample_of_vms_threads() {
    let args = "run vms --case anon-r-rand-mt --tasks 1 --size 1G --runtime 600 --reps 1 \
                --warmup 0";
    let args: Vec<&str> = args.split_whitespace().collect();
    stop_mid_sample("vms-threads", &args, libc::SIGTERM, Tasks::Threads);
}

/// How a sample's tasks run: forked processes, or threads of vmscale.
#[derive(PartialEq)]
enum Tasks {
    Forked,
    Threads,
}

/// Starts `args` (a sample that would take far longer than the test),
/// waits until the sample is under way (a forked worker, or the threads'
/// faults), sends `sig` to vmscale alone
/// as a plain `kill` does, and checks that it stops (exit 130), leaves no
/// worker, and keeps the run as incomplete.
fn stop_mid_sample(name: &str, args: &[&str], sig: libc::c_int, tasks: Tasks) {
    use std::time::{Duration, Instant};
    let s = Scratch::new(name);
    let marker = format!("{name}{}", std::process::id());
    let mut run = std::process::Command::new(env!("CARGO_BIN_EXE_vmscale"))
        .args(args)
        .args(["--label", &marker])
        .env("VMSCALE_DB", s.db())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // vmscale and at least one forked worker, or (threads) the sample's
    // faults: a pass of page_fault1's 8 MiB takes 2048.
    let deadline = Instant::now() + Duration::from_secs(60);
    while if tasks == Tasks::Threads {
        minor_faults(run.id()) < 100_000
    } else {
        holding(&marker).len() < 2
    } {
        assert!(Instant::now() < deadline, "the workers never started");
        assert!(run.try_wait().unwrap().is_none(), "the run ended early");
        std::thread::sleep(Duration::from_millis(20));
    }
    // SAFETY: kill takes plain integers; the pid is our child.
    unsafe { libc::kill(run.id() as libc::pid_t, sig) };
    // Bounds for a loaded machine (the sample itself would take far longer).
    let deadline = Instant::now() + Duration::from_secs(30);
    let status = loop {
        if let Some(st) = run.try_wait().unwrap() {
            break st;
        }
        if Instant::now() >= deadline {
            let _ = run.kill();
            panic!("still running 30 s after signal {sig}");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    assert_eq!(status.code(), Some(130));
    let deadline = Instant::now() + Duration::from_secs(5);
    while !holding(&marker).is_empty() {
        assert!(
            Instant::now() < deadline,
            "workers left: {:?}",
            holding(&marker)
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let listed = json(&s.vmscale(&["list", "--json"]));
    assert_eq!(listed[0]["status"], "incomplete", "{listed}");
    // The one sample was cut short: none is kept.
    let run = json(&s.vmscale(&["show", "last", "--json"]));
    assert!(
        run["cases"]
            .as_array()
            .unwrap()
            .iter()
            .all(|c| c["samples"].as_array().is_none_or(|v| v.is_empty())),
        "{run}"
    );
}

/// Minor faults of process `pid` so far (/proc/PID/stat's tenth field).
fn minor_faults(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|s| {
            let after = s.rsplit_once(')')?.1.to_string();
            after.split_whitespace().nth(7)?.parse().ok()
        })
        .unwrap_or(0)
}
