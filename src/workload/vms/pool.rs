//! case-hugetlb: the hugetlb pool grown to mem/3 in huge pages and shrunk
//! back to what it was (the script's two writes of nr_hugepages), through
//! the set-up, which journals the count first so that a crash between
//! the writes is undone at the next start. The kernel often gives fewer
//! pages than asked (fragmented memory): that is measured, not refused.

use std::collections::BTreeMap;

use crate::error::Result;

/// The pool the case asks for: mem/3 in huge pages.
pub fn pages(mem: u64, huge_page: u64) -> u64 {
    (mem / 3 / huge_page.max(1)).max(1)
}

/// One sample: the figures, throughput the bytes of huge pages the
/// kernel gave, over the time to give them and take them back.
pub fn sample(mem: u64, huge_page: u64) -> Result<BTreeMap<String, f64>> {
    let mut setup = crate::setup::Setup::new()?;
    let c = setup.hugetlb_cycle(pages(mem, huge_page))?;
    setup.finish()?;
    let secs = (c.grow_ns + c.shrink_ns) as f64 / 1e9;
    let bytes = (c.got * huge_page) as f64;
    let mut out = BTreeMap::new();
    out.insert("throughput".into(), bytes / 1024.0 / secs.max(1e-9));
    out.insert("wall".into(), secs);
    out.insert("hugetlb.asked".into(), c.asked as f64);
    out.insert("hugetlb.got".into(), c.got as f64);
    out.insert("hugetlb.grow_s".into(), c.grow_ns as f64 / 1e9);
    out.insert("hugetlb.shrink_s".into(), c.shrink_ns as f64 / 1e9);
    Ok(out)
}
