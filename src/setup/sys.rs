//! The system calls and tools the set-up room is made with: mounts read
//! from /proc/self/mountinfo, mount and unmount, util-linux and e2fsprogs
//! found on PATH (and the sbin directories), memory figures for refusals.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::error::{Error, Result};
use crate::exec::sys;

/// One line of /proc/self/mountinfo.
pub struct MountInfo {
    pub root: PathBuf,
    pub mountpoint: PathBuf,
    pub fstype: String,
    pub super_options: String,
}

/// The mounts this process sees.
pub fn mounts() -> Vec<MountInfo> {
    let text = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
    text.lines()
        .filter_map(|l| {
            let (left, right) = l.split_once(" - ")?;
            let f: Vec<&str> = left.split(' ').collect();
            let r: Vec<&str> = right.split(' ').collect();
            Some(MountInfo {
                root: PathBuf::from(unescape(f.get(3)?)),
                mountpoint: PathBuf::from(unescape(f.get(4)?)),
                fstype: r.first()?.to_string(),
                super_options: r.get(2).unwrap_or(&"").to_string(),
            })
        })
        .collect()
}

/// The kernel's octal escapes (`\040` for a space) in /proc files.
pub fn unescape(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\\'
            && b.get(i + 1..i + 4)
                .is_some_and(|d| d.iter().all(|c| (b'0'..=b'7').contains(c)))
        {
            let d = &b[i + 1..i + 4];
            out.push((d[0] - b'0') * 64 + (d[1] - b'0') * 8 + (d[2] - b'0'));
            i += 4;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

pub fn is_mounted(path: &Path) -> bool {
    mounts().iter().any(|m| m.mountpoint == path)
}

/// mount(2) of `source` (type `fstype`) at `target`, never set-uid,
/// device files or (for the tmpfs) programs.
pub fn mount(source: &Path, target: &Path, fstype: &str, data: &str) -> Result<()> {
    let mut flags = libc::MS_NOSUID | libc::MS_NODEV;
    if fstype == "tmpfs" {
        flags |= libc::MS_NOEXEC;
    }
    sys::mount(Some(source), target, Some(fstype), flags, Some(data)).map_err(|e| {
        Error::io(
            format!("cannot mount {} ({fstype}) at", source.display()),
            target,
            e,
        )
    })
}

/// Unmounts `target` if mounted; a busy mount (a process of a killed run
/// still has a file open there) is detached lazily. Says what it did.
pub fn unmount(target: &Path) -> Result<Option<String>> {
    if !is_mounted(target) {
        return Ok(None);
    }
    let Err(e) = sys::unmount(target, libc::UMOUNT_NOFOLLOW) else {
        return Ok(Some(format!("unmounted {}", target.display())));
    };
    if e.raw_os_error() != Some(libc::EBUSY) {
        return Err(Error::io("cannot unmount", target, e));
    }
    sys::unmount(target, libc::MNT_DETACH | libc::UMOUNT_NOFOLLOW)
        .map_err(|e| Error::io("cannot detach", target, e))?;
    Ok(Some(format!(
        "detached {} (busy: it goes when its last file is closed)",
        target.display()
    )))
}

/// Makes directory `path`, mode 0700; an existing one is an error (the
/// room is new, so nothing of ours is there and nothing else may be).
pub fn make_dir(path: &Path) -> Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    std::fs::DirBuilder::new()
        .mode(0o700)
        .create(path)
        .map_err(|e| Error::io("cannot create", path, e))
}

/// Removes directory `path` if it is there; says so.
pub fn remove_dir(path: &Path) -> Result<Option<String>> {
    match std::fs::remove_dir(path) {
        Ok(()) => Ok(Some(format!("removed {}", path.display()))),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(Error::io("cannot remove", path, e)),
    }
}

/// A program from util-linux, e2fsprogs or kmod, on PATH or in the sbin
/// directories (root's PATH may lack them).
pub fn tool(name: &str) -> Option<PathBuf> {
    in_dirs(name, &["/usr/sbin", "/sbin", "/usr/bin", "/bin"])
}

/// `name` on PATH or in `more`, the first that is a file.
fn in_dirs(name: &str, more: &[&str]) -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain(more.iter().map(PathBuf::from))
        .map(|d| d.join(name))
        .find(|p| p.is_file())
}

