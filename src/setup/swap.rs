//! A swap device for the set-up's life: a zram device hot-added through
//! /sys/class/zram-control (the module loaded with modprobe if needed),
//! else a swap file in the room, which must lie on a file system that
//! swaps (ext2/3/4, xfs; never tmpfs). Swapped on with swapon(2), off with
//! swapoff(2); the zram device is removed again, the file deleted.

use std::ffi::OsStr;
use std::io::Write;
use std::path::{Path, PathBuf};

use super::journal::{Journal, Step};
use super::sys;
use crate::error::{Error, Result};

/// What `Setup::swap` made.
#[derive(Clone, Debug)]
pub struct SwapInfo {
    pub device: PathBuf,
    /// "zram" or "file".
    pub kind: &'static str,
    pub bytes: u64,
}

/// Smallest swap: mkswap wants ten pages; a case wants more.
pub const MIN_BYTES: u64 = 1 << 20;

const ZRAM_CONTROL: &str = "/sys/class/zram-control";

/// File systems a swap file may live on (statfs magic numbers).
const SWAP_FS: &[(i64, &str)] = &[(0xEF53, "ext2/3/4"), (0x5846_5342, "xfs")];

/// How the swap will be made.
enum Kind {
    /// zram; `load` when the module must be loaded first.
    Zram {
        load: bool,
    },
    File,
}

/// Whether zram can be used: its control directory, or the module to load.
fn zram_kind() -> Option<Kind> {
    if Path::new(ZRAM_CONTROL).is_dir() {
        return Some(Kind::Zram { load: false });
    }
    let modinfo = sys::tool("modinfo")?;
    sys::run(&modinfo, &[OsStr::new("zram")]).ok()?;
    sys::tool("modprobe").map(|_| Kind::Zram { load: true })
}

/// Why a swap file cannot be made in `dir`, if it cannot.
fn file_refusal(dir: &Path, bytes: u64) -> Option<String> {
    let s = match crate::exec::sys::statfs(dir) {
        Ok(s) => s,
        Err(e) => return Some(format!("cannot statfs {}: {e}", dir.display())),
    };
    // statfs's field types vary by architecture: widened explicitly.
    #[allow(clippy::useless_conversion)]
    let (magic, avail) = (i64::from(s.f_type), u64::from(s.f_bavail));
    if !SWAP_FS.iter().any(|(m, _)| *m == magic) {
        return Some(format!(
            "a swap file needs ext2/3/4 or xfs, but the state directory {} is on a file \
             system of type {magic:#x} (tmpfs and others cannot swap)",
            dir.display()
        ));
    }
    let free = avail.saturating_mul(u64::try_from(s.f_bsize).unwrap_or(0));
    // Keep a tenth of the free space and 256 MiB for everything else.
    if bytes > (free - free / 10).saturating_sub(256 << 20) {
        return Some(format!(
            "a swap file of {} does not fit on {}: {} free, of which a tenth and 256 MiB \
             are kept",
            crate::units::memory(bytes),
            dir.display(),
            crate::units::memory(free)
        ));
    }
    None
}

/// Whether swap would be zram here (kept in memory) rather than a file.
pub fn zram_available() -> bool {
    zram_kind().is_some()
}

/// Refuses, before anything is made, what cannot be done here: `dir` is
/// where a swap file would go (the state directory).
pub fn check(bytes: u64, dir: &Path) -> Result<()> {
    check_as(bytes, dir, false)
}

/// As [`check`]; `file` insists on a swap file.
pub fn check_as(bytes: u64, dir: &Path, file: bool) -> Result<()> {
    if bytes < MIN_BYTES {
        return Err(Error::Input(format!(
            "a swap device of {} is too small: at least {}",
            crate::units::memory(bytes),
            crate::units::memory(MIN_BYTES)
        )));
    }
    sys::need_tool("mkswap", "util-linux", "a swap device")?;
    plan(bytes, dir, file).map(|_| ())
}

fn plan(bytes: u64, dir: &Path, file: bool) -> Result<Kind> {
    if !file && let Some(k) = zram_kind() {
        // zram keeps what is swapped out in memory, compressed or not.
        sys::refuse_beyond_half("a zram swap device", bytes)?;
        return Ok(k);
    }
    match file_refusal(dir, bytes) {
        None => Ok(Kind::File),
        Some(why) if file => Err(Error::Refused(format!("no swap file can be made: {why}"))),
        Some(why) => Err(Error::Refused(format!(
            "no swap device can be made: zram is missing (no {ZRAM_CONTROL}, no zram module \
             to load) and {why}"
        ))),
    }
}

fn zram_ids() -> Vec<u32> {
    let mut ids: Vec<u32> = std::fs::read_dir("/sys/block")
        .map(|d| {
            d.filter_map(|e| {
                let name = e.ok()?.file_name().into_string().ok()?;
                name.strip_prefix("zram")?.parse().ok()
            })
            .collect()
        })
        .unwrap_or_default();
    ids.sort();
    ids
}

