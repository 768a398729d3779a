//! Debian kernel packages (.deb): an `ar` archive whose `data.tar.xz` holds
//! the kernel image and its modules. vmscale unpacks only what a guest
//! needs (the image, its config, the block and virtio drivers, the set-up
//! room's modules, the KVM modules, modules.builtin) into its cache, once
//! per package file, and reuses it after.

use std::fs::File;
use std::io::Read;
use std::path::{Component, Path, PathBuf};

use crate::atomic_file::AtomicDir;
use crate::cache::{cache_dir, lock};
use crate::error::{Error, Result};

/// "SIZE-MTIME_NS" of a file: what its entries in the cache are named by,
/// so a changed file is unpacked (or stripped) again.
pub fn cache_key(path: &Path) -> Result<String> {
    let meta = std::fs::metadata(path).map_err(|e| Error::io("cannot read", path, e))?;
    Ok(key_of(&meta))
}

/// The cache key of a file whose metadata is read already (from an open
/// descriptor).
pub fn key_of(meta: &std::fs::Metadata) -> String {
    let mtime = meta
        .modified()
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_nanos());
    format!("{}-{mtime}", meta.len())
}

/// True for a file that starts like an `ar` archive (a .deb does).
pub fn is_deb(head: &[u8]) -> bool {
    head.starts_with(b"!<arch>\n")
}

/// Whether a path inside the package is one the guest needs.
fn wanted(path: &Path) -> bool {
    let s = path.to_string_lossy();
    let s = s.trim_start_matches("./");
    let s = s.strip_prefix("usr/").unwrap_or(s);
    if let Some(name) = s.strip_prefix("boot/") {
        return (name.starts_with("vmlinuz-") || name.starts_with("config-"))
            && !name.contains('/');
    }
    let Some(rest) = s.strip_prefix("lib/modules/") else {
        return false;
    };
    let Some((_, inside)) = rest.split_once('/') else {
        return false;
    };
    // KVM and what kvm_amd and kvm_intel need (irqbypass; the generic
    // kernel's kvm_amd needs ccp for SEV), for a guest that boots guests.
    inside == "modules.builtin"
        || [
            "kernel/drivers/virtio/",
            "kernel/drivers/block/",
            "kernel/arch/x86/kvm/",
            "kernel/virt/lib/",
            "kernel/drivers/crypto/ccp/",
        ]
        .iter()
        .any(|d| inside.strip_prefix(d).is_some_and(|f| !f.contains('/')))
        || ROOM_DIRS.iter().any(|d| inside.starts_with(d))
}

/// Where the modules of the set-up room (`modules::ROOM`: loop, zram and
/// its compressor, ext4) and their dependencies live.
const ROOM_DIRS: &[&str] = &[
    "kernel/drivers/block/zram/",
    "kernel/mm/",
    "kernel/fs/ext4/",
    "kernel/fs/jbd2/",
    "kernel/fs/mbcache.ko",
    "kernel/crypto/",
    "kernel/lib/",
];

/// The path as a relative path without `..`, or `None`.
fn safe(path: &Path) -> Option<PathBuf> {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::Normal(p) => out.push(p),
            Component::CurDir => {}
            _ => return None,
        }
    }
    Some(out)
}

/// Unpacks what a guest needs from `deb` into the cache (once) and returns
/// the directory holding `boot/` and `lib/modules/`.
pub fn unpack(deb: &Path) -> Result<PathBuf> {
    let stamp = cache_key(deb)?;
    let stem = deb
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "kernel".into());
    let root = cache_dir().join("unpacked");
    // "-5": unpacks that keep the config, the set-up room's and the KVM
    // modules ("-4" was once made without the config).
    let dir = root.join(format!("{stem}-{stamp}-5"));
    hold_package(deb)?;
    let mut made = false;
    // Held (so no prune removes it while this run lives) and complete; a
    // prune may remove it between the look and the lock: made again.
    for _ in 0..3 {
        if !dir.join("complete").is_file() {
            std::fs::create_dir_all(&root).map_err(|e| Error::io("cannot create", &root, e))?;
            let new = AtomicDir::create(&dir, 0o755)?;
            extract(deb, new.path())?;
            let complete = new.path().join("complete");
            std::fs::write(&complete, b"").map_err(|e| Error::io("cannot write", &complete, e))?;
            new.commit()?;
            made = true;
        }
        if lock::hold(&dir)? && dir.join("complete").is_file() {
            if made {
                crate::cache::prune::to_cap();
            }
            return Ok(dir);
        }
    }
    Err(lock::vanished(&dir))
}

