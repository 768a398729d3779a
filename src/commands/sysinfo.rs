//! `vmscale sysinfo`: the machine as vmscale reads it.

use super::Result;
use crate::machine::Snapshot;
use std::path::Path;

pub fn sysinfo(root: &Path, json: bool) -> Result<()> {
    let snap = Snapshot::read(root);
    if json {
        super::print_json(&with_colours(&snap))
    } else {
        super::output::text(&crate::report::sysinfo::text(&snap))
    }
}

/// The snapshot as JSON plus what the text derives from it: the page
/// colours of the LLC and the L2 (size / (ways x page size)) and the
/// counts of the "CPUs" and "NUMA nodes" lines.
pub fn with_colours(snap: &Snapshot) -> serde_json::Value {
    let mut v = serde_json::to_value(snap).unwrap_or_default();
    if let Some(obj) = v.as_object_mut() {
        obj.insert(
            "page_colours".into(),
            serde_json::json!({
                "llc_level": snap.llc().map(|c| c.level),
                "llc": snap.llc_colours(),
                "l2": snap.l2_colours(),
            }),
        );
        obj.insert("counts".into(), counts(snap));
    }
    v
}

/// What the text's "CPUs" and "NUMA nodes" lines count; `null` where the
/// topology does not say (no package or core ids).
pub fn counts(snap: &Snapshot) -> serde_json::Value {
    let known = |n: usize| (n > 0).then_some(n);
    serde_json::json!({
        "online_cpus": snap.cpus.len(),
        "cores": known(snap.cores().len()),
        "threads_per_core": snap.smt_per_core(),
        "packages": known(snap.packages().len()),
        "dies": known(snap.dies().len()),
        "nodes": snap.nodes.len(),
        "nodes_with_cpus": snap.nodes.iter().filter(|n| !n.cpus.is_empty()).count(),
        "mem_total_kib": snap.mem_total_kib,
    })
}
