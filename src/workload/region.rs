//! Anonymous memory regions for the micro-benchmarks: shared ones that
//! threads and forked tasks both see (counters, locks, ping-pong lines),
//! and private ones with THP advice (pointer-chase chains). Unmapped on drop.

use std::sync::atomic::{AtomicU32, AtomicU64};

use crate::exec;

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

// SAFETY: a Region is plain memory; every workload touches it through
// atomics or through disjoint parts, and unmaps it only on drop.
unsafe impl Send for Region {}
unsafe impl Sync for Region {}

impl Region {
    /// `len` bytes of zeroed MAP_SHARED anonymous memory, page aligned.
    pub fn shared(len: usize) -> Result<Region, String> {
        Self::map(
            len,
            libc::MAP_SHARED | libc::MAP_ANONYMOUS,
            0,
            "shared memory",
        )
    }

    /// `len` bytes of private anonymous memory with base pages or THP
    /// advice; huge regions start on a `align` boundary.
    pub fn private(len: usize, pages: Pages, align: usize) -> Result<Region, String> {
        let extra = if pages == Pages::Huge { align } else { 0 };
        let mut r = Self::map(
            len + extra,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
            0,
            "chain memory",
        )?;
        if extra > 0 {
            let addr = r.base as usize;
            r.start = addr.next_multiple_of(align) - addr;
        }
        let advice = match pages {
            Pages::Base => libc::MADV_NOHUGEPAGE,
            Pages::Huge => libc::MADV_HUGEPAGE,
        };
        // SAFETY: the advised range lies inside our own mapping.
        if unsafe { libc::madvise(r.ptr().cast(), len, advice) } != 0 {
            return Err(format!("madvise for THP failed: {}", exec::errno_text()));
        }
        Ok(r)
    }

    fn map(len: usize, flags: i32, start: usize, what: &str) -> Result<Region, String> {
        let len = len.max(1);
        // SAFETY: anonymous mapping, no file; checked for MAP_FAILED.
        let base = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                flags,
                -1,
                0,
            )
        };
        if base == libc::MAP_FAILED {
            return Err(format!(
                "{what} of {len} bytes: mmap failed: {}",
                exec::errno_text()
            ));
        }
        Ok(Region {
            base: base.cast(),
            len,
            start,
        })
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
        // SAFETY: unmapping our own mapping exactly once.
        unsafe { libc::munmap(self.base.cast(), self.len) };
    }
}

/// Clock resolution and the cost of one clock read, for reports.
pub fn clock_quality() -> (f64, f64) {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: ts is valid and writable.
    unsafe { libc::clock_getres(libc::CLOCK_MONOTONIC, &mut ts) };
    let res = ts.tv_sec as f64 * 1e9 + ts.tv_nsec as f64;
    // Back-to-back reads: the median of 101 batches of 100 reads.
    let mut per: Vec<f64> = (0..101)
        .map(|_| {
            let t0 = exec::clock::monotonic_ns();
            for _ in 0..99 {
                std::hint::black_box(exec::clock::monotonic_ns());
            }
            (exec::clock::monotonic_ns() - t0) as f64 / 100.0
        })
        .collect();
    per.sort_by(f64::total_cmp);
    (res, per[50])
}
