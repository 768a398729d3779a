//! Multi-size THP, zswap and page-table reclaim on the live kernel: a run
//! with 64K anonymous THP on shows the per-size counters in its record and
//! report and puts the knobs back; a run killed with SIGKILL leaves its
//! per-size and zswap knobs for `vmscale restore`; pte-reclaim reports
//! VmPTE around MADV_DONTNEED; TCG guests of Debian 6.1 and 6.12 kernels
//! show or refuse per-size THP and show zswap's counters.

use crate::common;
use crate::common::*;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

const THP_64K: &str = "/sys/kernel/mm/transparent_hugepage/hugepages-64kB/enabled";
const THP_2M: &str = "/sys/kernel/mm/transparent_hugepage/hugepages-2048kB/enabled";
const STATS_64K: &str = "/sys/kernel/mm/transparent_hugepage/hugepages-64kB/stats";
const ZSWAP_POOL: &str = "/sys/module/zswap/parameters/max_pool_percent";

/// The selected word of a knob file ("always [never]" -> "never").
fn read_knob(path: &str) -> String {
    let t = std::fs::read_to_string(path).expect("read knob");
    let t = t.trim();
    match (t.find('['), t.find(']')) {
        (Some(a), Some(b)) if a < b => t[a + 1..b].to_string(),
        _ => t.to_string(),
    }
}

/// Root and every file of `paths`: runs, skips or (under CI) fails.
fn root_with(paths: &[&str]) -> bool {
    let missing: Vec<&&str> = paths.iter().filter(|p| !Path::new(p).exists()).collect();
    if !is_root() || !missing.is_empty() {
        skip(&format!("this test needs root and {missing:?}"));
        return false;
    }
    true
}

fn state_dir(s: &Scratch) -> PathBuf {
    s.dir.join("state")
}

/// The case whose knob `name` has `value`.
fn case_with<'a>(run: &'a Value, name: &str, value: &str) -> &'a Value {
    run["cases"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["case"]["knobs"][name] == value)
        .unwrap_or_else(|| panic!("no case with {name}={value} in {}", run["cases"]))
}

fn counter(sample: &Value, name: &str) -> i64 {
    sample["vmstat"][name].as_i64().unwrap_or(0)
}

#[test]
fn sixty_four_k_anonymous_thp_shows_its_per_size_counters_and_is_restored() {
    let _turn = machine_turn();
    let stat = format!("{STATS_64K}/anon_fault_alloc");
    if !root_with(&[THP_64K, THP_2M, &stat]) {
        return;
    }
    let s = Scratch::new("mthp64k");
    let (before_64k, before_2m) = (read_knob(THP_64K), read_knob(THP_2M));
    // With the PMD size off, MADV_HUGEPAGE memory gets 64 KiB folios
    // where 64K is on and base pages where it is off.
    let args = "run pft --tasks 1 --size 16M --thp always --warmup 0 --reps 2 \
                --knob thp_2M=never --knob thp_64K=never,always";
    let args: Vec<&str> = args.split_whitespace().collect();
    let out = vmscale_state(&s.db(), &state_dir(&s), &args)
        .output()
        .unwrap();
    let text = ok(&out);
    assert_eq!(read_knob(THP_64K), before_64k, "thp_64K not restored");
    assert_eq!(read_knob(THP_2M), before_2m, "thp_2M not restored");
    let run = show(&s.db(), "last");
    let on = measured(case_with(&run, "thp_64K", "always"));
    let off = measured(case_with(&run, "thp_64K", "never"));
    assert!(!on.is_empty() && !off.is_empty());
    for sample in &on {
        assert!(
            counter(sample, "mthp.64kB.anon_fault_alloc") > 0,
            "64K on, no 64kB anon_fault_alloc: {}",
            sample["vmstat"]
        );
    }
    for sample in &off {
        assert_eq!(
            counter(sample, "mthp.64kB.anon_fault_alloc"),
            0,
            "64K off yet 64kB folios: {}",
            sample["vmstat"]
        );
    }
    assert!(
        run["meta"]["machine"]["thp_stats_sizes"]
            .as_array()
            .unwrap()
            .contains(&Value::from("64kB"))
    );
    // The report shows them below pft's own tables.
    assert!(text.contains("64kB anon_fault_alloc"), "{text}");
    assert!(!text.contains("has no hugepages-<N>kB/stats/"), "{text}");
}

