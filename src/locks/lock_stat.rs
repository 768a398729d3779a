//! /proc/lock_stat (CONFIG_LOCK_STAT): per lock class contentions, wait
//! time and acquisitions, read before and after a sample and differenced.

use std::collections::BTreeMap;

use super::pairing::LockRow;

pub const PATH: &str = "/proc/lock_stat";

/// One class's cumulative counters (wait times in nanoseconds).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Class {
    pub contentions: u64,
    pub wait_max_ns: u64,
    pub wait_total_ns: u64,
    pub acquisitions: u64,
}

/// The class lines of a lock_stat text: `name: con-bounces contentions
/// waittime-min waittime-max waittime-total waittime-avg acq-bounces
/// acquisitions holdtime-min holdtime-max holdtime-total holdtime-avg`,
/// times in microseconds.
pub fn parse(text: &str) -> BTreeMap<String, Class> {
    let mut out = BTreeMap::new();
    for line in text.lines() {
        let Some((name, rest)) = line.rsplit_once(':') else {
            continue;
        };
        let nums: Vec<f64> = rest
            .split_whitespace()
            .map_while(|t| t.parse().ok())
            .collect();
        if nums.len() != 12 || rest.split_whitespace().count() != 12 {
            continue;
        }
        let ns = |us: f64| (us * 1000.0).round() as u64;
        out.insert(
            name.trim().to_string(),
            Class {
                contentions: nums[1] as u64,
                wait_max_ns: ns(nums[3]),
                wait_total_ns: ns(nums[4]),
                acquisitions: nums[7] as u64,
            },
        );
    }
    out
}

/// The classes that moved between two readings, as lock rows.
pub fn delta(before: &BTreeMap<String, Class>, after: &BTreeMap<String, Class>) -> Vec<LockRow> {
    after
        .iter()
        .filter_map(|(name, a)| {
            let b = before.get(name).copied().unwrap_or_default();
            let acq = a.acquisitions.saturating_sub(b.acquisitions);
            let con = a.contentions.saturating_sub(b.contentions);
            (acq + con > 0).then(|| LockRow {
                source: "lock_stat".into(),
                name: name.clone(),
                acquisitions: acq,
                contended: con,
                wait_ns: a.wait_total_ns.saturating_sub(b.wait_total_ns),
                // The maximum is cumulative: only a new maximum is this sample's.
                max_wait_ns: if a.wait_max_ns > b.wait_max_ns {
                    a.wait_max_ns
                } else {
                    0
                },
            })
        })
        .collect()
}

/// The current reading, if this kernel has lock_stat.
pub fn read() -> Option<BTreeMap<String, Class>> {
    std::fs::read_to_string(PATH).ok().map(|t| parse(&t))
}

#[cfg(test)]
mod tests {
    use super::*;

    const BEFORE: &str = "lock_stat version 0.4\n\
        ---------------------------------------------------------------------\n\
        class name con-bounces contentions waittime-min waittime-max waittime-total waittime-avg acq-bounces acquisitions holdtime-min holdtime-max holdtime-total holdtime-avg\n\
        \n\
        &(&zone->lock)->rlock:  10  12  0.10  5.00  20.00  1.66  30  400  0.05  3.00  50.00  0.12\n\
        &mm->mmap_lock-R:  1  1  0.20  0.20  0.20  0.20  2  100  0.01  1.00  9.00  0.09\n\
        -----------------\n\
        &mm->mmap_lock  1  [<00000000deadbeef>] do_user_addr_fault+0x1b6/0x6a0\n";

    #[test]
    fn class_lines_parse_and_differences_are_per_sample() {
        let b = parse(BEFORE);
        assert_eq!(b.len(), 2, "{b:?}");
        let z = b["&(&zone->lock)->rlock"];
        assert_eq!(
            (z.contentions, z.wait_total_ns, z.acquisitions),
            (12, 20_000, 400)
        );
        let after = BEFORE
            .replace("10  12  0.10  5.00  20.00", "11  15  0.10  9.00  29.50")
            .replace("30  400", "31  450");
        let d = delta(&b, &parse(&after));
        assert_eq!(d.len(), 1, "{d:?}");
        assert_eq!(d[0].name, "&(&zone->lock)->rlock");
        assert_eq!(
            (d[0].contended, d[0].acquisitions, d[0].wait_ns),
            (3, 50, 9_500)
        );
        assert_eq!(d[0].max_wait_ns, 9_000);
    }
}
