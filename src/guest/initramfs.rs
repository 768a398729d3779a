//! The guest's root file system: an uncompressed newc cpio archive (the
//! `cpio` crate) with a static busybox and its applets, the vmscale
//! binary `binary` chooses with the shared libraries it links (none for
//! the static guest binary), the
//! kernel's modules for the results disk, /init and the plan; for a plan
//! that may use the set-up room, also its modules and the host's losetup
//! and mkfs.ext4 with their libraries; for one that runs stress-ng, the
//! host's stress-ng with its libraries. Uncompressed, because under TCG the
//! guest's own decompression would be emulated.

use std::fs::File;
use std::io::{BufWriter, Read, Write};
use std::path::{Path, PathBuf};
use std::process::Command;

use super::elf::{interpreter, shared_libraries};
use super::modules::{self, Module};
use super::nested::{Nested, Source};
use super::transport::Bus;
use crate::error::{Error, Result};

/// Where Debian's busybox-static puts its binary.
pub const BUSYBOX: &str = "/bin/busybox";

/// What every guest's root holds besides its kernel's modules.
pub struct Userland {
    busybox: PathBuf,
    applets: Vec<String>,
    /// The vmscale binary for the guest ([`super::binary::choose`]).
    vmscale: PathBuf,
    /// Shared libraries the binary and the tools link, by their absolute
    /// paths.
    libs: Vec<PathBuf>,
    /// The host's programs the set-up room runs, in place of busybox's
    /// applets of the same name: (name, host file).
    tools: Vec<(String, PathBuf)>,
    /// Whether the set-up room's tools and modules go in
    /// ([`super::modules::room_needed`]).
    pub room: bool,
}

/// Programs the set-up room of `run vms` runs (src/setup/) that busybox
/// lacks or offers without the options used (`losetup --find --show`,
/// `mkfs.ext4 -E ...`): taken from the host where it has them.
const ROOM_TOOLS: &[&str] = &["losetup", "mkfs.ext4"];

/// Programs of the host that a step of the plan runs, carried when a step
/// names the workload that runs them: (workload, program, Debian package).
const STEP_PROGRAMS: &[(&str, &str, &str)] = &[("stress-ng", "stress-ng", "stress-ng")];

/// The host's programs `steps` run in the guest (`run stress-ng`: the
/// host's stress-ng, its libraries found as the binary's are), or a
/// refusal naming the package of one the host lacks.
pub fn step_programs(steps: &[Vec<String>]) -> Result<Vec<(String, PathBuf)>> {
    let mut out = Vec::new();
    for (workload, program, package) in STEP_PROGRAMS {
        if !steps.iter().any(|s| s.iter().any(|w| w == workload)) {
            continue;
        }
        let path = host_tool(program).ok_or_else(|| {
            Error::Refused(format!(
                "the plan runs {workload}, and the guest takes {program} from the host, \
                 which has none: apt-get install {package}"
            ))
        })?;
        out.push((program.to_string(), path));
    }
    Ok(out)
}

/// `name` on the host: in the sbin and bin directories, as root's PATH
/// has them.
fn host_tool(name: &str) -> Option<PathBuf> {
    ["/usr/sbin", "/sbin", "/usr/bin", "/bin"]
        .iter()
        .map(|d| Path::new(d).join(name))
        .find(|p| p.is_file())
}

impl Userland {
    /// Checks busybox and chooses the vmscale binary; the set-up room's
    /// tools where `room`, and `programs` ([`step_programs`]). Missing
    /// busybox is a refusal naming the package.
    pub fn prepare(work: &Path, room: bool, programs: Vec<(String, PathBuf)>) -> Result<Userland> {
        let busybox = PathBuf::from(BUSYBOX);
        if !busybox.is_file() {
            return Err(Error::Refused(format!(
                "no {BUSYBOX}: the guest's userland is a static busybox; \
                 install it with `apt-get install busybox-static`"
            )));
        }
        if interpreter(&busybox) != Some(None) {
            return Err(Error::Refused(format!(
                "{BUSYBOX} is dynamically linked: install busybox-static"
            )));
        }
        let list = Command::new(&busybox)
            .arg("--list")
            .output()
            .map_err(|e| Error::io("cannot run", &busybox, e))?;
        let applets = String::from_utf8_lossy(&list.stdout)
            .lines()
            .map(str::trim)
            .filter(|a| !a.is_empty() && *a != "busybox" && !a.contains('/'))
            .map(str::to_string)
            .collect();
        let vmscale = super::binary::choose(work)?;
        let tools: Vec<(String, PathBuf)> = ROOM_TOOLS
            .iter()
            .filter(|_| room)
            .filter_map(|n| Some((n.to_string(), host_tool(n)?)))
            .chain(programs)
            .collect();
        let mut libs = shared_libraries(&vmscale);
        for (_, path) in &tools {
            libs.extend(shared_libraries(path));
        }
        libs.sort();
        libs.dedup();
        Ok(Userland {
            busybox,
            applets,
            vmscale,
            libs,
            tools,
            room,
        })
    }
}

