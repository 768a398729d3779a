use super::*;
use crate::reproduce::read;

const VMS: &str = include_str!("../../../tests/fixtures/reproduce/vms-anon-w-seq.txt");
const WIS_QUOTED: &str = include_str!("../../../tests/fixtures/reproduce/wis-thread-quoted.txt");
const WIS_PROCESS: &str = include_str!("../../../tests/fixtures/reproduce/wis-process.txt");
const PFT: &str = include_str!("../../../tests/fixtures/reproduce/pft.txt");

const SMALL: Here = Here {
    cpus: 8,
    memory: 16 << 30,
    nodes: 1,
};

fn row<'a>(p: &'a Plan, name: &str) -> &'a RowPlan {
    p.rows.iter().find(|r| r.name == name).unwrap()
}

#[test]
fn vm_scalability_runs_its_case_on_every_cpu_share() {
    let p = plan(&read(VMS).unwrap(), SMALL, Asked::default()).unwrap();
    assert_eq!(p.workload, "vms");
    assert_eq!(
        p.command,
        [
            "run",
            "vms",
            "--case",
            "anon-w-seq",
            "--tasks",
            "8",
            "--runtime",
            "2",
            "--max-time",
            "40s",
            "--meminfo",
            "Active(anon)"
        ]
    );
    assert!(p.runtime.shortened);
    assert_eq!(p.runtime.robot_s, 300.0);
    let size = p.scaling.iter().find(|s| s.what == "size").unwrap();
    // 512G of a 256G machine is twice its memory: 32 GiB of 16 here.
    assert!(size.here.starts_with("32 GiB"), "{size:?}");
}

#[test]
fn the_robots_thp_settings_become_the_runs_knobs() {
    let with = VMS.replace(
        "\ttest: anon-w-seq\n",
        "\ttest: anon-w-seq\n\tthp_enabled: always\n\tthp_defrag: defer+madvise\n",
    );
    let p = plan(&read(&with).unwrap(), SMALL, Asked::default()).unwrap();
    let knobs: Vec<&str> = p
        .command
        .windows(2)
        .filter(|w| w[0] == "--knob")
        .map(|w| w[1].as_str())
        .collect();
    assert_eq!(knobs, ["thp=always", "thp_defrag=defer+madvise"]);
    assert!(
        p.scaling
            .iter()
            .any(|s| s.what == "thp_enabled" && s.here == "always")
    );
    // Without them the run keeps the machine's own settings.
    let plain = plan(&read(VMS).unwrap(), SMALL, Asked::default()).unwrap();
    assert!(!plain.command.iter().any(|a| a == "--knob"));
    // A value the kernel does not take is refused.
    let bad = VMS.replace(
        "\ttest: anon-w-seq\n",
        "\ttest: anon-w-seq\n\tthp_enabled: sometimes\n",
    );
    let err = plan(&read(&bad).unwrap(), SMALL, Asked::default()).unwrap_err();
    assert!(err.to_string().contains("sometimes"), "{err}");
}

#[test]
fn nr_task_is_the_same_share_of_this_machines_cpus() {
    let wis = read(WIS_QUOTED).unwrap();
    // 16 of 144 threads on 8 CPUs: 0.89, so 1.
    let tasks = |p: &Plan| {
        let at = p.command.iter().position(|a| a == "--tasks").unwrap();
        p.command[at + 1].clone()
    };
    let p = plan(&wis, SMALL, Asked::default()).unwrap();
    assert_eq!(tasks(&p), "1");
    let big = Here { cpus: 72, ..SMALL };
    let p = plan(&wis, big, Asked::default()).unwrap();
    assert_eq!(tasks(&p), "8");
    // 100% of 104 threads: all 8 here; 50% of 96: 4.
    let p = plan(&read(WIS_PROCESS).unwrap(), SMALL, Asked::default()).unwrap();
    assert!(
        p.command.windows(2).any(|w| w == ["--tasks", "8"]),
        "{:?}",
        p.command
    );
    // pft sized a sixteenth of the memory here.
    let p = plan(&read(PFT).unwrap(), SMALL, Asked::default()).unwrap();
    let size = format!("{}M", (SMALL.memory / 16) >> 20);
    assert_eq!(
        p.command,
        [
            "run",
            "pft",
            "--tasks",
            "4",
            "--size",
            &size,
            "--max-time",
            "40s"
        ]
    );
}

