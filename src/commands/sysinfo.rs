//! `vmscale sysinfo`: the machine as vmscale reads it.

use super::Result;
use crate::machine::Snapshot;
use std::path::Path;

pub fn sysinfo(root: &Path, json: bool) -> Result<()> {
    let snap = Snapshot::read(root);
    if json {
        super::print_json(&snap)
    } else {
        print!("{}", crate::report::sysinfo::text(&snap));
        Ok(())
    }
}
