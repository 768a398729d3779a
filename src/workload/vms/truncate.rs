//! case-truncate: each task's file is read into the page cache (untimed,
//! as the script's `cat`), then every task drops its file's pages at once
//! (the script's parallel `rm`: here ftruncate to 0 of the unnamed file,
//! the same truncate_inode_pages path). Bytes are the file's size.
//! case-truncate-seq: one task reads all the files in, then truncates them
//! one after the other (the script's `cat` loop, then one `rm` of all).

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
    truncated(r, std::slice::from_ref(f), t)
}

/// truncate-seq's one task: every file, in order.
pub fn sequential(files: &[OwnedFile], t: &Task) -> TaskReport {
    truncated(TaskReport::default(), files, t)
}

/// Reads `files` into the page cache, then (timed) truncates each.
fn truncated(mut r: TaskReport, files: &[OwnedFile], t: &Task) -> TaskReport {
    let mut buf = vec![0u8; 1 << 16];
    for f in files {
        let mut file = &f.file;
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
    }
    timed(r, t, 0, |r, _| {
        let mut bytes = 0;
        for f in files {
            let size = f.file.metadata().map(|m| m.len()).unwrap_or(0);
            if let Err(e) = f.file.set_len(0) {
                r.fail(&format!("truncate failed: {e}"));
                return bytes;
            }
            bytes += size;
        }
        bytes
    })
}
