//! Results out of the guest: a sparse raw disk image the guest sees as
//! /dev/vda (virtio-blk) or /dev/nvme0n1 (NVMe), onto which its init
//! writes /out as a tar archive (no file system, so nothing to mount or
//! repair); the host reads the archive back with the `tar` crate into a
//! directory.

use std::path::{Path, PathBuf};

use super::files;
use crate::error::{Error, Result};

/// The guest's sysfs topology files as `PATH:LINE` lines (its /init's
/// one grep), laid out on the host under [`files::TOPOLOGY`] by their
/// paths.
pub const TOPOLOGY_LINES: &str = "sysfs-topology.lines";

/// Room for the guest's store and outputs (sparse: costs only what is
/// written).
pub const DISK_BYTES: u64 = 1 << 30;

/// How the results disk is attached (`modules::results_bus`
/// picks it for a kernel).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Bus {
    Virtio,
    Nvme,
}

impl Bus {
    /// The disk's device node in the guest.
    pub fn device(self) -> &'static str {
        match self {
            Bus::Virtio => "/dev/vda",
            Bus::Nvme => "/dev/nvme0n1",
        }
    }

    /// The modules the guest needs for it, unless built in: the PCI
    /// transport and the block driver, or the NVMe driver.
    pub fn modules(self) -> &'static [&'static str] {
        match self {
            Bus::Virtio => &["virtio_pci", "virtio_blk"],
            Bus::Nvme => &["nvme"],
        }
    }

    /// QEMU's arguments for the image at `path`. `cache=unsafe`: the
    /// guest's flush (its `sync`) need not reach the host's disk, as the
    /// host reads the image back from its page cache and then deletes it.
    pub fn qemu_args(self, path: &Path) -> Vec<String> {
        let drive = format!("file={},format=raw,cache=unsafe", path.display());
        match self {
            Bus::Virtio => vec!["-drive".into(), format!("{drive},if=virtio")],
            // One I/O queue: the disk is written once, and each queue is
            // set up by the guest's driver at boot.
            Bus::Nvme => vec![
                "-drive".into(),
                format!("{drive},if=none,id=results"),
                "-device".into(),
                "nvme,serial=vmscale,drive=results,max_ioqpairs=1".into(),
            ],
        }
    }
}

/// Creates the empty results disk at `path`.
pub fn create_disk(path: &Path) -> Result<()> {
    let f = std::fs::File::create(path).map_err(|e| Error::io("cannot create", path, e))?;
    f.set_len(DISK_BYTES)
        .map_err(|e| Error::io("cannot size", path, e))
}

/// What one guest brought back.
#[derive(Debug)]
pub struct Results {
    pub dir: PathBuf,
}

impl Results {
    /// A small text file the guest wrote, trimmed.
    pub fn text(&self, name: &str) -> Option<String> {
        std::fs::read_to_string(self.dir.join(name))
            .ok()
            .map(|s| s.trim().to_string())
    }

    /// The guest's store, if it made one.
    pub fn store(&self) -> Option<PathBuf> {
        Some(self.dir.join(files::STORE)).filter(|p| p.is_file())
    }

    /// The exit status of plan step `k` (1-based), if it ran.
    pub fn step_status(&self, k: usize) -> Option<i32> {
        self.text(&files::step_status(k))?.parse().ok()
    }

    /// The last `n` lines of a file the guest wrote.
    pub fn tail(&self, name: &str, n: usize) -> Vec<String> {
        let text = std::fs::read_to_string(self.dir.join(name)).unwrap_or_default();
        let lines: Vec<&str> = text.lines().collect();
        lines[lines.len().saturating_sub(n)..]
            .iter()
            .map(|l| l.to_string())
            .collect()
    }
}

/// Reads the archive on `disk` into `dir`; `None` if the guest wrote none.
pub fn read_disk(disk: &Path, dir: &Path) -> Result<Option<Results>> {
    let f = std::fs::File::open(disk).map_err(|e| Error::io("cannot read", disk, e))?;
    std::fs::create_dir_all(dir).map_err(|e| Error::io("cannot create", dir, e))?;
    let mut a = tar::Archive::new(f);
    a.set_preserve_permissions(false);
    a.set_preserve_mtime(false);
    a.set_overwrite(true);
    let entries = match a.entries() {
        Ok(e) => e,
        Err(_) => return Ok(None),
    };
    let mut any = false;
    for e in entries {
        // A disk the guest never wrote reads as an empty archive; a
        // damaged one ends where it breaks.
        let Ok(mut e) = e else { break };
        // The guest's /out holds files and directories only. A link is
        // left out: unpacked, a later write under its name (the topology
        // laid out below) would follow it out of `dir` on the host.
        let kind = e.header().entry_type();
        if !(kind.is_file() || kind.is_dir()) {
            continue;
        }
        // unpack_in refuses paths that leave `dir` (.., absolute, links).
        match e.unpack_in(dir) {
            Ok(_) => any = true,
            Err(err) => {
                return Err(Error::Failed(format!(
                    "the guest's results on {} are damaged: {err}",
                    disk.display()
                )));
            }
        }
    }
    if any {
        lay_out_topology(dir)?;
    }
    Ok(any.then(|| Results {
        dir: dir.to_path_buf(),
    }))
}

