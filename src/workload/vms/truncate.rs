//! case-truncate: each task's file is read into the page cache (untimed,
//! as the script's `cat`), then every task drops its file's pages at once
//! (the script's parallel `rm`: here ftruncate to 0 of the unnamed file,
//! the same truncate_inode_pages path). Bytes are the file's size.

use std::io::Read;

use crate::exec::{Task, TaskReport};
use crate::workload::fault_map::OwnedFile;

use super::usemem::timed;

pub fn task(files: &[OwnedFile], t: &Task) -> TaskReport {
    let mut r = TaskReport::default();
    let Some(f) = files.get(t.index) else {
        r.fail("no file for this task");
        return r;
    };
    let mut file = &f.file;
    let size = file.metadata().map(|m| m.len()).unwrap_or(0);
    let mut buf = vec![0u8; 1 << 16];
    loop {
        match file.read(&mut buf) {
            Ok(0) => break,
            Ok(_) => {}
            Err(e) => {
                r.fail(&format!("reading the file into the page cache: {e}"));
                t.wait_start();
                return r;
            }
        }
    }
    timed(r, t, 0, |r, _| match f.file.set_len(0) {
        Ok(()) => size,
        Err(e) => {
            r.fail(&format!("truncate failed: {e}"));
            0
        }
    })
}
