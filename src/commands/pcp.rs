//! `vmscale pcp`: per-CPU page-list occupancy (count, high, batch per CPU
//! and zone) and the memory the lists hold.

use std::path::Path;

use super::{Error, Result};
use crate::machine::memory;
use crate::monitor::zoneinfo;

pub fn pcp(root: &Path, json: bool, per_cpu: bool) -> Result<()> {
    let zones = zoneinfo::read(root).ok_or_else(|| {
        Error::Failed(format!(
            "cannot read {}: per-CPU page lists are only visible there",
            root.join("proc/zoneinfo").display()
        ))
    })?;
    let page = memory::page_size(root).unwrap_or(4096);
    if json {
        let t = zoneinfo::totals(&zones);
        super::print_json(&serde_json::json!({
            "page_size": page,
            "held_pages": t.held,
            "held_bytes": t.held * page,
            "high_pages": t.high,
            "batch_max": t.batch_max,
            "zones": zones,
        }))
    } else {
        super::output::text(&crate::report::pcp::text(&zones, page, per_cpu))
    }
}
