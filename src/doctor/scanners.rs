//! Doctor checks on kernel threads that walk memory while a run faults:
//! DAMON's kdamond, and khugepaged, kcompactd, ksmd and kswapd seen
//! working (their CPU time growing while doctor watches), and KSM merging.

use std::path::Path;

use super::{Evidence, Finding, Outcome, ev, fine};
use crate::machine::{proc_stat, read_trimmed, under};

/// Kernel threads that scan memory, by name prefix, and what their work
/// does to a run's faults.
const SCANNERS: [(&str, &str); 4] = [
    (
        "khugepaged",
        "collapses base pages into huge pages: it takes the mmap lock and copies pages",
    ),
    (
        "kcompactd",
        "migrates pages to defragment memory: pages a run uses move, their TLB entries flushed",
    ),
    (
        "ksmd",
        "merges identical pages: a write to a merged page is a copy-on-write fault",
    ),
    (
        "kswapd",
        "reclaims pages: a run's pages are unmapped and fault back, as major faults if swapped",
    ),
];

/// One kernel thread's accumulated CPU time.
#[derive(Debug, Clone, PartialEq)]
pub struct Thread {
    pub pid: u32,
    pub comm: String,
    /// utime + stime, in clock ticks.
    pub ticks: u64,
}

/// The memory-scanning kernel threads (children of kthreadd, pid 2) and
/// kdamond threads under `root`, by pid.
pub fn threads(root: &Path) -> Vec<Thread> {
    let Ok(dir) = std::fs::read_dir(under(root, "/proc")) else {
        return Vec::new();
    };
    let mut out: Vec<Thread> = dir
        .flatten()
        .filter_map(|e| {
            let pid: u32 = e.file_name().to_str()?.parse().ok()?;
            let stat = read_trimmed(root, &format!("/proc/{pid}/stat"))?;
            // "pid (comm) state ppid ...": the name may hold spaces.
            let comm = stat[stat.find('(')? + 1..stat.rfind(')')?].to_string();
            let num = |n| proc_stat::field(&stat, n)?.parse::<u64>().ok();
            let ppid = num(4)?;
            // utime + stime
            let ticks = num(14)? + num(15)?;
            let named =
                comm.starts_with("kdamond") || SCANNERS.iter().any(|(p, _)| comm.starts_with(p));
            (ppid == 2 && named).then_some(Thread { pid, comm, ticks })
        })
        .collect();
    out.sort_by_key(|t| t.pid);
    out
}

/// Clock ticks of CPU time as "3.4 s CPU".
fn cpu_time(ticks: u64) -> String {
    let s = ticks as f64 / crate::exec::clock::ticks_per_second() as f64;
    format!("{} CPU", crate::units::duration(s))
}

/// DAMON: a kdamond thread exists (started through the DAMON sysfs
/// interface, one of the DAMON modules, or by the kernel itself).
pub fn damon(root: &Path, now: &[Thread]) -> Outcome {
    let admin = "/sys/kernel/mm/damon/admin/kdamonds/nr_kdamonds";
    let mut evidence: Vec<Evidence> = Vec::new();
    if let Some(n) = read_trimmed(root, admin) {
        evidence.push(ev(admin, n));
    }
    for module in ["damon_reclaim", "damon_lru_sort", "damon_stat"] {
        let p = format!("/sys/module/{module}/parameters/enabled");
        if let Some(v) = read_trimmed(root, &p) {
            evidence.push(ev(&p, v));
        }
    }
    let kdamonds: Vec<&Thread> = now
        .iter()
        .filter(|t| t.comm.starts_with("kdamond"))
        .collect();
    for t in &kdamonds {
        evidence.push(ev(
            &format!("/proc/{}/stat", t.pid),
            format!("{}, {} since boot", t.comm, cpu_time(t.ticks)),
        ));
    }
    if kdamonds.is_empty() {
        return fine("damon", evidence);
    }
    Outcome::Found(Finding {
        check: "damon",
        what: format!(
            "DAMON runs ({} kdamond thread(s)): it samples memory accesses by \
             clearing the accessed bits of page table entries every few \
             milliseconds (TLB flushes, page-table walks beside the run), and \
             its reclaim or LRU-sorting schemes page out or move the pages a \
             run uses, so fault cost changes over time",
            kdamonds.len()
        ),
        evidence,
        fix: "stop it for the measurement: echo off > \
              /sys/kernel/mm/damon/admin/kdamonds/N/state, or echo N > \
              /sys/module/damon_reclaim/parameters/enabled (damon_lru_sort, \
              damon_stat alike); a kdamond none of these lists was started by \
              the kernel and goes only with a boot without it: compare runs of \
              one boot only"
            .into(),
        tune: Vec::new(),
    })
}