/// The [`TOPOLOGY_LINES`] in `dir` written out as files under
/// `dir`/[`files::TOPOLOGY`] by their paths; lines naming a path outside
/// /sys/devices/system are left out.
fn lay_out_topology(dir: &Path) -> Result<()> {
    use std::collections::BTreeMap;
    use std::path::Component;
    let lines_at = dir.join(TOPOLOGY_LINES);
    let Ok(text) = std::fs::read_to_string(&lines_at) else {
        return Ok(());
    };
    let mut files: BTreeMap<PathBuf, String> = BTreeMap::new();
    for line in text.lines() {
        let Some((path, value)) = line.split_once(':') else {
            continue;
        };
        let Some(rel) = path.strip_prefix("/sys/devices/system/") else {
            continue;
        };
        let rel = Path::new(rel);
        if rel.components().any(|c| !matches!(c, Component::Normal(_))) {
            continue;
        }
        let text = files.entry(rel.to_path_buf()).or_default();
        text.push_str(value);
        text.push('\n');
    }
    let root = dir.join(files::TOPOLOGY).join("sys/devices/system");
    for (rel, text) in files {
        let at = root.join(rel);
        if let Some(parent) = at.parent() {
            std::fs::create_dir_all(parent).map_err(|e| Error::io("cannot create", parent, e))?;
        }
        std::fs::write(&at, text).map_err(|e| Error::io("cannot write", &at, e))?;
    }
    std::fs::remove_file(&lines_at).map_err(|e| Error::io("cannot remove", &lines_at, e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unwritten_disk_brings_nothing_and_a_written_one_its_files() {
        let disk = crate::scratch::at("out.img");
        create_disk(&disk).unwrap();
        assert!(
            read_disk(&disk, &disk.with_file_name("a"))
                .unwrap()
                .is_none()
        );
        // What busybox tar writes: a plain archive at the start of the disk.
        {
            let f = std::fs::OpenOptions::new().write(true).open(&disk).unwrap();
            let mut b = tar::Builder::new(f);
            let mut h = tar::Header::new_gnu();
            let data = b"0\n";
            h.set_size(data.len() as u64);
            h.set_mode(0o644);
            h.set_cksum();
            b.append_data(&mut h, "./step-1.status", &data[..]).unwrap();
            b.finish().unwrap();
        }
        let r = read_disk(&disk, &disk.with_file_name("b"))
            .unwrap()
            .unwrap();
        assert_eq!(r.step_status(1), Some(0));
        assert_eq!(r.step_status(2), None);
        assert!(r.store().is_none());
    }

    #[test]
    fn a_link_in_the_results_is_left_out_so_nothing_is_written_through_it() {
        let disk = crate::scratch::at("out.img");
        create_disk(&disk).unwrap();
        let outside = disk.with_file_name("outside");
        std::fs::create_dir(&outside).unwrap();
        {
            let f = std::fs::OpenOptions::new().write(true).open(&disk).unwrap();
            let mut b = tar::Builder::new(f);
            let mut link = tar::Header::new_gnu();
            link.set_entry_type(tar::EntryType::Symlink);
            link.set_size(0);
            link.set_mode(0o777);
            b.append_link(&mut link, files::TOPOLOGY, &outside).unwrap();
            let lines = b"/sys/devices/system/cpu/online:0\n";
            let mut h = tar::Header::new_gnu();
            h.set_size(lines.len() as u64);
            h.set_mode(0o644);
            h.set_cksum();
            b.append_data(&mut h, TOPOLOGY_LINES, &lines[..]).unwrap();
            b.finish().unwrap();
        }
        let dir = disk.with_file_name("res");
        read_disk(&disk, &dir).unwrap().unwrap();
        assert_eq!(std::fs::read_dir(&outside).unwrap().count(), 0);
        let topo = dir.join(files::TOPOLOGY);
        assert!(topo.symlink_metadata().unwrap().is_dir());
        let online = topo.join("sys/devices/system/cpu/online");
        assert_eq!(std::fs::read_to_string(online).unwrap(), "0\n");
    }

    #[test]
    fn the_topology_lines_are_laid_out_as_files() {
        let dir = crate::scratch::at("res");
        std::fs::create_dir_all(&*dir).unwrap();
        let s = "/sys/devices/system";
        let lines = format!(
            "{s}/cpu/online:0-1\n{s}/node/node0/meminfo:Node 0 MemTotal: 1 kB\n\
             {s}/node/node0/meminfo:Node 0 MemFree: 2 kB\n{s}/node/node1/cpulist:\n\
             {s}/../../etc/x:no\n/etc/passwd:no\nnot a line\n"
        );
        std::fs::write(dir.join(TOPOLOGY_LINES), lines).unwrap();
        lay_out_topology(&dir).unwrap();
        let root = dir.join(files::TOPOLOGY).join("sys/devices/system");
        let read = |p: &str| std::fs::read_to_string(root.join(p)).unwrap();
        assert_eq!(read("cpu/online"), "0-1\n");
        assert_eq!(
            read("node/node0/meminfo"),
            "Node 0 MemTotal: 1 kB\nNode 0 MemFree: 2 kB\n"
        );
        // A memory-only node's empty CPU list is one empty line.
        assert_eq!(read("node/node1/cpulist"), "\n");
        assert!(!dir.join(TOPOLOGY_LINES).exists());
        assert!(!dir.join(files::TOPOLOGY).join("etc").exists());
        assert!(!root.join("../../etc/x").exists());
    }
}
