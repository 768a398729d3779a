//! The cache's cap: the size past which a run that adds an entry removes
//! the least recently used (`prune::to_cap`). 16 GiB unless
//! `VMSCALE_CACHE_MAX` says otherwise (a size, or `off`), read once at the
//! command's edge ([`configure`]).

use std::sync::OnceLock;

use crate::error::{Error, Result};

/// The cap when `VMSCALE_CACHE_MAX` is unset: a kernel tree's export and
/// one build directory (a few GB) with room for many kernels beside them.
pub const DEFAULT: u64 = 16 << 30;

/// The environment variable that overrides [`DEFAULT`].
pub const ENV: &str = "VMSCALE_CACHE_MAX";

static CAP: OnceLock<Option<u64>> = OnceLock::new();

/// The cap given by `value` (the variable's text; `None` when unset):
/// `None` for no cap (`off`).
pub fn parse(value: Option<&str>) -> Result<Option<u64>> {
    match value.map(str::trim) {
        None | Some("") => Ok(Some(DEFAULT)),
        Some("off") => Ok(None),
        Some(text) => crate::parse::size(text)
            .map(Some)
            .map_err(|e| Error::Input(format!("{ENV}: {e}, or off for no cap"))),
    }
}

/// Reads `VMSCALE_CACHE_MAX` once: bad text is bad input (exit 2) before
/// the command does anything.
pub fn configure() -> Result<()> {
    let text = std::env::var(ENV).ok();
    let cap = parse(text.as_deref())?;
    let _ = CAP.set(cap);
    Ok(())
}

/// The cap in force (`None`: none): as [`configure`] read it, else
/// [`DEFAULT`].
pub fn get() -> Option<u64> {
    *CAP.get_or_init(|| Some(DEFAULT))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cap_is_a_size_off_or_the_default() {
        assert_eq!(parse(None).unwrap(), Some(DEFAULT));
        assert_eq!(parse(Some("100M")).unwrap(), Some(100 << 20));
        assert_eq!(parse(Some("off")).unwrap(), None);
        let e = parse(Some("lots")).unwrap_err();
        assert!(e.is_input());
        assert!(e.to_string().contains(ENV), "{e}");
    }
}