/// A newc archive being written.
struct Archive<W: Write> {
    out: W,
    ino: u32,
}

const DIR: u32 = 0o040755;
const FILE: u32 = 0o100755;
const LINK: u32 = 0o120777;
const CHAR: u32 = 0o020600;
const FIFO: u32 = 0o010600;

impl<W: Write> Archive<W> {
    fn entry(&mut self, name: &str, mode: u32, data: &[u8]) -> std::io::Result<()> {
        self.copy_in(name, mode, data, data.len() as u64)
    }

    /// The file `from` (`len` bytes) streamed in, not read into memory
    /// first.
    fn file(&mut self, name: &str, from: File, len: u64) -> std::io::Result<()> {
        self.copy_in(name, FILE, from, len)
    }

    fn copy_in(&mut self, name: &str, mode: u32, from: impl Read, len: u64) -> std::io::Result<()> {
        let size = u32::try_from(len).map_err(|_| std::io::Error::other("over 4 GiB"))?;
        self.ino += 1;
        let mut w = cpio::NewcBuilder::new(name.trim_start_matches('/'))
            .ino(self.ino)
            .mode(mode)
            .nlink(if mode == DIR { 2 } else { 1 })
            .write(&mut self.out, size);
        if std::io::copy(&mut from.take(len), &mut w)? != len {
            return Err(std::io::Error::other("it shrank while copied"));
        }
        w.finish()?;
        Ok(())
    }

    fn dir(&mut self, name: &str) -> std::io::Result<()> {
        self.entry(name, DIR, b"")
    }

    /// Directories leading to `path` not yet written.
    fn parents(&mut self, path: &str, made: &mut Vec<String>) -> std::io::Result<()> {
        let mut at = String::new();
        let parts: Vec<&str> = path.trim_start_matches('/').split('/').collect();
        for p in &parts[..parts.len().saturating_sub(1)] {
            at.push('/');
            at.push_str(p);
            if !made.contains(&at) {
                self.dir(&at)?;
                made.push(at.clone());
            }
        }
        Ok(())
    }
}

/// The text files of one guest's root, and what a guest whose plan boots
/// guests is given besides.
pub struct Scripts<'a> {
    pub init: &'a str,
    pub plan: &'a str,
    pub setup: &'a str,
    pub nested: Option<&'a Nested>,
}

