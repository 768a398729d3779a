//! vm-scalability's `case-*` scripts, all 71, by name (`vmscale run vms
//! --case suite`): each one vmscale runs (a row of `cases::CASES`), with
//! whether this machine and user can run it now, and each one it does not
//! run, with the reason.

use super::cases::{CASES, Engine, Family, Row};

/// The scripts vmscale does not run as cases, and why.
pub const NOT_RUN: &[(&str, &str)] = &[
    // Set-ups that fill a third of memory before the cases: vmscale
    // models a smaller machine (--size) and a cgroup of its size instead.
    ("000-anon", "set-up (anon fill): --size models it"),
    ("000-shm", "set-up (tmpfs fill): --size models it"),
    ("000-shm-clean", "set-up (tmpfs fill): --size models it"),
];

/// What stops `row` here, for this user on this machine, if anything.
fn refused_here(row: &Row, root: bool, nodes: usize, ksm: bool) -> Option<String> {
    if row.family == Family::Migrate && nodes < 2 {
        return Some(format!("needs 2 NUMA nodes, {nodes} here"));
    }
    if matches!(row.engine, Engine::Ksm | Engine::KsmHuge) && !ksm {
        return Some("needs KSM (/sys/kernel/mm/ksm)".into());
    }
    (super::plan::needs_room(row) && !root).then(|| "needs root (a set-up)".into())
}

fn nodes_here() -> usize {
    std::fs::read_dir("/sys/devices/system/node")
        .map(|d| {
            d.flatten()
                .filter(|e| {
                    let n = e.file_name();
                    let n = n.to_string_lossy();
                    n.strip_prefix("node")
                        .is_some_and(|k| !k.is_empty() && k.bytes().all(|b| b.is_ascii_digit()))
                })
                .count()
        })
        .unwrap_or(1)
        .max(1)
}

/// One line a script, in the suite's order: `case-NAME  run` or `case-NAME
/// refused: why`.
pub fn listing() -> Vec<String> {
    let root = crate::exec::euid() == 0;
    let nodes = nodes_here();
    let ksm = std::path::Path::new("/sys/kernel/mm/ksm/run").exists();
    let mut lines: Vec<(String, String)> = CASES
        .iter()
        .map(|r| {
            let status = match refused_here(r, root, nodes, ksm) {
                Some(why) => format!("refused here: {why}"),
                None => "run".into(),
            };
            (format!("case-{}", r.name), status)
        })
        .chain(
            NOT_RUN
                .iter()
                .map(|(n, why)| (format!("case-{n}"), format!("refused: {why}"))),
        )
        .collect();
    lines.sort();
    let w = lines.iter().map(|l| l.0.len()).max().unwrap_or(0);
    lines
        .into_iter()
        .map(|(name, status)| format!("{name:w$}  {status}"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The suite's scripts as its repository has them (71).
    const SUITE: &str = "000-anon 000-shm 000-shm-clean anon-cow-rand \
        anon-cow-rand-hugetlb anon-cow-rand-mt anon-cow-seq anon-cow-seq-hugetlb \
        anon-cow-seq-mt anon-r-rand anon-r-rand-mt anon-r-seq anon-r-seq-mt \
        anon-rx-rand-mt anon-rx-seq-mt anon-w-rand anon-w-rand-hugetlb anon-w-rand-mt \
        anon-w-seq anon-w-seq-hugetlb anon-w-seq-mt anon-wx-rand-mt anon-wx-seq-mt \
        direct-write fork fork-sleep hugetlb ksm ksm-hugepages lru-file-mmap-read \
        lru-file-mmap-read-rand lru-file-readonce lru-file-readtwice lru-memcg lru-shm \
        lru-shm-rand mbind migrate migrate-across-nodes mincore mincore-hugepages mlock \
        mmap-pread-rand mmap-pread-rand-mt mmap-pread-seq mmap-pread-seq-mt \
        mmap-xread-rand-mt mmap-xread-seq-mt mremap-xread-rand-mt msync msync-mt \
        posix-fadvise remap shm-lock-unlock shm-pread-rand shm-pread-rand-mt \
        shm-pread-seq shm-pread-seq-mt shm-xread-rand shm-xread-rand-mt shm-xread-seq \
        shm-xread-seq-mt small-allocs small-allocs-mt swap-w-rand swap-w-rand-mt \
        swap-w-seq swap-w-seq-mt swapin truncate truncate-seq";

    #[test]
    fn every_script_is_a_case_or_refused_once() {
        let suite: Vec<&str> = SUITE.split_whitespace().collect();
        assert_eq!(suite.len(), 71);
        let mut ours: Vec<&str> = CASES.iter().map(|r| r.name).collect();
        ours.extend(NOT_RUN.iter().map(|(n, _)| *n));
        ours.sort_unstable();
        assert_eq!(ours, suite, "a case both run and refused, or missing");
        let lines = listing();
        assert_eq!(lines.len(), 71);
        for (line, name) in lines.iter().zip(&suite) {
            let mut words = line.split_whitespace();
            assert_eq!(words.next(), Some(format!("case-{name}").as_str()));
            let status = words.next().unwrap_or("");
            assert!(status == "run" || status.starts_with("refused"), "{line}");
            // Within the 80 columns the text output wraps at.
            assert!(line.len() <= 79, "{line}");
        }
    }

    #[test]
    fn migrate_is_refused_on_one_node_and_room_cases_without_root() {
        let row = |n| super::super::cases::find(n).unwrap();
        let why = refused_here(row("migrate"), true, 1, true).unwrap();
        assert!(why.contains("2 NUMA nodes, 1 here"), "{why}");
        assert_eq!(refused_here(row("migrate"), true, 2, true), None);
        assert!(refused_here(row("truncate"), false, 1, true).is_some());
        assert_eq!(refused_here(row("anon-w-seq"), false, 1, true), None);
        assert!(refused_here(row("anon-w-seq-hugetlb"), false, 1, true).is_some());
    }
}
