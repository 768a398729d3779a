//! A guest whose plan boots guests (`vmscale guest` as a plan step): what
//! its root must hold for the inner `vmscale guest` to run — QEMU with the
//! libraries it links, its TCG module and the firmware a q35 machine loads
//! for `-kernel`, each inner kernel's image (and config) and the modules
//! its results disk and set-up room need (at /lib/modules/RELEASE, where
//! the inner vmscale looks) — the inner step rewritten to name those
//! copies, and whether the outer guest's memory holds the inner one. The
//! KVM modules of the outer kernel are `modules::kvm`'s.

use std::path::{Path, PathBuf};
use std::process::Command;

use super::kernel;
use super::modules::{self, ROOM};
use super::qemu::{self, QEMU};
use super::transport::Bus;
use crate::error::{Error, Result};

/// The firmware QEMU loads for a q35 machine booted with `-kernel` and
/// no default devices (found with strace on QEMU 7.2): linuxboot_dma.bin
/// enters a bzImage, pvh.bin an ELF image at its PVH entry. Without
/// pvh.bin QEMU starts anyway and SeaBIOS, finding nothing to boot, halts
/// in real mode with the console silent (seen: `info registers` at
/// f000:b7b9, CR0=0x10).
const FIRMWARE: &[&str] = &[
    "bios-256k.bin",
    "kvmvapic.bin",
    "linuxboot_dma.bin",
    "pvh.bin",
];

/// Where the inner kernels' images go in the outer guest's root.
const KERNELS: &str = "/kernels";