#[test]
fn will_it_scale_keeps_the_robots_mode_and_test() {
    let p = plan(
        &read(WIS_QUOTED).unwrap(),
        SMALL,
        Asked {
            runtime_s: Some(5.0),
            budget_s: Some(12.0),
        },
    )
    .unwrap();
    assert_eq!(
        &p.command[..7],
        [
            "run", "wis", "--test", "mmap1", "--mode", "thread", "--tasks"
        ]
    );
    assert!(
        p.command.windows(2).any(|w| w == ["--time", "5"]),
        "{:?}",
        p.command
    );
    assert!(!p.runtime.shortened);
    // The budget asked is the run's --max-time and bounds the estimate:
    // the budget, a warm-up and the sample under way at its end.
    assert!(
        p.command.windows(2).any(|w| w == ["--max-time", "12s"]),
        "{:?}",
        p.command
    );
    assert_eq!(p.run_s, 12.0 + 2.0 * 5.0);
    let p = plan(&read(WIS_PROCESS).unwrap(), SMALL, Asked::default()).unwrap();
    assert_eq!(
        &p.command[2..6],
        ["--test", "page_fault2", "--mode", "process"]
    );
    assert_eq!(
        row(&p, "will-it-scale.per_process_ops").measured_by,
        Some(Measured::Figure("ops/s/task".into()))
    );
}

#[test]
fn rows_are_mapped_to_what_vmscale_stores_or_told_why_not() {
    let p = plan(&read(VMS).unwrap(), SMALL, Asked::default()).unwrap();
    let by = |n: &str| row(&p, n).measured_by.clone();
    assert_eq!(
        by("vm-scalability.throughput"),
        Some(Measured::Figure("throughput".into()))
    );
    assert_eq!(
        by("vm-scalability.time.minor_page_faults"),
        Some(Measured::Figure("minflt".into()))
    );
    assert_eq!(
        by("proc-vmstat.pgfault"),
        Some(Measured::Vmstat("pgfault".into()))
    );
    assert_eq!(by("numa-numastat.node1.local_node"), None);
    let why = |n: &str| row(&p, n).not_measured.clone().unwrap_or_default();
    assert!(why("numa-numastat.node1.local_node").contains("node 1 does not exist"));
    assert!(why("turbostat.IPC").contains("registers"));
    assert!(why("perf-stat.i.cache-miss-rate%").contains("PMU"));
    assert!(
        why("perf-profile.calltrace.cycles-pp.do_anonymous_page.__handle_mm_fault")
            .contains("--profile")
    );
    assert_eq!(
        by("meminfo.Active(anon)"),
        Some(Measured::Meminfo("Active(anon)".into()))
    );
    assert!(why("vm-scalability.time.system_time").contains("CPU time"));
    // Every row is either measured or has its reason.
    assert!(
        p.rows
            .iter()
            .all(|r| r.measured_by.is_some() != r.not_measured.is_some())
    );
    assert_eq!(p.rows.len(), read(VMS).unwrap().tests[0].rows.len());
    let wis = plan(&read(WIS_PROCESS).unwrap(), SMALL, Asked::default()).unwrap();
    assert_eq!(
        row(&wis, "will-it-scale.time.system_time").measured_by,
        Some(Measured::Figure("system".into()))
    );
    let pft = plan(&read(PFT).unwrap(), SMALL, Asked::default()).unwrap();
    assert_eq!(
        row(&pft, "pft.faults_per_sec_per_cpu").measured_by,
        Some(Measured::Figure("flt/cpu/s".into()))
    );
}

