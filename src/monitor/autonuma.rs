//! The NUMA-balancing counters of a /proc/vmstat delta, the local percent
//! of hint faults, and mmtests' "AutoNUMA cost" model (seed 001).
//!
//! The cost model is mmtests' (bin/lib/MMTests/ExtractVmstat*.pm):
//! `(7 * numa_pte_updates + 5000 * numa_hint_faults + 19 * numa_pages_migrated) / 1e6`,
//! with 7 = Ca (56 bytes / 8, the cost of touching a PTE), 5000 the cost of a
//! hint fault and 19 = Ca + 12 for isolating a page. mmtests also defines a
//! page-copy term (Cpagerw) but, by a stray semicolon, never adds it; we
//! follow the numbers it prints. Seed 001's first column (245706197 PTE
//! updates, 659753 hint faults, 5412140 pages migrated) gives 5121, which
//! the seed prints as "5121%". The value is in model units, not percent.

use std::collections::BTreeMap;

/// Counters reported per test, in the order shown.
pub const COUNTERS: &[&str] = &[
    "numa_hint_faults",
    "numa_hint_faults_local",
    "numa_pte_updates",
    "numa_huge_pte_updates",
    "numa_pages_migrated",
    "pgmigrate_success",
    "pgmigrate_fail",
];

/// mmtests' AutoNUMA cost for the counters of one delta.
pub fn cost(pte_updates: f64, hint_faults: f64, pages_migrated: f64) -> f64 {
    (7.0 * pte_updates + 5000.0 * hint_faults + 19.0 * pages_migrated) / 1e6
}

/// Figures from a vmstat delta: each counter (0 when absent or unchanged),
/// the local percent of hint faults (100 without hint faults, as mmtests),
/// and the cost.
pub fn figures(delta: &BTreeMap<String, i64>) -> BTreeMap<String, f64> {
    let get = |k: &str| delta.get(k).copied().unwrap_or(0) as f64;
    let mut f: BTreeMap<String, f64> = COUNTERS.iter().map(|k| (k.to_string(), get(k))).collect();
    let hint = get("numa_hint_faults");
    f.insert(
        "numa_hint_local%".into(),
        if hint > 0.0 {
            get("numa_hint_faults_local") * 100.0 / hint
        } else {
            100.0
        },
    );
    f.insert(
        "autonuma_cost".into(),
        cost(get("numa_pte_updates"), hint, get("numa_pages_migrated")),
    );
    f
}

/// Which of [`COUNTERS`] this kernel does not export (CONFIG_NUMA_BALANCING off).
pub fn missing(vmstat: &crate::monitor::vmstat::Vmstat) -> Vec<&'static str> {
    COUNTERS
        .iter()
        .copied()
        .filter(|k| !vmstat.contains_key(*k))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seed_001_cost() {
        let c = cost(245706197.0, 659753.0, 5412140.0);
        assert!((c - 5121.5).abs() < 0.1, "{c}");
    }

    #[test]
    fn local_percent() {
        let d = BTreeMap::from([
            ("numa_hint_faults".to_string(), 659753),
            ("numa_hint_faults_local".to_string(), 381604),
        ]);
        let f = figures(&d);
        assert_eq!(f["numa_hint_local%"].floor(), 57.0);
        assert_eq!(f["pgmigrate_fail"], 0.0);
    }

    #[test]
    fn live_kernel_exports_the_counters() {
        let live = crate::monitor::vmstat::read_live();
        let miss = missing(&live);
        if live.contains_key("numa_pte_updates") {
            assert!(miss.is_empty(), "NUMA balancing kernel lacks {miss:?}");
        } else {
            eprintln!("kernel without CONFIG_NUMA_BALANCING: missing {miss:?}");
        }
        assert!(live.contains_key("pgmigrate_success"));
    }
}