/// A package in the cache's `kernels/` (where bench/guest-kernels.sh
/// keeps them) is held as the entries made of it are.
fn hold_package(deb: &Path) -> Result<()> {
    let kernels = cache_dir().join("kernels").canonicalize();
    let parent = deb.parent().and_then(|p| p.canonicalize().ok());
    if kernels.is_ok_and(|k| parent == Some(k)) {
        lock::hold_as_is(deb)?;
    }
    Ok(())
}

fn extract(deb: &Path, into: &Path) -> Result<()> {
    let bad = |why: String| Error::Input(format!("--kernel {}: {why}", deb.display()));
    let file = File::open(deb).map_err(|e| Error::io("cannot open", deb, e))?;
    let mut ar = ar::Archive::new(file);
    while let Some(entry) = ar.next_entry() {
        let entry = entry.map_err(|e| bad(format!("not a Debian package ({e})")))?;
        let name = String::from_utf8_lossy(entry.header().identifier()).into_owned();
        let reader: Box<dyn Read> = match name.as_str() {
            "data.tar.xz" => Box::new(liblzma::read::XzDecoder::new(entry)),
            "data.tar" => Box::new(entry),
            n if n.starts_with("data.tar") => {
                return Err(bad(format!(
                    "its data is {n}; vmscale reads data.tar.xz (Debian's kernel packages) \
                     or data.tar: unpack it with dpkg-deb -x and give the vmlinuz file"
                )));
            }
            _ => continue,
        };
        let mut tar = tar::Archive::new(reader);
        let entries = tar
            .entries()
            .map_err(|e| bad(format!("damaged data.tar ({e})")))?;
        for e in entries {
            let mut e = e.map_err(|e| bad(format!("damaged data.tar ({e})")))?;
            if !e.header().entry_type().is_file() {
                continue;
            }
            let path = e.path().map_err(|e| bad(format!("damaged path ({e})")))?;
            let Some(rel) = safe(&path).filter(|p| wanted(p)) else {
                continue;
            };
            let rel = rel
                .strip_prefix("usr")
                .map(Path::to_path_buf)
                .unwrap_or(rel);
            let dest = into.join(&rel);
            if let Some(parent) = dest.parent() {
                std::fs::create_dir_all(parent)
                    .map_err(|e| Error::io("cannot create", parent, e))?;
            }
            let mut out = File::create(&dest).map_err(|e| Error::io("cannot create", &dest, e))?;
            std::io::copy(&mut e, &mut out).map_err(|e| Error::io("cannot unpack", &dest, e))?;
        }
        return Ok(());
    }
    Err(bad("no data.tar member: not a Debian package".into()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_image_its_config_the_drivers_and_the_builtin_list_are_wanted() {
        for yes in [
            "./boot/vmlinuz-6.1.0-48-amd64",
            "./boot/config-6.1.0-48-amd64",
            "./lib/modules/6.1.0-48-amd64/modules.builtin",
            "./lib/modules/6.1.0-48-amd64/kernel/drivers/virtio/virtio_pci.ko",
            "./usr/lib/modules/6.12.1-amd64/kernel/drivers/block/virtio_blk.ko.xz",
            "./lib/modules/6.1.0-48-amd64/kernel/arch/x86/kvm/kvm-amd.ko",
            "./lib/modules/6.1.0-48-amd64/kernel/virt/lib/irqbypass.ko",
            "./lib/modules/6.1.0-48-amd64/kernel/drivers/block/zram/zram.ko",
            "./lib/modules/6.1.0-48-amd64/kernel/fs/ext4/ext4.ko",
            "./lib/modules/6.1.0-48-amd64/kernel/crypto/lzo-rle.ko",
        ] {
            assert!(wanted(Path::new(yes)), "{yes}");
        }
        for no in [
            "./boot/System.map-6.1.0-48-amd64",
            "./lib/modules/6.1.0-48-amd64/kernel/drivers/net/e1000.ko",
            "./lib/modules/6.1.0-48-amd64/kernel/drivers/block/drbd/drbd.ko",
            "./lib/modules/6.1.0-48-amd64/kernel/fs/xfs/xfs.ko",
            "./usr/share/doc/x",
        ] {
            assert!(!wanted(Path::new(no)), "{no}");
        }
        assert!(safe(Path::new("./a/../b")).is_none());
        assert_eq!(safe(Path::new("./a/b")), Some(PathBuf::from("a/b")));
    }

    #[test]
    fn a_file_that_is_not_a_package_is_bad_input() {
        let tmp = tempfile::tempdir().unwrap();
        let f = tmp.path().join("x.deb");
        std::fs::write(&f, b"!<arch>\nnot really").unwrap();
        let e = extract(&f, tmp.path()).unwrap_err();
        assert!(e.is_input(), "{e}");
    }
}