/// `name` or a refusal naming the Debian package that has it.
pub fn need_tool(name: &str, package: &str, for_what: &str) -> Result<PathBuf> {
    installed(tool(name), name, package, for_what)
}

/// A program found on PATH only (not an sbin tool), or a refusal naming
/// the Debian package that has it.
pub fn need_program(name: &str, package: &str, for_what: &str) -> Result<PathBuf> {
    installed(in_dirs(name, &[]), name, package, for_what)
}

fn installed(found: Option<PathBuf>, name: &str, package: &str, for_what: &str) -> Result<PathBuf> {
    found.ok_or_else(|| {
        Error::Refused(format!(
            "{for_what} needs {name}, which is not installed: apt-get install {package}"
        ))
    })
}

/// Runs a tool to its end; its stdout, or a failure with its stderr. The
/// tool dies with vmscale, so a killed run leaves no losetup or mkfs
/// working behind the recovery's back.
pub fn run(program: &Path, args: &[&std::ffi::OsStr]) -> Result<String> {
    let mut cmd = Command::new(program);
    cmd.args(args).stdin(std::process::Stdio::null());
    crate::exec::group::dies_with_vmscale(&mut cmd);
    let out = cmd
        .output()
        .map_err(|e| Error::io("cannot run", program, e))?;
    if !out.status.success() {
        return Err(Error::Failed(format!(
            "{} {} failed ({}): {}",
            program.display(),
            args.iter()
                .map(|a| a.to_string_lossy())
                .collect::<Vec<_>>()
                .join(" "),
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        )));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// Writes `value` to a kernel file (sysfs, procfs, cgroupfs).
pub fn write_kernel(path: &Path, value: &str) -> Result<()> {
    std::fs::write(path, value)
        .map_err(|e| Error::io(format!("cannot write '{value}' to"), path, e))
}

pub fn read_kernel(path: &Path) -> Result<String> {
    std::fs::read_to_string(path)
        .map(|s| s.trim().to_string())
        .map_err(|e| Error::io("cannot read", path, e))
}

/// MemTotal and MemAvailable in bytes.
pub fn memory() -> Result<(u64, u64)> {
    let m = crate::machine::memory::read_meminfo(Path::new("/"));
    match (m.get("MemTotal"), m.get("MemAvailable")) {
        (Some(t), Some(a)) => Ok((t * 1024, a * 1024)),
        _ => Err(Error::Refused(
            "cannot read MemTotal and MemAvailable from /proc/meminfo".into(),
        )),
    }
}

/// The most a resource held in memory may take: half of MemAvailable, so
/// the case's own memory and the rest of the machine keep the other half.
pub fn refuse_beyond_half(what: &str, bytes: u64) -> Result<()> {
    let (total, avail) = memory()?;
    if bytes > avail / 2 {
        return Err(Error::Refused(format!(
            "{what} of {} is more than this machine can give: half of MemAvailable is {} \
             (MemAvailable {}, MemTotal {}); ask for less (a smaller --size)",
            crate::units::memory(bytes),
            crate::units::memory(avail / 2),
            crate::units::memory(avail),
            crate::units::memory(total)
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn proc_escapes_are_undone() {
        assert_eq!(unescape(r"/a\040b\011c\134d"), "/a b\tc\\d");
        assert_eq!(unescape(r"/x\04"), r"/x\04");
        assert!(mounts().iter().any(|m| m.mountpoint == Path::new("/")));
    }
}
