//! A memory cgroup with a limit. Where cgroup v2 has the memory controller
//! the child is made at the v2 root with `memory.max` (the controller
//! enabled in the root's `cgroup.subtree_control` first if it is not, and
//! disabled again when undone). On hybrid hosts, whose memory controller
//! is bound to a v1 hierarchy (systemd's hybrid mode, this project's test
//! machine), the child is made below vmscale's own v1 memory cgroup with
//! `memory.limit_in_bytes`: it stays inside any limit vmscale runs under.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::journal::{Journal, Step};
use super::sys;
use crate::error::{Error, Result};

/// Every cgroup the set-up makes is named so.
pub const PREFIX: &str = "vmscale-setup-";

/// Smallest limit: below it a case's own code and stacks are reclaimed.
pub const MIN_BYTES: u64 = 4 << 20;

/// A cgroup made by the set-up.
#[derive(Clone, Debug)]
pub struct Memcg {
    path: PathBuf,
    version: u8,
}

/// Where a memory cgroup can be made.
#[derive(Debug)]
enum Parent {
    /// The cgroup v2 root; `enable` when memory is not yet in its
    /// subtree_control.
    V2 { root: PathBuf, enable: bool },
    /// vmscale's own cgroup in the v1 memory hierarchy.
    V1 { dir: PathBuf },
}

fn locate() -> Result<Parent> {
    let mounts = sys::mounts();
    let mut offered = None;
    if let Some(m) = mounts.iter().find(|m| m.fstype == "cgroup2") {
        let controllers =
            std::fs::read_to_string(m.mountpoint.join("cgroup.controllers")).unwrap_or_default();
        if controllers.split_whitespace().any(|c| c == "memory") {
            let sub = std::fs::read_to_string(m.mountpoint.join("cgroup.subtree_control"))
                .unwrap_or_default();
            return Ok(Parent::V2 {
                root: m.mountpoint.clone(),
                enable: !sub.split_whitespace().any(|c| c == "memory"),
            });
        }
        offered = Some(format!(
            "cgroup v2 at {} offers only '{}'",
            m.mountpoint.display(),
            controllers.trim()
        ));
    }
    let v1 = mounts
        .iter()
        .find(|m| m.fstype == "cgroup" && m.super_options.split(',').any(|o| o == "memory"));
    if let Some(m) = v1 {
        let own = std::fs::read_to_string("/proc/self/cgroup").unwrap_or_default();
        let own = own.lines().find_map(|l| {
            let mut f = l.splitn(3, ':');
            let (_, names, path) = (f.next()?, f.next()?, f.next()?);
            names
                .split(',')
                .any(|n| n == "memory")
                .then(|| path.to_string())
        });
        if let Some(own) = own {
            let rel = Path::new(&own)
                .strip_prefix(&m.root)
                .unwrap_or(Path::new(&own))
                .to_path_buf();
            let rel = rel.strip_prefix("/").unwrap_or(rel.as_path());
            return Ok(Parent::V1 {
                dir: m.mountpoint.join(rel),
            });
        }
    }
    Err(Error::Refused(format!(
        "a memory cgroup needs the memory controller, but {} and no cgroup v1 memory \
         hierarchy is mounted: boot with systemd.unified_cgroup_hierarchy=1 (or mount \
         cgroup2 at /sys/fs/cgroup) and a kernel with CONFIG_MEMCG",
        offered.unwrap_or_else(|| "no cgroup v2 is mounted".into())
    )))
}

/// Refuses, before anything is made, what cannot be done here.
pub fn check(max_bytes: u64) -> Result<()> {
    let (total, _) = sys::memory()?;
    if max_bytes < MIN_BYTES || max_bytes > total {
        return Err(Error::Input(format!(
            "a memory cgroup limit of {} is out of range: between {} and MemTotal {} (a \
             limit above MemTotal puts no pressure)",
            crate::units::memory(max_bytes),
            crate::units::memory(MIN_BYTES),
            crate::units::memory(total)
        )));
    }
    locate().map(|_| ())
}

/// Makes cgroup `n` with its limit; each step journaled before it is made.
pub fn make(j: &mut Journal, n: usize, max_bytes: u64) -> Result<Memcg> {
    let id = j
        .record
        .room
        .file_name()
        .map(|f| f.to_string_lossy().into_owned())
        .unwrap_or_default();
    let (dir, version, limit_file) = match locate()? {
        Parent::V2 { root, enable } => {
            if enable {
                let file = root.join("cgroup.subtree_control");
                j.push(Step::Controller { file: file.clone() })?;
                sys::write_kernel(&file, "+memory")?;
            }
            (root, 2, "memory.max")
        }
        Parent::V1 { dir } => (dir, 1, "memory.limit_in_bytes"),
    };
    let path = dir.join(format!("{PREFIX}{id}-{n}"));
    j.push(Step::Cgroup { path: path.clone() })?;
    std::fs::create_dir(&path).map_err(|e| Error::io("cannot create the cgroup", &path, e))?;
    let limit = path.join(limit_file);
    sys::write_kernel(&limit, &max_bytes.to_string())?;
    let set: u64 = sys::read_kernel(&limit)?.parse().unwrap_or(0);
    // The kernel rounds the limit down to whole pages.
    if set > max_bytes || set + 4096 < max_bytes {
        return Err(Error::Failed(format!(
            "{} reads {set} after writing {max_bytes}",
            limit.display()
        )));
    }
    Ok(Memcg { path, version })
}

