//! The system calls other rooms need that the standard library lacks or
//! marks unsafe, each wrapped safe here so that vmscale's `unsafe` stays in
//! exec/ and workload/. Paths go in as `&Path`; one holding a NUL byte is
//! `InvalidInput`, a failed call the `io::Error` of its errno.

use std::ffi::{CString, OsStr};
use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

fn c_string(s: &OsStr) -> io::Result<CString> {
    CString::new(s.as_bytes()).map_err(|_| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{} holds a NUL byte", Path::new(s).display()),
        )
    })
}

/// A call's return code: 0 is success, else its errno.
fn checked(rc: libc::c_int) -> io::Result<()> {
    match rc {
        0 => Ok(()),
        _ => Err(io::Error::last_os_error()),
    }
}

/// The calling thread's id.
pub fn gettid() -> i32 {
    // SAFETY: gettid has no preconditions.
    unsafe { libc::gettid() }
}

/// The CPU the calling thread runs on; `None` when the kernel cannot say.
pub fn current_cpu() -> Option<u32> {
    // SAFETY: sched_getcpu has no preconditions (-1 on failure).
    let cpu = unsafe { libc::sched_getcpu() };
    u32::try_from(cpu).ok()
}

/// The node of each page of `addrs` in process `pid` (negative: -errno,
/// e.g. -ENOENT for a page not present), or None if the call failed
/// (process gone, kernel without NUMA): move_pages(2) with `nodes` NULL,
/// which moves nothing.
pub fn page_nodes(pid: i32, addrs: &[u64]) -> Option<Vec<i32>> {
    let mut status = vec![i32::MIN; addrs.len()];
    if addrs.is_empty() {
        return Some(status);
    }
    let ptrs: Vec<*mut libc::c_void> = addrs.iter().map(|&a| a as *mut libc::c_void).collect();
    // SAFETY: pages and status hold count elements; nodes NULL only queries.
    let r = unsafe {
        libc::syscall(
            libc::SYS_move_pages,
            pid as libc::c_long,
            ptrs.len() as libc::c_ulong,
            ptrs.as_ptr(),
            std::ptr::null::<libc::c_int>(),
            status.as_mut_ptr(),
            0 as libc::c_int,
        )
    };
    (r == 0).then_some(status)
}

/// Gives the calling thread its own mount namespace: unshare(CLONE_NEWNS).
pub fn unshare_mounts() -> io::Result<()> {
    // SAFETY: unshare only changes this thread's namespaces; CLONE_NEWNS
    // is allowed in a multi-threaded process and affects no other thread.
    checked(unsafe { libc::unshare(libc::CLONE_NEWNS) })
}

/// mount(2) of `source` (type `fstype`) at `target` with `flags` and
/// `data`; `None` passes NULL (a propagation change names no source).
pub fn mount(
    source: Option<&Path>,
    target: &Path,
    fstype: Option<&str>,
    flags: libc::c_ulong,
    data: Option<&str>,
) -> io::Result<()> {
    let c = |s: Option<&OsStr>| s.map(c_string).transpose();
    let src = c(source.map(Path::as_os_str))?;
    let tgt = c_string(target.as_os_str())?;
    let ty = c(fstype.map(OsStr::new))?;
    let data = c(data.map(OsStr::new))?;
    let ptr = |s: &Option<CString>| s.as_ref().map_or(std::ptr::null(), |s| s.as_ptr());
    // SAFETY: every pointer is NULL or a NUL-terminated string that
    // outlives the call.
    checked(unsafe { libc::mount(ptr(&src), tgt.as_ptr(), ptr(&ty), flags, ptr(&data).cast()) })
}

/// umount2(2) of `target` with `flags`.
pub fn unmount(target: &Path, flags: libc::c_int) -> io::Result<()> {
    let t = c_string(target.as_os_str())?;
    // SAFETY: a NUL-terminated path that outlives the call.
    checked(unsafe { libc::umount2(t.as_ptr(), flags) })
}

