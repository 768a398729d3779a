//! Anonymous shared memory that survives fork: the barrier and the task
//! reports live here so threads and processes use one code path.

use std::sync::atomic::{AtomicU32, Ordering};

use super::TaskReport;

/// The shared page(s): barrier counters followed by one report per task.
#[repr(C)]
struct Header {
    arrived: AtomicU32,
    go: AtomicU32,
}

pub struct SharedBlock {
    base: *mut u8,
    len: usize,
    tasks: usize,
}

// SAFETY: the block is only touched through atomics (header) and through
// disjoint per-task slots, each written by one task and read after join.
unsafe impl Send for SharedBlock {}
unsafe impl Sync for SharedBlock {}

impl SharedBlock {
    pub fn new(tasks: usize) -> std::io::Result<SharedBlock> {
        let len = std::mem::size_of::<Header>().next_multiple_of(64)
            + tasks * std::mem::size_of::<TaskReport>();
        // SAFETY: anonymous shared mapping, no file; checked for MAP_FAILED.
        let base = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if base == libc::MAP_FAILED {
            return Err(std::io::Error::last_os_error());
        }
        let block = SharedBlock {
            base: base as *mut u8,
            len,
            tasks,
        };
        for i in 0..tasks {
            // SAFETY: slot i is inside the mapping and properly aligned (f64/u64 fields, 64-byte header).
            unsafe { block.slot_ptr(i).write(TaskReport::default()) };
        }
        Ok(block)
    }

    fn header(&self) -> &Header {
        // SAFETY: the mapping starts with a zero-initialised Header (anonymous memory is zeroed).
        unsafe { &*(self.base as *const Header) }
    }

    fn slot_ptr(&self, i: usize) -> *mut TaskReport {
        assert!(i < self.tasks);
        let off = std::mem::size_of::<Header>().next_multiple_of(64)
            + i * std::mem::size_of::<TaskReport>();
        // SAFETY: off is within len by construction.
        unsafe { self.base.add(off) as *mut TaskReport }
    }

    /// Stores task i's report (each task writes only its own slot).
    pub fn put(&self, i: usize, report: TaskReport) {
        // SAFETY: slot i is valid; only task i writes it.
        unsafe { self.slot_ptr(i).write_volatile(report) };
    }

    /// Reads task i's report after the task has finished.
    pub fn get(&self, i: usize) -> TaskReport {
        // SAFETY: slot i is valid and initialised in new().
        unsafe { self.slot_ptr(i).read_volatile() }
    }

    /// A task announces that it is ready (or finished early).
    pub fn arrive(&self) {
        self.header().arrived.fetch_add(1, Ordering::AcqRel);
    }

    pub fn arrived(&self) -> u32 {
        self.header().arrived.load(Ordering::Acquire)
    }

    /// Releases every waiting task.
    pub fn release(&self) {
        self.header().go.store(1, Ordering::Release);
    }

    /// Waits for release. Spins briefly, then yields so that more tasks
    /// than CPUs still make progress.
    pub fn wait_release(&self) {
        let mut spins = 0u32;
        while self.header().go.load(Ordering::Acquire) == 0 {
            if spins < 1000 {
                std::hint::spin_loop();
                spins += 1;
            } else {
                std::thread::yield_now();
            }
        }
    }
}

impl Drop for SharedBlock {
    fn drop(&mut self) {
        // SAFETY: base/len are the mapping made in new().
        unsafe { libc::munmap(self.base as *mut libc::c_void, self.len) };
    }
}
