//! Where vmscale keeps what it downloads, unpacks and builds once and reuses
//! after: Debian kernel packages unpacked for guests, the guest's static
//! binaries, kernels built from a tree.

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