/// swapon(2) of `device`, no flags.
pub fn swapon(device: &Path) -> io::Result<()> {
    let c = c_string(device.as_os_str())?;
    // SAFETY: a NUL-terminated path that outlives the call.
    checked(unsafe { libc::swapon(c.as_ptr(), 0) })
}

/// swapoff(2) of `device`.
pub fn swapoff(device: &Path) -> io::Result<()> {
    let c = c_string(device.as_os_str())?;
    // SAFETY: a NUL-terminated path that outlives the call.
    checked(unsafe { libc::swapoff(c.as_ptr()) })
}

/// statfs(2) of the file system holding `path`.
pub fn statfs(path: &Path) -> io::Result<libc::statfs> {
    let c = c_string(path.as_os_str())?;
    // SAFETY: statfs is plain data, for which all zeroes is a valid value.
    let mut s: libc::statfs = unsafe { std::mem::zeroed() };
    // SAFETY: statfs fills the struct; `c` outlives the call.
    checked(unsafe { libc::statfs(c.as_ptr(), &mut s) })?;
    Ok(s)
}

/// statvfs(3) of the file system holding `path`.
pub fn statvfs(path: &Path) -> io::Result<libc::statvfs> {
    let c = c_string(path.as_os_str())?;
    let mut st = std::mem::MaybeUninit::<libc::statvfs>::zeroed();
    // SAFETY: `c` is a NUL-terminated path and `st` points to writable
    // memory of the struct's size; statvfs fills it or fails.
    checked(unsafe { libc::statvfs(c.as_ptr(), st.as_mut_ptr()) })?;
    // SAFETY: statvfs returned 0, so it initialised the struct.
    Ok(unsafe { st.assume_init() })
}

/// Takes a POSIX write lock on the whole of `file` without waiting:
/// Ok(false) when another process holds one. Released when the file is
/// closed or the process ends; unlike flock, not inherited by forked
/// children.
pub fn try_lock(file: &File) -> io::Result<bool> {
    // SAFETY: flock is a plain C struct of integers; all zeroes is valid.
    let mut fl: libc::flock = unsafe { std::mem::zeroed() };
    fl.l_type = libc::F_WRLCK as libc::c_short;
    fl.l_whence = libc::SEEK_SET as libc::c_short;
    // SAFETY: the descriptor is open for the life of `file`, and `fl` is
    // a valid, initialised flock struct that fcntl only reads.
    if unsafe { libc::fcntl(file.as_raw_fd(), libc::F_SETLK, &fl) } == 0 {
        return Ok(true);
    }
    let e = io::Error::last_os_error();
    match e.raw_os_error() {
        Some(libc::EAGAIN | libc::EACCES) => Ok(false),
        _ => Err(e),
    }
}

/// Takes `name` out of the environment, returning its value, or puts
/// `value` in its place. Call only while the process has one thread (at
/// the start of `main`): the environment is not locked against threads
/// reading it.
pub fn take_env(name: &str, value: Option<&OsStr>) -> Option<std::ffi::OsString> {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_path_with_a_nul_byte_is_invalid_input_before_any_call() {
        let bad = Path::new("/tmp/a\0b");
        for e in [
            statfs(bad).err(),
            statvfs(bad).err(),
            unmount(bad, 0).err(),
            swapoff(bad).err(),
        ] {
            let e = e.expect("refused");
            assert_eq!(e.kind(), io::ErrorKind::InvalidInput, "{e}");
            assert!(e.to_string().contains("NUL byte"), "{e}");
        }
    }

    #[test]
    fn the_root_file_system_answers_statfs_and_statvfs() {
        assert!(statfs(Path::new("/")).unwrap().f_bsize > 0);
        assert!(statvfs(Path::new("/")).unwrap().f_blocks > 0);
        let missing = statfs(Path::new("/no/such/dir")).unwrap_err();
        assert_eq!(missing.raw_os_error(), Some(libc::ENOENT));
    }

    #[test]
    fn a_thread_knows_its_id_and_cpu() {
        let main = gettid();
        let other = std::thread::spawn(gettid).join().unwrap();
        assert_ne!(main, other);
        assert!(current_cpu().is_some());
    }
}
