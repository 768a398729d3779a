//! What the store needs of the system that the standard library lacks or
//! marks unsafe: the free space of a file system (to name it when a
//! store's disk is full), a POSIX record lock (a spool belongs to one
//! process; unlike flock it is not inherited by forked workers), the
//! system error behind SQLite's last failure (EIO or EROFS, which SQLite
//! reports alike as a disk I/O error), and a variable taken out of the
//! environment (a password no child inherits).

use std::fs::File;
use std::os::fd::AsRawFd;
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
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(path.as_os_str().as_bytes()).ok()?;
    let mut st = std::mem::MaybeUninit::<libc::statvfs>::zeroed();
    // SAFETY: `c` is a NUL-terminated path and `st` points to writable
    // memory of the struct's size; statvfs fills it or fails.
    if unsafe { libc::statvfs(c.as_ptr(), st.as_mut_ptr()) } != 0 {
        return None;
    }
    // SAFETY: statvfs returned 0, so it initialised the struct.
    let st = unsafe { st.assume_init() };
    let unit = st.f_frsize as u64;
    Some(Space {
        free: st.f_bavail as u64 * unit,
        total: st.f_blocks as u64 * unit,
        read_only: st.f_flag & libc::ST_RDONLY != 0,
    })
}

/// Takes a write lock on the whole of `file` without waiting: Ok(false)
/// when another process holds one. Released when the file is closed or
/// the process ends.
pub fn try_lock(file: &File) -> std::io::Result<bool> {
    let mut fl: libc::flock = unsafe_zeroed_flock();
    fl.l_type = libc::F_WRLCK as libc::c_short;
    fl.l_whence = libc::SEEK_SET as libc::c_short;
    // SAFETY: the descriptor is open for the life of `file`, and `fl` is
    // a valid, initialised flock struct that fcntl only reads.
    if unsafe { libc::fcntl(file.as_raw_fd(), libc::F_SETLK, &fl) } == 0 {
        return Ok(true);
    }
    let e = std::io::Error::last_os_error();
    match e.raw_os_error() {
        Some(libc::EAGAIN | libc::EACCES) => Ok(false),
        _ => Err(e),
    }
}

fn unsafe_zeroed_flock() -> libc::flock {
    // SAFETY: flock is a plain C struct of integers; all zeroes is valid.
    unsafe { std::mem::zeroed() }
}

/// Takes `name` out of the environment, returning its value, or puts
/// `value` in its place. Call only while the process has one thread (at
/// the start of `main`): the environment is not locked against threads
/// reading it.
pub fn take_env(name: &str, value: Option<&std::ffi::OsStr>) -> Option<std::ffi::OsString> {
    let was = std::env::var_os(name)?;
    // SAFETY: the caller runs before any other thread exists, so no
    // other thread reads or writes the environment meanwhile.
    unsafe {
        match value {
            Some(v) => std::env::set_var(name, v),
            None => std::env::remove_var(name),
        }
    }
    Some(was)
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
