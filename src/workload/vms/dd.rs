//! The page-cache readers of lru-file-readonce, lru-file-readtwice and
//! lru-memcg: `dd bs=4k if=FILE of=/dev/null` on a sparse file bigger than
//! the memory, stopped at the runtime as the suite's `timeout` stops dd.
//! Each task reads its file with read(2) in 4 KiB blocks into a
//! page-aligned buffer and writes each block to /dev/null, as dd does (two
//! system calls a block; coreutils aligns its buffer to the page), through
//! an open file description of its own, as each dd opens its file: the
//! kernel keeps readahead state and the offset per open file, and
//! lru-file-readtwice's two readers of one file must not share them.

use std::fs::File;
use std::os::fd::AsRawFd;
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};

use crate::error::{Error, Result};
use crate::exec::region::Region;
use crate::exec::{Task, TaskReport, signals};
use crate::workload::fault_map::OwnedFile;

use super::usemem::timed;

/// dd's block size in the suite's scripts.
const BLOCK: usize = 4096;

/// One reader: task `t` reads file `t.index / readers` from its start.
pub fn task(files: &[OwnedFile], readers: usize, t: &Task, runtime_ns: u64) -> TaskReport {
    let mut r = TaskReport::default();
    let Some(f) = files.get(t.index / readers.max(1)) else {
        r.fail("no file for this reader");
        return r;
    };
    // dd's buffer starts on a page, and what the kernel's copy into it
    // costs can depend on where it starts (docs/vms.md, "Side by side").
    let opened = || -> Result<_> {
        Ok((
            reopen(&f.file)?,
            dev_null()?,
            Region::private_noreserve(BLOCK)?,
        ))
    };
    let (own, null, buf) = match opened() {
        Ok(all) => all,
        Err(e) => {
            r.fail(&e.to_string());
            return r;
        }
    };
    let (fd, out) = (own.as_raw_fd(), null.as_raw_fd());
    timed(r, t, runtime_ns, |r, deadline| {
        let mut bytes = 0u64;
        let mut calls = 0u64;
        loop {
            // read(2), as dd: the offset is the open file's, kept by the kernel.
            // SAFETY: buf is BLOCK writable bytes; fd is open for reading.
            let n = unsafe { libc::read(fd, buf.ptr().cast(), BLOCK) };
            if n < 0 {
                r.fail(&format!("read failed: {}", crate::exec::errno_text()));
                break;
            }
            if n == 0 {
                break;
            }
            // SAFETY: buf holds n bytes just read; out is open for writing.
            if unsafe { libc::write(out, buf.ptr().cast(), n as usize) } != n {
                r.fail(&format!(
                    "write to /dev/null failed: {}",
                    crate::exec::errno_text()
                ));
                break;
            }
            bytes += n as u64;
            calls += 1;
            if calls & 0xff == 0 && signals::past(deadline) {
                break;
            }
        }
        bytes
    })
}

/// A new open file description of `file` (unnamed: O_TMPFILE), read
/// only, through our own descriptor's entry in /proc/self/fd.
pub(super) fn reopen(file: &File) -> Result<File> {
    File::open(format!("/proc/self/fd/{}", file.as_raw_fd())).map_err(|e| {
        Error::Failed(format!(
            "cannot open the case's file again for reading: {e}"
        ))
    })
}

/// dd's `of=/dev/null`: opened without following a link, and refused
/// unless it is the character device it should be.
fn dev_null() -> Result<File> {
    let f = std::fs::OpenOptions::new()
        .write(true)
        .custom_flags(libc::O_NOFOLLOW)
        .open("/dev/null")
        .map_err(|e| Error::io("cannot open for writing", "/dev/null", e))?;
    match f.metadata() {
        Ok(m) if m.file_type().is_char_device() => Ok(f),
        _ => Err(Error::Failed(
            "/dev/null is not a character device: restore it (mknod -m 666 /dev/null c 1 3)".into(),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Seek, SeekFrom, Write};

    #[test]
    fn a_reader_gets_its_own_open_file_of_the_unnamed_file() {
        let dir = std::env::temp_dir();
        let mut owned = OwnedFile::tmpfile(&dir, 0).unwrap();
        owned.file.write_all(b"0123456789").unwrap();
        let mut own = reopen(&owned.file).unwrap();
        // The shared one's offset is at the end; the new one starts at 0
        // and reads what was written: the same file, another description.
        assert_eq!(owned.file.stream_position().unwrap(), 10);
        let mut text = String::new();
        own.read_to_string(&mut text).unwrap();
        assert_eq!(text, "0123456789");
        own.seek(SeekFrom::Start(3)).unwrap();
        assert_eq!(owned.file.stream_position().unwrap(), 10);
    }
}