#[test]
fn node_zero_of_a_one_node_machine_is_the_vmstat_total() {
    assert_eq!(
        numastat("node0.local_node", SMALL),
        Mapped::By(Measured::Vmstat("numa_local".into()))
    );
    let two = Here { nodes: 2, ..SMALL };
    assert!(matches!(numastat("node0.numa_hit", two), Mapped::Not(w) if w.contains("per-node")));
}

#[test]
fn a_testcase_vmscale_does_not_run_is_named_with_the_list() {
    let text = WIS_PROCESS
        .replace("testcase: will-it-scale", "testcase: stress-ng")
        .replace("/will-it-scale\n", "/stress-ng\n");
    let e = plan(&read(&text).unwrap(), SMALL, Asked::default()).unwrap_err();
    let msg = e.to_string();
    assert!(matches!(e, Error::Input(_)));
    assert!(
        msg.contains("'stress-ng'") && msg.contains("anon-cow-seq") && msg.contains("tlb_flush2"),
        "{msg}"
    );
    let text = WIS_PROCESS
        .replace("test: page_fault2", "test: poll2")
        .replace("/page_fault2/", "/poll2/");
    let msg = plan(&read(&text).unwrap(), SMALL, Asked::default())
        .unwrap_err()
        .to_string();
    assert!(
        msg.contains("'poll2'") && msg.contains("page_fault1"),
        "{msg}"
    );
}

#[test]
fn sizes_and_counts_that_cannot_be_scaled_are_refused() {
    let text = VMS.replace("\tsize: 512G", "\tsize: lots");
    let msg = plan(&read(&text).unwrap(), SMALL, Asked::default())
        .unwrap_err()
        .to_string();
    assert!(msg.contains("size 'lots'"), "{msg}");
    let text = VMS.replace("with 256G memory\nparameters", "\nparameters");
    let msg = plan(&read(&text).unwrap(), SMALL, Asked::default())
        .unwrap_err()
        .to_string();
    assert!(msg.contains("no test machine memory"), "{msg}");
    let text = WIS_QUOTED.replace("on test machine: 144 threads", "on test machine: many");
    let msg = plan(&read(&text).unwrap(), SMALL, Asked::default())
        .unwrap_err()
        .to_string();
    assert!(msg.contains("nr_task 16"), "{msg}");
}

#[test]
fn meminfo_rows_are_read_where_every_guest_kernel_has_the_field() {
    let line = "   1988324 ±  2%     +12.3%    2232886        meminfo.Active(anon)\n";
    assert!(VMS.contains(line));
    let more = [
        "meminfo.AnonHugePages",
        "meminfo.Memused",
        "meminfo.Zswap",
        "numa-meminfo.node0.Active(anon)",
        "numa-meminfo.node1.Active(anon)",
        "numa-meminfo.node0.Cached",
        "numa-meminfo.node0.FilePages",
        "numa-meminfo.node0.SwapCached",
        "numa-vmstat.node0.nr_anon_pages",
    ]
    .map(|n| line.replace("meminfo.Active(anon)", n))
    .concat();
    let report = VMS.replace(line, &format!("{line}{more}"));
    let p = plan(&read(&report).unwrap(), SMALL, Asked::default()).unwrap();
    let at = p.command.iter().position(|a| a == "--meminfo").unwrap();
    assert_eq!(
        p.command[at + 1],
        "Active(anon),AnonHugePages,node0.Active(anon),node0.FilePages"
    );
    let why = |n: &str| row(&p, n).not_measured.clone().unwrap_or_default();
    assert!(why("meminfo.Memused").contains("lkp derives"));
    assert!(why("meminfo.Zswap").contains("not a /proc/meminfo field every kernel"));
    assert!(why("numa-meminfo.node1.Active(anon)").contains("node 1 does not exist"));
    assert!(why("numa-meminfo.node0.Cached").contains("node 0 meminfo"));
    assert!(why("numa-meminfo.node0.SwapCached").contains("node 0 meminfo"));
    assert!(why("numa-vmstat.node0.nr_anon_pages").contains("each node's vmstat"));
}