impl Memcg {
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// 2 for cgroup v2 (`memory.max`), 1 for a v1 memory hierarchy
    /// (`memory.limit_in_bytes`).
    pub fn version(&self) -> u8 {
        self.version
    }

    /// Moves a process (all its threads) into the cgroup: cgroup.procs.
    pub fn add_pid(&self, pid: u32) -> Result<()> {
        sys::write_kernel(&self.path.join("cgroup.procs"), &pid.to_string())
    }

    /// memory.stat as name -> value. Under v1 the names v2 gives the
    /// cgroup's own totals are added: `anon` (total_rss), `file`
    /// (total_cache), `shmem`, `file_mapped`, `pgfault`, `pgmajfault`.
    pub fn stat(&self) -> Result<BTreeMap<String, u64>> {
        let mut m = read_pairs(&self.path.join("memory.stat"))?;
        if self.version == 1 {
            for (v2, v1) in [
                ("anon", "total_rss"),
                ("file", "total_cache"),
                ("shmem", "total_shmem"),
                ("file_mapped", "total_mapped_file"),
                ("pgfault", "total_pgfault"),
                ("pgmajfault", "total_pgmajfault"),
            ] {
                if let Some(v) = m.get(v1).copied() {
                    m.insert(v2.to_string(), v);
                }
            }
        }
        Ok(m)
    }

    /// memory.events as name -> value. Under v1: `max` is memory.failcnt
    /// (times the limit was hit) and `oom_kill` memory.oom_control's.
    pub fn events(&self) -> Result<BTreeMap<String, u64>> {
        if self.version == 2 {
            return read_pairs(&self.path.join("memory.events"));
        }
        let mut m = BTreeMap::new();
        let fail = sys::read_kernel(&self.path.join("memory.failcnt"))?;
        m.insert("max".to_string(), fail.parse().unwrap_or(0));
        let oom = read_pairs(&self.path.join("memory.oom_control"))?;
        if let Some(k) = oom.get("oom_kill") {
            m.insert("oom_kill".to_string(), *k);
        }
        Ok(m)
    }
}

fn read_pairs(path: &Path) -> Result<BTreeMap<String, u64>> {
    let text = std::fs::read_to_string(path).map_err(|e| Error::io("cannot read", path, e))?;
    Ok(text
        .lines()
        .filter_map(|l| {
            let (k, v) = l.split_once(' ')?;
            Some((k.to_string(), v.trim().parse().ok()?))
        })
        .collect())
}

/// The journal names a cgroup of ours: a directory called `PREFIX...`
/// inside a cgroup file system, reached by plain components.
fn checked(path: &Path) -> Result<()> {
    let ours = path
        .file_name()
        .is_some_and(|f| f.to_string_lossy().starts_with(PREFIX));
    let in_cgroupfs = sys::mounts().iter().any(|m| {
        (m.fstype == "cgroup2" || m.fstype == "cgroup")
            && path.parent().is_some_and(|p| p.starts_with(&m.mountpoint))
    });
    if !ours || !in_cgroupfs || !super::journal::in_room(Path::new("/"), path) {
        return Err(Error::Refused(format!(
            "refused the set-up journal's cgroup {}: not a {PREFIX}* cgroup in a cgroup \
             file system",
            path.display()
        )));
    }
    Ok(())
}

/// Removes cgroup `path` if it is there. Processes a killed run left in
/// it are moved to its parent first (never killed).
pub fn remove(path: &Path) -> Result<Option<String>> {
    checked(path)?;
    if !path.is_dir() {
        return Ok(None);
    }
    let parent = path.parent().unwrap_or(Path::new("/"));
    let mut moved = 0;
    let mut last = None;
    // Tasks that are exiting may hold the cgroup a moment.
    for _ in 0..100 {
        let procs = std::fs::read_to_string(path.join("cgroup.procs")).unwrap_or_default();
        for pid in procs.split_whitespace() {
            if sys::write_kernel(&parent.join("cgroup.procs"), pid).is_ok() {
                moved += 1;
            }
        }
        match std::fs::remove_dir(path) {
            Ok(()) => {
                let how = if moved > 0 {
                    format!(" ({moved} process(es) left in it moved to its parent)")
                } else {
                    String::new()
                };
                return Ok(Some(format!("removed cgroup {}{how}", path.display())));
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => last = Some(e),
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    Err(Error::io(
        "cannot remove the cgroup",
        path,
        last.unwrap_or_else(|| std::io::Error::other("busy")),
    ))
}

/// Disables the memory controller in `file` (a v2 root's subtree_control)
/// again; still used by other cgroups, it is left enabled, saying so.
pub fn disable(file: &Path) -> Result<Option<String>> {
    let root_file = sys::mounts()
        .into_iter()
        .any(|m| m.fstype == "cgroup2" && m.mountpoint.join("cgroup.subtree_control") == file);
    if !root_file {
        return Err(Error::Refused(format!(
            "refused the set-up journal's controller file {}: not a cgroup v2 root's \
             cgroup.subtree_control",
            file.display()
        )));
    }
    let now = std::fs::read_to_string(file).unwrap_or_default();
    if !now.split_whitespace().any(|c| c == "memory") {
        return Ok(None);
    }
    match std::fs::write(file, "-memory") {
        Ok(()) => Ok(Some(format!(
            "memory controller disabled again in {}",
            file.display()
        ))),
        Err(e) if e.raw_os_error() == Some(libc::EBUSY) => Ok(Some(format!(
            "memory controller left enabled in {}: other cgroups use it now",
            file.display()
        ))),
        Err(e) => Err(Error::io("cannot write '-memory' to", file, e)),
    }
}
