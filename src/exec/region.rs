//! Anonymous (or file) memory mappings, unmapped on drop: shared ones that
//! threads and forked tasks both see (barriers, reports, counters, locks),
//! private ones with THP advice, and the plain private mappings workloads
//! fault in.

use crate::error::{Error, Result};
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicU32, AtomicU64};

/// Which pages a private region asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pages {
    Base,
    Huge,
}

pub struct Region {
    base: *mut u8,
    len: usize,
    /// Offset of the first byte handed out (for alignment).
    start: usize,
}

// SAFETY: a Region is plain memory; every user touches it through atomics
// or through disjoint parts, and it is unmapped only on drop.
unsafe impl Send for Region {}
// SAFETY: as for Send: shared use is through atomics or disjoint parts.
unsafe impl Sync for Region {}

impl Region {
    /// `len` bytes of zeroed MAP_SHARED anonymous memory, page aligned.
    pub fn shared(len: usize) -> Result<Region> {
        Self::raw(
            len,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_SHARED | libc::MAP_ANONYMOUS,
            -1,
        )
        .map_err(|e| {
            Error::Failed(format!(
                "shared memory of {} bytes: mmap failed: {e}",
                len.max(1)
            ))
        })
    }

    /// `len` bytes of private anonymous memory with base pages or THP
    /// advice; huge regions start on a `align` boundary.
    pub fn private(len: usize, pages: Pages, align: usize) -> Result<Region> {
        let extra = if pages == Pages::Huge { align } else { 0 };
        let mut r = Self::raw(
            len + extra,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
            -1,
        )
        .map_err(|e| {
            Error::Failed(format!(
                "chain memory of {} bytes: mmap failed: {e}",
                (len + extra).max(1)
            ))
        })?;
        if extra > 0 {
            let addr = r.base as usize;
            r.start = addr.next_multiple_of(align) - addr;
        }
        r.advise_thp_range(len, pages)?;
        Ok(r)
    }

    /// `len` bytes of private anonymous memory, not reserved against
    /// overcommit (MAP_NORESERVE) and without advice: memory to fault in.
    pub fn private_noreserve(len: usize) -> Result<Region> {
        Self::map(
            len,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_NORESERVE,
            None,
        )
    }

    /// A mapping of `len` bytes with the given protection and MAP_* flags:
    /// of `file` from offset 0, or anonymous (MAP_ANONYMOUS is added) when
    /// there is none.
    pub fn map(len: usize, prot: i32, flags: i32, file: Option<&std::fs::File>) -> Result<Region> {
        let (flags, fd) = match file {
            Some(f) => (flags, f.as_raw_fd()),
            None => (flags | libc::MAP_ANONYMOUS, -1),
        };
        Self::raw(len, prot, flags, fd)
            .map_err(|e| Error::Failed(format!("mmap of {} bytes failed: {e}", len.max(1))))
    }

    pub(super) fn raw(len: usize, prot: i32, flags: i32, fd: i32) -> std::io::Result<Region> {
        Self::map_at(len, prot, flags, fd, 0)
    }

    /// A mapping of `len` bytes of `fd` (-1 with MAP_ANONYMOUS) from byte
    /// `offset`, with the given protection and MAP_* flags.
    pub fn map_at(
        len: usize,
        prot: i32,
        flags: i32,
        fd: i32,
        offset: i64,
    ) -> std::io::Result<Region> {
        let len = len.max(1);
        // SAFETY: a fresh mapping (anonymous, or of a descriptor the caller
        // holds open); checked for MAP_FAILED.
        let base = unsafe { libc::mmap(std::ptr::null_mut(), len, prot, flags, fd, offset) };
        if base == libc::MAP_FAILED {
            return Err(std::io::Error::last_os_error());
        }
        Ok(Region {
            base: base.cast(),
            len,
            start: 0,
        })
    }

    /// The mapping moved or grown to `len` bytes by mremap(2)
    /// (MREMAP_MAYMOVE), as usemem's `-E` grows its mapping.
    pub fn grow(mut self, len: usize) -> Result<Region> {
        // SAFETY: our own mapping; on success the old range is gone and
        // `self` must not unmap it, so it is emptied before it drops.
        let moved = unsafe { libc::mremap(self.base.cast(), self.len, len, libc::MREMAP_MAYMOVE) };
        if moved == libc::MAP_FAILED {
            return Err(Error::Failed(format!(
                "mremap of {} to {len} bytes failed: {}",
                self.len,
                super::errno_text()
            )));
        }
        let start = self.start;
        self.len = 0;
        self.base = std::ptr::null_mut();
        Ok(Region {
            base: moved.cast(),
            len,
            start,
        })
    }

    /// Asks for base pages or THP over the whole usable region.
    pub fn advise_thp(&self, pages: Pages) -> Result<()> {
        self.advise_thp_range(self.len(), pages)
    }

    fn advise_thp_range(&self, len: usize, pages: Pages) -> Result<()> {
        let advice = match pages {
            Pages::Base => libc::MADV_NOHUGEPAGE,
            Pages::Huge => libc::MADV_HUGEPAGE,
        };
        // SAFETY: the advised range lies inside our own mapping.
        if unsafe { libc::madvise(self.ptr().cast(), len, advice) } != 0 {
            return Err(Error::Failed(format!(
                "madvise for THP failed: {}",
                super::errno_text()
            )));
        }
        Ok(())
    }

