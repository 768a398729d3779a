//! Huge pages for the set-up's life: /proc/sys/vm/nr_hugepages raised by a
//! count (the default huge page size), read back, and set to its original
//! again when undone.

use std::path::Path;

use super::journal::{Journal, Step};
use super::sys;
use crate::error::{Error, Result};

pub const NR_HUGEPAGES: &str = "/proc/sys/vm/nr_hugepages";

/// The default huge page size in bytes.
pub fn page_bytes() -> Result<u64> {
    crate::machine::memory::read_meminfo(Path::new("/"))
        .get("Hugepagesize")
        .map(|k| k * 1024)
        .filter(|b| *b > 0)
        .ok_or_else(|| {
            Error::Refused(
                "huge pages need a kernel with CONFIG_HUGETLBFS: /proc/meminfo has no \
                 Hugepagesize"
                    .into(),
            )
        })
}

/// Refuses, before anything is made, what cannot be done here.
pub fn check(pages: u64) -> Result<()> {
    if pages == 0 {
        return Err(Error::Input(
            "0 huge pages asked for: ask for 1 or more".into(),
        ));
    }
    let size = page_bytes()?;
    if !Path::new(NR_HUGEPAGES).exists() {
        return Err(Error::Refused(format!(
            "huge pages need {NR_HUGEPAGES}, which this kernel lacks"
        )));
    }
    sys::refuse_beyond_half(
        &format!("{pages} huge pages of {}", crate::units::memory(size)),
        pages.saturating_mul(size),
    )
}

fn read() -> Result<u64> {
    let s = sys::read_kernel(Path::new(NR_HUGEPAGES))?;
    s.parse()
        .map_err(|_| Error::Failed(format!("{NR_HUGEPAGES} reads '{s}', not a count")))
}

/// Raises nr_hugepages by `pages`, journaled first; fewer given (memory
/// too fragmented) is tried once more after compaction, then a refusal
/// after the original is written back.
pub fn raise(j: &mut Journal, pages: u64) -> Result<()> {
    let original = read()?;
    j.push(Step::HugePages { original })?;
    let want = original + pages;
    sys::write_kernel(Path::new(NR_HUGEPAGES), &want.to_string())?;
    let mut got = read()?;
    if got < want && compact() {
        // Free memory in pieces too small: once more after compaction.
        sys::write_kernel(Path::new(NR_HUGEPAGES), &want.to_string())?;
        got = read()?;
    }
    if got < want {
        restore(original)?;
        j.pop()?;
        return Err(Error::Refused(format!(
            "the kernel gave {} of {pages} huge pages asked for (nr_hugepages {got} of \
             {want}): memory is too fragmented; ask for fewer or drop caches and compact \
             first",
            got.saturating_sub(original)
        )));
    }
    Ok(())
}

/// Asks the kernel to compact all memory (it changes no setting);
/// whether it could be asked.
fn compact() -> bool {
    sys::write_kernel(Path::new("/proc/sys/vm/compact_memory"), "1").is_ok()
}

/// Writes the original count back.
pub fn restore(original: u64) -> Result<Option<String>> {
    let now = read()?;
    if now == original {
        return Ok(None);
    }
    sys::write_kernel(Path::new(NR_HUGEPAGES), &original.to_string())?;
    Ok(Some(format!("nr_hugepages back to {original} (was {now})")))
}

/// What one [`cycle`] did: the pages the kernel gave of those asked, and
/// the nanoseconds it took to grow the pool and to shrink it back.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Cycle {
    pub asked: u64,
    pub got: u64,
    pub grow_ns: u64,
    pub shrink_ns: u64,
}

/// case-hugetlb's work: nr_hugepages raised by `pages` and written back
/// at once, journaled first; fewer pages given is what it measures, not
/// a refusal. Only the two writes (and the read between) are timed.
pub fn cycle(j: &mut Journal, pages: u64) -> Result<Cycle> {
    use crate::exec::clock::monotonic_ns;
    let original = read()?;
    j.push(Step::HugePages { original })?;
    let path = Path::new(NR_HUGEPAGES);
    let t0 = monotonic_ns();
    let grown = sys::write_kernel(path, &(original + pages).to_string()).and_then(|()| read());
    let t1 = monotonic_ns();
    let shrunk = sys::write_kernel(path, &original.to_string());
    let t2 = monotonic_ns();
    let got = grown?.saturating_sub(original);
    shrunk?;
    j.pop()?;
    Ok(Cycle {
        asked: pages,
        got,
        grow_ns: t1 - t0,
        shrink_ns: t2 - t1,
    })
}
