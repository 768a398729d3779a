//! The kernel a guest boots: a bzImage (vmlinuz) file, or a Debian kernel
//! package that is unpacked first. The release is read from the image's
//! boot header (`kernel_version`, boot protocol 2.00+), so a file that is
//! not an x86 kernel is refused before anything boots. The image's SHA-256
//! names it apart from another build of the same release.

use std::io::Read;
use std::path::{Path, PathBuf};

use super::deb;
use crate::error::{Error, Result};
use crate::machine::guest::{GuestKernel, GuestRevision};

/// A kernel ready to boot.
#[derive(Debug, Clone)]
pub struct Kernel {
    /// What was given to `--kernel`.
    pub given: PathBuf,
    /// The bzImage QEMU loads.
    pub image: PathBuf,
    /// `uname -r` of the kernel, from its boot header.
    pub release: String,
    /// Its modules (`lib/modules/RELEASE`), when known.
    pub modules: Option<PathBuf>,
    /// SHA-256 of `image`, in hex.
    pub sha256: String,
    /// The tree's revision it was built from (`--tree`/`--rev`).
    pub revision: Option<GuestRevision>,
}

impl Kernel {
    /// The record of this kernel a guest carries.
    pub fn identity(&self) -> GuestKernel {
        GuestKernel {
            file: self
                .given
                .file_name()
                .map(|f| f.to_string_lossy().into_owned())
                .unwrap_or_default(),
            sha256: self.sha256.clone(),
        }
    }

    /// The first hex digits of the image's hash (or its commit's).
    pub fn short_id(&self) -> &str {
        let id = self
            .revision
            .as_ref()
            .map_or(self.sha256.as_str(), |r| r.commit.as_str());
        &id[..id.len().min(SHORT)]
    }
}

/// Hex digits of a kernel's hash or commit in a label.
const SHORT: usize = 8;

/// Default labels: each kernel's release, and where two kernels share a
/// release, the release and the image's short hash (`6.1.192@1a2b3c4d`).
pub fn default_labels(kernels: &[Kernel]) -> Vec<String> {
    kernels
        .iter()
        .map(|k| {
            let shared = kernels
                .iter()
                .filter(|o| o.release == k.release && o.sha256 != k.sha256)
                .count()
                > 0;
            if shared {
                format!("{}@{}", k.release, k.short_id())
            } else {
                k.release.clone()
            }
        })
        .collect()
}

/// SHA-256 of a file, in hex.
pub fn sha256_of(path: &Path) -> Result<String> {
    use sha2::Digest;
    let mut f = std::fs::File::open(path).map_err(|e| Error::io("cannot read", path, e))?;
    let mut h = sha2::Sha256::new();
    let mut buf = vec![0u8; 1 << 20];
    loop {
        match f.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => h.update(&buf[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(Error::io("cannot read", path, e)),
        }
    }
    Ok(h.finalize().iter().map(|b| format!("{b:02x}")).collect())
}

/// The SHA-256 of the image of the package unpacked in `dir`, kept there
/// beside it (an unpacked package never changes): hashing a 14 MB image
/// cost each `vmscale guest` some 14 ms.
fn unpacked_sha256(dir: &Path, image: &Path) -> Result<String> {
    let kept = dir.join("image.sha256");
    if let Ok(s) = std::fs::read_to_string(&kept)
        && s.len() == 64
        && s.bytes().all(|b| b.is_ascii_hexdigit())
    {
        return Ok(s);
    }
    let sum = sha256_of(image)?;
    // Best effort: without it the next boot hashes again.
    let _ = crate::atomic_file::write(&kept, sum.as_bytes(), 0o644);
    Ok(sum)
}

/// Offset of the setup header's "HdrS" magic in a bzImage.
const MAGIC_AT: usize = 0x202;
/// Offset of the pointer to the version string (relative to 0x200).
const VERSION_PTR_AT: usize = 0x20e;

/// The release in a bzImage's first bytes, or why there is none.
pub fn release_of(head: &[u8]) -> std::result::Result<String, &'static str> {
    if head.get(MAGIC_AT..MAGIC_AT + 4) != Some(b"HdrS") {
        return Err("no Linux boot header (HdrS at 0x202): not a bzImage");
    }
    let ptr = head
        .get(VERSION_PTR_AT..VERSION_PTR_AT + 2)
        .map(|b| u16::from_le_bytes([b[0], b[1]]) as usize)
        .filter(|p| *p != 0)
        .ok_or("the boot header names no kernel version")?;
    let at = ptr + 0x200;
    let bytes = head
        .get(at..)
        .ok_or("the kernel version lies past the header")?;
    let end = bytes.iter().position(|b| *b == 0).unwrap_or(bytes.len());
    let text = String::from_utf8_lossy(&bytes[..end.min(256)]).into_owned();
    let release = text.split_whitespace().next().unwrap_or("").to_string();
    if release.is_empty() || !release.chars().all(|c| c.is_ascii_graphic()) {
        return Err("the boot header's kernel version is empty or not text");
    }
    Ok(release)
}

fn head(path: &Path) -> Result<Vec<u8>> {
    let mut f = std::fs::File::open(path)
        .map_err(|e| Error::Input(format!("--kernel {}: {e}", path.display())))?;
    let mut buf = vec![0u8; 64 * 1024];
    let mut n = 0;
    while n < buf.len() {
        match f.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) => return Err(Error::io("cannot read", path, e)),
        }
    }
    buf.truncate(n);
    Ok(buf)
}