    /// Asks the kernel to reclaim the region's pages now (MADV_PAGEOUT,
    /// Linux 5.4): anonymous pages go to swap. `Ok(false)` when the kernel
    /// does not know the advice (EINVAL).
    pub fn page_out(&self) -> Result<bool> {
        // SAFETY: the advised range is our own mapping.
        if unsafe { libc::madvise(self.ptr().cast(), self.len(), libc::MADV_PAGEOUT) } == 0 {
            return Ok(true);
        }
        if std::io::Error::last_os_error().raw_os_error() == Some(libc::EINVAL) {
            return Ok(false);
        }
        Err(Error::Failed(format!(
            "madvise(MADV_PAGEOUT) failed: {}",
            super::errno_text()
        )))
    }

    /// Changes the protection of `len` bytes at byte offset `off`.
    pub fn protect(&self, off: usize, len: usize, prot: i32) -> Result<()> {
        assert!(off + len <= self.len(), "range out of region");
        // SAFETY: the range lies inside our own mapping (checked above).
        if unsafe { libc::mprotect(self.ptr().add(off).cast(), len, prot) } != 0 {
            return Err(Error::Failed(format!(
                "mprotect failed: {}",
                super::errno_text()
            )));
        }
        Ok(())
    }

    /// Pages of the region that are resident, by mincore() (0 if it fails).
    pub fn resident_pages(&self, page_size: usize) -> u64 {
        let len = self.len();
        let mut vec = vec![0u8; len.div_ceil(page_size)];
        // SAFETY: vec has one byte per page of the range, which is ours.
        if unsafe { libc::mincore(self.ptr().cast(), len, vec.as_mut_ptr()) } != 0 {
            return 0;
        }
        vec.iter().filter(|&&b| b & 1 == 1).count() as u64
    }

    /// The first usable byte.
    pub fn ptr(&self) -> *mut u8 {
        // SAFETY: start < len by construction.
        unsafe { self.base.add(self.start) }
    }

    /// The usable length.
    pub fn len(&self) -> usize {
        self.len - self.start
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The 64-bit atomic at byte offset `off` (8-aligned, inside the region).
    pub fn u64_at(&self, off: usize) -> &AtomicU64 {
        assert!(
            off.is_multiple_of(8) && off + 8 <= self.len(),
            "offset {off} out of region"
        );
        // SAFETY: in bounds and aligned (checked above); the mapping lives as
        // long as &self and is zero-initialised, a valid AtomicU64.
        unsafe { &*(self.ptr().add(off) as *const AtomicU64) }
    }

    /// The 32-bit atomic at byte offset `off` (4-aligned, inside the region).
    pub fn u32_at(&self, off: usize) -> &AtomicU32 {
        assert!(
            off.is_multiple_of(4) && off + 4 <= self.len(),
            "offset {off} out of region"
        );
        // SAFETY: as for u64_at.
        unsafe { &*(self.ptr().add(off) as *const AtomicU32) }
    }

    /// Bytes of this region backed by huge pages, from /proc/self/smaps.
    pub fn huge_bytes(&self) -> Option<u64> {
        let smaps = std::fs::read_to_string("/proc/self/smaps").ok()?;
        let (lo, hi) = (self.base as usize, self.base as usize + self.len);
        let mut inside = false;
        let mut total = 0u64;
        for line in smaps.lines() {
            let first = line.split_whitespace().next().unwrap_or("");
            if let Some((a, b)) = first.split_once('-')
                && let (Ok(a), Ok(b)) = (usize::from_str_radix(a, 16), usize::from_str_radix(b, 16))
            {
                inside = a < hi && b > lo;
                continue;
            }
            if inside && let Some(rest) = line.strip_prefix("AnonHugePages:") {
                let kib: u64 = rest.trim().trim_end_matches("kB").trim().parse().ok()?;
                total += kib * 1024;
            }
        }
        Some(total)
    }
}

impl Drop for Region {
    fn drop(&mut self) {
        if self.base.is_null() {
            return;
        }
        // SAFETY: unmapping our own mapping exactly once.
        unsafe { libc::munmap(self.base.cast(), self.len) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_resident_pages_after_touching_some() {
        // SAFETY: sysconf has no preconditions.
        let ps = unsafe { libc::sysconf(libc::_SC_PAGESIZE) } as usize;
        let r = Region::private_noreserve(8 * ps).unwrap();
        r.advise_thp(Pages::Base).unwrap();
        assert_eq!(r.resident_pages(ps), 0);
        for i in [0, 3, 7] {
            // SAFETY: page i of 8 lies inside the region.
            unsafe { r.ptr().add(i * ps).write_volatile(1) };
        }
        assert_eq!(r.resident_pages(ps), 3);
    }

    #[test]
    fn shared_memory_is_zeroed_and_protectable() {
        let r = Region::shared(8192).unwrap();
        assert_eq!(r.u64_at(8).load(std::sync::atomic::Ordering::Relaxed), 0);
        r.protect(4096, 4096, libc::PROT_READ).unwrap();
    }
}
