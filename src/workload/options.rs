//! Helpers the workloads' option parsers share: comma lists, and the machine facts
//! options default to.

use crate::machine::Snapshot;

/// A comma-separated list, trimmed, empty items left out.
pub fn list(text: &str) -> Vec<String> {
    text.split(',')
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .collect()
}

/// The base page size (4096 if unknown).
pub fn page_size(m: &Snapshot) -> u64 {
    m.page_size.unwrap_or(4096)
}

/// The online CPU count, at least 1: what `--tasks auto` goes up to.
pub fn online(m: &Snapshot) -> usize {
    m.cpus.len().max(1)
}

/// The coherency line size of the first-level data cache (64 if unknown).
pub fn line_size(m: &Snapshot) -> u64 {
    m.caches
        .iter()
        .filter(|c| c.level == 1 && c.kind != "Instruction")
        .find_map(|c| c.line_size)
        .unwrap_or(64)
}
