//! CPU caches from /sys/devices/system/cpu/cpuN/cache/indexM, de-duplicated
//! into instances, summarised per level, and the page colours they imply.

use super::topology::read_cpulist;
use super::{read_num, read_trimmed};
use serde::{Deserialize, Serialize};
use std::collections::HashSet;
use std::path::Path;

/// One cache instance, de-duplicated across the CPUs that share it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Cache {
    pub level: u32,
    /// "Data", "Instruction" or "Unified".
    pub kind: String,
    pub size_bytes: Option<u64>,
    pub ways: Option<u64>,
    pub line_size: Option<u64>,
    pub sets: Option<u64>,
    pub shared_cpus: Vec<usize>,
}

/// One cache level and kind summarised over its instances.
#[derive(Debug, Clone, PartialEq)]
pub struct CacheLevel {
    /// The first instance: its geometry (see `uniform`) and the CPUs
    /// sharing it, as an example.
    pub first: Cache,
    /// How many separate instances exist.
    pub instances: usize,
    /// False if instances differ in geometry (hybrid CPUs).
    pub uniform: bool,
}

/// Parses a sysfs cache size ("32K", "1024K", "16M", "1G", "512") to bytes.
pub fn parse_size(text: &str) -> Option<u64> {
    let t = text.trim();
    let digits = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (num, suffix) = t.split_at(digits);
    let num: u64 = num.parse().ok()?;
    let shift = match suffix.trim().to_ascii_uppercase().as_str() {
        "" | "B" => 0,
        "K" | "KB" | "KIB" => 10,
        "M" | "MB" | "MIB" => 20,
        "G" | "GB" | "GIB" => 30,
        _ => return None,
    };
    num.checked_mul(1u64 << shift)
}

/// Orders cache kinds Data, Instruction, Unified, then anything else.
fn kind_rank(kind: &str) -> u8 {
    match kind {
        "Data" => 0,
        "Instruction" => 1,
        "Unified" => 2,
        _ => 3,
    }
}

/// Every cache instance seen by the given CPUs, one entry per instance
/// (same level, kind and shared CPU list), sorted by level, kind, CPUs.
pub fn read_caches(root: &Path, cpus: &[usize]) -> Vec<Cache> {
    let mut caches: Vec<Cache> = Vec::new();
    // An instance is read whole once: the CPUs that share it only say
    // which it is (1024 CPUs name each L3 16 times).
    let mut seen: HashSet<(u32, String, Vec<usize>)> = HashSet::new();
    for &cpu in cpus {
        for index in cache_indices(root, cpu) {
            let dir = format!("/sys/devices/system/cpu/cpu{cpu}/cache/index{index}");
            let Some(key) = instance_key(root, &dir, cpu) else {
                continue;
            };
            if seen.insert(key.clone()) {
                caches.push(read_index(root, &dir, key));
            }
        }
    }
    caches.sort_by(|a, b| {
        (a.level, kind_rank(&a.kind), &a.kind, &a.shared_cpus).cmp(&(
            b.level,
            kind_rank(&b.kind),
            &b.kind,
            &b.shared_cpus,
        ))
    });
    caches
}

/// What names an instance (level, kind, shared CPUs); `None` if its
/// level is unreadable.
fn instance_key(root: &Path, dir: &str, cpu: usize) -> Option<(u32, String, Vec<usize>)> {
    Some((
        read_num(root, &format!("{dir}/level"))?,
        read_trimmed(root, &format!("{dir}/type")).unwrap_or_else(|| "Unknown".into()),
        read_cpulist(root, &format!("{dir}/shared_cpu_list"))
            .filter(|l| !l.is_empty())
            .unwrap_or_else(|| vec![cpu]),
    ))
}

/// The M of every indexM directory of one CPU, ascending.
fn cache_indices(root: &Path, cpu: usize) -> Vec<u32> {
    super::numbered(
        root,
        &format!("/sys/devices/system/cpu/cpu{cpu}/cache"),
        "index",
    )
}

/// The rest of one index directory, named by its `key`.
fn read_index(root: &Path, dir: &str, key: (u32, String, Vec<usize>)) -> Cache {
    let (level, kind, shared_cpus) = key;
    Cache {
        level,
        kind,
        size_bytes: read_trimmed(root, &format!("{dir}/size")).and_then(|s| parse_size(&s)),
        ways: read_num(root, &format!("{dir}/ways_of_associativity")),
        line_size: read_num(root, &format!("{dir}/coherency_line_size")),
        sets: read_num(root, &format!("{dir}/number_of_sets")),
        shared_cpus,
    }
}

