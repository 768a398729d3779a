//! What the store needs of the system: the free space of a file system
//! (to name it when a store's disk is full) and the system error behind
//! SQLite's last failure (EIO or EROFS, which SQLite reports alike as a
//! disk I/O error). The POSIX record lock of a spool and the password
//! taken out of the environment are exec::sys's.

use std::path::Path;

/// A file system's size, free space for unprivileged writers, and
/// whether it is mounted read-only.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Space {
    pub free: u64,
    pub total: u64,
    pub read_only: bool,
}

/// The file system holding `path` (a file or directory).
#[allow(clippy::unnecessary_cast)] // the field types differ by target
pub fn space(path: &Path) -> Option<Space> {
    let st = crate::exec::sys::statvfs(path).ok()?;
    let unit = st.f_frsize as u64;
    Some(Space {
        free: st.f_bavail as u64 * unit,
        total: st.f_blocks as u64 * unit,
        read_only: st.f_flag & libc::ST_RDONLY != 0,
    })
}

/// The errno of the system call that made SQLite's last operation on
/// `conn` fail, when there was one.
pub fn sqlite_errno(conn: &rusqlite::Connection) -> Option<std::io::Error> {
    // SAFETY: the handle is the connection's own, valid while `conn` is
    // borrowed; sqlite3_system_errno only reads a field of it.
    let errno = unsafe { rusqlite::ffi::sqlite3_system_errno(conn.handle()) };
    (errno > 0).then(|| std::io::Error::from_raw_os_error(errno))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_root_file_system_has_a_size() {
        let s = space(Path::new("/")).unwrap();
        assert!(s.total > 0 && s.free <= s.total);
    }
}