/// Memory scanners seen working between `before` and `now` (doctor's
/// watch), and KSM merging.
pub fn scanners(root: &Path, before: &[Thread], now: &[Thread]) -> Outcome {
    let mut evidence = Vec::new();
    let mut working: Vec<String> = Vec::new();
    for t in now.iter().filter(|t| !t.comm.starts_with("kdamond")) {
        let used = before
            .iter()
            .find(|b| b.pid == t.pid)
            .map_or(0, |b| t.ticks.saturating_sub(b.ticks));
        if used > 0 {
            evidence.push(ev(
                &format!("/proc/{}/stat", t.pid),
                format!("{} used {} while watched", t.comm, cpu_time(used)),
            ));
            let what = SCANNERS
                .iter()
                .find(|(p, _)| t.comm.starts_with(p))
                .map_or("", |(_, w)| w);
            working.push(format!("{} {what}", t.comm));
        }
    }
    let ksm = "/sys/kernel/mm/ksm/run";
    let merging = read_trimmed(root, ksm);
    if let Some(v) = &merging {
        evidence.push(ev(ksm, v.clone()));
    }
    if merging.as_deref() == Some("1") && !working.iter().any(|w| w.starts_with("ksmd")) {
        working.push(format!("ksmd {}", SCANNERS[2].1));
    }
    if working.is_empty() {
        return fine("memory-scanners", evidence);
    }
    Outcome::Found(Finding {
        check: "memory-scanners",
        what: format!("kernel threads walk memory now: {}", working.join("; ")),
        evidence,
        fix: "let the machine settle before measuring (vmscale run --wait-quiet), \
              and remove the cause: khugepaged and kcompactd by the thp and \
              compaction fixes above (run --tune), ksmd with echo 0 > \
              /sys/kernel/mm/ksm/run, kswapd by leaving more memory free \
              (a smaller --size)"
            .into(),
        tune: Vec::new(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree(threads: &[(u32, &str, u32, u64)]) -> tempfile::TempDir {
        let tmp = tempfile::tempdir().unwrap();
        for (pid, comm, ppid, ticks) in threads {
            let d = tmp.path().join(format!("proc/{pid}"));
            std::fs::create_dir_all(&d).unwrap();
            let stat = format!("{pid} ({comm}) I {ppid} 0 0 0 -1 2129984 0 0 0 0 0 {ticks} 0 0 20");
            std::fs::write(d.join("stat"), stat).unwrap();
        }
        tmp
    }

    #[test]
    fn kdamond_is_damon_and_working_scanners_are_named() {
        let tmp = tree(&[
            (77, "kdamond.0", 2, 6000),
            (38, "khugepaged", 2, 10),
            (35, "kcompactd0", 2, 50),
            (900, "khugepaged", 1, 99), // a user process of that name
        ]);
        let root = tmp.path();
        let before = threads(root);
        assert_eq!(before.len(), 3, "{before:?}");
        let Outcome::Found(f) = damon(root, &before) else {
            panic!("kdamond not seen")
        };
        assert!(
            f.evidence.iter().any(|e| e.path == "/proc/77/stat"),
            "{f:?}"
        );
        let mut now = before.clone();
        now[1].ticks += 25; // khugepaged (pid 38) worked while watched
        let Outcome::Found(f) = scanners(root, &before, &now) else {
            panic!("khugepaged's work not seen")
        };
        assert!(f.what.contains("khugepaged collapses"), "{}", f.what);
        assert!(!f.what.contains("kcompactd"), "{}", f.what);
        assert!(matches!(
            scanners(root, &before, &before),
            Outcome::Clear(_)
        ));
    }

    #[test]
    fn no_kdamond_and_idle_scanners_are_fine_and_ksm_is_found() {
        let tmp = tree(&[(36, "ksmd", 2, 5)]);
        let root = tmp.path();
        let t = threads(root);
        assert!(matches!(damon(root, &t), Outcome::Clear(_)));
        assert!(matches!(scanners(root, &t, &t), Outcome::Clear(_)));
        std::fs::create_dir_all(root.join("sys/kernel/mm/ksm")).unwrap();
        std::fs::write(root.join("sys/kernel/mm/ksm/run"), "1\n").unwrap();
        let Outcome::Found(f) = scanners(root, &t, &t) else {
            panic!("KSM merging not seen")
        };
        assert!(f.what.contains("copy-on-write"), "{}", f.what);
    }
}
