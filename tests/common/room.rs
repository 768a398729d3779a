//! What a set-up room (src/setup/) can leave on the machine, read from
//! the kernel for the tests that kill its holders: mounts and loop devices
//! below a state directory, swap areas, zram devices, the set-up's cgroups
//! of a process, the files in `<state>/setup`, nr_hugepages.

use std::path::{Path, PathBuf};
use std::process::Command;

pub const NR_HUGEPAGES: &str = "/proc/sys/vm/nr_hugepages";

pub fn read(p: impl AsRef<Path>) -> String {
    std::fs::read_to_string(p).unwrap_or_default()
}

pub fn hugepages() -> u64 {
    read(NR_HUGEPAGES).trim().parse().unwrap()
}

/// A private state directory (mode 0700 up from the scratch directory,
/// as the set-up's checks want) below `dir`.
pub fn private_state(dir: &Path) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let state = dir.join("state");
    std::fs::create_dir(&state).unwrap();
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700)).unwrap();
    std::fs::set_permissions(&state, std::fs::Permissions::from_mode(0o700)).unwrap();
    state
}

/// Mount points below `dir` (/proc/self/mountinfo).
pub fn mounts_below(dir: &Path) -> Vec<String> {
    read("/proc/self/mountinfo")
        .lines()
        .filter_map(|l| l.split(' ').nth(4))
        .filter(|m| Path::new(m).starts_with(dir))
        .map(String::from)
        .collect()
}

/// Loop devices whose backing file lies below `dir` (sysfs and losetup).
pub fn loops_below(dir: &Path) -> Vec<String> {
    let mut found: Vec<String> = std::fs::read_dir("/sys/block")
        .unwrap()
        .filter_map(|e| {
            let name = e.ok()?.file_name().into_string().ok()?;
            let back = read(format!("/sys/block/{name}/loop/backing_file"));
            Path::new(back.trim()).starts_with(dir).then_some(name)
        })
        .collect();
    let losetup = Command::new("losetup").arg("-a").output().unwrap();
    assert!(losetup.status.success(), "losetup -a: {losetup:?}");
    for l in String::from_utf8_lossy(&losetup.stdout).lines() {
        if l.contains(&*dir.to_string_lossy()) {
            found.push(l.to_string());
        }
    }
    found
}

/// Swap areas in /proc/swaps.
pub fn swaps() -> Vec<String> {
    read("/proc/swaps")
        .lines()
        .skip(1)
        .filter_map(|l| l.split_whitespace().next().map(String::from))
        .collect()
}

pub fn zram_ids() -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir("/sys/block")
        .unwrap()
        .filter_map(|e| {
            let n = e.ok()?.file_name().into_string().ok()?;
            n.starts_with("zram").then_some(n)
        })
        .collect();
    v.sort();
    v
}

/// Cgroups named by the set-up for process `pid`, in every cgroup tree
/// (walked to a depth of four).
pub fn cgroups_of(pid: u32) -> Vec<PathBuf> {
    fn walk(d: &Path, depth: u32, want: &str, out: &mut Vec<PathBuf>) {
        let Ok(rd) = std::fs::read_dir(d) else { return };
        for e in rd.flatten() {
            let p = e.path();
            if !e.file_type().is_ok_and(|t| t.is_dir()) {
                continue;
            }
            if e.file_name().to_string_lossy().starts_with(want) {
                out.push(p);
            } else if depth > 0 {
                walk(&p, depth - 1, want, out);
            }
        }
    }
    let mut out = Vec::new();
    walk(
        Path::new("/sys/fs/cgroup"),
        4,
        &format!("vmscale-setup-{pid}-"),
        &mut out,
    );
    out
}

/// What the machine holds that a set-up could leave, for comparison.
#[derive(Debug, PartialEq)]
pub struct Left {
    pub mounts: Vec<String>,
    pub loops: Vec<String>,
    pub swaps: Vec<String>,
    pub zram: Vec<String>,
    pub cgroups: Vec<PathBuf>,
    pub files: Vec<String>,
    pub hugepages: u64,
}

pub fn left(state: &Path, pid: u32) -> Left {
    let setup_dir = state.join("setup");
    let mut files: Vec<String> = std::fs::read_dir(&setup_dir)
        .map(|d| {
            d.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    files.sort();
    Left {
        mounts: mounts_below(state),
        loops: loops_below(state),
        swaps: swaps(),
        zram: zram_ids(),
        cgroups: cgroups_of(pid),
        files,
        hugepages: hugepages(),
    }
}

/// Nothing of the set-up: no mount, loop device or cgroup of it, the
/// swaps, zram devices and nr_hugepages as `before`, an empty state dir.
pub fn assert_clean(state: &Path, pid: u32, before: &Left) {
    let now = left(state, pid);
    let want = Left {
        mounts: vec![],
        loops: vec![],
        swaps: before.swaps.clone(),
        zram: before.zram.clone(),
        cgroups: vec![],
        files: vec![],
        hugepages: before.hugepages,
    };
    assert_eq!(now, want, "the set-up left something behind");
}
