//! Doctor checks on memory management: free page reporting and the balloon,
//! memory initialised lazily or hot-added, THP and khugepaged, background
//! compaction, NUMA balancing, swap.

use std::path::Path;

use super::{Finding, Outcome, ev, fine, tune};
use crate::machine::{read_trimmed, under};
use crate::monitor::memory_size::MemorySize;
use crate::units::memory_kib;

const REPORTING: &str = "/sys/module/page_reporting/parameters";
/// The largest buddy order (MAX_PAGE_ORDER on x86-64 and most kernels): at
/// this order only 4 MiB blocks are reported.
pub const MAX_ORDER: &str = "10";
/// Bit 5 of a virtio balloon's feature bits: free page reporting.
const BALLOON_F_REPORTING: usize = 5;
const VIRTIO_ID_BALLOON: &str = "0x0005";

/// Virtio balloon devices: (sysfs directory, feature bit string).
fn balloons(root: &Path) -> Vec<(String, String)> {
    let Ok(dir) = std::fs::read_dir(under(root, "/sys/bus/virtio/devices")) else {
        return Vec::new();
    };
    let mut out: Vec<(String, String)> = dir
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().to_string();
            let abs = format!("/sys/bus/virtio/devices/{name}");
            let id = read_trimmed(root, &format!("{abs}/device"))?;
            (id == VIRTIO_ID_BALLOON).then(|| {
                let features = read_trimmed(root, &format!("{abs}/features")).unwrap_or_default();
                (abs, features)
            })
        })
        .collect();
    out.sort();
    out
}

pub fn page_reporting(root: &Path) -> Outcome {
    let order_path = format!("{REPORTING}/page_reporting_order");
    let Some(order) = read_trimmed(root, &order_path) else {
        return fine("page-reporting", Vec::new());
    };
    let mut evidence = vec![ev(&order_path, order.clone())];
    if let Some(kib) = read_trimmed(root, &format!("{REPORTING}/reported_kib")) {
        evidence.push(ev(&format!("{REPORTING}/reported_kib"), kib));
    }
    let reporting: Vec<(String, String)> = balloons(root)
        .into_iter()
        .filter(|(_, f)| f.as_bytes().get(BALLOON_F_REPORTING) == Some(&b'1'))
        .collect();
    for (dir, f) in &reporting {
        let set: Vec<String> = f
            .bytes()
            .enumerate()
            .filter(|(_, b)| *b == b'1')
            .map(|(i, _)| i.to_string())
            .collect();
        evidence.push(ev(
            &format!("{dir}/features"),
            format!(
                "bits {} set ({BALLOON_F_REPORTING}: free page reporting)",
                set.join(",")
            ),
        ));
    }
    if reporting.is_empty() || order == MAX_ORDER {
        return fine("page-reporting", evidence);
    }
    Outcome::Found(Finding {
        check: "page-reporting",
        what: format!(
            "free page reporting: the guest hands free blocks of 2^{order} pages \
             back to the host, which must find and zero memory again when the \
             guest next touches them, so faults on memory freed a while ago can \
             cost more and vary with what the reporter did between samples"
        ),
        evidence,
        fix: format!(
            "report only the largest blocks (run --tune writes {MAX_ORDER} to \
             page_reporting_order and restores it), or boot with \
             page_reporting.page_reporting_order={MAX_ORDER}; bench/noise.sh \
             measures whether it matters here (docs/noise.md)"
        ),
        tune: tune("page_reporting_order", MAX_ORDER),
    })
}

pub fn balloon(root: &Path) -> Outcome {
    let devices = balloons(root);
    let pages = std::fs::read_to_string(under(root, "/proc/vmstat"))
        .ok()
        .and_then(|t| {
            t.lines()
                .find_map(|l| l.strip_prefix("nr_balloon_pages "))
                .and_then(|v| v.trim().parse::<u64>().ok())
        });
    let mut evidence: Vec<_> = devices
        .iter()
        .map(|(dir, _)| ev(&format!("{dir}/device"), VIRTIO_ID_BALLOON))
        .collect();
    if let Some(p) = pages {
        evidence.push(ev("/proc/vmstat nr_balloon_pages", p.to_string()));
    }
    if devices.is_empty() || pages.is_none_or(|p| p == 0) {
        return fine("balloon", evidence);
    }
    Outcome::Found(Finding {
        check: "balloon",
        what: "the balloon is inflated: the host has taken memory from this guest \
               and may take or give more during the run"
            .into(),
        evidence,
        fix: "ask the host to deflate the balloon (or fix its target) before \
              measuring; size runs from MemAvailable as vmscale does"
            .into(),
        tune: Vec::new(),
    })
}

const THP: &str = "/sys/kernel/mm/transparent_hugepage";

