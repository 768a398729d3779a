//! /proc/vmstat snapshots and their deltas.

use std::collections::BTreeMap;
use std::path::Path;

/// The noise key of the faults vmscale itself took during a sample (its
/// tasks and all it did around them, by its own and its children's
/// rusage), read around the vmstat reads: pgfault less it is what other
/// processes faulted meanwhile.
pub const OWN_FAULTS: &str = "own_faults";

/// /proc/vmstat as name -> value.
pub type Vmstat = BTreeMap<String, u64>;

/// Reads `<root>/proc/vmstat`; an absent file gives an empty map.
pub fn read(root: &Path) -> Vmstat {
    parse(&std::fs::read_to_string(root.join("proc/vmstat")).unwrap_or_default())
}

/// /proc/vmstat of the machine (under `VMSCALE_MACHINE_ROOT` when set).
pub fn read_live() -> Vmstat {
    read(&crate::machine::root())
}

pub fn parse(text: &str) -> Vmstat {
    text.lines()
        .filter_map(|l| {
            let mut it = l.split_whitespace();
            Some((it.next()?.to_string(), it.next()?.parse().ok()?))
        })
        .collect()
}

/// after - before for every counter present in both, kept when non-zero.
/// (Gauges such as nr_free_pages can move down, hence signed.)
pub fn delta(before: &Vmstat, after: &Vmstat) -> BTreeMap<String, i64> {
    after
        .iter()
        .filter_map(|(k, &a)| {
            let b = *before.get(k)?;
            let d = a as i64 - b as i64;
            (d != 0).then(|| (k.clone(), d))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_deltas() {
        let a = parse("pgfault 10\nnr_free_pages 100\nthp_fault_alloc 0\n");
        let b = parse("pgfault 25\nnr_free_pages 90\nthp_fault_alloc 0\nnew 3\n");
        let d = delta(&a, &b);
        assert_eq!(d.get("pgfault"), Some(&15));
        assert_eq!(d.get("nr_free_pages"), Some(&-10));
        assert!(!d.contains_key("thp_fault_alloc"));
        assert!(!d.contains_key("new"));
    }

    #[test]
    fn live_has_pgfault() {
        assert!(read_live().contains_key("pgfault"));
    }
}
