//! The kernel modules a guest needs for its results disk (virtio-pci and
//! virtio-blk, or NVMe where that is built in and virtio is not), in load
//! order. Kernels differ: one builds a driver in
//! (modules.builtin names it), another ships it as a module that depends
//! on others (its `.modinfo` section says `depends=`), and the order of
//! those dependencies changes between releases. A package carries no
//! modules.dep (depmod writes it at install), so the order is read from
//! each module's own `.modinfo`.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use super::transport::Bus;
use crate::error::{Error, Result};

/// The results disk's bus for a kernel whose modules are in `dir`: NVMe
/// where the kernel builds its driver in and virtio's not (Debian's cloud
/// kernels: under TCG their six virtio modules cost a boot some 0.11 s,
/// measured with /proc/uptime in the guest); else virtio-blk, also where
/// nothing is known of the kernel's modules.
pub fn results_bus(dir: Option<&Path>) -> Bus {
    let Some(dir) = dir else { return Bus::Virtio };
    let built_in = builtin(dir);
    let all = |names: &[&str]| names.iter().all(|n| built_in.contains(*n));
    if all(Bus::Nvme.modules()) && !all(Bus::Virtio.modules()) {
        Bus::Nvme
    } else {
        Bus::Virtio
    }
}

/// What the set-up room of `run vms` needs (src/setup/): loop devices,
/// zram with its default compressor (a crypto algorithm is asked for by
/// name, not a `depends=`, and the guest has no modprobe), ext4. Loaded
/// where the kernel ships them; a kernel without them boots all the same
/// and the cases that need them are refused inside, naming what is
/// missing.
pub const ROOM: &[&str] = &["loop", "zram", "lzo_rle", "ext4"];

/// What a plan step runs that may use the set-up room: `run vms`, the
/// quick suite (vms is in it) and `run cmd` (any program).
const ROOM_USERS: &[&str] = &["vms", crate::workload::QUICK, "cmd"];

/// Whether a guest's plan may use the set-up room (the [`ROOM`] modules,
/// losetup and mkfs.ext4): a step naming one of [`ROOM_USERS`], any
/// `--setup` line (a shell line may run anything) or a plan that boots
/// guests (theirs are set up inside). A guest that cannot need it boots
/// without it: under TCG each module costs a boot tens of ms.
pub fn room_needed(steps: &[Vec<String>], setup: &[String], nested: bool) -> bool {
    nested
        || !setup.is_empty()
        || steps
            .iter()
            .any(|s| s.iter().any(|w| ROOM_USERS.contains(&w.as_str())))
}

/// One module to load, in order.
#[derive(Debug, Clone, PartialEq)]
pub struct Module {
    pub name: String,
    pub path: PathBuf,
    /// A /proc/cpuinfo flag the CPU must show for the module to be loaded
    /// (`svm` for kvm_amd, `vmx` for kvm_intel).
    pub cpu_flag: Option<&'static str>,
}

/// A module's name as the kernel spells it: the file's stem with `-` as `_`.
fn name_of(file: &str) -> Option<String> {
    let stem = file
        .strip_suffix(".ko")
        .or_else(|| file.strip_suffix(".ko.xz"))?;
    Some(stem.replace('-', "_"))
}

/// Names of the modules built into the kernel (modules.builtin).
fn builtin(dir: &Path) -> BTreeSet<String> {
    std::fs::read_to_string(dir.join("modules.builtin"))
        .unwrap_or_default()
        .lines()
        .filter_map(|l| name_of(l.rsplit('/').next()?))
        .collect()
}

/// Every module file under `dir/kernel`, by name.
fn index(dir: &Path) -> BTreeMap<String, PathBuf> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.join("kernel")];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            let p = e.path();
            let Ok(t) = e.file_type() else { continue };
            if t.is_dir() {
                stack.push(p);
            } else if t.is_file()
                && let Some(n) = p.file_name().and_then(|f| name_of(&f.to_string_lossy()))
            {
                out.insert(n, p);
            }
        }
    }
    out
}

/// The module file's bytes, decompressed (.ko.xz).
pub fn read(path: &Path) -> Result<Vec<u8>> {
    let raw = std::fs::read(path).map_err(|e| Error::io("cannot read", path, e))?;
    if path.extension().is_some_and(|e| e == "xz") {
        let mut out = Vec::new();
        std::io::Read::read_to_end(&mut liblzma::read::XzDecoder::new(&raw[..]), &mut out)
            .map_err(|e| Error::io("cannot decompress", path, e))?;
        return Ok(out);
    }
    Ok(raw)
}