/// Summarises instances per (level, kind), in the order of `caches`.
pub fn levels(caches: &[Cache]) -> Vec<CacheLevel> {
    let mut out: Vec<CacheLevel> = Vec::new();
    for c in caches {
        match out
            .iter_mut()
            .find(|l| l.first.level == c.level && l.first.kind == c.kind)
        {
            Some(l) => {
                let f = &l.first;
                l.instances += 1;
                l.uniform &= (f.size_bytes, f.ways, f.line_size, f.sets)
                    == (c.size_bytes, c.ways, c.line_size, c.sets);
            }
            None => out.push(CacheLevel {
                first: c.clone(),
                instances: 1,
                uniform: true,
            }),
        }
    }
    out
}

/// The data-holding cache (unified, else data) at `level`, if any.
pub fn data_cache_at(caches: &[Cache], level: u32) -> Option<&Cache> {
    let at = |kind: &str| caches.iter().find(|c| c.level == level && c.kind == kind);
    at("Unified").or_else(|| at("Data"))
}

/// The last-level cache: the highest-level unified or data cache.
pub fn last_level(caches: &[Cache]) -> Option<&Cache> {
    let top = caches
        .iter()
        .filter(|c| c.kind == "Unified" || c.kind == "Data")
        .map(|c| c.level)
        .max()?;
    data_cache_at(caches, top)
}

/// Page colours of a cache: size / (ways x page size), i.e. how many
/// page-sized slices one way holds. `None` if a figure is unknown or zero
/// (fully associative caches report 0 ways).
pub fn colours(cache: &Cache, page_size: Option<u64>) -> Option<u64> {
    let page = page_size.filter(|&p| p > 0)?;
    let way_bytes = match (cache.size_bytes, cache.ways) {
        (Some(size), Some(ways)) if ways > 0 => size / ways,
        _ => cache.sets? * cache.line_size?,
    };
    (way_bytes >= page).then_some(way_bytes / page)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cache(level: u32, kind: &str, size: u64, ways: u64, shared: Vec<usize>) -> Cache {
        Cache {
            level,
            kind: kind.into(),
            size_bytes: Some(size),
            ways: Some(ways),
            line_size: Some(64),
            sets: Some(size / ways / 64),
            shared_cpus: shared,
        }
    }

    #[test]
    fn sizes_with_suffixes() {
        assert_eq!(parse_size("32K"), Some(32 * 1024));
        assert_eq!(parse_size("1024K\n"), Some(1 << 20));
        assert_eq!(parse_size("16M"), Some(16 << 20));
        assert_eq!(parse_size("1G"), Some(1 << 30));
        assert_eq!(parse_size("512"), Some(512));
        assert_eq!(parse_size("48 KiB"), Some(48 * 1024));
        assert_eq!(parse_size("K"), None);
        assert_eq!(parse_size("12X"), None);
        assert_eq!(parse_size(""), None);
    }

    #[test]
    fn levels_count_instances_and_spot_mixed_geometry() {
        let caches = vec![
            cache(1, "Data", 32 << 10, 8, vec![0]),
            cache(1, "Data", 48 << 10, 12, vec![1]),
            cache(3, "Unified", 16 << 20, 16, vec![0, 1]),
        ];
        let l = levels(&caches);
        assert_eq!(l.len(), 2);
        assert_eq!((l[0].instances, l[0].uniform), (2, false));
        assert_eq!((l[1].instances, l[1].uniform), (1, true));
        assert_eq!(l[1].first.shared_cpus, vec![0, 1]);
    }

    #[test]
    fn llc_and_colours() {
        let caches = vec![
            cache(1, "Data", 32 << 10, 8, vec![0]),
            cache(1, "Instruction", 32 << 10, 8, vec![0]),
            cache(2, "Unified", 1 << 20, 16, vec![0]),
            cache(3, "Unified", 16 << 20, 16, vec![0, 1]),
        ];
        let llc = last_level(&caches).map(|c| c.level);
        assert_eq!(llc, Some(3));
        assert_eq!(colours(&caches[3], Some(4096)), Some(256));
        assert_eq!(colours(&caches[2], Some(4096)), Some(16));
        // L1d: 4 KiB per way is exactly one colour.
        assert_eq!(colours(&caches[0], Some(4096)), Some(1));
        assert_eq!(colours(&caches[3], None), None);
        assert!(last_level(&[]).is_none());
    }

    #[test]
    fn colours_fall_back_to_sets_and_line() {
        let mut c = cache(2, "Unified", 1 << 20, 16, vec![0]);
        c.ways = Some(0);
        assert_eq!(colours(&c, Some(4096)), Some(16));
        c.sets = None;
        assert_eq!(colours(&c, Some(4096)), None);
    }
}