/// A file put into the guest's root.
#[derive(Debug, Clone, PartialEq)]
pub struct Shipped {
    /// Its absolute path in the guest.
    pub at: String,
    pub from: Source,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Source {
    /// A host file's content (symbolic links followed).
    File(PathBuf),
    Bytes(Vec<u8>),
    /// A symbolic link to this target.
    Link(String),
}

/// A `guest` step of a plan as the command line gave it.
#[derive(Debug, Clone)]
pub struct InnerStep {
    /// Its index in the plan.
    pub index: usize,
    /// `--kernel`, in order.
    pub kernels: Vec<PathBuf>,
    /// `--modules`.
    pub modules: Option<PathBuf>,
    /// `--mem`, MiB.
    pub mem_mib: u64,
}

/// What the outer guest is given.
#[derive(Debug, Clone, Default)]
pub struct Nested {
    pub files: Vec<Shipped>,
    /// The plan with the inner steps rewritten.
    pub steps: Vec<Vec<String>>,
    /// The largest inner guest's memory, MiB.
    pub inner_mem_mib: u64,
}

impl Nested {
    /// Bytes the shipped files take in the root (links count nothing).
    pub fn bytes(&self) -> u64 {
        self.files
            .iter()
            .map(|f| match &f.from {
                Source::File(p) => std::fs::metadata(p).map_or(0, |m| m.len()),
                Source::Bytes(b) => b.len() as u64,
                Source::Link(_) => 0,
            })
            .sum()
    }
}

/// The inner steps' kernels resolved on the host, QEMU's files found, and
/// the plan rewritten; `None` when no step boots a guest.
pub fn prepare(plan: &[Vec<String>], inner: &[InnerStep]) -> Result<Option<Nested>> {
    if inner.is_empty() {
        return Ok(None);
    }
    let mut n = Nested {
        files: qemu_files()?,
        steps: plan.to_vec(),
        inner_mem_mib: 0,
    };
    let mut count = 0;
    for s in inner {
        let mut images = Vec::new();
        for k in &s.kernels {
            let k = kernel::resolve(k, s.modules.as_deref())?;
            count += 1;
            let name = k
                .image
                .file_name()
                .map_or("vmlinuz".into(), |f| f.to_string_lossy().into_owned());
            let at = format!("{KERNELS}/{count}/{name}");
            add(&mut n.files, &at, Source::File(k.image.clone()));
            // Its config beside it, where the inner check looks.
            if let Some(c) = super::kernel_config::find(&k) {
                let to = format!("{KERNELS}/{count}/config-{}", k.release);
                add(&mut n.files, &to, Source::File(c.path));
            }
            let mods = modules::resolve_with(
                k.modules.as_deref(),
                &k.release,
                Bus::Virtio.modules(),
                ROOM,
            )?;
            for m in mods {
                add(
                    &mut n.files,
                    &format!("/lib/modules/{}/kernel/{}.ko", k.release, m.name),
                    Source::Bytes(modules::read(&m.path)?),
                );
            }
            if let Some(b) = k.modules.as_deref().map(|d| d.join("modules.builtin"))
                && b.is_file()
            {
                let at = format!("/lib/modules/{}/modules.builtin", k.release);
                add(&mut n.files, &at, Source::File(b));
            }
            images.push(at);
        }
        n.steps[s.index] = rewrite(&plan[s.index], &images);
        n.inner_mem_mib = n.inner_mem_mib.max(s.mem_mib);
    }
    Ok(Some(n))
}

/// Adds `at` unless a file is already there.
fn add(files: &mut Vec<Shipped>, at: &str, from: Source) {
    if !files.iter().any(|f| f.at == at) {
        files.push(Shipped {
            at: at.to_string(),
            from,
        });
    }
}

/// The words of a `guest` step with its `--kernel` values replaced by
/// `images` in order and `--modules` dropped (each image's modules are at
/// /lib/modules/RELEASE); the inner plan after `--` is left as it is.
pub fn rewrite(step: &[String], images: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    let mut next = images.iter();
    let mut words = step.iter();
    while let Some(w) = words.next() {
        if w == "--" {
            out.push(w.clone());
            out.extend(words.by_ref().cloned());
            break;
        }
        if w == "--kernel" {
            words.next();
            out.push(w.clone());
            out.extend(next.next().cloned());
        } else if w.starts_with("--kernel=") {
            out.extend(next.next().map(|i| format!("--kernel={i}")));
        } else if w == "--modules" {
            words.next();
        } else if !w.starts_with("--modules=") {
            out.push(w.clone());
        }
    }
    out
}

/// QEMU, the libraries it and its TCG module link, the module and the
/// firmware, at their own paths (QEMU finds its data relative to its
/// binary), and /bin/qemu-system-x86_64 linked to it (the guest's PATH).
fn qemu_files() -> Result<Vec<Shipped>> {
    let bin = qemu::check_installed()?;
    let bin = bin
        .canonicalize()
        .map_err(|e| Error::io("cannot resolve", &bin, e))?;
    let mut files = Vec::new();
    let text = |p: &Path| p.to_string_lossy().into_owned();
    add(&mut files, &text(&bin), Source::File(bin.clone()));
    if bin != Path::new("/bin").join(QEMU) {
        add(
            &mut files,
            &format!("/bin/{QEMU}"),
            Source::Link(text(&bin)),
        );
    }
    let mut linked = vec![bin.clone()];
    if let Some(m) = tcg_module(&bin) {
        add(&mut files, &text(&m), Source::File(m.clone()));
        linked.push(m);
    }
    for exe in &linked {
        for lib in super::elf::shared_libraries(exe) {
            add(&mut files, &text(&lib), Source::File(lib.clone()));
        }
    }
    let dirs = data_dirs(&bin)?;
    for name in FIRMWARE {
        let found = dirs.iter().map(|d| d.join(name)).find(|p| p.is_file());
        let Some(f) = found else {
            return Err(Error::Refused(format!(
                "QEMU's firmware {name} is in none of its data directories ({}): install \
                 qemu-system-data and seabios (a guest whose plan boots guests carries it)",
                dirs.iter()
                    .map(|d| d.display().to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            )));
        };
        // Under the (canonical) directory QEMU searches, the content of
        // what it names (Debian links some into seabios' directory).
        add(&mut files, &text(&f), Source::File(f.clone()));
    }
    Ok(files)
}

/// QEMU's TCG accelerator when it is built as a module (Debian's is), so
/// an inner `--accel auto` can fall back to it.
fn tcg_module(bin: &Path) -> Option<PathBuf> {
    let prefix = bin.parent()?.parent()?;
    ["lib/x86_64-linux-gnu/qemu", "lib64/qemu", "lib/qemu"]
        .iter()
        .map(|d| prefix.join(d).join("accel-tcg-x86_64.so"))
        .find(|p| p.is_file())
}

/// The directories QEMU looks for firmware in (`-L help`), canonical.
fn data_dirs(bin: &Path) -> Result<Vec<PathBuf>> {
    let out = Command::new(bin)
        .args(["-L", "help"])
        .output()
        .map_err(|e| Error::io("cannot run", bin, e))?;
    Ok(String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| PathBuf::from(l.trim()))
        .filter_map(|p| p.canonicalize().ok())
        .collect())
}

/// The memory an outer guest needs besides the inner guest's and twice
/// its root (its unpacked files, and the inner guest's root and probe in
/// /tmp, smaller): its kernel and the inner QEMU. Measured: a 1 GiB TCG
/// guest with a 92 MiB root had 784 MiB available before its plan.
pub const BASE_MIB: u64 = 256;

/// Refuses an outer guest of `outer_mib` whose root archive is
/// `root_bytes` and whose plan boots a guest of `inner_mib`, naming the
/// numbers.
pub fn check_memory(outer_mib: u64, inner_mib: u64, root_bytes: u64) -> Result<()> {
    let root_mib = root_bytes.div_ceil(1 << 20);
    let need = inner_mib + 2 * root_mib + BASE_MIB;
    if outer_mib < need {
        return Err(Error::Input(format!(
            "--mem {outer_mib}M is too little for a guest whose plan boots a {inner_mib} MiB \
             guest: that guest's memory, 2 × this guest's {root_mib} MiB root (its files, \
             the inner guest's root) and {BASE_MIB} MiB for the kernel and QEMU need \
             {need} MiB: give --mem {need}M or more (or a smaller inner --mem)"
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn the_inner_step_names_the_copies_and_keeps_its_plan() {
        let step = words(
            "guest --kernel /h/a.deb --modules /h/m --kernel=/h/b --accel kvm \
             -- run pft --kernel x --modules y",
        );
        let got = rewrite(&step, &["/kernels/1/a".into(), "/kernels/2/b".into()]);
        assert_eq!(
            got.join(" "),
            "guest --kernel /kernels/1/a --kernel=/kernels/2/b --accel kvm \
             -- run pft --kernel x --modules y"
        );
    }

    #[test]
    fn memory_too_small_for_the_inner_guest_is_refused_with_the_numbers() {
        assert!(check_memory(968, 512, 100 << 20).is_ok());
        let e = check_memory(967, 512, 100 << 20).unwrap_err();
        let m = e.to_string();
        assert!(e.is_input(), "{m}");
        assert!(
            m.contains("--mem 967M") && m.contains("512 MiB") && m.contains("--mem 968M"),
            "{m}"
        );
    }
}