pub fn thp(root: &Path) -> Outcome {
    let enabled = read_trimmed(root, &format!("{THP}/enabled")).map(|t| current(&t));
    let defrag = read_trimmed(root, &format!("{THP}/defrag")).map(|t| current(&t));
    let mut evidence = Vec::new();
    if let Some(e) = &enabled {
        evidence.push(ev(&format!("{THP}/enabled"), e.clone()));
    }
    if let Some(d) = &defrag {
        evidence.push(ev(&format!("{THP}/defrag"), d.clone()));
    }
    let mut tunes = Vec::new();
    if enabled.as_deref() == Some("always") {
        tunes.extend(tune("thp", "madvise"));
    }
    if defrag.as_deref() == Some("always") {
        tunes.extend(tune("thp_defrag", "madvise"));
    }
    if tunes.is_empty() {
        return fine("thp", evidence);
    }
    Outcome::Found(Finding {
        check: "thp",
        what: "THP for every mapping (or direct compaction on every THP fault): \
               whether a fault gets a huge page depends on alignment and on free \
               2 MiB blocks left by earlier runs"
            .into(),
        evidence,
        fix: "set enabled and defrag to madvise: vmscale's workloads choose huge \
              pages per mapping (--thp), so their choice stays exact"
            .into(),
        tune: tunes,
    })
}

pub fn khugepaged(root: &Path) -> Outcome {
    let enabled = read_trimmed(root, &format!("{THP}/enabled")).map(|t| current(&t));
    let p = format!("{THP}/khugepaged/defrag");
    let Some(defrag) = read_trimmed(root, &p) else {
        return fine("khugepaged", Vec::new());
    };
    let mut evidence = vec![ev(&p, defrag.clone())];
    let scans = format!("{THP}/khugepaged/full_scans");
    if let Some(n) = read_trimmed(root, &scans) {
        evidence.push(ev(&scans, n));
    }
    if defrag != "1" || enabled.as_deref() == Some("never") {
        return fine("khugepaged", evidence);
    }
    Outcome::Found(Finding {
        check: "khugepaged",
        what: "khugepaged scans memory in the background and compacts to collapse \
               huge pages: it competes for CPU and moves pages under a run"
            .into(),
        evidence,
        fix: "stop its compaction (khugepaged/defrag 0); run --tune does and \
              restores it"
            .into(),
        tune: tune("khugepaged_defrag", "0"),
    })
}

pub fn compaction(root: &Path) -> Outcome {
    let p = "/proc/sys/vm/compaction_proactiveness";
    let Some(v) = read_trimmed(root, p) else {
        return fine("compaction", Vec::new());
    };
    let mut evidence = vec![ev(p, v.clone())];
    if let Ok(t) = std::fs::read_to_string(under(root, "/proc/vmstat")) {
        for key in ["compact_daemon_wake", "compact_stall"] {
            if let Some(n) = t
                .lines()
                .find_map(|l| l.strip_prefix(key)?.strip_prefix(' '))
            {
                evidence.push(ev(&format!("/proc/vmstat {key}"), n.trim()));
            }
        }
    }
    if v == "0" {
        return fine("compaction", evidence);
    }
    Outcome::Found(Finding {
        check: "compaction",
        what: "proactive compaction: kcompactd moves pages in the background when \
               memory is fragmented, taking CPU and invalidating TLB entries \
               during samples"
            .into(),
        evidence,
        fix: "set vm.compaction_proactiveness to 0 for the run (run --tune does \
              and restores it)"
            .into(),
        tune: tune("compaction_proactiveness", "0"),
    })
}

pub fn numa_balancing(root: &Path) -> Outcome {
    let p = "/proc/sys/kernel/numa_balancing";
    let Some(v) = read_trimmed(root, p) else {
        return fine("numa-balancing", Vec::new());
    };
    let nodes = crate::machine::topology::read_nodes(root).len();
    let mut evidence = vec![ev(p, v.clone())];
    evidence.push(ev(
        "/sys/devices/system/node/online",
        format!("{nodes} node(s)"),
    ));
    // On one node the kernel never scans, whatever the setting.
    if v == "0" || nodes < 2 {
        return fine("numa-balancing", evidence);
    }
    Outcome::Found(Finding {
        check: "numa-balancing",
        what: "automatic NUMA balancing unmaps pages to sample accesses and \
               migrates them: extra faults and migrations inside every sample"
            .into(),
        evidence,
        fix: "turn it off unless it is what you measure (run --tune sets 0, \
              except for the numa workloads, and restores it)"
            .into(),
        tune: tune("numa_balancing", "0"),
    })
}

