//! Where vmscale keeps what it downloads, unpacks and builds once and reuses
//! after: Debian kernel packages and what guests need of them, the PVH
//! images, the guest's static binaries, kernels built from a tree. Its
//! entries by kind ([`KINDS`]), the lock a run holds on each entry it uses
//! (`lock`), their sizes and last use (`scan`), and removing the least
//! recently used under a cap (`prune`, docs/cache.md).

pub mod cap;
pub mod lock;
pub mod prune;
pub mod scan;

use std::path::{Path, PathBuf};

/// The cache: $VMSCALE_CACHE_DIR, else $XDG_CACHE_HOME/vmscale, else
/// ~/.cache/vmscale (as bench/guest-kernels.sh).
pub fn cache_dir() -> PathBuf {
    if let Some(d) = std::env::var_os("VMSCALE_CACHE_DIR").filter(|d| !d.is_empty()) {
        return PathBuf::from(d);
    }
    std::env::var_os("XDG_CACHE_HOME")
        .filter(|p| Path::new(p).is_absolute())
        .map(PathBuf::from)
        .or_else(|| {
            std::env::var_os("HOME")
                .filter(|h| !h.is_empty())
                .map(|h| PathBuf::from(h).join(".cache"))
        })
        .unwrap_or_else(|| PathBuf::from("/root/.cache"))
        .join("vmscale")
}

/// One kind of entry: every name in its directory is one entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Kind {
    /// What `vmscale cache` calls it.
    pub name: &'static str,
    /// Its directory below the cache.
    pub dir: &'static str,
    /// What an entry holds, for docs and `--help`.
    pub holds: &'static str,
}

/// Every directory below the cache vmscale writes entries in (and
/// bench/guest-kernels.sh's `kernels/`). Nothing else below the cache is
/// listed or removed.
pub const KINDS: &[Kind] = &[
    Kind {
        name: "kernels",
        dir: "kernels",
        holds: "Debian kernel packages (bench/guest-kernels.sh)",
    },
    Kind {
        name: "unpacked",
        dir: "unpacked",
        holds: "what a guest needs of a package: image, config, modules",
    },
    Kind {
        name: "pvh",
        dir: "pvh",
        holds: "a kernel's ELF image for a PVH boot, by the bzImage's hash",
    },
    Kind {
        name: "bin",
        dir: "bin",
        holds: "the guest's vmscale binaries (static, stripped)",
    },
    Kind {
        name: "trees",
        dir: "kbuild/trees",
        holds: "a kernel tree's exported sources (guest --tree)",
    },
    Kind {
        name: "builds",
        dir: "kbuild/builds",
        holds: "a build directory per tree, config and compiler",
    },
    Kind {
        name: "images",
        dir: "kbuild/images",
        holds: "a built kernel: bzImage, .config, build.json",
    },
];

/// The lock the kernel builds take on the whole of `kbuild/`
/// (`kbuild::cache::Cache`), relative to the cache.
pub const KBUILD_LOCK: &str = "kbuild/lock";

/// Whether a kind lives below `kbuild/` (under [`KBUILD_LOCK`]).
pub fn under_kbuild(kind: &Kind) -> bool {
    kind.dir.starts_with("kbuild/")
}

/// Whether a name in a kind's directory is a temporary: the atomic
/// writers' `.NAME.<random>.tmp`, the strip directory `.vmscale-strip.*`,
/// an entry set aside by a prune (no entry's name starts with a dot), and
/// bench/guest-kernels.sh's download directories `kernels/dl.*`.
pub fn is_temporary(kind: &Kind, name: &std::ffi::OsStr) -> bool {
    let name = name.as_encoded_bytes();
    name.first() == Some(&b'.') || (kind.name == "kernels" && name.starts_with(b"dl."))
}
