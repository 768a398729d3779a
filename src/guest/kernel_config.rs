//! Finding a kernel's configuration before it boots: a `.config` beside
//! the image or at the root of the build it came from
//! (`arch/x86/boot/bzImage`), a `config-RELEASE` beside it (`/boot`, or a
//! Debian package's, which vmscale unpacks with the image), then
//! `/boot/config-RELEASE`. Each candidate is opened without following
//! symlinks, must be a regular file of at most `MAX_BYTES` and must read
//! as a kernel config. The options found are checked against
//! `kconfig::REQUIRED` for the guest's shape.

use std::io::Read;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use super::kernel::Kernel;
use crate::error::{Error, Result};
use crate::kconfig::{self, Check, Config, Shape};

/// A kernel config is some 300 KiB; anything past this is not one.
const MAX_BYTES: u64 = 8 << 20;

/// A config found for a kernel, and where.
#[derive(Debug, Clone, PartialEq)]
pub struct Found {
    pub path: PathBuf,
    pub config: Config,
}

/// Where a config for `image` of `release` may be, most specific first.
pub fn candidates(image: &Path, release: &str) -> Vec<PathBuf> {
    let mut out = Vec::new();
    if let Some(dir) = image.parent() {
        out.push(dir.join(".config"));
        // arch/x86/boot/bzImage of a build tree (or O= directory).
        let parts: Vec<_> = image.components().rev().take(4).collect();
        if parts.len() == 4
            && parts[1].as_os_str() == "boot"
            && parts[3].as_os_str() == "arch"
            && let Some(root) = image.ancestors().nth(4)
        {
            out.push(root.join(".config"));
        }
        out.push(dir.join(format!("config-{release}")));
    }
    let boot = Path::new("/boot").join(format!("config-{release}"));
    if !out.contains(&boot) {
        out.push(boot);
    }
    out
}

/// Reads a regular file without following a symlink, or `None`.
fn read_plain(path: &Path) -> Option<String> {
    let mut f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC | libc::O_NONBLOCK)
        .open(path)
        .ok()?;
    let meta = f.metadata().ok()?;
    if !meta.is_file() || meta.len() > MAX_BYTES {
        return None;
    }
    let mut text = String::new();
    (&mut f).take(MAX_BYTES).read_to_string(&mut text).ok()?;
    Some(text)
}

/// The first candidate that reads as a kernel config.
pub fn find(kernel: &Kernel) -> Option<Found> {
    candidates(&kernel.image, &kernel.release)
        .into_iter()
        .find_map(|path| {
            let config = Config::parse(&read_plain(&path)?);
            // A `.config` of some other program (an XDG directory is a
            // directory and fails above) has no CONFIG_ lines.
            (config.len() >= 10).then_some(Found { path, config })
        })
}

/// What the check found for one kernel, for the plan's notes.
#[derive(Debug, Clone, PartialEq)]
pub enum Checked {
    /// Every option is there (read from this file).
    Complete(PathBuf),
    /// Only options some workloads need are missing: a warning.
    Partial(PathBuf, Check),
    /// No config was found: nothing checked.
    NotFound(Vec<PathBuf>),
}

/// Checks `kernel` for a guest of `shape`: exit 2 (`Error::Input`) naming
/// every option the guest cannot do without.
pub fn check(kernel: &Kernel, shape: Shape) -> Result<Checked> {
    let Some(found) = find(kernel) else {
        return Ok(Checked::NotFound(candidates(
            &kernel.image,
            &kernel.release,
        )));
    };
    let c = kconfig::check(&found.config, shape);
    if !c.missing.is_empty() {
        let names: Vec<&str> = c.missing.iter().map(|r| r.name).collect();
        return Err(Error::Input(format!(
            "kernel {} ({}) was built without what a guest needs: {} (its config: {}); \
             rebuild it with these options (scripts/config -e {}; make olddefconfig)",
            kernel.release,
            kernel.given.display(),
            kconfig::describe(&c.missing),
            found.path.display(),
            names.join(" -e ")
        )));
    }
    Ok(if c.is_clean() {
        Checked::Complete(found.path)
    } else {
        Checked::Partial(found.path, c)
    })
}

/// The warning for a kernel some workloads cannot run on, or none.
pub fn warning(kernel: &Kernel, checked: &Checked) -> Option<String> {
    match checked {
        Checked::Partial(path, c) => Some(format!(
            "kernel {} lacks what some workloads need: {} (its config: {})",
            kernel.release,
            kconfig::describe(&c.only_some),
            path.display()
        )),
        Checked::NotFound(looked) => Some(format!(
            "no config found for kernel {} (looked for {}): its options are not checked \
             before it boots",
            kernel.release,
            looked
                .iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        )),
        Checked::Complete(_) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kernel(image: &Path) -> Kernel {
        Kernel {
            given: image.to_path_buf(),
            image: image.to_path_buf(),
            release: "6.1.192-test".into(),
            modules: None,
            sha256: String::new(),
            revision: None,
        }
    }

    fn full() -> String {
        kconfig::fragment()
    }

    #[test]
    fn a_build_trees_config_is_found_and_checked() {
        let root = crate::scratch::at("");
        let boot = root.join("arch/x86/boot");
        std::fs::create_dir_all(&boot).unwrap();
        let image = boot.join("bzImage");
        std::fs::write(&image, b"x").unwrap();
        let k = kernel(&image);
        let c = candidates(&image, &k.release);
        assert_eq!(c[0], boot.join(".config"));
        assert_eq!(c[1], root.join(".config"));
        assert_eq!(c.last().unwrap(), Path::new("/boot/config-6.1.192-test"));
        let one = Shape { cpus: 1, nodes: 1 };
        assert!(matches!(check(&k, one).unwrap(), Checked::NotFound(_)));
        // A symlink is not followed.
        std::os::unix::fs::symlink(root.join("elsewhere"), root.join(".config")).unwrap();
        std::fs::write(root.join("elsewhere"), full()).unwrap();
        assert!(find(&k).is_none());
        std::fs::remove_file(root.join(".config")).unwrap();
        std::fs::write(root.join(".config"), full()).unwrap();
        assert_eq!(
            check(&k, one).unwrap(),
            Checked::Complete(root.join(".config"))
        );
        // Without file locking: refused, naming the option and the file.
        let text = full().replace("CONFIG_FILE_LOCKING=y\n", "");
        std::fs::write(root.join(".config"), text).unwrap();
        let e = check(&k, one).unwrap_err();
        assert!(e.is_input(), "{e}");
        let msg = e.to_string();
        assert!(msg.contains("CONFIG_FILE_LOCKING=y"), "{msg}");
        assert!(
            msg.contains(&root.join(".config").display().to_string()),
            "{msg}"
        );
        // Without THP: a warning.
        let text = full().replace("CONFIG_TRANSPARENT_HUGEPAGE=y\n", "");
        std::fs::write(root.join(".config"), text).unwrap();
        let checked = check(&k, one).unwrap();
        let w = warning(&k, &checked).unwrap();
        assert!(w.contains("CONFIG_TRANSPARENT_HUGEPAGE"), "{w}");
    }
}