pub fn swap(root: &Path) -> Outcome {
    let text = std::fs::read_to_string(under(root, "/proc/swaps")).ok();
    let Some(text) = text else {
        return fine("swap", Vec::new());
    };
    let devices: Vec<&str> = text
        .lines()
        .skip(1)
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    let shown = if devices.is_empty() {
        "no swap device".to_string()
    } else {
        devices.join(", ")
    };
    let evidence = vec![ev("/proc/swaps", shown)];
    if devices.is_empty() {
        return fine("swap", evidence);
    }
    Outcome::Found(Finding {
        check: "swap",
        what: "swap is on: under memory pressure reclaim writes the workload's \
               pages out and faults become major faults"
            .into(),
        evidence,
        fix: "size runs well below MemAvailable (vmscale refuses larger ones) or \
              turn swap off for the measurement: swapoff -a, then swapon -a"
            .into(),
        tune: Vec::new(),
    })
}

/// The nodes hold this share of MemTotal or less: memory the kernel has
/// not yet given to its nodes' free lists.
const NODES_SHORT: f64 = 0.9;

/// Memory the kernel initialises lazily after boot, or hot-adds: the
/// nodes' MemTotal well below the machine's, or growing while doctor
/// watched (`before`, `after` at the ends of its window).
pub fn lazy_memory(root: &Path, before: &MemorySize, after: &MemorySize) -> Outcome {
    let Some(total) = after.total_kib.filter(|_| after.nodes > 0) else {
        return fine("lazy-memory", Vec::new());
    };
    let mut evidence = vec![
        ev("/proc/meminfo MemTotal", memory_kib(total)),
        ev(
            "/sys/devices/system/node/node*/meminfo MemTotal",
            format!(
                "{} over {} node(s)",
                memory_kib(after.nodes_kib),
                after.nodes
            ),
        ),
    ];
    let cmdline = read_trimmed(root, "/proc/cmdline").unwrap_or_default();
    let lazy: Vec<&str> = cmdline
        .split_whitespace()
        .filter(|w| {
            w.starts_with("deferred_init")
                || w.starts_with("memhp_default_state")
                || w.starts_with("memory_hotplug")
        })
        .collect();
    if !lazy.is_empty() {
        evidence.push(ev("/proc/cmdline", lazy.join(" ")));
    }
    let grew = after.nodes_kib.saturating_sub(before.nodes_kib);
    if grew > 0 {
        evidence.push(ev(
            "node MemTotal while watched",
            format!("grew by {}", memory_kib(grew)),
        ));
    }
    let short = (after.nodes_kib as f64) <= NODES_SHORT * total as f64;
    if !short && grew == 0 {
        return fine("lazy-memory", evidence);
    }
    Outcome::Found(Finding {
        check: "lazy-memory",
        what: format!(
            "the nodes hold {} of {} MemTotal{}: memory initialised lazily or \
             hot-added joins the free lists while runs fault, so some faults \
             take fresh pages whose first touch also pays for initialising \
             them (and on a VM for the host backing them), and fault cost \
             falls as the memory fills in; samples flagged noisy say when it \
             grew (noise memory_grew_kib)",
            memory_kib(after.nodes_kib),
            memory_kib(total),
            if grew > 0 {
                ", and grew while watched"
            } else {
                ""
            }
        ),
        evidence,
        fix: "measure once the nodes' MemTotal has reached MemTotal (touch the \
              memory once first, e.g. a pft run of most of MemAvailable), or \
              boot without lazy initialisation (drop deferred_init=lazy from \
              the kernel command line) and online hot-added memory before \
              measuring"
            .into(),
        tune: Vec::new(),
    })
}

fn current(text: &str) -> String {
    crate::knobs::registry::current(text)
}

#[cfg(test)]
mod lazy_tests {
    use super::*;

    fn size(total: u64, nodes: u64) -> MemorySize {
        MemorySize {
            total_kib: Some(total),
            nodes_kib: nodes,
            nodes: 1,
        }
    }

    #[test]
    fn nodes_short_of_memtotal_or_growing_are_lazy_memory() {
        let root = Path::new("/nonexistent-vmscale-root");
        // The machine: 5.8 GiB on the node of 23.5 GiB.
        let (total, node) = (24_641_536, 6_081_740);
        let Outcome::Found(f) = lazy_memory(root, &size(total, node), &size(total, node)) else {
            panic!("short nodes not seen")
        };
        assert!(f.what.contains("5.8 GiB of 23.5 GiB"), "{}", f.what);
        // Grown while watched, even when nearly complete.
        let Outcome::Found(f) = lazy_memory(root, &size(total, total - 4096), &size(total, total))
        else {
            panic!("growth not seen")
        };
        assert!(f.evidence.iter().any(|e| e.value.starts_with("grew by")));
        assert!(matches!(
            lazy_memory(root, &size(total, total), &size(total, total)),
            Outcome::Clear(_)
        ));
        assert!(matches!(
            lazy_memory(root, &MemorySize::default(), &MemorySize::default()),
            Outcome::Clear(_)
        ));
    }
}
