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
/// colours of the LLC and the L2 (size / (ways x page size)).
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
    }
    v
}