/// Makes and swaps on a device of `bytes`; each step journaled first.
pub fn make(j: &mut Journal, room: &Path, n: usize, bytes: u64, file: bool) -> Result<SwapInfo> {
    let state_dir = room.parent().unwrap_or(room);
    let mkswap = sys::need_tool("mkswap", "util-linux", "a swap device")?;
    let (device, kind) = match plan(bytes, state_dir, file)? {
        Kind::Zram { load } => {
            if load {
                // Loading the module changes nothing a run can see; it stays.
                let modprobe = sys::need_tool("modprobe", "kmod", "loading zram")?;
                sys::run(&modprobe, &[OsStr::new("zram")])?;
            }
            let before = zram_ids();
            j.push(Step::Zram {
                id: None,
                before: before.clone(),
            })?;
            let added = sys::read_kernel(&Path::new(ZRAM_CONTROL).join("hot_add"))?;
            let id: u32 = added.parse().map_err(|_| {
                Error::Failed(format!("{ZRAM_CONTROL}/hot_add gave '{added}', not an id"))
            })?;
            j.amend_last(Step::Zram {
                id: Some(id),
                before,
            })?;
            sys::write_kernel(
                Path::new(&format!("/sys/block/zram{id}/disksize")),
                &bytes.to_string(),
            )?;
            (PathBuf::from(format!("/dev/zram{id}")), "zram")
        }
        Kind::File => {
            let path = room.join(format!("swap{n}"));
            j.push(Step::SwapFile { path: path.clone() })?;
            write_zeros(&path, bytes)?;
            (path, "file")
        }
    };
    sys::run(
        &mkswap,
        &[OsStr::new("-L"), OsStr::new("vmscale"), device.as_os_str()],
    )?;
    j.push(Step::SwapOn {
        device: device.clone(),
    })?;
    crate::exec::sys::swapon(&device).map_err(|e| Error::io("cannot swap on", &device, e))?;
    Ok(SwapInfo {
        device,
        kind,
        bytes,
    })
}

/// A swap file must have every block allocated: written, not sparse.
fn write_zeros(path: &Path, bytes: u64) -> Result<()> {
    let fail = |e: std::io::Error| Error::io("cannot write the swap file", path, e);
    let mut f = crate::atomic_file::create_new(0o600)
        .open(path)
        .map_err(fail)?;
    let chunk = vec![0u8; 1 << 20];
    let mut left = bytes;
    while left > 0 {
        let n = left.min(chunk.len() as u64) as usize;
        f.write_all(&chunk[..n]).map_err(fail)?;
        left -= n as u64;
    }
    f.sync_all().map_err(fail)
}

/// Whether `device` is in /proc/swaps.
pub fn swapped_on(device: &Path) -> bool {
    used_kib(device).is_some()
}

/// The KiB in use on `device` by /proc/swaps, if it is swapped on.
pub fn used_kib(device: &Path) -> Option<u64> {
    std::fs::read_to_string("/proc/swaps")
        .unwrap_or_default()
        .lines()
        .skip(1)
        .find_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            let d = f.first()?;
            (Path::new(&sys::unescape(d)) == device).then(|| f.get(3)?.parse().ok())?
        })
}

/// The journal names a swap device of ours: a zram device or a file in
/// the room.
fn checked(device: &Path, room: &Path) -> Result<()> {
    let zram = device
        .to_str()
        .and_then(|d| d.strip_prefix("/dev/zram"))
        .is_some_and(|n| n.parse::<u32>().is_ok());
    if zram || super::journal::in_room(room, device) {
        return Ok(());
    }
    Err(Error::Refused(format!(
        "refused the set-up journal's swap device {}: neither a zram device nor a file \
         in its room",
        device.display()
    )))
}

/// Swaps `device` off if it is on.
pub fn off(device: &Path, room: &Path) -> Result<Option<String>> {
    checked(device, room)?;
    if !swapped_on(device) {
        return Ok(None);
    }
    crate::exec::sys::swapoff(device).map_err(|e| Error::io("cannot swap off", device, e))?;
    Ok(Some(format!("swapped off {}", device.display())))
}

/// Removes the zram device the step names; with no id (killed just after
/// hot_add), the unconfigured devices that were not there before.
pub fn remove_zram(id: Option<u32>, before: &[u32]) -> Result<Vec<String>> {
    let ids: Vec<u32> = match id {
        Some(id) => vec![id],
        None => zram_ids()
            .into_iter()
            .filter(|i| !before.contains(i))
            .filter(|i| {
                sys::read_kernel(Path::new(&format!("/sys/block/zram{i}/disksize")))
                    .is_ok_and(|s| s == "0")
            })
            .collect(),
    };
    let mut lines = Vec::new();
    for id in ids {
        if !Path::new(&format!("/sys/block/zram{id}")).exists() {
            continue;
        }
        let dev = PathBuf::from(format!("/dev/zram{id}"));
        if swapped_on(&dev) {
            return Err(Error::Failed(format!(
                "{} is still swapped on; not removed",
                dev.display()
            )));
        }
        sys::write_kernel(&Path::new(ZRAM_CONTROL).join("hot_remove"), &id.to_string())?;
        lines.push(format!("removed zram device {}", dev.display()));
    }
    Ok(lines)
}

/// Deletes the swap file if it is there.
pub fn remove_file(path: &Path) -> Result<Option<String>> {
    match std::fs::remove_file(path) {
        Ok(()) => Ok(Some(format!("deleted swap file {}", path.display()))),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(Error::io("cannot delete the swap file", path, e)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Any tmpfs this process sees (/dev/shm on Debian).
    fn a_tmpfs() -> PathBuf {
        sys::mounts()
            .into_iter()
            .find(|m| m.fstype == "tmpfs" && m.mountpoint.is_dir())
            .map(|m| m.mountpoint)
            .expect("a tmpfs is mounted")
    }

    #[test]
    fn a_swap_file_is_never_put_on_tmpfs_nor_beyond_the_free_space() {
        let why = file_refusal(&a_tmpfs(), MIN_BYTES).expect("tmpfs refused");
        assert!(why.contains("tmpfs and others cannot swap"), "{why}");
        let why = file_refusal(Path::new("/"), u64::MAX / 2);
        if let Some(why) = why {
            assert!(
                why.contains("does not fit") || why.contains("file system of type"),
                "{why}"
            );
        }
    }
}