/// The `depends=` of a module's `.modinfo` section.
fn depends(path: &Path) -> Result<Vec<String>> {
    use object::{Object, ObjectSection};
    let bytes = read(path)?;
    let bad = |why: String| Error::Input(format!("module {}: {why}", path.display()));
    let elf = object::File::parse(&*bytes).map_err(|e| bad(format!("not an ELF module ({e})")))?;
    let info = elf
        .section_by_name(".modinfo")
        .ok_or_else(|| bad("no .modinfo section".into()))?
        .data()
        .map_err(|e| bad(format!("unreadable .modinfo ({e})")))?;
    Ok(info
        .split(|b| *b == 0)
        .filter_map(|kv| kv.strip_prefix(b"depends="))
        .flat_map(|v| {
            String::from_utf8_lossy(v)
                .split(',')
                .map(str::to_string)
                .collect::<Vec<_>>()
        })
        .filter(|d| !d.is_empty())
        .collect())
}

/// The modules to load for `needed`, dependencies first, from the
/// modules directory `dir` (`lib/modules/RELEASE`). `None`: no modules are
/// known, so the drivers must be built in.
pub fn resolve(dir: Option<&Path>, release: &str, needed: &[&str]) -> Result<Vec<Module>> {
    let Some(dir) = dir else {
        return Ok(Vec::new());
    };
    let builtin = builtin(dir);
    let files = index(dir);
    let mut order = Vec::new();
    let mut seen = BTreeSet::new();
    for n in needed {
        visit(n, &builtin, &files, &mut seen, &mut order, dir, release)?;
    }
    Ok(order)
}