#[test]
fn per_size_and_zswap_knobs_left_by_sigkill_are_put_back_by_restore() {
    let _turn = machine_turn();
    if !root_with(&[THP_64K, ZSWAP_POOL]) {
        return;
    }
    let s = Scratch::new("mthp-kill");
    let (thp0, pool0) = (read_knob(THP_64K), read_knob(ZSWAP_POOL));
    let thp1 = if thp0 == "never" { "madvise" } else { "never" };
    let pool1 = if pool0 == "17" { "18" } else { "17" };
    let args = format!(
        "run pft --tasks 1 --size 2M --thp always --warmup 0 --reps 100000 \
         --knob thp_64K={thp1} --knob zswap_max_pool_percent={pool1}"
    );
    let args: Vec<&str> = args.split_whitespace().collect();
    let mut child = vmscale_state(&s.db(), &state_dir(&s), &args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // The lock may be another test's for a while: wait for our values.
    wait_until("the knobs set", Duration::from_secs(120), || {
        (read_knob(THP_64K) == thp1 && read_knob(ZSWAP_POOL) == pool1).then_some(())
    });
    child.kill().unwrap();
    child.wait().unwrap();
    assert_eq!(read_knob(THP_64K), thp1, "SIGKILL cannot restore");
    let o = vmscale_state(&s.db(), &state_dir(&s), &["restore"])
        .output()
        .unwrap();
    let said = format!("{}{}", stdout(&o), stderr(&o));
    assert!(o.status.success(), "{said}");
    assert!(said.contains("restored knob thp_64K"), "{said}");
    assert!(
        said.contains("restored knob zswap_max_pool_percent"),
        "{said}"
    );
    assert_eq!(read_knob(THP_64K), thp0);
    assert_eq!(read_knob(ZSWAP_POOL), pool0);
}

#[test]
fn a_zswap_value_the_knob_does_not_take_is_refused_with_exit_2() {
    let s = Scratch::new("zswap-bad");
    let o = s.vmscale(&["run", "pft", "--knob", "zswap=maybe", "--dry-run"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("Y or N"), "{}", stderr(&o));
    let o = s.vmscale(&["run", "pft", "--knob", "thp_48K=always", "--dry-run"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("thp_<size> (16K..2M)"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn pte_reclaim_reports_vmpte_around_madv_dontneed() {
    let s = Scratch::new("pte-reclaim");
    let text = ok(&s.vmscale(&[
        "run",
        "pte-reclaim",
        "--size",
        "32M",
        "--warmup",
        "0",
        "--reps",
        "3",
    ]));
    assert!(text.contains("pte_left_kb"), "{text}");
    let run = show(&s.db(), "last");
    for sample in measured(&run["cases"][0]) {
        // One 4 KiB PTE table maps 2 MiB: 32 MiB written needs 16.
        assert!(fig(&sample, "pte_touched_kb") >= 64.0, "{sample}");
        assert!(fig(&sample, "pte_left_kb").is_finite(), "{sample}");
        assert!(fig(&sample, "dontneed_us") > 0.0, "{sample}");
        assert!(fig(&sample, "nr_pt_touched_kb").is_finite(), "{sample}");
    }
}

/// In a TCG guest of Debian's 6.12 kernel a run with 64K anonymous THP on
/// (pft, and vm-scalability's anon-w-seq) shows the per-size counters
/// above 0; in one of Debian 12's 6.1, which has no per-size THP, the
/// same run without the knob says plainly that there are none, and with
/// it is refused (exit 2 in the guest) naming the version needed.
#[test]
fn a_6_12_guest_shows_per_size_counters_and_a_6_1_guest_says_it_has_none() {
    use common::guest::{GuestRun, kernel_6_12, kernels, read, results};
    if !common::guest::available("mTHP in guests") {
        return;
    }
    let s = Scratch::new("mthp-guest");
    let pft = "run pft --tasks 1 --size 8M --thp always --warmup 0 --reps 1";
    let pft: Vec<&str> = pft.split(' ').collect();
    let vms = "run vms --case anon-w-seq --size 1/8 --runtime 1 --warmup 0 --reps 1";
    let vms: Vec<&str> = vms.split(' ').collect();
    // Debian's guests boot with THP never, which pft --thp always refuses.
    let boot = |k: &Path| {
        let madvise = "echo madvise > /sys/kernel/mm/transparent_hugepage/enabled";
        GuestRun::tcg(k, "512M").opt("--setup", madvise)
    };
    let knobs = ["--knob", "thp_2M=never", "--knob", "thp_64K=always"];
    fn with<'a>(step: &[&'a str], knobs: &[&'a str]) -> Vec<&'a str> {
        step.iter().chain(knobs).copied().collect()
    }
    let (pft_64k, vms_64k) = (with(&pft, &knobs), with(&vms, &knobs));
    let guest = boot(kernel_6_12()).step(&pft_64k).step(&vms_64k);
    ok(&guest.run(&s.db()));
    for (run, workload) in [("last~1", "pft"), ("last", "vms")] {
        let run = show(&s.db(), run);
        assert_eq!(run["meta"]["workload"], workload);
        let release = run["meta"]["machine"]["kernel_release"].as_str().unwrap();
        assert!(release.starts_with("6.12."), "{release}");
        let sample = &measured(&run["cases"][0])[0];
        assert!(
            counter(sample, "mthp.64kB.anon_fault_alloc") > 0,
            "{workload}: {}",
            sample["vmstat"]
        );
    }
    for run in ["last~1", "last"] {
        let text = ok(&vmscale_with_db(&s.db(), &["show", run]));
        assert!(text.contains("64kB anon_fault_alloc"), "{text}");
    }

    ok(&boot(&kernels()[1]).step(&pft).run(&s.db()));
    // Lines are folded at 78 columns: compare the words.
    let text = ok(&vmscale_with_db(&s.db(), &["show", "last"]))
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    assert!(text.contains("Linux 6.1."), "{text}");
    assert!(
        text.contains("has no hugepages-<N>kB/stats/ counters"),
        "{text}"
    );
    // There the per-size knob is refused before anything changes: the
    // vms run of the 6.12 guest, exit 2 in the guest.
    let only_64k = with(&vms, &knobs[2..]);
    let out = s.dir.join("out-6.1");
    let o = boot(&kernels()[1]).out(&out).step(&only_64k).run(&s.db());
    let said = stderr(&o);
    assert!(!o.status.success(), "{said}");
    let status = read(&results(&out, 1, 1).join(vmscale::guest::files::step_status(1)));
    assert_eq!(status.trim(), "2", "{said}");
    assert!(
        said.contains("hugepages-64kB/enabled does not exist on this kernel (Linux 6.1."),
        "{said}"
    );
    assert!(said.contains("needs Linux 6.8+"), "{said}");
}

/// In a TCG guest of Debian's generic 6.12 kernel (the cloud one has no
/// zswap) a swap case with zswap on stores base pages in zswap (vmstat's
/// zswpout) while its 64 KiB folios go to the swap device whole (6.12's
/// zswap takes no large folios: 64kB swpout) or split (64kB
/// swpout_fallback), and the report shows
/// zswap's debugfs counters or says why none moved, never that debugfs
/// is not mounted (6.12 makes zswap's directory only once zswap is on).
#[test]
fn a_6_12_guest_with_zswap_on_shows_zswap_and_64k_swap_out_counters() {
    use common::guest::{GuestRun, kernel_6_12_generic};
    if !common::guest::available("zswap in guests") {
        return;
    }
    let s = Scratch::new("zswap-guest");
    let step = "run vms --case swap-w-seq --size 1/32 --runtime 4 --warmup 0 --reps 1 \
                --knob zswap=Y --knob thp_64K=never,always";
    let step: Vec<&str> = step.split_whitespace().collect();
    ok(&GuestRun::tcg(kernel_6_12_generic(), "512M")
        .step(&step)
        .run(&s.db()));
    let run = show(&s.db(), "last");
    let machine = &run["meta"]["machine"];
    let release = machine["kernel_release"].as_str().unwrap();
    assert!(release.starts_with("6.12."), "{release}");
    assert_eq!(machine["zswap_debugfs"], true, "{machine}");
    let base = &measured(case_with(&run, "thp_64K", "never"))[0];
    let large = &measured(case_with(&run, "thp_64K", "always"))[0];
    // Base pages go to zswap in both cases: those of the 64K case are
    // the folios split when no 64 KiB of swap was free in one piece.
    let zswpout = counter(base, "zswpout") + counter(large, "zswpout");
    assert!(zswpout > 0, "{}\n{}", base["vmstat"], large["vmstat"]);
    let out_64k = counter(large, "mthp.64kB.swpout") + counter(large, "mthp.64kB.swpout_fallback");
    assert!(out_64k > 0, "{}", large["vmstat"]);
    let text = ok(&vmscale_with_db(&s.db(), &["show", "last"]))
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    assert!(!text.contains("debugfs is not mounted"), "{text}");
    assert!(text.contains("64kB swpout"), "{text}");
    let zswap_keys: Vec<String> = [base, large]
        .iter()
        .flat_map(|v| v["vmstat"].as_object().unwrap().keys())
        .filter_map(|k| k.strip_prefix("zswap."))
        .map(|k| format!("zswap {k}"))
        .collect();
    for label in &zswap_keys {
        assert!(text.contains(label.as_str()), "{label}: {text}");
    }
    if zswap_keys.is_empty() {
        assert!(
            text.contains("no /sys/kernel/debug/zswap counter moved"),
            "{text}"
        );
    }
}