/// Writes the archive for a kernel whose results disk is on `bus` and
/// needs `mods`.
pub fn write(
    path: &Path,
    user: &Userland,
    mods: &[Module],
    bus: Bus,
    scripts: &Scripts,
) -> Result<()> {
    let io = |e: std::io::Error| Error::io("cannot write", path, e);
    let file = File::create(path).map_err(io)?;
    let mut a = Archive {
        out: BufWriter::new(file),
        ino: 0,
    };
    let mut made: Vec<String> = Vec::new();
    for d in [
        "/bin",
        "/dev",
        "/proc",
        "/sys",
        "/tmp",
        "/out",
        "/root",
        "/root/state",
        "/mods",
    ] {
        a.dir(d).map_err(io)?;
        made.push(d.to_string());
    }
    // The console init's output goes to, before devtmpfs is mounted.
    let mut console = cpio::NewcBuilder::new("dev/console")
        .ino(9999)
        .mode(CHAR)
        .nlink(1)
        .rdev_major(5)
        .rdev_minor(1)
        .write(&mut a.out, 0);
    console.flush().map_err(io)?;
    console.finish().map_err(io)?;
    // The FIFO a TCG guest's heartbeat waits on (no mkfifo process).
    a.entry(super::init::BEAT_FIFO, FIFO, b"").map_err(io)?;
    let open = |p: &Path| {
        let f = File::open(p).map_err(|e| Error::io("cannot read", p, e))?;
        let len = f
            .metadata()
            .map_err(|e| Error::io("cannot read", p, e))?
            .len();
        Ok::<_, Error>((f, len))
    };
    let (f, len) = open(&user.busybox)?;
    a.file("/bin/busybox", f, len).map_err(io)?;
    for applet in &user.applets {
        if user.tools.iter().any(|(n, _)| n == applet) {
            continue;
        }
        a.entry(&format!("/bin/{applet}"), LINK, b"busybox")
            .map_err(io)?;
    }
    for (name, path) in &user.tools {
        let (f, len) = open(path)?;
        a.file(&format!("/bin/{name}"), f, len).map_err(io)?;
    }
    let (f, len) = open(&user.vmscale)?;
    a.file("/bin/vmscale", f, len).map_err(io)?;
    let mut written: Vec<String> = Vec::new();
    for lib in &user.libs {
        let name = lib.to_string_lossy().into_owned();
        a.parents(&name, &mut made).map_err(io)?;
        let (f, len) = open(lib)?;
        a.file(&name, f, len).map_err(io)?;
        written.push(name);
    }
    for f in scripts.nested.map_or(&[][..], |n| &n.files[..]) {
        if written.contains(&f.at) {
            continue;
        }
        a.parents(&f.at, &mut made).map_err(io)?;
        match &f.from {
            Source::File(p) => {
                let (file, len) = open(p)?;
                a.file(&f.at, file, len)
            }
            Source::Bytes(b) => a.entry(&f.at, FILE, b),
            Source::Link(to) => a.entry(&f.at, LINK, to.as_bytes()),
        }
        .map_err(io)?;
        written.push(f.at.clone());
    }
    let mut order = String::new();
    for m in mods {
        a.entry(
            &format!("/mods/{}.ko", m.name),
            0o100644,
            &modules::read(&m.path)?,
        )
        .map_err(io)?;
        order.push_str(&m.name);
        if let Some(flag) = m.cpu_flag {
            order.push(' ');
            order.push_str(flag);
        }
        order.push('\n');
    }
    a.entry("/modules.order", 0o100644, order.as_bytes())
        .map_err(io)?;
    a.entry(super::init::DISK, 0o100644, bus.device().as_bytes())
        .map_err(io)?;
    a.entry("/init", FILE, scripts.init.as_bytes())
        .map_err(io)?;
    a.entry(super::init::FSTAB, 0o100644, super::init::MOUNTS.as_bytes())
        .map_err(io)?;
    a.entry("/plan.sh", FILE, scripts.plan.as_bytes())
        .map_err(io)?;
    a.entry("/setup.sh", FILE, scripts.setup.as_bytes())
        .map_err(io)?;
    // Flushed, not synced: QEMU reads it from the page cache at once, and
    // a temporary file need not reach the disk (an fsync cost a boot
    // some 30 ms here).
    let out = cpio::newc::trailer(a.out).map_err(io)?;
    out.into_inner().map_err(|e| io(e.into_error()))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_plan_that_runs_stress_ng_carries_the_host_s() {
        let words = |w: &[&str]| w.iter().map(|x| x.to_string()).collect::<Vec<String>>();
        let pft = words(&["run", "pft", "--tasks", "1"]);
        assert!(
            step_programs(std::slice::from_ref(&pft))
                .unwrap()
                .is_empty()
        );
        let steps = [pft, words(&["run", "stress-ng", "--stressor", "fault"])];
        match host_tool("stress-ng") {
            Some(p) => assert_eq!(
                step_programs(&steps).unwrap(),
                [("stress-ng".to_string(), p)]
            ),
            None => {
                let e = step_programs(&steps).unwrap_err().to_string();
                assert!(e.contains("apt-get install stress-ng"), "{e}");
            }
        }
    }

    #[test]
    fn the_archive_reads_back_with_every_file() {
        let bin = crate::scratch::at("tool");
        std::fs::write(&bin, b"\x7fELF not really").unwrap();
        let user = Userland {
            busybox: bin.to_path_buf(),
            applets: vec!["sh".into(), "mount".into(), "losetup".into()],
            vmscale: bin.to_path_buf(),
            libs: vec![bin.to_path_buf()],
            tools: vec![("losetup".into(), bin.to_path_buf())],
            room: true,
        };
        let path = bin.with_file_name("initrd");
        let scripts = Scripts {
            init: "#!/bin/sh\n",
            plan: "x",
            setup: "",
            nested: None,
        };
        write(&path, &user, &[], Bus::Nvme, &scripts).unwrap();
        let mut names = Vec::new();
        let mut f = File::open(&path).unwrap();
        loop {
            let r = cpio::NewcReader::new(&mut f).unwrap();
            if r.entry().is_trailer() {
                break;
            }
            names.push((r.entry().name().to_string(), r.entry().mode()));
            r.skip().unwrap();
        }
        let has = |n: &str| names.iter().any(|(x, _)| x == n);
        assert!(has("bin/busybox") && has("bin/sh") && has("init") && has("dev/console"));
        assert!(has("disk"), "{names:?}");
        let beat = super::super::init::BEAT_FIFO.trim_start_matches('/');
        assert!(names.contains(&(beat.to_string(), FIFO)), "{names:?}");
        // A host tool takes the place of busybox's applet of its name.
        let losetup: Vec<u32> = names
            .iter()
            .filter(|(x, _)| x == "bin/losetup")
            .map(|(_, m)| *m)
            .collect();
        assert_eq!(losetup, [FILE]);
        // The library's directories come before it.
        let lib = bin.to_string_lossy().trim_start_matches('/').to_string();
        let lib_at = names.iter().position(|(x, _)| *x == lib).unwrap();
        let parent = bin
            .parent()
            .unwrap()
            .to_string_lossy()
            .trim_start_matches('/')
            .to_string();
        assert!(
            names[..lib_at]
                .iter()
                .any(|(x, m)| *x == parent && *m == DIR)
        );
    }
}