/// Resolves `--kernel PATH` (with `--modules DIR` where given).
pub fn resolve(path: &Path, modules: Option<&Path>) -> Result<Kernel> {
    if path.is_dir() {
        return Err(Error::Input(format!(
            "--kernel {}: a directory; give the bzImage (arch/x86/boot/bzImage of a build, \
             /boot/vmlinuz-RELEASE) or a Debian kernel package (.deb)",
            path.display()
        )));
    }
    let first = head(path)?;
    if deb::is_deb(&first) {
        return from_deb(path);
    }
    let release = release_of(&first).map_err(|why| {
        Error::Input(format!(
            "--kernel {}: {why}; give an x86 bzImage or a Debian kernel package (.deb)",
            path.display()
        ))
    })?;
    let modules = match modules {
        Some(m) => Some(m.to_path_buf()),
        None => Some(PathBuf::from("/lib/modules").join(&release)).filter(|d| d.is_dir()),
    };
    Ok(Kernel {
        given: path.to_path_buf(),
        image: path.to_path_buf(),
        release,
        modules,
        sha256: sha256_of(path)?,
        revision: None,
    })
}

fn from_deb(deb_path: &Path) -> Result<Kernel> {
    let dir = deb::unpack(deb_path)?;
    let boot = dir.join("boot");
    let images: Vec<PathBuf> = std::fs::read_dir(&boot)
        .map(|d| {
            d.filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| {
                    p.file_name()
                        .is_some_and(|n| n.to_string_lossy().starts_with("vmlinuz-"))
                })
                .collect()
        })
        .unwrap_or_default();
    let [image] = images.as_slice() else {
        return Err(Error::Input(format!(
            "--kernel {}: a package with {} kernel images in /boot; give a linux-image \
             package (bench/guest-kernels.sh fetches one)",
            deb_path.display(),
            images.len()
        )));
    };
    let release = release_of(&head(image)?)
        .map_err(|why| Error::Input(format!("--kernel {}: {why}", deb_path.display())))?;
    let modules = dir.join("lib/modules").join(&release);
    Ok(Kernel {
        given: deb_path.to_path_buf(),
        image: image.clone(),
        release,
        modules: modules.is_dir().then_some(modules),
        sha256: unpacked_sha256(&dir, image)?,
        revision: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fake_image(version: &str) -> Vec<u8> {
        let mut b = vec![0u8; 0x1000];
        b[MAGIC_AT..MAGIC_AT + 4].copy_from_slice(b"HdrS");
        let at = 0x800usize;
        b[VERSION_PTR_AT..VERSION_PTR_AT + 2].copy_from_slice(&((at - 0x200) as u16).to_le_bytes());
        b[at..at + version.len()].copy_from_slice(version.as_bytes());
        b
    }

    #[test]
    fn the_release_comes_from_the_boot_header() {
        let img = fake_image("6.1.0-48-amd64 (debian-kernel@lists.debian.org) #1 SMP");
        assert_eq!(release_of(&img).unwrap(), "6.1.0-48-amd64");
        assert!(release_of(b"#!/bin/sh\necho hi").is_err());
        let mut broken = fake_image("x");
        broken[VERSION_PTR_AT..VERSION_PTR_AT + 2].copy_from_slice(&0xffffu16.to_le_bytes());
        assert!(release_of(&broken).is_err());
        assert!(release_of(&fake_image("")).is_err());
    }

    #[test]
    fn two_builds_of_one_release_get_their_own_labels() {
        let tmp = tempfile::tempdir().unwrap();
        let mut ks = Vec::new();
        for (name, version, extra) in [
            ("a", "6.1.192 #1", 0u8),
            ("b", "6.1.192 #1", 1),
            ("c", "6.12.1 #1", 0),
        ] {
            let mut img = fake_image(version);
            img.push(extra);
            let p = tmp.path().join(name);
            std::fs::write(&p, &img).unwrap();
            ks.push(resolve(&p, None).unwrap());
        }
        // The same file twice (A/A) keeps the plain release.
        ks.push(ks[2].clone());
        let labels = default_labels(&ks);
        assert_ne!(ks[0].sha256, ks[1].sha256);
        assert_eq!(labels[0], format!("6.1.192@{}", &ks[0].sha256[..8]));
        assert_eq!(labels[1], format!("6.1.192@{}", &ks[1].sha256[..8]));
        assert_eq!(labels[2..], ["6.12.1", "6.12.1"]);
        assert_eq!(ks[0].identity().file, "a");
        assert_eq!(ks[0].sha256.len(), 64);
        // A tree build's commit names it instead.
        ks[1].revision = Some(GuestRevision {
            commit: "0123456789abcdef".into(),
            ..GuestRevision::default()
        });
        assert_eq!(default_labels(&ks)[1], "6.1.192@01234567");
    }

    #[test]
    fn not_a_kernel_is_bad_input() {
        let tmp = tempfile::tempdir().unwrap();
        let f = tmp.path().join("vmlinuz");
        std::fs::write(&f, b"#!/bin/sh\necho not a kernel\n").unwrap();
        let e = resolve(&f, None).unwrap_err();
        assert!(
            e.is_input() && e.to_string().contains("not a bzImage"),
            "{e}"
        );
        let e = resolve(Path::new("/nonexistent/vmlinuz"), None).unwrap_err();
        assert!(e.is_input(), "{e}");
        assert!(resolve(Path::new("/tmp"), None).unwrap_err().is_input());
    }
}
