//! Per-CPU page lists (per_cpu_pagesets) from /proc/zoneinfo: count, high
//! and batch for every CPU of every zone, and the memory they hold (seed
//! 003's "memory trapped in the per_cpu_pagesets").

use serde::{Deserialize, Serialize};
use std::path::Path;

/// One CPU's page list in one zone, in pages.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Pageset {
    pub cpu: usize,
    pub count: u64,
    pub high: u64,
    pub batch: u64,
}

/// One zone of one node.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Zone {
    pub node: usize,
    pub name: String,
    pub free_pages: Option<u64>,
    pub managed_pages: Option<u64>,
    pub pagesets: Vec<Pageset>,
}

impl Zone {
    /// Pages held in this zone's per-CPU lists.
    pub fn held(&self) -> u64 {
        self.pagesets.iter().map(|p| p.count).sum()
    }

    /// Pages the lists may hold if each fills to its high mark.
    pub fn high_sum(&self) -> u64 {
        self.pagesets.iter().map(|p| p.high).sum()
    }
}

/// Totals over all zones, in pages.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Totals {
    pub held: u64,
    pub high: u64,
    /// The largest batch of any list (the allocator's refill size).
    pub batch_max: u64,
    pub lists: usize,
}

pub fn totals(zones: &[Zone]) -> Totals {
    let mut t = Totals::default();
    for z in zones {
        t.held += z.held();
        t.high += z.high_sum();
        t.lists += z.pagesets.len();
        for p in &z.pagesets {
            t.batch_max = t.batch_max.max(p.batch);
        }
    }
    t
}

/// Reads `<root>/proc/zoneinfo`; `None` if it cannot be read.
pub fn read(root: &Path) -> Option<Vec<Zone>> {
    let text = std::fs::read_to_string(root.join("proc/zoneinfo")).ok()?;
    Some(parse(&text))
}

/// /proc/zoneinfo of the machine (under `VMSCALE_MACHINE_ROOT` when set).
pub fn read_live() -> Option<Vec<Zone>> {
    read(&crate::machine::root())
}

/// Parses zoneinfo text. Unknown lines are ignored, so older kernels
/// (without high_min/high_max) and newer ones both parse.
pub fn parse(text: &str) -> Vec<Zone> {
    let mut zones: Vec<Zone> = Vec::new();
    for line in text.lines() {
        let t = line.trim();
        if let Some(rest) = t.strip_prefix("Node ") {
            // "Node 0, zone   Normal"
            let mut parts = rest.splitn(2, ',');
            let node = parts.next().and_then(|n| n.trim().parse().ok());
            let name = parts
                .next()
                .and_then(|z| z.trim().strip_prefix("zone"))
                .map(|z| z.trim().to_string());
            if let (Some(node), Some(name)) = (node, name) {
                zones.push(Zone {
                    node,
                    name,
                    free_pages: None,
                    managed_pages: None,
                    pagesets: Vec::new(),
                });
            }
            continue;
        }
        let Some(zone) = zones.last_mut() else {
            continue;
        };
        if let Some(v) = t.strip_prefix("pages free") {
            zone.free_pages = v.trim().parse().ok();
            continue;
        }
        // Watermark lines ("high 37", "managed 3840") have no colon; the
        // pageset fields ("high:  0") do.
        let (key, value) = match t.split_once(':') {
            Some((k, v)) => (k.trim(), v.trim()),
            None => {
                let mut it = t.split_whitespace();
                if it.next() == Some("managed") {
                    zone.managed_pages = it.next().and_then(|v| v.parse().ok());
                }
                continue;
            }
        };
        let Ok(num) = value.parse::<u64>() else {
            continue;
        };
        match key {
            "cpu" => zone.pagesets.push(Pageset {
                cpu: num as usize,
                count: 0,
                high: 0,
                batch: 0,
            }),
            "count" | "high" | "batch" => {
                if let Some(p) = zone.pagesets.last_mut() {
                    match key {
                        "count" => p.count = num,
                        "high" => p.high = num,
                        _ => p.batch = num,
                    }
                }
            }
            _ => {}
        }
    }
    zones
}

#[cfg(test)]
mod tests {
    use super::*;

    const SAMPLE: &str = "\
Node 0, zone   Normal
  pages free     1000
        min      25
        high     37
        managed  5000
  pagesets
    cpu: 0
              count:    10
              high:     100
              batch:    7
              high_min: 15
  vm stats threshold: 4
    cpu: 1
              count: 3
              high:  90
              batch: 7
  node_unreclaimable:  0
  start_pfn:           1
Node 1, zone  Movable
Node 1, zone   Normal
  pages free     77
  pagesets
    cpu: 0
              count: 5
              high:  60
              batch: 31
";

    #[test]
    fn parses_pagesets_and_ignores_watermarks() {
        let z = parse(SAMPLE);
        assert_eq!(z.len(), 3);
        assert_eq!((z[0].node, z[0].name.as_str()), (0, "Normal"));
        assert_eq!(z[0].free_pages, Some(1000));
        assert_eq!(z[0].managed_pages, Some(5000));
        assert_eq!(
            z[0].pagesets,
            vec![
                Pageset {
                    cpu: 0,
                    count: 10,
                    high: 100,
                    batch: 7
                },
                Pageset {
                    cpu: 1,
                    count: 3,
                    high: 90,
                    batch: 7
                }
            ]
        );
        assert!(z[1].pagesets.is_empty());
        let t = totals(&z);
        assert_eq!((t.held, t.high, t.batch_max, t.lists), (18, 250, 31, 3));
    }

    #[test]
    fn live_zoneinfo_has_lists() {
        let Some(z) = read_live() else {
            eprintln!("skip: /proc/zoneinfo unreadable");
            return;
        };
        assert!(z.iter().any(|z| !z.pagesets.is_empty()));
    }
}
