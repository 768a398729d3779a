//! A file system for page-cache cases without disk traffic: a private tmpfs
//! in the room holds a sparse image, a loop device serves it, ext4 is made
//! on it and mounted in the room. As vm-scalability's `hw_vars` does (a
//! 256 MiB ext4 image, loop-mounted, sparse files made with truncate), the
//! cases' files are sparse: reading them fills the page cache with no I/O;
//! only what is written lands in the tmpfs, which its size bounds. ext4
//! rather than xfs: it is in every Debian and takes images of a few MiB
//! (mkfs.xfs wants 300 MiB).

use std::ffi::OsStr;
use std::path::{Path, PathBuf};

use super::journal::{Journal, Step};
use super::sys;
use crate::error::{Error, Result};

/// Smallest image: ext4 with its journal needs a few MiB.
pub const MIN_BYTES: u64 = 8 << 20;

/// Refuses, before anything is made, what cannot be done here.
pub fn check(bytes: u64) -> Result<()> {
    if bytes < MIN_BYTES {
        return Err(Error::Input(format!(
            "a page-cache file system of {} is too small: at least {}",
            crate::units::memory(bytes),
            crate::units::memory(MIN_BYTES)
        )));
    }
    sys::refuse_beyond_half("a page-cache file system (its tmpfs may fill)", bytes)?;
    sys::need_tool("losetup", "mount", "a page-cache file system")?;
    sys::need_tool("mkfs.ext4", "e2fsprogs", "a page-cache file system")?;
    if !Path::new("/dev/loop-control").exists() {
        return Err(Error::Refused(
            "a page-cache file system needs loop devices, but /dev/loop-control is missing: \
             load the loop module (modprobe loop) or use a kernel with CONFIG_BLK_DEV_LOOP"
                .into(),
        ));
    }
    let fs = std::fs::read_to_string("/proc/filesystems").unwrap_or_default();
    for want in ["tmpfs", "ext4"] {
        if !fs.split_whitespace().any(|w| w == want) {
            return Err(Error::Refused(format!(
                "a page-cache file system needs {want}, which this kernel lacks \
                 (/proc/filesystems): load its module or use a kernel with it"
            )));
        }
    }
    Ok(())
}

/// Makes tmpfs `n`, its image, loop device and ext4 in `room`; returns
/// where the ext4 is mounted. Each step is journaled before it is made.
pub fn make(j: &mut Journal, room: &Path, n: usize, bytes: u64) -> Result<PathBuf> {
    let tmpfs = room.join(format!("tmpfs{n}"));
    let mnt = room.join(format!("fs{n}"));
    let image = tmpfs.join("image");
    j.push(Step::Dir {
        path: tmpfs.clone(),
    })?;
    sys::make_dir(&tmpfs)?;
    j.push(Step::Tmpfs {
        mountpoint: tmpfs.clone(),
    })?;
    sys::mount(
        Path::new("tmpfs"),
        &tmpfs,
        "tmpfs",
        &format!("size={bytes},mode=0700"),
    )?;
    let f = crate::atomic_file::create_new(0o600)
        .open(&image)
        .map_err(|e| Error::io("cannot create", &image, e))?;
    f.set_len(bytes)
        .map_err(|e| Error::io("cannot size", &image, e))?;
    drop(f);
    j.push(Step::Loop {
        image: image.clone(),
    })?;
    let losetup = sys::need_tool("losetup", "mount", "a page-cache file system")?;
    let dev = sys::run(
        &losetup,
        &[
            OsStr::new("--find"),
            OsStr::new("--show"),
            image.as_os_str(),
        ],
    )?;
    let dev = PathBuf::from(dev.trim());
    // Lazy inode tables and journal, no discard: mkfs writes only a few
    // hundred KiB to the tmpfs; noinit_itable keeps ext4lazyinit from
    // zeroing the rest into it afterwards.
    let mkfs = sys::need_tool("mkfs.ext4", "e2fsprogs", "a page-cache file system")?;
    sys::run(
        &mkfs,
        &[
            OsStr::new("-q"),
            OsStr::new("-F"),
            OsStr::new("-L"),
            OsStr::new("vmscale"),
            OsStr::new("-E"),
            OsStr::new("lazy_itable_init=1,lazy_journal_init=1,nodiscard"),
            dev.as_os_str(),
        ],
    )?;
    j.push(Step::Dir { path: mnt.clone() })?;
    sys::make_dir(&mnt)?;
    j.push(Step::Mount {
        mountpoint: mnt.clone(),
    })?;
    sys::mount(&dev, &mnt, "ext4", "noinit_itable")?;
    Ok(mnt)
}

/// The loop devices whose backing file is `image` (/sys/block/loop*).
pub fn loops_of(image: &Path) -> Vec<PathBuf> {
    let Ok(dir) = std::fs::read_dir("/sys/block") else {
        return Vec::new();
    };
    let mut found: Vec<PathBuf> = dir
        .filter_map(|e| {
            let name = e.ok()?.file_name().into_string().ok()?;
            name.strip_prefix("loop")?.parse::<u32>().ok()?;
            let back =
                std::fs::read_to_string(format!("/sys/block/{name}/loop/backing_file")).ok()?;
            (Path::new(back.trim_end_matches('\n')) == image)
                .then(|| PathBuf::from(format!("/dev/{name}")))
        })
        .collect();
    found.sort();
    found
}

/// Detaches the loop devices on `image`; a device still in use (a lazily
/// detached mount) is freed by the kernel when its last user goes.
pub fn detach(image: &Path) -> Result<Vec<String>> {
    let mut lines = Vec::new();
    for dev in loops_of(image) {
        let losetup = sys::need_tool("losetup", "mount", "detaching a loop device")?;
        sys::run(&losetup, &[OsStr::new("-d"), dev.as_os_str()])?;
        lines.push(format!(
            "detached loop device {} (image {})",
            dev.display(),
            image.display()
        ));
    }
    Ok(lines)
}