/// The KVM modules of a guest whose plan boots guests: kvm_amd and
/// kvm_intel with their dependencies, each vendor's own marked with the CPU
/// flag it needs, the shared ones (kvm, irqbypass) first. Built in, they
/// need nothing; with neither vendor's module there, a refusal.
pub fn kvm(dir: Option<&Path>, release: &str) -> Result<Vec<Module>> {
    let Some(d) = dir else {
        return Ok(Vec::new());
    };
    let (builtin, files) = (builtin(d), index(d));
    let mut lists: Vec<(Vec<Module>, &'static str)> = Vec::new();
    for (m, flag) in [("kvm_amd", "svm"), ("kvm_intel", "vmx")] {
        if builtin.contains(m) || files.contains_key(m) {
            lists.push((resolve(dir, release, &[m])?, flag));
        }
    }
    if lists.is_empty() {
        return Err(Error::Input(format!(
            "kernel {release} has neither kvm_amd nor kvm_intel, built in or as a module \
             under {}: a guest whose plan boots guests needs KVM (CONFIG_KVM_AMD or \
             CONFIG_KVM_INTEL)",
            d.display()
        )));
    }
    let in_all = |m: &Module| {
        lists
            .iter()
            .all(|(l, _)| l.iter().any(|x| x.name == m.name))
    };
    let mut out: Vec<Module> = Vec::new();
    if lists.len() > 1 {
        out.extend(lists[0].0.iter().filter(|m| in_all(m)).cloned());
    }
    for (l, flag) in &lists {
        for m in l {
            if !out.iter().any(|x| x.name == m.name) {
                out.push(Module {
                    cpu_flag: Some(flag),
                    ..m.clone()
                });
            }
        }
    }
    Ok(out)
}

/// [`resolve`] for `needed`, then the modules of `optional` the kernel
/// has (with all their dependencies), leaving out those it has not.
pub fn resolve_with(
    dir: Option<&Path>,
    release: &str,
    needed: &[&str],
    optional: &[&str],
) -> Result<Vec<Module>> {
    let mut order = resolve(dir, release, needed)?;
    let Some(dir) = dir else {
        return Ok(order);
    };
    let builtin = builtin(dir);
    let files = index(dir);
    let mut seen: BTreeSet<String> = order.iter().map(|m| m.name.clone()).collect();
    for n in optional {
        let (mut s, mut o) = (seen.clone(), Vec::new());
        if visit(n, &builtin, &files, &mut s, &mut o, dir, release).is_ok() {
            seen = s;
            order.extend(o);
        }
    }
    Ok(order)
}

fn visit(
    name: &str,
    builtin: &BTreeSet<String>,
    files: &BTreeMap<String, PathBuf>,
    seen: &mut BTreeSet<String>,
    order: &mut Vec<Module>,
    dir: &Path,
    release: &str,
) -> Result<()> {
    let name = name.replace('-', "_");
    if builtin.contains(&name) || !seen.insert(name.clone()) {
        return Ok(());
    }
    let path = files.get(&name).ok_or_else(|| {
        Error::Input(format!(
            "kernel {release} has neither {name} built in nor {name}.ko under {}: the guest \
             could not reach its results disk; build it in (CONFIG_{}=y) or give --modules DIR",
            dir.display(),
            name.to_ascii_uppercase()
        ))
    })?;
    for d in depends(path)? {
        visit(&d, builtin, files, seen, order, dir, release)?;
    }
    order.push(Module {
        name,
        path: path.clone(),
        cpu_flag: None,
    });
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A modules directory whose modules.builtin lists `builtin`.
    fn modules(builtin: &[&str]) -> crate::scratch::Scratch {
        let dir = crate::scratch::at("");
        std::fs::create_dir_all(dir.join("kernel")).unwrap();
        set_builtin(&dir, builtin);
        dir
    }

    /// modules.builtin lists these modules (paths below kernel/, no .ko).
    fn set_builtin(dir: &Path, builtin: &[&str]) {
        let text: String = builtin.iter().map(|m| format!("kernel/{m}.ko\n")).collect();
        std::fs::write(dir.join("modules.builtin"), text).unwrap();
    }

    #[test]
    fn names_and_the_builtin_list() {
        assert_eq!(name_of("virtio_pci.ko").as_deref(), Some("virtio_pci"));
        assert_eq!(name_of("virtio-blk.ko.xz").as_deref(), Some("virtio_blk"));
        assert_eq!(name_of("README"), None);
        let dir = modules(&[
            "drivers/virtio/virtio",
            "drivers/virtio/virtio_pci",
            "drivers/block/virtio_blk",
        ]);
        // All built in: nothing to load.
        assert!(
            resolve(Some(&dir), "x", Bus::Virtio.modules())
                .unwrap()
                .is_empty()
        );
        // Neither built in nor a file: a missing module, bad input.
        set_builtin(&dir, &[]);
        let e = resolve(Some(&dir), "x", Bus::Virtio.modules()).unwrap_err();
        assert!(e.is_input() && e.to_string().contains("virtio_pci"), "{e}");
        assert!(
            resolve(None, "x", Bus::Virtio.modules())
                .unwrap()
                .is_empty()
        );
    }

    #[test]
    fn nvme_where_it_is_built_in_and_virtio_is_not() {
        let dir = modules(&["drivers/nvme/host/nvme-core", "drivers/nvme/host/nvme"]);
        assert_eq!(results_bus(Some(&dir)), Bus::Nvme);
        let all = [
            "drivers/nvme/host/nvme",
            "drivers/virtio/virtio_pci",
            "drivers/block/virtio_blk",
        ];
        set_builtin(&dir, &all);
        assert_eq!(results_bus(Some(&dir)), Bus::Virtio);
        set_builtin(&dir, &[]);
        assert_eq!(results_bus(Some(&dir)), Bus::Virtio);
        assert_eq!(results_bus(None), Bus::Virtio);
    }

    #[test]
    fn kvm_modules_missing_broken_or_built_in() {
        let dir = modules(&["arch/x86/kvm/kvm"]);
        let kvm_dir = dir.join("kernel/arch/x86/kvm");
        std::fs::create_dir_all(&kvm_dir).unwrap();
        let e = kvm(Some(&dir), "x").unwrap_err();
        assert!(e.is_input() && e.to_string().contains("kvm_amd"), "{e}");
        // A module file that is not ELF is bad input naming it.
        std::fs::write(kvm_dir.join("kvm-amd.ko"), b"not elf").unwrap();
        let e = kvm(Some(&dir), "x").unwrap_err();
        assert!(e.to_string().contains("not an ELF module"), "{e}");
        let all = [
            "arch/x86/kvm/kvm",
            "arch/x86/kvm/kvm-amd",
            "arch/x86/kvm/kvm-intel",
        ];
        set_builtin(&dir, &all);
        assert!(kvm(Some(&dir), "x").unwrap().is_empty());
        assert!(kvm(None, "x").unwrap().is_empty());
    }

    #[test]
    fn only_plans_that_may_use_the_room_get_it() {
        let step = |w: &str| w.split(' ').map(String::from).collect::<Vec<_>>();
        let pft = step("run pft --tasks 1");
        assert!(!room_needed(&[step("sysinfo"), pft.clone()], &[], false));
        for s in ["run vms --case swap", "run quick", "-q run cmd -- true"] {
            assert!(room_needed(&[pft.clone(), step(s)], &[], false), "{s}");
        }
        let pft = std::slice::from_ref(&pft);
        assert!(room_needed(pft, &["true".into()], false));
        assert!(room_needed(pft, &[], true));
    }

    #[test]
    fn optional_modules_the_kernel_lacks_are_left_out() {
        let dir = modules(&[
            "drivers/virtio/virtio_pci",
            "drivers/block/virtio_blk",
            "fs/ext4/ext4",
        ]);
        // ext4 built in, the others neither built in nor shipped: left
        // out, no error; a missing needed module is still an error.
        assert!(
            resolve_with(Some(&dir), "x", Bus::Virtio.modules(), ROOM)
                .unwrap()
                .is_empty()
        );
        set_builtin(&dir, &["fs/ext4/ext4"]);
        assert!(resolve_with(Some(&dir), "x", Bus::Virtio.modules(), ROOM).is_err());
    }
}
